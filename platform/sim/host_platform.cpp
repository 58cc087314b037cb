#include "platform/sim/host_platform.h"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

#include "models/link/core/counter_rng.h"
#include "platform/fabric/fabric_graph.h"
#include "sw/schedule_exec.h"
#include "sw/transports.h"

namespace fabricsim::sim {

namespace {

// A transport's spec as the harness runs it (chunk, kernel barriers from the workload).
sw::CollectiveSpec host_transport_spec(const fabric::HostWorkload& W, const std::string& t, std::uint64_t bytes,
                                       int N) {
  auto s = sw::transport_spec(t, bytes, N);
  s.chunk_bytes = W.chunk_bytes;
  s.fabric_barriers = W.kernel_barriers;
  return s;
}

// The engine's parameters; a decode run starts at a seed-derived phase of the stall period.
pcie::PcieEngineParams engine_params(const fabric::HostRunConfig& cfg) {
  pcie::PcieEngineParams ep = cfg.host.engine;
  if (cfg.decode_mode && cfg.decode.random_start_phase) {
    // A run starts at a seed-derived phase of the stall period: the windows are
    // fixed in wall-clock time, the program's start is not (host-bridge.md §6).
    const double u = link::to_unit(link::key_hash(cfg.seed, 0x5ea7, 0, 0, 0x81));
    ep.calendar.offset_ps =
        (ep.calendar.offset_ps + static_cast<std::uint64_t>(u * ep.calendar.period_ps)) % ep.calendar.period_ps;
  }
  return ep;
}

}  // namespace

sw::Layout host_gpu_layout(const fabric::HostRunConfig& cfg) {
  const auto& W = cfg.workload;
  const int N = static_cast<int>(W.group.size());
  sw::Layout L;
  if (W.schedule) {
    L.total = sw::layout_schedule(*W.schedule, W.size_bytes,
                                  cfg.host.gpu.threadblock_rate_bytes_per_s > 0 ? sw::kRatePieceBytes : 0)
                  .memory_bytes;
  } else {
    L = sw::layout(host_transport_spec(W, W.transport, W.size_bytes, N), N);
  }
  if (!cfg.decode_mode) return L;
  // Memory for the largest candidate x size; inputs start at 0 in every layout.
  const auto& D = cfg.decode;
  std::vector<std::string> all = D.candidates;
  for (const auto* ld : {&D.ladder, &D.switch_local, &D.quadrant_crossing})
    for (const auto& b : ld->buckets) all.push_back(b.transport);
  for (const auto& t : all)
    for (auto b : D.allreduces) {
      const auto l = sw::layout(host_transport_spec(W, t, b, N), N);
      if (l.total > L.total) L.total = l.total;
      if (l.in_bytes > L.in_bytes) L.in_bytes = l.in_bytes;
    }
  return L;
}

std::uint64_t host_gpu_memory_bytes(const fabric::HostRunConfig& cfg) {
  return std::max<std::uint64_t>(host_gpu_layout(cfg).total, 4096);
}

fabric_core::AddressMap host_address_map(const fabric::HostRunConfig& cfg) {
  const auto& H = cfg.host;
  const auto& group = cfg.workload.group;
  struct Item {
    fabric_core::AddressRegion r;
    bool has_address;
    const fabric::SourceRef* src;
  };
  std::vector<Item> items;  // GPUs in id order, then host memory
  const std::uint64_t gpu_bytes = host_gpu_memory_bytes(cfg);
  for (std::size_t id = 0; id < H.gpus.size(); ++id) {
    const auto& g = H.gpus[id];
    const auto it = std::find(group.begin(), group.end(), static_cast<int>(id));
    const int rank = it == group.end() ? -1 : static_cast<int>(it - group.begin());
    items.push_back({{fmt::format("gpu{}", id), rank, g.address, gpu_bytes}, g.has_address, &g.address_src});
  }
  items.push_back({{"host_memory", static_cast<int>(group.size()), H.host_memory_address, H.host_memory_bytes},
                   H.host_memory_has_address, &H.host_memory_address_src});
  fabric_core::AddressMap m;
  auto add = [&m](const Item& it, std::uint64_t base) {
    try {
      fabric_core::AddressRegion r = it.r;
      r.base = base;
      m.add(r);
    } catch (const std::invalid_argument& e) {
      throw fabric::FabricError(fmt::format("{}: {}", it.src->prefix(), e.what()));
    }
  };
  for (const auto& it : items)  // declared addresses first
    if (it.has_address) add(it, it.r.base);
  std::uint64_t cursor = H.address_base;
  for (const auto& it : items) {
    if (it.has_address) continue;
    std::uint64_t b = 0;
    try {
      b = m.first_fit(cursor, it.r.size);
    } catch (const std::invalid_argument& e) {
      throw fabric::FabricError(fmt::format("{}: {}", it.src->prefix(), e.what()));
    }
    add(it, b);
    cursor = b + it.r.size;
  }
  return m;
}

HostPlatform::HostPlatform(const fabric::HostRunConfig& cfg) {
  build_modules(cfg);
  build_kernel(cfg);
}

// The GPUs of the group (ranks) and host memory through the registry.
void HostPlatform::build_modules(const fabric::HostRunConfig& cfg) {
  const auto& H = cfg.host;
  const auto& W = cfg.workload;
  const int N = static_cast<int>(W.group.size());
  std::uint32_t min_flags = 0;
  if (W.schedule)
    min_flags = sw::layout_schedule(*W.schedule, W.size_bytes,
                                    H.gpu.threadblock_rate_bytes_per_s > 0 ? sw::kRatePieceBytes : 0)
                    .flags;
  const std::uint64_t gpu_bytes = host_gpu_memory_bytes(cfg);
  reserve_ranks(N);
  for (int r = 0; r < N; ++r) {
    models::node_config nc;
    nc.kind = "accelerator";
    nc.rank = r;
    models::accelerator_params p = H.gpu;
    p.memory_bytes = gpu_bytes;
    p.functional = W.data;
    if (W.schedule) p.flags = std::max(p.flags, min_flags);
    add_accelerator(fmt::format("gpu{}", W.group[r]), nc, p);
  }
  models::node_config hm;
  hm.kind = "host-memory";
  models::host_memory_params hp;
  hp.bytes = H.host_memory_bytes;
  hp.functional = W.data;
  host_ = &create<models::host_memory>("host-memory", "host_memory", hm, hp);
  add_memory_name(host_->name());
}

// The PCIe engine of the group's tree in the kernel; GPUs then host memory bound to it.
void HostPlatform::build_kernel(const fabric::HostRunConfig& cfg) {
  const int N = ranks();
  auto engine =
      std::make_unique<pcie::PcieEngine>(fabric::host_tree(cfg.host, cfg.workload.group), engine_params(cfg), cfg.seed);
  models::fabric_kernel::tlm_boundary b;  // no initiators: the map is for check and users' code
  b.map = host_address_map(cfg);
  bind_kernel(std::make_unique<models::fabric_kernel>("pcie", std::move(engine), N, endpoint_names(), cfg.deadline_ps,
                                                      1, std::move(b)));
  eng_ = &dynamic_cast<const pcie::PcieEngine&>(kernel().engine());
  for (int r = 0; r < N; ++r) accelerator(r).set_host_rank(N);
  kernel().mem_out.bind(host_->mem);
  kernel().attach(N, host_);
}

}  // namespace fabricsim::sim
