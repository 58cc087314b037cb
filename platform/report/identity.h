#pragma once
// Identity of the program and of a run, so that no output can be taken for
// another run's (docs/user-guide.md, "Output folders" and "Resuming a sweep").
//   program: version (CMake project version) + build id (the executable's
//            GNU build-id note, else an FNV-1a 64 hash of the executable);
//   run:     seed + config hash (FNV-1a 64 of the effective configuration,
//            i.e. the fabric document after every override, and of every file
//            it references, such as ladders).
#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace fabricsim::report {

/// FNV-1a 64 of `bytes` as 16 lower-case hex digits (not cryptographic: it
/// tells versions of a file apart, it does not defend against forgery).
std::string fnv1a64_hex(const std::string& bytes);

/// The running program: {"name": "fabricsim", "version": "0.1.0", "build_id": "<hex>"}.
/// Computed once per process.
const nlohmann::ordered_json& program_identity();

/// A file a run read, with the FNV-1a 64 hash of its bytes.
struct InputFile {
  std::string path;
  std::string fnv1a64;
};

/// Identity of one run.
struct RunIdentity {
  std::uint64_t seed = 0;
  std::string config_hash;        ///< 16 hex digits
  std::vector<InputFile>
      inputs;  ///< every file the configuration was read from, in load order (hash "absent": looked for, not found)
  /// "seed<N>-config<hash>": the value of the run_id column in CSV outputs.
  std::string id() const;
  /// {"id", "seed", "config_hash", "program": program_identity(), "inputs": [{"file", "fnv1a64"} or {"file", "absent":
  /// true}]}.
  nlohmann::ordered_json json() const;
};

/// Identity from the effective configuration text (the fabric document after
/// overrides, serialised) and the files read; the first input (the fabric
/// file itself) enters through `effective_config`, the others by their hash.
RunIdentity make_run_identity(std::uint64_t seed, const std::string& effective_config,
                              const std::vector<InputFile>& inputs);

/// `csv` with a trailing run_id column: ",run_id" appended to the header line
/// and ",<id>" to every data line (the id holds no comma or quote).
std::string with_run_id_column(const std::string& csv, const std::string& id);

}  // namespace fabricsim::report
