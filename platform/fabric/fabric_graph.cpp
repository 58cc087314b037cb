// FabricGraph: validation, hop-count routes and DOT export of a FabricSpec
// (see fabric_graph.h). Boost.Graph, header-only: adjacency_list,
// connected_components, breadth_first_search, write_graphviz.
#include "platform/fabric/fabric_graph.h"

#include "platform/report/setup_progress.h"

#include <algorithm>
#include <limits>
#include <sstream>
#include <unordered_map>
#include <utility>

#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/breadth_first_search.hpp>
#include <boost/graph/connected_components.hpp>
#include <boost/graph/graphviz.hpp>
#include <boost/graph/visitors.hpp>
#include <boost/property_map/property_map.hpp>

namespace fabricsim::fabric {

namespace {

constexpr const char* kAccelerator = "accelerator";
constexpr std::uint32_t kNoHop = std::numeric_limits<std::uint32_t>::max();
constexpr std::uint32_t kUnresolved = kNoHop - 1;  // forwarding entry not looked up yet

/// Edge property: index of the link in FabricSpec::links.
struct EdgeProps {
  std::size_t link = 0;
};

/// Undirected multigraph (parallel links allowed), vertices = spec nodes.
using Graph = boost::adjacency_list<boost::vecS, boost::vecS, boost::undirectedS, boost::no_property, EdgeProps>;
using Vertex = boost::graph_traits<Graph>::vertex_descriptor;
using Edge = boost::graph_traits<Graph>::edge_descriptor;

/// "<where>: key '<key>': <what>".
std::string at(const SourceRef& src, const std::string& what) { return src.prefix() + ": " + what; }

/// "<where> key '<key>'" (a second place named inside a message).
std::string place(const SourceRef& src) { return src.where + " key '" + src.key + "'"; }

/// Escapes a string for a double-quoted DOT attribute value.
std::string dot_quote(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out + '"';
}

}  // namespace

struct FabricGraph::Impl {
  std::string name, generator;
  std::vector<std::string> ids, kinds;
  std::vector<SourceRef> node_src;
  std::vector<int> rank;         ///< per node; -1 for non-accelerators
  std::vector<std::size_t> acc;  ///< node of rank r
  struct LinkEnds {
    std::size_t a, b;
    std::uint32_t a_port, b_port;
  };
  std::vector<LinkEnds> links;
  std::vector<std::vector<Hop>> adj;  ///< per node, sorted by port
  Graph g;
  std::size_t n = 0;                ///< number of nodes
  std::vector<int> dist;            ///< [rank * n + node], -1 unreachable
  /// [rank * n + node] index into adj[node]; filled on first use (kUnresolved before)
  mutable std::vector<std::uint32_t> next;
  std::map<int, std::size_t> classes;
  int diameter = 0;

