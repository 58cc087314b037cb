#pragma once
// PCIe switch partition (host-bridge.md §1: a Switchtec-class chip split in
// two, each partition with its own x16 uplink to one host bridge): its
// downstream ports to the GPUs behind it. Traffic between two GPUs of one
// partition turns here and never reaches a host bridge. Plain C++.
#include <ostream>
#include <string>
#include <utility>

#include "models/common/stats_source.h"
#include "models/pcie/core/pcie_port.h"

namespace fabricsim::pcie {

/// Switch partition parameters (the ports' links are PciePortParams, one per GPU).
struct SwitchPartitionParams {
  int quadrant = -1;  ///< quadrant of the host bridge above (for reports)
};

/// A PCIe switch partition: one FIFO link per downstream port and direction
/// (PcieLinkDir: cut-through, first come first served); its uplink belongs to
/// the host bridge above. Unbounded queues: no flow-control credits.
class PcieSwitchPartition : public common::StatsSource {
 public:
  PcieSwitchPartition(std::string name, const SwitchPartitionParams& p) : name_(std::move(name)), p_(p) {}
  PcieSwitchPartition(const PcieSwitchPartition&) = delete;
  PcieSwitchPartition& operator=(const PcieSwitchPartition&) = delete;

  const std::string& name() const { return name_; }
  const SwitchPartitionParams& params() const { return p_; }
  PciePortSet& ports() { return ports_; }
  const PciePortSet& ports() const { return ports_; }
  /// Statistics: port.<gpu>.{up,down}_{bursts,bytes,busy_ps}.
  void visit_stats(const common::StatVisitor& v) const override { ports_.visit_stats(v); }
  void dump_state(std::ostream& os) const {
    os << "  switch partition " << name_ << "\n";
    ports_.dump_state(os, "    ");
  }

 private:
  std::string name_;
  SwitchPartitionParams p_;
  PciePortSet ports_;
};

}  // namespace fabricsim::pcie
