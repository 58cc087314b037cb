// Unit tests for the fabric's event queue (models/fabric/core/radix_heap.h)
// and the ring buffer's reserve (models/link/core/ring_queue.h).

#include <cstdint>
#include <map>
#include <set>
#include <utility>

#include <gtest/gtest.h>

#include "models/fabric/core/radix_heap.h"
#include "models/link/core/counter_rng.h"
#include "models/link/core/ring_queue.h"

namespace {

using fabricsim::fabric_core::RadixHeap;

// Monotone use as in the fabric's loop: keys pushed are >= the last popped.
// Every pop returns a smallest key (checked against a multiset), and
// min_value() names an item holding that key before each pop (the prefetch
// hint), including after pushes that lower the minimum.
TEST(RadixHeap, PopsInKeyOrderAndMinValueNamesAMinimalItem) {
  RadixHeap h;
  std::multiset<std::pair<std::uint64_t, std::size_t>> ref;
  std::uint64_t last = 0;
  std::uint64_t x = 12345;
  auto rnd = [&x]() {
    x = fabricsim::link::mix64(x + 0x9E3779B97F4A7C15ULL);
    return x;
  };
  std::size_t checked = 0;
  for (int round = 0; round < 20000; ++round) {
    const int pushes = static_cast<int>(rnd() % 3);
    for (int i = 0; i < pushes; ++i) {
      // Equal keys, near keys and far keys (every bucket).
      const std::uint64_t r = rnd();
      const std::uint64_t key = last + (r % 4 == 0 ? 0 : (r >> 8) % (1ULL << (r % 40)));
      const std::size_t value = static_cast<std::size_t>(rnd() % 1000);
      h.push(key, value);
      ref.insert({key, value});
    }
    if (h.empty()) continue;
    const std::uint64_t m = h.min_key();
    ASSERT_EQ(m, ref.begin()->first);
    const std::size_t v = h.min_value();
    ASSERT_TRUE(ref.count({m, v}) > 0) << "min_value " << v << " holds no key " << m;
    ++checked;
    const auto [k, val] = h.pop();
    ASSERT_EQ(k, m);
    auto it = ref.find({k, val});
    ASSERT_NE(it, ref.end());
    ref.erase(it);
    last = k;
  }
  EXPECT_GT(checked, 10000u);
  EXPECT_EQ(h.size(), ref.size());
}

// reserve() allocates before use and keeps FIFO order and contents, like the
// growth it anticipates.
TEST(RingQueue, ReserveKeepsOrderAndContents) {
  fabricsim::link::RingQueue<std::uint64_t> q;
  q.reserve(16);
  EXPECT_TRUE(q.empty());
  const std::uint64_t* const slot = q.head_address();
  ASSERT_NE(slot, nullptr);
  for (std::uint64_t i = 0; i < 16; ++i) q.push_back(i);
  EXPECT_EQ(q.head_address(), slot);  // 16 fit: no reallocation
  for (int i = 0; i < 5; ++i) q.pop_front();
  q.reserve(40);  // grows 16 -> 64 with 11 elements, head wrapped away from 0
  for (std::uint64_t i = 16; i < 60; ++i) q.push_back(i);
  ASSERT_EQ(q.size(), 55u);
  for (std::uint64_t i = 5; i < 60; ++i) {
    ASSERT_EQ(q.front(), i);
    q.pop_front();
  }
  EXPECT_TRUE(q.empty());
}

}  // namespace
