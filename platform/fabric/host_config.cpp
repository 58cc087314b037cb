#include "platform/fabric/host_config.h"

#include <fmt/format.h>

#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/graphviz.hpp>
#include <sstream>

#include <algorithm>
#include <filesystem>
#include <map>
#include <optional>
#include <set>

#include "platform/config/units.h"
#include "platform/fabric/fabric_config.h"
#include "sw/schedule_exec.h"
#include "sw/transports.h"

namespace fabricsim::fabric {

double pcie_raw_Bps(std::uint32_t gen, std::uint32_t lanes) {
  // GT/s per lane and line coding by generation (PCIe base spec): Gen1/2 8b/10b, Gen3-5 128b/130b.
  static const double gts[] = {0, 2.5, 5, 8, 16, 32};
  const double coding = gen <= 2 ? 8.0 / 10.0 : 128.0 / 130.0;
  return gts[gen] * 1e9 * lanes * coding / 8.0;
}

namespace {
// Bus, switch and partition names become SystemC module names: letters, digits, '_'.
bool module_safe(const std::string& n) {
  if (n.empty()) return false;
  for (char c : n)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return false;
  return true;
}
// A whole non-negative integer, or -1.
int whole(const std::string& t) {
  try {
    std::size_t pos = 0;
    const int v = std::stoi(t, &pos);
    return pos == t.size() && v >= 0 ? v : -1;
  } catch (...) {
    return -1;
  }
}
}  // namespace

int gpu_quadrant(const HostSpec& h, int id) { return h.bridges[h.partitions[h.gpus.at(id).partition].bridge].quadrant; }

namespace {

// ps per payload byte of a PCIe link: raw rate less TLP header/framing overhead per max payload.
double pcie_ps_per_byte(const HostSpec& h, std::uint32_t gen, std::uint32_t lanes) {
  const double eff = static_cast<double>(h.max_payload) / static_cast<double>(h.max_payload + h.tlp_overhead);
  return 1e12 / (pcie_raw_Bps(gen, lanes) * eff);
}
double ps_per_byte(double Bps) { return Bps > 0 ? 1e12 / Bps : 0.0; }

}  // namespace

std::vector<pcie::PcieNode> host_tree(const HostSpec& h, const std::vector<int>& group) {
  using K = pcie::PcieNode::Kind;
  std::vector<pcie::PcieNode> n;
  n.push_back({"data_fabric", K::data_fabric, -1, -1, -1, 0, 0, 0, 0});
  const double x16 = pcie_ps_per_byte(h, h.gen, h.lanes);
  const double nbio = ps_per_byte(h.nbio_port_Bps), df = ps_per_byte(h.data_fabric_port_Bps);
  std::vector<int> qnode(h.quadrants), bnode(h.bridges.size()), pnode(h.partitions.size());
  for (int q = 0; q < h.quadrants; ++q) {
    qnode[q] = static_cast<int>(n.size());
    n.push_back({fmt::format("quadrant{}", q), K::quadrant, 0, -1, q, df, df, h.data_fabric_ps, h.quadrant_ps});
  }
  for (std::size_t b = 0; b < h.bridges.size(); ++b) {
    bnode[b] = static_cast<int>(n.size());
    const int q = h.bridges[b].quadrant;
    n.push_back(
        {"hb" + h.bridges[b].bus, K::host_bridge, qnode[q], -1, q, nbio, nbio, h.quadrant_ps, h.host_bridge_ps});
  }
  for (std::size_t p = 0; p < h.partitions.size(); ++p) {
    pnode[p] = static_cast<int>(n.size());
    const int b = h.partitions[p].bridge;
    std::string name = h.partitions[p].name;
    std::replace(name.begin(), name.end(), '.', '_');  // SystemC names allow no '.'
    n.push_back({name, K::partition, bnode[b], -1, h.bridges[b].quadrant, x16, x16, h.host_bridge_ps, h.switch_ps});
  }
  for (std::size_t r = 0; r < group.size(); ++r) {
    const auto& g = h.gpus.at(group[r]);
    const double link = pcie_ps_per_byte(h, g.gen, g.lanes);
    n.push_back({fmt::format("gpu{}", group[r]), K::endpoint, pnode[g.partition], static_cast<int>(r),
                 gpu_quadrant(h, group[r]), link, link, h.switch_ps, 0});
  }
  const double mem = ps_per_byte(h.host_memory_Bps);
  n.push_back({"host_memory", K::endpoint, 0, static_cast<int>(group.size()), -1, mem, mem, h.data_fabric_ps,
               h.host_memory_ps});
  return n;
}

sw::Ladder load_ladder(const std::string& path) {
  auto doc = std::make_shared<config::Document>(config::load_document(path));
  config::Section root = config::root_section(doc);
  config::Section l = root.child("ladder");
  sw::Ladder L;
  L.name = l.required_string("name");
  l.string("description", "");
  const auto& names = sw::transport_names();
  std::vector<std::string> allreduce;  // a ladder picks AllReduce transports, not the probes
  for (const auto& t : names)
    if (t != "read_ring" && t != "write_all") allreduce.push_back(t);
  auto buckets = l.list("buckets", true);
  if (buckets.empty()) l.fail("buckets", "a ladder needs at least one bucket");
  for (auto& b : buckets) {
    sw::Ladder::Bucket k;
    if (!b.has("max") || !b.has("transport")) {
      b.finish();  // a misspelt key is the likelier cause: name it
      b.fail(b.has("max") ? "transport" : "max", "required key is missing");
    }
    k.max_bytes = b.bytes("max", 0);
    if (k.max_bytes == 0) b.fail("max", "a bucket's maximum must be > 0");
    k.transport = b.choice("transport", "", allreduce);
    if (!L.buckets.empty() && k.max_bytes <= L.buckets.back().max_bytes)
      b.fail("max", "bucket maxima must be strictly ascending");
    b.finish();
    L.buckets.push_back(k);
  }
  l.finish();
  root.finish();
  return L;
}

HostRunConfig parse_host(config::Section root) {
  HostRunConfig c;
  HostSpec& H = c.host;
  H.file = root.file();
  config::Section f = root.child("fabric");
  H.name = f.string("name", "host");
  f.choice("kind", "pcie-host", {"pcie-host"});
  H.quadrants = static_cast<int>(f.integer("quadrants", 4, 1, 64));

  // Links and latencies.
  {
    config::Section l = f.child_or_empty("link");
    H.gen = static_cast<std::uint32_t>(l.integer("gen", 5, 1, 5));
    H.lanes = static_cast<std::uint32_t>(l.integer("lanes", 16, 1, 32));
    if (!(H.lanes == 1 || H.lanes == 2 || H.lanes == 4 || H.lanes == 8 || H.lanes == 16 || H.lanes == 32))
      l.fail("lanes", "a PCIe link has 1, 2, 4, 8, 16 or 32 lanes");
    H.max_payload = l.bytes("max_payload", 256);
    if (H.max_payload < 128 || H.max_payload > 4096 || (H.max_payload & (H.max_payload - 1)))
      l.fail("max_payload", "max payload size is a power of two from 128B to 4096B");
    H.tlp_overhead = l.bytes("tlp_overhead", 24);
    l.finish();
    config::Section t = f.child_or_empty("latency");
    H.switch_ps = t.time_ps("switch", 150'000);
    H.host_bridge_ps = t.time_ps("host_bridge", 300'000);
    H.quadrant_ps = t.time_ps("quadrant", 200'000);
    H.data_fabric_ps = t.time_ps("data_fabric", 250'000);
    H.host_memory_ps = t.time_ps("host_memory", 300'000);
    t.finish();
    config::Section b = f.child_or_empty("bandwidth");
    H.nbio_port_Bps = b.rate_bps("nbio_port", 45e9 * 8) / 8;
    H.data_fabric_port_Bps = b.rate_bps("data_fabric_port", 64e9 * 8) / 8;
    H.host_memory_Bps = b.rate_bps("host_memory", 400e9 * 8) / 8;
    b.finish();
  }

  // Host bridges, partitions, GPUs.
  std::map<std::string, int> bus_index, part_index;
  for (auto& b : f.list("host_bridges", true)) {
    HostSpec::Bridge hb;
    hb.bus = b.required_string("bus");
    if (!module_safe(hb.bus)) b.fail("bus", fmt::format("'{}' is not a bus name (letters, digits, '_')", hb.bus));
    hb.quadrant = static_cast<int>(b.integer("quadrant", 0, 0, 63));
    if (hb.quadrant >= H.quadrants)
      b.fail("quadrant", fmt::format("quadrant {} does not exist (fabric.quadrants: {})", hb.quadrant, H.quadrants));
    if (!bus_index.emplace(hb.bus, static_cast<int>(H.bridges.size())).second)
      b.fail("bus", fmt::format("host bridge '{}' is listed twice", hb.bus));
    b.finish();
    H.bridges.push_back(hb);
  }
  for (auto& s : f.list("switches", true)) {
    const std::string chip = s.required_string("name");
    if (!module_safe(chip)) s.fail("name", fmt::format("'{}' is not a switch name (letters, digits, '_')", chip));
    for (auto& p : s.list("partitions", true)) {
      HostSpec::Partition part;
      const std::string pn = p.required_string("name");
      if (!module_safe(pn)) p.fail("name", fmt::format("'{}' is not a partition name (letters, digits, '_')", pn));
      part.name = chip + "." + pn;  // the YAML name; module names use "_"
      const std::string bus = p.required_string("host_bridge");
      auto it = bus_index.find(bus);
      if (it == bus_index.end()) p.fail("host_bridge", fmt::format("no host bridge '{}' (fabric.host_bridges)", bus));
      part.bridge = it->second;
      if (!part_index.emplace(part.name, static_cast<int>(H.partitions.size())).second)
        p.fail("name", fmt::format("partition '{}' is listed twice", part.name));
      p.finish();
      H.partitions.push_back(part);
    }
    s.finish();
  }
  std::map<int, HostSpec::Gpu> gpus;
  for (auto& g : f.list("gpus", true)) {
    if (!g.has("id")) {
      g.finish();  // a misspelt key is the likelier cause: name it
      g.fail("", "a GPU needs an 'id'");
    }
    const int id = static_cast<int>(g.integer("id", 0, 0, 4095));
    HostSpec::Gpu gpu;
    const std::string part = g.required_string("partition");
    auto it = part_index.find(part);
    if (it == part_index.end())
      g.fail("partition", fmt::format("no switch partition '{}' (write it as <switch>.<partition>)", part));
    gpu.partition = it->second;
    gpu.lanes = static_cast<std::uint32_t>(g.integer("lanes", H.lanes, 1, 32));
    if (gpu.lanes & (gpu.lanes - 1)) g.fail("lanes", "a PCIe link has 1, 2, 4, 8, 16 or 32 lanes");
    gpu.gen = static_cast<std::uint32_t>(g.integer("gen", H.gen, 1, 5));
    if (!gpus.emplace(id, gpu).second) g.fail("id", fmt::format("GPU {} is listed twice", id));
    g.finish();
  }
  if (gpus.size() < 2) f.fail("gpus", "a host needs at least 2 GPUs");
  for (int i = 0; i < static_cast<int>(gpus.size()); ++i)
    if (!gpus.count(i))
      f.fail("gpus", fmt::format("GPU ids must run 0..{} without a gap; {} is missing", gpus.size() - 1, i));
  for (auto& [id, g] : gpus) H.gpus.push_back(g);
  config::Section hm = f.child_or_empty("host_memory");
  H.host_memory_bytes = hm.bytes("size", 256ull << 20);
  if (H.host_memory_bytes == 0) hm.fail("size", "host memory must be > 0");
  hm.finish();
  f.finish();

  // GPU model.
  {
    config::Section g = root.child_or_empty("gpu");
    H.gpu.reduce_rate_bytes_per_s = g.rate_bps("reduce_rate", 200e9 * 8) / 8;
    H.gpu.dma_setup_ps = g.time_ps("dma_setup", 0);
    H.gpu.memory_latency_ps = g.time_ps("memory_latency", 500'000);
    // Schedules (sw/schedule_exec.h): copy / reduce rate of one threadblock; off (0) by default.
    if (g.has("threadblock_rate")) {
      const std::string v = g.string("threadblock_rate", "off");
      H.gpu.threadblock_rate_bytes_per_s = v == "off" || v == "0" ? 0 : g.rate_bps("threadblock_rate", 0) / 8.0;
    }
    g.finish();
  }

  // Mechanisms.
  {
    config::Section m = root.child_or_empty("mechanisms");
    config::Section a = m.child_or_empty("read_stall");
    auto& cal = H.engine.calendar;
    auto& rs = H.engine.read_stall;
    const bool on = a.boolean("enabled", true);
    cal.enabled = on;
    rs.enabled = on;
    cal.period_ps = a.time_ps("period", cal.period_ps);
    cal.window_ps = a.time_ps("window", cal.window_ps);
    cal.stagger_ps = a.time_ps("stagger", cal.stagger_ps);
    cal.offset_ps = a.time_ps("offset", cal.offset_ps);
    std::vector<std::string> def;
    for (int q = 0; q < H.quadrants; ++q) def.push_back(std::to_string(q));
    cal.order.clear();
    for (const auto& q : a.strings("order", def)) {
      const int v = whole(q);
      if (v < 0 || v >= H.quadrants) a.fail("order", fmt::format("'{}' is not a quadrant (0..{})", q, H.quadrants - 1));
      cal.order.push_back(v);
    }
    if (cal.period_ps == 0) a.fail("period", "the stall period must be > 0");
    if (cal.window_ps > cal.period_ps)
      a.fail("window", fmt::format("a window of {} ms is longer than its period of {} ms", cal.window_ps / 1e9,
                                   cal.period_ps / 1e9));
    try {
      pcie::StallCalendar check(cal);
    } catch (const std::invalid_argument& e) {
      // window <= period holds here: the stagger (or the number of quadrants in the order) is to blame.
      a.fail(a.has("stagger") ? "stagger" : "order",
             fmt::format("{} ({} quadrants in the order, {} ms apart, {} ms windows, {} ms period)", e.what(),
                         cal.order.size(), cal.stagger_ps / 1e9, cal.window_ps / 1e9, cal.period_ps / 1e9));
    }
    rs.stall_fraction = a.probability("fraction", rs.stall_fraction);
    rs.base_ps = a.time_ps("base", rs.base_ps);
    rs.per_byte_ps =
        static_cast<double>(a.time_ps("per_KiB", static_cast<std::uint64_t>(rs.per_byte_ps * 1024))) / 1024.0;
    rs.jitter = a.number("jitter", rs.jitter, 0, 1);
    rs.granule_bytes = a.bytes("granule", rs.granule_bytes);
    rs.max_past_window_ps = a.time_ps("max_past_window", rs.max_past_window_ps);
    {
      // The longest stall of one piece (at most 1 GiB, the largest size) must stay within the time limit.
      const double piece = rs.granule_bytes ? std::min<double>(rs.granule_bytes, 1073741824.0) : 1073741824.0;
      const double worst = (static_cast<double>(rs.base_ps) + rs.per_byte_ps * piece) * (1.0 + rs.jitter);
      if (worst > config::kMaxTimePs)
        a.fail(
            a.has("per_KiB") ? "per_KiB" : "base",
            fmt::format("a stalled read of {:g} B would wait {:g} ps, beyond the time limit of 1e17 ps", piece, worst));
    }
    a.finish();
    config::Section b = m.child_or_empty("write_ordering");
    H.engine.ordering.enabled = b.boolean("enabled", true);
    H.engine.ordering.ack_latency_ps = b.time_ps("ack_latency", 700'000);
    H.engine.ordering.interleave_bytes = b.bytes("interleave", 2048);
    H.engine.ordering.fanout_window_ps = b.time_ps("fanout_window", 1'000'000);
    b.finish();
    m.finish();
  }
  {
    config::Section e = root.child_or_empty("engine");
    H.engine.burst_bytes = e.bytes("burst", 8192);
    if (H.engine.burst_bytes < 64) e.fail("burst", "a burst carries at least 64 B");
    H.engine.request_bytes = e.bytes("read_request", 24);
    H.engine.random_interleave = e.choice("interleave", "random", {"random", "round-robin"}) == "random";
    e.finish();
  }

  // Workload.
  std::optional<config::Section> wsec;  // kept for checks that need the decode section too
  {
    config::Section w = root.child_or_empty("workload");
    HostWorkload& W = c.workload;
    // A user's schedule (docs/models/pcie.md, "Schedules") instead of a transport.
    const bool schedule = w.has("algorithm") && w.choice("algorithm", "", {"schedule"}) == "schedule";
    std::shared_ptr<const sw::Schedule> S;
    std::vector<std::string> group_default{"0", "1", "2", "3"};
    if (schedule) {
      S = load_workload_schedule(w, W.schedule_path);
      const std::string where = fmt::format("{}:{}: ", S->file, S->ngpus_line);
      if (!w.has("group")) {
        if (S->ngpus > static_cast<int>(H.gpus.size()))
          w.fail("schedule", fmt::format("{}the schedule is for ngpus={} ranks, the host has {} GPUs", where,
                                         S->ngpus, H.gpus.size()));
        group_default.clear();
        for (int g = 0; g < S->ngpus; ++g) group_default.push_back(std::to_string(g));
      }
      if (w.has("rank_map"))
        w.fail("rank_map", "on a pcie-host fabric workload.group places the ranks: schedule rank i runs on GPU group[i]");
    } else {
      for (const char* k : {"schedule", "rank_map", "collective", "root"})
        if (w.has(k)) w.fail(k, "only read with workload.algorithm: schedule");
    }
    W.group.clear();
    std::set<int> seen;
    for (const auto& g : w.strings("group", group_default)) {
      int v = -1;
      try {
        std::size_t pos = 0;
        v = std::stoi(g, &pos);
        if (pos != g.size()) v = -1;
      } catch (...) {
      }
      if (v < 0 || v >= static_cast<int>(H.gpus.size()))
        w.fail("group", fmt::format("'{}' is not a GPU of this host (0..{})", g, H.gpus.size() - 1));
      if (!seen.insert(v).second) w.fail("group", fmt::format("GPU {} is listed twice", v));
      W.group.push_back(v);
    }
    if (W.group.size() < 2) w.fail("group", "a group needs at least 2 GPUs");
    if (S && static_cast<int>(W.group.size()) != S->ngpus)
      w.fail("group", fmt::format("{}:{}: the schedule is for ngpus={} ranks, the group lists {} GPUs (schedule rank "
                                  "i runs on GPU group[i])",
                                  S->file, S->ngpus_line, S->ngpus, W.group.size()));
    const auto& names = sw::transport_names();
    std::vector<std::string> choices = names;
    W.transport = w.choice("transport", "pull", choices);  // validated, but a schedule moves data as its steps say
    if (S) W.transport = "schedule";
    W.size_bytes = w.bytes("size", W.size_bytes);
    const std::uint64_t n = W.group.size();
    if (W.size_bytes == 0 || W.size_bytes % (4 * n) != 0)
      w.fail("size", fmt::format("size must be a positive multiple of 4 x group size ({} B)", 4 * n));
    if (W.size_bytes > (1ull << 30)) w.fail("size", "at most 1GiB per GPU (one DMA operation moves < 4 GiB)");
    if (w.has("duration") && w.string("duration", "auto") == "auto") {
      W.duration_ps = 0;
    } else {
      W.duration_ps = w.time_ps("duration", 0);
      if (w.has("duration") && W.duration_ps == 0) w.fail("duration", "a cell must last > 0 (or write 'auto')");
    }
    W.min_duration_ps = w.time_ps("min_duration", W.min_duration_ps);
    // A schedule runs `ops` times (default once); ops: 0 runs it back to back for the cell's duration.
    W.ops = w.integer("ops", S ? 1 : 0, 0, 1ull << 40);
    W.barrier_ps = w.time_ps("barrier", 1'000'000);
    W.chunk_bytes = w.bytes("chunk", W.chunk_bytes);
    if (W.chunk_bytes == 0 || W.chunk_bytes % 4) w.fail("chunk", "chunk must be a positive multiple of 4 B");
    W.kernel_barriers = w.boolean("kernel_barriers", false);
    W.data = w.boolean("data", S != nullptr);  // a schedule moves real bytes and is checked by default
    W.verify = w.boolean("verify", true);
    c.decode_mode = w.choice("mode", "transport", {"transport", "decode"}) == "decode";
    if (S) {
      if (c.decode_mode) w.fail("mode", "decode rounds run transports picked by a selection policy, not a schedule");
      const bool op_explicit = w.has("collective");
      const sw::Op declared = sw::parse_op(w.choice(
          "collective", "allreduce", {"allreduce", "reduce_scatter", "allgather", "alltoall", "broadcast"}));
      check_workload_schedule(w, *S, static_cast<int>(W.group.size()), op_explicit ? &declared : nullptr,
                              W.size_bytes);
      W.collective = S->op;
      W.root = static_cast<int>(w.integer("root", 0, 0, 1u << 20));
      if (S->op == sw::Op::broadcast && W.root >= S->ngpus)
        w.fail("root", fmt::format("broadcast root {} out of range [0, {}]", W.root, S->ngpus - 1));
      W.schedule = S;
    }
    w.finish();
    wsec = w;
  }
  {
    config::Section d = root.child_or_empty("decode");
    DecodeSpec& D = c.decode;
    const std::string sel =
        d.choice("selection", "race-median", {"ladder", "race-median", "race-mean", "fabric-class"});
    D.selection = sw::parse_selection(sel);
    D.allreduces.clear();
    const std::uint64_t n = c.workload.group.size();
    for (const auto& x : d.strings("allreduces", {"80KiB"})) {
      std::uint64_t v = 0;
      try {
        v = config::parse_bytes(x);
      } catch (const std::invalid_argument& e) {
        d.fail("allreduces", e.what());
      }
      if (c.decode_mode && (v == 0 || v % (4 * n)))
        d.fail("allreduces", fmt::format("{} is not a positive multiple of 4 x group size ({} B)", x, 4 * n));
      if (v > (1ull << 30)) d.fail("allreduces", fmt::format("{}: at most 1GiB per GPU", x));
      D.allreduces.push_back(v);
    }
    if (D.allreduces.empty()) d.fail("allreduces", "a decode round needs at least one AllReduce size");
    D.layers = static_cast<std::uint32_t>(d.integer("layers", 8, 1, 1000));
    D.compute_ps = d.time_ps("compute", D.compute_ps);
    D.candidates = d.strings("candidates", sw::transport_names());
    std::set<std::string> seen_c;
    for (const auto& t : D.candidates) {
      const auto& names = sw::transport_names();
      if (std::find(names.begin(), names.end(), t) == names.end() || t == "read_ring" || t == "write_all")
        d.fail("candidates", fmt::format("'{}' is not an AllReduce transport", t));
      if (!seen_c.insert(t).second) d.fail("candidates", fmt::format("'{}' is listed twice", t));
    }
    if (D.candidates.empty()) d.fail("candidates", "a race needs at least one candidate");
    D.drop_reads_when_crossing = d.boolean("drop_reads_when_crossing", false);
    {
      std::set<int> q;
      for (int g : c.workload.group) q.insert(gpu_quadrant(H, g));
      if (D.drop_reads_when_crossing && q.size() > 1 && sw::without_peer_reads(D.candidates).empty())
        d.fail("candidates",
               "every candidate reads peers, and drop_reads_when_crossing removes them all on this group");
    }
    D.race_window_ps = d.time_ps("race_window", D.race_window_ps);
    if (D.race_window_ps == 0) d.fail("race_window", "a race window must be > 0");
    D.random_start_phase = d.choice("start_phase", "random", {"random", "zero"}) == "random";
    const std::filesystem::path base = std::filesystem::path(root.file()).parent_path();
    auto ladder = [&](const std::string& key, sw::Ladder& into, bool needed) {
      if (!d.has(key)) {
        if (needed) d.fail(key, fmt::format("selection '{}' needs '{}' (a ladder file)", sel, key));
        return;
      }
      const std::string f = (base / d.string(key, "")).lexically_normal().string();
      if (!c.decode_mode) return;  // only decode runs read ladders
      if (!config::is_file(f))
        d.fail(key, fmt::format("ladder file '{}' not found (paths are relative to the host file)", f));
      into = load_ladder(f);
      const std::uint64_t biggest = *std::max_element(D.allreduces.begin(), D.allreduces.end());
      if (biggest > into.buckets.back().max_bytes)
        d.fail(key, fmt::format("ladder '{}' ends at {} B, below the {} B AllReduce of the decode round", into.name,
                                into.buckets.back().max_bytes, biggest));
    };
    ladder("ladder", D.ladder, D.selection == sw::Selection::ladder);
    ladder("switch_local_ladder", D.switch_local, D.selection == sw::Selection::fabric_class);
    ladder("quadrant_crossing_ladder", D.quadrant_crossing, D.selection == sw::Selection::fabric_class);
    d.finish();
  }
  // Every transport this run can use must fit in host memory (nccl_shm stages there),
  // and real bytes must fit in RAM.
  {
    std::vector<std::pair<std::string, std::uint64_t>> uses{{c.workload.transport, c.workload.size_bytes}};
    if (c.workload.schedule) uses.clear();  // a schedule writes GPU to GPU: nothing staged in host memory
    if (c.decode_mode) {
      uses.clear();
      const auto& D = c.decode;
      for (auto b : D.allreduces) {
        for (const auto& t : D.candidates) uses.emplace_back(t, b);
        for (const auto* ld : {&D.ladder, &D.switch_local, &D.quadrant_crossing})
          for (const auto& k : ld->buckets) uses.emplace_back(k.transport, b);
      }
    }
    const int n = static_cast<int>(c.workload.group.size());
    std::uint64_t gpu_bytes = 0;
    for (const auto& [t, b] : uses) {
      auto spec = sw::transport_spec(t, b, n);
      spec.chunk_bytes = c.workload.chunk_bytes;
      spec.fabric_barriers = c.workload.kernel_barriers;
      const std::uint64_t need = sw::host_bytes(spec, n);
      if (need > H.host_memory_bytes)
        hm.fail("size", fmt::format("{} of {} B per GPU on {} GPUs stages {} B in host memory; the host has {} B", t, b,
                                    n, need, H.host_memory_bytes));
      gpu_bytes = std::max(gpu_bytes, sw::layout(spec, n).total);
    }
    if (const auto& S = c.workload.schedule)
      gpu_bytes = sw::layout_schedule(*S, c.workload.size_bytes,
                                      H.gpu.threadblock_rate_bytes_per_s > 0 ? sw::kRatePieceBytes : 0)
                      .memory_bytes;
    const std::uint64_t ram = gpu_bytes * static_cast<std::uint64_t>(n) + H.host_memory_bytes;
    if (c.workload.data && ram > (8ull << 30))
      wsec->fail("data", fmt::format("real bytes need {} MiB of RAM (GPU buffers and host memory); at most 8192 MiB "
                                     "(use data: false, a smaller size or fabric.host_memory.size)",
                                     ram >> 20));
  }
  {
    config::Section r = root.child_or_empty("run");
    c.seed = r.integer("seed", 1, 0, ~0ULL);
    c.deadline_ps = r.time_ps("deadline", 600'000'000'000'000ull);
    r.finish();
  }
  root.finish();
  return c;
}

nlohmann::ordered_json to_json(const HostRunConfig& c) {
  const auto& H = c.host;
  const auto& E = H.engine;
  nlohmann::ordered_json j;
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
  j["seed"] = c.seed;
  return j;
}

}  // namespace fabricsim::fabric

namespace fabricsim::fabric {

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
