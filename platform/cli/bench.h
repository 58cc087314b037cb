#pragma once
#include <string>

namespace fabricsim::cli {

/// `fabricsim bench`: run every point of a link-pair study (all variants) through
/// the link engine in this process, on one core, and print simulated flit
/// transmissions per wall-second. Returns the exit status.
/// Throws config::ConfigError on a bad study or fabric.
int run_bench(const std::string& study_file);

}  // namespace fabricsim::cli
