#include "tests/fuzz/fuzz_common.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <fstream>

#include "platform/config/yaml_config.h"
#include "platform/fabric/fabric_graph.h"

#ifndef FABRICSIM_SOURCE_DIR
#define FABRICSIM_SOURCE_DIR "."
#endif

// Debian's libsystemc defines main() and calls sc_main(); libFuzzer brings its
// own main(), which wins, but the library still needs the symbol.
extern "C" int sc_main(int, char*[]) { return 0; }

namespace fabricsim::fuzz {
namespace fs = std::filesystem;

namespace {
[[noreturn]] void die(const std::string& what) {
  std::fprintf(stderr, "fuzz scaffolding: %s\n", what.c_str());
  std::abort();
}

std::string make_scratch() {
  const char* tmp = std::getenv("TMPDIR");
  std::string tmpl =
      std::string(tmp && *tmp ? tmp : (fs::is_directory("/dev/shm") ? "/dev/shm" : "/tmp")) + "/fabricsim-fuzz-XXXXXX";
  if (!mkdtemp(tmpl.data())) die("cannot create a scratch folder from " + tmpl);
  const fs::path dir(tmpl);
  const fs::path topo = fs::path(FABRICSIM_SOURCE_DIR) / "topologies";
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(topo, ec))
    if (e.is_regular_file() && e.path().extension() == ".yaml") fs::copy_file(e.path(), dir / e.path().filename(), ec);
  if (!ec) fs::copy(topo / "ladders", dir / "ladders", fs::copy_options::recursive, ec);
  if (!ec) fs::create_directory(dir / "studies", ec);
  if (ec) die("cannot fill " + dir.string() + ": " + ec.message());
  return dir.string();
}
}  // namespace

const std::string& scratch_dir() {
  // Never destroyed, so the exit handler below can still read it.
  static const std::string* dir = [] {
    auto* d = new std::string(make_scratch());
    // Leave no scratch folder behind when libFuzzer exits normally.
    std::atexit([] {
      std::error_code ignored;
      fs::remove_all(scratch_dir(), ignored);
    });
    return d;
  }();
  return *dir;
}

std::string write_input(const std::string& rel, const std::uint8_t* data, std::size_t size) {
  const std::string path = (fs::path(scratch_dir()) / rel).string();
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  f.close();
  if (!f) die("cannot write " + path);
  return path;
}

void expect_clean(const std::function<void()>& load) {
  try {
    load();
  } catch (const config::ConfigError&) {
  } catch (const fabric::FabricError&) {
  } catch (const std::exception& e) {
    std::fprintf(stderr, "loader let an unclassified exception escape (exit status 1 at the command line): %s\n",
                 e.what());
    std::abort();
  }
}

}  // namespace fabricsim::fuzz
