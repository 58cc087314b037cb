#include "platform/sim/huge_pages.h"

#include <sys/mman.h>

#include <cstdint>
#include <cstdio>
#include <cstring>

namespace fabricsim::sim {

namespace {
#ifndef MADV_COLLAPSE
constexpr int kMadvCollapse = 25;  // Linux 6.1 (uapi asm-generic/mman-common.h)
#else
constexpr int kMadvCollapse = MADV_COLLAPSE;
#endif
constexpr std::uintptr_t kHuge = std::uintptr_t{2} << 20;
}  // namespace

std::size_t back_heap_with_huge_pages() {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  std::FILE* f = std::fopen("/proc/self/maps", "r");
  if (!f) return 0;
  std::uintptr_t a = 0, b = 0;
  char line[512];
  while (std::fgets(line, sizeof line, f)) {
    if (!std::strstr(line, "[heap]")) continue;
    unsigned long lo = 0, hi = 0;
    if (std::sscanf(line, "%lx-%lx", &lo, &hi) == 2) {
      a = lo;
      b = hi;
    }
    break;
  }
  std::fclose(f);
  // Only whole 2-MiB pages inside the heap.
  a = (a + kHuge - 1) & ~(kHuge - 1);
  b &= ~(kHuge - 1);
  if (b <= a) return 0;
  void* const p = reinterpret_cast<void*>(a);
  if (madvise(p, b - a, MADV_HUGEPAGE) != 0) return 0;
  madvise(p, b - a, kMadvCollapse);  // may fail (older kernel, no free huge page): the pages then stay small
  return b - a;
#else
  return 0;
#endif
}

}  // namespace fabricsim::sim
