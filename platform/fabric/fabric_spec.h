#pragma once
// A fabric as parsed from YAML, before any SystemC module exists: nodes with
// ports, links between ports, per-link link-layer parameters. Produced by
// fabric_config (generators: ring, switched-pod, explicit lists), consumed by
// fabric_graph (checks, routes, DOT) and the elaboration.
#include <cstdint>
#include <string>
#include <vector>

#include "models/accelerator/accelerator_params.h"
#include "models/fabric/core/fabric_engine.h"
#include "models/link/core/link_engine.h"
#include "models/rifl/core/rifl_link.h"
#include "models/switch/switch_params.h"

namespace fabricsim::fabric {

/// Where a YAML item came from, for error messages ("file:line:col").
struct SourceRef {
  std::string where;  ///< "file:line:col" or "--set ..." or "generator ring"
  std::string key;    ///< full key path, e.g. "links[3].b"
  /// The head of an error message: "<where>: key '<key>'", or "<where>" alone
  /// when it names the key already ("--set workload.size").
  std::string prefix() const {
    const bool named = where.size() >= key.size() && !key.empty() &&
                       where.compare(where.size() - key.size(), std::string::npos, key) == 0;
    return named ? where : where + ": key '" + key + "'";
  }
};

using AcceleratorParams = models::accelerator_params;
using SwitchParams = models::switch_params;

/// One node of the fabric.
struct NodeSpec {
  std::string id;    ///< unique name, e.g. "acc3", "sw0"
  std::string kind;  ///< "accelerator", "ualink-switch" or "tlm-initiator"
  /// Endpoint rank: accelerators 0..N-1 in declaration order, tlm-initiators
  /// N..N+M-1 in declaration order; switches -1.
  int rank = -1;
  std::uint32_t ports = 0;  ///< number of ports (max port index + 1)
  AcceleratorParams accel;
  bool auto_memory = true;  ///< size memory from the workload's buffers (memory: auto)
  /// Where a fixed memory size was written (defaults.accelerator.memory or the
  /// node's own; empty key: auto), for "the collective needs more" errors.
  SourceRef memory_src;
  /// Where this node's memory size was written: memory_src, or the node itself.
  const SourceRef& memory_source() const { return memory_src.key.empty() ? src : memory_src; }
  SwitchParams sw;
  SourceRef src;
  /// Accelerators: `address:` given (global base address of the memory,
  /// bytes); otherwise the base is assigned (fabric_run.h address_map()).
  bool has_address = false;
  std::uint64_t address = 0;
  SourceRef address_src;  ///< where `address:` is (or the node, if absent)
};

/// Node kind of an external TLM-2.0 initiator: an endpoint of the fabric
/// (own rank, routed to like an accelerator) without memory or software,
/// whose target socket user code binds after elaboration.
inline constexpr const char* kTlmInitiator = "tlm-initiator";

/// True for the node kinds that are endpoints of routes (accelerator, tlm-initiator).
inline bool is_endpoint_kind(const std::string& kind) { return kind == "accelerator" || kind == kTlmInitiator; }

/// The link protocol of a fabric link (`link.protocol`) and, for RIFL, its
/// `link.rifl:` parameters (lane rate and cable delay come from the link).
struct LinkProtocolSpec {
  fabric_core::LinkProtocol protocol = fabric_core::LinkProtocol::ualink;
  rifl::RiflConfig rifl;
  /// rifl.channel.model gilbert-elliott without chain parameters of its own:
  /// the chain is the link's `channel:` (set into rifl.ge at parsing).
  bool rifl_ge_from_link = true;
};

/// One bidirectional link between two ports; both directions use `link`
/// (each direction its own channel stream, keyed by `id`).
struct LinkSpec {
  std::size_t a = 0, b = 0;  ///< node indices
  std::uint32_t a_port = 0, b_port = 0;
  link::LinkConfig link;  ///< link-layer parameters (policy, FEC menu, channel, window)
  LinkProtocolSpec proto;  ///< ualink (`link` is the data link) or rifl (`proto.rifl`; rates from `link`)
  std::uint64_t id = 0;   ///< link index; directions use channel ids 2*id and 2*id+1
  SourceRef src;
  /// The link_overrides item that set this link's parameters (empty key: none).
  SourceRef params_src;
  /// Where this link's parameters were written: the override, or the link itself.
  const SourceRef& params_source() const { return params_src.key.empty() ? src : params_src; }
};

/// The whole fabric.
struct FabricSpec {
  std::string name;
  std::string generator;  ///< "ring", "switched-pod", "explicit"
  std::vector<NodeSpec> nodes;
  std::vector<LinkSpec> links;
  /// First global address the rank-order assignment of base addresses tries
  /// (fabric.address_base, bytes; default 0).
  std::uint64_t address_base = 0;
  SourceRef address_base_src;  ///< where fabric.address_base is set (empty `where` if not)
  /// Number of tlm-initiator nodes.
  std::size_t initiators() const {
    std::size_t n = 0;
    for (const auto& x : nodes) n += x.kind == kTlmInitiator;
    return n;
  }
  std::size_t accelerators() const {
    std::size_t n = 0;
    for (const auto& x : nodes) n += x.kind == "accelerator";
    return n;
  }
};

}  // namespace fabricsim::fabric
