#pragma once
// Elaboration of a UALink fabric (ring, switched pod, explicit) without
// running it: the timing core, the modules through the registry, the fabric
// kernel and its bindings. run_fabric builds its platform here; users'
// programs (examples/tlm_initiator) build one, bind their own SystemC
// initiators to the tlm-initiator nodes and call sc_start themselves
// (docs/user-guide.md "Attaching your own SystemC model").
#include <systemc>
#include <tlm>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "models/accelerator/accelerator.h"
#include "models/fabric/core/address_map.h"
#include "models/fabric/fabric_kernel.h"
#include "platform/fabric/fabric_config.h"
#include "platform/sim/platform.h"

namespace fabricsim::models {
class ualink_switch;
}
namespace fabricsim::fabric_core {
class FabricEngine;
}

namespace fabricsim::fabric {
class FabricGraph;
}

namespace fabricsim::sim {

/// Bytes of accelerator memory one rank's workload buffers need (the
/// built-in algorithm's layout or the schedule's); 0 when cfg.workload.run
/// is false.
std::uint64_t workload_memory_bytes(const fabric::FabricRunConfig& cfg);

/// What `memory: auto` gives, bytes: max(workload_memory_bytes, 4096), or
/// 1 MiB when cfg.workload.run is false (no workload to size it from).
std::uint64_t auto_memory_bytes(const fabric::FabricRunConfig& cfg);

/// Effective memory size of accelerator node `n`, bytes: auto_memory_bytes
/// for `memory: auto`, else the declared size.
std::uint64_t accelerator_memory_bytes(const fabric::NodeSpec& n, const fabric::FabricRunConfig& cfg);

/// The global address map: one region per accelerator (its node id, rank,
/// base, effective memory size). Nodes with `address:` keep it; the others
/// get, in rank order, the lowest base >= fabric.address_base (default 0)
/// and >= the end of the previously assigned accelerator, aligned to
/// AddressMap::kAlign (4 KiB), that overlaps no region (first fit).
/// Throws fabric::FabricError "<file:line:col>: key 'nodes[i].address': ..."
/// for overlapping regions (misaligned values are rejected by parse_fabric).
fabric_core::AddressMap address_map(const fabric::FabricRunConfig& cfg);

/// Add a tlm-initiator node `id` to a parsed fabric, linked (with
/// defaults.link) to port `port` of node `at` (an accelerator or switch).
/// Its rank is the next endpoint rank. For programs that attach their own
/// initiator to a shipped fabric file. Throws fabric::FabricError if `id`
/// is taken or invalid, `at` does not exist; the port is checked (used
/// twice, beyond a declared count) by FabricGraph like any link's.
void attach_tlm_initiator(fabric::FabricRunConfig& cfg, const std::string& id, const std::string& at,
                          std::uint32_t port);

/// An elaborated UALink fabric (the elaboration stage of `run` for ring,
/// switched-pod and explicit fabrics; platform.h). Construct once per
/// process, before sc_start(); the modules live as long as this object.
/// Accelerators run no program unless given one (accelerator(r).set_program).
class FabricPlatform : public KernelPlatform {
 public:
  /// Validates (validate_fabric; skipped if the caller did: `validated`) and
  /// elaborates: the modules of the nodes, then the timing core (switch
  /// components with forwarding tables from the fabric graph) and the
  /// kernel. Throws fabric::FabricError or config::ConfigError for a fabric
  /// that cannot be built.
  explicit FabricPlatform(const fabric::FabricRunConfig& cfg, bool validated = false);

  /// Target socket of the tlm-initiator node `node`, for the user's initiator
  /// socket to bind before sc_start(). Throws std::out_of_range if no
  /// tlm-initiator has that id.
  tlm::tlm_target_socket<32>& target_socket(const std::string& node);

  /// --trace: every recovery (go-back-N episode) of a RIFL link's lane as a
  /// span on track (2, k) of that link, lane and direction ("acc0-acc1 lane
  /// 2 A->B", named at its first span), from the slot the retransmission
  /// starts to the slot the lane is back to normal, in simulated ps. Call
  /// before simulate(); no-op on a fabric without RIFL links.
  void trace_rifl_recoveries(report::TraceWriter& trace);
  /// After the run: the recovery episodes still open become spans ending at
  /// their link's last slot (so the spans add up to the retransmitted frames).
  void close_rifl_recoveries();

 private:
  std::vector<models::ualink_switch*> build_modules(const fabric::FabricRunConfig& cfg);
  void build_kernel(const fabric::FabricRunConfig& cfg, const std::shared_ptr<const fabric::FabricGraph>& graph,
                    const std::vector<models::ualink_switch*>& switch_of);

  std::vector<std::pair<int, std::string>> inits_;  ///< tlm-initiators (rank, node id), sorted by rank
  fabric_core::FabricEngine* engine_ = nullptr;     ///< the kernel's timing core (owned by the kernel)
};

}  // namespace fabricsim::sim
