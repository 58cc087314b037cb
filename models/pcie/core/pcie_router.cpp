#include "models/pcie/core/pcie_router.h"

#include <stdexcept>

namespace fabricsim::pcie {

PcieRouter::PcieRouter(std::vector<PcieNode> nodes) : nodes_(std::move(nodes)) {
  using K = PcieNode::Kind;
  const int n = static_cast<int>(nodes_.size());
  int roots = 0;
  for (int i = 0; i < n; ++i) {
    const auto& nd = nodes_[i];
    if (nd.parent < 0) ++roots;
    if (nd.parent >= n) throw std::invalid_argument("PcieEngine: node " + nd.name + " has a parent out of range");
    // Walking up must reach the root within n steps (no cycle).
    int k = i, steps = 0;
    while (nodes_[k].parent >= 0 && steps <= n) k = nodes_[k].parent, ++steps;
    if (steps > n) throw std::invalid_argument("PcieEngine: node " + nd.name + " is on a cycle");
    if (nd.parent >= 0 && nodes_[nd.parent].kind == K::endpoint)
      throw std::invalid_argument("PcieEngine: node " + nd.name + " hangs below endpoint " + nodes_[nd.parent].name);
    if (nd.kind == K::endpoint) {
      if (nd.rank < 0) throw std::invalid_argument("PcieEngine: endpoint " + nd.name + " has no rank");
      if (static_cast<std::size_t>(nd.rank) >= rank_ep_.size()) rank_ep_.resize(nd.rank + 1, -1);
      if (rank_ep_[nd.rank] >= 0) throw std::invalid_argument("PcieEngine: rank " + std::to_string(nd.rank) + " twice");
      rank_ep_[nd.rank] = static_cast<int>(ep_node_.size());
      ep_node_.push_back(i);
    }
  }
  if (roots != 1) throw std::invalid_argument("PcieEngine: the host tree needs exactly one root (the data fabric)");
  for (int i = 0; i < n; ++i) {
    const auto& nd = nodes_[i];
    if (nd.kind == K::host_bridge && nd.parent >= 0 && ancestor(nd.parent, K::host_bridge) >= 0)
      throw std::invalid_argument("PcieEngine: host bridge " + nd.name + " below another host bridge");
    if (nd.kind == K::endpoint) {
      const int q = ancestor(i, K::quadrant);
      if ((q < 0 ? -1 : nodes_[q].quadrant) != nd.quadrant)
        throw std::invalid_argument("PcieEngine: endpoint " + nd.name + " names quadrant " +
                                    std::to_string(nd.quadrant) + " but sits below " +
                                    (q < 0 ? std::string("no quadrant") : nodes_[q].name));
    }
  }
  up_.assign(nodes_.size(), nullptr);
  down_.assign(nodes_.size(), nullptr);
  routes_.resize(ep_node_.size() * ep_node_.size());
}

int PcieRouter::ancestor(int node, PcieNode::Kind k) const {
  for (int p = nodes_[node].parent; p >= 0; p = nodes_[p].parent)
    if (nodes_[p].kind == k) return p;
  return -1;
}

void PcieRouter::build(Entry& E, int se, int de) {
  using K = PcieNode::Kind;
  PcieRoute& P = E.route;
  std::vector<int> up, down;  // node chains from each endpoint to the root
  for (int k = ep_node_[se]; k >= 0; k = nodes_[k].parent) up.push_back(k);
  for (int k = ep_node_[de]; k >= 0; k = nodes_[k].parent) down.push_back(k);
  // Drop the common tail (the lowest common ancestor and above).
  while (up.size() > 1 && down.size() > 1 && up[up.size() - 2] == down[down.size() - 2]) up.pop_back(), down.pop_back();
  up.pop_back();
  down.pop_back();
  for (int k : up) {
    if (nodes_[k].kind == K::host_bridge) P.order_idx = static_cast<int>(P.hops.size());
    P.hops.push_back(up_[k]);
    E.links.push_back(2 * k);
  }
  for (auto it = down.rbegin(); it != down.rend(); ++it) {
    const int k = *it;
    if (nodes_[k].parent >= 0 && nodes_[nodes_[k].parent].kind == K::host_bridge)
      P.accept_idx = static_cast<int>(P.hops.size());
    P.hops.push_back(down_[k]);
    E.links.push_back(2 * k + 1);
  }
  for (auto* h : P.hops)
    if (!h) throw std::logic_error("PcieRouter: a link of the route is not bound");
  if (P.accept_idx < 0) P.accept_idx = static_cast<int>(P.hops.size()) - 1;
  if (P.order_idx >= 0)
    for (int i = P.order_idx; i <= P.accept_idx; ++i) P.order_to_accept_ps += P.hops[i]->latency_ps;
  const int dq = nodes_[ep_node_[de]].quadrant;
  P.dest_key = dq >= 0 ? dq : -2;
  E.built = true;
}

std::vector<std::string> PcieRouter::route_names(int se, int de) {
  route(se, de);
  const Entry& E = routes_[static_cast<std::size_t>(se) * ep_node_.size() + static_cast<std::size_t>(de)];
  std::vector<std::string> out{nodes_[ep_node_[se]].name};
  for (int l : E.links) {
    const int node = l / 2;
    out.push_back(l % 2 == 0 ? nodes_[nodes_[node].parent].name : nodes_[node].name);
  }
  return out;
}

}  // namespace fabricsim::pcie
