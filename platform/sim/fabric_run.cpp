#include "platform/sim/fabric_run.h"

#include <systemc>
#include <tlm>

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <memory>
#include <sstream>

#include "models/accelerator/accelerator.h"
#include "models/fabric/core/fabric_engine.h"
#include "models/fabric/fabric_kernel.h"
#include "models/registry.h"
#include "models/rifl/core/rifl_link.h"
#include "models/switch/ualink_switch.h"
#include "platform/config/machine.h"
#include "platform/fabric/fabric_graph.h"
#include "platform/sim/fabric_platform.h"
#include "platform/sim/kernel_hooks.h"
#include "platform/sim/rifl_experiment.h"
#include "platform/sim/schedule_report.h"
#include "sw/schedule_exec.h"

namespace fabricsim::sim {

namespace {

struct Timing {
  std::vector<std::uint64_t> start;             // per iteration
  std::vector<std::vector<std::uint64_t>> end;  // per iteration, per rank
  std::vector<bool> correct;                    // per rank
  std::vector<sw::RankRecords> records;         // schedules: per schedule rank, last iteration
};

}  // namespace

namespace {
// nccl-tests' redop column: the reduction of the operation ("none" if it has none).
const char* redop(sw::Op op) { return op == sw::Op::allreduce || op == sw::Op::reduce_scatter ? "sum" : "none"; }
// "true", "false", "n/a" when there is nothing to check (timing only, verify
// off), or "not checked" when a link went down and the collective did not
// complete (its output is unfinished, not wrong).
const char* correct_text(const fabric::FabricRunConfig& c, const CollectiveRow& r) {
  if (!c.workload.data || !c.workload.verify) return "n/a";
  if (!r.completed) return "not checked";
  return r.correct ? "true" : "false";
}
}  // namespace

// The algorithm column: a built-in algorithm's name, or "schedule:<name>" (CSV-safe).
std::string algorithm_label(const fabric::FabricRunConfig& c) {
  if (!c.workload.schedule) return c.workload.collective.algorithm;
  return schedule_label(*c.workload.schedule, c.workload.schedule_path);
}

std::string collective_csv(const std::string& collective, const std::string& algorithm, std::uint64_t ranks,
                           const CollectiveRow& r, const std::string& redop, const std::string& correct) {
  // No time (a terminal failure: the collective did not complete): empty cells, as in a study's results.csv.
  const auto num = [](double x) { return std::isfinite(x) ? fmt::format("{:.3f}", x) : std::string(); };
  return fmt::format(
      "collective,algorithm,ranks,size,count,type,redop,time_us,algbw_GBps,busbw_GBps,correct\n"
      "{},{},{},{},{},float,{},{},{},{},{}\n",
      collective, algorithm, ranks, r.size_bytes, r.count, redop, num(r.time_us), num(r.algbw_GBps), num(r.busbw_GBps),
      correct);
}

std::string collective_csv(const fabric::FabricRunConfig& c, const CollectiveRow& r) {
  return collective_csv(sw::to_string(c.workload.collective.op), algorithm_label(c), c.fabric.accelerators(), r,
                        redop(c.workload.collective.op), correct_text(c, r));
}

void validate_fabric(const fabric::FabricRunConfig& cfg) {
  // Every node kind must have a registered model (style.md item 1).
  const auto& registry = models::model_registry::instance();
  for (const auto& n : cfg.fabric.nodes)
    if (n.kind != fabric::kTlmInitiator && !registry.has(n.kind)) {
      std::string known;
      for (const auto& k : registry.kinds()) known += (known.empty() ? "" : ", ") + k;
      throw fabric::FabricError(
          fmt::format("{}: unknown node kind '{}' (registered: {})", n.src.prefix(), n.kind, known));
    }
  // The UALink elaboration builds accelerators and UALink switches only; a
  // registered kind of another fabric (host-bridge, ...) would get the wrong
  // parameters.
  for (const auto& n : cfg.fabric.nodes)
    if (n.kind != "accelerator" && n.kind != "ualink-switch" && n.kind != fabric::kTlmInitiator)
      throw fabric::FabricError(
          fmt::format("{}: node kind '{}' does not belong to a UALink fabric "
                      "(valid: accelerator, ualink-switch, tlm-initiator)",
                      n.src.prefix(), n.kind));
  fabric::FabricGraph::validate(cfg.fabric);  // the platform builds the routing tables once
  // Accelerator memory: every rank holds the collective's buffers.
  const int N = static_cast<int>(cfg.fabric.accelerators());
  const std::uint64_t need = workload_memory_bytes(cfg);  // buffers of one rank
  long double total = 0;
  for (const auto& n : cfg.fabric.nodes) {
    if (n.kind != "accelerator") continue;
    const std::uint64_t have = accelerator_memory_bytes(n, cfg);
    if (have < need)
      throw fabric::FabricError(fmt::format("{}: the collective needs {} B of accelerator memory, {} has {} B{}",
                                            n.memory_source().prefix(), need, n.id, have,
                                            n.auto_memory ? "" : " (memory: auto sizes it to the workload)"));
    total += have;
  }
  // RIFL links: every lane end holds its retransmit buffer and every lane
  // direction a one-way delay of frames; at extreme rates, lanes and delays
  // those add up past the machine (a fast-growing run killed by the kernel).
  {
    long double rifl_bytes = 0;
    std::size_t rifl_links = 0;
    const fabric::LinkSpec* first = nullptr;
    for (const auto& l : cfg.fabric.links)
      if (l.proto.protocol == fabric_core::LinkProtocol::rifl) {
        rifl_bytes += rifl::lane_state_bytes(fabric_core::rifl_for_link(l.link, l.proto.rifl));
        ++rifl_links;
        if (!first) first = &l;
      }
    const std::uint64_t avail = first ? config::available_memory_bytes() : 0;
    if (first && avail > 0 && rifl_bytes > static_cast<long double>(avail) / 2) {
      const rifl::RiflConfig rc = fabric_core::rifl_for_link(first->link, first->proto.rifl);
      const rifl::RiflDerived d = rifl::derive(rc);
      throw fabric::FabricError(fmt::format(
          "{}: the RIFL links need about {:.1f} GiB ({} links x {} lanes; retransmit buffer {} frames, one-way "
          "delay {} frame slots of {:.3g} ns per lane), more than half of the {:.1f} GiB this machine has "
          "available; fewer lanes (rifl.lanes), a lower forward_rate or a shorter propagation / "
          "transceiver_latency make them smaller",
          (first->params_src.key.empty() && !cfg.default_link_src.key.empty() ? cfg.default_link_src
                                                                              : first->params_source())
              .prefix(),
          static_cast<double>(rifl_bytes / 1073741824.0L), rifl_links, rc.lanes, d.buffer, d.delay_slots, d.slot_ns,
          avail / 1073741824.0));
    }
  }
  if (cfg.workload.data) {
    const std::uint64_t avail = config::available_memory_bytes();
    if (avail > 0 && total > static_cast<long double>(avail))
      throw fabric::FabricError(fmt::format(
          "{}: real data needs about {:.1f} GiB of accelerator memory ({} accelerators x {:.1f} MiB of "
          "buffers), more than the {:.1f} GiB this machine has available; set workload.data: false for a timing-only "
          "run (no accelerator memory allocated)",
          cfg.workload.size_src.prefix(), static_cast<double>(total / 1073741824.0L), N,
          static_cast<double>(total / N / 1048576.0L), avail / 1073741824.0));
  }
  address_map(cfg);  // overlapping `address:` values
}

void check_runnable(const fabric::FabricRunConfig& cfg) {
  // tlm-initiator nodes are bound by user code after elaboration
  // (FabricPlatform); this program has no initiator to bind them to.
  for (const auto& n : cfg.fabric.nodes)
    if (n.kind == fabric::kTlmInitiator)
      throw fabric::FabricError(fmt::format(
          "{}: node '{}' (kind tlm-initiator) is an external TLM-2.0 initiator bound by user code after "
          "elaboration (docs/user-guide.md \"Attaching your own SystemC model\"); `fabricsim run` has none to bind "
          "(`fabricsim check` accepts the fabric)",
          n.src.prefix(), n.id));
}

namespace {

// What one fabric run derives from its configuration before elaboration.
struct FabricCell {
  explicit FabricCell(const fabric::FabricRunConfig& c) : cfg(c) {}
  const fabric::FabricRunConfig& cfg;
  int N = 0;                                     // accelerators (ranks)
  sw::CollectiveSpec spec;                       // the collective
  std::shared_ptr<const sw::Schedule> sched;     // a user's schedule, or null for a built-in algorithm
  std::shared_ptr<const sw::ScheduleLayout> SL;  // its memory layout
  sw::Layout L;                                  // a built-in algorithm's memory layout
  std::vector<int> fabric_of, sched_of;          // schedule rank -> accelerator rank, and back
  int iters = 0;
  bool verify = false, data = false;
};

FabricCell fabric_cell(const fabric::FabricRunConfig& cfg) {
  FabricCell c(cfg);
  const auto& F = cfg.fabric;
  const int N = c.N = static_cast<int>(F.accelerators());
  c.spec = cfg.workload.collective;
  // A user's schedule (workload.schedule) or a built-in algorithm.
  c.sched = cfg.workload.schedule;
  bool tb_rate = false;  // any threadblock rate: messages move in pieces as they are streamed
  for (const auto& n : F.nodes)
    tb_rate = tb_rate || (n.kind == "accelerator" && n.accel.threadblock_rate_bytes_per_s > 0);
  c.SL = c.sched ? std::make_shared<const sw::ScheduleLayout>(
                       sw::layout_schedule(*c.sched, c.spec.bytes, tb_rate ? sw::kRatePieceBytes : 0))
                 : nullptr;
  c.L = c.sched ? sw::Layout{} : sw::layout(c.spec, N);
  // Schedule rank of each accelerator rank, and back (workload.rank_map).
  c.fabric_of.assign(N, 0);
  c.sched_of.assign(N, 0);
  for (int i = 0; i < N; ++i) c.fabric_of[i] = cfg.workload.rank_map.empty() ? i : cfg.workload.rank_map[i];
  for (int i = 0; i < N; ++i) c.sched_of[c.fabric_of[i]] = i;
  c.iters = cfg.workload.iterations;
  c.verify = cfg.workload.verify && cfg.workload.data;
  c.data = cfg.workload.data;
  return c;
}

// Schedule rank g on accelerator r: fill g's input, then per iteration
// barrier, reset flags, barrier, run the schedule, record.
RankProgram schedule_program(const FabricCell& c, const std::shared_ptr<Timing>& timing, int r) {
  sw::ExecOptions opt;
  opt.fabric_rank = c.fabric_of;
  const int g = c.sched_of[r];
  const auto sched = c.sched;
  const auto SL = c.SL;
  const int iters = c.iters;
  const bool data = c.data;
  return [timing, sched, SL, opt, g, iters, data](models::accelerator_api& a) {
    const sw::ScheduleRankLayout& R = SL->ranks[g];
    for (int it = 0; it < iters; ++it) {
      if (data) {
        if (it > 0 && !sched->inplace) std::memset(a.memory() + R.out, 0, R.out_bytes);
        float* in = reinterpret_cast<float*>(a.memory() + R.in);
        for (std::uint64_t i = 0; i < R.in_bytes / 4; ++i) in[i] = sw::input_value(sched->op, g, i);
      }
      a.barrier();
      a.reset_flags();
      a.barrier();
      if (g == 0) timing->start[it] = a.now_ps();
      timing->records[g].clear();
      sw::run_schedule(a, *sched, *SL, g, opt, &timing->records[g]);
      timing->end[it][g] = a.now_ps();
    }
    a.barrier();
  };
}

// A built-in algorithm: fill the input, then per iteration barrier, reset
// flags, barrier, the collective, record; verify the last output.
RankProgram collective_program(const FabricCell& c, const std::shared_ptr<Timing>& timing) {
  const sw::CollectiveSpec spec = c.spec;
  const sw::Layout L = c.L;
  const int iters = c.iters, N = c.N;
  const bool verify = c.verify, data = c.data;
  return [timing, spec, L, iters, verify, data, N](models::accelerator_api& a) {
    const int rank = a.rank();
    for (int it = 0; it < iters; ++it) {
      if (data) {
        float* in = reinterpret_cast<float*>(a.memory() + L.in);
        for (std::uint64_t i = 0; i < L.in_bytes / 4; ++i) in[i] = sw::input_value(spec.op, rank, i);
      }
      a.barrier();
      a.reset_flags();
      a.barrier();
      if (rank == 0) timing->start[it] = a.now_ps();
      sw::run_collective(a, spec);
      timing->end[it][rank] = a.now_ps();
    }
    bool ok = !data ? false : true;
    if (verify) {
      const float* out = reinterpret_cast<const float*>(a.memory() + L.out);
      for (std::uint64_t i = 0; i < L.out_bytes / 4 && ok; ++i) ok = out[i] == sw::expected_value(spec, N, rank, i);
    }
    timing->correct[rank] = ok;
    a.barrier();
  };
}

// Software: the user's program, the schedule or the built-in algorithm on every accelerator.
void set_programs(const FabricCell& c, const std::vector<models::accelerator*>& acc, const RankProgram& program,
                  const std::shared_ptr<Timing>& timing) {
  if (c.sched) timing->records.resize(c.N);
  for (int r = 0; r < c.N; ++r) {
    if (program)
      acc[r]->set_program(program, c.N);
    else if (c.sched)
      acc[r]->set_program(schedule_program(c, timing, r), c.N);
    else
      acc[r]->set_program(collective_program(c, timing), c.N);
  }
}

// nccl-tests row (no time if a link went down: the collective did not complete).
void collective_row(const FabricCell& c, const std::vector<models::accelerator*>& acc, const Timing& timing,
                    bool completed, FabricRunResult& res) {
  const auto& spec = c.spec;
  double sum_us = 0;
  for (int it = 0; it < c.iters; ++it) {
    const std::uint64_t end = *std::max_element(timing.end[it].begin(), timing.end[it].end());
    sum_us += static_cast<double>(end - timing.start[it]) / 1e6;
  }
  CollectiveRow& row = res.row;
  row.size_bytes = spec.bytes;
  row.count = spec.bytes / 4;
  row.completed = completed;
  if (completed) {
    row.time_us = sum_us / c.iters;
    row.algbw_GBps = static_cast<double>(spec.bytes) / (row.time_us * 1e-6) / 1e9;
    row.busbw_GBps = row.algbw_GBps * sw::busbw_factor(spec.op, c.N);
    row.correct = std::all_of(timing.correct.begin(), timing.correct.end(), [](bool b) { return b; });
    if (c.sched && c.verify) {
      std::vector<const float*> outs(c.N);
      for (int g = 0; g < c.N; ++g)
        outs[g] = reinterpret_cast<const float*>(acc[c.fabric_of[g]]->memory() + c.SL->ranks[g].out);
      res.first_wrong = sw::check_outputs(*c.sched, *c.SL, outs, spec.root);
      row.correct = res.first_wrong.empty();
    }
  } else {
    row.time_us = row.algbw_GBps = row.busbw_GBps = std::numeric_limits<double>::quiet_NaN();
  }
}

// Fabric-wide link totals and the links with the most replayed flits.
struct LinkTotals {
  struct Top {
    std::uint64_t replayed;
    std::string name;
  };
  std::vector<Top> top;  // by replayed flits, descending (stable)
  std::uint64_t control = 0, first_err = 0, tx = 0;
  nlohmann::ordered_json rifl = nlohmann::ordered_json::array();  // RIFL directions' own counters
};

// The RIFL counters of one direction (result.json "rifl_links"): its ends,
// its flits at the component boundary, the experiment's frame and error
// counters (rifl_counters_json), the credit stall.
nlohmann::ordered_json rifl_direction_json(const fabric_core::DirectionStats& ds) {
  const auto& f = *ds.rifl_flits;
  nlohmann::ordered_json j = {{"from", ds.from},
                              {"port", ds.from_port},
                              {"to", ds.to},
                              {"flits_offered", f.offered},
                              {"flits_delivered", f.delivered}};
  const nlohmann::ordered_json counters = rifl_counters_json(*ds.rifl);
  for (const auto& [k, v] : counters.items()) j[k] = v;
  j["admission_stall_credit_ns"] = f.admission_stall_credit_ps / 1e3;
  return j;
}

// links.csv header: fixed columns, then a residency column per FEC profile name
// used by any UALink link, in order of first appearance.
std::string links_csv_header(const fabric::FabricSpec& F, std::vector<std::string>& prof_names) {
  std::string h =
      "from,port,to,transmissions,retransmissions,replayed_flits,fec_bytes,control_bytes,first_attempt_errors,"
      "residual_errors,terminal_failures,admission_stall_window_ns,admission_stall_replay_ns,"
      "admission_stall_credit_ns,max_queue,max_input_buffer";
  for (const auto& l : F.links)
    for (const auto& p : l.link.fec_menu)
      if (l.proto.protocol == fabric_core::LinkProtocol::ualink)  // a RIFL link has no FEC profile
      if (std::find(prof_names.begin(), prof_names.end(), p.name) == prof_names.end()) prof_names.push_back(p.name);
  for (const auto& p : prof_names) h += ",tx_" + p;
  return h + "\n";
}

// Per-link statistics: links.csv (one row per direction) and the totals.
LinkTotals link_stats(const fabric::FabricSpec& F, const fabric_core::FabricEngine& eng, FabricRunResult& res) {
  std::ostringstream lcsv;
  // Residency columns: a link without a profile leaves its cell empty.
  std::vector<std::string> prof_names;
  lcsv << links_csv_header(F, prof_names);
  LinkTotals t;
  for (std::size_t d = 0; d < eng.directions(); ++d) {
    const auto ds = eng.direction_stats(d);
    const auto& s = *ds.stats;
    res.replayed_flits += ds.replayed_flits;
    res.fec_bytes += s.fec_bytes;
    res.terminal_failures += s.terminal_failures;
    t.control += s.control_bytes;
    t.first_err += s.first_attempt_errors;
    t.tx += s.transmissions;
    lcsv << ds.from << "," << ds.from_port << "," << ds.to << "," << s.transmissions << "," << s.retransmissions << ","
         << ds.replayed_flits << "," << s.fec_bytes << "," << s.control_bytes << "," << s.first_attempt_errors << ","
         << s.residual_errors << "," << s.terminal_failures << ","
         << fmt::format("{:.1f}", s.admission_stall_window_ps / 1e3) << ","
         << fmt::format("{:.1f}", s.admission_stall_replay_ps / 1e3) << ","
         << fmt::format("{:.1f}", s.admission_stall_credit_ps / 1e3) << "," << ds.max_queue << ","
         << ds.max_input_buffer;
    const auto& menu = F.links[d / 2].link.fec_menu;  // direction d belongs to link d / 2
    for (const auto& pn : prof_names) {
      lcsv << ",";
      for (std::size_t k = 0; k < menu.size() && ds.protocol == fabric_core::LinkProtocol::ualink; ++k)
        if (menu[k].name == pn) lcsv << s.profile_transmissions[k];
    }
    lcsv << "\n";
    if (ds.rifl) {
      nlohmann::ordered_json rj = rifl_direction_json(ds);
      // A light FEC hides the wire's errors from the frame counters (hit
      // frames are those it could not correct): its codeword counters, as
      // the experiment's a_to_b.fec.
      if (F.links[d / 2].proto.rifl.fec_on)
        rj["fec"] = {{"codewords_corrected", ds.rifl->fec_corrected},
                     {"codewords_failed", ds.rifl->fec_failed},
                     {"symbols_corrected", ds.rifl->fec_symbols_corrected}};
      t.rifl.push_back(std::move(rj));
    }
    if (s.transmissions)
      t.top.push_back({ds.replayed_flits, fmt::format("{}.port{} -> {}", ds.from, ds.from_port, ds.to)});
  }
  res.links_csv = lcsv.str();
  std::stable_sort(t.top.begin(), t.top.end(),
                   [](const LinkTotals::Top& a, const LinkTotals::Top& b) { return a.replayed > b.replayed; });
  return t;
}

// A number, or null for NaN (no time: the collective did not complete).
nlohmann::ordered_json num(double v) {
  return std::isnan(v) ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(v);
}

// Each switch's statistics, read by name (models/switch/core/switch_core.h), in fabric order.
nlohmann::ordered_json switches_json(const FabricPlatform& plat) {
  nlohmann::ordered_json switches = nlohmann::ordered_json::object();
  for (const auto& m : plat.modules())
    if (const auto* sw = dynamic_cast<const models::ualink_switch*>(m.get())) {
      nlohmann::ordered_json st = nlohmann::ordered_json::object();
      sw->visit_stats([&](std::string_view name, std::uint64_t v) { st[std::string(name)] = v; });
      switches[sw->name()] = st;
    }
  return switches;
}

// result.json: status, config echo, collective, schedule report, fabric totals, switches, the study row.
// The link protocol of every link, as the protocol comparison's row keys
// (the collective leg of topologies/studies/link-protocols.yaml): protocol = ualink-<policy>
// | rifl | rifl+<FEC profile>, channel = gilbert-elliott | independent,
// wire_ber = the independent channel's bit-error rate ("" otherwise); "mixed"
// where the links differ.
struct ProtocolKeys {
  std::string protocol, channel, wire_ber;
};
ProtocolKeys protocol_keys(const fabric::FabricSpec& f) {
  auto of = [](const fabric::LinkSpec& l) {
    ProtocolKeys k;
    if (l.proto.protocol == fabric_core::LinkProtocol::rifl) {
      const rifl::RiflConfig& r = l.proto.rifl;
      k.protocol = r.fec_on ? "rifl+" + r.fec.name : std::string("rifl");
      const bool indep = r.channel == rifl::RiflConfig::Channel::independent;
      k.channel = indep ? "independent" : "gilbert-elliott";
      if (indep) k.wire_ber = fmt::format("{:.4g}", r.ber_ab);
    } else {
      k.protocol = "ualink-" + l.link.policy_name;
      const bool indep = l.link.channel_model == link::LinkConfig::ChannelModel::independent;
      k.channel = indep ? "independent" : "gilbert-elliott";
      if (indep) k.wire_ber = fmt::format("{:.4g}", l.link.ber);
    }
    return k;
  };
  if (f.links.empty()) return {};
  ProtocolKeys k = of(f.links.front());
  for (const auto& l : f.links) {
    const ProtocolKeys x = of(l);
    if (x.protocol != k.protocol) k.protocol = "mixed";
    if (x.channel != k.channel) k.channel = "mixed";
    if (x.wire_ber != k.wire_ber) k.wire_ber = "mixed";
  }
  return k;
}

void result_json(const FabricCell& c, FabricPlatform& plat, const LinkTotals& t, bool completed,
                 const nlohmann::ordered_json& sched_json, FabricRunResult& res) {
  const auto& cfg = c.cfg;
  const auto& spec = c.spec;
  const auto& row = res.row;
  const int N = c.N;
  auto& j = res.json;
  j["fabricsim"] = "0.1.0";
  j["status"] = completed ? "done" : "link down (retry limit)";
  if (!completed) j["diagnosis"] = res.link_down;
  j["config"] = fabric::to_json(cfg);
  j["collective"] = {
      {"collective", sw::to_string(spec.op)},
      {"algorithm", spec.algorithm},
      {"ranks", N},
      {"size", row.size_bytes},
      {"count", row.count},
      {"type", "float"},
      {"redop", redop(spec.op)},
      {"time_us", num(row.time_us)},
      {"algbw_GBps", num(row.algbw_GBps)},
      {"busbw_GBps", num(row.busbw_GBps)},
      {"correct", row.completed && cfg.workload.data && cfg.workload.verify ? nlohmann::ordered_json(row.correct)
                                                                            : nlohmann::ordered_json("not checked")},
      {"iterations", c.iters}};
  if (c.sched) {
    j["collective"]["algorithm"] = algorithm_label(cfg);
    if (!res.first_wrong.empty()) j["collective"]["first_wrong"] = res.first_wrong;
    if (!sched_json.is_null()) j["schedule"] = sched_json;
  }
  j["fabric"] = {{"transmissions", t.tx},
                 {"replayed_flits", res.replayed_flits},
                 {"fec_bytes", res.fec_bytes},
                 {"control_bytes", t.control},
                 {"first_attempt_errors", t.first_err},
                 {"terminal_failures", res.terminal_failures},
                 {"completions", plat.kernel().completions()}};
  if (!t.rifl.empty()) j["rifl_links"] = t.rifl;
  const nlohmann::ordered_json switches = switches_json(plat);
  if (!switches.empty()) j["switches"] = switches;
  j["row"] = {{"ranks", N},
              {"size_bytes", row.size_bytes},
              {"policy", cfg.default_link.policy_name},
              {"seed", cfg.seed},
              {"time_us", num(row.time_us)},
              {"replayed_flits", res.replayed_flits},
              {"fec_bytes", res.fec_bytes},
              {"terminal_failures", res.terminal_failures},
              {"algbw_GBps", num(row.algbw_GBps)},
              {"busbw_GBps", num(row.busbw_GBps)},
              // What was run and whether it was right, so a study's rows say it (not used by default columns).
              {"collective", sw::to_string(spec.op)},
              {"algorithm", spec.algorithm},
              {"correct", j["collective"]["correct"]}};
  const ProtocolKeys pk = protocol_keys(cfg.fabric);
  j["row"]["protocol"] = pk.protocol;
  j["row"]["channel"] = pk.channel;
  j["row"]["wire_ber"] = pk.wire_ber;
}

// The console summary: the nccl-tests row, link totals, the most replaying links, the schedule report.
std::string run_summary(const FabricCell& c, const fabric_core::FabricEngine& eng, const LinkTotals& t,
                        const std::string& sched_summary, const FabricRunResult& res) {
  const auto& row = res.row;
  std::ostringstream sm;
  sm << fmt::format("#  {:>12} {:>12} {:>6} {:>6} {:>12} {:>10} {:>10} {:>8}\n", "size", "count", "type", "redop",
                    "time(us)", "algbw", "busbw", "correct");
  // A collective that did not complete (a link went down) has no time: "-", as in nccl-tests' skipped cells.
  const auto cell = [](double v) { return std::isnan(v) ? std::string("-") : fmt::format("{:.2f}", v); };
  sm << fmt::format("   {:>12} {:>12} {:>6} {:>6} {:>12} {:>10} {:>10} {:>8}\n", row.size_bytes, row.count, "float",
                    redop(c.spec.op), cell(row.time_us), cell(row.algbw_GBps), cell(row.busbw_GBps),
                    correct_text(c.cfg, row));
  // RIFL links send frames (256 bits by default) and retransmit them; UALink
  // links send flits and replay them: name what was counted.
  bool ualink = false, rifl = false;
  for (const auto& l : c.cfg.fabric.links) (l.proto.protocol == fabric_core::LinkProtocol::rifl ? rifl : ualink) = true;
  const char* units = rifl && ualink ? "flit and frame" : rifl ? "frame" : "flit";
  const char* again = rifl && ualink ? "replayed or retransmitted" : rifl ? "retransmitted" : "replayed";
  sm << fmt::format("  links: {} directions, {} {} transmissions, {} {}, FEC {:.1f} KiB, {} first-attempt raw errors\n",
                    eng.directions(), t.tx, units, res.replayed_flits, again, res.fec_bytes / 1024.0, t.first_err);
  for (std::size_t i = 0; i < std::min<std::size_t>(5, t.top.size()); ++i)
    if (t.top[i].replayed) sm << fmt::format("    {:<40} replayed {}\n", t.top[i].name, t.top[i].replayed);
  sm << sched_summary;
  if (!res.first_wrong.empty()) sm << "  wrong result: " << res.first_wrong << "\n";
  return sm.str();
}

}  // namespace

FabricRunResult run_fabric(const fabric::FabricRunConfig& cfg0, RankProgram program, bool progress,
                           report::TraceWriter* trace) {
  fabric::FabricRunConfig cfg = cfg0;
  validate_fabric(cfg);
  const FabricCell c = fabric_cell(cfg);
  const int N = c.N;

  check_runnable(cfg);
  FabricPlatform plat(cfg, /*validated=*/true);
  std::vector<models::accelerator*> acc(N, nullptr);
  for (int r = 0; r < N; ++r) acc[r] = &plat.accelerator(r);
  const std::vector<std::string>& rank_names = plat.rank_names();

  auto timing = std::make_shared<Timing>();
  timing->start.assign(c.iters, 0);
  timing->end.assign(c.iters, std::vector<std::uint64_t>(N, 0));
  timing->correct.assign(N, false);
  set_programs(c, acc, program, timing);

  FabricRunResult res;
  if (trace) {
    plat.trace_operations(*trace);
    plat.trace_rifl_recoveries(*trace);
  }
  res.diagnosis = plat.simulate(progress, [](std::uint64_t sim_ps, std::uint64_t done) {
    return fmt::format("{:.1f} us simulated, {} transfers done", sim_ps / 1e6, done);
  });
  if (!res.diagnosis.empty()) return res;
  if (trace) plat.close_rifl_recoveries();
  res.link_down = plat.kernel().link_down();
  if (res.link_down.empty()) {
    res.diagnosis = plat.unfinished();
    if (!res.diagnosis.empty()) return res;
  }
  res.ok = true;

  const bool completed = res.link_down.empty() && !program;  // a custom program has no collective row
  collective_row(c, acc, *timing, completed, res);
  // Schedules: per-step and per-threadblock timing, the critical path, trace tracks.
  nlohmann::ordered_json sched_json;
  std::string sched_summary;
  if (c.sched && completed) {
    std::vector<std::string> accel(N);
    for (int g = 0; g < N; ++g) accel[g] = rank_names[c.fabric_of[g]];
    const ScheduleReport rep = schedule_report(*c.sched, *c.SL, timing->records, timing->start[c.iters - 1], accel,
                                               cfg.workload.schedule_path, algorithm_label(cfg), trace);
    res.steps_csv = rep.steps_csv;
    res.threadblocks_csv = rep.threadblocks_csv;
    sched_json = rep.json;
    sched_summary = rep.summary;
  }
  const auto& eng = dynamic_cast<const fabric_core::FabricEngine&>(plat.kernel().engine());
  const LinkTotals t = link_stats(cfg.fabric, eng, res);
  result_json(c, plat, t, completed, sched_json, res);
  res.summary = run_summary(c, eng, t, sched_summary, res);
  return res;
}

}  // namespace fabricsim::sim
