#include "platform/fabric/fabric_config.h"

#include <fmt/format.h>

#include <cctype>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <set>

#include "models/fabric/core/address_map.h"
#include "platform/config/link_config.h"
#include "platform/config/rifl_config.h"

namespace fabricsim::fabric {

namespace {
// fabric.accelerators of a ring / switched pod: at most 4096. The fabric graph
// keeps all-pairs distances and forwarding tables (accelerators x nodes
// entries each), so loading a fabric costs O(N^2) time and memory: 4096 ranks
// take about a second and 0.1 GiB; 65536 would take minutes and 16 GiB.
constexpr std::uint64_t kMaxAccelerators = 4096;
}  // namespace

std::string where_of(const config::Section& s, const std::string& key) {
  // Section::fail formats "file:line:col: key 'x'"; reuse it to get the prefix.
  try {
    s.fail(key, "");
  } catch (const config::ConfigError& e) {
    std::string w = e.what();
    const auto p = w.find(": key '");
    if (p != std::string::npos) return w.substr(0, p);
    if (w.size() >= 2 && w.compare(w.size() - 2, 2, ": ") == 0) w.resize(w.size() - 2);  // "--set k: "
    return w;
  }
  return s.file();
}

namespace {

models::accelerator_params parse_accel(config::Section s, const models::accelerator_params& base, bool& auto_mem) {
  models::accelerator_params p = base;
  const std::string mem = s.string("memory", auto_mem ? "auto" : fmt::format("{}B", p.memory_bytes));
  if (mem == "auto") {
    auto_mem = true;
  } else {
    auto_mem = false;
    config::Section tmp = s;  // re-read with the unit parser for a proper error
    p.memory_bytes = tmp.bytes("memory", p.memory_bytes);
    if (p.memory_bytes == 0) s.fail("memory", "memory must be > 0");
  }
  p.reduce_rate_bytes_per_s = s.rate_bps("reduce_rate", p.reduce_rate_bytes_per_s * 8) / 8.0;
  p.dma_setup_ps = s.time_ps("dma_setup", p.dma_setup_ps);
  p.memory_latency_ps = s.time_ps("memory_latency", p.memory_latency_ps);
  p.flags = static_cast<std::uint32_t>(s.integer("flags", p.flags, 8, 1u << 20));
  // Schedules (sw/schedule_exec.h): copy / reduce rate of one threadblock; 0 or absent = off.
  if (s.has("threadblock_rate")) {
    const std::string v = s.string("threadblock_rate", "off");
    if (v == "off" || v == "0")
      p.threadblock_rate_bytes_per_s = 0;
    else
      p.threadblock_rate_bytes_per_s = s.rate_bps("threadblock_rate", 0) / 8.0;
  }
  s.finish();
  return p;
}

}  // namespace

// A global address: "0x..." (hex) or a byte count with an optional unit
// ("1GiB"); a multiple of AddressMap::kAlign.
std::uint64_t parse_address(config::Section& s, const std::string& key) {
  const std::string v = s.string(key, "0");
  std::uint64_t a = 0;
  if (v.size() > 2 && v[0] == '0' && (v[1] == 'x' || v[1] == 'X')) {
    std::size_t pos = 0;
    bool ok = v.size() <= 18;
    try {
      if (ok) a = std::stoull(v.substr(2), &pos, 16);
    } catch (...) {
      ok = false;
    }
    if (!ok || pos != v.size() - 2) s.fail(key, fmt::format("'{}' is not a 64-bit hexadecimal address", v));
  } else {
    a = s.bytes(key, 0);
  }
  if (a % fabric_core::AddressMap::kAlign != 0)
    s.fail(key, fmt::format("address {:#x} is not aligned to {} B (a multiple of {:#x})", a,
                            fabric_core::AddressMap::kAlign, fabric_core::AddressMap::kAlign));
  return a;
}

namespace {

models::switch_params parse_switch(config::Section s, const models::switch_params& base) {
  models::switch_params p = base;
  p.latency_ps = s.time_ps("latency", p.latency_ps);
  p.output_queue_flits = static_cast<std::uint32_t>(s.integer("output_queue", p.output_queue_flits, 0, 1u << 24));
  s.finish();
  return p;
}

}  // namespace

bool valid_node_id(const std::string& id) {
  if (id.empty() || id.size() > 256) return false;
  for (const char ch : id)
    if (!(std::isalnum(static_cast<unsigned char>(ch)) || ch == '_' || ch == '-')) return false;
  return true;
}

namespace {

// "acc3.1" -> ("acc3", 1)
// "NODE.PORT": the port digits only (no sign, no space), at most 65535.
bool split_endpoint(const std::string& t, std::string& node, std::uint32_t& port) {
  const auto dot = t.rfind('.');
  if (dot == std::string::npos || dot == 0 || dot + 1 >= t.size() || t.size() - dot - 1 > 5) return false;
  node = t.substr(0, dot);
  unsigned long v = 0;
  for (std::size_t i = dot + 1; i < t.size(); ++i) {
    if (t[i] < '0' || t[i] > '9') return false;
    v = 10 * v + static_cast<unsigned long>(t[i] - '0');
  }
  if (v > 65535) return false;
  port = static_cast<std::uint32_t>(v);
  return true;
}

// ---- users' schedules (workload.algorithm: schedule) -------------------------------
// Kept in one block: workload.schedule, workload.rank_map, the schedule's
// checks against this fabric and workload (docs/collectives.md "Schedules").

// workload.schedule: relative to the fabric file's folder, else to the current folder.
std::string resolve_schedule_path(const config::Section& w, const std::string& value) {
  const config::LocatedFile f = config::locate_beside(std::filesystem::path(w.file()).parent_path(), value);
  // Found in the current folder: a file appearing beside the fabric file
  // later would be found instead (a sweep's resume rule sees it).
  if (f.here) config::record_file_absent(f.beside);
  if (!f.path.empty()) return f.path;
  if (f.beside.empty()) w.fail("schedule", fmt::format("schedule file '{}' not found or not a regular file", value));
  w.fail("schedule", fmt::format("schedule file '{}' not found or not a regular file (looked beside the fabric "
                                 "file, {}, and in the current folder)",
                                 value, f.beside));
}

}  // namespace

std::shared_ptr<const sw::Schedule> load_workload_schedule(config::Section& w, std::string& path) {
  if (!w.has("schedule"))
    w.fail("algorithm", "algorithm: schedule needs workload.schedule: PATH (MSCCL .xml or .yaml)");
  path = resolve_schedule_path(w, w.string("schedule", ""));
  // Read once: the schedule is an input of the run, its bytes join the run's
  // identity (resume rule), and they are what is parsed.
  std::string text;
  try {
    text = config::read_input_file(path, 1u << 30, "schedule file");
  } catch (const config::ConfigError& e) {
    w.fail("schedule", e.what());
  }
  config::record_file_read(path, text);
  sw::Schedule S;
  try {
    S = sw::parse_schedule(text, path);
  } catch (const sw::ScheduleError& e) {
    w.fail("schedule", e.what());
  }
  if (!S.coll_given) {  // an older MSCCL file: the workload names the collective
    if (!w.has("collective"))
      w.fail("schedule", fmt::format("{}:{}: <algo> lacks attribute 'coll' (the collective the schedule computes); "
                                     "add it, or give workload.collective",
                                     S.file, S.coll_line));
    const std::string c = w.string("collective", "");
    if (c == "sendrecv") w.fail("collective", "a schedule computes a collective; sendrecv is not one");
    try {
      sw::resolve_collective(S, sw::parse_op(c));
    } catch (const std::exception&) {
      w.fail("collective", fmt::format("'{}' is not a collective a schedule can compute", c));
    }
  }
  return std::make_shared<const sw::Schedule>(std::move(S));
}

void check_workload_schedule(config::Section& w, const sw::Schedule& S, int ranks, const sw::Op* explicit_op,
                             std::uint64_t bytes) {
  try {
    sw::check_run(S, ranks, explicit_op, bytes);
  } catch (const sw::ScheduleError& e) {
    const std::string m = e.what();
    const std::string key = m.find("workload.collective") != std::string::npos ? "collective"
                            : m.find("size ") != std::string::npos || m.find("_chunks=") != std::string::npos
                                ? "size"
                                : "schedule";
    w.fail(w.has(key) ? key : "schedule", m);
  }
}

namespace {

void parse_schedule_workload(WorkloadSpec& W, config::Section& w, const FabricSpec& F, bool op_explicit, int ranks) {
  const auto S = load_workload_schedule(w, W.schedule_path);
  const sw::Op declared = W.collective.op;
  check_workload_schedule(w, *S, ranks, op_explicit ? &declared : nullptr, W.collective.bytes);
  W.collective.op = S->op;
  W.collective.algorithm = "schedule";
  // A custom schedule has no definition to check its result against: its
  // `correct` is n/a whatever workload.verify says.
  if (S->op == sw::Op::custom) W.verify = false;
  if (S->op == sw::Op::broadcast && W.collective.root >= ranks)
    w.fail("root", fmt::format("broadcast root {} out of range [0, {}]", W.collective.root, ranks - 1));
  // rank_map: schedule rank i runs on the accelerator named by item i (a rank number or a node id).
  const std::vector<std::string> items = w.strings("rank_map", {});
  if (!items.empty()) {
    if (static_cast<int>(items.size()) != ranks)
      w.fail("rank_map", fmt::format("lists {} accelerator{}, the schedule has {} ranks: give a list of one "
                                     "accelerator (rank or id) per schedule rank",
                                     items.size(), items.size() == 1 ? "" : "s", ranks));
    std::vector<bool> used(ranks, false);
    for (std::size_t i = 0; i < items.size(); ++i) {
      int r = -1;
      for (const auto& n : F.nodes)
        if (n.kind == "accelerator" && n.id == items[i]) r = n.rank;
      if (r < 0) {
        try {
          std::size_t pos = 0;
          const long v = std::stol(items[i], &pos);
          if (pos == items[i].size() && v >= 0 && v < ranks) r = static_cast<int>(v);
        } catch (...) {
        }
      }
      if (r < 0)
        w.fail("rank_map", fmt::format("item {} '{}' is neither an accelerator rank in [0, {}] nor an accelerator id",
                                       i, items[i], ranks - 1));
      if (used[r]) w.fail("rank_map", fmt::format("item {} '{}': accelerator rank {} is listed twice", i, items[i], r));
      used[r] = true;
      W.rank_map.push_back(r);
    }
  }
  W.schedule = S;
}

}  // namespace

std::string fabric_kind(const config::Document& doc) {
  // Through a Section, so a missing or misspelt section gets file, line and key.
  auto copy = std::make_shared<config::Document>(doc);
  config::Section root = config::root_section(copy);
  if (!root.has("fabric")) {
    const YAML::Node& r = doc.root;
    for (auto it = r.begin(); it != r.end(); ++it)
      if (it->first.Scalar() != "fabric" && it->first.Scalar().rfind("fab", 0) == 0)
        root.fail(it->first.Scalar(), "unknown key (did you mean 'fabric'?)");
    if (root.has("study")) root.fail("study", "this file is a study, not a fabric: run it with `fabricsim sweep FILE`");
    if (root.has("schedule"))
      root.fail("schedule",
                "this file is a schedule, not a fabric: name it in a fabric's workload (workload.schedule)");
    if (root.has("ladder"))
      root.fail("ladder",
                "this file is a ladder, not a fabric: name it in a PCIe host's decode section (decode.ladder, "
                "decode.switch_local_ladder, decode.quadrant_crossing_ladder)");
  }
  config::Section f = root.child("fabric");
  // Every kind the program knows, so a typo (or a missing kind) lists them all.
  if (!f.has("kind"))
    f.fail("kind", "required value is missing: one of link-pair, ring, switched-pod, explicit, pcie-host, rifl-link");
  f.choice("kind", "", {"link-pair", "ring", "switched-pod", "explicit", "pcie-host", "rifl-link"});
  return f.required_string("kind");
}

namespace {

// defaults.accelerator and defaults.switch: what every node starts from.
struct NodeDefaults {
  models::accelerator_params acc;
  bool auto_mem = true;
  SourceRef memory_src;  // defaults.accelerator.memory, if given
  models::switch_params swp;
};

// Append a node with the defaults; returns its index.
std::size_t add_node(FabricSpec& F, const NodeDefaults& D, const std::string& id, const std::string& kind,
                     const SourceRef& src) {
  NodeSpec n;
  n.id = id;
  n.kind = kind;
  n.src = src;
  n.accel = D.acc;
  n.auto_memory = D.auto_mem;
  n.memory_src = D.memory_src;
  n.sw = D.swp;
  F.nodes.push_back(n);
  return F.nodes.size() - 1;
}

// protocol and rifl: of a link section (defaults.link, or a per-link overlay
// with `per_link`), as an overlay on `base`. A per-link section of a RIFL
// link rejects the UALink data-link keys (they would configure nothing); in
// defaults.link they stay allowed (they configure the fabric's UALink links),
// so `--set defaults.link.protocol=rifl` works on any fabric.
LinkProtocolSpec link_protocol(config::Section& s, const LinkProtocolSpec& base, bool per_link) {
  LinkProtocolSpec p = base;
  const std::string v = s.choice("protocol", fabric_core::to_string(base.protocol), {"ualink", "rifl"});
  p.protocol = v == "rifl" ? fabric_core::LinkProtocol::rifl : fabric_core::LinkProtocol::ualink;
  const bool rifl = p.protocol == fabric_core::LinkProtocol::rifl;
  if (s.has("rifl")) {
    if (per_link && !rifl) s.fail("rifl", "rifl: parameters apply to a link of protocol: rifl (this link is ualink)");
    config::Section r = s.child("rifl");
    if (config::parse_rifl_keys(r, p.rifl, true)) p.rifl_ge_from_link = false;
    r.finish();
  }
  if (per_link && rifl)
    for (const char* k : {"policy", "fec_profiles", "semantics", "window_high", "window_reduced", "request_copies",
                          "retry_limit", "control_flit", "control_base_delay", "reverse_rate"})
      if (s.has(k))
        s.fail(k, "a UALink data-link key on a link of protocol: rifl, which has no FEC profile or policy, "
                  "TxReplay window, replay requests or control flits (its parameters go under rifl:)");
  return p;
}

// After the link keys of section s: a RIFL link's chain from the link's
// channel (unless rifl.channel gives its own) and its derived bounds
// (retransmit buffer, flow-control thresholds) at the link's rate and delay.
void finish_protocol(config::Section& s, LinkProtocolSpec& p, const link::LinkConfig& l) {
  if (p.rifl_ge_from_link) p.rifl.ge = l.channel;
  if (p.protocol != fabric_core::LinkProtocol::rifl) return;
  const rifl::RiflConfig eff = fabric_core::rifl_for_link(l, p.rifl);
  if (!(eff.lane_rate_bps >= 1.0) || eff.lane_rate_bps > 1e15)
    s.fail(s.has("forward_rate") ? "forward_rate" : "",
           "a RIFL lane rate (forward_rate / lanes) must lie in [1 b/s, 1 Pb/s]");
  // Every lane end holds B frames and every lane direction a round trip in
  // flight: both must stay within what the model allocates (2^20 frames).
  const double one_way_slots = (eff.transceiver_ns + l.propagation_ps / 1000.0) / (eff.frame_bits / eff.lane_rate_bps * 1e9);
  if (!(one_way_slots <= (1u << 19)))
    s.fail(s.has("propagation") ? "propagation" : "",
           fmt::format("a RIFL link's one-way delay of {:.0f} frame slots is beyond the model's limit of 2^19 slots "
                       "(transceiver_latency + propagation at the lane rate)",
                       one_way_slots));
  config::check_rifl_bounds(s.has("rifl") ? s.child("rifl") : s, eff);
  const rifl::RiflDerived d = rifl::derive(eff);
  // A fabric counts time in ps: a frame slot below 1 ps would put several
  // slots at one instant and the link would never reach the next one.
  if (const double slot_ps = d.slot_ns * 1000.0; !(slot_ps >= 1.0))
    s.fail(
        s.has("forward_rate") ? "forward_rate" : "",
        fmt::format("a RIFL frame slot of {:.3g} ps (rifl.frame_bits {} at forward_rate / rifl.lanes = {:.4g} Gb/s) is "
                    "below the fabric's 1 ps time step: lower forward_rate, or raise rifl.lanes or rifl.frame_bits",
                    slot_ps, eff.frame_bits, eff.lane_rate_bps / 1e9));
  if (d.buffer > (1u << 20))
    s.fail(s.has("rifl") ? "rifl" : "", "a RIFL retransmit buffer of more than 2^20 frames is beyond the model's limit");
}

// Parse a per-link overlay section onto link `L`.
void link_overlay(config::Section s, LinkSpec& L) {
  L.proto = link_protocol(s, L.proto, true);
  L.link = config::parse_link_overlay(s, L.link);
  finish_protocol(s, L.proto, L.link);
}

// Append link a.pa - b.pb with the default link parameters.
void add_link(FabricSpec& F, const link::LinkConfig& dflt, std::size_t a, std::uint32_t pa, std::size_t b,
              std::uint32_t pb, const SourceRef& src) {
  LinkSpec l;
  l.a = a;
  l.b = b;
  l.a_port = pa;
  l.b_port = pb;
  l.link = dflt;
  l.id = F.links.size();
  l.src = src;
  F.links.push_back(l);
}

// A generated ring (acc i port 1 -> acc i+1 port 0) or switched pod (acc i port s - switch s port i).
void generated_topology(FabricSpec& F, const config::Section& f, std::uint64_t n_acc, std::uint64_t n_sw,
                        const NodeDefaults& D, const link::LinkConfig& dflt) {
  if (F.generator == "ring") {
    const SourceRef src{where_of(f, "accelerators"), "fabric.accelerators"};
    for (std::uint64_t i = 0; i < n_acc; ++i) add_node(F, D, fmt::format("acc{}", i), "accelerator", src);
    for (std::uint64_t i = 0; i < n_acc; ++i) add_link(F, dflt, i, 1, (i + 1) % n_acc, 0, src);
    if (n_acc == 2) F.links.pop_back();  // two ranks: one link, not two parallel ones
  } else {
    const SourceRef src{where_of(f, "switches"), "fabric.switches"};
    for (std::uint64_t i = 0; i < n_acc; ++i) add_node(F, D, fmt::format("acc{}", i), "accelerator", src);
    for (std::uint64_t s = 0; s < n_sw; ++s) add_node(F, D, fmt::format("sw{}", s), "ualink-switch", src);
    for (std::uint64_t i = 0; i < n_acc; ++i)
      for (std::uint64_t s = 0; s < n_sw; ++s)
        add_link(F, dflt, i, static_cast<std::uint32_t>(s), n_acc + s, static_cast<std::uint32_t>(i), src);
  }
}

// One item of nodes: (explicit fabric): id, kind, per-node accelerator / switch, ports, address.
void explicit_node(config::Section& n, FabricSpec& F, const NodeDefaults& D, std::map<std::string, std::size_t>& ids) {
  const std::string id = n.required_string("id");
  const std::string kind = n.required_string("kind");
  const SourceRef src{where_of(n, "id"), n.path() + ".id"};
  if (!valid_node_id(id))
    n.fail("id", fmt::format("node id '{}' may use only letters, digits, '_' and '-' (it names a SystemC module, "
                             "a link endpoint NODE.PORT and rows of links.csv)",
                             id));
  if (kind != "accelerator" && kind != "ualink-switch" && kind != kTlmInitiator)
    n.fail("kind",
           fmt::format("unknown node kind '{}' for a fabric of kind explicit (valid: accelerator, "
                       "ualink-switch, tlm-initiator; PCIe parts such as host-bridge belong to a fabric of kind "
                       "pcie-host)",
                       kind));
  if (ids.count(id)) n.fail("id", fmt::format("duplicate node id '{}'", id));
  const std::size_t k = add_node(F, D, id, kind, src);
  ids[id] = k;
  if (kind == "accelerator") {
    bool am = D.auto_mem;
    config::Section na = n.child_or_empty("accelerator");
    if (na.has("memory")) F.nodes[k].memory_src = {where_of(na, "memory"), na.path() + ".memory"};
    F.nodes[k].accel = parse_accel(na, D.acc, am);
    F.nodes[k].auto_memory = am;
  } else {
    n.child_or_empty("accelerator").finish();
  }
  if (kind == "ualink-switch")
    F.nodes[k].sw = parse_switch(n.child_or_empty("switch"), D.swp);
  else
    n.child_or_empty("switch").finish();
  F.nodes[k].ports = static_cast<std::uint32_t>(n.integer("ports", 0, 0, 65536));
  F.nodes[k].address_src = {where_of(n, n.has("address") ? "address" : "id"),
                            n.path() + (n.has("address") ? ".address" : ".id")};
  if (n.has("address")) {
    if (kind != "accelerator")
      n.fail("address",
             fmt::format("only an accelerator has memory in the global address map ('{}' is a {})", id, kind));
    F.nodes[k].has_address = true;
    F.nodes[k].address = parse_address(n, "address");
  }
  n.finish();
}

// links: of an explicit fabric: NODE.PORT endpoints of listed nodes, an optional link overlay.
void explicit_links(config::Section& root, FabricSpec& F, std::map<std::string, std::size_t>& ids,
                    const link::LinkConfig& dflt, const LinkProtocolSpec& dproto) {
  for (auto& l : root.list("links", true)) {
    std::string na, nb;
    std::uint32_t pa = 0, pb = 0;
    const std::string ea = l.required_string("a"), eb = l.required_string("b");
    if (!split_endpoint(ea, na, pa)) l.fail("a", fmt::format("'{}' is not NODE.PORT (e.g. acc0.0; port 0..65535)", ea));
    if (!split_endpoint(eb, nb, pb)) l.fail("b", fmt::format("'{}' is not NODE.PORT (e.g. sw0.3; port 0..65535)", eb));
    if (!ids.count(na)) l.fail("a", fmt::format("dangling reference: no node '{}'", na));
    if (!ids.count(nb)) l.fail("b", fmt::format("dangling reference: no node '{}'", nb));
    add_link(F, dflt, ids[na], pa, ids[nb], pb, {where_of(l, "a"), l.path()});
    F.links.back().proto = dproto;
    if (l.has("link"))
      link_overlay(l.child("link"), F.links.back());
    else
      l.child_or_empty("link").finish();
    l.finish();
  }
}

// Ranks in declaration order; returns the number of accelerators.
int assign_ranks(FabricSpec& F) {
  // A node's `ports` stays as declared (0 = as many as its links use);
  // FabricGraph rejects a port beyond a declared count.
  int rank = 0;
  for (auto& n : F.nodes)
    if (n.kind == "accelerator") n.rank = rank++;
  // tlm-initiators: endpoints after the accelerators (they run no workload).
  int endpoint = rank;
  for (auto& n : F.nodes)
    if (n.kind == kTlmInitiator) n.rank = endpoint++;
  return rank;
}

// link_overrides: a link overlay on link `index`.
void link_overrides(config::Section& root, FabricSpec& F) {
  std::map<std::uint64_t, std::size_t> seen;  // link index -> override item
  std::size_t item = 0;
  for (auto& o : root.list("link_overrides")) {
    const std::uint64_t idx = o.integer("index", 0, 0, ~0ull);
    if (!o.has("index")) o.fail("index", "required value is missing");
    if (idx >= F.links.size())
      o.fail("index", fmt::format("no link {} (the fabric has {} links)", idx, F.links.size()));
    if (const auto [it, fresh] = seen.emplace(idx, item++); !fresh)
      o.fail("index",
             fmt::format("link {} is already overridden by link_overrides[{}]: merge the two", idx, it->second));
    F.links[idx].params_src = {where_of(o, "link"), o.path() + ".link"};
    link_overlay(o.child("link"), F.links[idx]);
    o.finish();
  }
}

// A built-in algorithm's layout on `ranks`: its error is blamed on the key it names.
void check_algorithm_layout(config::Section& w, const FabricRunConfig& c, int ranks) {
  try {
    sw::layout(c.workload.collective, ranks);
  } catch (const std::invalid_argument& e) {
    const std::string m = e.what();
    const std::string key = m.find("algorithm") != std::string::npos || m.find("power-of-two") != std::string::npos
                                ? "algorithm"
                            : m.find("root") != std::string::npos            ? "root"
                            : m.find("pipeline_chunks") != std::string::npos ? "pipeline_chunks"
                            : m.find("chunk") != std::string::npos           ? "chunk"
                            : m.find("ranks") != std::string::npos && m.find("size") == std::string::npos ? "algorithm"
                                                                                                          : "size";
    w.fail(w.has(key) ? key : "collective", m);
  }
}

// One flit size per fabric (the timing core stripes flits across links).
void check_flit_sizes(const FabricRunConfig& c) {
  for (const auto& l : c.fabric.links)
    if (l.link.flit_bytes != c.default_link.flit_bytes)
      throw config::ConfigError(
          fmt::format("{}: every link of a fabric must use the flit size of "
                      "defaults.link.flit ({} B), this one uses {} B",
                      l.params_source().prefix(), c.default_link.flit_bytes, l.link.flit_bytes));
}

// workload: collective, algorithm (or a user's schedule), size, chunking, iterations, flags.
void fabric_workload(config::Section& root, FabricRunConfig& c, int ranks) {
  config::Section w = root.child_or_empty("workload");
  const bool op_explicit = w.has("collective");
  const std::string op = w.choice("collective", "allreduce",
                                  {"allreduce", "reduce_scatter", "allgather", "alltoall", "broadcast", "sendrecv", "custom"});
  c.workload.collective.op = sw::parse_op(op);
  std::vector<std::string> algs = sw::algorithms(c.workload.collective.op);
  algs.push_back("schedule");  // a user's schedule (workload.schedule)
  c.workload.collective.algorithm = w.choice("algorithm", "ring", algs);
  const bool schedule = c.workload.collective.algorithm == "schedule";
  c.workload.collective.bytes = w.bytes("size", 8ull << 20);
  c.workload.size_src = {where_of(w, "size"), w.path() + ".size"};
  // A TLM-2.0 data length is 32 bits: one DMA operation moves less than 4 GiB,
  // and the largest operation of every algorithm moves at most the whole size.
  if (c.workload.collective.bytes >= (1ull << 32))
    w.fail("size", fmt::format("{} B is 4 GiB or more: one DMA operation moves less than 4 GiB (at most "
                               "4294967295 B), and a collective can move its whole size in one operation",
                               c.workload.collective.bytes));
  c.workload.collective.root = static_cast<int>(w.integer("root", 0, 0, 1u << 20));
  c.workload.collective.pipeline_chunks = static_cast<int>(w.integer("pipeline_chunks", 8, 1, 1u << 20));
  c.workload.collective.chunk_bytes = w.bytes("chunk", 256 * 1024);
  if (c.workload.collective.algorithm == "nccl_shm")
    w.fail("algorithm", "nccl_shm stages data in host memory, which only a pcie-host fabric has");
  c.workload.iterations = static_cast<int>(w.integer("iterations", 1, 1, 1000000));
  c.workload.verify = w.boolean("verify", true);
  c.workload.data = w.boolean("data", true);
  if (schedule) {
    parse_schedule_workload(c.workload, w, c.fabric, op_explicit, ranks);
  } else {
    for (const char* k : {"schedule", "rank_map"})
      if (w.has(k)) w.fail(k, "only read with workload.algorithm: schedule");
  }
  if (!schedule) check_algorithm_layout(w, c, ranks);
  check_flit_sizes(c);
  w.finish();
}

}  // namespace

FabricRunConfig parse_fabric(config::Section root) {
  FabricRunConfig c;
  FabricSpec& F = c.fabric;
  config::Section f = root.child("fabric");
  F.name = f.name("name", "fabric");
  F.generator = f.choice("kind", "ring", {"ring", "switched-pod", "explicit"});
  std::uint64_t n_acc = 0, n_sw = 0;
  if (F.generator != "explicit") n_acc = f.integer("accelerators", 8, 2, kMaxAccelerators);
  if (F.generator == "switched-pod") n_sw = f.integer("switches", 1, 1, 256);
  if (f.has("address_base")) {
    F.address_base = parse_address(f, "address_base");
    F.address_base_src = {where_of(f, "address_base"), "fabric.address_base"};
  }
  config::finish_fabric_section(f, F.generator);

  config::Section d = root.child_or_empty("defaults");
  config::Section dl = d.child_or_empty("link");
  c.default_proto = link_protocol(dl, {}, false);
  if (dl.has("rifl"))
    c.default_link_src = {where_of(dl, "rifl"), "defaults.link.rifl"};
  else if (dl.has("protocol"))
    c.default_link_src = {where_of(dl, "protocol"), "defaults.link.protocol"};
  else if (d.has("link"))
    c.default_link_src = {where_of(d, "link"), "defaults.link"};
  c.default_link = config::parse_link_overlay(dl, link::LinkConfig{});
  finish_protocol(dl, c.default_proto, c.default_link);
  NodeDefaults D;
  config::Section da = d.child_or_empty("accelerator");
  if (da.has("memory")) D.memory_src = {where_of(da, "memory"), da.path() + ".memory"};
  D.acc = parse_accel(da, {}, D.auto_mem);
  D.swp = parse_switch(d.child_or_empty("switch"), {});
  d.finish();

  if (F.generator != "explicit") {
    generated_topology(F, f, n_acc, n_sw, D, c.default_link);
    for (auto& l : F.links) l.proto = c.default_proto;
  } else {
    std::map<std::string, std::size_t> ids;
    std::uint64_t listed_acc = 0;
    for (auto& n : root.list("nodes", true)) {
      explicit_node(n, F, D, ids);
      // The limit of ring and pod fabrics, for the same reason (O(N^2) route tables).
      if (F.nodes.back().kind == "accelerator" && ++listed_acc > kMaxAccelerators)
        n.fail("kind", fmt::format("more than {} accelerators: a fabric holds all-pairs distances and forwarding "
                                   "tables (accelerators x nodes entries each), so at most {} are supported",
                                   kMaxAccelerators, kMaxAccelerators));
      if (F.nodes.size() > 2 * kMaxAccelerators)
        n.fail("id", fmt::format("more than {} nodes: at most {} are supported (O(N^2) route tables)",
                                 2 * kMaxAccelerators, 2 * kMaxAccelerators));
    }
    explicit_links(root, F, ids, c.default_link, c.default_proto);
  }
  if (F.generator != "explicit") {
    if (root.has("nodes")) root.fail("nodes", "nodes are listed only in a fabric of kind: explicit");
    if (root.has("links")) root.fail("links", "links are listed only in a fabric of kind: explicit");
    root.mark_used("nodes");
    root.mark_used("links");
  }
  const int rank = assign_ranks(F);
  if (F.generator == "explicit" && F.accelerators() < 2)
    root.fail("nodes", fmt::format("the fabric lists {} accelerator{}; a collective needs at least 2",
                                   F.accelerators(), F.accelerators() == 1 ? "" : "s"));
  link_overrides(root, F);
  // defaults.link.rifl configures the fabric's RIFL links: with none it would configure nothing.
  if (dl.has("rifl") && std::none_of(F.links.begin(), F.links.end(), [](const LinkSpec& l) {
        return l.proto.protocol == fabric_core::LinkProtocol::rifl;
      }))
    dl.fail("rifl", "rifl: parameters configure RIFL links, and no link of this fabric has protocol: rifl "
                    "(set defaults.link.protocol: rifl, or protocol: rifl on a link)");
  fabric_workload(root, c, rank);

  config::Section r = root.child_or_empty("run");
  c.seed = r.integer("seed", 1, 0, ~0ull);
  c.deadline_ps = r.time_ps("deadline", 10'000'000'000'000ull);
  if (c.deadline_ps == 0) r.fail("deadline", "must be above 0 (leave it out for the default, 10 s)");
  r.finish();
  root.finish();
  return c;
}

nlohmann::ordered_json to_json(const FabricRunConfig& c) {
  nlohmann::ordered_json j;
  j["name"] = c.fabric.name;
  j["kind"] = c.fabric.generator;
  j["accelerators"] = c.fabric.accelerators();
  j["switches"] = c.fabric.nodes.size() - c.fabric.accelerators() - c.fabric.initiators();
  if (c.fabric.initiators() > 0) j["tlm_initiators"] = c.fabric.initiators();
  j["links"] = c.fabric.links.size();
  j["seed"] = c.seed;
  j["policy"] = c.default_link.policy_name;
  // The protocol keys appear only in a fabric with a RIFL link (UALink-only
  // fabrics echo exactly what they did before link.protocol existed).
  bool any_rifl = c.default_proto.protocol == fabric_core::LinkProtocol::rifl;
  for (const auto& l : c.fabric.links) any_rifl = any_rifl || l.proto.protocol == fabric_core::LinkProtocol::rifl;
  const auto link_json = [any_rifl](const link::LinkConfig& lc, const LinkProtocolSpec& p) {
    config::LinkExperimentConfig tmp;
    tmp.link = lc;
    auto lj = config::to_json(tmp)["link"];
    if (any_rifl) {
      lj["protocol"] = fabric_core::to_string(p.protocol);
      if (p.protocol == fabric_core::LinkProtocol::rifl) lj["rifl"] = config::rifl_json(fabric_core::rifl_for_link(lc, p.rifl));
    }
    return lj;
  };
  j["default_link"] = link_json(c.default_link, c.default_proto);
  j["workload"] = {{"collective", sw::to_string(c.workload.collective.op)},
                   {"algorithm", c.workload.collective.algorithm},
                   {"size_bytes", c.workload.collective.bytes},
                   {"iterations", c.workload.iterations},
                   {"data", c.workload.data},
                   {"root", c.workload.collective.root},
                   {"pipeline_chunks", c.workload.collective.pipeline_chunks},
                   {"chunk_bytes", c.workload.collective.chunk_bytes},
                   {"verify", c.workload.verify}};
  if (c.workload.schedule) {
    const auto& S = *c.workload.schedule;
    j["workload"]["schedule"] = {{"file", c.workload.schedule_path},
                                 {"format", S.format},
                                 {"name", S.name},
                                 {"coll", S.coll},
                                 {"proto", S.proto},
                                 {"nchannels", S.nchannels},
                                 {"nchunksperloop", S.nchunksperloop},
                                 {"ngpus", S.ngpus},
                                 {"inplace", S.inplace},
                                 {"min_bytes", S.min_bytes},
                                 {"max_bytes", S.max_bytes}};
    j["workload"]["rank_map"] = c.workload.rank_map;
  }
  // Every link whose effective parameters differ from defaults.link, in full.
  nlohmann::ordered_json over = nlohmann::ordered_json::array();
  for (const auto& l : c.fabric.links) {
    const auto lj = link_json(l.link, l.proto);
    if (lj != j["default_link"]) over.push_back({{"link", l.id}, {"config", lj}});
  }
  j["link_overrides"] = over;
  // Ports of each node: the declared count, or as many as its links use.
  std::vector<std::uint32_t> ports(c.fabric.nodes.size(), 0);
  for (std::size_t i = 0; i < c.fabric.nodes.size(); ++i) ports[i] = c.fabric.nodes[i].ports;
  for (const auto& l : c.fabric.links) {
    ports[l.a] = std::max(ports[l.a], l.a_port + 1);
    ports[l.b] = std::max(ports[l.b], l.b_port + 1);
  }
  nlohmann::ordered_json nodes = nlohmann::ordered_json::array();
  for (std::size_t i = 0; i < c.fabric.nodes.size(); ++i) {
    const auto& n = c.fabric.nodes[i];
    nlohmann::ordered_json nj{{"id", n.id}, {"kind", n.kind}, {"ports", ports[i]}};
    if (n.kind == "accelerator") {
      nj["rank"] = n.rank;
      nj["memory"] = n.auto_memory ? nlohmann::ordered_json("auto") : nlohmann::ordered_json(n.accel.memory_bytes);
      nj["flags"] = n.accel.flags;
      nj["reduce_rate_bytes_per_s"] = n.accel.reduce_rate_bytes_per_s;
      nj["dma_setup_ps"] = n.accel.dma_setup_ps;
      nj["memory_latency_ps"] = n.accel.memory_latency_ps;
      if (n.accel.threadblock_rate_bytes_per_s > 0)
        nj["threadblock_rate_bytes_per_s"] = n.accel.threadblock_rate_bytes_per_s;
      if (n.has_address) nj["address"] = n.address;
    } else if (n.kind == kTlmInitiator) {
      nj["rank"] = n.rank;
    } else {
      nj["latency_ps"] = n.sw.latency_ps;
      nj["output_queue_flits"] = n.sw.output_queue_flits;
    }
    nodes.push_back(nj);
  }
  if (nodes.size() <= 64) j["nodes"] = nodes;  // large generated fabrics: see the defaults
  j["deadline_ps"] = c.deadline_ps;
  return j;
}

}  // namespace fabricsim::fabric
