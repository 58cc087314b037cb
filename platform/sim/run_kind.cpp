#include "platform/sim/run_kind.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "models/rifl/core/rifl_link.h"
#include "platform/config/link_config.h"
#include "platform/config/rifl_config.h"
#include "platform/fabric/fabric_config.h"
#include "platform/fabric/fabric_graph.h"
#include "platform/fabric/host_config.h"
#include "platform/sim/fabric_platform.h"
#include "platform/sim/fabric_run.h"
#include "platform/sim/host_platform.h"
#include "platform/sim/schedule_report.h"

namespace fabricsim::sim {

namespace {

// ---- check, per family ------------------------------------------------------

FabricCheck check_link_pair(std::shared_ptr<config::Document> doc) {
  const auto cfg = config::parse_link_experiment(config::root_section(doc));
  FabricCheck c;
  c.name = cfg.name;
  c.summary = fmt::format("fabric {} (link-pair): 2 endpoints, 1 link, policy {}{}\n", cfg.name, cfg.link.policy_name,
                          cfg.link.channel_model == link::LinkConfig::ChannelModel::independent
                              ? fmt::format(", independent channel at BER {:.3g}", cfg.link.ber)
                              : std::string());
  return c;
}

FabricCheck check_rifl_link(std::shared_ptr<config::Document> doc) {
  const auto cfg = config::parse_rifl_experiment(config::root_section(doc));
  const auto& l = cfg.link;
  FabricCheck c;
  c.name = cfg.name;
  c.summary = fmt::format(
      "fabric {} (rifl-link): 2 endpoints, 1 bonded RIFL link of {} lanes x {} Gb/s, {}-bit frames, "
      "{}, {} B per direction{}\n",
      cfg.name, l.lanes, l.lane_rate_bps / 1e9, l.frame_bits, config::rifl_channel_text(l), l.bytes_per_direction,
      l.fec_on ? fmt::format(", light FEC {} ({:g} % parity, {} symbols per codeword)", l.fec.name,
                             l.fec.overhead * 100, l.fec.correctable)
               : std::string());
  const rifl::RiflDerived d = rifl::derive(l);  // the loader has validated l (derive's errors are exit 2 there)
  c.summary += fmt::format(
      "  derived: slot {:.3f} ns, one way H = {} slots ({:.1f} ns), retransmit buffer B = {} frames, "
      "flow control off / on / buffer = {} / {} / {} frames per lane\n",
      d.slot_ns, d.delay_slots, d.one_way_ns, d.buffer, d.fc_off, d.fc_on, d.fc_buffer);
  return c;
}

FabricCheck check_pcie_host(std::shared_ptr<config::Document> doc) {
  const auto hc = fabric::parse_host(config::root_section(doc));
  FabricCheck c;
  c.name = hc.host.name;
  c.summary = fabric::host_summary(hc);
  if (const auto& S = hc.workload.schedule)
    c.summary += schedule_summary(*S, hc.workload.schedule_path, hc.workload.size_bytes,
                                  hc.host.gpu.threadblock_rate_bytes_per_s > 0 ? sw::kRatePieceBytes : 0) +
                 schedule_warnings(*S, hc.workload.size_bytes);
  c.summary += "global address map (name, base, size):\n" + host_address_map(hc).table() +
               "  (every GPU of the host; a run elaborates those of workload.group)\n";
  c.dot = fabric::host_dot(hc.host);
  return c;
}

FabricCheck check_ualink_fabric(std::shared_ptr<config::Document> doc) {
  const auto cfg = fabric::parse_fabric(config::root_section(doc));
  validate_fabric(cfg);
  const fabric::FabricGraph g(cfg.fabric);
  FabricCheck c;
  c.name = cfg.fabric.name;
  c.summary = g.summary();
  if (const auto& S = cfg.workload.schedule) {
    bool tb_rate = false;
    for (const auto& n : cfg.fabric.nodes)
      tb_rate = tb_rate || (n.kind == "accelerator" && n.accel.threadblock_rate_bytes_per_s > 0);
    c.summary += schedule_summary(*S, cfg.workload.schedule_path, cfg.workload.collective.bytes,
                                  tb_rate ? sw::kRatePieceBytes : 0) +
                 schedule_warnings(*S, cfg.workload.collective.bytes);
  }
  c.summary += "global address map (name, base, size):\n" + address_map(cfg).table();
  if (cfg.fabric.initiators() > 0) {
    c.summary += "tlm-initiators (target socket bound by user code):";
    for (const auto& n : cfg.fabric.nodes)
      if (n.kind == fabric::kTlmInitiator) c.summary += " " + n.id;
    c.summary += "\n";
  }
  c.dot = g.to_dot();
  return c;
}

// ---- parse only, per family ---------------------------------------------------

void parse_link_pair(std::shared_ptr<config::Document> d) { config::parse_link_experiment(config::root_section(d)); }
void parse_rifl_link(std::shared_ptr<config::Document> d) { config::parse_rifl_experiment(config::root_section(d)); }

// Estimated CPU seconds of a rifl-link run (sweep ordering only; no result
// depends on it). Clean frames are skipped arithmetically, so the cost is
// the packets' statistics plus the lane slots stepped around hits:
//   packets x 6e-8 s + N x slots per lane x min(1, 76 p) x 6e-8 s,
// p = frame hits per lane slot (both directions: 1 - (1 - ber)^F each, or
// the Gilbert-Elliott chain's stationary corruption probability per step,
// spread over a step's frames), slots per
// lane = segments / N x (1 + 7 B N p) (the recoveries' slowdown). The
// constants are this implementation's, measured at BER 1e-5 on the shipped
// link (docs/performance.md: ~76 stepped lane slots per hit, 37x the
// error-free slots, ~290 CPU-s for its 4.8e9 stepped lane slots).
double cost_rifl_link(std::shared_ptr<config::Document> d) {
  const auto cfg = config::parse_rifl_experiment(config::root_section(d));
  const auto& c = cfg.link;
  const rifl::RiflDerived dv = rifl::derive(c);
  auto frame_p = [&](double ber) { return -std::expm1(c.frame_bits * std::log1p(-std::min(ber, 0.5))); };
  double p = 0;
  if (c.channel == rifl::RiflConfig::Channel::independent) {
    p = frame_p(c.ber_ab) + (c.errors_ba ? frame_p(c.ber_ba) : 0.0);
  } else {
    // per chain step: a step is a frame slot, or (chain_step flit) the K
    // frames of a codeword's data, of which a corrupted step hits about
    // min(K, mean magnitude) (its m symbol errors land in distinct frames)
    const double bad = c.ge.stationary_bad();
    const double K = c.ge_step == rifl::RiflConfig::GeStep::flit
                         ? std::max(1.0, static_cast<double>(c.fec_codeword_data_bits) / c.frame_bits)
                         : 1.0;
    auto hits = [&](double e, std::uint32_t m) { return e * std::min(K, 0.5 * (1.0 + m)) / K; };
    p = (c.errors_ba ? 2.0 : 1.0) * (bad * hits(c.ge.e_bad, c.ge.m_bad) + (1 - bad) * hits(c.ge.e_good, c.ge.m_good));
  }
  const double dirs = c.load_ba ? 2.0 : 1.0;
  const double bytes = static_cast<double>(c.bytes_per_direction) * dirs;
  const double packets = bytes / (0.5 * (static_cast<double>(c.payload_min) + c.payload_max));
  const double N = c.lanes;
  const double lane_slots =
      static_cast<double>(c.bytes_per_direction) / dv.payload_bytes / N * (1.0 + 7.0 * dv.buffer * N * p);
  return packets * 6e-8 + N * lane_slots * std::min(1.0, 76.0 * p) * 6e-8;
}
void parse_pcie_host(std::shared_ptr<config::Document> d) { fabric::parse_host(config::root_section(d)); }
void parse_ualink_fabric(std::shared_ptr<config::Document> d) { fabric::parse_fabric(config::root_section(d)); }

// ---- result columns, per family (the "row" each run writes into result.json:
// link_experiment.cpp, fabric_run.cpp, host_run.cpp, rifl_experiment.cpp) ----

const std::vector<std::string> kLinkColumns{"policy",
                                            "seed",
                                            "goodput_gbps",
                                            "p99_us",
                                            "replayed_flits",
                                            "fec_bytes",
                                            "control_bytes",
                                            "terminal_failures",
                                            "first_attempt_errors",
                                            "delivered_flits"};
// The protocol comparison's columns, in the rows of both link experiments
// (topologies/studies/link-protocols.yaml).
const std::vector<std::string> kProtocolRowKeys{"protocol", "channel", "wire_ber", "goodput_gbps", "p99_latency_ns",
                                                "retransmitted_bytes", "reverse_bytes", "seed"};
std::vector<std::string> with_protocol_keys(std::vector<std::string> keys) {
  for (const auto& k : kProtocolRowKeys)
    if (std::find(keys.begin(), keys.end(), k) == keys.end()) keys.push_back(k);
  return keys;
}
const std::vector<std::string> kLinkMetrics{
    "goodput_gbps",         "p99_us",         "replayed_flits", "fec_bytes", "control_bytes", "terminal_failures",
    "first_attempt_errors", "delivered_flits"};
const std::vector<std::string> kFabricColumns{"ranks",   "size_bytes",     "policy",   "seed",
                                              "time_us", "replayed_flits", "fec_bytes"};
const std::vector<std::string> kFabricRowKeys{
    "ranks",     "size_bytes",        "policy",     "seed",       "time_us",    "replayed_flits", "fec_bytes",
    "terminal_failures", "algbw_GBps", "busbw_GBps", "collective", "algorithm", "correct",
    "protocol",  "channel",           "wire_ber"};
const std::vector<std::string> kFabricMetrics{"time_us", "replayed_flits", "fec_bytes"};
// PCIe host cells: the report's per-operation table (host-bridge.md §4, §7).
const std::vector<std::string> kHostColumns{"group",  "transport", "size_bytes", "ops",         "mean_us",
                                            "p50_us", "p99_us",    "max_us",     "ops_over_1ms"};
const std::vector<std::string> kHostRowKeys{"group",         "transport", "size_bytes", "seed",   "ops",
                                            "mean_us",       "p50_us",    "p99_us",     "max_us", "ops_over_1ms",
                                            "stalled_reads", "drains",    "selection",  "picks",  "round_us",
                                            "algorithm",     "time_us",   "algbw_GBps", "busbw_GBps", "correct"};
// ops is a result too (it varies with the seed), not an axis of the cells.
const std::vector<std::string> kHostMetrics{"ops", "mean_us", "p50_us", "p99_us", "max_us", "ops_over_1ms"};
// RIFL link runs: the BER study's table (rifl.md "Evaluation setup").
const std::vector<std::string> kRiflColumns{"ber",
                                            "bandwidth_ratio",
                                            "mean_latency_ns",
                                            "p99_latency_ns",
                                            "p999_latency_ns",
                                            "retransmitted_frames",
                                            "undetected_errors",
                                            "mtbf_years"};
const std::vector<std::string> kRiflRowKeys{"ber",
                                            "bandwidth_ratio",
                                            "analytic_bandwidth_ratio",
                                            "mean_latency_ns",
                                            "p99_latency_ns",
                                            "p999_latency_ns",
                                            "retransmitted_frames",
                                            "undetected_errors",
                                            "mtbf_years",
                                            "frame_bits",
                                            "payload_bytes",
                                            "bandwidth_efficiency",
                                            "goodput_gbps",
                                            "seed"};
const std::vector<std::string> kRiflMetrics{"bandwidth_ratio", "mean_latency_ns",      "p99_latency_ns",
                                            "p999_latency_ns", "retransmitted_frames", "undetected_errors"};

}  // namespace

bool text_row_key(const std::string& key) {
  // ber and mtbf_years: a RIFL row writes them as text (sci notation, n/a).
  static const std::vector<std::string> text{"policy",    "protocol",  "channel",   "wire_ber", "collective",
                                             "algorithm", "correct",   "group",     "transport", "selection",
                                             "picks",     "variant",   "ber",       "mtbf_years"};
  return std::find(text.begin(), text.end(), key) != text.end();
}

namespace {

const RunKind& link_pair() {
  static const RunKind k{RunKind::Family::link_pair,
                         "link.policy.name",
                         "",
                         kLinkColumns,
                         with_protocol_keys(kLinkColumns),
                         kLinkMetrics,
                         true,
                         true,
                         false,
                         &check_link_pair,
                         &parse_link_pair};
  return k;
}
const RunKind& ualink_fabric() {
  static const RunKind k{RunKind::Family::ualink_fabric,
                         "defaults.link.policy.name",
                         "",
                         kFabricColumns,
                         kFabricRowKeys,
                         kFabricMetrics,
                         true,
                         true,
                         true,
                         &check_ualink_fabric,
                         &parse_ualink_fabric};
  return k;
}
const RunKind& pcie_host() {
  static const RunKind k{RunKind::Family::pcie_host,
                         "",
                         "a pcie-host fabric has no link policy (its links are error-free PCIe)",
                         kHostColumns,
                         kHostRowKeys,
                         kHostMetrics,
                         false,
                         false,
                         true,
                         &check_pcie_host,
                         &parse_pcie_host};
  return k;
}
const RunKind& rifl_link() {
  static const RunKind k{RunKind::Family::rifl_link,
                         "",
                         "a rifl-link fabric has no FEC policy (RIFL retransmits; see docs/models/rifl.md)",
                         kRiflColumns,
                         with_protocol_keys(kRiflRowKeys),
                         kRiflMetrics,
                         true,
                         false,
                         false,
                         &check_rifl_link,
                         &parse_rifl_link,
                         &cost_rifl_link};
  return k;
}

}  // namespace

const RunKind& run_kind(const std::string& kind) {
  if (kind == "link-pair") return link_pair();
  if (kind == "ring" || kind == "switched-pod" || kind == "explicit") return ualink_fabric();
  if (kind == "pcie-host") return pcie_host();
  if (kind == "rifl-link") return rifl_link();
  throw std::invalid_argument("run_kind: unknown fabric kind '" + kind + "'");
}

const RunKind& run_kind_of(const config::Document& doc) { return run_kind(fabric::fabric_kind(doc)); }

}  // namespace fabricsim::sim
