#pragma once
// Output files are written whole or not at all (platform.md §5: nothing
// half-written): content goes to FILE.tmp, then is renamed over FILE.
#include <filesystem>
#include <string>

namespace fabricsim::report {

/// Write `content` to `path` atomically, creating parent directories.
/// Throws std::runtime_error if the file cannot be written (also when `path`
/// is a folder); FILE.tmp is removed on any failure.
void write_atomic(const std::filesystem::path& path, const std::string& content);

/// Whole file into `out`; false if it cannot be opened.
bool read_file(const std::filesystem::path& path, std::string& out);

}  // namespace fabricsim::report
