#include "platform/sim/link_experiment.h"

#include <fmt/format.h>

#include <systemc>
#include <tlm>

#include <algorithm>
#include <memory>

#include "platform/sim/kernel_hooks.h"
#include "platform/sim/link_pair_platform.h"
#include "platform/stats/tail_percentile.h"

namespace fabricsim::sim {

std::uint64_t default_deadline_ps(const config::LinkExperimentConfig& c) {
  return c.traffic.start_ps + 100 * c.traffic.flits * c.traffic.period_ps + 1000000000ULL;
}

namespace {

// Trace: forward transmissions (seq / replay spans) and each change of FEC profile or window.
link::LinkEngine::TxObserver trace_setup(report::TraceWriter* trace, LinkPairPlatform& top,
                                         const config::LinkExperimentConfig& c) {
  trace->name_process(1, top.port().name());
  trace->name_thread(1, 1, "forward transmissions");
  trace->name_thread(1, 2, "FEC profile / window W_t");
  std::vector<link::ps_t> wire;
  for (const auto& p : c.link.fec_menu)
    wire.push_back(link::wire_time_ps(c.link.flit_bytes * (1.0 + p.overhead), c.link.forward_rate_bps));
  auto last = std::make_shared<std::pair<int, std::uint32_t>>(-1, 0);
  return [trace, wire, last, menu = c.link.fec_menu](const link::TxRecord& x) {
    trace->span((x.replay ? "replay " : "seq ") + std::to_string(x.seq), x.replay ? "replay" : "tx", 1, 1, x.start_ps,
                wire[x.profile],
                {{"attempt", x.attempt},
                 {"profile", menu[x.profile].name},
                 {"magnitude", x.magnitude},
                 {"occupancy", x.occupancy},
                 {"window", x.window}});
    if (last->first != static_cast<int>(x.profile) || last->second != x.window) {
      trace->instant(menu[x.profile].name + " W=" + std::to_string(x.window), "policy", 1, 2, x.start_ps);
      *last = {static_cast<int>(x.profile), x.window};
    }
  };
}

// Per-flit latencies, sampled at each delivery (no per-flit record): the
// nearest-rank P99s are selected exactly from their tails (TailPercentile).
// Samples are the differences in ps (as doubles); the unit conversion is
// applied to the selected one: x / 1e6 is non-decreasing in x, so the
// nearest-rank value of the converted samples is the converted nearest-rank
// value (the same double as converting every sample first).
struct LatencySamples {
  explicit LatencySamples(std::uint64_t max_flits)
      : offered(99.0, std::max<std::uint64_t>(1, max_flits)), wire(99.0, std::max<std::uint64_t>(1, max_flits)) {}
  stats::TailPercentile offered;  // delivery - scheduled arrival, ps
  stats::TailPercentile wire;     // delivery - first serialization start, ps
};

// Delivery metrics of the stream: goodput over the delivery span, p99 latency against the offered schedule.
void link_metrics(const config::LinkExperimentConfig& c, const link::LinkEngine& eng, const models::flit_sink& sink,
                  const LatencySamples& lat, LinkRunResult& r) {
  const auto& st = eng.stats();
  LinkMetrics& m = r.metrics;
  m.delivered_flits = sink.received();
  if (m.delivered_flits > 0) {
    const double first_arrival = static_cast<double>(c.traffic.start_ps);
    const double span_ps = static_cast<double>(sink.last_delivery_ps()) - first_arrival;
    m.goodput_gbps =
        span_ps > 0 ? static_cast<double>(m.delivered_flits) * c.link.flit_bytes * 8.0 / span_ps * 1e3 : 0.0;
    m.p99_us = lat.offered.value() / 1e6;
    m.p99_latency_ns = lat.wire.value() / 1e3;
  }
  m.retransmitted_bytes = st.retransmitted_bytes;
  m.replayed_flits = eng.replayed_flits();
  m.fec_bytes = st.fec_bytes;
  m.control_bytes = st.control_bytes;
  m.terminal_failures = st.terminal_failures;
  m.first_attempt_errors = st.first_attempt_errors;
}

// result.json: status, config echo, metrics, the study row, link, channel and sink statistics.
void result_json(const config::LinkExperimentConfig& c, LinkPairPlatform& top, link::LinkEngine::Status status,
                 LinkRunResult& r) {
  const auto& eng = top.port().engine();
  const auto& st = eng.stats();
  const LinkMetrics& m = r.metrics;
  auto& j = r.json;
  j["fabricsim"] = "0.1.0";
  j["status"] = link::to_string(status);
  j["config"] = config::to_json(c);
  j["metrics"] = {{"goodput_gbps", m.goodput_gbps},
                  {"p99_us", m.p99_us},
                  {"replayed_flits", m.replayed_flits},
                  {"fec_bytes", m.fec_bytes},
                  {"control_bytes", m.control_bytes},
                  {"terminal_failures", m.terminal_failures},
                  {"first_attempt_errors", m.first_attempt_errors},
                  {"delivered_flits", m.delivered_flits}};
  j["row"] = {{"policy", c.link.policy_name}, {"seed", c.seed}};
  for (const auto& [k, v] : j["metrics"].items()) j["row"][k] = v;
  // The protocol comparison's columns (shared with the RIFL link's row).
  const bool indep = c.link.channel_model == link::LinkConfig::ChannelModel::independent;
  j["row"]["protocol"] = "ualink-" + c.link.policy_name;
  j["row"]["channel"] = indep ? "independent" : "gilbert-elliott";
  j["row"]["wire_ber"] = indep ? fmt::format("{:.4g}", c.link.ber) : std::string("");
  j["row"]["p99_latency_ns"] = m.p99_latency_ns;
  j["row"]["retransmitted_bytes"] = m.retransmitted_bytes;
  j["row"]["reverse_bytes"] = m.control_bytes;
  if (status == link::LinkEngine::Status::link_down) {
    // The stream did not complete: no goodput or latency to average in a study.
    for (auto* t : {&j["row"], &j["metrics"]}) {
      (*t)["goodput_gbps"] = nullptr;
      (*t)["p99_us"] = nullptr;
    }
    j["row"]["p99_latency_ns"] = nullptr;
  }
  nlohmann::ordered_json residency;
  for (std::size_t k = 0; k < c.link.fec_menu.size(); ++k)
    residency[c.link.fec_menu[k].name] = st.profile_transmissions[k];
  j["link"] = {{"module", top.port().name()},
               {"offered", st.offered},
               {"transmissions", st.transmissions},
               {"first_transmissions", st.first_transmissions},
               {"retransmissions", st.retransmissions},
               {"replay_scheduled", st.replay_scheduled},
               {"stale_copies", st.stale_copies},
               {"mean_exposed_suffix_flits",
                st.requests_served ? static_cast<double>(st.replay_scheduled) / st.requests_served : 0.0},
               {"raw_errors", st.raw_errors},
               {"residual_errors", st.residual_errors},
               {"duplicates_dropped", st.duplicates_dropped},
               {"out_of_order_dropped", st.out_of_order_dropped},
               {"requests_generated", st.requests_generated},
               {"request_copies_received", st.request_copies_received},
               {"requests_served", st.requests_served},
               {"requests_ignored", st.requests_ignored},
               {"control_flits", st.control_flits},
               {"acks_coalesced", st.acks_coalesced},
               {"profile_transmissions", residency},
               {"profile_switches", st.profile_switches},
               {"admission_stall_window_ns", st.admission_stall_window_ps / 1e3},
               {"admission_stall_replay_ns", st.admission_stall_replay_ps / 1e3},
               {"max_occupancy", st.max_occupancy}};
  if (status == link::LinkEngine::Status::link_down) j["link"]["diagnosis"] = top.port().diagnosis();
  if (indep) {
    j["link"]["wire_bits"] = eng.wire_bits();
    j["link"]["wire_bit_errors"] = eng.wire_bit_errors();
  }
  const auto& ch = eng.channel();
  j["channel"] = {{"steps", ch.steps_generated()},
                  {"p_good_to_bad", ch.params().a},
                  {"p_bad_to_good", ch.params().b},
                  {"p_good_to_bad_estimate", ch.estimate_a()},
                  {"p_bad_to_good_estimate", ch.estimate_b()}};
  j["sink"] = {{"module", top.sink().name()},
               {"received", top.sink().received()},
               {"order_violations", top.sink().order_violations()},
               {"data_errors", top.sink().data_errors()},
               {"missing", c.traffic.flits - std::min<std::uint64_t>(c.traffic.flits, top.sink().received())}};
}

}  // namespace

LinkRunResult run_link_experiment(const config::LinkExperimentConfig& c, report::TraceWriter* trace, bool real_bytes,
                                  bool progress) {
  LinkRunResult r;
  const std::uint64_t deadline = c.deadline_ps ? c.deadline_ps : default_deadline_ps(c);
  LinkPairPlatform top(c, deadline, real_bytes);
  if (trace) top.port().set_tx_observer(trace_setup(trace, top, c));
  top.port().record_first_transmissions();  // the wire latency (p99_latency_ns)
  // Flit seq (the seq-th delivered, in order) was offered at start + seq x period.
  LatencySamples lat(c.traffic.flits);
  top.port().set_delivery_observer([&lat, &c, &eng = top.port().engine()](std::uint64_t seq, link::ps_t t) {
    const double td = static_cast<double>(t);
    lat.offered.add(td - static_cast<double>(c.traffic.start_ps + seq * c.traffic.period_ps));
    lat.wire.add(td - static_cast<double>(eng.first_transmission_time(seq)));
  });
  std::unique_ptr<ProgressLine> line;
  if (progress) {
    line = std::make_unique<ProgressLine>([flits = c.traffic.flits](std::uint64_t sim_ps, std::uint64_t done) {
      return fmt::format("{:.1f} us simulated, {} of {} flits delivered", sim_ps / 1e6, done, flits);
    });
    top.port().set_progress_hook([l = line.get()](link::ps_t t, std::uint64_t done) { l->tick(t, done); });
  }
  r.diagnosis = top.start();
  if (line) line->finish();
  if (!r.diagnosis.empty()) return r;
  const auto& eng = top.port().engine();
  const auto status = eng.status();
  if (status != link::LinkEngine::Status::done && status != link::LinkEngine::Status::link_down) {
    r.ok = false;
    r.diagnosis = top.port().diagnosis();
    return r;
  }
  r.ok = true;
  link_metrics(c, eng, top.sink(), lat, r);
  result_json(c, top, status, r);
  return r;
}

}  // namespace fabricsim::sim