  void check_rank(int r) const {
    if (r < 0 || static_cast<std::size_t>(r) >= acc.size())
      throw std::out_of_range("fabric graph: rank " + std::to_string(r) + " out of range (" +
                              std::to_string(acc.size()) + " accelerators)");
  }
  void build_checked(const FabricSpec& spec);
  void add_nodes(const FabricSpec& spec);
  void add_links(const FabricSpec& spec);
  void check_reachable(const FabricSpec& spec);
  void compute_distances();
  void compute_forwarding();
  std::uint32_t forward(std::size_t node, std::size_t rank) const;
  void compute_classes();
  void check_node(std::size_t v) const {
    if (v >= n)
      throw std::out_of_range("fabric graph: node " + std::to_string(v) + " out of range (" + std::to_string(n) +
                              " nodes)");
  }
};

FabricGraph::FabricGraph(const FabricSpec& spec) {
  auto p = std::make_shared<Impl>();
  Impl& m = *p;
  m.build_checked(spec);
  m.compute_distances();
  m.compute_forwarding();
  m.compute_classes();
  impl_ = std::move(p);
}

void FabricGraph::validate(const FabricSpec& spec) { Impl().build_checked(spec); }

// Nodes, links and the reachability check: every error of the constructor.
void FabricGraph::Impl::build_checked(const FabricSpec& spec) {
  name = spec.name;
  generator = spec.generator;
  n = spec.nodes.size();
  add_nodes(spec);
  add_links(spec);
  check_reachable(spec);
}

// Nodes: unique ids; endpoints of routes are accelerators (ranks 0..N-1), then tlm-initiators (N..).
void FabricGraph::Impl::add_nodes(const FabricSpec& spec) {
  std::unordered_map<std::string, std::size_t> by_id;
  std::size_t num_acc = 0;
  for (const auto& x : spec.nodes) num_acc += is_endpoint_kind(x.kind);
  rank.assign(n, -1);
  acc.assign(num_acc, n);
  std::size_t decl = 0;
  for (std::size_t v = 0; v < n; ++v) {
    const NodeSpec& node = spec.nodes[v];
    ids.push_back(node.id);
    kinds.push_back(node.kind);
    node_src.push_back(node.src);
    auto [it, fresh] = by_id.emplace(node.id, v);
    if (!fresh)
      throw FabricError(at(node.src, "duplicate node id '" + node.id + "' (first declared at " +
                                         place(spec.nodes[it->second].src) + ")"));
    if (!is_endpoint_kind(node.kind)) continue;
    int r = node.rank < 0 ? static_cast<int>(decl) : node.rank;
    ++decl;
    if (static_cast<std::size_t>(r) >= num_acc)
      throw FabricError(at(node.src, "accelerator '" + node.id + "': rank " + std::to_string(r) + " out of range (" +
                                         std::to_string(num_acc) + " accelerators)"));
    if (acc[r] != n)
      throw FabricError(at(node.src, "accelerator '" + node.id + "': duplicate rank " + std::to_string(r) + " (also '" +
                                         ids[acc[r]] + "' at " + place(spec.nodes[acc[r]].src) + ")"));
    acc[r] = v;
    rank[v] = r;
  }
}

// Links: endpoints, ports (each used once, within a declared count), adjacency sorted by port.
void FabricGraph::Impl::add_links(const FabricSpec& spec) {
  adj.assign(n, {});
  links.reserve(spec.links.size());
  std::unordered_map<std::uint64_t, std::size_t> port_user;  // (node << 32 | port) -> link
  port_user.reserve(2 * spec.links.size());
  for (std::size_t l = 0; l < spec.links.size(); ++l) {
    const LinkSpec& ln = spec.links[l];
    for (auto [end, idx] : {std::pair<const char*, std::size_t>{"a", ln.a}, {"b", ln.b}})
      if (idx >= n)
        throw FabricError(at(ln.src, std::string("dangling link endpoint: ") + end + " = node " + std::to_string(idx) +
                                         ", but the fabric has " + std::to_string(n) + " nodes"));
    if (ln.a == ln.b)
      throw FabricError(at(ln.src, "link connects node '" + ids[ln.a] + "' to itself (ports " +
                                       std::to_string(ln.a_port) + " and " + std::to_string(ln.b_port) + ")"));
    for (auto [v, port] : {std::pair<std::size_t, std::uint32_t>{ln.a, ln.a_port}, {ln.b, ln.b_port}}) {
      const NodeSpec& node = spec.nodes[v];
      if (node.ports != 0 && port >= node.ports)
        throw FabricError(at(ln.src, "port " + std::to_string(port) + " of node '" + node.id +
                                         "' out of range: the node declares " + std::to_string(node.ports) + " ports"));
      auto [it, fresh] = port_user.emplace((static_cast<std::uint64_t>(v) << 32) | port, l);
      if (!fresh)
        throw FabricError(at(ln.src, "port " + std::to_string(port) + " of node '" + node.id +
                                         "' used twice: by this link and by the link at " +
                                         place(spec.links[it->second].src)));
    }
    links.push_back({ln.a, ln.b, ln.a_port, ln.b_port});
    adj[ln.a].push_back({ln.a_port, l, ln.b});
    adj[ln.b].push_back({ln.b_port, l, ln.a});
  }
  for (auto& ports : adj)
    std::sort(ports.begin(), ports.end(), [](const Hop& x, const Hop& y) { return x.port < y.port; });
  for (std::size_t v : acc)
    if (adj[v].empty())
      throw FabricError(
          at(spec.nodes[v].src, (spec.nodes[v].kind == "tlm-initiator" ? "tlm-initiator '" : "accelerator '") +
                                    ids[v] + "' (rank " + std::to_string(rank[v]) + ") has no link"));
  // A switch nothing is linked to forwards nothing: a node left out of `links`
  // by mistake (an id typed differently), as for an accelerator.
  for (std::size_t v = 0; v < spec.nodes.size(); ++v)
    if (adj[v].empty() && spec.nodes[v].kind == "ualink-switch")
      throw FabricError(at(spec.nodes[v].src, "ualink-switch '" + ids[v] + "' has no link (link it or remove it)"));
}

// Boost graph; every accelerator reachable from rank 0.
void FabricGraph::Impl::check_reachable(const FabricSpec& spec) {
  const std::size_t num_acc = acc.size();
  g = Graph(n);
  for (std::size_t l = 0; l < links.size(); ++l) boost::add_edge(links[l].a, links[l].b, EdgeProps{l}, g);
  if (num_acc > 1) {
    std::vector<int> comp(n);
    boost::connected_components(g,
                                boost::make_iterator_property_map(comp.begin(), boost::get(boost::vertex_index, g)));
    const std::size_t v0 = acc[0];
    for (std::size_t r = 1; r < num_acc; ++r) {
      const std::size_t v = acc[r];
      if (comp[v] != comp[v0])
        throw FabricError(at(spec.nodes[v].src, "accelerator '" + ids[v] + "' (rank " + std::to_string(r) +
                                                    ") and accelerator '" + ids[v0] +
                                                    "' (rank 0) are unreachable from each other"));
    }
  }
}

// Distances: one BFS per destination rank (the graph is undirected).
void FabricGraph::Impl::compute_distances() {
  const std::size_t num_acc = acc.size();
  dist.assign(num_acc * n, -1);
  for (std::size_t r = 0; r < num_acc; ++r) {
    auto d = dist.begin() + static_cast<std::ptrdiff_t>(r * n);
    auto dmap = boost::make_iterator_property_map(d, boost::get(boost::vertex_index, g));
    const Vertex s = acc[r];
    d[static_cast<std::ptrdiff_t>(s)] = 0;
    boost::breadth_first_search(
        g, s, boost::visitor(boost::make_bfs_visitor(boost::record_distances(dmap, boost::on_tree_edge()))));
    report::setup_progress("routing: distances to each accelerator", r + 1, num_acc);
  }
}

// Forwarding tables: (node, rank) -> index into adj[node], among the ports one
// hop closer. Entries are resolved on first use (forward()): a run looks up
// few of the ranks x nodes pairs, and resolving all of them was most of the
// set-up time of a 4096-accelerator pod (O(ranks x links)).
void FabricGraph::Impl::compute_forwarding() { next.assign(acc.size() * n, kUnresolved); }

// The port of `node` toward `rank`: of the c ports one hop closer, the
// ((node + rank) mod c)-th in port order (spreads the equal-cost paths);
// kNoHop if the rank is unreachable from the node or is the node.
std::uint32_t FabricGraph::Impl::forward(std::size_t v, std::size_t r) const {
  std::uint32_t& x = next[r * n + v];
  if (x != kUnresolved) return x;
  const int* d = dist.data() + r * n;
  if (d[v] <= 0) return x = kNoHop;  // unreachable, or the destination itself
  const auto& ports = adj[v];
  std::size_t c = 0;
  for (const Hop& h : ports) c += d[h.next_node] == d[v] - 1;
  std::size_t k = (v + r) % c;
  for (std::uint32_t i = 0; i < ports.size(); ++i)
    if (d[ports[i].next_node] == d[v] - 1 && k-- == 0) return x = i;
  return x = kNoHop;  // not reached: c > 0 since d[v] > 0
}

// Path classes (hop count -> ordered rank pairs) and diameter.
void FabricGraph::Impl::compute_classes() {
  const std::size_t num_acc = acc.size();
  std::vector<std::size_t> count;  // by hop count (a path has at most n - 1 hops)
  for (std::size_t r = 0; r < num_acc; ++r) {
    const int* d = dist.data() + r * n;
    for (std::size_t s = 0; s < num_acc; ++s) {
      if (s == r) continue;
      const int h = d[acc[s]];
      if (h < 0) {  // unreachable (check_reachable refused it before)
        ++classes[h];
        continue;
      }
      if (static_cast<std::size_t>(h) >= count.size()) count.resize(static_cast<std::size_t>(h) + 1, 0);
      ++count[static_cast<std::size_t>(h)];
      diameter = std::max(diameter, h);
    }
  }
  for (std::size_t h = 0; h < count.size(); ++h)
    if (count[h]) classes[static_cast<int>(h)] = count[h];
}

std::size_t FabricGraph::num_nodes() const { return impl_->n; }
std::size_t FabricGraph::num_links() const { return impl_->links.size(); }
const std::vector<std::size_t>& FabricGraph::accelerators() const { return impl_->acc; }

std::vector<Hop> FabricGraph::first_hops(int src_rank, int dst_rank) const {
  const Impl& m = *impl_;
  m.check_rank(src_rank);
  m.check_rank(dst_rank);
  std::vector<Hop> out;
  if (src_rank == dst_rank) return out;
  const int* d = m.dist.data() + static_cast<std::size_t>(dst_rank) * m.n;
  const std::size_t s = m.acc[src_rank];
  for (const Hop& h : m.adj[s])
    if (d[h.next_node] == d[s] - 1) out.push_back(h);
  return out;
}

const Hop& FabricGraph::next_hop(std::size_t node, int dst_rank) const {
  const Impl& m = *impl_;
  m.check_node(node);
  m.check_rank(dst_rank);
  if (m.acc[dst_rank] == node)
    throw std::invalid_argument("fabric graph: next_hop: node '" + m.ids[node] + "' is the destination rank " +
                                std::to_string(dst_rank));
  const std::uint32_t i = m.forward(node, static_cast<std::size_t>(dst_rank));
  if (i == kNoHop)
    throw FabricError(at(m.node_src[node], "node '" + m.ids[node] + "' has no route to rank " +
                                               std::to_string(dst_rank) + " ('" + m.ids[m.acc[dst_rank]] + "')"));
  return m.adj[node][i];
}

int FabricGraph::hops(int src_rank, int dst_rank) const {
  const Impl& m = *impl_;
  m.check_rank(src_rank);
  m.check_rank(dst_rank);
  return m.dist[static_cast<std::size_t>(dst_rank) * m.n + m.acc[src_rank]];
}

int FabricGraph::distance(std::size_t node, int dst_rank) const {
  const Impl& m = *impl_;
  m.check_node(node);
  m.check_rank(dst_rank);
  return m.dist[static_cast<std::size_t>(dst_rank) * m.n + node];
}

int FabricGraph::diameter() const { return impl_->diameter; }
std::map<int, std::size_t> FabricGraph::path_classes() const { return impl_->classes; }

const std::vector<Hop>& FabricGraph::ports(std::size_t node) const {
  impl_->check_node(node);
  return impl_->adj[node];
}
const std::string& FabricGraph::node_id(std::size_t node) const {
  impl_->check_node(node);
  return impl_->ids[node];
}
const std::string& FabricGraph::node_kind(std::size_t node) const {
  impl_->check_node(node);
  return impl_->kinds[node];
}
int FabricGraph::rank_of(std::size_t node) const {
  impl_->check_node(node);
  return impl_->rank[node];
}

namespace {

/// Vertex writer: label "<id>\n<kind>", box for switches, ellipse for accelerators.
struct NodeWriter {
  const std::vector<std::string>* ids;
  const std::vector<std::string>* kinds;
  void operator()(std::ostream& out, Vertex v) const {
    const std::string& kind = (*kinds)[v];
    out << "[label=" << dot_quote((*ids)[v] + "\n" + kind) << ", shape=" << (kind == kAccelerator ? "ellipse" : "box")
        << "]";
  }
};

}  // namespace

std::string FabricGraph::to_dot() const {
  const Impl& m = *impl_;
  struct EdgeWriter {
    const Impl* m;
    void operator()(std::ostream& out, Edge e) const {
      const auto& ln = m->links[m->g[e].link];
      out << "[label=\"" << ln.a_port << '-' << ln.b_port << "\"]";
    }
  };
  struct GraphWriter {
    const Impl* m;
    void operator()(std::ostream& out) const {
      out << "label=" << dot_quote(m->name.empty() ? std::string("fabric") : m->name) << ";\n";
    }
  };
  std::ostringstream os;
  boost::write_graphviz(os, m.g, NodeWriter{&m.ids, &m.kinds}, EdgeWriter{&m}, GraphWriter{&m});
  return os.str();
}

std::string FabricGraph::summary() const {
  const Impl& m = *impl_;
  std::ostringstream os;
  os << "fabric '" << m.name << "'";
  if (!m.generator.empty()) os << " (generator " << m.generator << ")";
  os << "\n";
  std::map<std::string, std::size_t> by_kind;
  for (const auto& k : m.kinds) ++by_kind[k];
  os << "nodes: " << m.n;
  const char* sep = " (";
  for (const auto& [kind, count] : by_kind) {
    os << sep << kind << ": " << count;
    sep = ", ";
  }
  if (!by_kind.empty()) os << ")";
  os << "\nlinks: " << m.links.size() << "\n";
  os << "path classes (hops: ordered accelerator pairs):";
  if (m.classes.empty()) os << " none";
  sep = " ";
  for (const auto& [h, count] : m.classes) {
    os << sep << h << ": " << count;
    sep = ", ";
  }
  os << "\ndiameter: " << m.diameter << " hops\n";
  return os.str();
}

}  // namespace fabricsim::fabric
