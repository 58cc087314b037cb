// fabricsim: the command-line program (platform.md §4).
//   fabricsim run [FABRIC.yaml] [--set key.path=value]... [--seed N] [--policy P] [--out DIR]
//   fabricsim sweep STUDY.yaml [--jobs N] [--out DIR] [--fresh] [--shard I/N | --collect]
//   mpirun -np K fabricsim sweep STUDY.yaml [--out DIR]
//   fabricsim check FABRIC.yaml [--set key.path=value]... [--seed N] [--policy P] [--dot FILE|DIR]
//   fabricsim bench [FABRIC.yaml] [--set key.path=value]... [--repeat N] [--against BIN]
// Exit status: 0 success, 2 bad input (nothing written), 3 a run that could
// not finish (diagnosis on stderr), 128+N interrupted by signal N (130 for
// Ctrl-C), 1 anything else.
#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <systemc>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <new>
#include <regex>
#include <set>
#include <sstream>
#include <thread>

#include "platform/cli/bench.h"
#include "platform/cli/signals.h"
#include "platform/config/link_config.h"
#include "platform/config/rifl_config.h"
#include "platform/config/units.h"
#include "platform/config/yaml_config.h"
#include "platform/fabric/fabric_config.h"
#include "platform/fabric/fabric_graph.h"
#include "platform/fabric/host_config.h"
#include "platform/report/files.h"
#include "platform/report/identity.h"
#include "platform/report/json_text.h"
#include "platform/report/setup_progress.h"
#include "platform/report/trace.h"
#include "platform/sim/check.h"
#include "platform/sim/fabric_run.h"
#include "platform/sim/host_platform.h"
#include "platform/sim/host_run.h"
#include "platform/sim/link_experiment.h"
#include "platform/sim/rifl_experiment.h"
#include "platform/sim/run_kind.h"
#include "platform/sim/schedule_report.h"
#include "platform/sim/sweep.h"

#ifndef FABRICSIM_SOURCE_DIR
#define FABRICSIM_SOURCE_DIR "."
#endif

namespace fs = std::filesystem;
using namespace fabricsim;
using report::write_atomic;

// Debian's libsystemc prints its banner before sc_main runs unless this is set;
// a static initialiser runs before main().
static const bool kBannerOff = (setenv("SC_COPYRIGHT_MESSAGE", "DISABLE", 1), true);

