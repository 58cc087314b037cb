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
struct DecodeShared {
  std::vector<std::string> transport;                         // per allreduce size index
  std::vector<std::vector<std::vector<std::uint64_t>>> race;  // [candidate][rank][op] of the size being raced
  std::vector<std::string> race_log;                          // "size: cand=median/mean ..." per size
  std::vector<std::uint64_t> round_ps;
  std::uint64_t selection_end_ps = 0;
};

// One operation the harness way: flags reset behind barriers, then the start
// barrier's cost and the collective. Returns this GPU's time, ps.
std::uint64_t timed_op(models::accelerator_api& a, const sw::CollectiveSpec& spec, std::uint64_t barrier_ps) {
  a.barrier();
  a.reset_flags();
  a.barrier();
  const std::uint64_t t0 = a.now_ps();
  a.compute(barrier_ps);
  sw::run_collective(a, spec);
  return a.now_ps() - t0;
}

void decode_program(models::accelerator_api& a, DecodeShared& sh, const fabric::DecodeSpec& D, const sw::Layout& L,
                    bool data, std::uint64_t max_rounds, std::uint64_t cell_ps, std::uint64_t barrier_ps, int N,
                    std::uint64_t chunk, bool crossing, bool barriers) {
  const int rank = a.rank();
  if (data) {
    float* in = reinterpret_cast<float*>(a.memory() + L.in);
    for (std::uint64_t i = 0; i < L.in_bytes / 4; ++i) in[i] = sw::input_value(sw::Op::allreduce, rank, i);
  }
  auto spec_of = [&](const std::string& t, std::uint64_t bytes) {
    auto s = sw::transport_spec(t, bytes, N);
    s.chunk_bytes = chunk;
    s.fabric_barriers = barriers;
    return s;
  };
  // Selection, once, identically on every GPU.
  for (std::size_t si = 0; si < D.allreduces.size(); ++si) {
    const std::uint64_t bytes = D.allreduces[si];
    if (D.selection == sw::Selection::ladder) {
      sh.transport[si] = D.ladder.pick(bytes);
      continue;
    }
    if (D.selection == sw::Selection::fabric_class) {
      sh.transport[si] = (crossing ? D.quadrant_crossing : D.switch_local).pick(bytes);
      continue;
    }
    std::vector<std::string> cands = D.candidates;
    if (crossing && D.drop_reads_when_crossing) cands = sw::without_peer_reads(cands);
    if (rank == 0) sh.race.assign(cands.size(), std::vector<std::vector<std::uint64_t>>(N));
    for (std::size_t ci = 0; ci < cands.size(); ++ci) {
      a.barrier();
      const std::uint64_t start = a.now_ps();
      const auto spec = spec_of(cands[ci], bytes);
      while (true) {
        a.barrier();
        if (a.now_ps() >= start + D.race_window_ps) break;
        sh.race[ci][rank].push_back(timed_op(a, spec, barrier_ps));
      }
    }
    a.barrier();
    if (rank == 0) {
      std::vector<std::vector<double>> per_op(cands.size());
      std::string log = std::to_string(bytes) + "B:";
      for (std::size_t ci = 0; ci < cands.size(); ++ci) {
        const auto& rr = sh.race[ci];
        for (std::size_t op = 0; op < rr[0].size(); ++op) {
          std::uint64_t worst = 0;
          for (int r = 0; r < N; ++r) worst = std::max(worst, op < rr[r].size() ? rr[r][op] : 0);
          per_op[ci].push_back(static_cast<double>(worst) / 1e6);
        }
      }
      const auto by = D.selection == sw::Selection::race_mean ? sw::RaceBy::mean : sw::RaceBy::median;
      sh.transport[si] = cands[sw::race_pick(per_op, by)];
      for (std::size_t ci = 0; ci < cands.size(); ++ci) {
        auto v = per_op[ci];
        if (v.empty()) continue;
        double mean = 0;
        for (double x : v) mean += x;
        mean /= static_cast<double>(v.size());
        std::sort(v.begin(), v.end());
        const std::size_t m = v.size();
        const double median = m % 2 ? v[m / 2] : 0.5 * (v[m / 2 - 1] + v[m / 2]);  // as race_pick
        log += fmt::format(" {}={:.2f}/{:.2f}us({})", cands[ci], median, mean, m);
      }
      sh.race_log.push_back(log);
    }
    a.barrier();
  }
  a.barrier();
  const std::uint64_t t_sel = a.now_ps();
  if (rank == 0) sh.selection_end_ps = t_sel;
  // Decode rounds.
  std::vector<sw::CollectiveSpec> specs;
  for (std::size_t si = 0; si < D.allreduces.size(); ++si) specs.push_back(spec_of(sh.transport[si], D.allreduces[si]));
  for (std::uint64_t round = 0;; ++round) {
    a.barrier();
    if (max_rounds ? round >= max_rounds : a.now_ps() >= t_sel + cell_ps) break;
    const std::uint64_t r0 = a.now_ps();
    for (std::uint32_t layer = 0; layer < D.layers; ++layer)
      for (const auto& spec : specs) {
        a.compute(D.compute_ps);
        timed_op(a, spec, barrier_ps);
      }
    a.barrier();
    if (rank == 0) sh.round_ps.push_back(a.now_ps() - r0);
  }
}

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
}  // namespace

