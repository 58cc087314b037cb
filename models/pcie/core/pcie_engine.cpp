#include "models/pcie/core/pcie_engine.h"

#include <algorithm>
#include <sstream>
#include <stdexcept>

#include "models/link/core/counter_rng.h"

namespace fabricsim::pcie {

namespace {
ps_t ser(double ps_per_byte, std::uint64_t bytes) {
  return link::checked_ps(ps_per_byte * static_cast<double>(bytes), "serialization time");
}
}  // namespace

PcieEngine::PcieEngine(std::vector<PcieNode> nodes, const PcieEngineParams& p, std::uint64_t seed)
    : nodes_(std::move(nodes)), p_(p), seed_(seed), calendar_(p.calendar) {
  if (p_.burst_bytes == 0) throw std::invalid_argument("PcieEngine: burst_bytes must be > 0");
  const int n = static_cast<int>(nodes_.size());
  int roots = 0;
  for (int i = 0; i < n; ++i) {
    const auto& nd = nodes_[i];
    if (nd.parent < 0) ++roots;
    if (nd.parent >= n) throw std::invalid_argument("PcieEngine: node " + nd.name + " has a parent out of range");
    // Walking up must reach the root within n steps (no cycle).
    int k = i, steps = 0;
    while (nodes_[k].parent >= 0 && steps <= n) k = nodes_[k].parent, ++steps;
    if (steps > n) throw std::invalid_argument("PcieEngine: node " + nd.name + " is on a cycle");
    if (nd.kind == PcieNode::Kind::endpoint) {
      if (nd.rank < 0) throw std::invalid_argument("PcieEngine: endpoint " + nd.name + " has no rank");
      if (static_cast<std::size_t>(nd.rank) >= rank_ep_.size()) rank_ep_.resize(nd.rank + 1, -1);
      if (rank_ep_[nd.rank] >= 0) throw std::invalid_argument("PcieEngine: rank " + std::to_string(nd.rank) + " twice");
      rank_ep_[nd.rank] = static_cast<int>(eps_.size());
      Endpoint e;
      e.node = i;
      eps_.push_back(std::move(e));
    }
  }
  if (roots != 1) throw std::invalid_argument("PcieEngine: the host tree needs exactly one root (the data fabric)");
  res_.resize(2 * nodes_.size());
  for (int i = 0; i < n; ++i) {
    res_[2 * i] = {nodes_[i].up_ps_per_byte, nodes_[i].up_latency_ps, 0};
    res_[2 * i + 1] = {nodes_[i].down_ps_per_byte, nodes_[i].down_latency_ps, 0};
  }
  order_.resize(eps_.size());
  paths_.resize(eps_.size() * eps_.size());
}

int PcieEngine::quadrant_of_rank(int r) const {
  if (r < 0 || static_cast<std::size_t>(r) >= rank_ep_.size() || rank_ep_[r] < 0) return -1;
  return nodes_[eps_[rank_ep_[r]].node].quadrant;
}

PcieEngine::Path& PcieEngine::path(int se, int de) {
  Path& P = paths_[static_cast<std::size_t>(se) * eps_.size() + de];
  if (P.built) return P;
  std::vector<int> up, down;  // node chains from each endpoint to the root
  for (int k = eps_[se].node; k >= 0; k = nodes_[k].parent) up.push_back(k);
  for (int k = eps_[de].node; k >= 0; k = nodes_[k].parent) down.push_back(k);
  // Drop the common tail (the lowest common ancestor and above).
  while (up.size() > 1 && down.size() > 1 && up[up.size() - 2] == down[down.size() - 2]) up.pop_back(), down.pop_back();
  up.pop_back();
  down.pop_back();
  for (int k : up) {
    if (nodes_[k].kind == PcieNode::Kind::host_bridge) P.order_idx = static_cast<int>(P.res.size());
    P.res.push_back(static_cast<std::uint32_t>(2 * k));
  }
  for (auto it = down.rbegin(); it != down.rend(); ++it) {
    const int k = *it;
    if (nodes_[k].parent >= 0 && nodes_[nodes_[k].parent].kind == PcieNode::Kind::host_bridge)
      P.accept_idx = static_cast<int>(P.res.size());
    P.res.push_back(static_cast<std::uint32_t>(2 * k + 1));
  }
  if (P.accept_idx < 0) P.accept_idx = static_cast<int>(P.res.size()) - 1;
  const int dq = nodes_[eps_[de].node].quadrant;
  P.dest_key = dq >= 0 ? dq : -2;
  P.built = true;
  return P;
}

std::vector<std::string> PcieEngine::path_names(int a, int b) const {
  auto* self = const_cast<PcieEngine*>(this);
  const Path& P = self->path(rank_ep_.at(a), rank_ep_.at(b));
  std::vector<std::string> out{nodes_[eps_[rank_ep_.at(a)].node].name};
  for (auto r : P.res) {
    const int node = static_cast<int>(r / 2);
    out.push_back(r % 2 == 0 ? nodes_[nodes_[node].parent].name : nodes_[node].name);
  }
  return out;
}

std::uint32_t PcieEngine::new_transfer() {
  if (!free_transfers_.empty()) {
    const auto k = free_transfers_.back();
    free_transfers_.pop_back();
    transfers_[k] = Transfer{};
    return k;
  }
  transfers_.emplace_back();
  return static_cast<std::uint32_t>(transfers_.size() - 1);
}

std::uint64_t PcieEngine::post(int src, int dst, std::uint64_t bytes, ps_t t, std::uint64_t cookie, TransferKind kind) {
  auto known = [&](int r) { return r >= 0 && static_cast<std::size_t>(r) < rank_ep_.size() && rank_ep_[r] >= 0; };
  if (!known(src) || !known(dst)) throw std::invalid_argument("PcieEngine::post: unknown rank");
  if (src == dst) throw std::invalid_argument("PcieEngine::post: source and destination are the same rank");
  if (t < horizon_) throw std::invalid_argument("PcieEngine::post: time before the engine's horizon");
  const std::uint32_t id = new_transfer();
  Transfer& T = transfers_[id];
  T.cookie = cookie;
  T.src = src;
  T.dst = dst;
  T.kind = kind;
  T.left = kind == TransferKind::read_request ? p_.request_bytes : std::max<std::uint64_t>(bytes, 1);
  T.release = t;
  if (kind == TransferKind::read_completion) {
    // Mechanism A: the target (src) answers a requester (dst) in another quadrant late while its quadrant is degraded.
    ++stats_.reads;
    const ps_t stall = read_stall(calendar_, p_.read_stall, quadrant_of_rank(dst), quadrant_of_rank(src), t, bytes,
                                  seed_, reads_posted_++);
    if (stall > 0) {
      ++stats_.stalled_reads;
      stats_.read_stall_ps += stall;
      T.release = t + stall;
    }
  }
  ++open_;
  const int ep = rank_ep_[src];
  eps_[ep].active.push_back(id);
  schedule_inject(ep, std::max(T.release, eps_[ep].egress_free));
  return id;
}

void PcieEngine::schedule_inject(int ep, ps_t t) {
  Endpoint& E = eps_[ep];
  t = std::max(t, now_);
  if (t >= E.scheduled) return;
  E.scheduled = t;
  push(t, kInject, static_cast<std::size_t>(ep));
}

void PcieEngine::walk(const Path& P, int from, int to, std::uint64_t bytes, ps_t& head, ps_t& tail, ps_t* accept) {
  for (int i = from; i < to; ++i) {
    Resource& R = res_[P.res[i]];
    const ps_t start = std::max(head, R.free);
    const ps_t end = std::max(start + ser(R.ps_per_byte, bytes), tail);
    R.free = end;
    if (accept && i == P.accept_idx) *accept = end;
    head = start + R.latency;
    tail = end + R.latency;
  }
}

void PcieEngine::arrived(std::uint32_t tr, ps_t t) {
  Transfer& T = transfers_[tr];
  if (t > T.last_arrival) T.last_arrival = t;
  if (T.left == 0 && T.unresolved == 0 && !T.complete_scheduled) {
    T.complete_scheduled = true;
    push(std::max(T.last_arrival, now_), kComplete, tr);
  }
}

void PcieEngine::inject(int ep, ps_t t) {
  Endpoint& E = eps_[ep];
  // Eligible transfers: released by t.
  ps_t next_release = link::kNever;
  std::size_t eligible = 0;
  for (auto id : E.active) {
    if (transfers_[id].release <= t) ++eligible;
    else next_release = std::min(next_release, transfers_[id].release);
  }
  if (eligible == 0) {
    if (next_release != link::kNever) schedule_inject(ep, next_release);
    return;
  }
  std::size_t pick = 0;
  if (p_.random_interleave && eligible > 1)
    pick = static_cast<std::size_t>(link::to_unit(link::key_hash(seed_, 0x9c1e0000ull + ep, E.picks, 0, 0x61)) * eligible);
  else if (eligible > 1)
    pick = E.picks % eligible;
  ++E.picks;
  std::size_t slot = 0;
  for (std::size_t i = 0, k = 0; i < E.active.size(); ++i)
    if (transfers_[E.active[i]].release <= t && k++ == pick) {
      slot = i;
      break;
    }
  const std::uint32_t id = E.active[slot];
  Transfer& T = transfers_[id];
  const std::uint64_t bytes = T.kind == TransferKind::read_request ? T.left : std::min(T.left, p_.burst_bytes);
  T.left -= bytes;
  if (T.left == 0) E.active.erase(E.active.begin() + static_cast<std::ptrdiff_t>(slot));
  if (T.kind != TransferKind::read_request) ++stats_.bursts;
  const Path& P = path(ep, rank_ep_[T.dst]);
  ps_t head = t, tail = t;
  if (T.kind == TransferKind::write && p_.ordering.enabled && P.order_idx >= 0) {
    walk(P, 0, P.order_idx, bytes, head, tail, nullptr);
    OrderPoint& O = order_[ep];
    ++T.unresolved;
    ++stats_.ordered_bursts;
    O.queue.push_back({id, bytes, head, tail, P.dest_key});
    if (O.queue.size() == 1 && (P.dest_key == O.last_dest || O.max_ack <= head) &&
        (!p_.ordering.interleave_bytes || active_destinations(O, head) <= 1)) {
      // Fast path: nothing to wait for at the ordering point (same destination or
      // drained, no fan-out): release now, as a burst without ordering would be.
      release(ep, std::max(head, O.last_release));
    } else if (O.queue.size() == 1) {
      ps_t rt = std::max(head, O.last_release);
      if (P.dest_key != O.last_dest) rt = std::max(rt, O.max_ack);
      O.scheduled = rt;
      push(rt, kRelease, static_cast<std::size_t>(ep));
    }
  } else {
    walk(P, 0, static_cast<int>(P.res.size()), bytes, head, tail, nullptr);
    arrived(id, tail);
  }
  E.egress_free = res_[P.res[0]].free;
  if (!E.active.empty()) {
    ps_t nt = link::kNever;
    for (auto a : E.active) nt = std::min(nt, transfers_[a].release);
    schedule_inject(ep, std::max(nt, E.egress_free));
  }
}

int PcieEngine::active_destinations(const OrderPoint& O, ps_t t) const {
  int keys[64];
  int n = 0;
  auto add = [&](int k) {
    for (int i = 0; i < n; ++i)
      if (keys[i] == k) return;
    if (n < 64) keys[n++] = k;
  };
  for (std::size_t i = 0; i < O.queue.size(); ++i) add(O.queue.at(i).dest_key);
  for (const auto& [k, when] : O.recent)
    if (when + p_.ordering.fanout_window_ps > t) add(k);
  return n;
}

void PcieEngine::release(int ep, ps_t t) {
  OrderPoint& O = order_[ep];
  const int k = p_.ordering.interleave_bytes ? active_destinations(O, t) : 1;
  const Held h = O.queue.front();
  O.queue.pop_front();
  if (t > h.head) {
    stats_.drain_wait_ps += t - h.head;
    if (h.dest_key != O.last_dest && O.max_ack > h.head) ++stats_.drains;
  }
  const Transfer& T = transfers_[h.transfer];
  const Path& P = path(ep, rank_ep_[T.dst]);
  // Fan-out: the burst's pieces alternate with other destinations' pieces in
  // one ordered stream; each change of destination waits a round trip.
  ps_t hold = 0;
  if (k >= 2 && h.bytes > p_.ordering.interleave_bytes) {
    const std::uint64_t pieces = (h.bytes + p_.ordering.interleave_bytes - 1) / p_.ordering.interleave_bytes;
    std::uint64_t switches = 0;
    for (std::uint64_t i = 1; i < pieces; ++i)
      if (link::to_unit(link::key_hash(seed_, 0x0f0e0000ull + ep, O.switches_drawn++, 0, 0x71)) * k < k - 1) ++switches;
    ps_t rtt = p_.ordering.ack_latency_ps;
    for (int i = P.order_idx; i <= P.accept_idx; ++i) rtt += res_[P.res[i]].latency;
    hold = switches * rtt;
    stats_.interleaved_switches += switches;
  }
  ps_t head = t + hold, tail = std::max(h.tail, t + hold), accept = t;
  walk(P, P.order_idx, static_cast<int>(P.res.size()), h.bytes, head, tail, &accept);
  O.max_ack = std::max(O.max_ack, accept + p_.ordering.ack_latency_ps);
  O.last_dest = h.dest_key;
  O.last_release = t + hold;
  bool found = false;
  for (auto& [key, when] : O.recent)
    if (key == h.dest_key) when = t, found = true;
  if (!found) O.recent.emplace_back(h.dest_key, t);
  --transfers_[h.transfer].unresolved;
  arrived(h.transfer, tail);
  O.scheduled = link::kNever;
  if (!O.queue.empty()) {
    const Held& n = O.queue.front();
    ps_t rt = std::max(n.head, O.last_release);
    if (n.dest_key != O.last_dest) rt = std::max(rt, O.max_ack);
    O.scheduled = rt;
    push(rt, kRelease, static_cast<std::size_t>(ep));
  }
}

ps_t PcieEngine::next_event_time() { return heap_.empty() ? link::kNever : heap_.min_key(); }

ps_t PcieEngine::run(ps_t limit, std::vector<Completion>& out) {
  ps_t completed_at = link::kNever;
  while (!heap_.empty() && heap_.min_key() < limit) {
    const auto [t, v] = heap_.pop();
    const std::size_t kind = v % 4, id = v / 4;
    now_ = t;
    if (horizon_ < t) horizon_ = t;
    if (kind == kInject) {
      if (eps_[id].scheduled != t) continue;  // stale
      eps_[id].scheduled = link::kNever;
      inject(static_cast<int>(id), t);
    } else if (kind == kRelease) {
      if (order_[id].scheduled != t) continue;
      release(static_cast<int>(id), t);
    } else {
      const Transfer& T = transfers_[id];
      out.push_back({id, T.cookie, t});
      --open_;
      free_transfers_.push_back(static_cast<std::uint32_t>(id));
      if (completed_at == link::kNever) {
        completed_at = t;
        limit = t + 1;  // finish this instant, then return
      }
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

std::string PcieEngine::diagnosis() const {
  std::ostringstream os;
  os << open_ << " PCIe transfer(s) open at t=" << now_ / 1000.0 << "ns";
  for (std::size_t e = 0; e < eps_.size(); ++e) {
    if (!eps_[e].active.empty())
      os << "\n  " << nodes_[eps_[e].node].name << ": " << eps_[e].active.size() << " transfer(s) sending";
    if (!order_[e].queue.empty())
      os << "\n  " << nodes_[eps_[e].node].name << ": " << order_[e].queue.size()
         << " write burst(s) held at its host bridge's ordering point";
  }
  return os.str();
}

}  // namespace fabricsim::pcie
