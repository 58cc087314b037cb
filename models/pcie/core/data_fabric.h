#pragma once
// The IO die's data fabric (host-bridge.md §1): the root of the host tree,
// with one port per quadrant (NBIO) and one toward host memory (DRAM).
// Cross-quadrant traffic turns here. Plain C++.
#include <ostream>
#include <string>
#include <utility>

#include "models/common/stats_source.h"
#include "models/pcie/core/pcie_port.h"

namespace fabricsim::pcie {

/// Data fabric parameters (its ports' links are PciePortParams: a quadrant's
/// port into the data fabric, the DRAM port).
struct DataFabricParams {};

/// The data fabric: one FIFO link per port and direction (PcieLinkDir).
class DataFabric : public common::StatsSource {
 public:
  DataFabric(std::string name, const DataFabricParams& p) : name_(std::move(name)), p_(p) {}
  DataFabric(const DataFabric&) = delete;
  DataFabric& operator=(const DataFabric&) = delete;

  const std::string& name() const { return name_; }
  const DataFabricParams& params() const { return p_; }
  PciePortSet& ports() { return ports_; }
  const PciePortSet& ports() const { return ports_; }
  /// Statistics: port.<quadrant or host memory>.{up,down}_{bursts,bytes,busy_ps}.
  void visit_stats(const common::StatVisitor& v) const override { ports_.visit_stats(v); }
  void dump_state(std::ostream& os) const {
    os << "  data fabric " << name_ << "\n";
    ports_.dump_state(os, "    ");
  }

 private:
  std::string name_;
  DataFabricParams p_;
  PciePortSet ports_;
};

}  // namespace fabricsim::pcie
