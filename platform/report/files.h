#pragma once
// Output files are written whole or not at all (platform.md §5: nothing
// half-written): content goes to FILE.tmp, then is renamed over FILE.
#include <filesystem>
#include <string>

namespace fabricsim::report {

/// Write `content` to `path` atomically, creating parent directories.
/// Throws std::runtime_error if the file cannot be written (also when `path`
/// is a folder or ends with '/', then before creating anything); FILE.tmp is
/// removed on any failure.
void write_atomic(const std::filesystem::path& path, const std::string& content);

/// An output folder's path that runs through a symbolic link to nothing
/// (`ln -s nowhere out`): creating the folder fails with "File exists", and
/// removing what was created on the way would remove the user's link.
/// Returns "LINK -> TARGET" for the first such link on `dir` or its
/// parents, "" if there is none.
std::string dangling_symlink_on(const std::filesystem::path& dir);

/// Whole file into `out`; false if it cannot be opened.
bool read_file(const std::filesystem::path& path, std::string& out);

}  // namespace fabricsim::report
