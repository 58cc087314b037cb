// fabricsim: the command-line program (platform.md §4).
//   fabricsim run [FABRIC.yaml] [--set key.path=value]... [--seed N] [--policy P] [--out DIR]
//   fabricsim sweep STUDY.yaml [--jobs N] [--out DIR]
//   fabricsim bench [STUDY.yaml]
// Exit status: 0 success, 2 bad input (nothing written), 3 a run that could
// not finish (diagnosis on stderr), 1 anything else.
#include <unistd.h>

#include <systemc>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <thread>

#include "platform/cli/bench.h"
#include "platform/config/link_config.h"
#include "platform/report/files.h"
#include "platform/report/trace.h"
#include "platform/config/yaml_config.h"
#include "platform/fabric/fabric_config.h"
#include "platform/fabric/fabric_graph.h"
#include "platform/fabric/host_config.h"
#include "platform/sim/fabric_run.h"
#include "platform/sim/host_run.h"
#include "platform/sim/link_experiment.h"
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

void write_trace(const fs::path& out, const report::TraceWriter& tw, bool quiet) {
  write_atomic(out / "trace.json", tw.json());
  if (!quiet)
    std::cout << fmt::format("  wrote {} ({} events{})\n", (out / "trace.json").string(), tw.events(),
                             tw.dropped() ? fmt::format(", {} dropped past the cap", tw.dropped()) : "");
}

// Where `check` writes DOT: --dot, else out/<name>.dot with a file-name-safe
// name (the default file stays inside out/).
std::string dot_path(const std::string& name, const std::string& dot_opt) {
  if (!dot_opt.empty()) return dot_opt;
  std::string safe = name;
  for (char& ch : safe)
    if (!(std::isalnum(static_cast<unsigned char>(ch)) || ch == '-' || ch == '_' || ch == '.')) ch = '_';
  if (safe.empty() || safe[0] == '.') safe = "_" + safe;
  return (fs::path("out") / (safe + ".dot")).string();
}

// Load a fabric file with the command line's overrides applied.
std::shared_ptr<config::Document> load_fabric_doc(const RunArgs& a, std::string& kind) {
  auto doc = config::load_with_overrides(a.fabric, a.sets);
  kind = fabric::fabric_kind(*doc);
  if (!a.policy.empty() && kind == "pcie-host")
    throw config::ConfigError("--policy: a pcie-host fabric has no link policy (its links are error-free PCIe)");
  if (!a.policy.empty()) config::apply_overrides(*doc, {fabric::policy_key(kind) + "=" + a.policy}, "--policy");
  if (!a.seed.empty()) config::apply_overrides(*doc, {"run.seed=" + a.seed}, "--seed");
  return doc;
}

int cmd_run_fabric(const RunArgs& a, std::shared_ptr<config::Document> doc) {
  const fabric::FabricRunConfig cfg = fabric::parse_fabric(config::root_section(doc));
  sim::validate_fabric(cfg);
  if (!a.quiet)
    std::cout << fmt::format("fabricsim run: {} ({}), {} {} of {} per rank on {} accelerators, policy {}, seed {}\n",
                             cfg.fabric.name, a.fabric, cfg.workload.collective.algorithm,
                             sw::to_string(cfg.workload.collective.op), cfg.workload.collective.bytes,
                             cfg.fabric.accelerators(), cfg.default_link.policy_name, cfg.seed);
  if (const auto& S = cfg.workload.schedule) {  // MSCCL minBytes / maxBytes: the sizes it is meant for (not enforced)
    const std::uint64_t T = cfg.workload.collective.bytes;
    if ((S->min_bytes && T < S->min_bytes) || (S->max_bytes && T > S->max_bytes))
      std::cerr << fmt::format("warning: size {} B lies outside the schedule's [minBytes, maxBytes] = [{}, {}]\n", T,
                               S->min_bytes, S->max_bytes ? std::to_string(S->max_bytes) : std::string("-"));
  }
  report::TraceWriter tw;
  const sim::FabricRunResult r = sim::run_fabric(cfg, {}, !a.quiet && isatty(2), a.trace ? &tw : nullptr);
  if (!r.ok) {
    std::cerr << "error: the run could not finish: " << r.diagnosis << "\n";
    return 3;
  }
  const fs::path out(a.out);
  write_atomic(out / "collectives.csv", sim::collective_csv(cfg, r.row));
  write_atomic(out / "links.csv", r.links_csv);
  write_atomic(out / "result.json", r.json.dump(2) + "\n");
  if (!r.steps_csv.empty()) {  // a user's schedule: per-step and per-threadblock timing
    write_atomic(out / "steps.csv", r.steps_csv);
    write_atomic(out / "threadblocks.csv", r.threadblocks_csv);
  }
  if (a.trace) write_trace(out, tw, a.quiet);
  if (!a.quiet)
    std::cout << r.summary
              << fmt::format("  wrote {0}/result.json, {0}/collectives.csv, {0}/links.csv{1}\n", out.string(),
                             r.steps_csv.empty() ? "" : fmt::format(", {0}/steps.csv, {0}/threadblocks.csv", out.string()));
  if (!r.link_down.empty())
    std::cerr << "warning: terminal failure, the collective did not complete: " << r.link_down << "\n";
  if (r.link_down.empty() && cfg.workload.data && !r.row.correct) {
    std::cerr << "error: the collective's result is numerically wrong"
              << (r.first_wrong.empty() ? std::string() : ": " + r.first_wrong) << "\n";
    return 1;
  }
  return 0;
}

