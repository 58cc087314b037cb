#include "platform/sim/run_kind.h"
#include "platform/cli/bench.h"

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <stdexcept>

#include "models/link/core/link_engine.h"
#include "platform/cli/signals.h"
#include "platform/config/link_config.h"
#include "platform/config/yaml_config.h"
#include "platform/fabric/fabric_config.h"
#include "platform/report/json_text.h"

namespace fs = std::filesystem;

namespace fabricsim::cli {

namespace {

struct Sample {
  double wall_s = 0, cpu_s = 0;
  long max_rss_kb = 0;
  std::uint64_t transmissions = 0;
};

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream os;
  os << in.rdbuf();
  return os.str();
}

// An interrupt (SIGINT / SIGTERM / SIGHUP) while bench times its runs: the
// handler stops the child being timed (kill is async-signal-safe) and records
// the signal; bench then removes its temporary folder, says so and exits
// 128 + signal (the child was left running, its folder behind).
volatile std::sig_atomic_t g_bench_signal = 0;
volatile pid_t g_bench_child = 0;
void on_bench_signal(int sig) {
  if (!g_bench_signal) g_bench_signal = sig;
  if (g_bench_child > 0) kill(g_bench_child, SIGTERM);
}
struct Interrupted : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// A child run that failed, with the exit status bench ends with: 2 when the
// child found bad input (it said why), or when the other binary wrote no
// readable result.json (not a fabricsim); else 3.
struct ChildFailure : std::runtime_error {
  int exit_status;
  ChildFailure(const std::string& what, int status) : std::runtime_error(what), exit_status(status) {}
};

// One child `BIN run FABRIC --set ... --quiet --out OUT`, timed from fork to exit.
Sample run_once(const std::string& bin, const BenchArgs& a, const fs::path& out, bool link_pair) {
  std::vector<std::string> args{bin, "run", a.fabric};
  for (const auto& s : a.sets) {
    args.push_back("--set");
    args.push_back(s);
  }
  args.insert(args.end(), {"--quiet", "--out", out.string()});
  // Each repeat starts from an empty folder: a child that exits 0 without
  // writing must not be timed against the previous repeat's result.json.
  std::error_code ec;
  fs::remove_all(out, ec);
  std::vector<char*> argv;
  for (auto& s : args) argv.push_back(s.data());
  argv.push_back(nullptr);

  const auto t0 = std::chrono::steady_clock::now();
  const pid_t pid = fork();
  if (pid < 0) throw std::runtime_error("bench: fork failed");
  if (pid == 0) {
    execv(argv[0], argv.data());
    std::perror(("bench: cannot execute " + bin).c_str());
    _exit(127);
  }
  g_bench_child = pid;
  if (g_bench_signal) kill(pid, SIGTERM);  // the signal came between fork and here
  int status = 0;
  rusage ru{};
  pid_t w;
  while ((w = wait4(pid, &status, 0, &ru)) < 0 && errno == EINTR) {
  }
  g_bench_child = 0;
  if (w != pid) throw std::runtime_error("bench: wait4 failed");
  if (g_bench_signal) throw Interrupted("interrupted");
  Sample s;
  s.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  s.cpu_s = ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
  s.max_rss_kb = ru.ru_maxrss;
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    const int child = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    throw ChildFailure(fmt::format("bench: `{} run {}` failed (exit status {})", bin, a.fabric, child),
                       child == 2 ? 2 : 3);
  }
  try {
    const auto j = nlohmann::json::parse(slurp(out / "result.json"));
    s.transmissions = link_pair ? j.at("link").at("transmissions").get<std::uint64_t>()
                                : j.at("fabric").at("transmissions").get<std::uint64_t>();
  } catch (const nlohmann::json::exception& e) {
    throw ChildFailure(fmt::format("bench: `{} run {}` exited 0 but its {}/result.json is not a fabricsim result "
                                   "({}): is {} a fabricsim binary?",
                                   bin, a.fabric, out.string(), e.what(), bin),
                       2);
  }
  return s;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

struct Summary {
  double wall_s, cpu_s;
  long max_rss_kb;
  std::uint64_t transmissions;
};

Summary summarize(const std::vector<Sample>& v) {
  std::vector<double> w, c;
  long rss = 0;
  for (const auto& s : v) {
    w.push_back(s.wall_s);
    c.push_back(s.cpu_s);
    rss = std::max(rss, s.max_rss_kb);
  }
  return {median(w), median(c), rss, v.front().transmissions};
}

void print_summary(const std::string& label, const Summary& s) {
  std::cout << fmt::format(
      "{}: median {:.3f} s wall, {:.3f} s CPU; {} flit transmissions: {:.2f} M/s per "
      "wall-second, {:.2f} M/s per CPU-second; peak RSS {:.1f} MB\n",
      label, s.wall_s, s.cpu_s, s.transmissions, s.transmissions / s.wall_s / 1e6, s.transmissions / s.cpu_s / 1e6,
      s.max_rss_kb / 1024.0);
}

// result.json without its "run" block: the run's identity names the program
// (version, build id), which differs between two builds by design.
std::string results_of(const fs::path& f) {
  const std::string text = slurp(f);
  auto j = nlohmann::ordered_json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) return text;
  j.erase("run");
  return report::json_text(j);
}

