#pragma once
// What the machine running the simulation offers (memory), for the estimates
// that turn a configuration too large for it into bad input up front.
#include <cstdint>

namespace fabricsim::config {

/// Memory this process can still allocate and touch, in bytes: Linux
/// MemAvailable from /proc/meminfo, else free physical pages; 0 if unknown
/// (then no estimate is enforced).
std::uint64_t available_memory_bytes();

}  // namespace fabricsim::config
