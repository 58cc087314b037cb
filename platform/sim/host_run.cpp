#include "platform/sim/host_run.h"

#include <systemc>
#include <tlm>

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>

#include "models/accelerator/accelerator.h"
#include "models/fabric/fabric_kernel.h"
#include "models/link/core/counter_rng.h"
#include "models/pcie/core/pcie_engine.h"
#include "models/pcie/pcie_host.h"
#include "models/registry.h"
#include "platform/config/yaml_config.h"
#include "platform/sim/fabric_run.h"
#include "platform/sim/host_platform.h"
#include "platform/sim/kernel_hooks.h"
#include "platform/sim/schedule_report.h"
#include "platform/stats/summary.h"
#include "sw/collectives.h"
#include "sw/schedule_exec.h"
#include "sw/selection.h"
#include "sw/transports.h"

namespace fabricsim::sim {

OpStats op_stats(const std::vector<std::vector<std::uint64_t>>& per_rank) {
  OpStats s;
  if (per_rank.empty() || per_rank[0].empty()) return s;
  s.ops = per_rank[0].size();
  std::vector<double> all;
  for (const auto& r : per_rank)
    for (auto t : r) all.push_back(static_cast<double>(t) / 1e6);
  s.samples = all.size();
  double sum = 0;
  for (double v : all) sum += v;
  s.mean_us = sum / static_cast<double>(all.size());
  s.max_us = *std::max_element(all.begin(), all.end());
  s.p50_us = stats::percentile_nearest_rank(all, 50);
  s.p99_us = stats::percentile_nearest_rank(all, 99);
  for (std::size_t op = 0; op < s.ops; ++op) {
    std::uint64_t worst = 0;
    for (const auto& r : per_rank) worst = std::max(worst, op < r.size() ? r[op] : 0);
    if (worst > 1'000'000'000ull) ++s.ops_over_1ms;
  }
  return s;
}

std::uint64_t cell_duration_ps(const fabric::HostRunConfig& c) {
  if (c.workload.duration_ps) return c.workload.duration_ps;
  const std::uint64_t P = c.host.engine.calendar.period_ps;
  const std::uint64_t k = std::max<std::uint64_t>(1, (c.workload.min_duration_ps + P - 1) / P);
  return k * P;
}

namespace {

struct Shared {
  std::vector<std::vector<std::uint64_t>> times;  // per rank, per op (ps)
  std::vector<bool> correct;
  // Schedules: each operation's schedule start (after the barrier's cost) and
  // every rank's step records of the last operation.
  std::vector<std::uint64_t> sched_start;
  std::vector<sw::RankRecords> records;
};

// nccl-tests' redop column (as fabric_run.cpp).
const char* redop(sw::Op op) { return op == sw::Op::allreduce || op == sw::Op::reduce_scatter ? "sum" : "none"; }

// What one host run derives from its configuration before elaboration.
struct HostCell {
  explicit HostCell(const fabric::HostRunConfig& c) : cfg(c) {}
  const fabric::HostRunConfig& cfg;
  int N = 0;                                     // GPUs in the group (ranks)
  std::shared_ptr<const sw::Schedule> sched;     // a user's schedule, or null for a transport
  std::shared_ptr<const sw::ScheduleLayout> SL;  // its memory layout
  sw::CollectiveSpec spec;                       // the transport (empty for a schedule)
  sw::Layout L;                                  // GPU memory layout (largest of all decode uses)
  std::uint64_t end_ps = 0;                      // cell duration
  std::vector<int> quads;                        // distinct quadrants of the group, ascending
};

HostCell host_cell(const fabric::HostRunConfig& cfg) {
  HostCell c(cfg);
  const auto& H = cfg.host;
  const auto& W = cfg.workload;
  const int N = c.N = static_cast<int>(W.group.size());
  // A user's schedule (workload.algorithm: schedule) or a transport.
  c.sched = W.schedule;
  c.SL = c.sched ? std::make_shared<const sw::ScheduleLayout>(sw::layout_schedule(
                       *c.sched, W.size_bytes, H.gpu.threadblock_rate_bytes_per_s > 0 ? sw::kRatePieceBytes : 0))
                 : nullptr;
  c.spec = c.sched ? sw::CollectiveSpec{} : sw::transport_spec(W.transport, W.size_bytes, N);
  c.spec.chunk_bytes = W.chunk_bytes;
  c.spec.fabric_barriers = W.kernel_barriers;
  c.L = host_gpu_layout(cfg);  // (host memory and RAM bounds are checked by parse_host)
  c.end_ps = cell_duration_ps(cfg);
  for (int g : W.group) c.quads.push_back(fabric::gpu_quadrant(H, g));
  std::sort(c.quads.begin(), c.quads.end());
  c.quads.erase(std::unique(c.quads.begin(), c.quads.end()), c.quads.end());
  return c;
}

// Decode rounds with transport selection on every GPU (sw::decode_program).
void set_decode_programs(const HostCell& c, HostPlatform& P, const std::shared_ptr<sw::DecodeState>& dsh) {
  const auto& W = c.cfg.workload;
  sw::DecodeRun run;
  run.spec = c.cfg.decode;
  run.layout = c.L;
  run.data = W.data;
  run.max_rounds = W.ops;
  run.cell_ps = c.end_ps;
  run.barrier_ps = W.barrier_ps;
  run.chunk_bytes = W.chunk_bytes;
  run.kernel_barriers = W.kernel_barriers;
  run.crossing = c.quads.size() > 1;
  run.ranks = c.N;
  dsh->transport.assign(run.spec.allreduces.size(), "");
  for (int r = 0; r < c.N; ++r)
    P.accelerator(r).set_program([dsh, run](models::accelerator_api& a) { sw::decode_program(a, *dsh, run); }, c.N);
}

// Schedule rank r on GPU group[r], the harness's way: per operation fill the
// input (and clear a separate output), barrier, reset flags, the start
// barrier, its cost, the schedule.
void set_schedule_programs(const HostCell& c, HostPlatform& P, const std::shared_ptr<Shared>& sh) {
  const auto& W = c.cfg.workload;
  const auto sched = c.sched;
  const auto SL = c.SL;
  const bool data = W.data;
  const std::uint64_t max_ops = W.ops, barrier_ps = W.barrier_ps, end_ps = c.end_ps;
  sh->records.assign(c.N, {});
  for (int r = 0; r < c.N; ++r)
    P.accelerator(r).set_program(
        [sh, sched, SL, data, max_ops, end_ps, barrier_ps](models::accelerator_api& a) {
          const int g = a.rank();
          const sw::ScheduleRankLayout& R = SL->ranks[g];
          auto& mine = sh->times[g];
          for (std::uint64_t op = 0;; ++op) {
            a.barrier();
            a.reset_flags();
            a.barrier();
            if (max_ops ? op >= max_ops : a.now_ps() >= end_ps) break;
            // Local buffers only (peers write into staging slots), so no
            // rank's filling can race with another's sends.
            if (data) {
              if (op > 0 && !sched->inplace) std::memset(a.memory() + R.out, 0, R.out_bytes);
              float* in = reinterpret_cast<float*>(a.memory() + R.in);
              for (std::uint64_t i = 0; i < R.in_bytes / 4; ++i) in[i] = sw::input_value(sched->op, g, i);
            }
            const std::uint64_t t0 = a.now_ps();
            a.compute(barrier_ps);  // its cost, included in the operation (host-bridge.md §4)
            if (g == 0) sh->sched_start.push_back(a.now_ps());
            sh->records[g].clear();
            sw::run_schedule(a, *sched, *SL, g, {}, &sh->records[g]);
            mine.push_back(a.now_ps() - t0);
          }
        },
        c.N);
}

// A transport, operation after operation behind the start barrier; the first checked if verifying.
void set_transport_programs(const HostCell& c, HostPlatform& P, const std::shared_ptr<Shared>& sh) {
  const auto& W = c.cfg.workload;
  const auto spec = c.spec;
  const auto L = c.L;
  const bool data = W.data, verify = W.data && W.verify;
  const std::uint64_t max_ops = W.ops, barrier_ps = W.barrier_ps, end_ps = c.end_ps;
  const int N = c.N;
  for (int r = 0; r < N; ++r)
    P.accelerator(r).set_program(
        [sh, spec, L, data, verify, max_ops, end_ps, barrier_ps, N](models::accelerator_api& a) {
          const int rank = a.rank();
          if (data) {
            float* in = reinterpret_cast<float*>(a.memory() + L.in);
            for (std::uint64_t i = 0; i < L.in_bytes / 4; ++i) in[i] = sw::input_value(spec.op, rank, i);
          }
          auto& mine = sh->times[rank];
          for (std::uint64_t op = 0;; ++op) {
            a.barrier();
            a.reset_flags();
            a.barrier();  // the cross-GPU start barrier: every GPU leaves it at the same instant
            if (max_ops ? op >= max_ops : a.now_ps() >= end_ps) break;
            const std::uint64_t t0 = a.now_ps();
            a.compute(barrier_ps);  // its cost, included in the operation (host-bridge.md §4)
            sw::run_collective(a, spec);
            mine.push_back(a.now_ps() - t0);
            if (op == 0 && verify) {
              const float* out = reinterpret_cast<const float*>(a.memory() + L.out);
              bool ok = true;
              for (std::uint64_t i = 0; i < L.out_bytes / 4 && ok; ++i)
                ok = out[i] == sw::expected_value(spec, N, rank, i);
              sh->correct[rank] = ok;
            }
          }
        },
        N);
}

// Trace: GPU threads and DMA operations (recorded as they happen).
void trace_setup(report::TraceWriter& trace, HostPlatform& P) {
  trace.name_process(2, "stall windows (mechanism A)");
  P.trace_operations(trace);
}

// Trace: the stall windows of the group's quadrants that began before the run
// ended at `end_ps`, cut at it (windows are a pure function of time; a run of
// a fixed number of operations ends long before the cell's duration).
void trace_windows(report::TraceWriter& trace, const HostCell& c, HostPlatform& P, std::uint64_t end_ps) {
  const auto& cal = P.engine().calendar();
  for (int q : c.quads) {
    trace.name_thread(2, q, fmt::format("quadrant {}", q));
    for (std::uint64_t t = cal.next_window_start(q, 0); t < end_ps; t = cal.next_window_start(q, t + 1)) {
      if (t == link::kNever) break;
      // (drawn up to the run's end: the timeline ends with the run)
      trace.span("degraded window", "stall", 2, q, t, std::min<std::uint64_t>(cal.params().window_ps, end_ps - t));
    }
  }
}

// A schedule's nccl-tests row, label and reports.
struct ScheduleOutcome {
  CollectiveRow row;
  ScheduleReport rep;
  std::string label;
};

// A schedule: the nccl-tests row, the check against the collective's definition, the reports.
ScheduleOutcome schedule_outcome(const HostCell& c, HostPlatform& P, const Shared& sh, HostRunResult& res,
                                 report::TraceWriter* trace) {
  const auto& W = c.cfg.workload;
  const auto& sched = *c.sched;
  const int N = c.N;
  const bool verify = W.data && W.verify;
  ScheduleOutcome o;
  auto& row = o.row;
  o.label = schedule_label(sched, W.schedule_path);
  const std::size_t ops = sh.times[0].size();
  double sum_us = 0;
  for (std::size_t op = 0; op < ops; ++op) {
    std::uint64_t worst = 0;
    for (int r = 0; r < N; ++r) worst = std::max(worst, sh.times[r][op]);
    sum_us += static_cast<double>(worst) / 1e6;
  }
  row.size_bytes = W.size_bytes;
  row.count = W.size_bytes / 4;
  row.time_us = ops ? sum_us / static_cast<double>(ops) : 0;
  row.algbw_GBps = row.time_us > 0 ? static_cast<double>(W.size_bytes) / (row.time_us * 1e-6) / 1e9 : 0;
  row.busbw_GBps = row.algbw_GBps * sw::busbw_factor(sched.op, N);
  res.correct = false;
  if (verify) {
    std::vector<const float*> outs(N);
    for (int g = 0; g < N; ++g) outs[g] = reinterpret_cast<const float*>(P.accelerator(g).memory() + c.SL->ranks[g].out);
    res.first_wrong = sw::check_outputs(sched, *c.SL, outs, W.root);
    res.correct = res.first_wrong.empty();
  }
  row.correct = res.correct;
  const std::vector<std::string>& accel = P.rank_names();
  o.rep = schedule_report(sched, *c.SL, sh.records, sh.sched_start.back(), accel, W.schedule_path, o.label, trace);
  res.steps_csv = o.rep.steps_csv;
  res.threadblocks_csv = o.rep.threadblocks_csv;
  res.collectives_csv = collective_csv(sw::to_string(sched.op), o.label, static_cast<std::uint64_t>(N), row,
                                       redop(sched.op), verify ? (res.correct ? "true" : "false") : "n/a");
  return o;
}

// Only a group spanning quadrants can meet a stall (reads from another quadrant).
double degraded_fraction(const HostCell& c, const HostPlatform& P) {
  return c.quads.size() > 1 ? P.engine().calendar().degraded_fraction(c.quads) : 0.0;
}

// result.json: config echo, cell, engine statistics, correctness, a schedule's collective, the study row.
void result_json(const HostCell& c, const HostPlatform& P, const ScheduleOutcome& o, HostRunResult& res) {
  const auto& cfg = c.cfg;
  const auto& W = cfg.workload;
  const auto& st = P.engine().stats();
  const auto& sched = c.sched;
  const auto& row = o.row;
  const auto& label = o.label;
  const bool verify = W.data && W.verify;
  std::string group;
  for (int g : W.group) group += (group.empty() ? "" : ",") + std::to_string(g);
  const auto& S = res.stats;
  auto& j = res.json;
  j["fabricsim"] = "0.1.0";
  j["status"] = "done";
  j["config"] = fabric::to_json(cfg);
  j["cell"] = {{"duration_s", W.ops ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(c.end_ps / 1e12)},
               {"ops_limit", W.ops},
               {"simulated_s", res.simulated_s},
               {"quadrants_spanned", c.quads.size()},
               {"degraded_fraction_steady_state", degraded_fraction(c, P)}};
  j["engine"] = {{"bursts", st.bursts},
                 {"reads", st.reads},
                 {"stalled_reads", st.stalled_reads},
                 {"read_stall_ms", st.read_stall_ps / 1e9},
                 {"ordered_write_bursts", st.ordered_bursts},
                 {"drains", st.drains},
                 {"interleaved_switches", st.interleaved_switches},
                 {"ordering_wait_ms", st.drain_wait_ps / 1e9},
                 {"transfers", P.kernel().completions()}};
  j["correct"] = W.data && verify && !cfg.decode_mode ? nlohmann::ordered_json(res.correct)
                                                      : nlohmann::ordered_json("not checked");
  if (sched) {
    j["collective"] = {{"collective", sw::to_string(sched->op)},
                       {"algorithm", label},
                       {"ranks", c.N},
                       {"size", row.size_bytes},
                       {"count", row.count},
                       {"type", "float"},
                       {"redop", redop(sched->op)},
                       {"time_us", row.time_us},
                       {"algbw_GBps", row.algbw_GBps},
                       {"busbw_GBps", row.busbw_GBps},
                       {"correct", j["correct"]},
                       {"operations", S.ops}};
    if (!res.first_wrong.empty()) j["collective"]["first_wrong"] = res.first_wrong;
    j["schedule"] = o.rep.json;
  }
  j["row"] = {{"group", group},
              {"transport", W.transport},
              {"size_bytes", W.size_bytes},
              {"seed", cfg.seed},
              {"ops", S.ops},
              {"mean_us", S.mean_us},
              {"p50_us", S.p50_us},
              {"p99_us", S.p99_us},
              {"max_us", S.max_us},
              {"ops_over_1ms", S.ops_over_1ms},
              {"stalled_reads", st.stalled_reads},
              {"drains", st.drains},
              // Decode-only columns, present in every row so a study may ask for them.
              {"selection", "none"},
              {"picks", ""},
              {"round_us", nullptr},
              // Schedule columns (nccl-tests time: per operation the slowest GPU), null for transports.
              {"algorithm", sched             ? label
                            : cfg.decode_mode ? std::string("decode")
                                              : W.transport},
              {"time_us", sched ? nlohmann::ordered_json(row.time_us) : nlohmann::ordered_json(nullptr)},
              {"algbw_GBps", sched ? nlohmann::ordered_json(row.algbw_GBps) : nlohmann::ordered_json(nullptr)},
              {"busbw_GBps", sched ? nlohmann::ordered_json(row.busbw_GBps) : nlohmann::ordered_json(nullptr)},
              {"correct", j["correct"]}};
  if (sched) j["row"]["transport"] = label;
}

// A decode run's row columns, decode block and summary (selection, picks, rounds, races).
void decode_result(const fabric::DecodeSpec& D, const sw::DecodeState& dsh, HostRunResult& res) {
  const auto& S = res.stats;
  auto& j = res.json;
  const double compute_us = static_cast<double>(D.layers) * static_cast<double>(D.allreduces.size()) *
                            static_cast<double>(D.compute_ps) / 1e6;
  std::string picks;
  for (std::size_t si = 0; si < dsh.transport.size(); ++si)
    picks += fmt::format("{}{}B={}", si ? ";" : "", D.allreduces[si], dsh.transport[si]);
  j["row"]["transport"] = "decode";
  // The report's variant "drop read modes when ranks span quadrants" is a policy of its own.
  j["row"]["selection"] =
      sw::to_string(D.selection) +
      (D.drop_reads_when_crossing && D.selection != sw::Selection::ladder && D.selection != sw::Selection::fabric_class
           ? "-no-reads"
           : "");
  j["row"]["picks"] = picks;
  j["row"]["round_us"] = S.mean_us;
  j["decode"] = {{"selection", sw::to_string(D.selection)},
                 {"picks", picks},
                 {"race", dsh.race_log},
                 {"selection_end_us", dsh.selection_end_ps / 1e6},
                 {"rounds", S.ops},
                 {"round_mean_us", S.mean_us},
                 {"round_p50_us", S.p50_us},
                 {"round_p99_us", S.p99_us},
                 {"round_max_us", S.max_us},
                 // Breakdown (collectives.md §6): compute gaps are fixed; the rest is collectives.
                 {"round_compute_us", compute_us},
                 {"round_collectives_mean_us", S.mean_us - compute_us}};
  res.summary = fmt::format(
      "  selection {} picked {} (decided at {:.3f} ms)\n"
      "  {} decode rounds: mean {:.2f} us  p50 {:.2f} us  p99 {:.2f} us  max {:.2f} us  (compute {:.2f} us, "
      "collectives {:.2f} us on average)\n",
      sw::to_string(D.selection), picks, dsh.selection_end_ps / 1e9, S.ops, S.mean_us, S.p50_us, S.p99_us, S.max_us,
      compute_us, S.mean_us - compute_us);
  for (const auto& l : dsh.race_log) res.summary += "  race " + l + "\n";
}

// The console summary of a transport or schedule run.
void run_summary(const HostCell& c, const HostPlatform& P, const ScheduleOutcome& o, HostRunResult& res) {
  const auto& W = c.cfg.workload;
  const bool verify = W.data && W.verify;
  const auto& row = o.row;
  const auto& st = P.engine().stats();
  const auto& S = res.stats;
  if (c.sched)
    res.summary = fmt::format("#  {:>12} {:>12} {:>6} {:>6} {:>12} {:>10} {:>10} {:>8}\n", "size", "count", "type",
                              "redop", "time(us)", "algbw", "busbw", "correct") +
                  fmt::format("   {:>12} {:>12} {:>6} {:>6} {:>12.2f} {:>10.2f} {:>10.2f} {:>8}\n", row.size_bytes,
                              row.count, "float", redop(c.sched->op), row.time_us, row.algbw_GBps, row.busbw_GBps,
                              verify ? (res.correct ? "true" : "false") : "n/a") +
                  o.rep.summary + (res.first_wrong.empty() ? "" : "  wrong result: " + res.first_wrong + "\n");
  res.summary += fmt::format(
      "  {} ops in {} simulated ({} samples: ops x GPUs)\n"
      "  per-GPU time per op: mean {:.2f} us  p50 {:.2f} us  p99 {:.2f} us  max {:.2f} us  ops > 1 ms: {}\n"
      "  group spans {} quadrant(s), a read target degraded {:.1f} % of the time (steady state); stalled reads {} "
      "({:.1f} ms), ordering drains {}\n",
      S.ops,
      res.simulated_s >= 1e-3 ? fmt::format("{:.3f} s", res.simulated_s)
                              : fmt::format("{:.3f} us", res.simulated_s * 1e6),
      S.samples, S.mean_us, S.p50_us, S.p99_us, S.max_us, S.ops_over_1ms, c.quads.size(), 100 * degraded_fraction(c, P),
      st.stalled_reads, st.read_stall_ps / 1e9, st.drains);
}

}  // namespace

HostRunResult run_host(const fabric::HostRunConfig& cfg, bool progress, report::TraceWriter* trace) {
  HostRunResult res;
  const HostCell c = host_cell(cfg);
  const int N = c.N;
  HostPlatform P(cfg);
  auto sh = std::make_shared<Shared>();
  sh->times.assign(N, {});
  sh->correct.assign(N, false);
  auto dsh = std::make_shared<sw::DecodeState>();
  if (cfg.decode_mode)
    set_decode_programs(c, P, dsh);
  else if (c.sched)
    set_schedule_programs(c, P, sh);
  else
    set_transport_programs(c, P, sh);
  if (trace) trace_setup(*trace, P);

  const std::uint64_t end_ps = c.end_ps;
  res.diagnosis = P.simulate(progress, [end_ps](std::uint64_t sim_ps, std::uint64_t done) {
    return fmt::format("{:.3f} of {:.3f} s simulated, {} transfers done", sim_ps / 1e12, end_ps / 1e12, done);
  });
  if (!res.diagnosis.empty()) return res;
  res.diagnosis = P.unfinished();
  if (!res.diagnosis.empty()) return res;
  res.ok = true;
  res.simulated_s = static_cast<double>(sc_core::sc_time_stamp().value()) / 1e12;
  if (trace) trace_windows(*trace, c, P, sc_core::sc_time_stamp().value());
  if (cfg.decode_mode) sh->times.assign(1, dsh->round_ps);  // statistics over rounds (results are not verified)
  res.stats = op_stats(sh->times);
  if (!cfg.decode_mode) res.correct = std::all_of(sh->correct.begin(), sh->correct.end(), [](bool b) { return b; });
  const ScheduleOutcome o = c.sched ? schedule_outcome(c, P, *sh, res, trace) : ScheduleOutcome{};
  result_json(c, P, o, res);
  if (cfg.decode_mode) {
    decode_result(cfg.decode, *dsh, res);
    return res;
  }
  run_summary(c, P, o, res);
  return res;
}

}  // namespace fabricsim::sim