// Outputs of the two binaries' runs: "" if identical, else the first differing
// file (result.json compared without the run identity, the tables byte for byte).
std::string first_difference(const fs::path& x, const fs::path& y) {
  for (const char* f : {"result.json", "collectives.csv", "links.csv"}) {
    const bool ex = fs::exists(x / f), ey = fs::exists(y / f);
    if (ex != ey) return f;
    if (!ex) continue;
    const bool same = std::string(f) == "result.json" ? results_of(x / f) == results_of(y / f)
                                                      : slurp(x / f) == slurp(y / f);
    if (!same) return f;
  }
  return "";
}

// The bare link-engine loop (no SystemC, no process start) on the run's configuration.
void bare_engine_loop(const config::LinkExperimentConfig& cfg) {
  const auto t0 = std::chrono::steady_clock::now();
  link::LinkEngine e(cfg.link, link::make_policy(cfg.link.policy_name, cfg.link.fec_menu, cfg.link.policy), cfg.seed,
                     cfg.link_id);
  e.set_record_times(false);
  for (std::uint64_t i = 0; i < cfg.traffic.flits; ++i) e.offer(cfg.traffic.start_ps + i * cfg.traffic.period_ps);
  e.run_to_completion();
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::cout << fmt::format(
      "bare link-engine loop (this process, no SystemC): {} flit transmissions in {:.3f} s: "
      "{:.2f} M/s\n",
      e.stats().transmissions, wall, e.stats().transmissions / wall / 1e6);
}

}  // namespace

int run_bench(const BenchArgs& a) {
  // Validate in this process first: bad input is exit 2 with nothing run.
  const auto doc = config::load_with_overrides(a.fabric, a.sets);
  const std::string kind = fabric::fabric_kind(*doc);
  const sim::RunKind& rk = sim::run_kind(kind);
  if (!rk.counts_flits)
    throw config::ConfigError(a.fabric + ": key 'fabric.kind': bench counts flit transmissions; a " + kind +
                              " fabric has none (time it with /usr/bin/time fabricsim run, docs/performance.md)");
  const bool link_pair = rk.family == sim::RunKind::Family::link_pair;
  config::LinkExperimentConfig lcfg;
  if (link_pair)
    lcfg = config::parse_link_experiment(config::root_section(doc));
  else if (rk.parse)
    rk.parse(doc);  // a fabric: everything `run` rejects before simulating (the runs would fail one by one)
  std::error_code fe;
  if (!a.against.empty() && (access(a.against.c_str(), X_OK) != 0 || !fs::is_regular_file(a.against, fe)))
    throw config::ConfigError("--against: '" + a.against + "' is not an executable file");

  std::string cmd = "fabricsim run " + a.fabric;
  for (const auto& s : a.sets) cmd += " --set " + s;
  std::cout << fmt::format("bench: `{} --quiet`, {} run(s) per binary{}\n", cmd, a.repeat,
                           a.against.empty() ? "" : ", interleaved with " + a.against);

  char tmpl[] = "/tmp/fabricsim-bench.XXXXXX";
  if (!mkdtemp(tmpl)) throw std::runtime_error("bench: cannot create a temporary directory");
  const fs::path tmp(tmpl);
  std::vector<Sample> mine, theirs;
  std::string differs;
  int rc = 0;
  install_interrupt_handler(on_bench_signal);
  try {
    for (unsigned r = 0; r < a.repeat; ++r) {
      if (!a.against.empty()) {
        theirs.push_back(run_once(a.against, a, tmp / "against", link_pair));
        std::cout << fmt::format("  run {} against: {:.3f} s wall, {:.3f} s CPU\n", r + 1, theirs.back().wall_s,
                                 theirs.back().cpu_s);
      }
      mine.push_back(run_once(a.self_exe, a, tmp / "this", link_pair));
      std::cout << fmt::format("  run {} this:    {:.3f} s wall, {:.3f} s CPU\n", r + 1, mine.back().wall_s,
                               mine.back().cpu_s);
      if (!a.against.empty() && differs.empty()) differs = first_difference(tmp / "this", tmp / "against");
    }
  } catch (const Interrupted&) {  // reported below
  } catch (const ChildFailure& e) {
    if (!g_bench_signal) {  // (a child stopped by the interrupt is reported below)
      std::cerr << "error: " << e.what() << "\n";
      rc = e.exit_status;
    }
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    rc = 3;
  }
  std::error_code ec;
  fs::remove_all(tmp, ec);
  if (g_bench_signal) {
    const int sig = g_bench_signal;
    std::cerr << fmt::format(
        "interrupted ({}): bench stopped; the run it was timing was stopped and {} removed; "
        "nothing measured\n",
        sig == SIGINT    ? "SIGINT"
        : sig == SIGTERM ? "SIGTERM"
                         : "SIGHUP",
        tmp.string());
    return 128 + sig;
  }
  if (rc) return rc;

  const Summary s = summarize(mine);
  print_summary("this binary", s);
  if (!a.against.empty()) {
    const Summary o = summarize(theirs);
    print_summary("against    ", o);
    std::cout << fmt::format("ratio (against / this): {:.2f}x wall, {:.2f}x CPU; outputs {}\n", o.wall_s / s.wall_s,
                             o.cpu_s / s.cpu_s, differs.empty() ? "byte-identical" : "DIFFER (" + differs + ")");
  }
  if (link_pair) bare_engine_loop(lcfg);
  return 0;
}

}  // namespace fabricsim::cli
