#pragma once
// Timing core of a PCIe host (host-bridge.md): GPU endpoints and host memory
// on a tree of PCIe switch partitions, host bridges (root ports), IO-die
// quadrants (NBIOs) and the IO die's data fabric. Transfers move in TLP
// bursts. Each element is its own component (docs/models/pcie.md):
//   PcieEndpoint         a GPU's port or host memory's: bursts onto its link
//   PcieSwitchPartition  downstream ports to its GPUs
//   HostBridge           root-port link; posted-write ordering points with
//                        drains, head of line and the fan-out detector (B)
//   IoQuadrant           host-bridge ports into the NBIO; read stalls (A)
//   DataFabric           quadrant ports and the host-memory port
// PcieEngine itself only schedules: it owns the one event queue (a radix
// heap), pops events in time order and delivers each to the component it
// names; statistics are the components' (StatsSource).
// Plain C++, no SystemC: the fabric kernel drives it through TimingCore.
#include <cstdint>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "models/common/stats_source.h"
#include "models/fabric/core/timing_core.h"
#include "models/pcie/core/data_fabric.h"
#include "models/pcie/core/host_bridge.h"
#include "models/pcie/core/io_quadrant.h"
#include "models/pcie/core/pcie_endpoint.h"
#include "models/pcie/core/pcie_events.h"
#include "models/pcie/core/pcie_router.h"
#include "models/pcie/core/stall_calendar.h"
#include "models/pcie/core/switch_partition.h"

namespace fabricsim::pcie {

using fabric_core::Completion;

/// Engine parameters (handed to the components it builds).
struct PcieEngineParams {
  std::uint64_t burst_bytes = 8192;  ///< transfers move in bursts of this many payload bytes (interleave granule)
  std::uint64_t request_bytes = 24;  ///< wire bytes of a read request (one header), charged at each link's rate
  bool random_interleave =
      true;  ///< an endpoint picks its next burst among active transfers at random (else round robin)
  StallCalendarParams calendar;
  ReadStallParams read_stall;
  WriteOrderingParams ordering;
};

/// Counters of one engine, assembled from its components' statistics.
struct PcieStats {
  std::uint64_t bursts = 0;                ///< data bursts injected (endpoints)
  std::uint64_t reads = 0;                 ///< read completions posted (endpoints)
  std::uint64_t stalled_reads = 0;         ///< of which delayed by a stall window (quadrants)
  ps_t read_stall_ps = 0;                  ///< total delay of stalled reads (quadrants)
  std::uint64_t ordered_bursts = 0;        ///< write bursts through an ordering point (host bridges)
  std::uint64_t drains = 0;                ///< of which waited for a drain (destination switch between bursts)
  std::uint64_t interleaved_switches = 0;  ///< destination switches inside bursts (fan-out detector)
  ps_t drain_wait_ps = 0;                  ///< total time bursts waited at ordering points
};

/// PCIe host timing core.
///
/// post(): a write, read request or read completion of `bytes` starts at its
/// source endpoint (PcieEndpoint::post). Bursts reserve the link directions
/// of their route (PcieRouter: up to the lowest common ancestor, then down)
/// in order, cut-through (PcieLinkDir::reserve); resources are served first
/// come, first served in the order bursts reach the two reservation points
/// (injection at the endpoint, the ordering point at the source's host
/// bridge). A transfer completes when its last burst's tail arrives.
/// Errors: std::invalid_argument for a malformed tree (PcieRouter) or
/// burst_bytes == 0 (constructor), a bad post.
class PcieEngine : public fabric_core::TimingCore, public common::StatsSource {
 public:
  PcieEngine(std::vector<PcieNode> nodes, const PcieEngineParams& p, std::uint64_t seed);
  PcieEngine(const PcieEngine&) = delete;  // components hold references to the queue and transfer table
  PcieEngine& operator=(const PcieEngine&) = delete;

  std::uint64_t post(int src_rank, int dst_rank, std::uint64_t bytes, ps_t t_ps, std::uint64_t cookie,
                     TransferKind kind = TransferKind::write) override;
  ps_t run(ps_t limit_ps, std::vector<Completion>& out) override;
  ps_t next_event_time() override { return queue_.next_time(); }
  ps_t horizon() const override { return horizon_; }
  ps_t now() const override { return queue_.now(); }
  /// Open transfers, then the state of every busy endpoint and host bridge.
  std::string diagnosis() const override;

  /// Totals over the components (what result.json's `engine` reports).
  PcieStats stats() const;
  /// Totals (PcieStats' names, times in ps), then every component's
  /// statistics as "<component>.<name>".
  void visit_stats(const common::StatVisitor& v) const override;
  /// Every component's state.
  void dump_state(std::ostream& os) const;
  const StallCalendar& calendar() const { return *calendar_; }
  /// Quadrant of the node holding rank r (-1: above the quadrants, e.g. host memory).
  int quadrant_of_rank(int r) const;
  /// Names of the nodes on the path from rank a to rank b (for checks and docs).
  std::vector<std::string> path_names(int a, int b) const;

  // Components (read-only views for reports and tests).
  const std::vector<std::unique_ptr<PcieEndpoint>>& endpoints() const { return eps_; }
  const std::vector<std::unique_ptr<PcieSwitchPartition>>& partitions() const { return partitions_; }
  const std::vector<std::unique_ptr<HostBridge>>& host_bridges() const { return bridges_; }
  const std::vector<std::unique_ptr<IoQuadrant>>& quadrants() const { return quadrants_; }
  const DataFabric* data_fabric() const { return fabric_.get(); }

 private:
  PcieEngineParams p_;
  std::unique_ptr<StallCalendar> calendar_;
  std::unique_ptr<PcieRouter> router_;
  PcieEventQueue queue_;
  PcieTransferTable transfers_;
  std::vector<std::unique_ptr<PcieEndpoint>> eps_;
  std::vector<std::unique_ptr<PcieSwitchPartition>> partitions_;
  std::vector<std::unique_ptr<HostBridge>> bridges_;
  std::vector<std::unique_ptr<IoQuadrant>> quadrants_;
  std::unique_ptr<DataFabric> fabric_;
  std::size_t open_ = 0;
  std::uint64_t reads_posted_ = 0;
  ps_t horizon_ = 0;
};

}  // namespace fabricsim::pcie
