#pragma once
// The PCIe host tree and its routes: which link directions a burst crosses
// from one endpoint to another. Structure only: the links belong to the
// tree elements' ports (PciePortSet). Plain C++.
#include <cstdint>
#include <string>
#include <vector>

#include "models/pcie/core/pcie_port.h"

namespace fabricsim::pcie {

/// Node of the host tree. Every node but the root (the data fabric) has a
/// parent and one link to it (two FIFO directions, up and down), which
/// belongs to the parent's downstream port toward this node.
struct PcieNode {
  enum class Kind { endpoint, partition, host_bridge, quadrant, data_fabric };
  std::string name;
  Kind kind = Kind::endpoint;
  int parent = -1;              ///< index of the parent node (-1: root)
  int rank = -1;                ///< endpoints: TimingCore rank id (GPUs 0..N-1, host memory after them)
  int quadrant = -1;            ///< quadrant id (quadrant nodes and everything below them; -1 above)
  double up_ps_per_byte = 0;    ///< link to the parent, upstream: ps per payload byte (0: no bandwidth limit)
  double down_ps_per_byte = 0;  ///< link from the parent, downstream
  ps_t up_latency_ps = 0;       ///< head latency over the link upstream (wire + the parent's forwarding)
  ps_t down_latency_ps = 0;     ///< head latency downstream (wire + this node's forwarding)
};

/// The validated host tree and a table of routes between its endpoints.
/// Errors (constructor, std::invalid_argument): a parent out of range, a
/// cycle, not exactly one root, an endpoint without a rank or a rank twice,
/// a node below an endpoint, a host bridge below a host bridge, an endpoint
/// whose quadrant id differs from the quadrant node above it.
class PcieRouter {
 public:
  explicit PcieRouter(std::vector<PcieNode> nodes);

  const std::vector<PcieNode>& nodes() const { return nodes_; }
  /// Endpoint indices in node order; rank -> endpoint index (-1: no such rank).
  const std::vector<int>& endpoint_nodes() const { return ep_node_; }
  int endpoint_of_rank(int r) const {
    return r >= 0 && static_cast<std::size_t>(r) < rank_ep_.size() ? rank_ep_[r] : -1;
  }
  /// Nearest ancestor of `node` of kind k (-1: none).
  int ancestor(int node, PcieNode::Kind k) const;
  /// Bind node i's link to its parent (call for every non-root node before the first route()).
  void set_link(int node, PcieLinkDir* up, PcieLinkDir* down) {
    up_[node] = up;
    down_[node] = down;
  }
  /// Route from endpoint index se to endpoint index de (built on first use; stable address).
  const PcieRoute& route(int se, int de) {
    Entry& E = routes_[static_cast<std::size_t>(se) * ep_node_.size() + static_cast<std::size_t>(de)];
    if (!E.built) build(E, se, de);
    return E.route;
  }
  /// Names of the nodes on the route from endpoint se to de.
  std::vector<std::string> route_names(int se, int de);

 private:
  struct Entry {
    bool built = false;
    PcieRoute route;
    std::vector<int> links;  // node * 2 (+1 downstream) per hop
  };
  void build(Entry& E, int se, int de);

  std::vector<PcieNode> nodes_;
  std::vector<int> ep_node_;
  std::vector<int> rank_ep_;
  std::vector<PcieLinkDir*> up_, down_;
  std::vector<Entry> routes_;
};

}  // namespace fabricsim::pcie
