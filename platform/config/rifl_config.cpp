#include "platform/config/rifl_config.h"

#include <fmt/format.h>

#include <stdexcept>

#include "platform/config/link_config.h"
#include "platform/config/machine.h"
#include "platform/config/units.h"

namespace fabricsim::config {

namespace {

// rifl.lane_skew: one non-negative skew per lane (absent: none).
void lane_skew(Section& s, rifl::RiflConfig& c) {
  if (s.has("lane_skew")) {
    for (const auto& v : s.strings("lane_skew", {})) {
      double ns = 0;
      try {
        ns = parse_time_ps(v) / 1000.0;
      } catch (const UnitError& ex) {
        s.fail("lane_skew", fmt::format("'{}': {}", v, ex.what()));
      }
      if (ns < 0) s.fail("lane_skew", "skew must be >= 0");
      c.lane_skew_ns.push_back(ns);
    }
    if (c.lane_skew_ns.size() != c.lanes)
      s.fail("lane_skew", fmt::format("{} values for {} lanes: give one per lane", c.lane_skew_ns.size(), c.lanes));
  }
}

// rifl.channel: independent or Gilbert-Elliott bit errors, per direction
// (overlay on c). Returns true if chain parameters are given.
bool rifl_channel(Section& s, rifl::RiflConfig& c) {
  Section ch = s.child_or_empty("channel");
  const std::string model = ch.choice(
      "model", c.channel == rifl::RiflConfig::Channel::independent ? "independent" : "gilbert-elliott",
      {"independent", "gilbert-elliott"});
  c.channel =
      model == "independent" ? rifl::RiflConfig::Channel::independent : rifl::RiflConfig::Channel::gilbert_elliott;
  const bool has_ber = ch.has("ber");
  const double ber = ch.number("ber", c.ber_ab, 0.0, 0.5);
  c.ber_ab = ch.number("ber_a_to_b", has_ber ? ber : c.ber_ab, 0.0, 0.5);
  c.ber_ba = ch.number("ber_b_to_a", has_ber ? ber : c.ber_ba, 0.0, 0.5);
  bool ge = false;
  for (const char* k : {"p_good_to_bad", "p_bad_to_good", "error_good", "error_bad", "magnitude_good", "magnitude_bad"})
    ge = ge || ch.has(k);
  c.ge.a = ch.probability("p_good_to_bad", c.ge.a);
  c.ge.b = ch.probability("p_bad_to_good", c.ge.b);
  c.ge.e_good = ch.probability("error_good", c.ge.e_good);
  c.ge.e_bad = ch.probability("error_bad", c.ge.e_bad);
  c.ge.m_good = static_cast<std::uint32_t>(ch.integer("magnitude_good", c.ge.m_good, 1, 1024));
  c.ge.m_bad = static_cast<std::uint32_t>(ch.integer("magnitude_bad", c.ge.m_bad, 1, 1024));
  if (c.ge.a + c.ge.b <= 0.0) ch.fail("p_bad_to_good", "p_good_to_bad + p_bad_to_good must be > 0");
  c.errors_ba = ch.choice("directions", c.errors_ba ? "both" : "a-to-b", {"both", "a-to-b"}) == "both";
  if (!c.errors_ba && c.ber_ba > 0 && ch.has("ber_b_to_a"))
    ch.fail("ber_b_to_a", "directions: a-to-b leaves B->A error free; drop ber_b_to_a or use directions: both");
  if (!c.errors_ba) c.ber_ba = 0;
  const std::string step =
      ch.choice("chain_step", c.ge_step == rifl::RiflConfig::GeStep::flit ? "flit" : "frame", {"frame", "flit"});
  c.ge_step = step == "flit" ? rifl::RiflConfig::GeStep::flit : rifl::RiflConfig::GeStep::frame;
  if (ch.has("chain_step") && c.channel != rifl::RiflConfig::Channel::gilbert_elliott)
    ch.fail("chain_step", "chain_step applies to model: gilbert-elliott");
  ch.finish();
  return ge;
}

// rifl.fec: none or a profile of rifl.fec_profiles (default: the link layer's
// LOW / LIGHT / STRONG menu), the light FEC below RIFL on every lane.
void rifl_fec(Section& s, rifl::RiflConfig& c) {
  const link::FecMenu menu = parse_fec_menu(s, link::default_fec_menu());
  std::vector<std::string> names{"none"};
  for (const auto& p : menu) names.push_back(p.name);
  const std::string fec = s.choice("fec", c.fec_on ? c.fec.name : "none", names);
  c.fec_on = fec != "none";
  for (const auto& p : menu)
    if (p.name == fec) c.fec = p;
}

// traffic: the saturating packet stream.
void rifl_traffic(Section& root, rifl::RiflConfig& c) {
  Section t = root.child_or_empty("traffic");
  t.choice("pattern", "saturating", {"saturating"});
  c.bytes_per_direction = t.bytes("bytes", c.bytes_per_direction);
  if (c.bytes_per_direction == 0) t.fail("bytes", "must be > 0");
  // Checked before the narrowing: the key that breaks the rule is named.
  const std::uint64_t pmin = t.bytes("payload_min", c.payload_min), pmax = t.bytes("payload_max", c.payload_max);
  const char* const rule = "payload sizes must satisfy 1 B <= payload_min <= payload_max <= 16 MiB";
  if (pmin < 1 || pmin > (1u << 24)) t.fail("payload_min", rule);
  if (pmax > (1u << 24)) t.fail("payload_max", rule);
  if (pmin > pmax) t.fail("payload_min", rule);
  c.payload_min = static_cast<std::uint32_t>(pmin);
  c.payload_max = static_cast<std::uint32_t>(pmax);
  c.load_ba = t.boolean("both_directions", true);
  // The link keeps records per packet (its last segment at build, its
  // latency when done, and the experiment's copy for the percentiles): ~28 B
  // each, so the packet count, not the simulated time, bounds the run.
  constexpr double kMaxPackets = 134217728.0;  // 2^27 per direction: ~7.5 GB of records for both
  const double mean_payload = 0.5 * (static_cast<double>(c.payload_min) + c.payload_max);
  const double packets = static_cast<double>(c.bytes_per_direction) / mean_payload;
  if (packets > kMaxPackets)
    t.fail("bytes", fmt::format("{} B per direction is about {:.3g} packets of {} B on average; the link keeps ~28 B of "
                                "records per packet, so at most 2^27 packets per direction ({:.3g} B at this payload mix)",
                                c.bytes_per_direction, packets, mean_payload, kMaxPackets * mean_payload));
  t.finish();
}

}  // namespace

RiflExperimentConfig parse_rifl_experiment(Section root) {
  RiflExperimentConfig e;
  auto& c = e.link;
  Section f = root.child("fabric");
  e.name = f.name("name", "rifl-link");
  const std::string kind = f.required_string("kind");
  if (kind != "rifl-link") f.fail("kind", fmt::format("'{}' is not a RIFL link experiment (rifl-link)", kind));
  finish_fabric_section(f, kind);

  Section s = root.child("rifl");
  parse_rifl_keys(s, c, false);
  s.finish();  // an unknown key under rifl: is an error like everywhere else
  rifl_traffic(root, c);

  Section r = root.child_or_empty("run");
  c.seed = r.integer("seed", 1, 0, ~0ULL);
  r.finish();
  root.finish();
  check_rifl_bounds(s, c);
  // Every lane end holds B frames and every lane direction its one-way delay
  // of frames: at extreme lane counts, rates and delays, more than the machine.
  // Two links may be alive at once (the run's and its error-free reference,
  // or the isolated-failure probe of the MTBF: rifl_experiment.cpp).
  const rifl::RiflDerived d = rifl::derive(c);
  rifl::RiflConfig probe = c;
  probe.bytes_per_direction = rifl::isolated_probe_bytes_per_direction(c, d, rifl::kIsolatedProbeFailures);
  const long double need = 2.0L * rifl::lane_state_bytes(c) + rifl::traffic_state_bytes(c) +
                           std::max(rifl::traffic_state_bytes(probe), rifl::traffic_state_bytes(c));
  const std::uint64_t avail = available_memory_bytes();
  if (avail > 0 && need > static_cast<long double>(avail) / 2) {
    s.fail(s.has("lanes")               ? "lanes"
           : s.has("retransmit_buffer") ? "retransmit_buffer"
                                        : "",
           fmt::format("the run needs about {:.1f} GiB ({} lanes; retransmit buffer {} frames, one-way delay "
                       "{} frame slots of {:.3g} ns), more than half of the {:.1f} GiB this machine has available; "
                       "fewer lanes, a lower lane_rate, a shorter cable or retransmit_buffer: 0 make them smaller",
                       static_cast<double>(need / 1073741824.0L), c.lanes, d.buffer, d.delay_slots, d.slot_ns,
                       avail / 1073741824.0));
  }
  return e;
}

bool parse_rifl_keys(Section& s, rifl::RiflConfig& c, bool fabric_link) {
  c.frame_bits = static_cast<std::uint32_t>(s.integer("frame_bits", c.frame_bits, 0, 1u << 20));
  if (c.frame_bits != 128 && c.frame_bits != 256 && c.frame_bits != 512 && c.frame_bits != 1024)
    s.fail("frame_bits", fmt::format("unsupported frame size {} bits (128, 256, 512 or 1024)", c.frame_bits));
  const std::uint32_t lanes_before = c.lanes;
  c.lanes = static_cast<std::uint32_t>(s.integer("lanes", c.lanes, 1, 64));
  if (fabric_link) {
    for (const char* k : {"lane_rate", "cable_length_m", "cable_ns_per_m"})
      if (s.has(k))
        s.fail(k, "set by the fabric link: the lane rate is link.forward_rate / rifl.lanes, the cable delay is "
                  "link.propagation");
  } else {
    c.lane_rate_bps = s.rate_bps("lane_rate", c.lane_rate_bps);
    if (!(c.lane_rate_bps > 0)) s.fail("lane_rate", "must be > 0");
    c.cable_m = s.number("cable_length_m", c.cable_m, 0.0, 1e6);
    c.cable_ns_per_m = s.number("cable_ns_per_m", c.cable_ns_per_m, 0.0, 1e3);
  }
  c.transceiver_ns = s.time_ps("transceiver_latency", static_cast<std::uint64_t>(c.transceiver_ns * 1000)) / 1000.0;
  // One skew per lane: skews inherited for another lane count do not apply.
  if (c.lanes != lanes_before && !s.has("lane_skew") && !c.lane_skew_ns.empty())
    s.fail("lanes", fmt::format("{} lanes, but the lane_skew this inherits lists {} values (one per lane): give "
                                "lane_skew here too",
                                c.lanes, c.lane_skew_ns.size()));
  if (s.has("lane_skew")) c.lane_skew_ns.clear();
  lane_skew(s, c);
  c.retransmit_buffer = static_cast<std::uint32_t>(s.integer("retransmit_buffer", c.retransmit_buffer, 0, 1u << 20));
  c.fc_buffer = static_cast<std::uint32_t>(s.integer("fc_buffer", c.fc_buffer, 0, 1u << 24));
  c.fc_on = static_cast<std::uint32_t>(s.integer("fc_on", c.fc_on, 0, 1u << 24));
  c.fc_off = static_cast<std::uint32_t>(s.integer("fc_off", c.fc_off, 0, 1u << 24));
  c.clock_offset_ppm = s.number("clock_offset_ppm", c.clock_offset_ppm, -1000.0, 1000.0);
  c.resync_frames = static_cast<std::uint32_t>(s.integer("resync_frames", c.resync_frames, 1, 1u << 20));
  rifl_fec(s, c);
  return rifl_channel(s, c);
}

void check_rifl_bounds(const Section& s0, const rifl::RiflConfig& c) {
  try {
    rifl::derive(c);
  } catch (const std::invalid_argument& ex) {
    Section s = s0;
    const std::string m = ex.what();
    const auto colon = m.find(':');
    const std::string key = colon == std::string::npos ? "" : m.substr(0, colon);
    const std::string msg = colon == std::string::npos ? m : m.substr(colon + 2);
    if (key == "ber") s.child_or_empty("channel").fail("ber", msg);
    if (key == "fec") s.fail("fec", msg);
    s.fail(s.has(key) || key.rfind("fc_", 0) == 0 || key == "retransmit_buffer" ? key : "", msg);
  }
}

namespace {
// rifl.channel as JSON: model, BER per direction, the chain's parameters.
nlohmann::ordered_json channel_json(const rifl::RiflConfig& c) {
  nlohmann::ordered_json ch{
      {"model", c.channel == rifl::RiflConfig::Channel::independent ? "independent" : "gilbert-elliott"},
      {"ber_a_to_b", c.ber_ab},
      {"ber_b_to_a", c.ber_ba}};
  if (c.channel == rifl::RiflConfig::Channel::gilbert_elliott)
    ch.update({{"p_good_to_bad", c.ge.a},
               {"p_bad_to_good", c.ge.b},
               {"error_good", c.ge.e_good},
               {"error_bad", c.ge.e_bad},
               {"magnitude_good", c.ge.m_good},
               {"magnitude_bad", c.ge.m_bad}});
  if (c.channel == rifl::RiflConfig::Channel::gilbert_elliott && c.ge_step == rifl::RiflConfig::GeStep::flit)
    ch["chain_step"] = "flit";
  if (!c.errors_ba) ch["directions"] = "a-to-b";
  return ch;
}
}  // namespace

namespace {
// The rifl: parameters with their derived values (units in key names); the
// cable's keys only where the section has them (the experiment; a fabric
// link's cable is its propagation).
nlohmann::ordered_json protocol_json(const rifl::RiflConfig& c, const rifl::RiflDerived& d, bool cable) {
  nlohmann::ordered_json j{{"frame_bits", c.frame_bits}, {"lanes", c.lanes}, {"lane_rate_bps", c.lane_rate_bps}};
  if (cable) j["cable_length_m"] = c.cable_m;
  j["transceiver_latency_ns"] = c.transceiver_ns;
  if (cable) j["cable_ns_per_m"] = c.cable_ns_per_m;
  j.update({{"lane_skew_ns", c.lane_skew_ns},
            {"retransmit_buffer_frames", d.buffer},
            {"fc_buffer_frames", d.fc_buffer},
            {"fc_on_frames", d.fc_on},
            {"fc_off_frames", d.fc_off},
            {"clock_offset_ppm", c.clock_offset_ppm},
            {"resync_frames", c.resync_frames},
            {"slot_ns", d.slot_ns},
            {"one_way_ns", d.one_way_ns},
            {"delay_slots", d.delay_slots}});
  return j;
}

// rifl.fec (with fec_on): the profile and the codeword it gives.
nlohmann::ordered_json fec_json(const rifl::RiflConfig& c, const rifl::RiflDerived& d) {
  return {{"profile", c.fec.name},
          {"overhead", c.fec.overhead},
          {"decode_delay_ps", c.fec.decode_delay_ps},
          {"correctable_symbols", c.fec.correctable},
          {"symbol_bits", c.fec_symbol_bits},
          {"codeword_data_bits", c.fec_codeword_data_bits},
          {"codeword_bits", d.fec_codeword_bits},
          {"frames_per_codeword", d.fec_frames},
          {"latency_ns", d.fec_latency_ns}};
}
}  // namespace

nlohmann::ordered_json rifl_json(const rifl::RiflConfig& c) {
  const auto d = rifl::derive(c);
  nlohmann::ordered_json j = protocol_json(c, d, false);
  j["channel"] = channel_json(c);
  if (c.fec_on) j["fec"] = fec_json(c, d);
  return j;
}

nlohmann::ordered_json to_json(const RiflExperimentConfig& e) {
  const auto& c = e.link;
  const auto d = rifl::derive(c);
  nlohmann::ordered_json j;
  j["name"] = e.name;
  j["seed"] = c.seed;
  j["rifl"] = protocol_json(c, d, true);
  j["channel"] = channel_json(c);
  if (c.fec_on) j["fec"] = fec_json(c, d);
  j["traffic"] = {{"bytes_per_direction", c.bytes_per_direction},
                  {"payload_min_bytes", c.payload_min},
                  {"payload_max_bytes", c.payload_max},
                  {"both_directions", c.load_ba}};
  return j;
}

std::string rifl_channel_text(const rifl::RiflConfig& c) {
  if (c.channel != rifl::RiflConfig::Channel::independent) return "Gilbert-Elliott channel";
  return fmt::format("BER {:.3g} / {:.3g}", c.ber_ab, c.ber_ba);
}

}  // namespace fabricsim::config
