#include "platform/config/machine.h"

#include <unistd.h>

#include <fstream>
#include <string>

namespace fabricsim::config {

std::uint64_t available_memory_bytes() {
  // Linux: MemAvailable (free memory plus what the kernel can reclaim) in kB.
  std::ifstream f("/proc/meminfo");
  std::string key;
  std::uint64_t kb = 0;
  std::string unit;
  while (f >> key >> kb >> unit)
    if (key == "MemAvailable:") return kb * 1024;
  const long pages = sysconf(_SC_AVPHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  return pages > 0 && page > 0 ? static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(page) : 0;
}

}  // namespace fabricsim::config
