#include "platform/report/files.h"

#include <fstream>
#include <sstream>
#include <stdexcept>

namespace fabricsim::report {

namespace fs = std::filesystem;

void write_atomic(const fs::path& p, const std::string& content) {
  fs::create_directories(p.parent_path().empty() ? fs::path(".") : p.parent_path());
  const fs::path tmp = p.string() + ".tmp";
  std::error_code ec;
  if (fs::is_directory(p, ec)) throw std::runtime_error("cannot write " + p.string() + ": it is a folder");
  {
    std::ofstream f(tmp, std::ios::binary);
    f << content;
    f.close();
    if (!f) {
      fs::remove(tmp, ec);
      throw std::runtime_error("cannot write " + tmp.string());
    }
  }
  fs::rename(tmp, p, ec);
  if (ec) {
    fs::remove(tmp, ec);  // never leave FILE.tmp behind
    throw std::runtime_error("cannot write " + p.string() + ": " + ec.message());
  }
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
