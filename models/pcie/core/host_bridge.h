#pragma once
// Host bridge (root port) of an IO-die quadrant (host-bridge.md §1, §3, §8):
// its root-port link(s) to the switch partition(s) below it, and one
// posted-write ordering point per source endpoint below it, with drains,
// head-of-line blocking and the fan-out detector (mechanism B). Plain C++.
#include <cstdint>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "models/common/stats_source.h"
#include "models/link/core/ring_queue.h"
#include "models/pcie/core/pcie_events.h"
#include "models/pcie/core/pcie_port.h"

namespace fabricsim::pcie {

/// Mechanism B parameters (host-bridge.md §3, §8).
struct WriteOrderingParams {
  bool enabled = true;  ///< false: the fabric does not order posted writes across destinations
  ps_t ack_latency_ps =
      0;  ///< from a write burst's acceptance at its destination host bridge to the ack at the source's, ps
  /// The GPU interleaves its stores to concurrent destinations in pieces of
  /// this size, bytes (0: whole bursts). Inside a burst released while k >= 2
  /// fabric destinations are active at the ordering point (the fan-out
  /// detector), each piece changes destination with probability (k-1)/k and
  /// every change waits one round trip (ordering point -> destination host
  /// bridge -> ack).
  std::uint64_t interleave_bytes = 0;
  ps_t fanout_window_ps = 1'000'000;  ///< a destination released within this long counts as active, ps
};

/// A write burst held at its source's ordering point.
struct HeldBurst {
  std::uint32_t transfer = 0;
  std::uint64_t bytes = 0;
  ps_t head = 0, tail = 0;  ///< arrival of its head and tail at the ordering point, ps
  int dest_key = -1;        ///< fabric destination (PcieRoute::dest_key)
  const PcieRoute* route = nullptr;
};

/// Fan-out detector of one ordering point: which fabric destinations a
/// source is writing at once (queued at the ordering point, or released
/// within `window_ps` before t).
class FanoutDetector {
 public:
  explicit FanoutDetector(ps_t window_ps = 0) : window_ps_(window_ps) {}
  /// Distinct destinations among `queue` and those released in (t - window, t].
  int active(const link::RingQueue<HeldBurst>& queue, ps_t t) const {
    int keys[64];
    int n = 0;
    auto add = [&](int k) {
      for (int i = 0; i < n; ++i)
        if (keys[i] == k) return;
      if (n < 64) keys[n++] = k;
    };
    for (std::size_t i = 0; i < queue.size(); ++i) add(queue.at(i).dest_key);
    for (const auto& [k, when] : recent_)
      if (when + window_ps_ > t) add(k);
    return n;
  }
  /// A burst toward `dest_key` was released at t.
  void released(int dest_key, ps_t t) {
    for (auto& [key, when] : recent_)
      if (key == dest_key) {
        when = t;
        return;
      }
    recent_.emplace_back(dest_key, t);
  }
  const std::vector<std::pair<int, ps_t>>& recent() const { return recent_; }

 private:
  ps_t window_ps_;
  std::vector<std::pair<int, ps_t>> recent_;  // fabric destination -> last release
};

/// Host bridge parameters.
struct HostBridgeParams {
  int quadrant = -1;             ///< IO-die quadrant of the bridge (for reports)
  WriteOrderingParams ordering;  ///< mechanism B at this bridge's ordering points
};

/// Statistics of a host bridge (sums over its ordering points).
struct HostBridgeStats {
  std::uint64_t ordered_bursts = 0;        ///< write bursts through an ordering point
  std::uint64_t drains = 0;                ///< of which waited for a drain (destination change between bursts)
  std::uint64_t interleaved_switches = 0;  ///< destination changes inside bursts (fan-out detector)
  ps_t drain_wait_ps = 0;                  ///< total time bursts waited at the ordering points, ps
};

/// A host bridge (root port).
///
/// Ordering point (one per source endpoint below the bridge, where its
/// writes leave toward the NBIO): write bursts wait in one FIFO per source
/// (head of line). A burst to the same fabric destination as the previous
/// one is released as soon as it is at the head; a burst to a different
/// destination waits until every earlier write of the source has been
/// acknowledged (accepted by its destination host bridge plus ack_latency: a
/// drain). A released burst carries a fan-out hold: when k >= 2 destinations
/// are active (FanoutDetector) and the burst is longer than
/// `interleave_bytes`, each of its pieces but the first changes destination
/// with probability (k-1)/k (deterministic draws keyed by seed, source and
/// draw count), and each change waits one round trip (the route's latency
/// from the ordering point to the destination host bridge plus ack_latency).
/// Released bursts continue on their route and report their arrival to the
/// transfer table. Schedules its releases on the shared event queue
/// (PcieEvent::release, id = the source's endpoint index).
class HostBridge : public common::StatsSource {
 public:
  HostBridge(std::string name, const HostBridgeParams& p, std::uint64_t seed, PcieEventQueue& q,
             PcieTransferTable& transfers)
      : name_(std::move(name)), p_(p), seed_(seed), q_(q), transfers_(transfers) {}
  HostBridge(const HostBridge&) = delete;
  HostBridge& operator=(const HostBridge&) = delete;

  /// Add the ordering point of source endpoint `ep` (index, the key of its
  /// draws and events); returns its local index.
  int add_source(int ep, const std::string& source_name);
  /// A write burst of a source reached the ordering point (h.head, h.tail:
  /// arrival there). Released at once when nothing is ahead of it and it
  /// need not wait (same destination or drained, no fan-out), else queued.
  void admit(int local, const HeldBurst& h);
  /// Event: ordering point `local` may release its head burst at t (stale
  /// events, superseded by a later schedule, are ignored).
  void on_release(int local, ps_t t) {
    if (points_[local].scheduled == t) release(local, t);
  }

  const std::string& name() const { return name_; }
  const HostBridgeParams& params() const { return p_; }
  PciePortSet& ports() { return ports_; }
  const PciePortSet& ports() const { return ports_; }
  const HostBridgeStats& stats() const { return stats_; }
  /// Write bursts held at ordering point `local` / at all of them.
  std::size_t held(int local) const { return points_[local].queue.size(); }
  std::size_t held() const;
  /// Distinct fabric destinations active at ordering point `local` at t.
  int active_destinations(int local, ps_t t) const { return points_[local].fanout.active(points_[local].queue, t); }
  /// Statistics: ordered_bursts, drains, interleaved_switches, drain_wait_ps, then ports.
  void visit_stats(const common::StatVisitor& v) const override;
  /// Ordering points (held bursts, last destination, outstanding ack) and ports.
  void dump_state(std::ostream& os) const;

 private:
  struct OrderPoint {
    int ep = -1;
    std::string source;
    link::RingQueue<HeldBurst> queue;
    ps_t last_release = 0;
    ps_t max_ack = 0;
    int last_dest = -1000;
    ps_t scheduled = link::kNever;
    std::uint64_t switches_drawn = 0;
    FanoutDetector fanout;
  };
  void release(int local, ps_t t);
  void schedule_head(OrderPoint& O);

  std::string name_;
  HostBridgeParams p_;
  std::uint64_t seed_;
  PcieEventQueue& q_;
  PcieTransferTable& transfers_;
  PciePortSet ports_;
  std::vector<OrderPoint> points_;
  HostBridgeStats stats_;
};

}  // namespace fabricsim::pcie
