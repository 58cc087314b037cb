#include "platform/config/link_config.h"

#include <fmt/format.h>

#include <limits>

#include "platform/config/units.h"

namespace fabricsim::config {

using link::LinkSemantics;

namespace {
constexpr std::uint64_t kMaxU = std::numeric_limits<std::uint32_t>::max();

template <typename E>
E pick(Section& s, const std::string& key, E dflt, const std::vector<std::pair<std::string, E>>& table) {
  std::vector<std::string> names;
  std::string dname;
  for (const auto& [n, e] : table) {
    names.push_back(n);
    if (e == dflt) dname = n;
  }
  const std::string v = s.choice(key, dname, names);
  for (const auto& [n, e] : table)
    if (n == v) return e;
  return dflt;
}

template <typename E>
std::string name_of(E e, const std::vector<std::pair<std::string, E>>& table) {
  for (const auto& [n, v] : table)
    if (v == e) return n;
  return "?";
}

const std::vector<std::pair<std::string, LinkSemantics::ChainIndex>> kChain{
    {"per-flit", LinkSemantics::ChainIndex::per_flit},
    {"per-transmission", LinkSemantics::ChainIndex::per_transmission}};
const std::vector<std::pair<std::string, LinkSemantics::TxQueue>> kQueue{{"fifo", LinkSemantics::TxQueue::fifo},
                                                                         {"recall", LinkSemantics::TxQueue::recall}};
const std::vector<std::pair<std::string, LinkSemantics::RequestDedup>> kDedup{
    {"by-request", LinkSemantics::RequestDedup::by_request},
    {"ignore-window", LinkSemantics::RequestDedup::ignore_window},
    {"none", LinkSemantics::RequestDedup::none}};
const std::vector<std::pair<std::string, LinkSemantics::RequestTrigger>> kTrigger{
    {"expected", LinkSemantics::RequestTrigger::expected}, {"any-failure", LinkSemantics::RequestTrigger::any_failure}};
const std::vector<std::pair<std::string, LinkSemantics::ReplayedCount>> kCount{
    {"sent", LinkSemantics::ReplayedCount::sent}, {"scheduled", LinkSemantics::ReplayedCount::scheduled}};
const std::vector<std::pair<std::string, LinkSemantics::ReplayProfile>> kReplayProf{
    {"policy", LinkSemantics::ReplayProfile::policy}, {"strongest", LinkSemantics::ReplayProfile::strongest}};
const std::vector<std::pair<std::string, LinkSemantics::ProfileBind>> kBind{
    {"serialize", LinkSemantics::ProfileBind::serialize}, {"admit", LinkSemantics::ProfileBind::admit}};
}  // namespace

link::LinkConfig parse_link(Section s) { return parse_link_overlay(std::move(s), link::LinkConfig{}); }

namespace {

// Rates, delays, flit sizes, windows, retry limit and receive buffer.
void link_basics(Section& s, link::LinkConfig& c) {
  c.flit_bytes = static_cast<std::uint32_t>(s.bytes("flit", c.flit_bytes));
  if (c.flit_bytes < 16 || c.flit_bytes > (1u << 20)) s.fail("flit", "flit size must be in [16 B, 1 MiB]");
  c.forward_rate_bps = s.rate_bps("forward_rate", c.forward_rate_bps);
  c.reverse_rate_bps = s.rate_bps("reverse_rate", c.reverse_rate_bps);
  c.propagation_ps = s.time_ps("propagation", c.propagation_ps);
  c.control_base_delay_ps = s.time_ps("control_base_delay", c.control_base_delay_ps);
  c.control_flit_bytes = static_cast<std::uint32_t>(s.bytes("control_flit", c.control_flit_bytes));
  if (c.control_flit_bytes == 0 || c.control_flit_bytes > (1u << 20))
    s.fail("control_flit", "control flit size must be in [1 B, 1 MiB]");
  c.policy.window_high = static_cast<std::uint32_t>(s.integer("window_high", c.policy.window_high, 1, 1u << 20));
  c.policy.window_reduced =
      static_cast<std::uint32_t>(s.integer("window_reduced", c.policy.window_reduced, 1, 1u << 20));
  if (c.policy.window_reduced > c.policy.window_high)
    s.fail("window_reduced",
           fmt::format("W_R ({}) must not exceed W_H ({})", c.policy.window_reduced, c.policy.window_high));
  c.request_copies = static_cast<std::uint32_t>(s.integer("request_copies", c.request_copies, 1, 64));
  c.retry_limit = static_cast<std::uint32_t>(s.integer("retry_limit", c.retry_limit, 1, 1000000));
  c.rx_buffer_flits = static_cast<std::uint32_t>(s.integer("rx_buffer", c.rx_buffer_flits, 0, 1u << 24));
}

}  // namespace

link::FecMenu parse_fec_menu(Section& s, const link::FecMenu& base) {
  link::LinkConfig c;
  c.fec_menu = base;
  if (s.has("fec_profiles")) {
    c.fec_menu.clear();
    for (auto& p : s.list("fec_profiles")) {
      link::FecProfile f;
      f.name = p.required_string("name");
      f.overhead = p.fraction("overhead", 0.0);
      f.decode_delay_ps = p.time_ps("decode_delay", 0);
      if (!p.has("correctable"))
        p.fail("correctable", "required value is missing (symbols the profile corrects; 0 for none)");
      f.correctable = static_cast<std::uint32_t>(p.integer("correctable", 0, 0, kMaxU));
      for (std::size_t k = 0; k < c.fec_menu.size(); ++k)
        if (c.fec_menu[k].name == f.name)
          p.fail("name", fmt::format("FEC profile name '{}' is used twice (also fec_profiles[{}])", f.name, k));
      p.finish();
      if (!c.fec_menu.empty()) {
        const auto& prev = c.fec_menu.back();
        if (f.overhead < prev.overhead || f.correctable < prev.correctable)
          p.fail("", fmt::format("FEC profiles must be listed weakest first (overhead and correctable symbols "
                                 "non-decreasing): '{}' ({:g} % overhead, {} symbols) follows fec_profiles[{}] "
                                 "'{}' ({:g} %, {} symbols)",
                                 f.name, 100 * f.overhead, f.correctable, c.fec_menu.size() - 1, prev.name,
                                 100 * prev.overhead, prev.correctable));
      }
      c.fec_menu.push_back(f);
    }
    if (c.fec_menu.empty()) s.fail("fec_profiles", "at least one FEC profile is required");
    if (c.fec_menu.size() > 127) s.fail("fec_profiles", "at most 127 FEC profiles");
  } else {
    s.list("fec_profiles");
  }
  return c.fec_menu;
}

namespace {

// fec_profiles: weakest first, distinct names, 1..127 of them (absent: the base's menu).
void fec_profiles(Section& s, link::LinkConfig& c) { c.fec_menu = parse_fec_menu(s, c.fec_menu); }

// Serialization times in integer ps: every flit (with each profile's FEC
// overhead) and every control flit must take between 1 ps and the time limit
// on its serializer, or the timing would round to 0 or overflow.
void check_wire_times(Section& s, const link::LinkConfig& c) {
  const auto wire_ps = [](double bytes, double bps) { return bytes * 8.0 / bps * 1e12; };
  for (const auto& p : c.fec_menu) {
    const double w = wire_ps(c.flit_bytes * (1.0 + p.overhead), c.forward_rate_bps);
    if (w < 1.0 || w > kMaxTimePs)
      s.fail(s.has("forward_rate") || !s.has("flit") ? "forward_rate" : "flit",
             fmt::format("a {} B flit with profile {} takes {:g} ps at {:g} b/s: a flit's wire time must lie in "
                         "[1 ps, 1e17 ps]",
                         c.flit_bytes, p.name, w, c.forward_rate_bps));
  }
  const double w = wire_ps(c.control_flit_bytes, c.reverse_rate_bps);
  if (w < 1.0 || w > kMaxTimePs)
    s.fail(s.has("reverse_rate") || !s.has("control_flit") ? "reverse_rate" : "control_flit",
           fmt::format("a {} B control flit takes {:g} ps at {:g} b/s: its wire time must lie in [1 ps, 1e17 ps]",
                       c.control_flit_bytes, w, c.reverse_rate_bps));
}

const std::vector<std::pair<std::string, link::LinkConfig::ChannelModel>> kChannel{
    {"gilbert-elliott", link::LinkConfig::ChannelModel::gilbert_elliott},
    {"independent", link::LinkConfig::ChannelModel::independent}};

// channel: the Gilbert-Elliott model (its parameters are also PREFACE's
// filter model), or independent bit errors at `ber` on the forward wire.
void channel(Section& s, link::LinkConfig& c) {
  Section ch = s.child_or_empty("channel");
  c.channel_model = pick(ch, "model", c.channel_model, kChannel);
  c.ber = ch.number("ber", c.ber, 0.0, 0.5);
  if (ch.has("ber") && c.channel_model != link::LinkConfig::ChannelModel::independent)
    ch.fail("ber", "ber applies to model: independent (the Gilbert-Elliott channel draws per flit)");
  c.symbol_bits = static_cast<std::uint32_t>(ch.integer("symbol_bits", c.symbol_bits, 1, 64));
  c.channel.a = ch.probability("p_good_to_bad", c.channel.a);
  c.channel.b = ch.probability("p_bad_to_good", c.channel.b);
  c.channel.e_good = ch.probability("error_good", c.channel.e_good);
  c.channel.e_bad = ch.probability("error_bad", c.channel.e_bad);
  c.channel.m_good = static_cast<std::uint32_t>(ch.integer("magnitude_good", c.channel.m_good, 1, kMaxU));
  c.channel.m_bad = static_cast<std::uint32_t>(ch.integer("magnitude_bad", c.channel.m_bad, 1, kMaxU));
  if (c.channel.a + c.channel.b <= 0.0) ch.fail("p_bad_to_good", "p_good_to_bad + p_bad_to_good must be > 0");
  ch.finish();
}

// policy: name, lambda, post-decode thresholds; the filter's model is the channel.
void policy(Section& s, link::LinkConfig& c) {
  Section pol = s.child_or_empty("policy");
  c.policy_name = pol.choice("name", c.policy_name, link::policy_names());
  c.policy.lambda = pol.number("lambda", c.policy.lambda, 0.0, 1e12);
  c.policy.model = c.channel;  // the filter assumes the trained (true) channel model
  Section pd = pol.child_or_empty("post_decode");
  c.policy.post_decode.ewma_alpha = pd.number("ewma_alpha", c.policy.post_decode.ewma_alpha, 1e-9, 1.0);
  c.policy.post_decode.raise_above = pd.probability("raise_above", c.policy.post_decode.raise_above);
  c.policy.post_decode.lower_below = pd.probability("lower_below", c.policy.post_decode.lower_below);
  if (c.policy.post_decode.lower_below > c.policy.post_decode.raise_above)
    pd.fail("lower_below", "lower_below must not exceed raise_above (hysteresis)");
  pd.finish();
  pol.finish();
}

// semantics: the data-link choices (link-layer.md).
void semantics(Section& s, link::LinkConfig& c) {
  Section sem = s.child_or_empty("semantics");
  auto& m = c.semantics;
  m.chain_index = pick(sem, "chain_index", m.chain_index, kChain);
  m.tx_queue = pick(sem, "tx_queue", m.tx_queue, kQueue);
  m.request_dedup = pick(sem, "request_dedup", m.request_dedup, kDedup);
  m.ignore_window_flits =
      static_cast<std::uint32_t>(sem.integer("ignore_window_flits", m.ignore_window_flits, 0, kMaxU));
  m.request_trigger = pick(sem, "request_trigger", m.request_trigger, kTrigger);
  m.replayed_count = pick(sem, "replayed_count", m.replayed_count, kCount);
  m.replay_profile = pick(sem, "replay_profile", m.replay_profile, kReplayProf);
  m.profile_bind = pick(sem, "profile_bind", m.profile_bind, kBind);
  if (m.profile_bind == LinkSemantics::ProfileBind::admit && m.tx_queue != LinkSemantics::TxQueue::fifo)
    sem.fail("profile_bind", "profile_bind: admit needs tx_queue: fifo");
  m.feedback_delay_ps = sem.time_ps("feedback_delay", m.feedback_delay_ps);
  m.ack_coalescing = sem.boolean("ack_coalescing", m.ack_coalescing);
  sem.finish();
}

}  // namespace

link::LinkConfig parse_link_overlay(Section s, const link::LinkConfig& base) {
  link::LinkConfig c = base;
  link_basics(s, c);
  fec_profiles(s, c);
  check_wire_times(s, c);
  channel(s, c);
  policy(s, c);
  semantics(s, c);
  s.finish();
  return c;
}

LinkExperimentConfig parse_link_experiment(Section root) {
  LinkExperimentConfig e;
  Section f = root.child("fabric");
  e.name = f.name("name", "link-pair");
  const std::string kind = f.required_string("kind");
  if (kind != "link-pair") f.fail("kind", fmt::format("'{}' is not a fabric kind this build runs (link-pair)", kind));
  finish_fabric_section(f, kind);
  {
    Section l = root.child("link");
    // Credits exist between a link and the node behind it in a fabric; the
    // experiment's sink consumes every flit at once (docs/models/link.md).
    if (l.has("rx_buffer"))
      l.fail("rx_buffer",
             "the two-endpoint experiment has no credit flow control (its sink consumes every flit at once); "
             "link.rx_buffer applies to fabrics: remove it here");
    e.link = parse_link(l);
  }

  Section t = root.child_or_empty("traffic");
  t.choice("pattern", "periodic", {"periodic"});
  e.traffic.period_ps = t.time_ps("period", e.traffic.period_ps);
  if (e.traffic.period_ps == 0) t.fail("period", "period must be > 0");
  e.traffic.flits = t.integer("flits", e.traffic.flits, 1, 1ULL << 32);
  e.traffic.message_flits = t.integer("message_flits", e.traffic.message_flits, 1, 1ULL << 24);
  // One message is one TLM burst, whose data length is a 32-bit byte count.
  {
    const std::uint64_t burst = std::min(e.traffic.message_flits, e.traffic.flits);
    const std::uint64_t bytes = burst * e.link.flit_bytes;
    if (bytes > 0xFFFFFFFFull)
      t.fail(t.has("flits") && !t.has("message_flits") ? "flits" : "message_flits",
             fmt::format("a message of {} flits of {} B is {} B; one message (a TLM burst) must be under 4 GiB: "
                         "lower traffic.message_flits or link.flit",
                         burst, e.link.flit_bytes, bytes));
  }
  e.traffic.start_ps = t.time_ps("start", e.traffic.start_ps);
  // The last flit is offered at start + (flits - 1) x period, in integer ps.
  const long double last = static_cast<long double>(e.traffic.start_ps) +
                           static_cast<long double>(e.traffic.flits - 1) * e.traffic.period_ps;
  if (last > kMaxTimePs)
    t.fail(t.has("start") && static_cast<long double>(e.traffic.start_ps) >= last / 2 ? "start"
           : t.has("period")                                                          ? "period"
                                                                                      : "flits",
           fmt::format("the last of {} flits every {} ps would be offered at {:.7g} ps, beyond the time limit of "
                       "1e17 ps (100000 s)",
                       e.traffic.flits, e.traffic.period_ps, static_cast<double>(last)));
  t.finish();

  Section r = root.child_or_empty("run");
  e.seed = r.integer("seed", e.seed, 0, ~0ULL);
  e.link_id = r.integer("link_id", e.link_id, 0, ~0ULL);
  e.deadline_ps = r.time_ps("deadline", 0);  // 0: not given, the default below (run_link_experiment)
  if (r.has("deadline") && e.deadline_ps == 0)
    r.fail("deadline", "must be above 0 (leave it out for the default: 100 x the offered stream + 1 ms)");
  r.finish();
  root.finish();
  return e;
}

nlohmann::ordered_json to_json(const LinkExperimentConfig& e) {
  nlohmann::ordered_json j;
  const auto& c = e.link;
  j["name"] = e.name;
  j["policy"] = c.policy_name;
  j["seed"] = e.seed;
  j["link_id"] = e.link_id;
  j["traffic"] = {{"period_ps", e.traffic.period_ps},
                  {"flits", e.traffic.flits},
                  {"message_flits", e.traffic.message_flits},
                  {"start_ps", e.traffic.start_ps}};
  nlohmann::ordered_json l;
  l["flit_bytes"] = c.flit_bytes;
  l["forward_rate_bps"] = c.forward_rate_bps;
  l["reverse_rate_bps"] = c.reverse_rate_bps;
  l["propagation_ps"] = c.propagation_ps;
  l["control_base_delay_ps"] = c.control_base_delay_ps;
  l["control_flit_bytes"] = c.control_flit_bytes;
  l["window_high"] = c.policy.window_high;
  l["window_reduced"] = c.policy.window_reduced;
  l["request_copies"] = c.request_copies;
  l["retry_limit"] = c.retry_limit;
  // No rx_buffer: the two-endpoint experiment has no credit flow control
  // (its sink consumes at once) and refuses the key.
  for (const auto& p : c.fec_menu)
    l["fec_profiles"].push_back({{"name", p.name},
                                 {"overhead", p.overhead},
                                 {"decode_delay_ps", p.decode_delay_ps},
                                 {"correctable", p.correctable}});
  l["channel"] = {{"model", name_of(c.channel_model, kChannel)},
                  {"p_good_to_bad", c.channel.a},
                  {"p_bad_to_good", c.channel.b},
                  {"error_good", c.channel.e_good},
                  {"error_bad", c.channel.e_bad},
                  {"magnitude_good", c.channel.m_good},
                  {"magnitude_bad", c.channel.m_bad}};
  if (c.channel_model == link::LinkConfig::ChannelModel::independent) {
    l["channel"]["ber"] = c.ber;
    l["channel"]["symbol_bits"] = c.symbol_bits;
  }
  l["policy"] = {{"name", c.policy_name},
                 {"lambda", c.policy.lambda},
                 {"post_decode",
                  {{"ewma_alpha", c.policy.post_decode.ewma_alpha},
                   {"raise_above", c.policy.post_decode.raise_above},
                   {"lower_below", c.policy.post_decode.lower_below}}}};
  const auto& m = c.semantics;
  l["semantics"] = {{"chain_index", name_of(m.chain_index, kChain)},
                    {"tx_queue", name_of(m.tx_queue, kQueue)},
                    {"request_dedup", name_of(m.request_dedup, kDedup)},
                    {"ignore_window_flits", m.ignore_window_flits},
                    {"request_trigger", name_of(m.request_trigger, kTrigger)},
                    {"replayed_count", name_of(m.replayed_count, kCount)},
                    {"replay_profile", name_of(m.replay_profile, kReplayProf)},
                    {"profile_bind", name_of(m.profile_bind, kBind)},
                    {"feedback_delay_ps", m.feedback_delay_ps},
                    {"ack_coalescing", m.ack_coalescing}};
  j["link"] = l;
  return j;
}

}  // namespace fabricsim::config
