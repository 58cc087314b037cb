#pragma once
// One shared, immutable copy per distinct value: per-configuration constants
// (FEC profile timing, channel parameters, control-path delays) that tens of
// thousands of link engines would otherwise each keep in their hot lines.
#include <mutex>
#include <set>

namespace fabricsim::link {

/// The process-wide copy of `v`, one per distinct value of T (compared with
/// T's operator<); the reference stays valid until the process ends, so the
/// number of copies is the number of distinct values ever interned (a few
/// per fabric). Thread-safe. Throws what copying T throws (std::bad_alloc).
template <typename T>
const T& intern(const T& v) {
  static std::mutex mutex;
  static std::set<T> values;  // a std::set never moves its elements
  const std::lock_guard<std::mutex> lock(mutex);
  return *values.insert(v).first;
}

}  // namespace fabricsim::link
