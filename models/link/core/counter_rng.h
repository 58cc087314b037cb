#pragma once
// Counter-based random numbers: a value is a pure function of its key, so a
// stream can be read at any index in any order and two policies that visit the
// same (seed, link, step, attempt) see the same draw (paired comparisons,
// link-layer.md §2).
#include <cstdint>

namespace fabricsim::link {

/// SplitMix64 finaliser (Steele, Lea, Flood, "Fast splittable pseudorandom
/// number generators", OOPSLA 2014). Bijective 64-bit mix.
constexpr std::uint64_t mix64(std::uint64_t z) {
  z += 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

/// key_hash in stages, for a caller that draws many values under one (seed,
/// link id), or several under one index: key_hash(s, l, i, a, t) ==
/// key_attempt(key_index(key_stream(s, l), i), a, t).
constexpr std::uint64_t key_stream(std::uint64_t seed, std::uint64_t link_id) { return mix64(mix64(seed) ^ link_id); }
constexpr std::uint64_t key_index(std::uint64_t stream_key, std::uint64_t index) { return mix64(stream_key ^ index); }
constexpr std::uint64_t key_attempt(std::uint64_t index_key, std::uint64_t attempt, std::uint64_t stream) {
  return mix64(index_key ^ ((attempt << 8) | (stream & 0xff)));
}

/// Hash of a 5-part key (seed, link id, index, attempt, stream tag) -> 64 bits.
constexpr std::uint64_t key_hash(std::uint64_t seed, std::uint64_t link_id, std::uint64_t index, std::uint64_t attempt,
                                 std::uint64_t stream) {
  return key_attempt(key_index(key_stream(seed, link_id), index), attempt, stream);
}

/// Uniform double in [0, 1) from the top 53 bits of a hash.
constexpr double to_unit(std::uint64_t h) { return static_cast<double>(h >> 11) * 0x1.0p-53; }

}  // namespace fabricsim::link
