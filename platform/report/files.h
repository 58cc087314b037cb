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

/// How lock_output_folder() ended.
enum class FolderLock { held, busy, no_read_permission, unsupported };

/// Lock the output folder `dir` (an existing folder) for this process's
/// life: flock(2) on the folder itself, so nothing is added to it; shared
/// (the shares of a sweep run at once) or exclusive (a run, a whole sweep,
/// --collect). Returns busy if another process holds a conflicting lock,
/// no_read_permission if the folder cannot be opened to lock it,
/// unsupported if it cannot be opened otherwise or the file system has no
/// flock (ENOLCK: then nothing is locked). Throws nothing. A process holds
/// one such lock: call it once.
FolderLock lock_output_folder(const std::filesystem::path& dir, bool shared);

/// Whole file into `out`; false if it cannot be opened.
bool read_file(const std::filesystem::path& path, std::string& out);

}  // namespace fabricsim::report
