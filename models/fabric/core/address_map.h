#pragma once
// The fabric's global address map: one region per target memory (an
// accelerator's local memory), each at its own base address. Foreign TLM-2.0
// initiators address the fabric through it (docs/architecture.md "The
// standard TLM-2.0 boundary"). Plain C++, no SystemC.
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace fabricsim::fabric_core {

/// One region of the global address map: [base, base + size) is the memory
/// of endpoint `rank` (its local address 0 at `base`).
struct AddressRegion {
  std::string name;        ///< node id, e.g. "acc5"
  int rank = -1;           ///< endpoint rank that owns the memory
  std::uint64_t base = 0;  ///< global byte address of local address 0
  std::uint64_t size = 0;  ///< bytes
  std::uint64_t end() const { return base + size; }
};

/// Global address map. Regions are kept sorted by base; decoding is a
/// binary search (O(log regions)).
class AddressMap {
 public:
  /// Alignment every base address must have, bytes (4 KiB: one page, so a
  /// region never shares a page with another).
  static constexpr std::uint64_t kAlign = 4096;

  /// Add a region. Throws std::invalid_argument if `base` is not a multiple
  /// of kAlign, `size` is 0, the region wraps past 2^64, or it overlaps a
  /// region already added (the message names both).
  void add(AddressRegion r);

  /// Lowest base >= `from`, aligned to kAlign, where `size` bytes fit
  /// without overlapping any region already added (first fit). Throws
  /// std::invalid_argument if none exists below 2^64.
  std::uint64_t first_fit(std::uint64_t from, std::uint64_t size) const;

  /// The region holding all of [addr, addr + bytes), or nullptr (outside the
  /// map, or the range crosses a region's end). bytes == 0 decodes `addr`.
  const AddressRegion* decode(std::uint64_t addr, std::uint64_t bytes) const;

  /// Regions sorted by base.
  const std::vector<AddressRegion>& regions() const { return regions_; }

  /// Human table, one line per region: "name  base  size" (hex base, bytes).
  std::string table() const;

 private:
  std::vector<AddressRegion> regions_;
};

}  // namespace fabricsim::fabric_core
