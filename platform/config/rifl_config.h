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

/// The protocol keys of a `rifl:` section, as an overlay on `c` (keys
/// present replace c's values): frame_bits, lanes, transceiver_latency,
/// lane_skew, retransmit_buffer, fc_buffer, fc_on, fc_off, clock_offset_ppm,
/// resync_frames, channel. `fabric_link`: the section belongs to a fabric
/// link, whose lane rate (forward_rate / lanes) and cable (propagation) come
/// from the link, so lane_rate, cable_length_m and cable_ns_per_m are errors;
/// otherwise they are read too. Returns true if the section's channel gives
/// Gilbert-Elliott chain parameters of its own. Errors (ConfigError) name
/// file, line and key; the derived bounds are checked by check_rifl_bounds().
bool parse_rifl_keys(Section& s, rifl::RiflConfig& c, bool fabric_link);

/// rifl::derive(c), its std::invalid_argument as a ConfigError at the key it
/// names in `s` (or its channel: section for the BER).
void check_rifl_bounds(const Section& s, const rifl::RiflConfig& c);

/// The `rifl:` parameters as JSON (units in key names), derived values included.
nlohmann::ordered_json rifl_json(const rifl::RiflConfig& c);

/// The channel in a summary line: "BER 1e-09 / 1e-09" (independent, per
/// direction) or "Gilbert-Elliott channel" (its `ber` keys do not apply).
std::string rifl_channel_text(const rifl::RiflConfig& c);

}  // namespace fabricsim::config
