#pragma once
// `fabricsim check`: load a fabric file as `run` would at load time and
// describe it, without elaborating SystemC modules. Shared by the command line
// and the loader fuzz targets (tests/fuzz/), so both take the same path.
#include <memory>
#include <string>
#include <vector>

#include "platform/config/yaml_config.h"

namespace fabricsim::sim {

/// What `check` reports for one fabric file.
struct FabricCheck {
  std::string kind;     ///< fabric.kind: link-pair, ring, switched-pod, explicit, pcie-host, rifl-link
  std::string name;     ///< fabric (or host) name, for the default DOT file name
  std::string summary;  ///< human summary, one or more lines, each ending in '\n'
  std::string dot;      ///< Graphviz DOT of the fabric or host; empty for link-pair and rifl-link (no fabric graph)
};

/// Check an already loaded document (overrides applied). Throws
/// config::ConfigError (file:line:key) or fabric::FabricError (unknown node
/// kind, unreachable rank), as `run` would before elaborating.
FabricCheck check_document(std::shared_ptr<config::Document> doc);

/// load_with_overrides(path, sets) + check_document. Throws as those do.
FabricCheck check_fabric(const std::string& path, const std::vector<std::string>& sets);

}  // namespace fabricsim::sim