HostRunResult run_host(const fabric::HostRunConfig& cfg, bool progress, report::TraceWriter* trace) {
  HostRunResult res;
  const auto& H = cfg.host;
  const auto& W = cfg.workload;
  const int N = static_cast<int>(W.group.size());
  // A user's schedule (workload.algorithm: schedule) or a transport.
  const auto sched = W.schedule;
  const auto SL = sched ? std::make_shared<const sw::ScheduleLayout>(sw::layout_schedule(
                              *sched, W.size_bytes, H.gpu.threadblock_rate_bytes_per_s > 0 ? sw::kRatePieceBytes : 0))
                        : nullptr;
  sw::CollectiveSpec spec = sched ? sw::CollectiveSpec{} : sw::transport_spec(W.transport, W.size_bytes, N);
  spec.chunk_bytes = W.chunk_bytes;
  spec.fabric_barriers = W.kernel_barriers;
  sw::Layout L = sched ? sw::Layout{} : sw::layout(spec, N);
  if (sched) L.total = SL->memory_bytes;
  // (host memory and RAM bounds are checked by parse_host)
  if (cfg.decode_mode) {
    // Memory for the largest candidate x size; inputs start at 0 in every layout.
    const auto& D = cfg.decode;
    std::vector<std::string> all = D.candidates;
    for (const auto* ld : {&D.ladder, &D.switch_local, &D.quadrant_crossing})
      for (const auto& b : ld->buckets) all.push_back(b.transport);
    for (const auto& t : all)
      for (auto b : D.allreduces) {
        auto sp = sw::transport_spec(t, b, N);
        sp.chunk_bytes = W.chunk_bytes;
        sp.fabric_barriers = W.kernel_barriers;
        const auto l = sw::layout(sp, N);
        if (l.total > L.total) L.total = l.total;
        if (l.in_bytes > L.in_bytes) L.in_bytes = l.in_bytes;
      }
  }
  const std::uint64_t end_ps = cell_duration_ps(cfg);

  pcie::PcieEngineParams ep = H.engine;
  if (cfg.decode_mode && cfg.decode.random_start_phase) {
    // A run starts at a seed-derived phase of the stall period: the windows are
    // fixed in wall-clock time, the program's start is not (host-bridge.md §6).
    const double u = link::to_unit(link::key_hash(cfg.seed, 0x5ea7, 0, 0, 0x81));
    ep.calendar.offset_ps =
        (ep.calendar.offset_ps + static_cast<std::uint64_t>(u * ep.calendar.period_ps)) % ep.calendar.period_ps;
  }
  auto engine = std::make_unique<pcie::PcieEngine>(fabric::host_tree(H, W.group), ep, cfg.seed);
  auto& reg = models::model_registry::instance();
  std::vector<std::unique_ptr<sc_core::sc_module>> modules;
  std::vector<models::accelerator*> acc(N);
  std::vector<std::string> names;
  for (int r = 0; r < N; ++r) {
    models::node_config nc;
    nc.kind = "accelerator";
    nc.rank = r;
    models::accelerator_params p = H.gpu;
    p.memory_bytes = std::max<std::uint64_t>(L.total, 4096);
    p.functional = W.data;
    if (sched) p.flags = std::max(p.flags, SL->flags);
    modules.push_back(reg.create("accelerator", fmt::format("gpu{}", W.group[r]).c_str(), nc, p));
    acc[r] = dynamic_cast<models::accelerator*>(modules.back().get());
    names.push_back(acc[r]->name());
  }
  models::node_config hm;
  hm.kind = "host-memory";
  models::host_memory_params hp;
  hp.bytes = H.host_memory_bytes;
  hp.functional = W.data;
  modules.push_back(reg.create("host-memory", "host_memory", hm, hp));
  auto* host = dynamic_cast<models::host_memory*>(modules.back().get());
  names.push_back(host->name());

  auto kernel = std::make_unique<models::fabric_kernel>("pcie", std::move(engine), N, names, cfg.deadline_ps, 1);
  const auto& eng = dynamic_cast<const pcie::PcieEngine&>(kernel->engine());
  for (int r = 0; r < N; ++r) {
    acc[r]->dma.bind(kernel->dma_in);
    kernel->mem_out.bind(acc[r]->mem);
    acc[r]->sync.bind(kernel->sync_export);
    acc[r]->set_host_rank(N);
  }
  kernel->mem_out.bind(host->mem);
  kernel->attach(N, host);

  auto sh = std::make_shared<Shared>();
  sh->times.assign(N, {});
  sh->correct.assign(N, false);
  const bool data = W.data, verify = W.data && W.verify;
  const std::uint64_t max_ops = W.ops, barrier_ps = W.barrier_ps;
  std::vector<int> quads;
  for (int g : W.group) quads.push_back(fabric::gpu_quadrant(H, g));
  std::sort(quads.begin(), quads.end());
  quads.erase(std::unique(quads.begin(), quads.end()), quads.end());
  const bool crossing = quads.size() > 1;
  auto dsh = std::make_shared<DecodeShared>();
  if (cfg.decode_mode) {
    const auto D = cfg.decode;
    const std::uint64_t chunk = W.chunk_bytes;
    const bool barriers = W.kernel_barriers;
    dsh->transport.assign(D.allreduces.size(), "");
    for (int r = 0; r < N; ++r)
      acc[r]->set_program(
          [dsh, D, L, data, max_ops, end_ps, barrier_ps, N, chunk, crossing, barriers](models::accelerator_api& a) {
            decode_program(a, *dsh, D, L, data, max_ops, end_ps, barrier_ps, N, chunk, crossing, barriers);
          },
          N);
  } else if (sched) {
    // Schedule rank r on GPU group[r], the harness's way: per operation fill
    // the input (and clear a separate output), barrier, reset flags, the start
    // barrier, its cost, the schedule.
    sh->records.assign(N, {});
    for (int r = 0; r < N; ++r)
      acc[r]->set_program(
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
          N);
  } else
    for (int r = 0; r < N; ++r)
      acc[r]->set_program(
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

  if (trace) {
    trace->name_process(2, "stall windows (mechanism A)");
    for (int r = 0; r < N; ++r) trace->name_thread(1, r, names[r]);
    trace_dma_operations(*kernel, *trace, names);
    // Windows are a pure function of time: emit those of the cell up front.
    const auto& cal = eng.calendar();
    for (int q : quads) {
      trace->name_thread(2, q, fmt::format("quadrant {}", q));
      for (std::uint64_t t = cal.next_window_start(q, 0); t < end_ps; t = cal.next_window_start(q, t + 1)) {
        if (t == link::kNever) break;
        trace->span("degraded window", "stall", 2, q, t, cal.params().window_ps);
      }
    }
  }
  res.diagnosis = simulate(*kernel, progress, [end_ps](std::uint64_t sim_ps, std::uint64_t done) {
    return fmt::format("{:.3f} of {:.3f} s simulated, {} transfers done", sim_ps / 1e12, end_ps / 1e12, done);
  });
  if (!res.diagnosis.empty()) return res;
  for (int r = 0; r < N; ++r)
    if (!acc[r]->done()) {
      res.diagnosis = fmt::format("{} did not finish: waits for {}", acc[r]->name(), acc[r]->waiting_for());
      return res;
    }
  res.ok = true;
  res.simulated_s = static_cast<double>(sc_core::sc_time_stamp().value()) / 1e12;
  if (cfg.decode_mode) sh->times.assign(1, dsh->round_ps);  // statistics over rounds (results are not verified)
  res.stats = op_stats(sh->times);
  if (!cfg.decode_mode) res.correct = std::all_of(sh->correct.begin(), sh->correct.end(), [](bool b) { return b; });
  // A schedule: the nccl-tests row, the check against the collective's definition, the reports.
  CollectiveRow row;
  ScheduleReport rep;
  std::string label;
  if (sched) {
    label = schedule_label(*sched, W.schedule_path);
    const std::size_t ops = sh->times[0].size();
    double sum_us = 0;
    for (std::size_t op = 0; op < ops; ++op) {
      std::uint64_t worst = 0;
      for (int r = 0; r < N; ++r) worst = std::max(worst, sh->times[r][op]);
      sum_us += static_cast<double>(worst) / 1e6;
    }
    row.size_bytes = W.size_bytes;
    row.count = W.size_bytes / 4;
    row.time_us = ops ? sum_us / static_cast<double>(ops) : 0;
    row.algbw_GBps = row.time_us > 0 ? static_cast<double>(W.size_bytes) / (row.time_us * 1e-6) / 1e9 : 0;
    row.busbw_GBps = row.algbw_GBps * sw::busbw_factor(sched->op, N);
    res.correct = false;
    if (verify) {
      std::vector<const float*> outs(N);
      for (int g = 0; g < N; ++g) outs[g] = reinterpret_cast<const float*>(acc[g]->memory() + SL->ranks[g].out);
      res.first_wrong = sw::check_outputs(*sched, *SL, outs, W.root);
      res.correct = res.first_wrong.empty();
    }
    row.correct = res.correct;
    std::vector<std::string> accel(names.begin(), names.begin() + N);
    rep = schedule_report(*sched, *SL, sh->records, sh->sched_start.back(), accel, W.schedule_path, label, trace);
    res.steps_csv = rep.steps_csv;
    res.threadblocks_csv = rep.threadblocks_csv;
    res.collectives_csv = collective_csv(sw::to_string(sched->op), label, static_cast<std::uint64_t>(N), row,
                                         redop(sched->op), verify ? (res.correct ? "true" : "false") : "n/a");
  }

  const auto& st = eng.stats();
  std::string group;
  for (int g : W.group) group += (group.empty() ? "" : ",") + std::to_string(g);
  const std::vector<int>& uq = quads;  // distinct quadrants of the group
  const auto& S = res.stats;
  auto& j = res.json;
  j["fabricsim"] = "0.1.0";
  j["status"] = "done";
  j["config"] = fabric::to_json(cfg);
  // Only a group spanning quadrants can meet a stall (reads from another quadrant).
  const double degraded = uq.size() > 1 ? eng.calendar().degraded_fraction(uq) : 0.0;
  j["cell"] = {{"duration_s", W.ops ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(end_ps / 1e12)},
               {"ops_limit", W.ops},
               {"simulated_s", res.simulated_s},
               {"quadrants_spanned", uq.size()},
               {"degraded_fraction_steady_state", degraded}};
  j["engine"] = {{"bursts", st.bursts},
                 {"reads", st.reads},
                 {"stalled_reads", st.stalled_reads},
                 {"read_stall_ms", st.read_stall_ps / 1e9},
                 {"ordered_write_bursts", st.ordered_bursts},
                 {"drains", st.drains},
                 {"interleaved_switches", st.interleaved_switches},
                 {"ordering_wait_ms", st.drain_wait_ps / 1e9},
                 {"transfers", kernel->completions()}};
  j["correct"] =
      data && verify && !cfg.decode_mode ? nlohmann::ordered_json(res.correct) : nlohmann::ordered_json("not checked");
  if (sched) {
    j["collective"] = {{"collective", sw::to_string(sched->op)},
                       {"algorithm", label},
                       {"ranks", N},
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
    j["schedule"] = rep.json;
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
              {"algorithm", sched ? label : cfg.decode_mode ? std::string("decode") : W.transport},
              {"time_us", sched ? nlohmann::ordered_json(row.time_us) : nlohmann::ordered_json(nullptr)},
              {"algbw_GBps", sched ? nlohmann::ordered_json(row.algbw_GBps) : nlohmann::ordered_json(nullptr)},
              {"busbw_GBps", sched ? nlohmann::ordered_json(row.busbw_GBps) : nlohmann::ordered_json(nullptr)},
              {"correct", j["correct"]}};
  if (sched) j["row"]["transport"] = label;
  if (cfg.decode_mode) {
    const double compute_us = static_cast<double>(cfg.decode.layers) *
                              static_cast<double>(cfg.decode.allreduces.size()) *
                              static_cast<double>(cfg.decode.compute_ps) / 1e6;
    std::string picks;
    for (std::size_t si = 0; si < dsh->transport.size(); ++si)
      picks += fmt::format("{}{}B={}", si ? ";" : "", cfg.decode.allreduces[si], dsh->transport[si]);
    j["row"]["transport"] = "decode";
    // The report's variant "drop read modes when ranks span quadrants" is a policy of its own.
    j["row"]["selection"] = sw::to_string(cfg.decode.selection) +
                            (cfg.decode.drop_reads_when_crossing && cfg.decode.selection != sw::Selection::ladder &&
                                     cfg.decode.selection != sw::Selection::fabric_class
                                 ? "-no-reads"
                                 : "");
    j["row"]["picks"] = picks;
    j["row"]["round_us"] = S.mean_us;
    j["decode"] = {{"selection", sw::to_string(cfg.decode.selection)},
                   {"picks", picks},
                   {"race", dsh->race_log},
                   {"selection_end_us", dsh->selection_end_ps / 1e6},
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
        sw::to_string(cfg.decode.selection), picks, dsh->selection_end_ps / 1e9, S.ops, S.mean_us, S.p50_us, S.p99_us,
        S.max_us, compute_us, S.mean_us - compute_us);
    for (const auto& l : dsh->race_log) res.summary += "  race " + l + "\n";
    return res;
  }
  if (sched)
    res.summary =
        fmt::format("#  {:>12} {:>12} {:>6} {:>6} {:>12} {:>10} {:>10} {:>8}\n", "size", "count", "type", "redop",
                    "time(us)", "algbw", "busbw", "correct") +
        fmt::format("   {:>12} {:>12} {:>6} {:>6} {:>12.2f} {:>10.2f} {:>10.2f} {:>8}\n", row.size_bytes, row.count,
                    "float", redop(sched->op), row.time_us, row.algbw_GBps, row.busbw_GBps,
                    verify ? (res.correct ? "true" : "false") : "n/a") +
        rep.summary + (res.first_wrong.empty() ? "" : "  wrong result: " + res.first_wrong + "\n");
  res.summary += fmt::format(
      "  {} ops in {:.3f} s simulated ({} samples: ops x GPUs)\n"
      "  per-GPU time per op: mean {:.2f} us  p50 {:.2f} us  p99 {:.2f} us  max {:.2f} us  ops > 1 ms: {}\n"
      "  group spans {} quadrant(s), a read target degraded {:.1f} % of the time (steady state); stalled reads {} "
      "({:.1f} ms), ordering drains {}\n",
      S.ops, res.simulated_s, S.samples, S.mean_us, S.p50_us, S.p99_us, S.max_us, S.ops_over_1ms, uq.size(),
      100 * degraded, st.stalled_reads, st.read_stall_ps / 1e9, st.drains);
  return res;
}

}  // namespace fabricsim::sim
