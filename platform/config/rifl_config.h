#pragma once
// YAML -> the RIFL link experiment (`fabric.kind: rifl-link`). Schema:
// docs/models/rifl.md.
#include <nlohmann/json.hpp>

#include <string>

#include "models/rifl/core/rifl_link.h"
#include "platform/config/yaml_config.h"

namespace fabricsim::config {

/// Everything one RIFL link run needs.
struct RiflExperimentConfig {
  std::string name;
  rifl::RiflConfig link;
};

/// Parse a whole rifl-link fabric file (sections fabric, rifl, traffic, run).
/// Errors (ConfigError) name file, line and key: unsupported frame size,
/// 0 lanes, BER outside [0, 0.5], ON threshold not above OFF, a flow-control
/// buffer below the round-trip bound, a retransmit buffer smaller than the
/// round trip, unknown keys, bad units.
RiflExperimentConfig parse_rifl_experiment(Section root);

/// Effective configuration as JSON (result.json "config"), units in key names.
nlohmann::ordered_json to_json(const RiflExperimentConfig& c);

}  // namespace fabricsim::config
