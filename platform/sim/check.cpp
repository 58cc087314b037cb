#include "platform/sim/check.h"

#include <fmt/format.h>

#include "platform/config/link_config.h"
#include "platform/fabric/fabric_config.h"
#include "platform/fabric/fabric_graph.h"
#include "platform/fabric/host_config.h"
#include "platform/sim/fabric_platform.h"
#include "platform/sim/fabric_run.h"

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
    c.dot = fabric::host_dot(hc.host);
    return c;
  }
  const auto cfg = fabric::parse_fabric(config::root_section(doc));
  validate_fabric(cfg);
  const fabric::FabricGraph g(cfg.fabric);
  c.name = cfg.fabric.name;
  c.summary = g.summary();
  c.summary += "global address map (name, base, size):\n" + address_map(cfg).table();
  if (cfg.fabric.initiators() > 0) {
    c.summary += "tlm-initiators (target socket bound by user code):";
    for (const auto& n : cfg.fabric.nodes)
      if (n.kind == fabric::kTlmInitiator) c.summary += " " + n.id;
    c.summary += "\n";
  }
  c.dot = g.to_dot();
  return c;
}

FabricCheck check_fabric(const std::string& path, const std::vector<std::string>& sets) {
  return check_document(config::load_with_overrides(path, sets));
}

}  // namespace fabricsim::sim
