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

/// An elaborated UALink fabric. Construct once per process, before
/// sc_start(); the modules live as long as this object. Accelerators run no
/// program unless given one (accelerator(r).set_program).
class FabricPlatform {
 public:
  /// Validates (validate_fabric; skipped if the caller did: `validated`) and
  /// elaborates. Throws fabric::FabricError or config::ConfigError for a
  /// fabric that cannot be built.
  explicit FabricPlatform(const fabric::FabricRunConfig& cfg, bool validated = false);

  int ranks() const { return static_cast<int>(acc_.size()); }
  models::accelerator& accelerator(int rank) { return *acc_.at(static_cast<std::size_t>(rank)); }
  /// Accelerator by node id; throws std::out_of_range.
  models::accelerator& accelerator(const std::string& node);
  const std::vector<std::string>& rank_names() const { return rank_names_; }
  /// Every module elaborated from the fabric's nodes (accelerators, switches), in node order.
  const std::vector<std::unique_ptr<sc_core::sc_module>>& modules() const { return modules_; }
  models::fabric_kernel& kernel() { return *kernel_; }
  const fabric_core::AddressMap& address_map() const { return kernel_->address_map(); }
  /// Target socket of the tlm-initiator node `node`, for the user's initiator
  /// socket to bind before sc_start(). Throws std::out_of_range if no
  /// tlm-initiator has that id.
  tlm::tlm_target_socket<32>& target_socket(const std::string& node);
  /// Global base address of accelerator `node`'s memory; throws std::out_of_range.
  std::uint64_t base_address(const std::string& node) const;

 private:
  std::vector<std::unique_ptr<sc_core::sc_module>> modules_;
  std::vector<models::accelerator*> acc_;
  std::vector<std::string> rank_names_;
  std::vector<std::string> initiators_;
  std::unique_ptr<models::fabric_kernel> kernel_;
};

}  // namespace fabricsim::sim
