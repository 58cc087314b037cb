#pragma once
// Studies: a grid of variants x policies x seeds over one fabric, each point
// run in its own process (SystemC cannot elaborate twice), collected into
// results.csv and summary.json with paired deltas (platform.md §4).
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace fabricsim::sim {

/// A named set of --set overrides applied to every point of the variant,
/// optionally with its own seeds.
struct StudyVariant {
  std::string name;
  std::vector<std::string> assignments;  ///< "key.path=value"
  std::vector<std::uint64_t> seeds;      ///< empty = the study's seeds
};

/// A parsed study file (docs/user-guide.md, "Studies").
struct Study {
  std::string name;
  std::string file;
  std::string fabric;                    ///< resolved path of the fabric file
  std::string fabric_kind;               ///< link-pair, ring, switched-pod, explicit
  std::vector<std::string> policies;
  std::vector<std::uint64_t> seeds;
  std::vector<std::string> common;       ///< overrides for every point
  std::vector<StudyVariant> variants;    ///< declared variants x grid points (empty = one unnamed)
  bool declared_variants = false;        ///< the file had `variants:` (adds a variant column by default)
  bool explicit_columns = false;         ///< the file lists `columns:` (then exactly those are written)
  std::vector<std::string> columns;      ///< results.csv columns, read from each point's result.json "row"
  std::vector<std::string> metrics;      ///< numeric columns summarised per cell; the others (but policy, seed) are axes
};

/// Parse and fully validate a study: the study file itself and the fabric
/// under every variant x policy. Throws config::ConfigError (file:line:key).
Study load_study(const std::string& path);

/// Options of one sweep.
struct SweepOptions {
  unsigned jobs = 1;
  std::string out_dir;
  std::string self_exe;  ///< path of the fabricsim binary to run per point
  bool progress = true;  ///< progress line on stderr when it is a terminal
};

/// Run every point not already done (resumable: a point whose result.json
/// exists with the same arguments and fabric bytes is reused), then write
/// results.csv and summary.json atomically. Returns 0 on success; on a failed
/// point prints its diagnosis to stderr and returns 3 without writing the tables.
int run_sweep(const Study& study, const SweepOptions& opt);

}  // namespace fabricsim::sim
