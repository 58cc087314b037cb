// pcie-host configuration output: the result.json echo, the `check` text
// and the Graphviz DOT of the whole host.
#include <fmt/format.h>

#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/graphviz.hpp>
#include <sstream>

#include "platform/fabric/host_config.h"
#include "sw/schedule.h"

namespace fabricsim::fabric {

namespace {

// fabric, link, latency and bandwidth of the echo.
void hardware_json(const HostSpec& H, nlohmann::ordered_json& j) {
  nlohmann::ordered_json lanes = nlohmann::ordered_json::object();
  for (std::size_t g = 0; g < H.gpus.size(); ++g)
    if (H.gpus[g].lanes != H.lanes || H.gpus[g].gen != H.gen)
      lanes[std::to_string(g)] = fmt::format("Gen{} x{}", H.gpus[g].gen, H.gpus[g].lanes);
  j["fabric"] = {{"name", H.name},
                 {"kind", "pcie-host"},
                 {"quadrants", H.quadrants},
                 {"host_bridges", H.bridges.size()},
                 {"partitions", H.partitions.size()},
                 {"gpus", H.gpus.size()},
                 {"gpu_link_overrides", lanes},
                 {"host_memory_bytes", H.host_memory_bytes}};
  // Declared base addresses only (the assigned ones depend on the workload's memory; `check` prints the map).
  nlohmann::ordered_json addr = nlohmann::ordered_json::object();
  for (std::size_t g = 0; g < H.gpus.size(); ++g)
    if (H.gpus[g].has_address) addr[fmt::format("gpu{}", g)] = H.gpus[g].address;
  if (H.host_memory_has_address) addr["host_memory"] = H.host_memory_address;
  if (H.address_base) j["fabric"]["address_base"] = H.address_base;
  if (!addr.empty()) j["fabric"]["addresses"] = addr;
  j["link"] = {{"gen", H.gen},
               {"lanes", H.lanes},
               {"max_payload_bytes", H.max_payload},
               {"tlp_overhead_bytes", H.tlp_overhead},
               {"raw_GBps", pcie_raw_Bps(H.gen, H.lanes) / 1e9}};
  j["latency_ns"] = {{"switch", H.switch_ps / 1e3},
                     {"host_bridge", H.host_bridge_ps / 1e3},
                     {"quadrant", H.quadrant_ps / 1e3},
                     {"data_fabric", H.data_fabric_ps / 1e3},
                     {"host_memory", H.host_memory_ps / 1e3}};
  j["bandwidth_GBps"] = {{"nbio_port", H.nbio_port_Bps / 1e9},
                         {"data_fabric_port", H.data_fabric_port_Bps / 1e9},
                         {"host_memory", H.host_memory_Bps / 1e9}};
}

// read_stall, write_ordering, engine and gpu of the echo.
void mechanisms_json(const HostSpec& H, nlohmann::ordered_json& j) {
  const auto& E = H.engine;
  std::vector<int> order(E.calendar.order.begin(), E.calendar.order.end());
  j["read_stall"] = {{"enabled", E.read_stall.enabled},
                     {"period_ms", E.calendar.period_ps / 1e9},
                     {"window_ms", E.calendar.window_ps / 1e9},
                     {"stagger_ms", E.calendar.stagger_ps / 1e9},
                     {"offset_ms", E.calendar.offset_ps / 1e9},
                     {"order", order},
                     {"fraction", E.read_stall.stall_fraction},
                     {"base_ms", E.read_stall.base_ps / 1e9},
                     {"per_KiB_us", E.read_stall.per_byte_ps * 1024 / 1e6},
                     {"jitter", E.read_stall.jitter},
                     {"granule_bytes", E.read_stall.granule_bytes},
                     {"max_past_window_ms", E.read_stall.max_past_window_ps / 1e9}};
  j["write_ordering"] = {{"enabled", E.ordering.enabled},
                         {"ack_latency_ns", E.ordering.ack_latency_ps / 1e3},
                         {"interleave_bytes", E.ordering.interleave_bytes},
                         {"fanout_window_ns", E.ordering.fanout_window_ps / 1e3}};
  j["engine"] = {{"burst_bytes", E.burst_bytes},
                 {"read_request_bytes", E.request_bytes},
                 {"interleave", E.random_interleave ? "random" : "round-robin"}};
  j["gpu"] = {{"reduce_rate_GBps", H.gpu.reduce_rate_bytes_per_s / 1e9},
              {"dma_setup_ns", H.gpu.dma_setup_ps / 1e3},
              {"memory_latency_ns", H.gpu.memory_latency_ps / 1e3}};
}

// workload (and its schedule) and decode of the echo.
void workload_json(const HostRunConfig& c, nlohmann::ordered_json& j) {
  const auto& H = c.host;
  const auto& W = c.workload;
  j["workload"] = {
      {"mode", c.decode_mode ? "decode" : "transport"},
      {"group", W.group},
      {"transport", W.transport},
      {"size_bytes", W.size_bytes},
      {"duration", W.duration_ps ? nlohmann::ordered_json(W.duration_ps / 1e9) : nlohmann::ordered_json("auto")},
      {"min_duration_ms", W.min_duration_ps / 1e9},
      {"ops", W.ops},
      {"barrier_us", W.barrier_ps / 1e6},
      {"chunk_bytes", W.chunk_bytes},
      {"kernel_barriers", W.kernel_barriers},
      {"data", W.data},
      {"verify", W.verify}};
  if (const auto& S = W.schedule) {
    j["workload"]["algorithm"] = "schedule";
    j["workload"]["collective"] = sw::to_string(W.collective);
    j["workload"]["root"] = W.root;
    j["workload"]["schedule"] = {{"file", W.schedule_path},     {"format", S->format},
                                 {"name", S->name},             {"coll", S->coll},
                                 {"proto", S->proto},           {"nchannels", S->nchannels},
                                 {"nchunksperloop", S->nchunksperloop}, {"ngpus", S->ngpus},
                                 {"inplace", S->inplace},       {"min_bytes", S->min_bytes},
                                 {"max_bytes", S->max_bytes}};
    if (H.gpu.threadblock_rate_bytes_per_s > 0)
      j["gpu"]["threadblock_rate_GBps"] = H.gpu.threadblock_rate_bytes_per_s / 1e9;
  }
  if (c.decode_mode) {
    const auto& D = c.decode;
    j["decode"] = {{"selection", sw::to_string(D.selection)},
                   {"allreduces", D.allreduces},
                   {"layers", D.layers},
                   {"compute_us", D.compute_ps / 1e6},
                   {"candidates", D.candidates},
                   {"drop_reads_when_crossing", D.drop_reads_when_crossing},
                   {"race_window_ms", D.race_window_ps / 1e9},
                   {"start_phase", D.random_start_phase ? "random" : "zero"}};
  }
}

}  // namespace

nlohmann::ordered_json to_json(const HostRunConfig& c) {
  nlohmann::ordered_json j;
  hardware_json(c.host, j);
  mechanisms_json(c.host, j);
  workload_json(c, j);
  j["seed"] = c.seed;
  return j;
}

std::string host_summary(const HostRunConfig& c) {
  const auto& H = c.host;
  std::ostringstream os;
  os << fmt::format(
      "host {} (pcie-host): {} quadrants, {} host bridges, {} switch partitions, {} GPUs, host memory {:.3f} MiB\n",
      H.name, H.quadrants, H.bridges.size(), H.partitions.size(), H.gpus.size(),
      static_cast<double>(H.host_memory_bytes) / (1 << 20));
  for (std::size_t b = 0; b < H.bridges.size(); ++b) {
    std::string gpus;
    for (std::size_t g = 0; g < H.gpus.size(); ++g)
      if (H.partitions[H.gpus[g].partition].bridge == static_cast<int>(b))
        gpus += fmt::format("{}{}{}", gpus.empty() ? "" : ",", g,
                            H.gpus[g].lanes != H.lanes ? fmt::format("(x{})", H.gpus[g].lanes) : "");
    os << fmt::format("  host bridge {} (quadrant {}): GPUs {}\n", H.bridges[b].bus, H.bridges[b].quadrant, gpus);
  }
  const auto& G = c.workload.group;
  os << "  group";
  for (int g : G) os << " " << g;
  os << ": path classes\n";
  for (std::size_t i = 0; i < G.size(); ++i)
    for (std::size_t j = i + 1; j < G.size(); ++j) {
      const auto& a = H.gpus[G[i]];
      const auto& b = H.gpus[G[j]];
      const char* cls = a.partition == b.partition                       ? "same partition"
                        : gpu_quadrant(H, G[i]) == gpu_quadrant(H, G[j]) ? "same quadrant"
                                                                         : "cross-quadrant";
      os << fmt::format("    {} - {}: {}\n", G[i], G[j], cls);
    }
  return os.str();
}

std::string host_dot(const HostSpec& h) {
  using Graph = boost::adjacency_list<boost::vecS, boost::vecS, boost::undirectedS>;
  const auto tree = host_tree(h, [&] {
    std::vector<int> all(h.gpus.size());
    for (std::size_t i = 0; i < all.size(); ++i) all[i] = static_cast<int>(i);
    return all;
  }());
  Graph g(tree.size());
  std::vector<std::string> names;
  for (std::size_t i = 0; i < tree.size(); ++i) {
    names.push_back(tree[i].name);
    if (tree[i].parent >= 0) boost::add_edge(static_cast<std::size_t>(tree[i].parent), i, g);
  }
  std::ostringstream os;
  boost::write_graphviz(os, g, boost::make_label_writer(names.data()));
  return os.str();
}

}  // namespace fabricsim::fabric
