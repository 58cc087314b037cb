#pragma once
#include <string>
#include <vector>

namespace fabricsim::cli {

/// What `fabricsim bench` times.
struct BenchArgs {
  std::string fabric;             ///< fabric YAML (link-pair or switched fabric)
  std::vector<std::string> sets;  ///< --set overrides passed to every run
  unsigned repeat = 3;            ///< runs per binary
  std::string against;            ///< optional second binary, run interleaved with this one
  std::string self_exe;           ///< this program (the child runs `SELF run ...`)
};

/// `fabricsim bench`: time the path users run. Each repetition is a child
/// process `fabricsim run FABRIC --set ... --quiet` (process start, parsing,
/// elaboration, simulation and writing the outputs included), timed from
/// fork to exit on the wall clock; its CPU time and peak RSS come from
/// wait4(). Prints, per binary, the median wall and CPU time, flit
/// transmissions (from result.json) per wall-second and per CPU-second, and
/// peak RSS. With `against`, the other binary runs the same command
/// interleaved (A B A B ...: the machine's speed drift hits both alike), the
/// ratio of medians is printed and the two binaries' outputs (result.json,
/// collectives.csv, links.csv) are compared byte for byte. For a link-pair
/// fabric it also times the bare link-engine loop in this process (no
/// SystemC, no process start) on the same configuration, as the floor.
/// Returns the exit status: 0, 3 if a child run failed (its stderr passes
/// through). Throws config::ConfigError on a bad fabric or override (exit 2)
/// and for fabrics without flits (pcie-host).
int run_bench(const BenchArgs& a);

}  // namespace fabricsim::cli
