#include "models/pcie/core/pcie_engine.h"

#include <algorithm>
#include <sstream>
#include <stdexcept>

namespace fabricsim::pcie {

PcieEngine::PcieEngine(std::vector<PcieNode> nodes, const PcieEngineParams& p, std::uint64_t seed)
    : p_(p), calendar_(std::make_unique<StallCalendar>(p.calendar)) {
  using K = PcieNode::Kind;
  if (p_.burst_bytes == 0) throw std::invalid_argument("PcieEngine: burst_bytes must be > 0");
  router_ = std::make_unique<PcieRouter>(std::move(nodes));
  const auto& N = router_->nodes();
  const int n = static_cast<int>(N.size());
  // Tree elements, one component each; ports[i]: the element's downstream ports.
  std::vector<PciePortSet*> ports(n, nullptr);
  std::vector<HostBridge*> bridge_of(n, nullptr);
  std::vector<IoQuadrant*> quadrant_of(n, nullptr);
  for (int i = 0; i < n; ++i) {
    const PcieNode& nd = N[i];
    switch (nd.kind) {
      case K::data_fabric:
        if (nd.parent >= 0) throw std::invalid_argument("PcieEngine: data fabric " + nd.name + " must be the root");
        fabric_ = std::make_unique<DataFabric>(nd.name, DataFabricParams{});
        ports[i] = &fabric_->ports();
        break;
      case K::quadrant:
        quadrants_.push_back(
            std::make_unique<IoQuadrant>(nd.name, IoQuadrantParams{nd.quadrant, p_.read_stall}, *calendar_, seed));
        ports[i] = &quadrants_.back()->ports();
        quadrant_of[i] = quadrants_.back().get();
        break;
      case K::host_bridge:
        bridges_.push_back(std::make_unique<HostBridge>(nd.name, HostBridgeParams{nd.quadrant, p_.ordering}, seed,
                                                        queue_, transfers_));
        ports[i] = &bridges_.back()->ports();
        bridge_of[i] = bridges_.back().get();
        break;
      case K::partition:
        partitions_.push_back(std::make_unique<PcieSwitchPartition>(nd.name, SwitchPartitionParams{nd.quadrant}));
        ports[i] = &partitions_.back()->ports();
        break;
      case K::endpoint: break;
    }
  }
  if (!fabric_) throw std::invalid_argument("PcieEngine: the host tree's root must be the data fabric");
  // Every link belongs to its parent's downstream port toward the child. All
  // ports first, then the links' addresses (a port set's storage is final).
  std::vector<std::size_t> port_idx(n, 0);
  for (int i = 0; i < n; ++i) {
    const PcieNode& nd = N[i];
    if (nd.parent < 0) continue;
    port_idx[i] = ports[nd.parent]->add(
        nd.name, PciePortParams{nd.up_ps_per_byte, nd.down_ps_per_byte, nd.up_latency_ps, nd.down_latency_ps});
  }
  for (int i = 0; i < n; ++i)
    if (N[i].parent >= 0) {
      PciePort& port = (*ports[N[i].parent])[port_idx[i]];
      router_->set_link(i, &port.up, &port.down);
    }
  // Endpoints in node order (their index keys their draws and events).
  const auto& epn = router_->endpoint_nodes();
  for (std::size_t e = 0; e < epn.size(); ++e) {
    const int node = epn[e];
    PcieEndpointParams ep;
    ep.role = N[node].parent >= 0 && N[N[node].parent].kind == K::data_fabric ? PcieEndpointParams::Role::host_memory
                                                                              : PcieEndpointParams::Role::gpu;
    ep.burst_bytes = p_.burst_bytes;
    ep.random_interleave = p_.random_interleave;
    ep.write_ordering = p_.ordering.enabled;
    const int b = router_->ancestor(node, K::host_bridge), q = router_->ancestor(node, K::quadrant);
    eps_.push_back(std::make_unique<PcieEndpoint>(N[node].name, static_cast<int>(e), ep, seed, queue_, transfers_,
                                                  *router_, b >= 0 ? bridge_of[b] : nullptr,
                                                  q >= 0 ? quadrant_of[q] : nullptr));
  }
}

int PcieEngine::quadrant_of_rank(int r) const {
  const int e = router_->endpoint_of_rank(r);
  return e < 0 ? -1 : router_->nodes()[router_->endpoint_nodes()[e]].quadrant;
}

std::vector<std::string> PcieEngine::path_names(int a, int b) const {
  const int ea = router_->endpoint_of_rank(a), eb = router_->endpoint_of_rank(b);
  if (ea < 0 || eb < 0) throw std::out_of_range("PcieEngine::path_names: unknown rank");
  return router_->route_names(ea, eb);
}

std::uint64_t PcieEngine::post(int src, int dst, std::uint64_t bytes, ps_t t, std::uint64_t cookie, TransferKind kind) {
  const int se = router_->endpoint_of_rank(src), de = router_->endpoint_of_rank(dst);
  if (se < 0 || de < 0) throw std::invalid_argument("PcieEngine::post: unknown rank");
  if (src == dst) throw std::invalid_argument("PcieEngine::post: source and destination are the same rank");
  if (t < horizon_) throw std::invalid_argument("PcieEngine::post: time before the engine's horizon");
  const std::uint32_t id = transfers_.create();
  PcieTransfer& T = transfers_[id];
  T.cookie = cookie;
  T.src = src;
  T.dst = dst;
  T.dst_ep = de;
  T.kind = kind;
  T.left = kind == TransferKind::read_request ? p_.request_bytes : std::max<std::uint64_t>(bytes, 1);
  T.release = t;
  int requester_quadrant = -1;
  std::uint64_t read_key = 0;
  if (kind == TransferKind::read_completion) {
    requester_quadrant = quadrant_of_rank(dst);
    read_key = reads_posted_++;
  }
  ++open_;
  eps_[se]->post(id, bytes, requester_quadrant, read_key);
  return id;
}

ps_t PcieEngine::run(ps_t limit, std::vector<Completion>& out) {
  ps_t completed_at = link::kNever;
  while (!queue_.empty() && queue_.next_time() < limit) {
    ps_t t;
    PcieEvent e;
    std::size_t id;
    queue_.pop(t, e, id);
    if (horizon_ < t) horizon_ = t;
    switch (e) {
      case PcieEvent::inject: eps_[id]->on_inject(t); break;
      case PcieEvent::release: {
        const PcieEndpoint& E = *eps_[id];
        E.bridge()->on_release(E.ordering_point(), t);
        break;
      }
      case PcieEvent::complete:
        out.push_back({id, transfers_[id].cookie, t});
        --open_;
        transfers_.release_id(static_cast<std::uint32_t>(id));
        if (completed_at == link::kNever) {
          completed_at = t;
          limit = t + 1;  // finish this instant, then return
        }
        break;
    }
  }
  if (completed_at != link::kNever) {
    horizon_ = completed_at;
    return horizon_;
  }
  const ps_t h = std::min(limit, next_event_time());
  if (h != link::kNever && h > horizon_) horizon_ = h;
  return horizon_;
}

PcieStats PcieEngine::stats() const {
  PcieStats s;
  for (const auto& e : eps_) {
    s.bursts += e->stats().bursts;
    s.reads += e->stats().read_completions;
  }
  for (const auto& q : quadrants_) {
    s.stalled_reads += q->stats().stalled_reads;
    s.read_stall_ps += q->stats().read_stall_ps;
  }
  for (const auto& b : bridges_) {
    s.ordered_bursts += b->stats().ordered_bursts;
    s.drains += b->stats().drains;
    s.interleaved_switches += b->stats().interleaved_switches;
    s.drain_wait_ps += b->stats().drain_wait_ps;
  }
  return s;
}

void PcieEngine::visit_stats(const common::StatVisitor& v) const {
  const PcieStats s = stats();
  v("bursts", s.bursts);
  v("reads", s.reads);
  v("stalled_reads", s.stalled_reads);
  v("read_stall_ps", s.read_stall_ps);
  v("ordered_bursts", s.ordered_bursts);
  v("drains", s.drains);
  v("interleaved_switches", s.interleaved_switches);
  v("drain_wait_ps", s.drain_wait_ps);
  auto under = [&](const common::StatsSource& c, const std::string& name) {
    c.visit_stats([&](std::string_view k, std::uint64_t x) { v(name + "." + std::string(k), x); });
  };
  for (const auto& e : eps_) under(*e, e->name());
  for (const auto& p : partitions_) under(*p, p->name());
  for (const auto& b : bridges_) under(*b, b->name());
  for (const auto& q : quadrants_) under(*q, q->name());
  under(*fabric_, fabric_->name());
}

void PcieEngine::dump_state(std::ostream& os) const {
  os << "PCIe host at t=" << now() / 1000.0 << "ns: " << open_ << " transfer(s) open, " << queue_.size()
     << " event(s) pending\n";
  for (const auto& e : eps_) e->dump_state(os);
  for (const auto& p : partitions_) p->dump_state(os);
  for (const auto& b : bridges_) b->dump_state(os);
  for (const auto& q : quadrants_) q->dump_state(os, now());
  fabric_->dump_state(os);
}

std::string PcieEngine::diagnosis() const {
  std::ostringstream os;
  // (The engine's clock is its last event's time, not the caller's: with no
  // transfer open it may lie well before the moment the run got stuck.)
  if (open_ == 0)
    os << "no PCIe transfer open (the PCIe host's last event was at t=" << now() / 1000.0 << "ns)\n";
  else
    os << open_ << " PCIe transfer(s) open at t=" << now() / 1000.0 << "ns\n";
  for (const auto& e : eps_)
    if (e->active()) e->dump_state(os);
  for (const auto& b : bridges_)
    if (b->held()) b->dump_state(os);
  std::string s = os.str();
  if (!s.empty() && s.back() == '\n') s.pop_back();
  return s;
}

}  // namespace fabricsim::pcie