namespace {

constexpr const char* kDefaultFabric = "topologies/ring8.yaml";

std::string resolve_default(const std::string& rel) {
  if (fs::exists(rel)) return rel;
  const fs::path p = fs::path(FABRICSIM_SOURCE_DIR) / rel;
  return fs::exists(p) ? p.string() : rel;
}

std::string self_exe(const char* argv0) {
  std::error_code ec;
  auto p = fs::read_symlink("/proc/self/exe", ec);
  return ec ? std::string(argv0) : p.string();
}

struct RunArgs {
  std::string fabric;
  std::vector<std::string> sets;
  std::string seed;  // validated by the config layer as a whole number (full 64-bit range)
  std::string policy;
  std::string out = "out/run";
  bool quiet = false;
  bool trace = false;
};

// --- a run's output folder ---------------------------------------------------
// Every file a run writes carries its identity (seed + config hash): result.json
// under "run", each CSV in a trailing run_id column, trace.json under
// "otherData.run". The outputs of a previous run in the same folder are removed
// before simulating, so nothing there can be mixed up with this run's.
const char* const kRunOutputs[] = {"result.json", "collectives.csv", "links.csv",
                                   "trace.json",  "steps.csv",       "threadblocks.csv"};

report::RunIdentity run_identity(const config::Document& doc, std::uint64_t seed) {
  std::vector<report::InputFile> inputs;
  for (const auto& [path, hash] : config::files_read()) inputs.push_back({path, hash});
  // The fabric file itself enters through its effective content (after overrides).
  auto it = std::find_if(inputs.begin(), inputs.end(), [&](const auto& f) { return f.path == doc.file; });
  if (it != inputs.end() && it != inputs.begin()) std::rotate(inputs.begin(), it, it + 1);
  YAML::Emitter e;
  e << doc.root;
  return report::make_run_identity(seed, e.c_str(), inputs);
}

// Ctrl-C / SIGTERM during a run: one line saying what was interrupted and what
// was kept, exit 128+N. Files are written with the signals blocked, so none is
// ever half-written.
char g_interrupt_msg[3][1024];  // SIGINT, SIGTERM, SIGHUP (the terminal closed)
std::size_t g_interrupt_len[3] = {0, 0, 0};

// The folders prepare_out created for --out (deepest first), as plain
// strings so that the signal handler can remove them: a run that stops before
// writing anything leaves no empty folder behind (rmdir keeps non-empty ones).
constexpr int kMaxCreatedDirs = 64;
char g_created_dirs[kMaxCreatedDirs][4096];
int g_created_count = 0;

void remove_created_empty_dirs() {  // async-signal-safe
  // Every one is tried: one that is missing (a creation that failed part of
  // the way) or not empty stays as it is, and so do its parents.
  for (int i = 0; i < g_created_count; ++i) (void)rmdir(g_created_dirs[i]);
}

extern "C" void on_run_signal(int sig) {
  const int k = sig == SIGINT ? 0 : sig == SIGTERM ? 1 : 2;
  if (g_interrupt_len[k] && write(2, g_interrupt_msg[k], g_interrupt_len[k]) < 0) {
  }
  remove_created_empty_dirs();
  _exit(128 + sig);
}

void set_interrupt_message(const std::string& what) {
  const char* names[3] = {"SIGINT", "SIGTERM", "SIGHUP"};
  for (int k = 0; k < 3; ++k) {
    const std::string m = fmt::format("{}interrupted ({}): {}\n", isatty(2) ? "\n" : "", names[k], what);
    g_interrupt_len[k] = std::min(m.size(), sizeof g_interrupt_msg[k]);
    std::memcpy(g_interrupt_msg[k], m.data(), g_interrupt_len[k]);
  }
}

void install_run_signals(const std::string& what) {
  set_interrupt_message(what);
  cli::install_interrupt_handler(on_run_signal);
}

// Blocks SIGINT / SIGTERM for its lifetime (while outputs are written).
struct BlockSignals {
  sigset_t old;
  BlockSignals() {
    sigset_t b;
    sigemptyset(&b);
    sigaddset(&b, SIGINT);
    sigaddset(&b, SIGTERM);
    sigaddset(&b, SIGHUP);
    sigprocmask(SIG_BLOCK, &b, &old);
  }
  ~BlockSignals() { sigprocmask(SIG_SETMASK, &old, nullptr); }
};

// The sweep that started this process (sim::kSweepPointEnv holds its pid),
// or 0: the variable set by hand, to something else or to a process that is
// not this one's parent, is no sweep's.
long sweep_parent() {
  const char* v = std::getenv(sim::kSweepPointEnv);
  if (!v) return 0;
  char* end = nullptr;
  errno = 0;
  const long parent = std::strtol(v, &end, 10);
  if (end == v || *end != '\0' || errno || parent <= 1) return 0;
  return parent;
}
bool started_by_sweep() {
  const long p = sweep_parent();
  return p && static_cast<long>(::getppid()) == p;
}

// A point started by a sweep ends with it: the kernel sends SIGTERM when the
// sweep dies, even by SIGKILL, and the run stops as an interrupted run does
// (nothing written). A sweep that ended before the request was made (this
// process reparented, the sweep's pid gone) ends the run now, saying so.
void end_with_sweep() {
  const long parent = sweep_parent();
  if (!parent) return;
  ::prctl(PR_SET_PDEATHSIG, SIGTERM);
  if (static_cast<long>(::getppid()) == parent) return;
  if (::kill(static_cast<pid_t>(parent), 0) != 0 && errno == ESRCH) {
    const char m[] = "error: the sweep that started this run has ended; the run stops, nothing written\n";
    if (write(2, m, sizeof m - 1) < 0) {
    }
    remove_created_empty_dirs();
    _exit(3);
  }
  ::prctl(PR_SET_PDEATHSIG, 0);  // the variable names a live process that is not our parent: no sweep's
}

// Before simulating: --out must be a folder we can write (else exit 2), and a
// previous run's outputs there are removed. Installs the interrupt message.
void prepare_out(const RunArgs& a) {
  const fs::path out(a.out);
  std::error_code ec;
  if (fs::exists(out, ec) && !fs::is_directory(out, ec))
    throw config::ConfigError(fmt::format("--out '{}': exists and is not a folder", a.out));
  // Remember the folders this run creates (deepest first) to remove them again
  // if it stops before writing anything.
  if (const std::string l = report::dangling_symlink_on(out); !l.empty())
    throw config::ConfigError(
        fmt::format("--out '{}': the path runs through a symbolic link to nothing ({}): "
                    "create its target or name another folder",
                    a.out, l));
  std::vector<fs::path> missing;
  for (fs::path p = fs::absolute(out, ec).lexically_normal(); !p.empty() && !fs::exists(fs::symlink_status(p, ec));
       p = p.parent_path()) {
    missing.push_back(p);
    if (p == p.parent_path()) break;
  }
  g_created_count = 0;
  for (const fs::path& p : missing) {
    const std::string s = p.string();
    if (g_created_count == kMaxCreatedDirs || s.size() >= sizeof g_created_dirs[0]) break;
    std::memcpy(g_created_dirs[g_created_count], s.c_str(), s.size() + 1);
    ++g_created_count;
  }
  fs::create_directories(out, ec);
  if (ec) {
    const std::string why = ec.message();
    remove_created_empty_dirs();
    throw config::ConfigError(fmt::format("--out '{}': cannot create the folder: {}", a.out, why));
  }
  const fs::path probe = out / fmt::format(".fabricsim-write-test-{}", getpid());
  {
    std::ofstream f(probe);
    if (!f) throw config::ConfigError(fmt::format("--out '{}': the folder is not writable", a.out));
  }
  fs::remove(probe, ec);
  // One run or sweep at a time writes a folder (a sweep takes the same lock):
  // held until this process ends. A folder that cannot be locked (no flock on
  // its file system, no read permission) is written unlocked.
  if (report::lock_output_folder(out, false) == report::FolderLock::busy)
    throw config::ConfigError(fmt::format(
        "--out '{}': another run or sweep is writing there; wait for it to end or name another --out", a.out));
  // Outputs the run will write: a file there is a previous run's (removed),
  // anything else (a folder) would fail the write after simulating: exit 2 now.
  for (const char* f : kRunOutputs)
    for (const fs::path& p : {out / f, out / (std::string(f) + ".tmp")}) {
      const fs::file_status st = fs::symlink_status(p, ec);
      if (!fs::exists(st)) continue;
      if (!fs::is_regular_file(st) && !fs::is_symlink(st))
        throw config::ConfigError(fmt::format("--out '{}': '{}' there is not a file the run can replace (a folder?)",
                                              a.out, p.filename().string()));
      // An input of this run (the fabric file, a schedule, a ladder) under an
      // output's name would be removed and overwritten.
      for (const auto& [input, hash] : config::files_read())
        if (fs::equivalent(p, input, ec))
          throw config::ConfigError(fmt::format(
              "--out '{}': '{}' there is {}, an input of this run, and the run would replace it: name another --out",
              a.out, p.filename().string(), input));
      fs::remove(p, ec);
      if (ec) throw config::ConfigError(fmt::format("--out '{}': cannot remove the previous '{}': {}", a.out,
                                                    p.filename().string(), ec.message()));
    }
  install_run_signals(fmt::format("run of {} stopped before it finished; nothing written to {}", a.fabric, a.out));
  end_with_sweep();
}

void written(const RunArgs& a) {
  set_interrupt_message(
      fmt::format("after the run of {} had finished; its outputs in {} are complete", a.fabric, a.out));
}

// One of a finished run's outputs. A write that fails (a full disk, a
// folder removed under the run) leaves none of the run's outputs: the ones
// already written are removed (prepare_out removed any older ones), then the
// run ends as one that could not finish (exit 3).
void write_run_output(const fs::path& p, const std::string& content) {
  try {
    write_atomic(p, content);
  } catch (const std::exception& e) {
    std::error_code ec;
    const fs::path dir = p.parent_path();
    for (const char* f : kRunOutputs)
      for (const fs::path& q : {dir / f, dir / (std::string(f) + ".tmp")}) fs::remove(q, ec);
    std::cerr << "error: the run finished but its outputs could not be written: " << e.what() << "; nothing is left in "
              << dir.string() << "\n";
    remove_created_empty_dirs();
    std::cout.flush();
    std::cerr.flush();
    std::_Exit(3);
  }
}

// result.json of a run: the simulation's JSON plus "run" (identity).
std::string result_json(nlohmann::ordered_json j, const report::RunIdentity& id) {
  j["run"] = id.json();
  return report::json_text(j, 2) + "\n";
}

// The line naming trace.json, printed after the run's own "wrote" line (cmd_run).
std::string g_trace_line;

void write_trace(const fs::path& out, report::TraceWriter& tw, bool quiet, const report::RunIdentity& id) {
  tw.set_run(id.json());
  write_run_output(out / "trace.json", tw.json());
  if (!quiet)
    g_trace_line = fmt::format("  wrote {} ({} events{})\n", (out / "trace.json").string(), tw.events(),
                               tw.dropped() ? fmt::format(", {} dropped past the cap", tw.dropped()) : "");
}

// Where `check` writes DOT: --dot FILE, else DIR/<name>.dot if --dot names an
// existing folder or ends with '/' (a folder to create), else out/<name>.dot,
// with a file-name-safe name (the default file stays inside out/).
std::string dot_path(const std::string& name, const std::string& dot_opt) {
  std::string safe = name;
  for (char& ch : safe)
    if (!(std::isalnum(static_cast<unsigned char>(ch)) || ch == '-' || ch == '_' || ch == '.')) ch = '_';
  if (safe.empty() || safe[0] == '.') safe = "_" + safe;
  std::error_code ec;
  const bool names_folder = !dot_opt.empty() && (dot_opt.back() == '/' || fs::is_directory(dot_opt, ec));
  if (!dot_opt.empty() && !names_folder) return dot_opt;
  return ((dot_opt.empty() ? fs::path("out") : fs::path(dot_opt)) / (safe + ".dot")).string();
}

// Does the existing file `path` begin like a DOT graph ([strict] graph /
// digraph, after blanks and comments of its first lines)? Reads its first
// 4 KiB only.
bool looks_like_dot(const fs::path& path) {
  std::ifstream f(path, std::ios::binary);
  std::string head(4096, '\0');
  f.read(head.data(), static_cast<std::streamsize>(head.size()));
  head.resize(static_cast<std::size_t>(f.gcount()));
  std::istringstream lines(head);
  std::string word;
  for (std::string line; word.empty() && std::getline(lines, line);) {
    const std::size_t b = line.find_first_not_of(" \t\r");
    if (b == std::string::npos || line.compare(b, 2, "//") == 0 || line[b] == '#') continue;
    std::istringstream is(line.substr(b));
    is >> word;
    if (word == "strict") is >> word;
  }
  return word == "graph" || word == "digraph";
}

// Write the DOT file; a path that cannot be written is bad input (exit 2),
// and so is one that would overwrite an input of this check (the fabric, a
// schedule, an included file) or an existing file that is not a DOT graph.
void write_dot(const std::string& path, const std::string& dot, bool dot_given) {
  // The file is written beside the target and renamed over it: a device, a
  // FIFO or a socket there (--dot /dev/null) would be replaced, not written.
  std::error_code ec;
  const char* what = dot_given ? "--dot" : "the DOT file";
  const fs::file_status st = fs::status(path, ec);
  if (fs::exists(st) && !fs::is_regular_file(st))
    throw config::ConfigError(
        fmt::format("{} '{}': exists and is not a regular file (a device or FIFO?); name a file "
                    "or a folder",
                    what, path));
  if (fs::exists(st)) {
    for (const auto& [input, hash] : config::files_read())
      if (fs::equivalent(path, input, ec))
        throw config::ConfigError(fmt::format("{} '{}': is {}, an input of this check; name another file (e.g. {}.dot)",
                                              what, path, input, fs::path(path).stem().string()));
    if (!looks_like_dot(path))
      throw config::ConfigError(fmt::format(
          "{} '{}': exists and is not a DOT graph; it is left alone: remove it or name another file", what, path));
  }
  try {
    write_atomic(path, dot);
  } catch (const std::exception& e) {
    throw config::ConfigError(fmt::format("{}: {}", dot_given ? "--dot" : "the DOT file", e.what()));
  }
}

// --seed / --policy and a --set of the same key: which should win is a guess,
// so it is an error whatever the order.
void reject_conflict(const std::vector<std::string>& sets, const std::string& flag, const std::string& key) {
  for (const auto& s : sets)
    if (config::assignment_sets(s, key))
      throw config::ConfigError(
          fmt::format("{} and --set {} both set {}; give only one of them", flag, s.substr(0, s.find('=')), key));
}

std::shared_ptr<config::Document> load_fabric_doc(const RunArgs& a, const sim::RunKind*& kind) {
  auto doc = config::load_with_overrides(a.fabric, a.sets);
  kind = &sim::run_kind_of(*doc);
  if (!a.seed.empty()) reject_conflict(a.sets, "--seed", "run.seed");
  if (!a.policy.empty() && !kind->has_policy()) throw config::ConfigError("--policy: " + kind->no_policy_reason);
  if (!a.policy.empty()) reject_conflict(a.sets, "--policy", kind->policy_key);
  if (!a.policy.empty()) config::apply_overrides(*doc, {kind->policy_key + "=" + a.policy}, "--policy");
  if (!a.seed.empty()) config::apply_overrides(*doc, {"run.seed=" + a.seed}, "--seed");
  return doc;
}

// A run that could not finish (deadlock, deadline, hopeless link): the
// diagnosis, then exit 3 at once. SystemC threads are left suspended on their
// own stacks, holding state that no destructor will release; ending without
// static destructors keeps that from being reported as leaks (LeakSanitizer
// does not scan suspended coroutine stacks) and writes nothing more.
[[noreturn]] void exit_unfinished(const std::string& diagnosis) {
  std::cerr << "error: the run could not finish: " << diagnosis << "\n";
  remove_created_empty_dirs();
  std::cout.flush();
  std::cerr.flush();
  std::_Exit(3);
}

// A run whose only table is result.json (link pair, PCIe host, RIFL link):
// result.json and, with --trace, trace.json, written whole with the signals
// blocked, then recorded as written.
void write_result(const RunArgs& a, const nlohmann::ordered_json& json, report::TraceWriter& tw,
                  const report::RunIdentity& id) {
  BlockSignals b;
  write_run_output(fs::path(a.out) / "result.json", result_json(json, id));
  if (a.trace) write_trace(a.out, tw, a.quiet, id);
  written(a);
}

int cmd_run_fabric(const RunArgs& a, std::shared_ptr<config::Document> doc) {
  const fabric::FabricRunConfig cfg = fabric::parse_fabric(config::root_section(doc));
  sim::validate_fabric(cfg);
  sim::check_runnable(cfg);
  const report::RunIdentity id = run_identity(*doc, cfg.seed);
  prepare_out(a);
  if (!a.quiet)
    std::cout << fmt::format("fabricsim run: {} ({}), {} {} of {} B per rank on {} accelerators, {}, seed {}\n",
                             cfg.fabric.name, a.fabric, cfg.workload.collective.algorithm,
                             sw::to_string(cfg.workload.collective.op), cfg.workload.collective.bytes,
                             cfg.fabric.accelerators(),
                             cfg.default_proto.protocol == fabric_core::LinkProtocol::rifl
                                 ? std::string("RIFL links")
                                 : "policy " + cfg.default_link.policy_name,
                             cfg.seed)
              << std::flush;  // shown even if the run is interrupted (piped stdout)
  if (const auto& S = cfg.workload.schedule) std::cerr << sim::schedule_warnings(*S, cfg.workload.collective.bytes);
  report::TraceWriter tw;
  const sim::FabricRunResult r = sim::run_fabric(cfg, {}, !a.quiet && isatty(2), a.trace ? &tw : nullptr);
  if (!r.ok) {
    exit_unfinished(r.diagnosis);
  }
  const fs::path out(a.out);
  {
    BlockSignals b;
    write_run_output(out / "collectives.csv", report::with_run_id_column(sim::collective_csv(cfg, r.row), id.id()));
    write_run_output(out / "links.csv", report::with_run_id_column(r.links_csv, id.id()));
    write_run_output(out / "result.json", result_json(r.json, id));
    if (!r.steps_csv.empty()) {  // a user's schedule: per-step and per-threadblock timing
      write_run_output(out / "steps.csv", report::with_run_id_column(r.steps_csv, id.id()));
      write_run_output(out / "threadblocks.csv", report::with_run_id_column(r.threadblocks_csv, id.id()));
    }
    if (a.trace) write_trace(out, tw, a.quiet, id);
    written(a);
  }
  if (!a.quiet)
    std::cout << r.summary
              << fmt::format(
                     "  wrote {0}/result.json, {0}/collectives.csv, {0}/links.csv{1}\n", out.string(),
                     r.steps_csv.empty() ? "" : fmt::format(", {0}/steps.csv, {0}/threadblocks.csv", out.string()));
  if (!r.link_down.empty())
    std::cerr << "warning: terminal failure, the collective did not complete: " << r.link_down << "\n";
  if (r.link_down.empty() && cfg.workload.data && cfg.workload.verify && !r.row.correct) {
    std::cerr << "error: the collective's result is numerically wrong"
              << (r.first_wrong.empty() ? std::string() : ": " + r.first_wrong) << "\n";
    return 1;
  }
  return 0;
}

int cmd_run_host(const RunArgs& a, std::shared_ptr<config::Document> doc) {
  const fabric::HostRunConfig cfg = fabric::parse_host(config::root_section(doc));
  sim::host_address_map(cfg);  // overlapping `address:` values: exit 2 before any output
  const report::RunIdentity id = run_identity(*doc, cfg.seed);
  prepare_out(a);
  const auto& W = cfg.workload;
  std::string group;
  for (int g : W.group) group += (group.empty() ? "" : ",") + std::to_string(g);
  if (!a.quiet)
    std::cout << fmt::format("fabricsim run: {} ({}), GPUs {}, {}, {}, seed {}\n", cfg.host.name, a.fabric, group,
                             cfg.decode_mode
                                 ? fmt::format("decode rounds after {} selection", sw::to_string(cfg.decode.selection))
                             : W.schedule ? fmt::format("schedule {} ({} of {} B)", W.schedule_path,
                                                        sw::to_string(W.collective), W.size_bytes)
                                          : fmt::format("{} of {} B per GPU", W.transport, W.size_bytes),
                             W.ops ? fmt::format("{} {}{}", W.ops, cfg.decode_mode ? "round" : "operation",
                                                 W.ops == 1 ? "" : "s")
                                   : fmt::format("{}{}",
                                                 sim::cell_duration_ps(cfg) >= 1000000000ull
                                                     ? fmt::format("{:.3f} s", sim::cell_duration_ps(cfg) / 1e12)
                                                     : fmt::format("{:.3f} us", sim::cell_duration_ps(cfg) / 1e6),
                                                 // decode rounds run that long after the selection's race
                                                 cfg.decode_mode ? " of rounds after the selection" : " simulated"),
                             cfg.seed)
              << std::flush;  // shown even if the run is interrupted (piped stdout)
  if (const auto& S = W.schedule) std::cerr << sim::schedule_warnings(*S, W.size_bytes);
  report::TraceWriter tw;
  const sim::HostRunResult r = sim::run_host(cfg, !a.quiet && isatty(2), a.trace ? &tw : nullptr);
  if (!r.ok) {
    exit_unfinished(r.diagnosis);
  }
  const fs::path out(a.out);
  if (W.schedule) {  // a user's schedule: the nccl-tests row, per-step and per-threadblock timing
    BlockSignals b;
    write_run_output(out / "collectives.csv", report::with_run_id_column(r.collectives_csv, id.id()));
    write_run_output(out / "steps.csv", report::with_run_id_column(r.steps_csv, id.id()));
    write_run_output(out / "threadblocks.csv", report::with_run_id_column(r.threadblocks_csv, id.id()));
  }
  write_result(a, r.json, tw, id);
  if (!a.quiet)
    std::cout << r.summary
              << fmt::format("  wrote {0}/result.json{1}\n", a.out,
                             W.schedule ? fmt::format(", {0}/collectives.csv, {0}/steps.csv, {0}/threadblocks.csv", a.out)
                                        : "");
  if (W.data && W.verify && !r.correct) {
    std::cerr << (W.schedule ? "error: the collective's result is numerically wrong"
                             : "error: the AllReduce result is numerically wrong")
              << (r.first_wrong.empty() ? std::string() : ": " + r.first_wrong) << "\n";
    return 1;
  }
  return 0;
}

int cmd_run_rifl(const RunArgs& a, std::shared_ptr<config::Document> doc) {
  const config::RiflExperimentConfig cfg = config::parse_rifl_experiment(config::root_section(doc));
  const report::RunIdentity id = run_identity(*doc, cfg.link.seed);
  prepare_out(a);
  const auto& c = cfg.link;
  if (!a.quiet)
    std::cout << fmt::format(
                     "fabricsim run: {} ({}), {} lanes x {} Gb/s, {}-bit frames, {}, "
                     "{} B {}, seed {}\n",
                     cfg.name, a.fabric, c.lanes, c.lane_rate_bps / 1e9, c.frame_bits, config::rifl_channel_text(c),
                     c.bytes_per_direction, c.load_ba ? "per direction" : "a->b (one direction loaded)", c.seed)
              << std::flush;  // shown even if the run is interrupted (piped stdout)
  report::TraceWriter tw;
  const sim::RiflRunResult r = sim::run_rifl_experiment(cfg, a.trace ? &tw : nullptr, !a.quiet && isatty(2));
  if (!r.ok) {
    exit_unfinished(r.diagnosis);
  }
  write_result(a, r.json, tw, id);
  if (!a.quiet) std::cout << r.summary << fmt::format("  wrote {}/result.json\n", a.out);
  return 0;
}

int cmd_run_link_pair(const RunArgs& a, std::shared_ptr<config::Document> doc);

int cmd_run(const RunArgs& a) {
  const sim::RunKind* kind = nullptr;
  auto doc = load_fabric_doc(a, kind);
  using F = sim::RunKind::Family;
  int rc = 1;
  switch (kind->family) {
    case F::link_pair: rc = cmd_run_link_pair(a, doc); break;
    case F::ualink_fabric: rc = cmd_run_fabric(a, doc); break;
    case F::pcie_host: rc = cmd_run_host(a, doc); break;
    case F::rifl_link: rc = cmd_run_rifl(a, doc); break;
  }
  std::cout << g_trace_line;  // after the run's "wrote" line: every file written is named at the end
  return rc;
}

// The summary's channel line: the burst chain's estimates, or the independent wire's bit errors.
std::string channel_line(const config::LinkExperimentConfig& cfg, const nlohmann::ordered_json& j) {
  if (cfg.link.channel_model == link::LinkConfig::ChannelModel::independent)
    return fmt::format("  channel independent at BER {:g}: {} bit errors in {} wire bits\n", cfg.link.ber,
                       j["link"]["wire_bit_errors"].get<std::uint64_t>(), j["link"]["wire_bits"].get<std::uint64_t>());
  return fmt::format("  channel estimate a={:.5f} b={:.5f} (injected {} / {}) over {} steps\n",
                     j["channel"]["p_good_to_bad_estimate"].get<double>(),
                     j["channel"]["p_bad_to_good_estimate"].get<double>(), cfg.link.channel.a, cfg.link.channel.b,
                     j["channel"]["steps"].get<std::uint64_t>());
}

int cmd_run_link_pair(const RunArgs& a, std::shared_ptr<config::Document> doc) {
  const config::LinkExperimentConfig cfg = config::parse_link_experiment(config::root_section(doc));
  const report::RunIdentity id = run_identity(*doc, cfg.seed);
  prepare_out(a);
  if (!a.quiet)
    std::cout << fmt::format("fabricsim run: {} ({}), policy {}, seed {}, {} flits every {} ns\n", cfg.name, a.fabric,
                             cfg.link.policy_name, cfg.seed, cfg.traffic.flits, cfg.traffic.period_ps / 1000.0)
              << std::flush;  // shown even if the run is interrupted (piped stdout)
  report::TraceWriter tw;
  const sim::LinkRunResult r = sim::run_link_experiment(cfg, a.trace ? &tw : nullptr, false, !a.quiet && isatty(2));
  if (!r.ok) {
    exit_unfinished(r.diagnosis);
  }
  write_result(a, r.json, tw, id);
  if (!a.quiet) {
    const auto& m = r.metrics;
    const auto& l = r.json["link"];
    // A link that went down delivered part of the stream: no goodput or P99 to report.
    const bool down = l.contains("diagnosis");
    const std::string head = down ? fmt::format(
                                        "  no goodput or P99 latency (the link went down before the stream completed)  "
                                        " delivered {} of {} flits",
                                        m.delivered_flits, cfg.traffic.flits)
                                  : fmt::format("  goodput {:.2f} Gb/s   P99 latency {:.2f} us   delivered {} flits",
                                                m.goodput_gbps, m.p99_us, m.delivered_flits);
    std::cout
        << head
        << fmt::format(
               " (order violations {}, missing {})\n"
               "  replayed {} flits   FEC {:.1f} KiB   reverse control {:.1f} KiB   terminal failures {}\n"
               "  first-attempt raw errors {}   mean exposed suffix {:.1f} flits   admission stall {:.0f} ns (window) "
               "{:.0f} ns (replay)\n"
               "{}"
               "  wrote {}\n",
               r.json["sink"]["order_violations"].get<std::uint64_t>(), r.json["sink"]["missing"].get<std::uint64_t>(),
               m.replayed_flits, m.fec_bytes / 1024.0, m.control_bytes / 1024.0, m.terminal_failures,
               m.first_attempt_errors, l["mean_exposed_suffix_flits"].get<double>(),
               l["admission_stall_window_ns"].get<double>(), l["admission_stall_replay_ns"].get<double>(),
               channel_line(cfg, r.json), (fs::path(a.out) / "result.json").string());
    if (m.terminal_failures) std::cout << "  link went down: " << l["diagnosis"].get<std::string>() << "\n";
  }
  return 0;
}

// An option given an empty value (`--shard ""`, e.g. an unset variable in a
// batch script) is an error, not the option's absence.
const CLI::Validator kNotEmpty(
    [](const std::string& v) { return v.empty() ? std::string("an empty value is not allowed") : std::string(); },
    "NOT EMPTY", "not empty");

// A whole-number option in [lo, hi], read as whole-number keys of the
// configuration are (config::parse_whole_number): says which of the two the
// value is not (CLI11's Range alone reports "abc" as "not in range").
CLI::Validator whole_number_in(unsigned lo, unsigned hi) {
  const std::string range = "[" + std::to_string(lo) + ", " + std::to_string(hi) + "]";
  return CLI::Validator(
      [lo, hi, range](const std::string& v) {
        std::uint64_t n = 0;
        try {
          n = config::parse_whole_number(v);
        } catch (const config::UnitError& e) {
          return std::string(e.what()) + " (give one in " + range + ")";
        }
        if (n < lo || n > hi) return v + " is outside " + range;
        return std::string();
      },
      "INT in " + range, "whole number in " + range);
}

// `fabricsim run` options.
CLI::App* add_run_command(CLI::App& app, RunArgs& ra) {
  auto* run = app.add_subcommand("run", "run one simulation; prints a summary and writes DIR/result.json");
  run->add_option("fabric", ra.fabric, "fabric YAML (default: topologies/ring8.yaml)")->check(kNotEmpty);
  // One value per --set (CLI11 would otherwise take the fabric path after it as another value).
  run->add_option("--set", ra.sets, "override a parameter: key.path=value, list items as links[0].a (repeatable)")
      ->allow_extra_args(false);
  run->add_option("--seed", ra.seed, "seed, 0 to 2^64-1 (sets run.seed; an error together with --set run.seed)")
      ->check(kNotEmpty);
  run->add_option("--policy", ra.policy,
                  "fixed-strong | post-decode | predictive-fec | preface (UALink links; an error together with --set "
                  "of the policy)")
      ->check(kNotEmpty);
  run->add_option("--out", ra.out, "output directory")->check(kNotEmpty)->capture_default_str();
  run->add_flag("--quiet", ra.quiet, "no summary on stdout");
  run->add_flag("--trace", ra.trace, "also write DIR/trace.json (Chrome / Perfetto trace events)");
  return run;
}

// `fabricsim sweep` arguments.
struct SweepArgs {
  std::string study_file, out;
  unsigned jobs = std::max(1u, std::thread::hardware_concurrency());
  bool fresh = false, collect = false;
  std::string shard;
};

CLI::App* add_sweep_command(CLI::App& app, SweepArgs& sa) {
  auto* sweep =
      app.add_subcommand("sweep", "run a study (points in parallel processes); writes results.csv, summary.json");
  sweep->add_option("study", sa.study_file, "study YAML")->required();
  sweep->add_option("--jobs,-j", sa.jobs, "parallel processes")
      ->check(kNotEmpty)
      ->check(whole_number_in(1, 1024))
      ->capture_default_str();
  sweep->add_option("--out", sa.out, "output directory (default: out/<study name>)")->check(kNotEmpty);
  sweep->add_flag("--fresh", sa.fresh,
                  "rerun every point (by default a finished point is reused if nothing it depends on changed)");
  sweep->add_option("--shard", sa.shard, "I/N: run only the I-th of N shares of the points (batch arrays); no tables")
      ->check(kNotEmpty);
  sweep->add_flag("--collect", sa.collect,
                  "run nothing; write the tables once every share is finished (refuses missing or stale points)");
  return sweep;
}

// `fabricsim check` arguments.
struct CheckArgs {
  std::string fabric, dot;
  std::vector<std::string> sets;
  std::string seed, policy;  // as run's: the check sees what run would run
};

CLI::App* add_check_command(CLI::App& app, CheckArgs& ca) {
  auto* check = app.add_subcommand("check", "validate a fabric, print its summary, write its graph as Graphviz DOT");
  check->add_option("fabric", ca.fabric, "fabric YAML")->required()->check(kNotEmpty);
  check->add_option("--set", ca.sets, "override a parameter: key.path=value, list items as links[0].a (repeatable)")
      ->allow_extra_args(false);
  check->add_option("--seed", ca.seed, "seed, as for run (sets run.seed; an error together with --set run.seed)")
      ->check(kNotEmpty);
  check
      ->add_option("--policy", ca.policy,
                   "policy, as for run (UALink links; an error together with --set of the policy)")
      ->check(kNotEmpty);
  check->add_option("--dot", ca.dot,
                    "DOT output file, or a folder for <fabric name>.dot (default: out/<fabric name>.dot)")
      ->check(kNotEmpty);
  return check;
}

CLI::App* add_bench_command(CLI::App& app, cli::BenchArgs& ba) {
  auto* bench = app.add_subcommand(
      "bench", "time `fabricsim run` as users run it (child processes): flit transmissions per wall-second");
  bench->add_option("fabric", ba.fabric,
                    "fabric YAML (default: topologies/link-primary.yaml with --set traffic.flits=1000000)");
  bench->add_option("--set", ba.sets, "override a parameter of every run: key.path=value (repeatable)")
      ->allow_extra_args(false);
  bench->add_option("--repeat,-r", ba.repeat, "runs per binary (the median is reported)")
      ->check(whole_number_in(1, 1000))
      ->capture_default_str();
  bench->add_option("--against", ba.against, "another fabricsim binary to run interleaved; prints the ratio");
  return bench;
}

// `mpirun -np K fabricsim run` would run the same simulation K times, each
// rank writing the same output folder. Only a sweep spreads work over MPI
// ranks; a point a sweep starts (it inherits the MPI environment of its
// worker rank) carries sim::kSweepPointEnv and is not refused.
// Errors: config::ConfigError (exit 2) under an MPI launch of K > 1 ranks.
void refuse_parallel_launch(const char* command) {
  const int k = sim::mpi_launch_size();
  if (k <= 1 || started_by_sweep()) return;
  throw config::ConfigError(fmt::format(
      "`fabricsim {}` is one run, but mpirun started it on {} ranks (each would do the same and write the "
      "same output); run it without mpirun, or spread a study's points with `mpirun -np K fabricsim sweep "
      "STUDY.yaml`",
      command, k));
}

int cmd_sweep(const SweepArgs& sa, const char* argv0) {
  const sim::Study st = sim::load_study(sa.study_file);
  sim::SweepOptions o;
  o.jobs = sa.jobs;
  o.fresh = sa.fresh;
  o.collect = sa.collect;
  if (!sa.shard.empty()) {
    // Digits, '/', digits and nothing else (sscanf's %u would take a sign or a
    // leading blank, and wrap "-4294967293" to 3).
    unsigned i = 0, n = 0;
    const std::string& v = sa.shard;
    const std::size_t slash = v.find('/');
    const auto digits = [](const std::string& t) {
      return !t.empty() && t.size() <= 6 && t.find_first_not_of("0123456789") == std::string::npos;
    };
    const bool well_formed = slash != std::string::npos && digits(v.substr(0, slash)) && digits(v.substr(slash + 1));
    if (well_formed) {
      i = static_cast<unsigned>(std::stoul(v.substr(0, slash)));
      n = static_cast<unsigned>(std::stoul(v.substr(slash + 1)));
    }
    if (!well_formed || n < 1 || i < 1 || i > n || n > 100000)
      throw config::ConfigError(
          fmt::format("--shard '{}': expected I/N with 1 <= I <= N <= 100000, e.g. --shard 2/8", sa.shard));
    o.shard_index = i;
    o.shard_count = n;
  }
  if (sa.collect && (sa.fresh || !sa.shard.empty()))
    throw config::ConfigError("--collect runs no point: give it without --fresh and --shard");
  o.out_dir = sa.out.empty() ? (fs::path("out") / sim::folder_name(st.name)).string() : sa.out;
  o.self_exe = self_exe(argv0);
  const int rc = sim::run_sweep(st, o);
  if (rc == 0 && !o.shard_count && !sim::mpi_secondary_rank())
    std::cout << fmt::format("wrote {0}/results.csv and {0}/summary.json\n", o.out_dir);
  return rc;
}

int cmd_bench(cli::BenchArgs ba, const char* argv0) {
  if (ba.fabric.empty()) {
    ba.fabric = resolve_default("topologies/link-primary.yaml");
    if (ba.sets.empty()) ba.sets.push_back("traffic.flits=1000000");
  }
  ba.self_exe = self_exe(argv0);
  return cli::run_bench(ba);
}

int cmd_check(const CheckArgs& ca) {
  // The same loading as run (--seed and --policy applied, conflicts refused),
  // so a file and arguments that check accepts are what run accepts.
  RunArgs ra;
  ra.fabric = ca.fabric;
  ra.sets = ca.sets;
  ra.seed = ca.seed;
  ra.policy = ca.policy;
  const sim::RunKind* kind = nullptr;
  const sim::FabricCheck c = sim::check_document(load_fabric_doc(ra, kind));
  if (!sim::run_kind(c.kind).has_graph) {
    std::cout << c.summary;
    if (!ca.dot.empty()) std::cout << fmt::format("no graph written: a {} fabric has no fabric graph\n", c.kind);
    return 0;
  }
  const std::string dot = dot_path(c.name, ca.dot);
  write_dot(dot, c.dot, !ca.dot.empty());
  std::cout << c.summary << fmt::format("wrote {}\n", dot);
  return 0;
}

}  // namespace