int cmd_run_host(const RunArgs& a, std::shared_ptr<config::Document> doc) {
  const fabric::HostRunConfig cfg = fabric::parse_host(config::root_section(doc));
  const auto& W = cfg.workload;
  std::string group;
  for (int g : W.group) group += (group.empty() ? "" : ",") + std::to_string(g);
  if (!a.quiet)
    std::cout << fmt::format("fabricsim run: {} ({}), GPUs {}, {}, {}, seed {}\n", cfg.host.name, a.fabric, group,
                             cfg.decode_mode ? fmt::format("decode rounds after {} selection", sw::to_string(cfg.decode.selection))
                                             : fmt::format("{} of {} B per GPU", W.transport, W.size_bytes),
                             W.ops ? fmt::format("{} operations", W.ops)
                                   : fmt::format("{:.3f} s simulated", sim::cell_duration_ps(cfg) / 1e12),
                             cfg.seed);
  report::TraceWriter tw;
  const sim::HostRunResult r = sim::run_host(cfg, !a.quiet && isatty(2), a.trace ? &tw : nullptr);
  if (!r.ok) {
    std::cerr << "error: the run could not finish: " << r.diagnosis << "\n";
    return 3;
  }
  const fs::path out(a.out);
  write_atomic(out / "result.json", r.json.dump(2) + "\n");
  if (a.trace) write_trace(out, tw, a.quiet);
  if (!a.quiet) std::cout << r.summary << fmt::format("  wrote {}/result.json\n", out.string());
  if (W.data && W.verify && !r.correct) {
    std::cerr << "error: the AllReduce result is numerically wrong\n";
    return 1;
  }
  return 0;
}

