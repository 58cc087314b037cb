#include "models/pcie/core/pcie_endpoint.h"

#include <algorithm>

#include "models/link/core/counter_rng.h"
#include "models/pcie/core/host_bridge.h"
#include "models/pcie/core/io_quadrant.h"
#include "models/pcie/core/pcie_router.h"

namespace fabricsim::pcie {

PcieEndpoint::PcieEndpoint(std::string name, int index, const PcieEndpointParams& p, std::uint64_t seed,
                           PcieEventQueue& q, PcieTransferTable& transfers, PcieRouter& router, HostBridge* bridge,
                           IoQuadrant* quadrant)
    : name_(std::move(name)),
      index_(index),
      p_(p),
      seed_(seed),
      q_(q),
      transfers_(transfers),
      router_(router),
      bridge_(bridge),
      quadrant_(quadrant) {
  if (bridge_) ordering_point_ = bridge_->add_source(index_, name_);
}

void PcieEndpoint::post(std::uint32_t id, std::uint64_t bytes, int requester_quadrant, std::uint64_t read_key) {
  PcieTransfer& T = transfers_[id];
  if (T.kind == TransferKind::read_completion) {
    // Mechanism A: the target answers a requester in another quadrant late while its quadrant is degraded.
    ++stats_.read_completions;
    if (quadrant_) T.release += quadrant_->completion_stall(requester_quadrant, T.release, bytes, read_key);
  }
  active_.push_back(id);
  schedule_inject(std::max(T.release, egress_free_));
}

void PcieEndpoint::schedule_inject(ps_t t) {
  t = std::max(t, q_.now());
  if (t >= scheduled_) return;
  scheduled_ = t;
  q_.push(t, PcieEvent::inject, static_cast<std::size_t>(index_));
}

void PcieEndpoint::inject(ps_t t) {
  // Eligible transfers: released by t.
  ps_t next_release = link::kNever;
  std::size_t eligible = 0;
  for (auto id : active_) {
    if (transfers_[id].release <= t)
      ++eligible;
    else
      next_release = std::min(next_release, transfers_[id].release);
  }
  if (eligible == 0) {
    if (next_release != link::kNever) schedule_inject(next_release);
    return;
  }
  std::size_t pick = 0;
  if (p_.random_interleave && eligible > 1)
    pick = static_cast<std::size_t>(
        link::to_unit(link::key_hash(seed_, 0x9c1e0000ull + static_cast<std::uint64_t>(index_), picks_, 0, 0x61)) *
        eligible);
  else if (eligible > 1)
    pick = picks_ % eligible;
  ++picks_;
  std::size_t slot = 0;
  for (std::size_t i = 0, k = 0; i < active_.size(); ++i)
    if (transfers_[active_[i]].release <= t && k++ == pick) {
      slot = i;
      break;
    }
  const std::uint32_t id = active_[slot];
  PcieTransfer& T = transfers_[id];
  const bool request = T.kind == TransferKind::read_request;
  const std::uint64_t bytes = request ? T.left : std::min(T.left, p_.burst_bytes);
  T.left -= bytes;
  if (T.left == 0) active_.erase(active_.begin() + static_cast<std::ptrdiff_t>(slot));
  if (request) {
    ++stats_.read_requests;
  } else {
    ++stats_.bursts;
    stats_.bytes += bytes;
  }
  const PcieRoute& P = router_.route(index_, T.dst_ep);
  ps_t head = t, tail = t;
  if (T.kind == TransferKind::write && p_.write_ordering && P.order_idx >= 0) {
    walk(P, 0, P.order_idx, bytes, head, tail, nullptr);
    ++T.unresolved;
    bridge_->admit(ordering_point_, {id, bytes, head, tail, P.dest_key, &P});
  } else {
    walk(P, 0, static_cast<int>(P.hops.size()), bytes, head, tail, nullptr);
    transfers_.arrived(id, tail, q_);
  }
  egress_free_ = P.hops[0]->free_ps;
  if (!active_.empty()) {
    ps_t nt = link::kNever;
    for (auto a : active_) nt = std::min(nt, transfers_[a].release);
    schedule_inject(std::max(nt, egress_free_));
  }
}

void PcieEndpoint::visit_stats(const common::StatVisitor& v) const {
  v("bursts", stats_.bursts);
  v("read_requests", stats_.read_requests);
  v("read_completions", stats_.read_completions);
  v("bytes", stats_.bytes);
}

void PcieEndpoint::dump_state(std::ostream& os) const {
  os << "  " << (p_.role == PcieEndpointParams::Role::gpu ? "endpoint " : "host memory endpoint ") << name_ << ": "
     << active_.size() << " transfer(s) sending";
  for (auto id : active_) {
    const PcieTransfer& T = transfers_[id];
    os << " [#" << id << " to rank " << T.dst << ", " << T.left << " B left, eligible at " << T.release / 1000.0
       << "ns]";
  }
  os << ", link free at " << egress_free_ / 1000.0 << "ns";
  if (scheduled_ != link::kNever) os << ", next send at " << scheduled_ / 1000.0 << "ns";
  os << "\n";
}

}  // namespace fabricsim::pcie
