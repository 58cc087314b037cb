#pragma once
// The elaboration stage's common part. Every kind of run that builds SystemC
// modules is one platform class deriving from these: FabricPlatform (UALink
// fabrics, fabric_platform.h), HostPlatform (PCIe hosts, host_platform.h) and
// LinkPairPlatform (two UALink ports, link_pair_platform.h). A platform owns
// its modules, builds the registered ones through the model registry and
// drives sc_start; a KernelPlatform also owns the fabric kernel its
// accelerators are bound to, names them and hooks traces and progress lines.
// The run functions (fabric_run, host_run, link_experiment) only attach
// software, run and report.
#include <systemc>

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "models/accelerator/accelerator.h"
#include "models/fabric/fabric_kernel.h"
#include "models/registry.h"
#include "platform/report/trace.h"
#include "platform/sim/kernel_hooks.h"

namespace fabricsim::sim {

/// Owns the SystemC modules of one elaboration (once per process) and runs
/// the simulation.
class Platform {
 public:
  Platform(const Platform&) = delete;
  Platform& operator=(const Platform&) = delete;

  /// Every module the platform elaborated, in creation order.
  const std::vector<std::unique_ptr<sc_core::sc_module>>& modules() const { return modules_; }

  /// Set the one global quantum (1 us) and sc_start() until the simulation
  /// ends. Returns "" when it ended, or the diagnosis of the SystemC report
  /// or exception that stopped it (deadlock, deadline, bad software call).
  std::string start();

 protected:
  Platform() = default;
  ~Platform() = default;

  /// Build a module of registered `kind` from its parameter struct (typed
  /// registry, models/registry.h) and keep it. Throws as
  /// model_registry::create, or std::logic_error if the kind's module is not a T.
  template <class T, class Params>
  T& create(const std::string& kind, const std::string& name, const models::node_config& nc, const Params& p) {
    modules_.push_back(models::model_registry::instance().create(kind, name.c_str(), nc, p));
    auto* m = dynamic_cast<T*>(modules_.back().get());
    if (!m) throw std::logic_error("model kind '" + kind + "' does not build the module the platform expects");
    return *m;
  }
  /// Keep a module built by the platform itself (not a registered kind).
  template <class T>
  T& adopt(std::unique_ptr<T> m) {
    T& r = *m;
    modules_.push_back(std::move(m));
    return r;
  }

 private:
  std::vector<std::unique_ptr<sc_core::sc_module>> modules_;
};

/// A platform whose ranks are accelerators bound to one fabric_kernel (UALink
/// fabrics and PCIe hosts); memory-only endpoints (host memory) follow the
/// ranks. The kernel is destroyed before the modules.
class KernelPlatform : public Platform {
 public:
  int ranks() const { return static_cast<int>(acc_.size()); }
  models::accelerator& accelerator(int rank) { return *acc_.at(static_cast<std::size_t>(rank)); }
  const models::accelerator& accelerator(int rank) const { return *acc_.at(static_cast<std::size_t>(rank)); }
  /// Accelerator by module basename (node id, "gpu3"); throws std::out_of_range.
  models::accelerator& accelerator(const std::string& node);
  /// Module names of the ranks, in rank order.
  const std::vector<std::string>& rank_names() const { return rank_names_; }
  /// Module names of the kernel's endpoints: the ranks, then memory-only endpoints.
  std::vector<std::string> endpoint_names() const;
  models::fabric_kernel& kernel() { return *kernel_; }
  const models::fabric_kernel& kernel() const { return *kernel_; }
  const fabric_core::AddressMap& address_map() const { return kernel_->address_map(); }
  /// Global base address of the memory named `node` (address map); throws std::out_of_range.
  std::uint64_t base_address(const std::string& node) const;

  /// Name each rank's trace thread (1, rank) after its module and trace every
  /// DMA operation as a span there (trace_dma_operations).
  void trace_operations(report::TraceWriter& trace);
  /// start(), with a progress line on stderr if `progress` (text from `what`).
  std::string simulate(bool progress, ProgressLine::Text what);
  /// "<module> did not finish: waits for <what>" for the first rank whose
  /// program has not returned, or "".
  std::string unfinished() const;

 protected:
  KernelPlatform() = default;
  ~KernelPlatform() = default;

  /// Set the number of ranks before adding their accelerators.
  void reserve_ranks(int n);
  /// Build rank `rank`'s accelerator module `name` through the registry.
  models::accelerator& add_accelerator(const std::string& name, const models::node_config& nc,
                                       const models::accelerator_params& p);
  /// Record a memory-only endpoint's module name (endpoints after the ranks', in this order).
  void add_memory_name(const std::string& name) { memory_names_.push_back(name); }
  /// Take the kernel and bind every rank to it in rank order (dma, memory, sync).
  void bind_kernel(std::unique_ptr<models::fabric_kernel> kernel);

 private:
  std::vector<models::accelerator*> acc_;
  std::vector<std::string> rank_names_;
  std::vector<std::string> memory_names_;
  std::unique_ptr<models::fabric_kernel> kernel_;
};

}  // namespace fabricsim::sim
