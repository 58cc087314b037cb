#pragma once
// YAML -> link-layer parameters (`link:` section) and the two-endpoint link
// experiment (`fabric.kind: link-pair`). Schema: docs/models/link.md.
#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>

#include "models/link/core/link_engine.h"
#include "platform/config/yaml_config.h"

namespace fabricsim::config {

/// Offered traffic of the link experiment: `flits` payload flits, one every
/// `period_ps`, starting at `start_ps`, posted in TLM transactions of at most
/// `message_flits` flits.
struct TrafficConfig {
  std::uint64_t period_ps = 14000;
  std::uint64_t flits = 10000;
  std::uint64_t message_flits = 4096;
  std::uint64_t start_ps = 0;
};

/// Everything one link-pair run needs.
struct LinkExperimentConfig {
  std::string name;
  link::LinkConfig link;
  TrafficConfig traffic;
  std::uint64_t seed = 1;
  std::uint64_t link_id = 0;
  std::uint64_t deadline_ps = 0;  ///< simulated-time watchdog; 0 = derived from traffic
};

/// Parse a `link:` section into a LinkConfig. Errors (ConfigError) name file,
/// line and key: unknown keys, bad units, probabilities outside [0,1],
/// W_R > W_H, an empty or unordered FEC menu.
link::LinkConfig parse_link(Section link);

/// Parse a `link:` section as an overlay on `base`: keys present replace
/// base's values (a present fec_profiles list replaces the whole menu).
link::LinkConfig parse_link_overlay(Section link, const link::LinkConfig& base);

/// The `fec_profiles` list of section `s` (weakest first, distinct names,
/// 1..127 profiles, each {name, overhead, decode_delay, correctable}); absent:
/// `base`. Errors: ConfigError naming file, line and key.
link::FecMenu parse_fec_menu(Section& s, const link::FecMenu& base);

/// Parse a whole link-pair fabric file (sections fabric, link, traffic, run).
LinkExperimentConfig parse_link_experiment(Section root);

/// Effective configuration as JSON (echoed into result.json), with units in key names.
nlohmann::ordered_json to_json(const LinkExperimentConfig& c);

}  // namespace fabricsim::config
