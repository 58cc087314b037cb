#pragma once
// Elaboration of a PCIe host (fabric.kind: pcie-host) for one run's GPU
// group, without running it: the PCIe timing core, the GPUs and host memory
// through the registry, the fabric kernel and its bindings (platform.h).
// host_run builds one, attaches the harness's programs and reports.
#include <cstdint>

#include "models/fabric/core/address_map.h"
#include "models/pcie/core/pcie_engine.h"
#include "models/pcie/pcie_host.h"
#include "platform/fabric/host_config.h"
#include "platform/sim/platform.h"
#include "sw/collectives.h"

namespace fabricsim::sim {

/// GPU memory layout a host run needs: the transport's buffers (sw::layout of
/// workload.transport at workload.size on the group), a schedule's total
/// (ScheduleLayout::memory_bytes; in/out offsets are per rank there), and,
/// in decode mode, the largest total and input over every transport the
/// selection can use x every AllReduce size (inputs start at 0 in every
/// layout). Throws as sw::layout.
sw::Layout host_gpu_layout(const fabric::HostRunConfig& cfg);

/// Bytes of memory every GPU gets: max(host_gpu_layout(cfg).total, 4096).
std::uint64_t host_gpu_memory_bytes(const fabric::HostRunConfig& cfg);

/// The host's global address map: one region per GPU of the host (all of
/// fabric.gpus, not only the group: "gpu<id>", host_gpu_memory_bytes(cfg),
/// rank = its index in workload.group or -1 when the run does not elaborate
/// it) and one for host memory ("host_memory", fabric.host_memory.size,
/// rank = the group's size: the kernel's memory-only endpoint). Declared
/// `address:` values (GPUs in id order, then host memory) keep their bases;
/// the others get, GPUs in id order then host memory, the lowest base >=
/// fabric.address_base (default 0) and >= the end of the previously
/// assigned region, aligned to AddressMap::kAlign (4 KiB), that overlaps no
/// region (first fit, as address_map() of a UALink fabric). Throws
/// fabric::FabricError "<file:line:col>: key 'fabric.gpus[i].address': ..."
/// for overlapping regions (misaligned values are rejected by parse_host).
fabric_core::AddressMap host_address_map(const fabric::HostRunConfig& cfg);

/// An elaborated PCIe host: GPUs of workload.group as ranks 0..N-1 (module
/// "gpu<id>"), host memory as endpoint N (module "host_memory"), the
/// PcieEngine of the host's tree inside a fabric kernel "pcie" that also
/// holds the host's address map. Construct once per process, before
/// sc_start(). GPUs run no program unless given one.
class HostPlatform : public KernelPlatform {
 public:
  /// Throws fabric::FabricError (overlapping addresses) or what the registry throws.
  explicit HostPlatform(const fabric::HostRunConfig& cfg);

  models::host_memory& host_memory() { return *host_; }
  /// The PCIe timing core (statistics, stall calendar).
  const pcie::PcieEngine& engine() const { return *eng_; }

 private:
  void build_modules(const fabric::HostRunConfig& cfg);
  void build_kernel(const fabric::HostRunConfig& cfg);

  models::host_memory* host_ = nullptr;
  const pcie::PcieEngine* eng_ = nullptr;
};

}  // namespace fabricsim::sim
