// pcie-host configuration, the hardware sections: fabric (links, latencies,
// bandwidths, host bridges, switch partitions, GPUs, host memory), gpu,
// mechanisms (stall calendar, read stalls, write ordering) and engine.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <stdexcept>

#include "platform/config/units.h"
#include "platform/fabric/fabric_config.h"
#include "platform/fabric/host_parse.h"

namespace fabricsim::fabric::host_parse {

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

// fabric.link, fabric.latency, fabric.bandwidth.
void link_latency_bandwidth(config::Section& f, HostSpec& H) {
  config::Section l = f.child_or_empty("link");
  H.gen = static_cast<std::uint32_t>(l.integer("gen", 5, 1, 5));
  H.lanes = static_cast<std::uint32_t>(l.integer("lanes", 16, 1, 32));
  if (!(H.lanes == 1 || H.lanes == 2 || H.lanes == 4 || H.lanes == 8 || H.lanes == 16 || H.lanes == 32))
    l.fail("lanes", "a PCIe link has 1, 2, 4, 8, 16 or 32 lanes");
  H.max_payload = l.bytes("max_payload", 256);
  if (H.max_payload < 128 || H.max_payload > 4096 || (H.max_payload & (H.max_payload - 1)))
    l.fail("max_payload", "max payload size is a power of two from 128B to 4096B");
  H.tlp_overhead = l.bytes("tlp_overhead", 24);
  // Header (12-16 B, plus prefixes), sequence number, LCRC and framing: tens of bytes per TLP.
  if (H.tlp_overhead > 128)
    l.fail("tlp_overhead", fmt::format("{} B of overhead per TLP is not a PCIe TLP's (header, sequence number, "
                                       "LCRC and framing: 0..128 B)",
                                       H.tlp_overhead));
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

// fabric.host_bridges; returns bus name -> bridge index.
std::map<std::string, int> host_bridges(config::Section& f, HostSpec& H) {
  std::map<std::string, int> bus_index;
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
  return bus_index;
}

// fabric.switches and their partitions; returns "<switch>.<partition>" -> partition index.
std::map<std::string, int> switches(config::Section& f, HostSpec& H, const std::map<std::string, int>& bus_index) {
  std::map<std::string, int> part_index;
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
  return part_index;
}

// fabric.gpus: ids 0..N-1 without a gap, each on an existing partition.
void gpus(config::Section& f, HostSpec& H, const std::map<std::string, int>& part_index) {
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
    const char* key = g.has("address") ? "address" : "id";
    gpu.address_src = {where_of(g, key), g.path() + "." + key};
    if (g.has("address")) {
      gpu.has_address = true;
      gpu.address = parse_address(g, "address");
    }
    if (!gpus.emplace(id, gpu).second) g.fail("id", fmt::format("GPU {} is listed twice", id));
    g.finish();
  }
  if (gpus.size() < 2) f.fail("gpus", "a host needs at least 2 GPUs");
  for (int i = 0; i < static_cast<int>(gpus.size()); ++i)
    if (!gpus.count(i))
      f.fail("gpus", fmt::format("GPU ids must run 0..{} without a gap; {} is missing", gpus.size() - 1, i));
  for (auto& [id, g] : gpus) H.gpus.push_back(g);
}

// mechanisms.read_stall: the stall calendar (period, window, stagger, offset, quadrant order).
void stall_calendar(config::Section& a, HostSpec& H) {
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
    if (std::find(cal.order.begin(), cal.order.end(), v) != cal.order.end())
      a.fail("order", fmt::format("quadrant {} is listed twice", v));
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
}

// mechanisms.read_stall: what a stalled read costs.
void read_stall_costs(config::Section& a, HostSpec& H) {
  auto& rs = H.engine.read_stall;
  rs.stall_fraction = a.probability("fraction", rs.stall_fraction);
  rs.base_ps = a.time_ps("base", rs.base_ps);
  rs.per_byte_ps =
      static_cast<double>(a.time_ps("per_KiB", static_cast<std::uint64_t>(rs.per_byte_ps * 1024))) / 1024.0;
  rs.jitter = a.number("jitter", rs.jitter, 0, 1);
  rs.granule_bytes = a.bytes("granule", rs.granule_bytes);
  rs.max_past_window_ps = a.time_ps("max_past_window", rs.max_past_window_ps);
  // The longest stall of one piece (at most 1 GiB, the largest size) must stay within the time limit.
  const double piece = rs.granule_bytes ? std::min<double>(rs.granule_bytes, 1073741824.0) : 1073741824.0;
  const double worst = (static_cast<double>(rs.base_ps) + rs.per_byte_ps * piece) * (1.0 + rs.jitter);
  if (worst > config::kMaxTimePs)
    a.fail(a.has("per_KiB") ? "per_KiB" : "base",
           fmt::format("a stalled read of {:g} B would wait {:g} ps, beyond the time limit of 1e17 ps", piece, worst));
}

}  // namespace

config::Section fabric_section(config::Section& root, HostSpec& H) {
  config::Section f = root.child("fabric");
  H.name = f.name("name", "host");
  f.choice("kind", "pcie-host", {"pcie-host"});
  H.quadrants = static_cast<int>(f.integer("quadrants", 4, 1, 64));
  link_latency_bandwidth(f, H);
  const std::map<std::string, int> bus_index = host_bridges(f, H);
  const std::map<std::string, int> part_index = switches(f, H, bus_index);
  gpus(f, H, part_index);
  config::Section hm = f.child_or_empty("host_memory");
  H.host_memory_bytes = hm.bytes("size", 256ull << 20);
  if (H.host_memory_bytes == 0) hm.fail("size", "host memory must be > 0");
  if (hm.has("address")) {
    H.host_memory_has_address = true;
    H.host_memory_address = parse_address(hm, "address");
    H.host_memory_address_src = {where_of(hm, "address"), hm.path() + ".address"};
  } else {
    H.host_memory_address_src = {where_of(f, "host_memory"), f.path() + ".host_memory"};
  }
  if (f.has("address_base")) H.address_base = parse_address(f, "address_base");
  hm.finish();
  config::finish_fabric_section(f, "pcie-host");
  return hm;
}

void gpu_section(config::Section& root, HostSpec& H) {
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

void mechanisms_section(config::Section& root, HostSpec& H) {
  config::Section m = root.child_or_empty("mechanisms");
  config::Section a = m.child_or_empty("read_stall");
  stall_calendar(a, H);
  read_stall_costs(a, H);
  a.finish();
  config::Section b = m.child_or_empty("write_ordering");
  H.engine.ordering.enabled = b.boolean("enabled", true);
  H.engine.ordering.ack_latency_ps = b.time_ps("ack_latency", 700'000);
  H.engine.ordering.interleave_bytes = b.bytes("interleave", 2048);
  H.engine.ordering.fanout_window_ps = b.time_ps("fanout_window", 1'000'000);
  b.finish();
  m.finish();
}

void engine_section(config::Section& root, HostSpec& H) {
  config::Section e = root.child_or_empty("engine");
  H.engine.burst_bytes = e.bytes("burst", 8192);
  if (H.engine.burst_bytes < 64) e.fail("burst", "a burst carries at least 64 B");
  H.engine.request_bytes = e.bytes("read_request", 24);
  H.engine.random_interleave = e.choice("interleave", "random", {"random", "round-robin"}) == "random";
  e.finish();
}

}  // namespace fabricsim::fabric::host_parse
