#pragma once
// Model registry: every node kind is a SystemC module that registers a
// factory under its kind at the end of its .cpp (style.md item 1); the
// platform builds fabrics from YAML `kind:` through it. The models library is
// linked whole-archive so static registrations survive.
#include <systemc>

#include <any>
#include <functional>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace fabricsim::models {

/// What a factory receives: the node's kind, rank (accelerators) or -1, its
/// port count, and its parameter struct (std::any holding the kind's own
/// params type; a mismatch throws std::bad_any_cast).
struct node_config {
  std::string kind;
  int rank = -1;
  std::uint32_t ports = 0;
  std::any params;
};

class model_registry {
 public:
  using factory =
      std::function<std::unique_ptr<sc_core::sc_module>(const sc_core::sc_module_name&, const node_config&)>;

  static model_registry& instance() {
    static model_registry r;
    return r;
  }
  /// Register `kind`; returns true (for static initialisers). A second
  /// registration of the same kind throws std::logic_error.
  bool add(const std::string& kind, factory f) {
    if (!factories_.emplace(kind, std::move(f)).second)
      throw std::logic_error("model kind '" + kind + "' registered twice");
    return true;
  }
  /// Build a module of `kind`. Throws std::out_of_range naming the unknown
  /// kind and the registered ones.
  std::unique_ptr<sc_core::sc_module> create(const std::string& kind, const sc_core::sc_module_name& name,
                                             const node_config& cfg) const {
    auto it = factories_.find(kind);
    if (it == factories_.end()) {
      std::string known;
      for (const auto& k : kinds()) known += (known.empty() ? "" : ", ") + k;
      throw std::out_of_range("unknown node kind '" + kind + "' (registered: " + known + ")");
    }
    return it->second(name, cfg);
  }
  std::vector<std::string> kinds() const {
    std::vector<std::string> k;
    for (const auto& [name, f] : factories_) k.push_back(name);
    return k;
  }
  bool has(const std::string& kind) const { return factories_.count(kind) != 0; }

 private:
  std::map<std::string, factory> factories_;
};

}  // namespace fabricsim::models

/// Register module type T (constructible from (sc_module_name, const node_config&)) under `kind`.
#define FABRICSIM_REGISTER_MODEL(kind, T)                                                           \
  static const bool fabricsim_registered_##T = ::fabricsim::models::model_registry::instance().add( \
      kind, [](const sc_core::sc_module_name& n, const ::fabricsim::models::node_config& c) {       \
        return std::unique_ptr<sc_core::sc_module>(new T(n, c));                                    \
      })
