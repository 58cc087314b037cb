#pragma once
// PCIe endpoint: the port of a GPU, or host memory's port on the data
// fabric (the host memory endpoint). It sends its transfers' data in bursts
// onto its link, one burst at a time, choosing among its active transfers.
// Plain C++.
#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "models/common/stats_source.h"
#include "models/pcie/core/pcie_events.h"
#include "models/pcie/core/pcie_port.h"

namespace fabricsim::pcie {

class HostBridge;
class IoQuadrant;
class PcieRouter;

/// Endpoint parameters.
struct PcieEndpointParams {
  enum class Role { gpu, host_memory };
  Role role = Role::gpu;
  std::uint64_t burst_bytes = 8192;  ///< transfers move in bursts of this many payload bytes (interleave granule)
  bool random_interleave = true;     ///< pick the next burst among active transfers at random (else round robin)
  bool write_ordering = true;        ///< posted writes pass the ordering point of the host bridge above (mechanism B)
};

/// Statistics of an endpoint as a sender.
struct PcieEndpointStats {
  std::uint64_t bursts = 0;            ///< data bursts sent (writes and read completions)
  std::uint64_t read_requests = 0;     ///< read requests sent
  std::uint64_t read_completions = 0;  ///< read completions posted (this endpoint the target)
  std::uint64_t bytes = 0;             ///< payload bytes sent in data bursts
};

/// A PCIe endpoint.
///
/// post(): a transfer becomes eligible at its release time (a read
/// completion later by its quadrant's read stall) and joins the active
/// transfers. The endpoint sends one burst (min(burst_bytes, left); a read
/// request whole) as soon as its own upstream link is free, choosing among
/// the eligible transfers at random (draws keyed by seed, endpoint index,
/// pick count) or round robin. A burst reserves its route's hops in order; a
/// posted write stops at the ordering point of the source's host bridge
/// (HostBridge::admit), everything else runs to the destination and reports
/// its arrival to the transfer table. Schedules itself on the event queue
/// (PcieEvent::inject, id = its index).
class PcieEndpoint : public common::StatsSource {
 public:
  /// bridge: the host bridge above (nullptr: none, e.g. host memory);
  /// quadrant: the quadrant above (nullptr: none). Both must outlive it.
  PcieEndpoint(std::string name, int index, const PcieEndpointParams& p, std::uint64_t seed, PcieEventQueue& q,
               PcieTransferTable& transfers, PcieRouter& router, HostBridge* bridge, IoQuadrant* quadrant);
  PcieEndpoint(const PcieEndpoint&) = delete;
  PcieEndpoint& operator=(const PcieEndpoint&) = delete;

  /// Transfer `id` (its fields set, release = the time posted, ps) starts
  /// here. A read completion of `bytes` asks the quadrant above for its
  /// stall (requester_quadrant: the requester's quadrant id, -1 if none;
  /// read_key: the host's read sequence number).
  void post(std::uint32_t id, std::uint64_t bytes, int requester_quadrant, std::uint64_t read_key);
  /// Event: the endpoint may send at t (stale events are ignored).
  void on_inject(ps_t t) {
    if (scheduled_ != t) return;
    scheduled_ = link::kNever;
    inject(t);
  }

  const std::string& name() const { return name_; }
  int index() const { return index_; }
  const PcieEndpointParams& params() const { return p_; }
  HostBridge* bridge() const { return bridge_; }
  IoQuadrant* quadrant() const { return quadrant_; }
  /// Index of the endpoint's ordering point at its host bridge (-1: none).
  int ordering_point() const { return ordering_point_; }
  std::size_t active() const { return active_.size(); }
  const PcieEndpointStats& stats() const { return stats_; }
  /// Statistics: bursts, read_requests, read_completions, bytes.
  void visit_stats(const common::StatVisitor& v) const override;
  /// Active transfers, egress, next scheduled send.
  void dump_state(std::ostream& os) const;

 private:
  void schedule_inject(ps_t t);
  void inject(ps_t t);

  std::string name_;
  int index_;
  PcieEndpointParams p_;
  std::uint64_t seed_;
  PcieEventQueue& q_;
  PcieTransferTable& transfers_;
  PcieRouter& router_;
  HostBridge* bridge_;
  IoQuadrant* quadrant_;
  int ordering_point_ = -1;
  std::vector<std::uint32_t> active_;  // transfers with bytes left
  ps_t egress_free_ = 0;
  ps_t scheduled_ = link::kNever;
  std::uint64_t picks_ = 0;
  PcieEndpointStats stats_;
};

}  // namespace fabricsim::pcie
