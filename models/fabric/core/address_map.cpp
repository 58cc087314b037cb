#include "models/fabric/core/address_map.h"

#include <algorithm>
#include <cstdio>

namespace fabricsim::fabric_core {

namespace {
std::string hex(std::uint64_t v) {
  char b[24];
  std::snprintf(b, sizeof b, "0x%012llx", static_cast<unsigned long long>(v));
  return b;
}
std::uint64_t align_up(std::uint64_t v, std::uint64_t a, bool& overflow) {
  const std::uint64_t r = v % a;
  if (r == 0) return v;
  if (v > ~0ull - (a - r)) {
    overflow = true;
    return 0;
  }
  return v + (a - r);
}
}  // namespace

void AddressMap::add(AddressRegion r) {
  if (r.base % kAlign != 0)
    throw std::invalid_argument("address " + hex(r.base) + " of " + r.name + " is not aligned to " +
                                std::to_string(kAlign) + " B");
  if (r.size == 0) throw std::invalid_argument("memory of " + r.name + " has size 0");
  if (r.base > ~0ull - r.size)
    throw std::invalid_argument("memory of " + r.name + " at " + hex(r.base) + " (" + std::to_string(r.size) +
                                " B) ends beyond the 64-bit address space");
  for (const auto& o : regions_)
    if (r.base < o.end() && o.base < r.end())
      throw std::invalid_argument("memory of " + r.name + " [" + hex(r.base) + ", " + hex(r.end()) +
                                  ") overlaps the memory of " + o.name + " [" + hex(o.base) + ", " + hex(o.end()) +
                                  ")");
  const auto at = std::upper_bound(regions_.begin(), regions_.end(), r.base,
                                   [](std::uint64_t b, const AddressRegion& x) { return b < x.base; });
  regions_.insert(at, std::move(r));
}

std::uint64_t AddressMap::first_fit(std::uint64_t from, std::uint64_t size) const {
  bool overflow = false;
  std::uint64_t b = align_up(from, kAlign, overflow);
  for (const auto& o : regions_) {  // sorted by base
    if (overflow) break;
    if (o.end() <= b) continue;
    if (b <= ~0ull - size && b + size <= o.base) return b;
    b = align_up(o.end(), kAlign, overflow);
  }
  if (overflow || size == 0 || b > ~0ull - size)
    throw std::invalid_argument("no room for " + std::to_string(size) + " B in the 64-bit address space");
  return b;
}

const AddressRegion* AddressMap::decode(std::uint64_t addr, std::uint64_t bytes) const {
  auto it = std::upper_bound(regions_.begin(), regions_.end(), addr,
                             [](std::uint64_t a, const AddressRegion& x) { return a < x.base; });
  if (it == regions_.begin()) return nullptr;
  const AddressRegion& r = *(it - 1);
  if (addr >= r.end()) return nullptr;
  if (bytes > r.end() - addr) return nullptr;
  return &r;
}

std::string AddressMap::table() const {
  std::string s;
  for (const auto& r : regions_) {
    char line[512];
    std::snprintf(line, sizeof line, "  %-24s %s  %llu B\n", r.name.c_str(), hex(r.base).c_str(),
                  static_cast<unsigned long long>(r.size));
    s += line;
  }
  return s;
}

}  // namespace fabricsim::fabric_core
