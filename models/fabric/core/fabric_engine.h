#pragma once
// Flit-level scheduler of a multi-link fabric: one LinkEngine per link
// direction and one global event order across all links (a conservative
// sequential discrete-event loop). It delivers each flit to the component at
// the far end of its link (a switch, through common::FlitComponent) or to the
// accelerator endpoint; what a switch does with it lives in the switch
// (models/switch/core/switch_core.h). Plain C++, no SystemC: the
// fabric_kernel module (models/fabric/fabric_kernel.h) wraps it and
// synchronises it with the accelerators' software threads.
#include <cstdint>
#include <memory>
#include <queue>
#include <string>
#include <vector>

#include "models/common/flit_component.h"
#include "models/fabric/core/radix_heap.h"
#include "models/fabric/core/timing_core.h"
#include "models/link/core/link_engine.h"
#include "models/rifl/core/rifl_fabric_link.h"

namespace fabricsim::fabric_core {

using link::ps_t;

/// One next hop: leave through `port` over `link` to `next_node`.
struct Hop {
  std::uint32_t port = 0;
  std::size_t link = 0;
  std::size_t next_node = 0;
};

/// Routing over the fabric graph; the platform implements it. The engine
/// uses first_hops() for the source's striping and next_hop() where an
/// accelerator relays a flit (rings); switches carry their own forwarding
/// tables (filled from next_hop() at elaboration).
class Routing {
 public:
  virtual ~Routing() = default;
  /// Equal-cost first hops of accelerator rank src toward rank dst (non-empty for src != dst).
  virtual std::vector<Hop> first_hops(int src_rank, int dst_rank) const = 0;
  /// Forwarding-table entry of a node toward rank dst.
  virtual Hop next_hop(std::size_t node, int dst_rank) const = 0;
};

/// Node as the engine sees it: an accelerator endpoint, or a component that
/// forwards flits (a switch), owned elsewhere (its SystemC module) and
/// outliving the engine.
struct EngineNode {
  std::string name;  ///< module name, for diagnoses
  bool accelerator = false;
  int rank = -1;                                ///< accelerators only
  common::FlitComponent* component = nullptr;  ///< non-accelerators: the component at this node
};

/// Link protocol of a fabric link (`link.protocol`).
enum class LinkProtocol : std::uint8_t {
  ualink,  ///< UALink-style data link: TxReplay, cumulative ACK, replay requests, FEC (link::LinkEngine)
  rifl,    ///< RIFL: NACK-only, in-band, go-back-N over bonded lanes (rifl::FabricRiflLink)
};
const char* to_string(LinkProtocol p);

/// The RIFL parameters a fabric link runs with: `r` with the lane rate set to
/// the link's forward rate / lanes and the cable delay to the link's
/// propagation (one way = transceiver latency + propagation).
rifl::RiflConfig rifl_for_link(const link::LinkConfig& link, rifl::RiflConfig r);

/// Link as the engine sees it: ports a.pa <-> b.pb; direction 0 carries a->b.
struct EngineLink {
  std::size_t a = 0, b = 0;
  std::uint32_t pa = 0, pb = 0;
  link::LinkConfig config;  ///< flit size, rates, propagation, receive buffer; UALink's data link
  std::uint64_t id = 0;     ///< channel stream keys 2*id (a->b) and 2*id+1 (b->a)
  LinkProtocol protocol = LinkProtocol::ualink;
  /// RIFL parameters (protocol rifl): lanes, frames, buffers, channel; the
  /// engine sets the lane rate (forward rate / lanes), the propagation (the
  /// link's), traffic mode and seed.
  rifl::RiflConfig rifl;
};

/// Per link-direction statistics snapshot.
struct DirectionStats {
  std::string from, to;  ///< node names
  std::uint32_t from_port = 0;
  const link::LinkStats* stats = nullptr;
  std::uint64_t replayed_flits = 0;
  std::uint64_t max_queue = 0;         ///< most flits waiting for admission at once (output queue)
  std::uint64_t max_input_buffer = 0;  ///< most flits held at the far node's input (blocked by a full output)
  LinkProtocol protocol = LinkProtocol::ualink;
  /// RIFL directions: the RIFL counters of this direction (frames by kind,
  /// retransmitted frames, recoveries, errors, flow-control pauses) and the
  /// flit counters at the component boundary; nullptr for UALink.
  const rifl::DirectionStats* rifl = nullptr;
  const rifl::FlitCounters* rifl_flits = nullptr;
};

/// The fabric's timing core.
///
/// post() injects a transfer of `bytes` from one accelerator to another; its
/// flits (ceil(bytes / flit payload)) are striped round-robin over the
/// equal-cost first hops and cross links (replay, FEC, channel errors per
/// link). A flit delivered in order at a node with a component (a switch) is
/// handed to it (FlitComponent::receive), which sends it on through the
/// node's links (NodeLinks) and returns its credit; each admission of a flit
/// the component sent is reported back to it (FlitComponent::admitted). At an
/// accelerator a flit for its rank is consumed at once (its credit goes
/// back); a flit for another rank is relayed at once by Routing::next_hop
/// (rings: no latency, no queue limit). The transfer completes when its last
/// flit arrives. run() processes events in global time order.
/// Errors: std::invalid_argument at construction for a non-accelerator node
/// without a component or a link on a port the component lacks; for a bad
/// post (unknown rank, src == dst, time before the engine's horizon).
class FabricEngine : public TimingCore {
 public:
  FabricEngine(std::vector<EngineNode> nodes, std::vector<EngineLink> links, std::uint64_t seed,
               std::shared_ptr<const Routing> routing);

