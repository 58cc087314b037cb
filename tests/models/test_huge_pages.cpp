// back_heap_with_huge_pages (platform/sim/huge_pages.h): covers whole 2-MiB
// pages of the heap only and leaves every byte of it as it was.
#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "platform/sim/huge_pages.h"

TEST(HugePages, HeapRequestCoversWholeHugePagesAndKeepsContents) {
  // ~12 MiB in small blocks (below malloc's mmap threshold: on the heap).
  std::vector<std::unique_ptr<std::uint64_t[]>> blocks;
  constexpr std::size_t kWords = 512;  // 4 KiB
  for (std::size_t b = 0; b < 3000; ++b) {
    blocks.emplace_back(new std::uint64_t[kWords]);
    for (std::size_t i = 0; i < kWords; ++i) blocks.back()[i] = b * 1000003u + i;
  }
  const std::size_t covered = fabricsim::sim::back_heap_with_huge_pages();
  // 0 where unsupported (e.g. a sanitizer's allocator keeps no brk heap).
  EXPECT_EQ(covered % (std::size_t{2} << 20), 0u);
  for (std::size_t b = 0; b < blocks.size(); ++b)
    for (std::size_t i = 0; i < kWords; ++i) ASSERT_EQ(blocks[b][i], b * 1000003u + i) << "block " << b;
}
