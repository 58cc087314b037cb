#include "platform/report/files.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace fabricsim::report {

namespace fs = std::filesystem;

void write_atomic(const fs::path& p, const std::string& content) {
  std::error_code ec;
  // A path that names a folder (it ends with '/') is refused before any
  // folder on it is created.
  if (!p.empty() && !p.has_filename()) throw std::runtime_error("cannot write " + p.string() + ": it names a folder");
  const fs::path dir = p.parent_path().empty() ? fs::path(".") : p.parent_path();
  fs::create_directories(dir, ec);
  if (ec) throw std::runtime_error("cannot create the folder " + dir.string() + ": " + ec.message());
  const fs::path tmp = p.string() + ".tmp";
  if (fs::is_directory(p, ec)) throw std::runtime_error("cannot write " + p.string() + ": it is a folder");
  {
    errno = 0;
    std::ofstream f(tmp, std::ios::binary);
    const int open_errno = f ? 0 : errno;  // why the open failed (the OS's reason)
    f << content;
    f.close();
    if (!f) {
      const int e = open_errno ? open_errno : errno;
      fs::remove(tmp, ec);
      throw std::runtime_error("cannot write " + tmp.string() + (e ? std::string(": ") + std::strerror(e) : ""));
    }
  }
  fs::rename(tmp, p, ec);
  if (ec) {
    fs::remove(tmp, ec);  // never leave FILE.tmp behind
    throw std::runtime_error("cannot write " + p.string() + ": " + ec.message());
  }
}

FolderLock lock_output_folder(const fs::path& dir, bool shared) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return errno == EACCES ? FolderLock::no_read_permission : FolderLock::unsupported;
  if (::flock(fd, (shared ? LOCK_SH : LOCK_EX) | LOCK_NB) == 0) return FolderLock::held;  // fd kept until exit
  const int err = errno;
  ::close(fd);
  return err == EWOULDBLOCK ? FolderLock::busy : FolderLock::unsupported;
}

std::string dangling_symlink_on(const fs::path& dir) {
  std::error_code ec;
  for (fs::path p = fs::absolute(dir, ec).lexically_normal(); !p.empty(); p = p.parent_path()) {
    if (fs::is_symlink(fs::symlink_status(p, ec)) && !fs::exists(fs::status(p, ec)))
      return p.string() + " -> " + fs::read_symlink(p, ec).string();
    if (fs::exists(fs::symlink_status(p, ec)) || p == p.parent_path()) break;  // the rest exists
  }
  return {};
}

bool read_file(const fs::path& p, std::string& out) {
  std::ifstream f(p, std::ios::binary);
  if (!f) return false;
  std::stringstream ss;
  ss << f.rdbuf();
  out = ss.str();
  return true;
}

}  // namespace fabricsim::report
