#pragma once
// YAML -> FabricSpec + workload (docs/user-guide.md, "Fabric files").
// Generators: `ring` (N accelerators, link acc_i.port1 <-> acc_{i+1}.port0),
// `switched-pod` (N accelerators x S UALink switches, acc_i.port_s <->
// sw_s.port_i), `explicit` (nodes and links lists). Defaults at the top
// (`defaults.link`, `defaults.accelerator`, `defaults.switch`), overrides per
// link (`link_overrides`, or `link:` inside an explicit link).
#include <nlohmann/json.hpp>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "platform/config/yaml_config.h"
#include "platform/fabric/fabric_spec.h"
#include "sw/collectives.h"
#include "sw/schedule.h"

namespace fabricsim::fabric {

/// The workload run on the accelerators.
struct WorkloadSpec {
  sw::CollectiveSpec collective;
  int iterations = 1;
  bool verify = true;  ///< check every output element against the expected value
  bool data = true;    ///< move real bytes (false: timing only, no accelerator memory allocated)
  /// false: no workload runs; the platform is driven by user code (external
  /// TLM-2.0 initiators, own programs) and `memory: auto` gives 1 MiB.
  /// Not a YAML key: set by programs that build a sim::FabricPlatform.
  bool run = true;
  SourceRef size_src;  ///< where workload.size (or the workload section) is, for memory errors
  // ---- users' schedules (workload.algorithm: schedule; docs/collectives.md "Schedules") ----
  /// The loaded and validated schedule; null for a built-in algorithm (then
  /// collective.algorithm names it; with a schedule it is "schedule").
  std::shared_ptr<const sw::Schedule> schedule;
  std::string schedule_path;  ///< workload.schedule as resolved (fabric file's folder, else the current one)
  std::vector<int> rank_map;  ///< schedule rank -> accelerator rank (workload.rank_map); empty: in order
};

/// Everything one fabric run needs.
struct FabricRunConfig {
  FabricSpec fabric;
  WorkloadSpec workload;
  link::LinkConfig default_link;  ///< defaults.link after parsing (policy name reported as "policy")
  LinkProtocolSpec default_proto;  ///< defaults.link.protocol and defaults.link.rifl
  /// Where the links without an override of their own take their RIFL
  /// parameters: defaults.link.rifl, else defaults.link.protocol, else
  /// defaults.link (empty key: none of them is written).
  SourceRef default_link_src;
  std::uint64_t seed = 1;
  std::uint64_t deadline_ps = 0;  ///< simulated-time watchdog (run.deadline; default 10 s)
};

/// workload.schedule of section `w` (docs/collectives.md "Schedules"), for
/// every fabric kind: the path resolved beside the fabric file, else in the
/// current folder (stored in `path`); its bytes recorded in
/// config::files_read() (the run's identity); loaded and validated. Throws
/// ConfigError at key 'schedule' (a missing file; the schedule's own
/// "FILE:LINE: what" for a malformed one), or at 'algorithm' if the key is
/// absent.
std::shared_ptr<const sw::Schedule> load_workload_schedule(config::Section& w, std::string& path);

/// sw::check_run against a run of `ranks` accelerators, `explicit_op` (the
/// workload's collective when written) and size `bytes`, as a ConfigError at
/// the key concerned: 'collective', 'size' (sizes and chunk counts), else
/// 'schedule' (falling back to 'schedule' where the key is not written).
void check_workload_schedule(config::Section& w, const sw::Schedule& s, int ranks, const sw::Op* explicit_op,
                             std::uint64_t bytes);

/// Kind of a fabric file without parsing it all: the value of fabric.kind
/// ("link-pair", "ring", ...). Throws ConfigError if absent.
std::string fabric_kind(const config::Document& doc);

/// True if `id` can name a node of a UALink fabric: 1 to 256 characters, each
/// a letter, digit, '_' or '-'. Dots would split the NODE.PORT endpoint syntax
/// and SystemC's module hierarchy, spaces are illegal in SystemC names, and
/// commas or quotes would break links.csv.
bool valid_node_id(const std::string& id);

/// "file:line:col" of `key` in section `s` as Section::fail writes it (or
/// "--set ..." for a value from the command line), for errors found after
/// parsing (SourceRef::where).
std::string where_of(const config::Section& s, const std::string& key);

/// A global address at `key` (fabric.address_base, a node's or host memory's
/// `address:`): "0x..." (hex, at most 64 bits) or a byte count with an
/// optional unit ("1GiB"). Throws ConfigError at `key` if it is neither or
/// not a multiple of fabric_core::AddressMap::kAlign (4 KiB).
std::uint64_t parse_address(config::Section& s, const std::string& key);

/// Parse a ring / switched-pod / explicit fabric file. Throws ConfigError
/// naming file, line and key for unknown keys, bad units, duplicate or
/// malformed node ids, node kinds other than accelerator and ualink-switch,
/// dangling link endpoints, a port used twice, bad workload parameters;
/// unreachable ranks are reported by FabricGraph (FabricError).
FabricRunConfig parse_fabric(config::Section root);

/// Effective configuration echo for result.json.
nlohmann::ordered_json to_json(const FabricRunConfig& c);

}  // namespace fabricsim::fabric
