#pragma once
// Transparent huge pages for the heap of a large fabric.
#include <cstddef>

namespace fabricsim::sim {

/// Ask the kernel to back the process heap (the brk area, where the link
/// directions' engines, queues and policies of a fabric live) with 2-MiB
/// transparent huge pages: madvise(MADV_HUGEPAGE) for what the heap grows
/// into, then MADV_COLLAPSE (Linux >= 6.1) for what it holds already.
/// A 1,024-accelerator pod spreads ~60 MB of per-direction state over
/// ~15,000 4-KiB pages, far beyond the TLB's reach, so nearly every event
/// paid a page walk besides its cache misses. Best effort: where the kernel
/// or its THP setting (`never`) does not allow it nothing happens. Changes
/// no result. Returns the bytes of heap the request covered (0: none).
std::size_t back_heap_with_huge_pages();

}  // namespace fabricsim::sim
