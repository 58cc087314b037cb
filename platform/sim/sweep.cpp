#include "platform/sim/sweep.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "models/link/core/policy.h"
#include "platform/config/link_config.h"
#include "platform/config/yaml_config.h"
#include "platform/fabric/fabric_config.h"
#include "platform/fabric/host_config.h"
#include "platform/report/files.h"
#include "platform/stats/summary.h"

extern char** environ;

namespace fabricsim::sim {

namespace fs = std::filesystem;
using report::read_file;
using report::write_atomic;

namespace {
const std::vector<std::string> kLinkColumns{"policy",        "seed",          "goodput_gbps",      "p99_us",
                                            "replayed_flits", "fec_bytes",     "control_bytes",     "terminal_failures",
                                            "first_attempt_errors", "delivered_flits"};
const std::vector<std::string> kLinkMetrics{"goodput_gbps",  "p99_us",           "replayed_flits",       "fec_bytes",
                                            "control_bytes", "terminal_failures", "first_attempt_errors", "delivered_flits"};
const std::vector<std::string> kFabricColumns{"ranks", "size_bytes", "policy", "seed", "time_us", "replayed_flits", "fec_bytes"};
const std::vector<std::string> kFabricMetrics{"time_us", "replayed_flits", "fec_bytes"};
// PCIe host cells (host_run.cpp): the report's per-operation table (host-bridge.md §4, §7).
const std::vector<std::string> kHostColumns{"group", "transport", "size_bytes", "ops", "mean_us",
                                            "p50_us", "p99_us", "max_us", "ops_over_1ms"};
const std::vector<std::string> kHostRowKeys{"group",  "transport", "size_bytes", "seed",         "ops",
                                            "mean_us", "p50_us",    "p99_us",     "max_us",       "ops_over_1ms",
                                            "stalled_reads", "drains", "selection", "picks", "round_us"};
const std::vector<std::string> kHostMetrics{"mean_us", "p50_us", "p99_us", "max_us", "ops_over_1ms"};

std::vector<std::uint64_t> read_seeds(config::Section& s, const std::string& key, bool required) {
  std::vector<std::uint64_t> out;
  if (!s.has(key)) {
    if (required) s.fail(key, "required section is missing");
    s.child_or_empty(key).finish();
    return out;
  }
  config::Section seeds = s.child(key);
  const std::uint64_t first = seeds.integer("first", 1, 0, ~0ULL >> 1);
  const std::uint64_t count = seeds.integer("count", 1, 1, 100000);
  seeds.finish();
  for (std::uint64_t i = 0; i < count; ++i) out.push_back(first + i);
  return out;
}
}  // namespace

Study load_study(const std::string& path) {
  auto doc = std::make_shared<config::Document>(config::load_document(path));
  Study st;
  st.file = path;
  config::Section root = config::root_section(doc);
  config::Section s = root.child("study");
  st.name = s.required_string("name");
  const std::string fabric = s.required_string("fabric");
  st.fabric = (fs::path(path).parent_path() / fabric).lexically_normal().string();
  if (!fs::exists(st.fabric)) s.fail("fabric", fmt::format("fabric file '{}' not found", st.fabric));
  {
    const auto fdoc = config::load_document(st.fabric);
    st.fabric_kind = fabric::fabric_kind(fdoc);
  }
  const bool link_pair = st.fabric_kind == "link-pair";
  const bool host = st.fabric_kind == "pcie-host";
  if (host && s.has("policies")) s.fail("policies", "a pcie-host fabric has no link policy; drop 'policies'");
  st.policies = host ? std::vector<std::string>{"none"} : s.strings("policies", {"preface"});
  if (st.policies.empty()) s.fail("policies", "at least one policy is required");
  for (const auto& p : st.policies) {
    if (host) break;
    const auto& names = link::policy_names();
    if (std::find(names.begin(), names.end(), p) == names.end())
      s.fail("policies", fmt::format("unknown policy '{}'", p));
  }
  std::set<std::string> uniq(st.policies.begin(), st.policies.end());
  if (uniq.size() != st.policies.size()) s.fail("policies", "a policy is listed twice");
  st.seeds = read_seeds(s, "seeds", !host);
  if (st.seeds.empty()) st.seeds = {1};
  st.common = s.assignments("set");
  st.explicit_columns = s.has("columns");
  st.columns = s.strings("columns", link_pair ? kLinkColumns : host ? kHostColumns : kFabricColumns);
  // The row keys each kind of run writes into result.json (link_experiment.cpp, fabric_run.cpp, host_run.cpp).
  const std::vector<std::string> row_keys =
      link_pair ? kLinkColumns
      : host    ? kHostRowKeys
                : std::vector<std::string>{"ranks",     "size_bytes",     "policy",    "seed",       "time_us",
                                           "replayed_flits", "fec_bytes", "terminal_failures", "algbw_GBps", "busbw_GBps"};
  for (const auto& c : st.columns)
    if (std::find(row_keys.begin(), row_keys.end(), c) == row_keys.end()) {
      std::string known;
      for (const auto& k : row_keys) known += (known.empty() ? "" : ", ") + k;
      s.fail("columns", fmt::format("'{}' is not a result column of a {} run (known: {})", c, st.fabric_kind, known));
    }
  st.metrics = s.strings("metrics", link_pair ? kLinkMetrics : host ? kHostMetrics : kFabricMetrics);
  for (const auto& m : st.metrics)
    if (std::find(st.columns.begin(), st.columns.end(), m) == st.columns.end())
      s.fail("metrics", fmt::format("metric '{}' is not one of the columns", m));
  for (const auto& need : {"policy", "seed"})
    if (!host && std::find(st.columns.begin(), st.columns.end(), need) == st.columns.end())
      s.fail("columns", fmt::format("columns must include '{}'", need));

  std::set<std::string> names;
  std::vector<StudyVariant> declared;
  for (auto& v : s.list("variants")) {
    StudyVariant sv;
    sv.name = v.required_string("name");
    if (!names.insert(sv.name).second) v.fail("name", fmt::format("variant '{}' is listed twice", sv.name));
    v.string("description", "");
    sv.assignments = v.assignments("set");
    sv.seeds = read_seeds(v, "seeds", false);
    v.finish();
    declared.push_back(sv);
  }
  st.declared_variants = !declared.empty();
  if (declared.empty()) declared.push_back({"", {}, {}});
  // grid: key.path: [v1, v2, ...] -> cartesian product with the variants.
  std::vector<std::pair<std::string, std::vector<std::string>>> grid;
  {
    const YAML::Node g = doc->root["study"]["grid"];
    if (g && !g.IsNull()) {
      if (!g.IsMap()) s.fail("grid", "expected a map of key.path: [values]");
      for (auto it = g.begin(); it != g.end(); ++it) {
        std::vector<std::string> vals;
        if (!it->second.IsSequence() || it->second.size() == 0)
          s.fail("grid", fmt::format("'{}' must be a non-empty list", it->first.Scalar()));
        for (std::size_t i = 0; i < it->second.size(); ++i) vals.push_back(it->second[i].Scalar());
        grid.emplace_back(it->first.Scalar(), vals);
      }
    }
    s.mark_used("grid");
  }
  s.finish();
  root.finish();
  std::vector<StudyVariant> expanded = declared;
  for (const auto& [key, vals] : grid) {
    std::vector<StudyVariant> next;
    for (const auto& v : expanded)
      for (const auto& x : vals) {
        StudyVariant nv = v;
        nv.assignments.push_back(key + "=" + x);
        nv.name += (nv.name.empty() ? "" : ";") + key + "=" + x;  // e.g. "8MiB;fabric.accelerators=16" (CSV-safe)
        next.push_back(nv);
      }
    expanded.swap(next);
  }
  st.variants = expanded;

  // Validate the fabric under every variant and policy before anything runs.
  for (const auto& v : st.variants) {
    for (const auto& p : st.policies) {
      std::vector<std::string> a = st.common;
      a.insert(a.end(), v.assignments.begin(), v.assignments.end());
      if (!host) a.push_back(fabric::policy_key(st.fabric_kind) + "=" + p);
      try {
        const auto fdoc = config::load_with_overrides(st.fabric, a);
        if (link_pair) config::parse_link_experiment(config::root_section(fdoc));
        else if (host) fabric::parse_host(config::root_section(fdoc));
        else fabric::parse_fabric(config::root_section(fdoc));
      } catch (const config::ConfigError& e) {
        throw config::ConfigError(std::string(e.what()) + (v.name.empty() ? "" : " (variant '" + v.name + "')") +
                                  " [study " + path + "]");
      }
    }
  }
  return st;
}

namespace {

struct Point {
  std::string variant;
  std::string policy;
  std::uint64_t seed;
  std::string dir;
  std::vector<std::string> args;
  std::size_t cell = 0;
  std::string tag;  // what else the point's result depends on: fabric (and schedule) file hashes
};

std::string cell_text(const nlohmann::json& v) {
  if (v.is_null()) return "";  // e.g. no completion time after a terminal failure
  if (v.is_string()) {
    // RFC 4180: a field holding a comma, quote or newline is quoted, quotes doubled ("0,4,8,12").
    const std::string t = v.get<std::string>();
    if (t.find_first_of(",\"\n") == std::string::npos) return t;
    std::string q = "\"";
    for (char c : t) q += c == '"' ? std::string("\"\"") : std::string(1, c);
    return q + "\"";
  }
  if (v.is_number_unsigned() || v.is_number_integer()) return v.dump();
  if (v.is_boolean()) return v.get<bool>() ? "true" : "false";
  if (v.is_number_float()) return fmt::format("{:.4f}", v.get<double>());
  return v.dump();
}

std::string join_args(const std::vector<std::string>& a) {
  std::string s;
  for (const auto& x : a) s += x + "\n";
  return s;
}

pid_t spawn_point(const std::string& exe, const Point& pt) {
  std::vector<std::string> argv{exe};
  argv.insert(argv.end(), pt.args.begin(), pt.args.end());
  std::vector<char*> cargv;
  for (auto& a : argv) cargv.push_back(a.data());
  cargv.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  const std::string log = (fs::path(pt.dir) / "run.log").string();
  posix_spawn_file_actions_addopen(&fa, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&fa, 1, 2);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  pid_t pid = -1;
  const int rc = posix_spawn(&pid, exe.c_str(), &fa, nullptr, cargv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) throw std::runtime_error(fmt::format("cannot start {}: {}", exe, std::strerror(rc)));
  return pid;
}


}  // namespace

int run_sweep(const Study& st, const SweepOptions& opt) {
  const fs::path out(opt.out_dir);
  // A point is reused only if its arguments AND the fabric file's bytes are
  // unchanged (FNV-1a 64 of the file).
  std::string fabric_text;
  read_file(st.fabric, fabric_text);
  std::uint64_t h = 1469598103934665603ULL;
  for (unsigned char c : fabric_text) h = (h ^ c) * 1099511628211ULL;
  const std::string fabric_tag = fmt::format("fabric-fnv1a64 {:016x}\n", h);
  std::vector<Point> points;
  for (std::size_t vi = 0; vi < st.variants.size(); ++vi) {
    const auto& v = st.variants[vi];
    const auto& seeds = v.seeds.empty() ? st.seeds : v.seeds;
    for (const auto& p : st.policies)
      for (auto s : seeds) {
        Point pt{v.name, p, s, "", {}, 0, ""};
        pt.cell = vi;
        fs::path d = out / "points";
        if (st.variants.size() > 1) {
          std::string tag = v.name;  // a file-name-safe copy ("400Gb/s" -> "400Gb_s")
          for (char& ch : tag)
            if (ch == '/' || ch == '\\' || ch == ' ') ch = '_';
          d /= fmt::format("c{:03d}{}", vi, tag.empty() ? "" : "-" + tag);
        }
        if (st.fabric_kind != "pcie-host") d /= p;
        d /= fmt::format("s{}", s);
        pt.dir = d.string();
        pt.args = {"run", st.fabric, "--seed", std::to_string(s), "--quiet", "--out", pt.dir};
        if (st.fabric_kind != "pcie-host") pt.args.insert(pt.args.begin() + 4, {"--policy", p});
        for (const auto& a : st.common) pt.args.insert(pt.args.end(), {"--set", a});
        for (const auto& a : v.assignments) pt.args.insert(pt.args.end(), {"--set", a});
        points.push_back(pt);
      }
  }

  // A user's schedule (workload.schedule, from the fabric file or a --set)
  // is an input too: its bytes join the point's tag, so an edited schedule
  // re-runs its points. Resolved as the fabric parser does: beside the
  // fabric file, else in the current folder.
  std::string fabric_schedule;
  try {
    const YAML::Node fy = YAML::Load(fabric_text);
    if (fy["workload"] && fy["workload"]["schedule"]) fabric_schedule = fy["workload"]["schedule"].as<std::string>();
  } catch (const std::exception&) {
  }
  auto schedule_tag = [&](const std::vector<std::string>& args) {
    std::string v = fabric_schedule;
    for (const auto& a : args)
      if (a.rfind("workload.schedule=", 0) == 0) v = a.substr(18);
    if (v.empty()) return std::string();
    fs::path p = fs::path(v).is_absolute() ? fs::path(v) : fs::path(st.fabric).parent_path() / v;
    if (!fs::exists(p)) p = v;
    std::string text;
    if (!read_file(p, text)) return fmt::format("schedule {} unreadable\n", v);
    std::uint64_t hs = 1469598103934665603ULL;
    for (unsigned char c : text) hs = (hs ^ c) * 1099511628211ULL;
    return fmt::format("schedule-fnv1a64 {:016x}\n", hs);
  };
  for (auto& pt : points) pt.tag = fabric_tag + schedule_tag(pt.args);

  // Resumable: reuse a point whose result.json was made with the same arguments.
  std::vector<std::size_t> todo;
  for (std::size_t i = 0; i < points.size(); ++i) {
    std::string prev;
    const fs::path d(points[i].dir);
    if (fs::exists(d / "result.json") && read_file(d / "args.txt", prev) &&
        prev == join_args(points[i].args) + points[i].tag)
      continue;
    todo.push_back(i);
  }

  const bool tty = opt.progress && isatty(2);
  const auto t0 = std::chrono::steady_clock::now();
  std::size_t done = points.size() - todo.size(), next = 0, failed = 0;
  std::map<pid_t, std::size_t> running;
  std::string first_failure;
  auto progress = [&]() {
    if (!tty) return;
    const double el = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::fprintf(stderr, "\r[sweep %s] %zu/%zu points, %u jobs, %.0fs elapsed ", st.name.c_str(), done,
                 points.size(), opt.jobs, el);
    std::fflush(stderr);
  };
  progress();
  while (next < todo.size() || !running.empty()) {
    while (failed == 0 && next < todo.size() && running.size() < opt.jobs) {
      const Point& pt = points[todo[next]];
      fs::create_directories(pt.dir);
      fs::remove(fs::path(pt.dir) / "result.json");
      write_atomic(fs::path(pt.dir) / "args.txt", join_args(pt.args) + pt.tag);
      running[spawn_point(opt.self_exe, pt)] = todo[next];
      ++next;
    }
    if (running.empty()) break;
    int status = 0;
    const pid_t pid = waitpid(-1, &status, 0);
    if (pid < 0) break;
    auto it = running.find(pid);
    if (it == running.end()) continue;
    const Point& pt = points[it->second];
    running.erase(it);
    if (!(WIFEXITED(status) && WEXITSTATUS(status) == 0)) {
      ++failed;
      if (first_failure.empty()) {
        std::string log;
        read_file(fs::path(pt.dir) / "run.log", log);
        first_failure = fmt::format("point {}{}/s{} failed (exit {}): {}", pt.variant.empty() ? "" : pt.variant + "/",
                                    pt.policy, pt.seed, WIFEXITED(status) ? WEXITSTATUS(status) : -1, log);
      }
    }
    ++done;
    progress();
  }
  if (tty) std::fprintf(stderr, "\n");
  if (failed) {
    std::cerr << "error: " << first_failure << (first_failure.empty() || first_failure.back() != '\n' ? "\n" : "");
    std::cerr << fmt::format("error: {} point(s) failed; results.csv and summary.json not written\n", failed);
    return 3;
  }

  // Collect: one CSV row per point, columns from result.json "row".
  const bool variant_col = st.variants.size() > 1 && !st.explicit_columns &&
                           std::find(st.columns.begin(), st.columns.end(), "variant") == st.columns.end();
  std::ostringstream csv;
  if (variant_col) csv << "variant,";
  for (std::size_t i = 0; i < st.columns.size(); ++i) csv << (i ? "," : "") << st.columns[i];
  csv << "\n";
  std::vector<std::string> axes;
  for (const auto& c : st.columns)
    if (c != "policy" && c != "seed" && c != "variant" &&
        std::find(st.metrics.begin(), st.metrics.end(), c) == st.metrics.end())
      axes.push_back(c);
  // cell key (variant + axis values) -> samples, in first-seen order
  std::vector<std::pair<std::string, nlohmann::ordered_json>> cell_keys;
  std::map<std::string, std::vector<stats::Sample>> cells;
  std::map<std::string, nlohmann::ordered_json> incomplete;  // points without a metric (terminal failure)
  nlohmann::ordered_json estimates = nlohmann::ordered_json::array();
  for (const auto& pt : points) {
    std::string text;
    if (!read_file(fs::path(pt.dir) / "result.json", text)) {
      std::cerr << "error: missing " << pt.dir << "/result.json\n";
      return 3;
    }
    const auto j = nlohmann::json::parse(text);
    const auto& row = j.at("row");
    if (variant_col) csv << cell_text(nlohmann::json(pt.variant)) << ",";
    for (std::size_t i = 0; i < st.columns.size(); ++i) {
      const auto& c = st.columns[i];
      if (!row.contains(c)) {
        std::cerr << fmt::format("error: column '{}' is not in {}/result.json (row keys: {})\n", c, pt.dir, row.dump());
        return 3;
      }
      csv << (i ? "," : "") << cell_text(row.at(c));
    }
    csv << "\n";
    // One cell per study variant (declared x grid) and value of the axis
    // columns, so a grid key that is not a column still separates cells.
    nlohmann::ordered_json key;
    if (!pt.variant.empty()) key["variant"] = pt.variant;
    for (const auto& a : axes) key[a] = row.at(a);
    const std::string k = std::to_string(pt.cell) + key.dump();
    if (!cells.count(k)) cell_keys.emplace_back(k, key);
    stats::Sample s{pt.policy, pt.seed, {}};
    bool complete = true;
    for (const auto& m : st.metrics) {
      if (row.at(m).is_null()) complete = false;
      else s.metrics[m] = row.at(m).get<double>();
    }
    if (complete) {
      cells[k].push_back(s);
    } else {
      incomplete[k].push_back({{"policy", pt.policy}, {"seed", pt.seed}, {"status", j.value("status", "")}});
      if (!cells.count(k)) cells[k] = {};
    }
    if (j.contains("channel")) {
      const auto& ch = j.at("channel");
      nlohmann::ordered_json e;
      if (st.declared_variants) e["variant"] = pt.variant;
      e["policy"] = pt.policy;
      e["seed"] = pt.seed;
      e["steps"] = ch.at("steps");
      e["p_good_to_bad_estimate"] = ch.at("p_good_to_bad_estimate");
      e["p_bad_to_good_estimate"] = ch.at("p_bad_to_good_estimate");
      e["order_violations"] = j.at("sink").at("order_violations");
      e["missing"] = j.at("sink").at("missing");
      estimates.push_back(e);
    }
  }
  nlohmann::ordered_json summary;
  summary["study"] = st.name;
  summary["fabric"] = st.fabric;
  summary["points"] = points.size();
  summary["metrics"] = st.metrics;
  summary["ci"] = "per-group means: Student t 95 %; paired deltas (a - b, paired by seed): normal approximation 95 %";
  // Pair by seed: a seed enters a cell's statistics only if every policy has
  // a complete point for it (a terminal failure leaves no completion time).
  auto summarize_cell = [&](const std::string& k, nlohmann::ordered_json& into) {
    std::map<std::uint64_t, std::size_t> count;
    for (const auto& smp : cells[k]) ++count[smp.seed];
    std::vector<stats::Sample> paired;
    nlohmann::ordered_json dropped = nlohmann::ordered_json::array();
    for (const auto& smp : cells[k]) {
      if (count[smp.seed] == st.policies.size()) paired.push_back(smp);
      else dropped.push_back({{"policy", smp.group}, {"seed", smp.seed}});
    }
    if (incomplete.count(k)) {
      into["incomplete_points"] = incomplete[k];
      into["unpaired_points_dropped"] = dropped;
    }
    if (paired.empty()) {
      into["groups"] = nullptr;
      into["paired_deltas"] = nullptr;
      return;
    }
    auto s = stats::summarize(paired, st.metrics, st.policies);
    into["groups"] = s["groups"];
    into["paired_deltas"] = s["paired_deltas"];
  };
  if (cell_keys.size() == 1 && st.variants.size() == 1 && st.variants[0].name.empty()) {
    summarize_cell(cell_keys.front().first, summary);
  } else {
    summary["cells"] = nlohmann::ordered_json::array();
    for (const auto& [k, key] : cell_keys) {
      nlohmann::ordered_json cj = key;
      summarize_cell(k, cj);
      summary["cells"].push_back(cj);
    }
  }
  if (!estimates.empty()) summary["channel_estimates"] = estimates;
  write_atomic(out / "results.csv", csv.str());
  write_atomic(out / "summary.json", summary.dump(2) + "\n");
  return 0;
}

}  // namespace fabricsim::sim
