#include "models/fabric/core/fabric_engine.h"

#include <cassert>
#include <limits>
#include <sstream>
#include <stdexcept>

#include "models/link/core/counter_rng.h"

namespace fabricsim::fabric_core {

namespace {
constexpr std::size_t kNone = std::numeric_limits<std::size_t>::max();
}

const char* to_string(LinkProtocol p) { return p == LinkProtocol::rifl ? "rifl" : "ualink"; }

rifl::RiflConfig rifl_for_link(const link::LinkConfig& link, rifl::RiflConfig r) {
  r.lane_rate_bps = link.forward_rate_bps / r.lanes;
  r.cable_m = 1.0;
  r.cable_ns_per_m = link.propagation_ps / 1000.0;
  return r;
}

FabricEngine::FabricEngine(std::vector<EngineNode> nodes, std::vector<EngineLink> links, std::uint64_t seed,
                           std::shared_ptr<const Routing> routing)
    : nodes_(std::move(nodes)), routing_(std::move(routing)) {
  out_dir_.resize(nodes_.size());
  in_dir_.resize(nodes_.size());
  for (std::size_t n = 0; n < nodes_.size(); ++n) {
    if (!nodes_[n].accelerator) {
      if (!nodes_[n].component) throw std::invalid_argument("node " + nodes_[n].name + " has no component");
      continue;
    }
    const int r = nodes_[n].rank;
    if (r < 0) throw std::invalid_argument("accelerator " + nodes_[n].name + " has no rank");
    if (static_cast<std::size_t>(r) >= rank_node_.size()) rank_node_.resize(r + 1, kNone);
    rank_node_[r] = n;
  }
  if (!links.empty()) flit_bytes_ = links.front().config.flit_bytes;
  for (const auto& l : links) {
    if (l.config.flit_bytes != flit_bytes_)
      throw std::invalid_argument("all links of a fabric must use the same flit size");
    rifl::FabricRiflLink* rl = nullptr;
    if (l.protocol == LinkProtocol::rifl) {
      // The fabric link's rate over the lanes, its propagation after the
      // transceivers, its receive buffer as credits; the seed per link.
      rifl::RiflConfig rc = rifl_for_link(l.config, l.rifl);
      rc.seed = link::key_hash(seed, l.id, 0, 0, 0x5249464CULL);  // "RIFL"
      rifl_links_.push_back(std::make_unique<rifl::FabricRiflLink>(rc, l.config.flit_bytes, l.config.rx_buffer_flits));
      rl = rifl_links_.back().get();
      const std::size_t owner = dirs_.size();
      rl->set_delivery_hook([this, owner](int side, ps_t t) { on_delivery(owner + side, t); });
      const std::size_t na = l.a, nb = l.b;
      const std::uint32_t pa = l.pa, pb = l.pb;
      rl->set_admit_hook([this, na, nb, pa, pb](int side, ps_t t) {
        if (common::FlitComponent* c = nodes_[side == 0 ? na : nb].component) c->admitted(side == 0 ? pa : pb, t);
      });
    }
    for (int d = 0; d < 2; ++d) {
      Direction dir;
      dir.from = d == 0 ? l.a : l.b;
      dir.to = d == 0 ? l.b : l.a;
      dir.from_port = d == 0 ? l.pa : l.pb;
      dir.to_port = d == 0 ? l.pb : l.pa;
      const std::size_t idx = dirs_.size();
      if (rl) {
        dir.rifl = std::make_unique<RiflSide>();
        dir.rifl->link = rl;
        dir.rifl->side = d;
        dir.rifl->owner = idx - d;
        dir.credit_delay = rl->signal_delay_ps();
      } else {
        dir.eng = std::make_unique<link::LinkEngine>(
            l.config, link::make_policy(l.config.policy_name, l.config.fec_menu, l.config.policy), seed,
            2 * l.id + d);
        dir.eng->set_record_times(false);
        dir.eng->set_lazy_quiet_events(true);
        dir.eng->enable_credits(l.config.rx_buffer_flits);
        dir.eng->reserve_queues();
        dir.tags.reserve(16);
        dir.credit_delay = l.config.control_base_delay_ps + l.config.propagation_ps;
        dir.eng->set_delivery_hook([this, idx](std::uint64_t, ps_t t) { on_delivery(idx, t); });
      }
      for (const std::size_t end : {dir.from, dir.to}) {
        const common::FlitComponent* c = nodes_[end].component;
        const std::uint32_t port = end == dir.from ? dir.from_port : dir.to_port;
        if (c && port >= c->ports())
          throw std::invalid_argument("link on port " + std::to_string(port) + " of " + nodes_[end].name +
                                      ", which has " + std::to_string(c->ports()) + " ports");
      }
      dir.to_component = nodes_[dir.to].component;
      dir.to_rank = nodes_[dir.to].accelerator ? nodes_[dir.to].rank : -1;
      // A component learns of every admission on its output ports (its output queue shrank).
      if (common::FlitComponent* c = nodes_[dir.from].component; c && dir.eng) {
        const std::uint32_t port = dir.from_port;
        dir.eng->set_admit_hook([c, port](ps_t t) { c->admitted(port, t); });
      }
      auto& ports = out_dir_[dir.from];
      if (ports.size() <= dir.from_port) ports.resize(dir.from_port + 1, kNone);
      ports[dir.from_port] = idx;
      auto& in = in_dir_[dir.to];
      if (in.size() <= dir.to_port) in.resize(dir.to_port + 1, kNone);
      in[dir.to_port] = idx;
      dirs_.push_back(std::move(dir));
    }
  }
  engines_.reserve(dirs_.size());
  for (const Direction& dir : dirs_) engines_.push_back(dir.eng.get());
  for (std::size_t n = 0; n < nodes_.size(); ++n) {
    if (!nodes_[n].component) continue;
    attachments_.push_back(std::make_unique<Attachment>(*this, n));
    nodes_[n].component->bind(*attachments_.back());
  }
}

void FabricEngine::Attachment::send(std::uint32_t port, ps_t t, const FlitTag& tag) {
  if (port >= n_out_ || out_[port] == kNone)
    throw std::logic_error(e_.nodes_[node_].name + ": send on port " + std::to_string(port) + ", which has no link");
  e_.offer(out_[port], t, tag);
}

void FabricEngine::Attachment::return_credit(std::uint32_t port, ps_t t) {
  if (port >= n_in_ || in_[port] == kNone)
    throw std::logic_error(e_.nodes_[node_].name + ": credit on port " + std::to_string(port) + ", which has no link");
  e_.credit_back(in_[port], t);
}

// The receive-buffer slot of a flit delivered on direction d was freed at t:
// its credit reaches the transmitter after the link's control delay.
void FabricEngine::credit_back(std::size_t d, ps_t t) {
  Direction& dir = dirs_[d];
  if (!dir.eng) {
    give_credit(dir, t);
    schedule(d);
    return;
  }
  dir.eng->return_credit(t + dir.credit_delay);
  if (dir.eng->credits() == 0) schedule(d);  // the credit may wake a starved transmitter
}

// A credit of direction `dir` freed at t is back at its transmitter after the link's delay.
void FabricEngine::give_credit(Direction& dir, ps_t t) {
  if (dir.eng)
    dir.eng->return_credit(t + dir.credit_delay);
  else
    dir.rifl->link->return_credit(dir.rifl->side, t + dir.credit_delay);
}

std::uint64_t FabricEngine::post(int src, int dst, std::uint64_t bytes, ps_t t, std::uint64_t cookie, TransferKind) {
  if (src < 0 || dst < 0 || static_cast<std::size_t>(src) >= rank_node_.size() ||
      static_cast<std::size_t>(dst) >= rank_node_.size() || rank_node_[src] == kNone || rank_node_[dst] == kNone)
    throw std::invalid_argument("FabricEngine::post: unknown rank");
  if (src == dst) throw std::invalid_argument("FabricEngine::post: source and destination are the same rank");
  if (t < horizon_) throw std::invalid_argument("FabricEngine::post: time before the engine's horizon");
  const std::uint64_t flits = bytes == 0 ? 1 : (bytes + flit_bytes_ - 1) / flit_bytes_;
  // A finished transfer's slot is reused (ids are only keys of open
  // transfers): the table stays as large as the most transfers open at once.
  std::uint64_t id;
  if (!free_transfers_.empty()) {
    id = free_transfers_.back();
    free_transfers_.pop_back();
    transfers_[id] = {cookie, flits, src, dst};
  } else {
    id = transfers_.size();
    transfers_.push_back({cookie, flits, src, dst});
  }
  ++open_transfers_;
  if (first_hops_.size() != rank_node_.size()) first_hops_.resize(rank_node_.size());
  FirstHops& fh = first_hops_[static_cast<std::size_t>(src)];
  if (fh.dst != dst) {
    fh.hops = routing_->first_hops(src, dst);
    fh.dst = dst;
  }
  const std::vector<Hop>& hops = fh.hops;
  if (hops.empty()) throw std::invalid_argument("FabricEngine::post: no route");
  const std::size_t node = rank_node_[src];
  for (std::uint64_t i = 0; i < flits; ++i) {
    const Hop& h = hops[i % hops.size()];
    offer(out_dir_[node][h.port], t, {id, dst});
  }
  return id;
}

void FabricEngine::offer(std::size_t d, ps_t t, const FlitTag& tag) {
  Direction& dir = dirs_[d];
  if (dir.eng && d != stepping_) [[likely]] {
    // An offer adds one event, the arrival at t (>= now), and changes no
    // other (LinkEngine::offer, next_event_time): the engine's next event
    // becomes min(its next event, t), and the key of a direction that is
    // not being stepped is its next event (at now at least), so the key
    // becomes min(key, t). The engine itself is not touched (on a large
    // fabric the switch's output direction is out of the caches): the
    // arrival waits in the tags until hand_over(). The direction being
    // stepped has no key yet (run() keys it after its steps) and its engine
    // is in use: it takes the general path.
    dir.tags.emplace_back(tag, t);
    schedule_at(d, t);
    return;
  }
  if (dir.eng) {
    hand_over(dir);
    dir.eng->offer(t);
  } else {
    dir.rifl->link->offer(dir.rifl->side, t);
    const std::uint64_t q = dir.rifl->link->waiting(dir.rifl->side);
    if (q > dir.max_queue) dir.max_queue = q;
  }
  dir.tags.emplace_back(tag, t);
  schedule(d);
}

void FabricEngine::schedule_rifl(std::size_t d) {
  const RiflSide& rs = *dirs_[d].rifl;
  schedule_at(rs.owner, rs.link->next_event_time());
}

void FabricEngine::schedule_at(std::size_t d, ps_t next) {
  // A direction may hold lazily applied events from before now: key it at now at least.
  const ps_t t = std::max(next, now_);
  Direction& dir = dirs_[d];
  if (t < dir.scheduled) {
    dir.scheduled = t;
    heap_.push(t, d);
  }
}

void FabricEngine::on_delivery(std::size_t d, ps_t t) {
  Direction& dir = dirs_[d];
  const FlitTag tag = dir.tags.front().tag;
  dir.tags.pop_front();
  if (dir.to_component) {
    dir.to_component->receive(dir.to_port, t, tag);
    return;
  }
  if (dir.to_rank == tag.dst_rank) {
    // Consumed at once (written to memory): its buffer slot's credit goes back
    // (direction d is the one being stepped; run() reschedules it).
    give_credit(dir, t);
    Transfer& tr = transfers_[tag.transfer];
    if (--tr.flits_left == 0) {
      --open_transfers_;
      free_transfers_.push_back(tag.transfer);
      if (sink_) sink_->push_back({tag.transfer, tr.cookie, t});
    }
    return;
  }
  // An accelerator relays a flit for another rank at once (rings): its credit
  // goes back and it leaves by the route's port at the same instant.
  dir.max_relay = 1;
  credit_back(d, t);
  const Hop h = routing_->next_hop(dir.to, tag.dst_rank);
  offer(out_dir_[dir.to][h.port], t, tag);
}

ps_t FabricEngine::next_event_time() {
  // Stale entries (a direction rescheduled since) are dropped when popped.
  return heap_.empty() ? link::kNever : heap_.min_key();
}

ps_t FabricEngine::run(ps_t limit, std::vector<Completion>& out) {
  sink_ = &out;
  const std::size_t before = out.size();
  ps_t completed_at = link::kNever;
  std::uint32_t pops = 0;  // for progress_ (a long stretch without completions)
  while (failed_dir_ < 0) {
    if (heap_.empty() || heap_.min_key() >= limit) break;
    if ((++pops & 0x1FFF) == 0 && progress_) [[unlikely]]
      progress_(now_);
    const auto [t, d] = heap_.pop();
    Direction& dir = dirs_[d];
    if (t != dir.scheduled) continue;  // stale
    dir.scheduled = link::kNever;
    link::LinkEngine* const ep = dir.eng.get();
    if (!ep) [[unlikely]] {
      if (run_rifl(d, t, limit, out, before, completed_at)) break;  // a RIFL link cannot progress
      continue;
    }
    // Memory latency, not instructions, grows with the fabric: every event
    // finds its direction's state out of the caches once the directions
    // outgrow them. While this direction is stepped, the one whose event
    // comes next (the heap's minimum: a hint; a prefetch changes no result)
    // is loaded: its hot fields now, the queue slots they point to after the
    // step.
    link::LinkEngine* next_eng = nullptr;
    if (!heap_.empty()) {
      heap_.min_key();
      const std::size_t nd = heap_.min_value();
      next_eng = engines_[nd];
      __builtin_prefetch(&dirs_[nd]);
      if (next_eng) next_eng->prefetch_state();
    }
    // Step this direction for as long as its next event is no later than every
    // other direction's (the global order is kept; one heap update per run).
    link::LinkEngine& eng = *ep;
#ifndef NDEBUG
    const ps_t now_before = now_;
#endif
    hand_over(dir);
    // Its key was its next event at the time it was keyed (now at least),
    // the offers since included.
    assert(std::max(eng.next_event_time(), now_before) == t);
    ps_t te = t;
    stepping_ = d;
    do {
      now_ = te;
      if (horizon_ < te) horizon_ = te;
      eng.step();
      if (eng.status() == link::LinkEngine::Status::link_down) {
        failed_dir_ = static_cast<int>(d);
        break;
      }
      if (out.size() > before && completed_at == link::kNever) {
        completed_at = te;
        limit = te + 1;  // finish this instant, then return
      }
      te = eng.next_event_time();
    } while (te < limit && te < next_event_time());
    stepping_ = static_cast<std::size_t>(-1);
    if (next_eng) next_eng->prefetch_queues();
    schedule_at(d, te);
  }
  sink_ = nullptr;
  if (completed_at != link::kNever) {
    // Posts at the completion instant are still allowed (a link accepts an
    // offer at its current time), so the horizon stays at that instant.
    horizon_ = completed_at;
    return horizon_;
  }
  // Every event before min(limit, next event) is done.
  const ps_t next = next_event_time();
  const ps_t h = std::min(limit, next);
  if (h != link::kNever && h > horizon_) horizon_ = h;
  return horizon_;
}

// A RIFL link (both directions) from its a->b direction d, popped at t: the
// link processes its events at t and advances until the next event of any
// other direction (global order), for as long as its own next event comes first.
bool FabricEngine::run_rifl(std::size_t d, ps_t t, ps_t& limit, std::vector<Completion>& out, std::size_t before,
                            ps_t& completed_at) {
  rifl::FabricRiflLink& rl = *dirs_[d].rifl->link;
  ps_t te = rl.next_event_time();
  if (te != t) {  // keyed early (an offer made while it was being stepped)
    schedule_at(d, te);
    return false;
  }
  do {
    now_ = te;
    if (horizon_ < te) horizon_ = te;
    // Posts may still come at the completion instant (the horizon): the
    // link must not run through a slot starting there.
    rl.step(std::min(completed_at != link::kNever ? completed_at : limit, next_event_time()));
    if (rl.failed()) {
      stalled_dir_ = static_cast<int>(d);
      return true;
    }
    if (out.size() > before && completed_at == link::kNever) {
      completed_at = te;
      limit = te + 1;  // finish this instant, then return
    }
    te = rl.next_event_time();
  } while (te < limit && te < next_event_time());
  schedule_at(d, te);
  return false;
}

rifl::FabricRiflLink* FabricEngine::rifl_link(std::size_t d) {
  return dirs_.at(d).rifl ? dirs_[d].rifl->link : nullptr;
}

DirectionStats FabricEngine::direction_stats(std::size_t d) const {
  const Direction& dir = dirs_[d];
  if (dir.eng) hand_over(dir);
  const std::uint64_t max_input = dir.to_component ? dir.to_component->max_input_flits(dir.to_port) : dir.max_relay;
  if (dir.eng)
    return {nodes_[dir.from].name,     nodes_[dir.to].name, dir.from_port, &dir.eng->stats(),
            dir.eng->replayed_flits(), dir.eng->max_waiting(), max_input};
  // RIFL: the columns that mean the same (frames where UALink counts flits).
  const RiflSide& rs = *dir.rifl;
  rs.counters = rs.link->link().stats_with_fec(rs.side);
  const rifl::DirectionStats& r = rs.counters;
  const rifl::FlitCounters& f = rs.link->counters(rs.side);
  link::LinkStats& s = rs.stats;
  s = link::LinkStats{};
  s.offered = f.offered;
  s.admitted = f.admitted;
  s.delivered = f.delivered;
  s.transmissions = r.frames;
  s.first_transmissions = r.frames - r.retransmitted_frames;
  s.retransmissions = r.retransmitted_frames;
  const std::uint64_t frame_bytes = rs.link->link().config().frame_bits / 8;
  s.control_flits = r.ctrl_pause + r.ctrl_retrans + r.fc_frames;
  s.control_bytes = s.control_flits * frame_bytes;
  s.first_attempt_errors = r.hit_frames;
  s.raw_errors = r.bit_errors;
  s.residual_errors = r.undetected_errors;
  s.terminal_failures = rs.link->failed() ? 1 : 0;
  s.admission_stall_credit_ps = f.admission_stall_credit_ps;
  DirectionStats ds{nodes_[dir.from].name, nodes_[dir.to].name, dir.from_port, &s, r.retransmitted_frames,
                    dir.max_queue,         max_input};
  ds.protocol = LinkProtocol::rifl;
  ds.rifl = &r;
  ds.rifl_flits = &f;
  return ds;
}

std::string FabricEngine::direction_diagnosis(const Direction& dir) const {
  if (dir.eng) hand_over(dir);
  return dir.eng ? dir.eng->diagnosis() : dir.rifl->link->diagnosis();
}

std::string FabricEngine::diagnosis() const {
  std::ostringstream os;
  os << open_transfers_ << " transfer(s) in flight at t=" << now_ / 1000.0 << "ns";
  if (failed_dir_ >= 0) {
    const Direction& dir = dirs_[failed_dir_];
    os << "; link " << nodes_[dir.from].name << ".port" << dir.from_port << " -> " << nodes_[dir.to].name
       << " went down: " << direction_diagnosis(dir);
  }
  if (stalled_dir_ >= 0) {
    const Direction& dir = dirs_[stalled_dir_];
    os << "; RIFL link " << nodes_[dir.from].name << ".port" << dir.from_port << " <-> " << nodes_[dir.to].name
       << " makes no progress: " << direction_diagnosis(dir);
    return os.str();
  }
  std::size_t shown = 0;
  for (const auto& n : nodes_)
    if (n.component && shown < 8) shown += n.component->dump_blocked(os, 8 - shown);
  for (const auto& dir : dirs_) {
    if (dir.tags.empty() || shown >= 8) continue;
    os << "\n  " << nodes_[dir.from].name << ".port" << dir.from_port << " -> " << nodes_[dir.to].name << ": "
       << direction_diagnosis(dir);
    ++shown;
  }
  return os.str();
}

}  // namespace fabricsim::fabric_core
