#include "platform/sim/check.h"

#include "platform/fabric/fabric_config.h"
#include "platform/sim/run_kind.h"

namespace fabricsim::sim {

FabricCheck check_document(std::shared_ptr<config::Document> doc) {
  const std::string kind = fabric::fabric_kind(*doc);
  FabricCheck c = run_kind(kind).check(doc);
  c.kind = kind;
  return c;
}

FabricCheck check_fabric(const std::string& path, const std::vector<std::string>& sets) {
  return check_document(config::load_with_overrides(path, sets));
}

}  // namespace fabricsim::sim
