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
  /// Study-file line of each declared assignment (the variant's `set`), for
  /// errors found at validation; grid assignments appended after them have none.
  std::vector<int> assignment_lines;
  std::vector<int> assignment_columns;   ///< and its column
  std::vector<std::uint64_t> seeds;      ///< empty = the study's seeds
  /// The variant's own fabric file (resolved path; empty = the study's), so
  /// one study can put different run kinds side by side (e.g. a link-pair
  /// and a rifl-link experiment, topologies/studies/link-protocols.yaml).
  std::string fabric;
  std::string fabric_kind;            ///< kind of `fabric` (empty = the study's)
  std::vector<std::string> policies;  ///< empty = the study's (or "none" for a kind without a policy)
  /// The variant's own `metrics:` (empty = the study's). Columns that are
  /// another variant's metrics and not keys of this variant's rows are
  /// written empty for its points, so a link leg's goodput and a collective
  /// leg's completion time share one results.csv.
  std::vector<std::string> metrics;
};

/// A parsed study file (docs/user-guide.md, "Studies").
struct Study {
  std::string name;
  std::string file;
  std::string fabric;       ///< resolved path of the fabric file
  std::string fabric_kind;  ///< link-pair, ring, switched-pod, explicit
  std::vector<std::string> policies;
  std::vector<std::uint64_t> seeds;
  std::vector<std::string> common;     ///< overrides for every point
  std::vector<int> common_lines;       ///< study-file line of each `common` entry (study.set)
  std::vector<int> common_columns;     ///< and its column
  std::vector<StudyVariant> variants;  ///< declared variants x grid points (empty = one unnamed)
  bool declared_variants = false;      ///< the file had `variants:` (adds a variant column by default)
  bool explicit_columns = false;       ///< the file lists `columns:` (then exactly those are written)
  std::vector<std::string> columns;    ///< results.csv columns, read from each point's result.json "row"
  std::vector<std::string> metrics;    ///< numeric columns summarised per cell; the others (but policy, seed) are axes
};

/// The metrics of variant `v`: its own `metrics:` or the study's.
const std::vector<std::string>& variant_metrics(const Study& st, const StudyVariant& v);
/// Every variant's metrics, the study's first, each once (= study.metrics
/// unless a variant lists its own).
std::vector<std::string> all_metrics(const Study& st);

/// A study's or variant's name as one folder name: '/', '\\' and ' ' become
/// '_' ("400Gb/s" -> "400Gb_s", "my study" -> "my_study"); the name is kept
/// as is in the tables.
std::string folder_name(const std::string& name);

/// Parse and fully validate a study: the study file itself and the fabric
/// under every variant x policy. Throws config::ConfigError (file:line:key).
Study load_study(const std::string& path);

/// Options of one sweep.
struct SweepOptions {
  unsigned jobs = 1;
  std::string out_dir;
  std::string self_exe;      ///< path of the fabricsim binary to run per point
  bool progress = true;      ///< progress line on stderr when it is a terminal
  bool fresh = false;        ///< rerun every point, reuse nothing
  unsigned shard_index = 0;  ///< --shard I/N: run only points i with i % N == I - 1 (1-based I), no tables
  unsigned shard_count = 0;  ///< N of --shard I/N; 0 = all points
  bool collect = false;      ///< --collect: run nothing, write the tables if every point is finished and current
};

/// Whether this program was built with MPI (OpenMPI): `mpirun -np K fabricsim sweep`.
bool mpi_available();
/// Number of ranks of the MPI launch this process belongs to (1 if not launched by mpirun).
int mpi_launch_size();
/// Whether this process is an MPI rank other than 0 (it then prints no errors, rank 0 does).
bool mpi_secondary_rank();
/// Environment variable a sweep sets for the `fabricsim run` of each point it
/// starts, so that a point run by an MPI worker rank (which inherits the
/// rank's MPI environment) is not taken for a `run` launched by mpirun. Its
/// value is the sweep's process id: the point's run asks the kernel for
/// SIGTERM when that parent dies (end_with_sweep()).
inline constexpr const char* kSweepPointEnv = "FABRICSIM_SWEEP_POINT";

/// Run every point not already done, then write results.csv and summary.json
/// atomically. Resume rule (docs/user-guide.md): a point's result.json is
/// reused only if the sweep recorded it as finished (result.stamp holds its
/// hash), it was written by this very program (version and build id in its
/// "run.program"), with the same arguments (args.txt), and every input file
/// it lists under "run.inputs" (fabric, ladders, ...) still has the same bytes.
/// Prints one line with the number of points reused and why the others run.
/// The previous results.csv / summary.json are removed before anything runs.
/// Returns 0 on success; 3 on a failed point (its diagnosis on stderr, no
/// tables); 128+signal if interrupted by SIGINT / SIGTERM (finished points are
/// kept, no tables). Throws config::ConfigError if the output folder cannot be
/// written.
///
/// Under mpirun (K > 1 ranks, built with MPI) rank 0 hands out points to
/// ranks 1..K-1 as they become free and writes the tables; with --shard I/N
/// only that share runs and no tables are written; with --collect nothing runs
/// and the tables are written only if every point passes the resume rule
/// (else 3, naming how many are missing or stale). The tables are
/// byte-identical whichever way the points ran.
int run_sweep(const Study& study, const SweepOptions& opt);

}  // namespace fabricsim::sim
