#include "models/pcie/core/host_bridge.h"

#include <algorithm>

#include "models/link/core/counter_rng.h"

namespace fabricsim::pcie {

int HostBridge::add_source(int ep, const std::string& source_name) {
  OrderPoint O;
  O.ep = ep;
  O.source = source_name;
  O.fanout = FanoutDetector(p_.ordering.fanout_window_ps);
  points_.push_back(std::move(O));
  return static_cast<int>(points_.size()) - 1;
}

std::size_t HostBridge::held() const {
  std::size_t n = 0;
  for (const auto& O : points_) n += O.queue.size();
  return n;
}

void HostBridge::schedule_head(OrderPoint& O) {
  const HeldBurst& n = O.queue.front();
  ps_t rt = std::max(n.head, O.last_release);
  if (n.dest_key != O.last_dest) rt = std::max(rt, O.max_ack);  // a destination change waits for the drain
  O.scheduled = rt;
  q_.push(rt, PcieEvent::release, static_cast<std::size_t>(O.ep));
}

void HostBridge::admit(int local, const HeldBurst& h) {
  OrderPoint& O = points_[local];
  ++stats_.ordered_bursts;
  O.queue.push_back(h);
  if (O.queue.size() != 1) return;  // head of line: it waits behind earlier bursts
  if ((h.dest_key == O.last_dest || O.max_ack <= h.head) &&
      (!p_.ordering.interleave_bytes || O.fanout.active(O.queue, h.head) <= 1)) {
    // Fast path: nothing to wait for (same destination or drained, no
    // fan-out): release now, as a burst without ordering would be.
    release(local, std::max(h.head, O.last_release));
  } else {
    schedule_head(O);
  }
}

void HostBridge::release(int local, ps_t t) {
  OrderPoint& O = points_[local];
  const WriteOrderingParams& w = p_.ordering;
  const int k = w.interleave_bytes ? O.fanout.active(O.queue, t) : 1;
  const HeldBurst h = O.queue.front();
  O.queue.pop_front();
  if (t > h.head) {
    stats_.drain_wait_ps += t - h.head;
    if (h.dest_key != O.last_dest && O.max_ack > h.head) ++stats_.drains;
  }
  const PcieRoute& P = *h.route;
  // Fan-out: the burst's pieces alternate with other destinations' pieces in
  // one ordered stream; each change of destination waits a round trip.
  ps_t hold = 0;
  if (k >= 2 && h.bytes > w.interleave_bytes) {
    const std::uint64_t pieces = (h.bytes + w.interleave_bytes - 1) / w.interleave_bytes;
    std::uint64_t switches = 0;
    for (std::uint64_t i = 1; i < pieces; ++i)
      if (link::to_unit(
              link::key_hash(seed_, 0x0f0e0000ull + static_cast<std::uint64_t>(O.ep), O.switches_drawn++, 0, 0x71)) *
              k <
          k - 1)
        ++switches;
    hold = switches * (w.ack_latency_ps + P.order_to_accept_ps);
    stats_.interleaved_switches += switches;
  }
  ps_t head = t + hold, tail = std::max(h.tail, t + hold), accept = t;
  walk(P, P.order_idx, static_cast<int>(P.hops.size()), h.bytes, head, tail, &accept);
  O.max_ack = std::max(O.max_ack, accept + w.ack_latency_ps);
  O.last_dest = h.dest_key;
  O.last_release = t + hold;
  O.fanout.released(h.dest_key, t);
  --transfers_[h.transfer].unresolved;
  transfers_.arrived(h.transfer, tail, q_);
  O.scheduled = link::kNever;
  if (!O.queue.empty()) schedule_head(O);
}

void HostBridge::visit_stats(const common::StatVisitor& v) const {
  v("ordered_bursts", stats_.ordered_bursts);
  v("drains", stats_.drains);
  v("interleaved_switches", stats_.interleaved_switches);
  v("drain_wait_ps", stats_.drain_wait_ps);
  ports_.visit_stats(v);
}

void HostBridge::dump_state(std::ostream& os) const {
  os << "  host bridge " << name_ << " (quadrant " << p_.quadrant << ")\n";
  for (const auto& O : points_) {
    os << "    ordering point of " << O.source << ": " << O.queue.size() << " write burst(s) held";
    if (!O.queue.empty())
      os << " (head toward destination " << O.queue.front().dest_key << ", arrived at " << O.queue.front().head / 1000.0
         << "ns)";
    os << ", last destination " << O.last_dest << ", acks outstanding until " << O.max_ack / 1000.0 << "ns";
    if (O.scheduled != link::kNever) os << ", release scheduled at " << O.scheduled / 1000.0 << "ns";
    os << "\n";
  }
  ports_.dump_state(os, "    ");
}

}  // namespace fabricsim::pcie
