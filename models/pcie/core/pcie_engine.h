#pragma once
// Timing core of a PCIe host (host-bridge.md): GPU endpoints and host memory
// on a tree of PCIe switch partitions, host bridges (root ports), IO-die
// quadrants (NBIOs) and the IO die's data fabric. Transfers move in TLP
// bursts; two host mechanisms act on them:
//   A. periodic read-stall windows (StallCalendar + read_stall): completions
//      of a peer read whose target sits in a quadrant inside its window,
//      issued from another quadrant, start late;
//   B. per-source ordering of posted writes at the source's host bridge: a
//      write burst toward a different fabric destination (quadrant) than the
//      previous one waits until every earlier write of that source has been
//      acknowledged by its destination (a drain), and later bursts of the
//      source queue behind it (head of line); a fan-out detector charges the
//      destination changes inside bursts when a GPU interleaves several
//      quadrants at once (WriteOrderingParams).
// Calibration and what is not modelled: docs/models/pcie.md.
// Plain C++, no SystemC: the fabric kernel drives it through TimingCore.
#include <cstdint>
#include <string>
#include <vector>

#include "models/fabric/core/radix_heap.h"
#include "models/fabric/core/timing_core.h"
#include "models/link/core/ring_queue.h"
#include "models/pcie/core/stall_calendar.h"

namespace fabricsim::pcie {

using fabric_core::Completion;
using fabric_core::TransferKind;

/// Node of the host tree. Every node but the root (the data fabric) has a
/// parent and one edge to it, modelled as two FIFO resources (up, down).
struct PcieNode {
  enum class Kind { endpoint, partition, host_bridge, quadrant, data_fabric };
  std::string name;
  Kind kind = Kind::endpoint;
  int parent = -1;            ///< index of the parent node (-1: root)
  int rank = -1;              ///< endpoints: TimingCore rank id (GPUs 0..N-1, host memory after them)
  int quadrant = -1;          ///< quadrant id (quadrant nodes and everything below them; -1 above)
  double up_ps_per_byte = 0;  ///< edge to the parent, upstream: ps per payload byte (0: no bandwidth limit)
  double down_ps_per_byte = 0;///< edge from the parent, downstream
  ps_t up_latency_ps = 0;     ///< head latency over the edge upstream (wire + the parent's forwarding)
  ps_t down_latency_ps = 0;   ///< head latency downstream (wire + this node's forwarding)
};

/// Mechanism B parameters (host-bridge.md §3, §8).
struct WriteOrderingParams {
  bool enabled = true;        ///< false: the fabric does not order posted writes across destinations
  ps_t ack_latency_ps = 0;    ///< from a write burst's acceptance at its destination host bridge to the ack at the source's
  /// The GPU interleaves its stores to concurrent destinations in pieces of
  /// this size (0: whole bursts). Inside a burst released while k >= 2 fabric
  /// destinations are active at the ordering point (the fan-out detector),
  /// each piece changes destination with probability (k-1)/k and every change
  /// waits one round trip (ordering point -> destination host bridge -> ack).
  std::uint64_t interleave_bytes = 0;
  ps_t fanout_window_ps = 1'000'000;  ///< a destination released within this long counts as active
};

/// Engine parameters.
struct PcieEngineParams {
  std::uint64_t burst_bytes = 8192;   ///< transfers move in bursts of this many payload bytes (interleave granule)
  std::uint64_t request_bytes = 24;   ///< wire bytes of a read request (one header), charged at each edge's rate
  bool random_interleave = true;      ///< an endpoint picks its next burst among active transfers at random (else round robin)
  StallCalendarParams calendar;
  ReadStallParams read_stall;
  WriteOrderingParams ordering;
};

/// Counters of one engine.
struct PcieStats {
  std::uint64_t bursts = 0;            ///< data bursts injected
  std::uint64_t reads = 0;             ///< read completions posted
  std::uint64_t stalled_reads = 0;     ///< of which delayed by a stall window
  ps_t read_stall_ps = 0;              ///< total delay of stalled reads
  std::uint64_t ordered_bursts = 0;    ///< write bursts through an ordering point
  std::uint64_t drains = 0;            ///< of which waited for a drain (destination switch between bursts)
  std::uint64_t interleaved_switches = 0;  ///< destination switches inside bursts (fan-out detector)
  ps_t drain_wait_ps = 0;              ///< total time bursts waited at ordering points
};

/// PCIe host timing core.
///
/// post(): a write or read completion of `bytes` becomes eligible at t (a
/// read completion later by its read stall) and joins its source endpoint's
/// active transfers; the endpoint sends one burst at a time (min(burst_bytes,
/// left)), choosing among its active transfers, as soon as its own upstream
/// edge is free. A burst reserves the resources of its path (tree path: up to
/// the lowest common ancestor, then down) in order, cut-through: it starts on
/// a resource when its head has arrived and the resource is free, and ends no
/// earlier than its serialisation time and its tail's arrival. Resources are
/// served first come, first served in the order bursts reach the engine's
/// reservation points (injection, ordering point). A transfer completes when
/// its last burst's tail arrives.
/// Errors: std::invalid_argument for a malformed tree (constructor: a cycle,
/// no root, an endpoint with a rank twice), a bad post.
class PcieEngine : public fabric_core::TimingCore {
 public:
  PcieEngine(std::vector<PcieNode> nodes, const PcieEngineParams& p, std::uint64_t seed);

