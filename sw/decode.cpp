#include "sw/decode.h"

#include <fmt/format.h>

#include <algorithm>

#include "sw/transports.h"

namespace fabricsim::sw {

std::uint64_t timed_op(models::accelerator_api& a, const CollectiveSpec& spec, std::uint64_t barrier_ps) {
  a.barrier();
  a.reset_flags();
  a.barrier();
  const std::uint64_t t0 = a.now_ps();
  a.compute(barrier_ps);
  run_collective(a, spec);
  return a.now_ps() - t0;
}

namespace {

// A transport's spec as the run uses it (chunk, kernel barriers).
CollectiveSpec spec_of(const DecodeRun& run, const std::string& t, std::uint64_t bytes) {
  auto s = transport_spec(t, bytes, run.ranks);
  s.chunk_bytes = run.chunk_bytes;
  s.fabric_barriers = run.kernel_barriers;
  return s;
}

// Rank 0, after the race of AllReduce size `si`: per operation the slowest
// GPU's time of each candidate; pick by the policy's statistic and log
// "<bytes>B: cand=median/mean us(ops) ...".
void pick_from_race(DecodeState& sh, const DecodeSpec& D, std::size_t si, const std::vector<std::string>& cands,
                    int N) {
  const std::uint64_t bytes = D.allreduces[si];
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
  const auto by = D.selection == Selection::race_mean ? RaceBy::mean : RaceBy::median;
  sh.transport[si] = cands[race_pick(per_op, by)];
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

// The race of size `si` on this GPU: every candidate back to back for the race window.
void race(models::accelerator_api& a, DecodeState& sh, const DecodeRun& run, std::size_t si) {
  const DecodeSpec& D = run.spec;
  const int rank = a.rank(), N = run.ranks;
  std::vector<std::string> cands = D.candidates;
  if (run.crossing && D.drop_reads_when_crossing) cands = without_peer_reads(cands);
  if (rank == 0) sh.race.assign(cands.size(), std::vector<std::vector<std::uint64_t>>(N));
  for (std::size_t ci = 0; ci < cands.size(); ++ci) {
    a.barrier();
    const std::uint64_t start = a.now_ps();
    const auto spec = spec_of(run, cands[ci], D.allreduces[si]);
    while (true) {
      a.barrier();
      if (a.now_ps() >= start + D.race_window_ps) break;
      sh.race[ci][rank].push_back(timed_op(a, spec, run.barrier_ps));
    }
  }
  a.barrier();
  if (rank == 0) pick_from_race(sh, D, si, cands, N);
  a.barrier();
}

// Selection, once, identically on every GPU.
void select_transports(models::accelerator_api& a, DecodeState& sh, const DecodeRun& run) {
  const DecodeSpec& D = run.spec;
  for (std::size_t si = 0; si < D.allreduces.size(); ++si) {
    const std::uint64_t bytes = D.allreduces[si];
    if (D.selection == Selection::ladder) {
      sh.transport[si] = D.ladder.pick(bytes);
      continue;
    }
    if (D.selection == Selection::fabric_class) {
      sh.transport[si] = (run.crossing ? D.quadrant_crossing : D.switch_local).pick(bytes);
      continue;
    }
    race(a, sh, run, si);
  }
}

}  // namespace

void decode_program(models::accelerator_api& a, DecodeState& sh, const DecodeRun& run) {
  const DecodeSpec& D = run.spec;
  const int rank = a.rank();
  if (run.data) {
    float* in = reinterpret_cast<float*>(a.memory() + run.layout.in);
    for (std::uint64_t i = 0; i < run.layout.in_bytes / 4; ++i) in[i] = input_value(Op::allreduce, rank, i);
  }
  select_transports(a, sh, run);
  a.barrier();
  const std::uint64_t t_sel = a.now_ps();
  if (rank == 0) sh.selection_end_ps = t_sel;
  // Decode rounds.
  std::vector<CollectiveSpec> specs;
  for (std::size_t si = 0; si < D.allreduces.size(); ++si)
    specs.push_back(spec_of(run, sh.transport[si], D.allreduces[si]));
  for (std::uint64_t round = 0;; ++round) {
    a.barrier();
    if (run.max_rounds ? round >= run.max_rounds : a.now_ps() >= t_sel + run.cell_ps) break;
    const std::uint64_t r0 = a.now_ps();
    for (std::uint32_t layer = 0; layer < D.layers; ++layer)
      for (const auto& spec : specs) {
        a.compute(D.compute_ps);
        timed_op(a, spec, run.barrier_ps);
      }
    a.barrier();
    if (rank == 0) sh.round_ps.push_back(a.now_ps() - r0);
  }
}

}  // namespace fabricsim::sw
