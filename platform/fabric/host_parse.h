#pragma once
// Internal to platform/fabric: the section readers that parse_host runs in
// file order (host_config.cpp). Each reads one YAML section of a pcie-host
// file (docs/models/pcie.md) into the run configuration and throws
// config::ConfigError naming file, line and key. Sections are passed by
// reference: a reader marks the keys it reads in the caller's section, which
// that caller's finish() then checks for unknown keys.
#include "platform/fabric/host_config.h"

namespace fabricsim::fabric::host_parse {

/// fabric: name, quadrants, link, latency, bandwidth, host_bridges, switches,
/// gpus, host_memory (host_hardware.cpp). Returns the fabric.host_memory
/// section, which check_memory_fit names when a transport does not fit.
config::Section fabric_section(config::Section& root, HostSpec& H);

/// gpu: the GPU model (reduce rate, DMA setup, memory latency, threadblock rate).
void gpu_section(config::Section& root, HostSpec& H);

/// mechanisms: read_stall (stall calendar and read-stall costs) and write_ordering.
void mechanisms_section(config::Section& root, HostSpec& H);

/// engine: burst, read request and interleave of the PCIe engine.
void engine_section(config::Section& root, HostSpec& H);

/// workload: group, transport or a user's schedule, size, duration, ops and
/// flags, mode (host_workload.cpp). Needs the GPUs of c.host. Returns the
/// workload section, which check_memory_fit names for `data`.
config::Section workload_section(config::Section& root, HostRunConfig& c);

/// decode: selection policy, AllReduce sizes, race candidates and ladder files
/// (host_decode.cpp). Needs c.workload (group) and c.decode_mode.
void decode_section(config::Section& root, HostRunConfig& c);

/// Every transport the run can use must fit in host memory (blamed on
/// `host_memory`.size) and real bytes in at most 8 GiB of RAM (blamed on
/// `workload`.data).
void check_memory_fit(const HostRunConfig& c, const config::Section& host_memory, const config::Section& workload);

/// run: seed and simulated-time deadline.
void run_section(config::Section& root, HostRunConfig& c);

}  // namespace fabricsim::fabric::host_parse