int cmd_run(const RunArgs& a) {
  std::string kind;
  auto doc = load_fabric_doc(a, kind);
  if (kind == "pcie-host") return cmd_run_host(a, doc);
  if (kind != "link-pair") return cmd_run_fabric(a, doc);
  const config::LinkExperimentConfig cfg = config::parse_link_experiment(config::root_section(doc));
  if (!a.quiet)
    std::cout << fmt::format("fabricsim run: {} ({}), policy {}, seed {}, {} flits every {} ns\n", cfg.name,
                             a.fabric, cfg.link.policy_name, cfg.seed, cfg.traffic.flits,
                             cfg.traffic.period_ps / 1000.0);
  report::TraceWriter tw;
  const sim::LinkRunResult r = sim::run_link_experiment(cfg, a.trace ? &tw : nullptr);
  if (!r.ok) {
    std::cerr << "error: the run could not finish: " << r.diagnosis << "\n";
    return 3;
  }
  write_atomic(fs::path(a.out) / "result.json", r.json.dump(2) + "\n");
  if (a.trace) write_trace(a.out, tw, a.quiet);
  if (!a.quiet) {
    const auto& m = r.metrics;
    const auto& l = r.json["link"];
    std::cout << fmt::format(
        "  goodput {:.2f} Gb/s   P99 latency {:.2f} us   delivered {} flits (order violations {}, missing {})\n"
        "  replayed {} flits   FEC {:.1f} KiB   reverse control {:.1f} KiB   terminal failures {}\n"
        "  first-attempt raw errors {}   mean exposed suffix {:.1f} flits   admission stall {:.0f} ns (window) "
        "{:.0f} ns (replay)\n"
        "  channel estimate a={:.5f} b={:.5f} (injected {} / {}) over {} steps\n"
        "  wrote {}\n",
        m.goodput_gbps, m.p99_us, m.delivered_flits, r.json["sink"]["order_violations"].get<std::uint64_t>(),
        r.json["sink"]["missing"].get<std::uint64_t>(), m.replayed_flits, m.fec_bytes / 1024.0,
        m.control_bytes / 1024.0, m.terminal_failures, m.first_attempt_errors,
        l["mean_exposed_suffix_flits"].get<double>(), l["admission_stall_window_ns"].get<double>(),
        l["admission_stall_replay_ns"].get<double>(),
        r.json["channel"]["p_good_to_bad_estimate"].get<double>(),
        r.json["channel"]["p_bad_to_good_estimate"].get<double>(), cfg.link.channel.a, cfg.link.channel.b,
        r.json["channel"]["steps"].get<std::uint64_t>(), (fs::path(a.out) / "result.json").string());
    if (m.terminal_failures)
      std::cout << "  link went down: " << l["diagnosis"].get<std::string>() << "\n";
  }
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
  auto* run = app.add_subcommand("run", "run one simulation; prints a summary and writes DIR/result.json");
  run->add_option("fabric", ra.fabric, "fabric YAML (default: topologies/ring8.yaml)");
  run->add_option("--set", ra.sets, "override a parameter: key.path=value (repeatable)");
  run->add_option("--seed", ra.seed, "seed, 0 to 2^64-1 (overrides run.seed)");
  run->add_option("--policy", ra.policy, "fixed-strong | post-decode | predictive-fec | preface");
  run->add_option("--out", ra.out, "output directory")->capture_default_str();
  run->add_flag("--quiet", ra.quiet, "no summary on stdout");
  run->add_flag("--trace", ra.trace, "also write DIR/trace.json (Chrome / Perfetto trace events)");

  std::string study_file, sweep_out;
  unsigned jobs = std::max(1u, std::thread::hardware_concurrency());
  auto* sweep = app.add_subcommand("sweep", "run a study (points in parallel processes); writes results.csv, summary.json");
  sweep->add_option("study", study_file, "study YAML")->required();
  sweep->add_option("--jobs,-j", jobs, "parallel processes")->check(CLI::Range(1u, 1024u))->capture_default_str();
  sweep->add_option("--out", sweep_out, "output directory (default: out/<study name>)");

  std::string check_fabric, check_dot;
  std::vector<std::string> check_sets;
  auto* check = app.add_subcommand("check", "validate a fabric, print its summary, write its graph as Graphviz DOT");
  check->add_option("fabric", check_fabric, "fabric YAML")->required();
  check->add_option("--set", check_sets, "override a parameter: key.path=value (repeatable)");
  check->add_option("--dot", check_dot, "DOT output file (default: out/<fabric name>.dot)");

  std::string bench_study = "topologies/studies/preface-primary.yaml";
  auto* bench = app.add_subcommand("bench", "measure simulated flit transmissions per wall-second on one core");
  bench->add_option("study", bench_study, "study YAML to time")->capture_default_str();

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    return rc == 0 ? 0 : 2;
  }

  try {
    if (*run) {
      if (ra.fabric.empty()) ra.fabric = resolve_default(kDefaultFabric);
      return cmd_run(ra);
    }
    if (*sweep) {
      const sim::Study st = sim::load_study(study_file);
      sim::SweepOptions o;
      o.jobs = jobs;
      o.out_dir = sweep_out.empty() ? (fs::path("out") / st.name).string() : sweep_out;
      o.self_exe = self_exe(argv[0]);
      const int rc = sim::run_sweep(st, o);
      if (rc == 0) std::cout << fmt::format("wrote {0}/results.csv and {0}/summary.json\n", o.out_dir);
      return rc;
    }
    if (*bench) return cli::run_bench(resolve_default(bench_study));
    if (*check) {
      RunArgs ca;
      ca.fabric = check_fabric;
      ca.sets = check_sets;
      std::string kind;
      auto doc = load_fabric_doc(ca, kind);
      if (kind == "link-pair") {
        const auto cfg = config::parse_link_experiment(config::root_section(doc));
        std::cout << fmt::format("fabric {} (link-pair): 2 endpoints, 1 link, policy {}\n", cfg.name,
                                 cfg.link.policy_name);
        if (!check_dot.empty()) std::cout << "no graph written: a link-pair fabric has no fabric graph\n";
        return 0;
      }
      if (kind == "pcie-host") {
        const auto hc = fabric::parse_host(config::root_section(doc));
        const std::string dot = dot_path(hc.host.name, check_dot);
        write_atomic(dot, fabric::host_dot(hc.host));
        std::cout << fabric::host_summary(hc) << fmt::format("wrote {}\n", dot);
        return 0;
      }
      const auto cfg = fabric::parse_fabric(config::root_section(doc));
      sim::validate_fabric(cfg);
      const fabric::FabricGraph g(cfg.fabric);
      const std::string dot = dot_path(cfg.fabric.name, check_dot);
      write_atomic(dot, g.to_dot());
      std::cout << g.summary() << fmt::format("wrote {}\n", dot);
      return 0;
    }
  } catch (const config::ConfigError& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 2;
  } catch (const fabric::FabricError& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