  std::uint64_t post(int src_rank, int dst_rank, std::uint64_t bytes, ps_t t_ps, std::uint64_t cookie,
                     TransferKind kind = TransferKind::write) override;
  ps_t run(ps_t limit_ps, std::vector<Completion>& out) override;
  ps_t next_event_time() override;
  ps_t horizon() const override { return horizon_; }
  ps_t now() const override { return now_; }
  std::string diagnosis() const override;

  const PcieStats& stats() const { return stats_; }
  const StallCalendar& calendar() const { return calendar_; }
  /// Quadrant of the node holding rank r (-1: above the quadrants, e.g. host memory).
  int quadrant_of_rank(int r) const;
  /// Names of the nodes on the path from rank a to rank b (for checks and docs).
  std::vector<std::string> path_names(int a, int b) const;

 private:
  struct Resource {
    double ps_per_byte = 0;
    ps_t latency = 0;
    ps_t free = 0;
  };
  struct Path {
    bool built = false;
    std::vector<std::uint32_t> res;  // resource ids in order
    int order_idx = -1;              // first resource after the source's host bridge ordering point (-1: none)
    int accept_idx = -1;             // resource whose end is the acceptance at the destination host bridge
    int dest_key = -1;               // fabric destination of a write (destination quadrant; host memory: -2)
  };
  struct Transfer {
    std::uint64_t cookie = 0;
    int src = 0, dst = 0;
    TransferKind kind = TransferKind::write;
    std::uint64_t left = 0;       // payload bytes not yet injected
    std::uint32_t unresolved = 0; // bursts injected whose arrival is not yet known
    ps_t release = 0;             // eligible from
    ps_t last_arrival = 0;
    bool complete_scheduled = false;
  };
  struct Endpoint {
    int node = -1;
    std::vector<std::uint32_t> active;  // transfers with bytes left
    ps_t egress_free = 0;
    ps_t scheduled = link::kNever;
    std::uint64_t picks = 0;
  };
  struct Held {  // a write burst at its source's ordering point
    std::uint32_t transfer;
    std::uint64_t bytes;
    ps_t head, tail;
    int dest_key;
  };
  struct OrderPoint {
    link::RingQueue<Held> queue;
    ps_t last_release = 0;
    ps_t max_ack = 0;
    int last_dest = -1000;
    ps_t scheduled = link::kNever;
    std::uint64_t switches_drawn = 0;
    std::vector<std::pair<int, ps_t>> recent;  // fabric destination -> last release (fan-out detector)
  };
  /// Fan-out detector: distinct fabric destinations queued at O or released within the window before t.
  int active_destinations(const OrderPoint& O, ps_t t) const;
  enum Ev : std::size_t { kInject = 0, kRelease = 1, kComplete = 2 };

  Path& path(int src, int dst);
  void schedule_inject(int ep, ps_t t);
  void inject(int ep, ps_t t);
  void release(int ep, ps_t t);
  /// Reserve resources [from, to) of p for a burst; in: head and tail arrival at resource `from`;
  /// out: head and tail arrival after resource to-1; accept: end of p.accept_idx if crossed.
  void walk(const Path& p, int from, int to, std::uint64_t bytes, ps_t& head, ps_t& tail, ps_t* accept);
  void arrived(std::uint32_t tr, ps_t t);
  void push(ps_t t, std::size_t kind, std::size_t id) { heap_.push(t, id * 4 + kind); }
  std::uint32_t new_transfer();

  std::vector<PcieNode> nodes_;
  PcieEngineParams p_;
  std::uint64_t seed_;
  StallCalendar calendar_;
  std::vector<Resource> res_;         // node i: 2i = up edge, 2i+1 = down edge
  std::vector<int> rank_ep_;          // rank -> endpoint index
  std::vector<Endpoint> eps_;
  std::vector<OrderPoint> order_;     // per endpoint (the requester's ordering point)
  std::vector<Path> paths_;           // eps x eps
  std::vector<Transfer> transfers_;
  std::vector<std::uint32_t> free_transfers_;
  std::size_t open_ = 0;
  std::uint64_t reads_posted_ = 0;
  fabric_core::RadixHeap heap_;
  ps_t horizon_ = 0, now_ = 0;
  PcieStats stats_;
  std::vector<Completion>* sink_ = nullptr;
};

}  // namespace fabricsim::pcie
