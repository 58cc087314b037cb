#pragma once
// Model registry: every node kind is a SystemC module that registers a
// factory under its kind at the end of its .cpp (style.md item 1); the
// platform builds fabrics from YAML `kind:` through it. The models library is
// linked whole-archive so static registrations survive.
//
// Factories are typed: a module T declares `using params_type = ...;` and a
// constructor (name, const node_config&, const params_type&); it is
// registered in the table of its params_type, and create<P>() looks a kind up
// in the table of P. No parameter travels type-erased, so nothing is cast at
// run time; the YAML kind -> parameter struct mapping is the configuration
// layer's (platform/fabric), which rejects a kind that does not belong to the
// fabric with file:line:key.
#include <systemc>

#include <functional>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <typeinfo>
#include <vector>

namespace fabricsim::models {

/// What every factory receives besides its parameter struct: the node's kind,
/// rank (endpoints) or -1, and its port count.
struct node_config {
  std::string kind;
  int rank = -1;
  std::uint32_t ports = 0;
};

class model_registry {
 public:
  template <class Params>
  using factory = std::function<std::unique_ptr<sc_core::sc_module>(const sc_core::sc_module_name&,
                                                                    const node_config&, const Params&)>;

  static model_registry& instance() {
    static model_registry r;
    return r;
  }
  /// Register `kind` with parameters of type Params; returns true (for static
  /// initialisers). A second registration of the same kind throws std::logic_error.
  template <class Params>
  bool add(const std::string& kind, factory<Params> f) {
    if (!kinds_.emplace(kind, typeid(Params).name()).second)
      throw std::logic_error("model kind '" + kind + "' registered twice");
    table<Params>().emplace(kind, std::move(f));
    return true;
  }
  /// Build a module of `kind` from its parameter struct. Throws
  /// std::out_of_range naming the unknown kind and the registered ones, or
  /// std::invalid_argument if `kind` is registered with another parameter
  /// type (a programming error of the elaboration, not bad input).
  template <class Params>
  std::unique_ptr<sc_core::sc_module> create(const std::string& kind, const sc_core::sc_module_name& name,
                                             const node_config& cfg, const Params& params) const {
    const auto& t = table<Params>();
    auto it = t.find(kind);
    if (it != t.end()) return it->second(name, cfg, params);
    if (has(kind))
      throw std::invalid_argument("model kind '" + kind + "' is not built from " + typeid(Params).name());
    std::string known;
    for (const auto& k : kinds()) known += (known.empty() ? "" : ", ") + k;
    throw std::out_of_range("unknown node kind '" + kind + "' (registered: " + known + ")");
  }
  std::vector<std::string> kinds() const {
    std::vector<std::string> k;
    for (const auto& [name, type] : kinds_) k.push_back(name);
    return k;
  }
  bool has(const std::string& kind) const { return kinds_.count(kind) != 0; }

 private:
  template <class Params>
  static std::map<std::string, factory<Params>>& table() {
    static std::map<std::string, factory<Params>> t;
    return t;
  }
  std::map<std::string, std::string> kinds_;  // kind -> its parameter type
};

}  // namespace fabricsim::models

/// Register module type T (with T::params_type, constructible from
/// (sc_module_name, const node_config&, const T::params_type&)) under `kind`.
#define FABRICSIM_REGISTER_MODEL(kind, T)                                                                   \
  static const bool fabricsim_registered_##T =                                                              \
      ::fabricsim::models::model_registry::instance().add<typename T::params_type>(                         \
          kind, [](const sc_core::sc_module_name& n, const ::fabricsim::models::node_config& c,              \
                   const typename T::params_type& p) { return std::unique_ptr<sc_core::sc_module>(new T(n, c, p)); })
