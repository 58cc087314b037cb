#include "platform/sim/schedule_report.h"

#include <fmt/format.h>

#include <filesystem>
#include <set>
#include <sstream>
#include <tuple>

namespace fabricsim::sim {

std::string schedule_label(const sw::Schedule& s, const std::string& path) {
  std::string n = s.name;
  if (n.empty()) n = std::filesystem::path(path).stem().string();
  for (char& ch : n)
    if (ch == ',' || ch == '"' || ch == '\n' || ch == '\r') ch = '_';
  return "schedule:" + n;
}

std::string schedule_warnings(const sw::Schedule& s, std::uint64_t T) {
  std::string out;
  if ((s.min_bytes && T < s.min_bytes) || (s.max_bytes && T > s.max_bytes))
    out += fmt::format("warning: size {} B lies outside the schedule's [minBytes, maxBytes] = [{}, {}]\n", T,
                       s.min_bytes, s.max_bytes ? std::to_string(s.max_bytes) : std::string("-"));
  constexpr std::size_t kShown = 3;
  for (std::size_t i = 0; i < s.warnings.size() && i < kShown; ++i) out += "warning: " + s.warnings[i] + "\n";
  if (s.warnings.size() > kShown)
    out += fmt::format("warning: ... and {} more like these in {}\n", s.warnings.size() - kShown, s.file);
  return out;
}

std::string schedule_summary(const sw::Schedule& s, const std::string& path, std::uint64_t bytes,
                             std::uint64_t piece_bytes) {
  std::uint64_t tbs = 0, steps = 0, messages = 0;
  for (const auto& G : s.gpus) {
    tbs += G.tbs.size();
    for (const auto& T : G.tbs) {
      steps += T.steps.size();
      for (const auto& P : T.steps) messages += sw::sends(P.type) ? 1 : 0;
    }
  }
  return fmt::format(
      "schedule {} ({}, {}): {} on {} ranks, {} threadblocks, {} steps, {} messages; at {} B each rank needs {} B of "
      "buffers and staging\n",
      s.name.empty() ? "(unnamed)" : s.name, path, s.format, s.coll, s.ngpus, tbs, steps, messages, bytes,
      sw::layout_schedule(s, bytes, piece_bytes).memory_bytes);
}

ScheduleReport schedule_report(const sw::Schedule& s, const sw::ScheduleLayout& layout,
                               const std::vector<sw::RankRecords>& rec, std::uint64_t t0,
                               const std::vector<std::string>& accel, const std::string& file,
                               const std::string& label, report::TraceWriter* trace) {
  ScheduleReport out;
  auto us = [t0](std::uint64_t ps) {
    return fmt::format("{:.3f}", (static_cast<double>(ps) - static_cast<double>(t0)) / 1e6);
  };
  const auto path = sw::critical_path(s, rec);
  std::set<std::tuple<int, int, int>> on_path;
  for (const auto& p : path) on_path.insert({p.rank, p.tb, p.step});
  std::ostringstream sc, tc;
  sc << "rank,accelerator,threadblock,step,type,send,recv,channel,cnt,bytes,start_us,ready_us,end_us,wait_us,busy_us,"
        "landed_us,critical\n";
  tc << "rank,accelerator,threadblock,send,recv,channel,steps,bytes_sent,bytes_received,start_us,end_us,wait_us,busy_"
        "us\n";
  const std::uint64_t C = layout.chunk;
  for (int g = 0; g < s.ngpus; ++g) {
    const auto& G = s.gpus[g];
    const std::string& accn = accel[g];
    if (trace) trace->name_process(100 + g, fmt::format("schedule rank {} ({})", g, accn));
    for (std::size_t t = 0; t < G.tbs.size(); ++t) {
      const auto& T = G.tbs[t];
      const auto& rt = rec[g][t];
      std::uint64_t sent = 0, got = 0, wait = 0, busy = 0;
      if (trace)
        trace->name_thread(100 + g, static_cast<int>(t),
                           fmt::format("threadblock {} (send {} recv {} chan {})", t, T.send, T.recv, T.chan));
      for (std::size_t k = 0; k < T.steps.size(); ++k) {
        const auto& P = T.steps[k];
        const auto& r = rt[k];
        const std::uint64_t b = P.cnt * C;
        if (sw::sends(P.type)) sent += b;
        if (sw::receives(P.type)) got += b;
        wait += r.ready - r.start;
        busy += r.end - r.ready;
        const bool crit = on_path.count({g, static_cast<int>(t), static_cast<int>(k)}) > 0;
        sc << g << "," << accn << "," << t << "," << k << "," << sw::to_string(P.type) << "," << T.send << ","
           << T.recv << "," << T.chan << "," << P.cnt << "," << b << "," << us(r.start) << "," << us(r.ready) << ","
           << us(r.end) << "," << fmt::format("{:.3f}", (r.ready - r.start) / 1e6) << ","
           << fmt::format("{:.3f}", (r.end - r.ready) / 1e6) << "," << (sw::sends(P.type) ? us(r.landed) : "") << ","
           << (crit ? 1 : 0) << "\n";
        if (trace)
          trace->span(fmt::format("{} {}", k, sw::to_string(P.type)), crit ? "schedule,critical" : "schedule", 100 + g,
                      static_cast<int>(t), r.start, r.end - r.start,
                      {{"cnt", P.cnt}, {"bytes", b}, {"wait_us", (r.ready - r.start) / 1e6}, {"critical", crit}});
      }
      tc << g << "," << accn << "," << t << "," << T.send << "," << T.recv << "," << T.chan << "," << T.steps.size()
         << "," << sent << "," << got << "," << (rt.empty() ? us(t0) : us(rt.front().start)) << ","
         << (rt.empty() ? us(t0) : us(rt.back().end)) << "," << fmt::format("{:.3f}", wait / 1e6) << ","
         << fmt::format("{:.3f}", busy / 1e6) << "\n";
    }
  }
  out.steps_csv = sc.str();
  out.threadblocks_csv = tc.str();
  nlohmann::ordered_json cp = nlohmann::ordered_json::array();
  for (const auto& p : path) {
    const auto& r = rec[p.rank][p.tb][p.step];
    cp.push_back({{"rank", p.rank},
                  {"threadblock", p.tb},
                  {"step", p.step},
                  {"type", sw::to_string(s.gpus[p.rank].tbs[p.tb].steps[p.step].type)},
                  {"start_us", (static_cast<double>(r.start) - t0) / 1e6},
                  {"ready_us", (static_cast<double>(r.ready) - t0) / 1e6},
                  {"end_us", (static_cast<double>(r.end) - t0) / 1e6}});
  }
  std::string chain;
  for (std::size_t i = 0; i < cp.size(); ++i) {
    if (cp.size() > 12 && i == 6) {
      chain += fmt::format(" -> ... ({} more)", cp.size() - 12);
      i = cp.size() - 6;
    }
    chain += fmt::format("{}r{}.tb{}.s{}", i ? " -> " : "", cp[i]["rank"].get<int>(), cp[i]["threadblock"].get<int>(),
                         cp[i]["step"].get<int>());
  }
  // label is "schedule:<name>" (the algorithm column): say it once.
  out.summary = fmt::format("  {}: critical path of {} steps: {}\n", label, cp.size(), chain);
  out.json = {{"file", file}, {"name", s.name}, {"critical_path", cp}};
  return out;
}

}  // namespace fabricsim::sim
