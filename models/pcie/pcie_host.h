#pragma once
// SystemC side of a PCIe host (docs/models/pcie.md): host memory as a TLM
// target the fabric kernel lands writes in and reads from. The host tree's
// elements (switch partitions, host bridges, IO-die quadrants, the data
// fabric) are plain-C++ components in models/pcie/core/ (HostBridge,
// IoQuadrant, ...) with their own state and statistics; pcie::PcieEngine
// assembles and schedules them inside the fabric kernel module, which owns
// the sockets. They have no SystemC module of their own: no TLM transaction
// crosses them per TLP, so a module would hold nothing but a name.
#include <tlm_utils/simple_target_socket.h>
#include <systemc>
#include <tlm>

#include <cstdint>
#include <string>
#include <vector>

#include "models/fabric/fabric_sync_if.h"
#include "models/pcie/core/pcie_engine.h"
#include "models/registry.h"

namespace fabricsim::models {

/// Parameters of host memory.
struct host_memory_params {
  std::uint64_t bytes = 256ull << 20;  ///< capacity
  std::uint64_t latency_ps = 0;        ///< read service time (the engine adds the DRAM path latency)
  bool functional = true;              ///< false: timing only, no backing store
};

/// Host DRAM behind the IO die (NCCL's SHM transport stages data here).
/// Socket `mem` (target): writes land, reads are served; addresses >= the
/// capacity get TLM_ADDRESS_ERROR_RESPONSE. It runs no software: to the
/// kernel it is a memory-only endpoint (never blocked, never in the barrier).
class host_memory : public sc_core::sc_module, public rank_control_if {
 public:
  tlm_utils::simple_target_socket<host_memory> mem;
  using params_type = host_memory_params;
  host_memory(const sc_core::sc_module_name& name, const node_config& cfg, const host_memory_params& p);

  // rank_control_if
  void op_complete(std::uint64_t) override {}
  void wake() override {}
  bool functional() const override { return p_.functional; }
  std::uint64_t memory_bytes() const override { return p_.bytes; }
  std::uint64_t read_latency_ps() const override { return p_.latency_ps; }
  std::string waiting_for() const override { return "nothing (host memory)"; }

 private:
  void b_transport(tlm::tlm_generic_payload& tx, sc_core::sc_time& delay);
  host_memory_params p_;
  std::vector<unsigned char> data_;
};


}  // namespace fabricsim::models
