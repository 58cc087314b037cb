#include "platform/sim/fabric_platform.h"

#include <fmt/format.h>

#include <algorithm>
#include <memory>
#include <set>
#include <stdexcept>

#include "models/fabric/core/fabric_engine.h"
#include "models/registry.h"
#include "models/switch/ualink_switch.h"
#include "platform/fabric/fabric_graph.h"
#include "platform/sim/fabric_run.h"
#include "platform/sim/huge_pages.h"
#include "sw/schedule_exec.h"

namespace fabricsim::sim {

namespace {
// From this many link directions on (the 64-accelerator pod has 1,024) the
// heap is backed by huge pages (back_heap_with_huge_pages()).
constexpr std::size_t kHugePageDirections = 1024;

/// fabric_core::Routing over the platform's FabricGraph.
class GraphRouting : public fabric_core::Routing {
 public:
  explicit GraphRouting(std::shared_ptr<const fabric::FabricGraph> g) : g_(std::move(g)) {}
  std::vector<fabric_core::Hop> first_hops(int src, int dst) const override {
    std::vector<fabric_core::Hop> out;
    for (const auto& h : g_->first_hops(src, dst)) out.push_back({h.port, h.link, h.next_node});
    return out;
  }
  fabric_core::Hop next_hop(std::size_t node, int dst) const override {
    const auto& h = g_->next_hop(node, dst);
    return {h.port, h.link, h.next_node};
  }