  /// Inject a transfer at time t_ps (>= horizon()); returns its id, unique
  /// among open transfers (a finished transfer's id is reused).
  /// `kind` is ignored: reads and writes move flits alike.
  std::uint64_t post(int src_rank, int dst_rank, std::uint64_t bytes, ps_t t_ps, std::uint64_t cookie,
                     TransferKind kind = TransferKind::write) override;

  /// Process events with time < limit_ps in global time order. Stops early
  /// once transfers complete: it finishes every event at that same time and
  /// returns, appending the completions to `out`. Returns the engine's horizon
  /// (every event before it is processed).
  ps_t run(ps_t limit_ps, std::vector<Completion>& out) override;

  /// Earliest pending event (kNever if none).
  ps_t next_event_time() override;
  ps_t horizon() const override { return horizon_; }
  /// Time of the last event processed.
  ps_t now() const override { return now_; }
  /// A link direction that went down (retry limit) or -1.
  int failed_direction() const override { return failed_dir_; }
  bool stalled() const override { return stalled_dir_ >= 0; }
  std::size_t directions() const { return dirs_.size(); }
  DirectionStats direction_stats(std::size_t d) const;
  /// The RIFL link carrying direction `d` (directions 2i and 2i + 1 are
  /// link i of the constructor's list), nullptr for a UALink direction: for
  /// observers such as trace spans of its recoveries (set before run()).
  rifl::FabricRiflLink* rifl_link(std::size_t d);
  /// Multi-line state dump: open transfers, every non-idle link direction.
  std::string diagnosis() const override;
  /// Calls `f(now)` every 2^13 directions stepped inside run().
  void set_progress_hook(ProgressHook f) override { progress_ = std::move(f); }

 private:
  using FlitTag = common::FlitTag;
  /// One direction of a RIFL link: both directions share the link, whose
  /// events are keyed on its a->b direction (`owner`).
  struct RiflSide {
    rifl::FabricRiflLink* link = nullptr;
    int side = 0;
    std::size_t owner = 0;
    mutable link::LinkStats stats;  // links.csv view, filled by direction_stats()
    mutable rifl::DirectionStats counters;  // the link's counters with its light FEC's (direction_stats())
  };
  /// A flit offered to a direction: its tag and (UALink) its arrival time.
  struct Offered {
    FlitTag tag;
    ps_t arrival = 0;
  };
  // One link direction. The first cache line holds everything an event,
  // an offer or a delivery reads; the rest is for statistics, diagnoses and
  // RIFL links.
  struct alignas(64) Direction {
    std::unique_ptr<link::LinkEngine> eng;          // UALink (nullptr: RIFL, see rifl)
    ps_t scheduled = link::kNever;                  // key of its live entry in heap_ (kNever: none)
    common::FlitComponent* to_component = nullptr;  // receives the delivered flits (nullptr: accelerator)
    link::RingQueue<Offered> tags;                  // offered, undelivered flits, in seq order
    ps_t credit_delay = 0;
    std::uint32_t to_port = 0;
    int to_rank = -1;  // rank of the accelerator at the far end (-1: a component)
    std::size_t from = 0, to = 0;
    std::uint32_t from_port = 0;
    std::uint64_t max_relay = 0;  // accelerators: 1 once a flit was relayed (held for the relay)
    std::unique_ptr<RiflSide> rifl;
    std::uint64_t max_queue = 0;  // RIFL: most flits waiting for admission (UALink: its engine's max_waiting)
  };
  /// The links of one component's node, as NodeLinks.
  class Attachment : public common::NodeLinks {
   public:
    Attachment(FabricEngine& e, std::size_t node)
        : e_(e), node_(node), out_(e.out_dir_[node].data()), in_(e.in_dir_[node].data()),
          n_out_(e.out_dir_[node].size()), n_in_(e.in_dir_[node].size()) {}
    void send(std::uint32_t port, ps_t t, const FlitTag& tag) override;
    void return_credit(std::uint32_t port, ps_t t) override;

