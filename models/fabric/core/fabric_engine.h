#pragma once
// Flit-level timing core of a multi-link fabric: one LinkEngine per link
// direction, switch crossbars, routing, and one global event order across all
// links (a conservative sequential discrete-event loop). Plain C++, no
// SystemC: the fabric_kernel module (models/fabric/fabric_kernel.h) wraps it
// and synchronises it with the accelerators' software threads.
#include <cstdint>
#include <memory>
#include <queue>
#include <string>
#include <vector>

#include "models/fabric/core/radix_heap.h"
#include "models/fabric/core/timing_core.h"
#include "models/link/core/link_engine.h"

namespace fabricsim::fabric_core {

using link::ps_t;

/// One next hop: leave through `port` over `link` to `next_node`.
struct Hop {
  std::uint32_t port = 0;
  std::size_t link = 0;
  std::size_t next_node = 0;
};

/// Routing the engine needs; the platform implements it over its fabric graph.
class Routing {
 public:
  virtual ~Routing() = default;
  /// Equal-cost first hops of accelerator rank src toward rank dst (non-empty for src != dst).
  virtual std::vector<Hop> first_hops(int src_rank, int dst_rank) const = 0;
  /// Forwarding-table entry of a switch node toward rank dst.
  virtual Hop next_hop(std::size_t node, int dst_rank) const = 0;
};

/// Node as the engine sees it.
struct EngineNode {
  std::string name;  ///< module name, for diagnoses
  bool accelerator = false;
  int rank = -1;                         ///< accelerators only
  ps_t switch_latency_ps = 0;            ///< forwarding nodes: per-flit crossbar latency
  std::uint32_t output_queue_flits = 0;  ///< forwarding nodes: output queue capacity (0 = unbounded)
};

/// Link as the engine sees it: ports a.pa <-> b.pb; direction 0 carries a->b.
struct EngineLink {
  std::size_t a = 0, b = 0;
  std::uint32_t pa = 0, pb = 0;
  link::LinkConfig config;
  std::uint64_t id = 0;  ///< channel stream keys 2*id (a->b) and 2*id+1 (b->a)
};

/// Per link-direction statistics snapshot.
struct DirectionStats {
  std::string from, to;  ///< node names
  std::uint32_t from_port = 0;
  const link::LinkStats* stats = nullptr;
  std::uint64_t replayed_flits = 0;
  std::uint64_t max_queue = 0;         ///< most flits waiting for admission at once (output queue)
  std::uint64_t max_input_buffer = 0;  ///< most flits held at the far node's input (blocked by a full output)
};

/// The fabric's timing core.
///
/// post() injects a transfer of `bytes` from one accelerator to another; its
/// flits (ceil(bytes / flit payload)) are striped round-robin over the
/// equal-cost first hops, cross links (replay, FEC, channel errors per link)
/// and switches (latency, then the output port's admission queue: output
/// queueing, FIFO, ties by arrival order), and the transfer completes when its
/// last flit arrives. run() processes events in global time order.
/// Errors: std::invalid_argument for a bad post (unknown rank, src == dst,
/// time before the engine's horizon).
class FabricEngine : public TimingCore {
 public:
  FabricEngine(std::vector<EngineNode> nodes, std::vector<EngineLink> links, std::uint64_t seed,
               std::shared_ptr<const Routing> routing);

  /// Inject a transfer at time t_ps (>= horizon()); returns its id.
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
  std::size_t directions() const { return dirs_.size(); }
  DirectionStats direction_stats(std::size_t d) const;
  /// Multi-line state dump: open transfers, every non-idle link direction.
  std::string diagnosis() const override;

 private:
  struct FlitTag {
    std::uint64_t transfer;
    std::int32_t dst_rank;
  };
  struct Direction {
    std::unique_ptr<link::LinkEngine> eng;
    std::size_t from, to;
    std::uint32_t from_port, to_port;
    link::RingQueue<FlitTag> tags;   // tags of offered, undelivered flits, in seq order
    link::RingQueue<FlitTag> input;  // delivered into a forwarding node, not yet through its crossbar
    std::uint64_t max_queue = 0;
    std::uint64_t max_input = 0;
    std::size_t blocked_on = kNoDir;  // output direction this input waits for (head-of-line)
    ps_t credit_delay = 0;
  };
  static constexpr std::size_t kNoDir = static_cast<std::size_t>(-1);
  void forward(std::size_t in_dir, ps_t t);
  void on_admit(std::size_t out_dir, ps_t t);
  bool has_room(std::size_t out_dir) const;
  std::vector<link::RingQueue<std::size_t>> waiters_;  // per output direction: blocked inputs, FIFO (round robin)
  struct Transfer {
    std::uint64_t cookie;
    std::uint64_t flits_left;
    int src, dst;
  };
  void on_delivery(std::size_t dir, ps_t t);
  void offer(std::size_t dir, ps_t t, const FlitTag& tag);
  void schedule(std::size_t dir);
  void schedule_at(std::size_t dir, ps_t next);

  std::vector<EngineNode> nodes_;
  std::vector<Direction> dirs_;
  std::vector<std::vector<std::size_t>> out_dir_;  // node -> port -> direction index (or npos)
  std::vector<std::size_t> rank_node_;
  std::shared_ptr<const Routing> routing_;
  std::uint64_t flit_bytes_ = 640;
  std::vector<Transfer> transfers_;
  std::size_t open_transfers_ = 0;
  RadixHeap heap_;  // (next event time, direction); stale entries skipped
  std::vector<ps_t> scheduled_;
  ps_t horizon_ = 0;
  ps_t now_ = 0;
  std::vector<Completion>* sink_ = nullptr;
  int failed_dir_ = -1;
};

}  // namespace fabricsim::fabric_core
