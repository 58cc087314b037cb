#pragma once
// Shared scaffolding of the loader fuzz targets (docs/testing.md, "Fuzzing").
// The loaders read files, so each input is written to a file in a private
// scratch folder that also holds copies of the shipped fabrics and ladders:
// relative references (a study's `fabric: ../frank2.yaml`, a host file's
// `ladder: ladders/...`) resolve as they do next to the shipped files.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

namespace fabricsim::fuzz {

/// The scratch folder, created once per process: copies of the shipped
/// topologies/*.yaml and topologies/ladders/, plus an empty studies/.
/// Aborts if it cannot be created (the fuzz run would be void).
const std::string& scratch_dir();

/// Write `size` bytes of `data` to `rel` inside scratch_dir(); returns the
/// full path. Aborts on a write error.
std::string write_input(const std::string& rel, const std::uint8_t* data, std::size_t size);

/// Run one loader call. config::ConfigError and fabric::FabricError are the
/// expected outcome of bad input (exit status 2 at the command line). Any other
/// exception escaping the loader would reach the user as exit status 1 with a
/// raw message: print it and abort, so libFuzzer keeps the input as a crash.
void expect_clean(const std::function<void()>& load);

}  // namespace fabricsim::fuzz