   private:
    FabricEngine& e_;
    std::size_t node_;
    const std::size_t* out_;  // out_dir_[node_] and in_dir_[node_] (fixed after construction)
    const std::size_t* in_;
    std::size_t n_out_, n_in_;
  };
  void credit_back(std::size_t dir, ps_t t);
  std::vector<std::unique_ptr<Attachment>> attachments_;
  struct Transfer {
    std::uint64_t cookie;
    std::uint64_t flits_left;
    int src, dst;
  };
  void on_delivery(std::size_t dir, ps_t t);
  void offer(std::size_t dir, ps_t t, const FlitTag& tag);
  void schedule(std::size_t d) {
    const Direction& dir = dirs_[d];
    if (dir.eng) [[likely]] {
      hand_over(dir);
      schedule_at(d, dir.eng->next_event_time());
    } else {
      schedule_rifl(d);
    }
  }
  /// Offers to a UALink direction that is not being stepped are kept in its
  /// tags (with their arrival times) and handed to its engine, in order, the
  /// next time anything reads the engine: tags beyond the engine's offered -
  /// delivered count. Changes no result (LinkEngine::offer only queues the
  /// arrival; the direction's key already covers it).
  void hand_over(const Direction& dir) const {
    link::LinkEngine& e = *dir.eng;
    for (std::size_t i = e.offered() - e.delivered(); i < dir.tags.size(); ++i) e.offer(dir.tags.at(i).arrival);
  }
  void schedule_rifl(std::size_t d);  // a RIFL link is keyed on its a->b direction
  void schedule_at(std::size_t dir, ps_t next);
  void give_credit(Direction& dir, ps_t t);
  // Kept out of run()'s loop (registers of the UALink hot path). true: the link cannot progress.
  [[gnu::noinline]] bool run_rifl(std::size_t d, ps_t t, ps_t& limit, std::vector<Completion>& out,
                                  std::size_t before, ps_t& completed_at);
  std::string direction_diagnosis(const Direction& dir) const;
  std::vector<std::unique_ptr<rifl::FabricRiflLink>> rifl_links_;

  std::vector<EngineNode> nodes_;
  std::vector<Direction> dirs_;
  // dirs_[d].eng.get() side by side: the next event's engine is prefetched
  // without first loading its (cold) direction.
  std::vector<link::LinkEngine*> engines_;
  std::vector<std::vector<std::size_t>> out_dir_;  // node -> port -> direction index (or npos)
  std::vector<std::vector<std::size_t>> in_dir_;   // node -> port -> incoming direction index (or npos)
  std::vector<std::size_t> rank_node_;
  std::shared_ptr<const Routing> routing_;
  // Per source rank, the first hops toward the destination of its last post
  // (a collective step posts to the same peer again and again): post() asks
  // routing_ only when the destination changes.
  struct FirstHops {
    int dst = -1;
    std::vector<Hop> hops;
  };
  std::vector<FirstHops> first_hops_;
  std::uint64_t flit_bytes_ = 640;
  std::vector<Transfer> transfers_;            // by id; finished slots are reused
  std::vector<std::uint64_t> free_transfers_;  // ids of finished transfers
  std::size_t open_transfers_ = 0;
  RadixHeap heap_;  // (next event time, direction); stale entries skipped (Direction::scheduled)
  ps_t horizon_ = 0;
  ps_t now_ = 0;
  std::size_t stepping_ = static_cast<std::size_t>(-1);  // the UALink direction run() is stepping (none: -1)
  std::vector<Completion>* sink_ = nullptr;
  int failed_dir_ = -1;
  int stalled_dir_ = -1;  // a RIFL link that can make no progress
  ProgressHook progress_;
};

}  // namespace fabricsim::fabric_core
