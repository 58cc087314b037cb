#pragma once
// YAML -> PCIe host (fabric.kind: pcie-host; docs/models/pcie.md): quadrants,
// host bridges, switch chips split in partitions, GPUs, host memory, the two
// host mechanisms, and the measurement workload (a GPU group, a transport or
// a selection policy, a size, a duration).
#include <nlohmann/json.hpp>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "models/accelerator/accelerator_params.h"
#include "models/pcie/core/pcie_engine.h"
#include "platform/config/yaml_config.h"
#include "platform/fabric/fabric_spec.h"
#include "sw/decode.h"
#include "sw/schedule.h"
#include "sw/selection.h"

namespace fabricsim::fabric {

/// The host's hardware.
struct HostSpec {
  std::string name = "host";
  std::string file;
  int quadrants = 0;
  struct Bridge {
    std::string bus;  ///< "00", "20", ...
    int quadrant = 0;
  };
  struct Partition {
    std::string name;  ///< "sw0.p0"
    int bridge = 0;    ///< index into bridges
  };
  struct Gpu {
    int partition = 0;
    std::uint32_t lanes = 16;
    std::uint32_t gen = 5;
    /// `address:` given: global base address of the GPU's memory (bytes);
    /// otherwise assigned (sim::host_address_map).
    bool has_address = false;
    std::uint64_t address = 0;
    SourceRef address_src;  ///< where `address:` is (or the GPU's id, if absent)
  };
  std::vector<Bridge> bridges;
  std::vector<Partition> partitions;
  std::vector<Gpu> gpus;  ///< by GPU id
  // Links (host-bridge.md §8): PCIe generation and width -> raw rate; TLP payload efficiency.
  std::uint32_t gen = 5, lanes = 16;
  std::uint64_t max_payload = 256, tlp_overhead = 24;
  // Latencies, ps.
  std::uint64_t switch_ps = 0, host_bridge_ps = 0, quadrant_ps = 0, data_fabric_ps = 0, host_memory_ps = 0;
  // Bandwidths, bytes per second (0: no limit).
  double nbio_port_Bps = 0, data_fabric_port_Bps = 0, host_memory_Bps = 0;
  std::uint64_t host_memory_bytes = 256ull << 20;
  /// fabric.host_memory.address given: its global base address (bytes).
  bool host_memory_has_address = false;
  std::uint64_t host_memory_address = 0;
  SourceRef host_memory_address_src;  ///< where `address:` is (or fabric.host_memory, if absent)
  /// First global address the assignment of base addresses tries (fabric.address_base, bytes; default 0).
  std::uint64_t address_base = 0;
  pcie::PcieEngineParams engine;  ///< burst, interleave, stall calendar, read stall, write ordering
  models::accelerator_params gpu;
};

/// What one run measures (docs/models/pcie.md, "Harness").
struct HostWorkload {
  std::vector<int> group{0, 1, 2, 3};  ///< GPU ids; rank i = group[i]
  std::string transport = "pull";      ///< a transport name, or "select" (selection policy below)
  std::uint64_t size_bytes = 80 * 1024;
  std::uint64_t duration_ps = 0;  ///< 0: auto = whole stall periods covering min_duration
  std::uint64_t min_duration_ps = 3'000'000'000'000ull;
  std::uint64_t ops = 0;                   ///< > 0: exactly this many operations instead of a duration
  std::uint64_t barrier_ps = 0;            ///< cost of the cross-GPU start barrier (included in every operation)
  std::uint64_t chunk_bytes = 256 * 1024;  ///< bulk transports
  bool kernel_barriers = false;  ///< one-shot transports open and close with a barrier of flag writes over PCIe
  bool data = false;             ///< move real bytes (and verify) — slow for long cells; default true with a schedule
  bool verify = true;
  // ---- a user's schedule (workload.algorithm: schedule; docs/models/pcie.md "Schedules") ----
  /// Loaded, validated and checked against the group and size; null for a
  /// transport run. Schedule rank i runs on GPU group[i]; every operation of
  /// the harness runs it once (default ops: 1).
  std::shared_ptr<const sw::Schedule> schedule;
  std::string schedule_path;       ///< workload.schedule as resolved (host file's folder, else the current one)
  sw::Op collective = sw::Op::allreduce;  ///< the schedule's collective
  int root = 0;                    ///< broadcast root (schedule rank)
};

/// Decode-round workload with transport selection (host-bridge.md §6,
/// collectives.md §5-§6): the program's spec (sw/decode.h), parsed from the
/// `decode:` section.
using DecodeSpec = sw::DecodeSpec;

/// Everything one host run needs.
struct HostRunConfig {
  HostSpec host;
  HostWorkload workload;
  bool decode_mode = false;  ///< workload.mode: decode
  DecodeSpec decode;
  std::uint64_t seed = 1;
  std::uint64_t deadline_ps = 0;  ///< simulated-time watchdog
};

/// Parse a pcie-host file. Throws config::ConfigError naming file, line and
/// key: unknown keys, bad units, a GPU on a missing partition, a partition on
/// a missing host bridge, a host bridge in a missing quadrant, a GPU listed
/// twice or missing from the id sequence, a group naming a missing GPU or one
/// twice, a stall window longer than its period or windows that do not fit.
HostRunConfig parse_host(config::Section root);

/// Load a ladder file (ladder: {name, buckets: [{max: 12KiB, transport: full}, ...]}).
/// Throws config::ConfigError naming file, line and key.
sw::Ladder load_ladder(const std::string& path);

/// Raw PCIe rate of gen/lanes after line coding, bytes per second (Gen5 x16: 63.0 GB/s).
double pcie_raw_Bps(std::uint32_t gen, std::uint32_t lanes);

/// The engine's tree for `group` (ranks 0..N-1) plus host memory (rank N).
std::vector<pcie::PcieNode> host_tree(const HostSpec& h, const std::vector<int>& group);

/// Quadrant of GPU `id`.
int gpu_quadrant(const HostSpec& h, int id);

/// Effective configuration echo for result.json.
nlohmann::ordered_json to_json(const HostRunConfig& c);

/// `fabricsim check` text: counts, GPUs per host bridge, and the path class
/// (same partition, same quadrant, cross-quadrant) of every pair in the
/// workload's group.
std::string host_summary(const HostRunConfig& c);

/// The whole host (every GPU) as Graphviz DOT, through Boost.Graph.
std::string host_dot(const HostSpec& h);

}  // namespace fabricsim::fabric