int sc_main(int argc, char* argv[]) {
  (void)kBannerOff;
  // Info reports (e.g. "Simulation stopped by user" after a terminal failure)
  // stay off stdout; the program prints its own summary and diagnoses.
  sc_core::sc_report_handler::set_actions(sc_core::SC_INFO, sc_core::SC_DO_NOTHING);
  sc_core::sc_set_time_resolution(1, sc_core::SC_PS);
  CLI::App app{"fabricsim: SystemC/TLM-2.0 virtual platform of a scale-up accelerator fabric"};
  app.require_subcommand(1);
  RunArgs ra;
  SweepArgs sa;
  CheckArgs ca;
  cli::BenchArgs ba;
  auto* run = add_run_command(app, ra);
  auto* sweep = add_sweep_command(app, sa);
  auto* check = add_check_command(app, ca);
  auto* bench = add_bench_command(app, ba);
  auto is_command = [](const std::string& a) { return a == "run" || a == "sweep" || a == "check" || a == "bench"; };
  if (argc > 1 && argv[1][0] != '-') {
    const std::string a1 = argv[1];
    if (!is_command(a1)) {
      if (!sim::mpi_secondary_rank())
        std::cerr << "error: unknown command '" << a1
                  << "': the commands are run, sweep, check and bench (fabricsim --help)\n";
      return 2;
    }
  }
  // An option that takes a value, written without one before the next option
  // (`run --seed --out DIR`): CLI11 takes `--out` as the seed and then blames
  // whatever comes after. No value of these options begins with "--".
  for (int i = 2; argc > 1 && is_command(argv[1]) && i < argc; ++i) {
    static const std::set<std::string> kTakesValue = {"--set",   "--seed",   "--policy",  "--out", "--dot", "--jobs",
                                                      "--shard", "--repeat", "--against", "-j",    "-r"};
    const std::string o = argv[i];
    if (!kTakesValue.count(o)) continue;
    const bool missing = i + 1 >= argc || std::string(argv[i + 1]).rfind("--", 0) == 0;
    if (missing) {
      if (!sim::mpi_secondary_rank())
        std::cerr << "error: " << o << " needs a value"
                  << (i + 1 < argc ? std::string(", not the option ") + argv[i + 1] : std::string()) << " (fabricsim "
                  << argv[1] << " --help lists the options)\n";
      return 2;
    }
    ++i;  // skip the value
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help, --version
    // One line, as every other bad input: "error: ..." naming the option.
    const std::string a1 = argc > 1 ? argv[1] : "";
    const bool known = is_command(a1);
    const std::string sub = known ? a1 + " " : std::string();
    // CLI11 says "--out: At Most 1 required but received 2" for an option given twice.
    std::string what = e.what();
    static const std::regex kTwice(R"(^(\S+): At Most 1 required but received (\d+)$)");
    if (std::smatch m; std::regex_match(what, m, kTwice))
      what = fmt::format("{} is given {} times: give it once", m[1].str(), m[2].str());
    if (!sim::mpi_secondary_rank())  // under mpirun every rank parses the same arguments
      std::cerr << "error: " << what << " (fabricsim " << sub << "--help lists the options)\n";
    return 2;
  }

  try {
    if (!*sweep) refuse_parallel_launch(*run ? "run" : *bench ? "bench" : "check");
    if (*run && ra.fabric.empty()) ra.fabric = resolve_default(kDefaultFabric);
    // The set-up before a simulation (the routing of a large fabric: tens of
    // seconds at 4096 accelerators) shows a progress line on a terminal, and
    // an interrupt there says what it stopped (a run's prepare_out installs
    // its own message once it has an output folder).
    if (*run || *check) {
      report::set_setup_progress(isatty(2) && !(*run && ra.quiet));
      install_run_signals(fmt::format("{} of {} stopped while reading and checking its input; nothing written",
                                      *run ? "run" : "check", *run ? ra.fabric : ca.fabric));
    }
    // A sweep reads and checks its study and every point's fabric before its
    // own handler is installed (run_sweep): an interrupt there says so too.
    if (*sweep)
      install_run_signals(
          fmt::format("sweep of {} stopped while reading and checking the study; nothing written", sa.study_file));
    if (*run) return cmd_run(ra);
    if (*sweep) return cmd_sweep(sa, argv[0]);
    if (*bench) return cmd_bench(ba, argv[0]);
    if (*check) return cmd_check(ca);
  } catch (const config::ConfigError& e) {
    // Under mpirun every rank loads the study (or refuses a run): rank 0 alone says what is wrong.
    if (!sim::mpi_secondary_rank() || (!*sweep && started_by_sweep())) std::cerr << "error: " << e.what() << "\n";
    remove_created_empty_dirs();
    return 2;
  } catch (const fabric::FabricError& e) {
    std::cerr << "error: " << e.what() << "\n";
    remove_created_empty_dirs();
    return 2;
  } catch (const std::bad_alloc&) {
    exit_unfinished(
        "out of memory: the model's state outgrew what this machine can allocate (try a smaller fabric, workload or "
        "traffic size)");
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    remove_created_empty_dirs();
    return 1;
  }
  return 0;
}
