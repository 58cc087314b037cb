#include "platform/sim/rifl_experiment.h"

#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <cstdio>

#include "models/rifl/core/analytic.h"
#include "models/rifl/core/crc12.h"
#include "platform/stats/summary.h"

namespace fabricsim::sim {

namespace {
constexpr double kSecondsPerYear = 365.25 * 24 * 3600;

std::string sci(double v) { return fmt::format("{:.4g}", v); }
}  // namespace

namespace {

// The MTBF and the analytic ratio are estimates for independent bit errors
// at the configured BER on the wire (no light FEC in between).
bool raw_ber_estimates(const rifl::RiflConfig& c) {
  return !c.fec_on && c.channel == rifl::RiflConfig::Channel::independent;
}

// Trace: one thread per lane and direction with a span per retransmission (recovery).
void trace_setup(report::TraceWriter* trace, const config::RiflExperimentConfig& cfg, rifl::RiflLink& link) {
  const rifl::RiflConfig& c = cfg.link;
  const auto& d = link.derived();
  trace->name_process(1, cfg.name);
  for (std::uint32_t l = 0; l < c.lanes; ++l)
    for (int x = 0; x < 2; ++x)
      trace->name_thread(1, static_cast<int>(2 * l + x + 1),
                         fmt::format("lane {} {} recoveries", l, x ? "B->A" : "A->B"));
  link.set_recovery_observer([trace, &d](const rifl::RecoveryEvent& e) {
    const auto ps = [&](std::uint64_t slot) {
      return static_cast<std::uint64_t>(std::llround(slot * d.slot_ns * 1e3));
    };
    trace->span(fmt::format("retransmission: {} frames replayed{}", e.replayed, e.open ? " (open at the end)" : ""),
                "retransmit", 1,
                static_cast<int>(2 * e.lane + e.dir + 1), ps(e.start_slot), ps(e.end_slot) - ps(e.start_slot),
                {{"lane", e.lane},
                 {"direction", e.dir ? "B->A" : "A->B"},
                 {"replayed_frames", e.replayed},
                 {"slots", e.end_slot - e.start_slot},
                 {"open_at_end", e.open}});
  });
}

// Error-free reference: the same packets over a clean channel; its slots, or
// false (diagnosis set) if that run fails.
bool error_free_slots(const rifl::RiflConfig& c, const rifl::RiflLink& link, std::uint64_t& clean_slots,
                      RiflRunResult& r) {
  if (c.ber_ab == 0 && c.ber_ba == 0 && c.channel == rifl::RiflConfig::Channel::independent) {
    clean_slots = link.slots();
  } else {
    rifl::RiflConfig cc = c;
    cc.channel = rifl::RiflConfig::Channel::independent;
    cc.ber_ab = cc.ber_ba = 0;
    rifl::RiflLink clean(cc);
    if (clean.run() != rifl::RiflLink::Status::done) {
      r.diagnosis = "error-free reference run: " + clean.diagnosis();
      return false;
    }
    clean_slots = clean.slots();
  }
  return true;
}

// Out-of-order acceptances at an isolated frame failure: a scripted copy of
// the link (same lanes, buffer, delays and traffic; error sources off) with
// kProbeFailures single-bit errors in fresh data frames of lane 0 A->B, each
// 4 (3B + 4H) + 4099 slots after the last (far past a recovery's 3B + 4H
// slots, so each is isolated, and at counter phases spread over 0..4095),
// counts the data frames its receivers get while expecting another counter
// (RiflLink::count_mismatched_frames). Used where the run itself had too few
// hit frames to measure its own exposure (rifl_figures).
constexpr std::uint64_t kProbeFailures = rifl::kIsolatedProbeFailures;
struct IsolatedExposure {
  std::vector<std::uint64_t> h[2];  // mismatched frames by needed syndrome, A->B and B->A
  std::uint64_t failures = 0;       // scripted errors that hit a data frame
  bool ok = false;
};
IsolatedExposure isolated_failure_probe(const rifl::RiflConfig& c, const rifl::RiflDerived& d) {
  IsolatedExposure x;
  const std::uint64_t spacing = rifl::isolated_probe_spacing_slots(d);
  rifl::RiflConfig pc = c;
  pc.ber_ab = pc.ber_ba = 0;
  pc.deadline_slots = 0;
  // saturating through the last failure's recovery: every lane busy for
  // (kProbeFailures + 2) x spacing slots
  pc.bytes_per_direction = rifl::isolated_probe_bytes_per_direction(c, d, kProbeFailures);
  rifl::RiflLink probe(pc);
  rifl::RiflLink::Script sc;
  for (std::uint64_t k = 1; k <= kProbeFailures; ++k) sc.slots.push_back(k * spacing);
  sc.flips = [&x](std::uint32_t lane, int dir, std::uint64_t, rifl::FrameKind kind) {
    if (lane != 0 || dir != 0 || kind != rifl::FrameKind::data_valid) return std::vector<std::uint16_t>{};
    ++x.failures;
    return std::vector<std::uint16_t>{100};  // a payload bit
  };
  sc.skip_ahead = true;  // clean runs between the failures skipped (results as stepped)
  probe.set_script(std::move(sc));
  probe.count_mismatched_frames();
  x.ok = probe.run() == rifl::RiflLink::Status::done && x.failures > 0;
  for (int i = 0; i < 2; ++i) x.h[i] = probe.mismatched_frames(i);
  return x;
}

// The figures of one run (rifl.md): bandwidth ratio against the error-free
// run, goodput per direction, latencies, undetected errors and MTBF.
struct RiflFigures {
  double payload = 0, span_ns = 0, goodput_gbps = 0, ratio = 0, efficiency = 0;
  double mean = 0, p99 = 0, p999 = 0;  // latency, ns
  double ber_mean = 0, p_ud = 0, mtbf_years = 0, analytic = 0, mean_payload = 0;
  double ud_truncation_bound = 0;
  // Out-of-order acceptances (replayed or in-flight frames whose error
  // pattern has the syndrome of their counter's XOR with the expected one).
  double misordered_expected = 0;  // sum over the run's mismatched frames of P(that syndrome)
  std::uint64_t misordered_observed = 0;
  double misordered_per_s = 0, crc_pass_per_s = 0;
  std::string misordered_estimator;             // "run" | "isolated-failure probe" | ""
  double per_failure_ab = NAN, per_failure_ba = NAN;  // probe: expected acceptances per failure
  std::uint32_t crc_min_distance = 0;
  std::uint64_t retx = 0, undetected = 0;
};

RiflFigures rifl_figures(const rifl::RiflConfig& c, const rifl::RiflLink& link, std::uint64_t clean_slots) {
  const auto& d = link.derived();
  RiflFigures f;
  const auto& s0 = link.stats(0);
  const auto& s1 = link.stats(1);
  f.payload = static_cast<double>(s0.payload_bytes + (c.load_ba ? s1.payload_bytes : 0));
  f.span_ns = link.slots() * d.slot_ns;
  f.goodput_gbps = f.payload * 8 / f.span_ns / (c.load_ba ? 2 : 1);  // per direction
  f.ratio = static_cast<double>(clean_slots) / static_cast<double>(link.slots());
  f.efficiency = f.goodput_gbps * 1e9 / (c.lanes * c.lane_rate_bps);
  std::vector<double> lat;
  lat.reserve(link.latencies_slots().size());
  double sum = 0;
  for (auto v : link.latencies_slots()) {
    lat.push_back(v * d.slot_ns);
    sum += v * d.slot_ns;
  }
  f.mean = lat.empty() ? 0 : sum / lat.size();
  f.p99 = lat.empty() ? 0 : stats::percentile_nearest_rank(lat, 99.0);
  f.p999 = lat.empty() ? 0 : stats::percentile_nearest_rank(std::move(lat), 99.9);
  // Undetected errors: simulated count, and the MTBF from the CRC's weight
  // distribution at this BER (every frame slot of every lane, both ways).
  const rifl::UndetectedErrorModel ud(c.frame_bits);
  const double frames_per_s = c.lanes * 2.0 * c.lane_rate_bps / c.frame_bits;
  f.ber_mean = 0.5 * (c.ber_ab + c.ber_ba);
  // Each direction's frames at its own BER (half the frame slots each).
  const double ber_ba = c.errors_ba ? c.ber_ba : 0.0;
  f.p_ud = 0.5 * (ud.probability(c.ber_ab) + ud.probability(ber_ba));
  f.crc_pass_per_s = f.p_ud * frames_per_s;
  // The other kind: a data frame reaching a receiver that expects another
  // counter passes iff its error pattern's syndrome is the XOR of the two
  // counters (rifl::SyndromeDistribution). Rate: the run's own expected count
  // over its simulated time once at least kRunFailures of its frames were hit
  // (its own count then has a relative spread of ~1 %, and recoveries start
  // to overlap); below that (recoveries isolated), the failure
  // rate (frame slots per second x lanes x frame error probability, per
  // direction) times the expected acceptances per isolated failure from a
  // scripted probe of the same link.
  constexpr std::uint64_t kRunFailures = 10000;
  const std::uint64_t failures = link.stats(0).hit_frames + link.stats(1).hit_frames;
  f.misordered_observed = link.stats(0).undetected_misordered + link.stats(1).undetected_misordered;
  const std::vector<std::uint64_t> mm_ab = link.mismatched_frames(0);  // empty unless counted (run_rifl_experiment)
  if (raw_ber_estimates(c) && !mm_ab.empty()) {
    const rifl::SyndromeDistribution p_ab(c.frame_bits, c.ber_ab), p_ba(c.frame_bits, ber_ba);
    f.misordered_expected = p_ab.expected(mm_ab) + p_ba.expected(link.mismatched_frames(1));
    if (failures >= kRunFailures && f.span_ns > 0) {
      f.misordered_estimator = "run";
      f.misordered_per_s = f.misordered_expected / (f.span_ns * 1e-9);
    } else if (c.ber_ab > 0 || ber_ba > 0) {
      const IsolatedExposure x = isolated_failure_probe(c, d);
      if (x.ok) {
        f.misordered_estimator = "isolated-failure probe";
        const double k = static_cast<double>(x.failures);
        // a failure of B->A mirrors one of A->B: the replayed frames are B's
        f.per_failure_ab = (p_ab.expected(x.h[0]) + p_ba.expected(x.h[1])) / k;
        f.per_failure_ba = (p_ba.expected(x.h[0]) + p_ab.expected(x.h[1])) / k;
        const double slots_per_s = 1e9 / d.slot_ns * c.lanes;
        f.misordered_per_s =
            slots_per_s * (rifl::frame_error_probability(c.ber_ab, c.frame_bits) * f.per_failure_ab +
                           rifl::frame_error_probability(ber_ba, c.frame_bits) * f.per_failure_ba);
      }
    }
  }
  const double ud_rate = f.crc_pass_per_s + f.misordered_per_s;
  f.mtbf_years = ud_rate > 0 ? 1.0 / ud_rate / kSecondsPerYear : INFINITY;
  f.analytic = rifl::analytic_bandwidth_ratio(c, d);
  if (!raw_ber_estimates(c)) {
    // Neither estimate covers the light FEC or the Gilbert-Elliott channel:
    // their error patterns (whole-codeword failures, bursts) are not those of
    // independent errors at the configured BER (docs/models/rifl.md).
    f.mtbf_years = NAN;
    f.analytic = NAN;
  }
  f.retx = s0.retransmitted_frames + s1.retransmitted_frames;
  f.undetected = s0.undetected_errors + s1.undetected_errors;
  f.mean_payload = f.payload / static_cast<double>(s0.packets + (c.load_ba ? s1.packets : 0));
  f.ud_truncation_bound = 0.5 * (ud.truncation_bound(c.ber_ab) + ud.truncation_bound(ber_ba));  // as p_ud
  f.crc_min_distance = ud.min_distance();
  return f;
}

// One direction's packets and segments, then its frame and error counters.
nlohmann::ordered_json direction_json(const rifl::DirectionStats& s) {
  nlohmann::ordered_json j = {{"packets", s.packets},
                              {"payload_bytes", s.payload_bytes},
                              {"segments", s.segments},
                              {"delivered_segments", s.delivered_segments}};
  const nlohmann::ordered_json counters = rifl_counters_json(s);
  for (const auto& [k, v] : counters.items()) j[k] = v;
  return j;
}

}  // namespace

nlohmann::ordered_json rifl_counters_json(const rifl::DirectionStats& s) {
  return {{"frames", s.frames},
          {"fresh_data_frames", s.fresh_data},
          {"retransmitted_frames", s.retransmitted_frames},
          {"idle_data_frames", s.idle_data},
          {"flow_control_frames", s.fc_frames},
          {"idle_frames", s.ctrl_idle},
          {"pause_request_frames", s.ctrl_pause},
          {"retransmit_request_frames", s.ctrl_retrans},
          {"clock_compensation_slots", s.clock_comp_slots},
          {"hit_frames", s.hit_frames},
          {"bit_errors", s.bit_errors},
          {"detected_errors", s.detected_errors},
          {"undetected_errors", s.undetected_errors},
          {"undetected_misordered", s.undetected_misordered},
          {"out_of_sync", s.out_of_sync},
          {"retrans_entries", s.recoveries},
          {"flow_control_pauses", s.fc_pauses}};
}

namespace {

// The light FEC's codeword counters of one direction (fec_on only).
nlohmann::ordered_json fec_json(const rifl::DirectionStats& s) {
  return {{"codewords_corrected", s.fec_corrected},
          {"codewords_failed", s.fec_failed},
          {"symbols_corrected", s.fec_symbols_corrected}};
}

// result.json: status, config echo, the study row, derived link parameters, run size, both directions.
void result_json(const config::RiflExperimentConfig& cfg, const rifl::RiflLink& link, std::uint64_t clean_slots,
                 const RiflFigures& f, RiflRunResult& r) {
  const rifl::RiflConfig& c = cfg.link;
  const auto& d = link.derived();
  auto& j = r.json;
  j["fabricsim"] = "0.1.0";
  j["status"] = "done";
  j["config"] = config::to_json(cfg);
  const auto num_or_null = [](double v) {
    return std::isnan(v) ? nlohmann::ordered_json() : nlohmann::ordered_json(v);
  };
  const bool independent = c.channel == rifl::RiflConfig::Channel::independent;
  j["row"] = {{"ber", independent ? sci(f.ber_mean) : std::string("")},
              {"bandwidth_ratio", f.ratio},
              {"analytic_bandwidth_ratio", num_or_null(f.analytic)},
              {"mean_latency_ns", f.mean},
              {"p99_latency_ns", f.p99},
              {"p999_latency_ns", f.p999},
              {"retransmitted_frames", f.retx},
              {"undetected_errors", f.undetected},
              {"mtbf_years", std::isnan(f.mtbf_years)      ? std::string("n/a")
                             : std::isfinite(f.mtbf_years) ? sci(f.mtbf_years)
                                                           : std::string("inf")},
              {"frame_bits", c.frame_bits},
              {"payload_bytes", c.payload_min == c.payload_max ? nlohmann::ordered_json(c.payload_min)
                                                               : nlohmann::ordered_json(f.mean_payload)},
              {"bandwidth_efficiency", f.efficiency},
              {"goodput_gbps", f.goodput_gbps},
              {"seed", c.seed}};
  // The protocol comparison's columns (shared with the UALink link's row).
  {
    const auto& s0 = link.stats(0);
    const auto& s1 = link.stats(1);
    const std::uint64_t frame_bytes = c.frame_bits / 8;
    j["row"]["protocol"] = c.fec_on ? "rifl+" + c.fec.name : std::string("rifl");
    j["row"]["channel"] = c.channel == rifl::RiflConfig::Channel::independent ? "independent" : "gilbert-elliott";
    j["row"]["wire_ber"] = c.channel == rifl::RiflConfig::Channel::independent ? sci(c.ber_ab) : std::string("");
    j["row"]["retransmitted_bytes"] = f.retx * frame_bytes;
    // What the receiving ends send back for the protocol: retransmit and
    // pause requests (RIFL has no ACKs; its idle frames fill an otherwise empty wire).
    j["row"]["reverse_bytes"] = (s0.ctrl_retrans + s0.ctrl_pause + s1.ctrl_retrans + s1.ctrl_pause) * frame_bytes;
  }
  j["derived"] = {{"slot_ns", d.slot_ns},
                  {"one_way_ns", d.one_way_ns},
                  {"delay_slots", d.delay_slots},
                  {"retransmit_buffer_frames", d.buffer},
                  {"fc_on_frames", d.fc_on},
                  {"fc_off_frames", d.fc_off},
                  {"recovery_cost_forward_slots", rifl::recovery_cost(d).forward_slots},
                  {"recovery_cost_reverse_slots", rifl::recovery_cost(d).reverse_slots},
                  {"frame_error_probability", rifl::frame_error_probability(f.ber_mean, c.frame_bits)},
                  {"undetected_per_frame", f.p_ud},
                  {"undetected_truncation_bound", f.ud_truncation_bound},
                  {"crc_min_distance", f.crc_min_distance}};
  if (!f.misordered_estimator.empty()) {
    const auto fin = [](double v) { return std::isfinite(v) ? nlohmann::ordered_json(v) : nlohmann::ordered_json(); };
    // The MTBF's two terms: corrupted frames that pass the CRC (weight
    // distribution) and frames accepted out of order (syndrome distribution).
    j["undetected"] = {{"crc_pass_per_s", f.crc_pass_per_s},
                       {"misordered_per_s", f.misordered_per_s},
                       {"misordered_estimator", f.misordered_estimator},
                       {"misordered_expected_in_run", f.misordered_expected},
                       {"misordered_observed_in_run", f.misordered_observed},
                       {"misordered_per_failure", {fin(f.per_failure_ab), fin(f.per_failure_ba)}}};
  }
  if (raw_ber_estimates(c)) {
    // The terms of the analytic bandwidth ratio (models/rifl/core/analytic.h).
    const rifl::AnalyticTerms t = rifl::analytic_terms(c, d);
    const auto fin = [](double v) { return std::isfinite(v) ? nlohmann::ordered_json(v) : nlohmann::ordered_json(); };
    auto stream = [&](const rifl::FailCost& k, double stall, double blocking, double ratio) {
      return nlohmann::ordered_json{{"failure_cost_own_slots", fin(k.own)},
                                    {"failure_cost_other_slots", fin(k.rev)},
                                    {"lane_stall_slots", fin(stall)},
                                    {"blocking_slots", fin(blocking)},
                                    {"ratio", fin(ratio)}};
    };
    j["analytic"] = {{"first_order_ratio", fin(rifl::analytic_bandwidth_ratio_first_order(c, d))},
                     {"phase_forward_slots", {t.phase.ab_per_ab, t.phase.ba_per_ba}},
                     {"phase_reverse_slots", {t.phase.ab_per_ba, t.phase.ba_per_ab}},
                     {"replay_window_slots", t.window_slots},
                     {"restarts_per_failure", {fin(t.restart_ab), fin(t.restart_ba)}},
                     {"restart_cost_slots", {t.restart.forward_slots, t.restart.reverse_slots}},
                     {"isolated_bank_frames", t.banks.isolated},
                     {"overlap_bank_frames", t.banks.overlap},
                     {"resume_wait_slots", t.resume_wait},
                     {"a_to_b", stream(t.fail_cost_ab, t.stall_ab, t.blocking_ab, t.ratio_ab)},
                     {"b_to_a", stream(t.fail_cost_ba, t.stall_ba, t.blocking_ba, t.ratio_ba)}};
  }
  j["simulation"] = {{"slots", link.slots()}, {"error_free_slots", clean_slots}, {"simulated_us", f.span_ns / 1e3}};
  for (int x = 0; x < 2; ++x) {
    j[x ? "b_to_a" : "a_to_b"] = direction_json(link.stats(x));
    if (c.fec_on) j[x ? "b_to_a" : "a_to_b"]["fec"] = fec_json(link.stats_with_fec(x));
  }
}

}  // namespace

RiflRunResult run_rifl_experiment(const config::RiflExperimentConfig& cfg, report::TraceWriter* trace, bool progress) {
  RiflRunResult r;
  const rifl::RiflConfig& c = cfg.link;
  const auto t_wall = std::chrono::steady_clock::now();
  auto line = [&, last = std::chrono::steady_clock::time_point{}](double frac) mutable {
    const auto now = std::chrono::steady_clock::now();
    if (now - last < std::chrono::seconds(1)) return;
    last = now;
    std::fprintf(stderr, "\r[fabricsim] %s: %.1f %% of segments delivered, %.0f s wall", cfg.name.c_str(), 100 * frac,
                 std::chrono::duration<double>(now - t_wall).count());
    std::fflush(stderr);
  };
  rifl::RiflLink link(c);
  const auto& d = link.derived();
  if (trace) trace_setup(trace, cfg, link);
  if (raw_ber_estimates(c)) link.count_mismatched_frames();  // the MTBF's out-of-order term
  const bool show = progress;
  const auto st = link.run(show ? std::function<void(double)>(line) : std::function<void(double)>());
  if (show) std::fprintf(stderr, "\n");
  if (trace) link.close_open_recoveries();
  if (st != rifl::RiflLink::Status::done) {
    r.ok = false;
    r.diagnosis = link.diagnosis();
    return r;
  }
  std::uint64_t clean_slots = 0;
  if (!error_free_slots(c, link, clean_slots, r)) return r;
  r.ok = true;
  const RiflFigures f = rifl_figures(c, link, clean_slots);
  result_json(cfg, link, clean_slots, f, r);
  const auto& s0 = link.stats(0);
  const auto& s1 = link.stats(1);
  r.summary = fmt::format(
      "  bandwidth ratio {:.4f} (analytic {})   goodput {:.2f} Gb/s {}   efficiency {:.4f}\n"
      "  latency mean {:.1f} ns   P99 {:.1f} ns   P99.9 {:.1f} ns   ({} packets)\n"
      "  retransmitted frames {}   detected errors {}   undetected errors {}   out-of-sync {}   MTBF {} years\n"
      "  retransmit buffer {} frames, one-way {} slots of {:.3f} ns, {:.1f} us simulated\n",
      f.ratio, std::isnan(f.analytic) ? std::string("n/a") : fmt::format("{:.4f}", f.analytic), f.goodput_gbps,
      c.load_ba ? "per direction" : "(a->b; b->a unloaded)", f.efficiency, f.mean, f.p99, f.p999,
      link.latencies_slots().size(), f.retx, s0.detected_errors + s1.detected_errors, f.undetected,
      s0.out_of_sync + s1.out_of_sync,
      std::isnan(f.mtbf_years)      ? "n/a"
      : std::isfinite(f.mtbf_years) ? sci(f.mtbf_years)
                                    : "inf",
      d.buffer, d.delay_slots, d.slot_ns, f.span_ns / 1e3);
  return r;
}

}  // namespace fabricsim::sim
