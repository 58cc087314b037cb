#include "models/link/core/control_serializer.h"

#include <memory>
#include <mutex>
#include <set>

namespace fabricsim::link {

const ControlSerializer::Timing* ControlSerializer::shared_timing(const Timing& t) {
  static std::mutex mutex;
  static std::set<Timing> table;  // one entry per distinct set, for good (a std::set never moves its elements)
  const std::lock_guard<std::mutex> lock(mutex);
  return &*table.insert(t).first;
}

}  // namespace fabricsim::link