 private:
  std::shared_ptr<const fabric::FabricGraph> g_;
};

// A switch's forwarding table from the fabric graph's routes: one entry per
// destination rank it can reach (the fabric check rejects fabrics where an
// endpoint cannot reach another, so a missing entry is never used).
void fill_forwarding_table(switching::UalinkSwitch& sw, std::size_t node, const fabric::FabricGraph& g, int ranks) {
  for (int r = 0; r < ranks; ++r) {
    try {
      sw.set_route(r, g.next_hop(node, r).port);
    } catch (const fabric::FabricError&) {
      // no route from this switch to rank r
    }
  }
}

bool uses_threadblock_rate(const fabric::FabricRunConfig& cfg) {
  for (const auto& n : cfg.fabric.nodes)
    if (n.kind == "accelerator" && n.accel.threadblock_rate_bytes_per_s > 0) return true;
  return false;
}

}  // namespace

std::uint64_t workload_memory_bytes(const fabric::FabricRunConfig& cfg) {
  if (!cfg.workload.run) return 0;
  if (const auto& S = cfg.workload.schedule)
    return sw::layout_schedule(*S, cfg.workload.collective.bytes, uses_threadblock_rate(cfg) ? sw::kRatePieceBytes : 0)
        .memory_bytes;
  return sw::layout(cfg.workload.collective, static_cast<int>(cfg.fabric.accelerators())).total;
}

std::uint64_t auto_memory_bytes(const fabric::FabricRunConfig& cfg) {
  return cfg.workload.run ? std::max<std::uint64_t>(workload_memory_bytes(cfg), 4096) : 1u << 20;
}

std::uint64_t accelerator_memory_bytes(const fabric::NodeSpec& n, const fabric::FabricRunConfig& cfg) {
  return n.auto_memory ? auto_memory_bytes(cfg) : n.accel.memory_bytes;
}

fabric_core::AddressMap address_map(const fabric::FabricRunConfig& cfg) {
  const auto& F = cfg.fabric;
  const std::uint64_t auto_bytes = auto_memory_bytes(cfg);
  auto size_of = [&](const fabric::NodeSpec& n) { return n.auto_memory ? auto_bytes : n.accel.memory_bytes; };
  fabric_core::AddressMap m;
  for (const auto& n : F.nodes)  // declared addresses first, in declaration order
    if (n.kind == "accelerator" && n.has_address) try {
        m.add({n.id, n.rank, n.address, size_of(n)});
      } catch (const std::invalid_argument& e) {
        throw fabric::FabricError(fmt::format("{}: {}", n.address_src.prefix(), e.what()));
      }
  std::vector<const fabric::NodeSpec*> by_rank(F.accelerators(), nullptr);
  for (const auto& n : F.nodes)
    if (n.kind == "accelerator" && n.rank >= 0 && static_cast<std::size_t>(n.rank) < by_rank.size())
      by_rank[n.rank] = &n;
  std::uint64_t cursor = F.address_base;
  for (const auto* n : by_rank) {
    if (!n || n->has_address) continue;
    try {
      const std::uint64_t b = m.first_fit(cursor, size_of(*n));
      m.add({n->id, n->rank, b, size_of(*n)});
      cursor = b + size_of(*n);
    } catch (const std::invalid_argument& e) {
      // Past the end of the address space from a base the file set: blame the base.
      const bool base = F.address_base != 0 && !F.address_base_src.where.empty();
      throw fabric::FabricError(fmt::format("{}: {}{}", base ? F.address_base_src.prefix() : n->src.prefix(), e.what(),
                                            base ? fmt::format(" (placing {} from it)", n->id) : ""));
    }
  }
  return m;
}

void attach_tlm_initiator(fabric::FabricRunConfig& cfg, const std::string& id, const std::string& at,
                          std::uint32_t port) {
  auto& F = cfg.fabric;
  if (!fabric::valid_node_id(id)) throw fabric::FabricError(fmt::format("tlm-initiator id '{}' is not valid", id));
  std::size_t where = F.nodes.size();
  int next_rank = 0;
  for (std::size_t i = 0; i < F.nodes.size(); ++i) {
    if (F.nodes[i].id == id) throw fabric::FabricError(fmt::format("a node '{}' exists already", id));
    if (F.nodes[i].id == at) where = i;
    if (fabric::is_endpoint_kind(F.nodes[i].kind)) next_rank = std::max(next_rank, F.nodes[i].rank + 1);
  }
  if (where == F.nodes.size()) throw fabric::FabricError(fmt::format("no node '{}' to attach '{}' at", at, id));
  fabric::NodeSpec n;
  n.id = id;
  n.kind = fabric::kTlmInitiator;
  n.rank = next_rank;
  n.src = {"attach_tlm_initiator", id};
  n.address_src = n.src;
  F.nodes.push_back(n);
  fabric::LinkSpec l;
  l.a = F.nodes.size() - 1;
  l.a_port = 0;
  l.b = where;
  l.b_port = port;
  l.link = cfg.default_link;
  l.id = F.links.size();
  l.src = {"attach_tlm_initiator", fmt::format("{}.0 - {}.{}", id, at, port)};
  F.links.push_back(l);
}

FabricPlatform::FabricPlatform(const fabric::FabricRunConfig& cfg, bool validated) {
  if (!validated) validate_fabric(cfg);
  const auto graph = std::make_shared<const fabric::FabricGraph>(cfg.fabric);
  const auto switches = build_modules(cfg);
  build_kernel(cfg, graph, switches);
}

// Modules through the registry, by kind; a tlm-initiator is the user's module
// (recorded with its rank). Returns each node's switch module (or null), by node index.
std::vector<models::ualink_switch*> FabricPlatform::build_modules(const fabric::FabricRunConfig& cfg) {
  const auto& F = cfg.fabric;
  const std::uint64_t need_memory = workload_memory_bytes(cfg);
  std::uint32_t min_flags = 0;
  if (const auto& S = cfg.workload.schedule; S && cfg.workload.run)
    min_flags =
        sw::layout_schedule(*S, cfg.workload.collective.bytes, uses_threadblock_rate(cfg) ? sw::kRatePieceBytes : 0)
            .flags;
  reserve_ranks(static_cast<int>(F.accelerators()));
  std::vector<models::ualink_switch*> switch_of(F.nodes.size(), nullptr);
  // Ports a node's links use (1 + the highest), for nodes that declare none.
  std::vector<std::uint32_t> linked_ports(F.nodes.size(), 0);
  for (const auto& l : F.links) {
    linked_ports[l.a] = std::max(linked_ports[l.a], l.a_port + 1);
    linked_ports[l.b] = std::max(linked_ports[l.b], l.b_port + 1);
  }
  for (std::size_t i = 0; i < F.nodes.size(); ++i) {
    const auto& n = F.nodes[i];
    if (n.kind == fabric::kTlmInitiator) {
      inits_.push_back({n.rank, n.id});
      continue;
    }
    models::node_config nc;
    nc.kind = n.kind;
    nc.rank = n.rank;
    nc.ports = n.ports;
    if (nc.ports == 0) nc.ports = linked_ports[i];
    if (n.kind == "accelerator") {
      models::accelerator_params p = n.accel;
      if (n.auto_memory) p.memory_bytes = auto_memory_bytes(cfg);
      p.functional = cfg.workload.data;
      p.flags = std::max(p.flags, min_flags);
      if (p.memory_bytes < need_memory)
        throw fabric::FabricError(fmt::format("{}: the collective needs {} B of accelerator memory, {} has {} B",
                                              n.memory_source().prefix(), need_memory, n.id, p.memory_bytes));
      add_accelerator(n.id, nc, p);
    } else {
      switch_of[i] = dynamic_cast<models::ualink_switch*>(&create<sc_core::sc_module>(n.kind, n.id, nc, n.sw));
    }
  }
  return switch_of;
}

// Timing core: accelerators and tlm-initiators are its endpoints (ranks); the
// scheduler drives each switch module's component. Then the kernel, with one
// target socket per tlm-initiator and the global address map.
void FabricPlatform::build_kernel(const fabric::FabricRunConfig& cfg,
                                  const std::shared_ptr<const fabric::FabricGraph>& graph,
                                  const std::vector<models::ualink_switch*>& switch_of) {
  const auto& F = cfg.fabric;
  const int N = ranks();
  const int endpoints = N + static_cast<int>(inits_.size());
  std::vector<fabric_core::EngineNode> en;
  for (std::size_t i = 0; i < F.nodes.size(); ++i) {
    const auto& n = F.nodes[i];
    fabric_core::EngineNode e{"fabric." + n.id, fabric::is_endpoint_kind(n.kind), n.rank, nullptr};
    if (auto* sw = switch_of[i]) {
      fill_forwarding_table(sw->component(), i, *graph, endpoints);
      e.component = &sw->component();
    }
    en.push_back(e);
  }
  std::vector<fabric_core::EngineLink> el;
  for (const auto& l : F.links)
    el.push_back({l.a, l.b, l.a_port, l.b_port, l.link, l.id, l.proto.protocol, l.proto.rifl});
  auto engine = std::make_unique<fabric_core::FabricEngine>(std::move(en), std::move(el), cfg.seed,
                                                            std::make_shared<GraphRouting>(graph));
  engine_ = engine.get();
  // A large fabric's link directions (engines, queues, policies, switch
  // ports, all allocated by now) outgrow the TLB on 4-KiB pages.
  if (engine->directions() >= kHugePageDirections) back_heap_with_huge_pages();
  // External initiators in rank order: socket k is endpoint N + k.
  std::sort(inits_.begin(), inits_.end());
  models::fabric_kernel::tlm_boundary b;
  for (const auto& [r, id] : inits_) b.initiators.push_back(id);
  b.map = sim::address_map(cfg);
  bind_kernel(std::make_unique<models::fabric_kernel>("fabric", std::move(engine), N, rank_names(), cfg.deadline_ps,
                                                      0, std::move(b)));
}

void FabricPlatform::trace_rifl_recoveries(report::TraceWriter& trace) {
  auto named = std::make_shared<std::set<int>>();  // tracks named so far (at their first span)
  int next_track = 1;
  for (std::size_t d = 0; d + 1 < engine_->directions(); d += 2) {
    rifl::FabricRiflLink* rl = engine_->rifl_link(d);
    if (!rl) continue;
    if (next_track == 1) trace.name_process(2, "RIFL link recoveries (go-back-N)");
    const fabric_core::DirectionStats ds = engine_->direction_stats(d);
    auto bare = [](const std::string& n) { return n.rfind("fabric.", 0) == 0 ? n.substr(7) : n; };
    const std::string link = bare(ds.from) + "-" + bare(ds.to);
    const int base = next_track;  // lane l, direction x: track base + 2 l + x
    next_track += static_cast<int>(2 * rl->link().config().lanes);
    rl->link().set_recovery_observer([&trace, rl, base, link, named](const rifl::RecoveryEvent& e) {
      const int tid = base + static_cast<int>(2 * e.lane) + e.dir;
      const char* dir = e.dir ? "B->A" : "A->B";
      if (named->insert(tid).second) trace.name_thread(2, tid, fmt::format("{} lane {} {}", link, e.lane, dir));
      const std::uint64_t start = rl->slot_start_ps(e.start_slot), end = rl->slot_start_ps(e.end_slot);
      trace.span(fmt::format("retransmission: {} frames replayed{}", e.replayed, e.open ? " (open at the end)" : ""),
                 "retransmit", 2, tid, start,
                 end - start,
                 {{"link", link},
                  {"lane", e.lane},
                  {"direction", dir},
                  {"replayed_frames", e.replayed},
                  {"slots", e.end_slot - e.start_slot},
                  {"open_at_end", e.open}});
    });
  }
}

void FabricPlatform::close_rifl_recoveries() {
  for (std::size_t d = 0; d + 1 < engine_->directions(); d += 2)
    if (rifl::FabricRiflLink* rl = engine_->rifl_link(d)) rl->link().close_open_recoveries();
}

tlm::tlm_target_socket<32>& FabricPlatform::target_socket(const std::string& node) {
  for (std::size_t k = 0; k < inits_.size(); ++k)
    if (inits_[k].second == node) return kernel().tlm_target(k);
  throw std::out_of_range("no tlm-initiator node '" + node + "'");
}

}  // namespace fabricsim::sim
