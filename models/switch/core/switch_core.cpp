#include "models/switch/core/switch_core.h"

#include <stdexcept>
#include <utility>

namespace fabricsim::switching {

UalinkSwitch::UalinkSwitch(std::string name, const SwitchParams& p)
    : name_(std::move(name)), p_(p), inputs_(p.ports), outputs_(p.ports) {
  for (InputPort& ip : inputs_) ip.buffer.reserve(16);  // with the switch, not scattered over the run
}

void UalinkSwitch::set_route(int dst_rank, std::uint32_t port) {
  if (dst_rank < 0) throw std::invalid_argument("switch " + name_ + ": negative destination rank");
  if (port >= p_.ports)
    throw std::invalid_argument("switch " + name_ + ": route to rank " + std::to_string(dst_rank) + " by port " +
                                std::to_string(port) + ", but the switch has " + std::to_string(p_.ports) + " ports");
  if (static_cast<std::size_t>(dst_rank) >= route_.size()) route_.resize(dst_rank + 1, kNoPort);
  route_[dst_rank] = port;
}

void UalinkSwitch::receive(std::uint32_t in, ps_t t, const common::FlitTag& tag) {
  InputPort& ip = inputs_[in];
  ++stats_.received_flits;
  if (ip.buffer.empty() && ip.blocked_on == kNoPort && links_) {
    // The common case: the flit would enter an empty buffer and, its output
    // having room, cross the crossbar at once (forward). It does so without
    // passing through the buffer's slots (on a large fabric they are out of
    // the caches); the counters are those of the buffered path.
    const std::uint32_t o = route(tag.dst_rank);
    if (o != kNoPort && has_room(outputs_[o])) {
      note_held(ip, 1);
      cross(in, o, t, tag);
      return;
    }
  }
  ip.buffer.push_back(tag);
  note_held(ip, ip.buffer.size());
  if (ip.blocked_on == kNoPort) forward(in, t);
}

void UalinkSwitch::note_held(InputPort& ip, std::uint64_t flits) {
  if (flits <= ip.max_flits) return;
  ip.max_flits = flits;
  if (flits > stats_.max_input_buffer_flits) stats_.max_input_buffer_flits = flits;
}

void UalinkSwitch::cross(std::uint32_t in, std::uint32_t o, ps_t t, const common::FlitTag& tag) {
  OutputPort& op = outputs_[o];
  links_->return_credit(in, t);
  if (++op.queued > stats_.max_output_queue_flits) stats_.max_output_queue_flits = op.queued;
  ++stats_.forwarded_flits;
  links_->send(o, t + p_.crossbar_latency_ps, tag);
}

// Move head-of-line flits of input `in` through the crossbar while their
// output queues have room; a full output blocks the input (back-pressure
// reaches the upstream transmitter through the credits it does not get back).
void UalinkSwitch::forward(std::uint32_t in, ps_t t) {
  if (!links_) throw std::logic_error("switch " + name_ + ": flit before bind()");
  InputPort& ip = inputs_[in];
  while (!ip.buffer.empty()) {
    const common::FlitTag tag = ip.buffer.front();
    const std::uint32_t o = route(tag.dst_rank);
    if (o == kNoPort)
      throw std::logic_error("switch " + name_ + " has no route to rank " + std::to_string(tag.dst_rank));
    OutputPort& op = outputs_[o];
    if (!has_room(op)) {
      ip.blocked_on = o;
      ip.blocked_since = t;
      op.waiters.push_back(in);
      ++stats_.input_blocks;
      return;
    }
    ip.buffer.pop_front();
    cross(in, o, t, tag);
  }
}

// Output `o` admitted a flit (its queue shrank): serve the inputs blocked on
// it in the order they blocked (round robin) while it has room.
void UalinkSwitch::admitted(std::uint32_t o, ps_t t) {
  OutputPort& op = outputs_[o];
  if (op.queued == 0) throw std::logic_error("switch " + name_ + ": admission from an empty output queue");
  --op.queued;
  auto& w = op.waiters;
  while (!w.empty() && has_room(op)) {
    const std::uint32_t in = w.front();
    w.pop_front();
    InputPort& ip = inputs_[in];
    ip.blocked_on = kNoPort;
    stats_.input_blocked_ps += t - ip.blocked_since;
    forward(in, t);
  }
}

std::vector<std::uint32_t> UalinkSwitch::waiters(std::uint32_t o) const {
  const auto& w = outputs_.at(o).waiters;
  std::vector<std::uint32_t> out;
  for (std::size_t i = 0; i < w.size(); ++i) out.push_back(w.at(i));
  return out;
}

void UalinkSwitch::visit_stats(const common::StatVisitor& v) const {
  v("received_flits", stats_.received_flits);
  v("forwarded_flits", stats_.forwarded_flits);
  v("input_blocks", stats_.input_blocks);
  v("input_blocked_ps", stats_.input_blocked_ps);
  v("max_input_buffer_flits", stats_.max_input_buffer_flits);
  v("max_output_queue_flits", stats_.max_output_queue_flits);
}

std::size_t UalinkSwitch::dump_blocked(std::ostream& os, std::size_t max_lines) const {
  std::size_t n = 0;
  for (std::uint32_t i = 0; i < inputs_.size() && n < max_lines; ++i) {
    const InputPort& ip = inputs_[i];
    if (ip.blocked_on == kNoPort) continue;
    os << "\n  " << name_ << " input port " << i << " holds " << ip.buffer.size()
       << " flit(s) blocked on output port " << ip.blocked_on << " (queue " << outputs_[ip.blocked_on].queued
       << " full)";
    ++n;
  }
  return n;
}

void UalinkSwitch::dump_state(std::ostream& os) const {
  os << "  switch " << name_ << ": " << p_.ports << " ports, crossbar latency " << p_.crossbar_latency_ps / 1000.0
     << "ns, output queue " << p_.output_queue_flits << " flits\n";
  for (std::uint32_t i = 0; i < inputs_.size(); ++i) {
    const InputPort& ip = inputs_[i];
    if (ip.buffer.empty() && ip.blocked_on == kNoPort) continue;
    os << "    input " << i << ": " << ip.buffer.size() << " flit(s)";
    if (ip.blocked_on != kNoPort) os << ", blocked on output " << ip.blocked_on << " since " << ip.blocked_since / 1000.0 << "ns";
    os << "\n";
  }
  for (std::uint32_t o = 0; o < outputs_.size(); ++o) {
    const OutputPort& op = outputs_[o];
    if (op.queued == 0 && op.waiters.empty()) continue;
    os << "    output " << o << ": " << op.queued << " flit(s) queued, " << op.waiters.size() << " input(s) waiting\n";
  }
}

}  // namespace fabricsim::switching
