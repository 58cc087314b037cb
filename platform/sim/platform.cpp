#include "platform/sim/platform.h"

#include <fmt/format.h>

#include <tlm>

namespace fabricsim::sim {

std::string Platform::start() {
  tlm::tlm_global_quantum::instance().set(sc_core::sc_time(1, sc_core::SC_US));
  try {
    sc_core::sc_start();
  } catch (const sc_core::sc_report& e) {
    // A model's own report is its diagnosis (no SystemC file / process lines); the kernel's keep them.
    if (std::string(e.get_msg_type()).rfind("fabricsim/", 0) == 0) return e.get_msg();
    return e.what();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

models::accelerator& KernelPlatform::accelerator(const std::string& node) {
  for (auto* a : acc_)
    if (a && a->basename() == node) return *a;
  throw std::out_of_range("no accelerator '" + node + "'");
}

std::vector<std::string> KernelPlatform::endpoint_names() const {
  std::vector<std::string> n = rank_names_;
  n.insert(n.end(), memory_names_.begin(), memory_names_.end());
  return n;
}

std::uint64_t KernelPlatform::base_address(const std::string& node) const {
  for (const auto& r : kernel_->address_map().regions())
    if (r.name == node) return r.base;
  throw std::out_of_range("no memory '" + node + "' in the address map");
}

void KernelPlatform::trace_operations(report::TraceWriter& trace) {
  for (int r = 0; r < ranks(); ++r) trace.name_thread(1, r, rank_names_[r]);
  trace_dma_operations(*kernel_, trace, endpoint_names());
}

std::string KernelPlatform::simulate(bool progress, ProgressLine::Text what) {
  std::unique_ptr<ProgressLine> line;
  if (progress) line = std::make_unique<ProgressLine>(*kernel_, std::move(what));
  std::string diagnosis = start();
  if (line) line->finish();
  return diagnosis;
}

std::string KernelPlatform::unfinished() const {
  for (const auto* a : acc_)
    if (!a->done()) return fmt::format("{} did not finish: waits for {}", a->name(), a->waiting_for());
  return "";
}

void KernelPlatform::reserve_ranks(int n) {
  acc_.assign(static_cast<std::size_t>(n), nullptr);
  rank_names_.assign(static_cast<std::size_t>(n), {});
}

models::accelerator& KernelPlatform::add_accelerator(const std::string& name, const models::node_config& nc,
                                                     const models::accelerator_params& p) {
  auto& a = create<models::accelerator>("accelerator", name, nc, p);
  acc_.at(static_cast<std::size_t>(nc.rank)) = &a;
  rank_names_[nc.rank] = a.name();
  return a;
}

void KernelPlatform::bind_kernel(std::unique_ptr<models::fabric_kernel> kernel) {
  kernel_ = std::move(kernel);
  for (auto* a : acc_) {
    a->dma.bind(kernel_->dma_in);
    kernel_->mem_out.bind(a->mem);
    a->sync.bind(kernel_->sync_export);
  }
}

}  // namespace fabricsim::sim
