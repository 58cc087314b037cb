#pragma once
// The fabric as a graph: checks a FabricSpec (dangling links, ports used
// twice, unreachable ranks, ...) and computes hop-count routes between
// accelerators: equal-cost first hops out of a source rank, one deterministic
// forwarding entry per (node, destination rank), hop counts, the diameter and
// path classes; exports Graphviz DOT. Built with Boost.Graph (header-only;
// Boost never appears in this header).
//
// Conventions:
//   * Node indices are indices into FabricSpec::nodes; link indices are
//     indices into FabricSpec::links; ranks are accelerator ranks 0..N-1.
//   * Distances are hop counts (number of links), every link weighing 1.
//   * Invalid fabrics throw FabricError with "<where>: key '<key>': <what>"
//     built from the offending item's SourceRef. Invalid arguments to the
//     queries (rank or node out of range) throw std::out_of_range.
//   * Construction is O(R * (V + E)) time and O(R * V) memory (R ranks,
//     V nodes, E links); the 1024-accelerator x 8-switch pod builds in well
//     under a second and holds about 10 MB.
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "platform/fabric/fabric_spec.h"

namespace fabricsim::fabric {

/// A fabric that fails validation. what() is "<where>: key '<key>': <what>"
/// using the SourceRef of the offending node or link.
struct FabricError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// Next hop out of a node toward a destination accelerator.
struct Hop {
  std::uint32_t port = 0;     ///< port index on the node the hop leaves from
  std::size_t link = 0;       ///< index into FabricSpec::links of the link taken
  std::size_t next_node = 0;  ///< node index at the other end of that link
};

/// Two hops are equal when port, link and next node are.
inline bool operator==(const Hop& x, const Hop& y) {
  return x.port == y.port && x.link == y.link && x.next_node == y.next_node;
}
/// Negation of operator==.
inline bool operator!=(const Hop& x, const Hop& y) { return !(x == y); }

/// Validated, routed view of a FabricSpec. Immutable after construction;
/// copies share the computed tables. All queries are const and thread-safe.
class FabricGraph {
 public:
  /// Validates `spec` and computes all routes.
  ///
  /// Accelerators are nodes of kind "accelerator"; tlm-initiator nodes are
  /// endpoints too (ranks after the accelerators', routed to and from like
  /// them; "accelerator" and "rank" below cover them); every other kind
  /// (switch, bridge, ...) is a forwarding node. An accelerator with rank < 0 gets its
  /// declaration-order index among accelerators as rank.
  ///
  /// Throws FabricError (message "<where>: key '<key>': <what>") on:
  ///  - two nodes with the same id ("duplicate node id", names both places);
  ///  - accelerator ranks that are not a permutation of 0..N-1 ("duplicate
  ///    rank" / "rank out of range");
  ///  - a link endpoint index >= number of nodes ("dangling");
  ///  - a link from a node to itself ("to itself");
  ///  - a port index >= the node's declared `ports`, when that count is
  ///    non-zero ("out of range");
  ///  - the same (node, port) used by two links ("used twice", names both
  ///    links' SourceRef);
  ///  - an accelerator with no link ("has no link");
  ///  - two accelerators that cannot reach each other ("unreachable", names
  ///    both node ids; reported at the SourceRef of the higher rank).
  /// Parallel links between the same two nodes (on distinct ports) are allowed.
  explicit FabricGraph(const FabricSpec& spec);
  /// The checks of the constructor alone (the errors above), without the
  /// routing tables: O(nodes + links) where the tables take O(ranks x links).
  static void validate(const FabricSpec& spec);

  /// Number of nodes (== spec.nodes.size()).
  std::size_t num_nodes() const;
  /// Number of links (== spec.links.size()).
  std::size_t num_links() const;
  /// Accelerator node indices by rank: accelerators()[r] is the node of rank r.
  /// Size = number of accelerators.
  const std::vector<std::size_t>& accelerators() const;

  /// Equal-cost first hops from accelerator rank `src_rank` toward rank
  /// `dst_rank`: every port of the source whose link starts a shortest path
  /// (hop-count metric), sorted by port. Empty iff src_rank == dst_rank.
  /// Computed on demand from the distance table (O(ports of src)), returned
  /// by value. Throws std::out_of_range for a rank outside 0..N-1.
  std::vector<Hop> first_hops(int src_rank, int dst_rank) const;

  /// Forwarding-table entry of node `node` (meant for switches; defined for
  /// accelerators too, which forward in direct topologies such as rings):
  /// the next hop toward rank `dst_rank`. One deterministic choice among the
  /// equal-cost next hops: with the candidates sorted by port, index
  /// (node + dst_rank) % count. The reference stays valid for the lifetime of
  /// this graph (and its copies). Entries are filled on first lookup (a
  /// cache shared by the copies): not for concurrent calls from threads.
  /// Throws std::out_of_range for a bad node or rank, std::invalid_argument
  /// when `node` is the accelerator of `dst_rank`, FabricError (at the node's
  /// SourceRef, "no route") when the node cannot reach that rank (a node
  /// outside the accelerators' component).
  const Hop& next_hop(std::size_t node, int dst_rank) const;

  /// Hop count (number of links) of a shortest path between two ranks;
  /// 0 when src_rank == dst_rank. Throws std::out_of_range for a bad rank.
  int hops(int src_rank, int dst_rank) const;

  /// Hop count from any node to rank `dst_rank`; -1 if unreachable.
  /// Throws std::out_of_range for a bad node or rank.
  int distance(std::size_t node, int dst_rank) const;

  /// Largest hop count over accelerator pairs; 0 with fewer than 2 accelerators.
  int diameter() const;

  /// Path classes: hop count -> number of ordered accelerator pairs (src != dst)
  /// at that distance. Sums to N * (N - 1).
  std::map<int, std::size_t> path_classes() const;

  /// All ports of `node` in use, sorted by port: the hop each one makes
  /// (port, link, node at the other end). Throws std::out_of_range.
  const std::vector<Hop>& ports(std::size_t node) const;

  /// Node id / kind / rank (-1 for non-accelerators) of node `node`.
  /// Throw std::out_of_range.
  const std::string& node_id(std::size_t node) const;
  const std::string& node_kind(std::size_t node) const;
  int rank_of(std::size_t node) const;

  /// Graphviz DOT text of the fabric, written by boost::write_graphviz with
  /// property writers: an undirected `graph` whose vertex ids are node
  /// indices; node label "<id>\n<kind>", shape box for non-accelerators and
  /// ellipse for accelerators; one edge per link with label "<a_port>-<b_port>"
  /// (the ports on endpoints a and b). Deterministic: nodes and links in spec
  /// order.
  std::string to_dot() const;

  /// Human summary, several lines: fabric name and generator, nodes by kind,
  /// links, path classes (hops: ordered pairs), diameter. Ends with '\n'.
  std::string summary() const;

 private:
  struct Impl;
  std::shared_ptr<const Impl> impl_;
};

}  // namespace fabricsim::fabric
