#include "platform/sim/check.h"

#include <fmt/format.h>

#include "platform/config/link_config.h"
#include "platform/fabric/fabric_config.h"
#include "platform/fabric/fabric_graph.h"
#include "platform/fabric/host_config.h"
#include "platform/sim/fabric_run.h"
#include "platform/sim/schedule_report.h"

namespace fabricsim::sim {

FabricCheck check_document(std::shared_ptr<config::Document> doc) {
  FabricCheck c;
  c.kind = fabric::fabric_kind(*doc);
  if (c.kind == "link-pair") {
    const auto cfg = config::parse_link_experiment(config::root_section(doc));
    c.name = cfg.name;
    c.summary = fmt::format("fabric {} (link-pair): 2 endpoints, 1 link, policy {}\n", cfg.name, cfg.link.policy_name);
    return c;
  }
  if (c.kind == "pcie-host") {
    const auto hc = fabric::parse_host(config::root_section(doc));
    c.name = hc.host.name;
    c.summary = fabric::host_summary(hc);
    if (const auto& S = hc.workload.schedule)
      c.summary += schedule_summary(*S, hc.workload.schedule_path, hc.workload.size_bytes,
                                    hc.host.gpu.threadblock_rate_bytes_per_s > 0 ? sw::kRatePieceBytes : 0);
    c.dot = fabric::host_dot(hc.host);
    return c;
  }
  const auto cfg = fabric::parse_fabric(config::root_section(doc));
  validate_fabric(cfg);
  const fabric::FabricGraph g(cfg.fabric);
  c.name = cfg.fabric.name;
  c.summary = g.summary();
  if (const auto& S = cfg.workload.schedule) {
    bool tb_rate = false;
    for (const auto& n : cfg.fabric.nodes)
      tb_rate = tb_rate || (n.kind == "accelerator" && n.accel.threadblock_rate_bytes_per_s > 0);
    c.summary += schedule_summary(*S, cfg.workload.schedule_path, cfg.workload.collective.bytes,
                                  tb_rate ? sw::kRatePieceBytes : 0);
  }
  c.dot = g.to_dot();
  return c;
}

FabricCheck check_fabric(const std::string& path, const std::vector<std::string>& sets) {
  return check_document(config::load_with_overrides(path, sets));
}

}  // namespace fabricsim::sim
