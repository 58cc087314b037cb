#include "platform/report/identity.h"

#include <elf.h>
#include <link.h>

#include <fmt/format.h>

#include <cstring>

#include "platform/report/files.h"

#ifndef FABRICSIM_VERSION
#define FABRICSIM_VERSION "unknown"
#endif

namespace fabricsim::report {

std::string fnv1a64_hex(const std::string& bytes) {
  std::uint64_t h = 14695981039346656037ULL;  // FNV-1a 64 offset basis
  for (unsigned char c : bytes) h = (h ^ c) * 1099511628211ULL;
  return fmt::format("{:016x}", h);
}

namespace {
// The GNU build-id note of the main executable (ld --build-id, on by default in
// Debian's toolchain): a hash of the linked image, free to read at run time.
int find_build_id(struct dl_phdr_info* info, size_t, void* data) {
  auto* out = static_cast<std::string*>(data);
  if (info->dlpi_name && info->dlpi_name[0] != '\0') return 0;  // the main program comes first, unnamed
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_NOTE) continue;
    const char* p = reinterpret_cast<const char*>(info->dlpi_addr + ph.p_vaddr);
    const char* end = p + ph.p_memsz;
    while (p + sizeof(ElfW(Nhdr)) <= end) {
      ElfW(Nhdr) nh;
      std::memcpy(&nh, p, sizeof nh);
      const char* name = p + sizeof nh;
      const char* desc = name + ((nh.n_namesz + 3) & ~3u);
      if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 && std::memcmp(name, "GNU", 4) == 0 &&
          desc + nh.n_descsz <= end) {
        for (unsigned k = 0; k < nh.n_descsz; ++k) *out += fmt::format("{:02x}", static_cast<unsigned char>(desc[k]));
        return 1;
      }
      p = desc + ((nh.n_descsz + 3) & ~3u);
    }
  }
  return 1;
}
}  // namespace

const nlohmann::ordered_json& program_identity() {
  static const nlohmann::ordered_json id = [] {
    std::string build;
    dl_iterate_phdr(find_build_id, &build);
    if (build.empty()) {
      std::string exe;
      build = read_file("/proc/self/exe", exe) ? "fnv1a64:" + fnv1a64_hex(exe) : "unknown";
    }
    nlohmann::ordered_json j;
    j["name"] = "fabricsim";
    j["version"] = FABRICSIM_VERSION;
    j["build_id"] = build;
    return j;
  }();
  return id;
}

std::string RunIdentity::id() const { return fmt::format("seed{}-config{}", seed, config_hash); }

nlohmann::ordered_json RunIdentity::json() const {
  nlohmann::ordered_json j;
  j["id"] = id();
  j["seed"] = seed;
  j["config_hash"] = config_hash;
  j["program"] = program_identity();
  j["inputs"] = nlohmann::ordered_json::array();
  for (const auto& f : inputs)
    if (f.fnv1a64 == "absent")  // config::kAbsentFile: looked for, not found
      j["inputs"].push_back({{"file", f.path}, {"absent", true}});
    else
      j["inputs"].push_back({{"file", f.path}, {"fnv1a64", f.fnv1a64}});
  return j;
}

RunIdentity make_run_identity(std::uint64_t seed, const std::string& effective_config,
                              const std::vector<InputFile>& inputs) {
  RunIdentity r;
  r.seed = seed;
  r.inputs = inputs;
  std::string all = effective_config;
  for (std::size_t i = 1; i < inputs.size(); ++i) all += "\n#input " + inputs[i].fnv1a64;
  r.config_hash = fnv1a64_hex(all);
  return r;
}

std::string with_run_id_column(const std::string& csv, const std::string& id) {
  std::string out;
  out.reserve(csv.size() + 64);
  bool header = true;
  std::size_t start = 0;
  while (start < csv.size()) {
    std::size_t nl = csv.find('\n', start);
    if (nl == std::string::npos) nl = csv.size();
    const std::string line = csv.substr(start, nl - start);
    if (!line.empty()) {
      out += line + (header ? ",run_id" : "," + id) + "\n";
      header = false;
    }
    start = nl + 1;
  }
  return out;
}

}  // namespace fabricsim::report
