#include "models/rifl/core/analytic.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <utility>
#include <vector>

namespace fabricsim::rifl {

double frame_error_probability(double ber, std::uint32_t frame_bits) {
  return ber <= 0 ? 0.0 : -std::expm1(frame_bits * std::log1p(-ber));
}

RecoveryCost recovery_cost(const RiflDerived& d) {
  const double B = d.buffer, H = d.delay_slots;
  return {3 * B + 2, 3 * B - 2 * H - 13};
}

double forward_cost_at(const RiflDerived& d, std::uint32_t rc) {
  const double B = d.buffer;
  return 2 * B + 2 + (rc >= 2 * d.buffer ? 3 * B - rc : 0.0);
}

std::uint32_t requester_rc_after(const RiflDerived& d, std::uint32_t rc, double c_fwd) {
  if (rc == 0) return 0;
  const double toggles = c_fwd - 2.0 * d.delay_slots - 16;
  const std::uint64_t inc = toggles > 0 ? static_cast<std::uint64_t>(toggles) / 2 : 0;
  return rc + inc > 3ULL * d.buffer ? 0 : static_cast<std::uint32_t>(rc + inc);
}

PhaseCosts stationary_phase_costs(const RiflDerived& d, double q_ab) {
  const double rev = 2.0 * d.delay_slots + 15;  // C_fwd - C_rev
  // Reachable states (rc_A, rc_B) from the steady state after a forward
  // recovery at each end; the chain is finite (rc takes few values).
  using State = std::pair<std::uint32_t, std::uint32_t>;
  std::map<State, int> id;
  std::vector<State> st;
  std::vector<std::pair<int, int>> next;  // successor after an A->B / B->A failure
  auto get = [&](State s) {
    auto it = id.find(s);
    if (it != id.end()) return it->second;
    id.emplace(s, static_cast<int>(st.size()));
    st.push_back(s);
    return static_cast<int>(st.size()) - 1;
  };
  get({2 * d.buffer, 2 * d.buffer});
  for (std::size_t i = 0; i < st.size(); ++i) {
    const State s = st[i];
    const State a{2 * d.buffer, requester_rc_after(d, s.second, forward_cost_at(d, s.first))};
    const State b{requester_rc_after(d, s.first, forward_cost_at(d, s.second)), 2 * d.buffer};
    const int ia = get(a), ib = get(b);
    next.resize(st.size());
    next[i] = {ia, ib};
  }
  next.resize(st.size());
  // Stationary distribution by power iteration (the chain is aperiodic:
  // the state after a forward recovery at both ends recurs in 1 or 2 steps).
  std::vector<double> pi(st.size(), 1.0 / st.size()), nx(st.size());
  for (int it = 0; it < 10000; ++it) {
    std::fill(nx.begin(), nx.end(), 0.0);
    for (std::size_t i = 0; i < st.size(); ++i) {
      nx[next[i].first] += pi[i] * q_ab;
      nx[next[i].second] += pi[i] * (1 - q_ab);
    }
    double diff = 0;
    for (std::size_t i = 0; i < st.size(); ++i) diff += std::fabs(nx[i] - pi[i]);
    pi.swap(nx);
    if (diff < 1e-15) break;
  }
  PhaseCosts k{0, 0, 0, 0};
  for (std::size_t i = 0; i < st.size(); ++i) {
    const double ca = forward_cost_at(d, st[i].first), cb = forward_cost_at(d, st[i].second);
    k.ab_per_ab += pi[i] * ca;
    k.ba_per_ab += pi[i] * (ca - rev);
    k.ba_per_ba += pi[i] * cb;
    k.ab_per_ba += pi[i] * (cb - rev);
  }
  return k;
}

double analytic_bandwidth_ratio_first_order(const RiflConfig& c, const RiflDerived& d) {
  const RecoveryCost k = recovery_cost(d);
  const double L = d.fc_on, others = c.lanes - 1.0;
  const double K = k.forward_slots + k.reverse_slots +
                   others * (std::max(0.0, k.forward_slots - L) + std::max(0.0, k.reverse_slots - L));
  const double pab = frame_error_probability(c.ber_ab, c.frame_bits);
  const double pba = frame_error_probability(c.ber_ba, c.frame_bits);
  // Direction A->B pays K for its own errors' forward part and the reverse
  // errors' reverse part; with equal loads both directions see p_ab + p_ba
  // events, each costing (C_fwd + C_rev)-shaped losses split as above.
  const double ab = 1.0 / (1.0 + pab * (K - k.reverse_slots - others * std::max(0.0, k.reverse_slots - L)) +
                           pba * (k.reverse_slots + others * std::max(0.0, k.reverse_slots - L)));
  if (!c.load_ba) return ab;
  const double ba = 1.0 / (1.0 + pba * (K - k.reverse_slots - others * std::max(0.0, k.reverse_slots - L)) +
                           pab * (k.reverse_slots + others * std::max(0.0, k.reverse_slots - L)));
  return 0.5 * (ab + ba);
}

double replay_window_slots(const RiflDerived& d) {
  constexpr double kRollback = 16;  // rifl_link.cpp (RTL rx_decode ROLLBACK_CYCLES)
  return 2 * (kRollback + 2.0 * d.delay_slots + 12) + 2;
}

RecoveryCost restart_cost(const RiflDerived& d) {
  const double B = d.buffer, H = d.delay_slots, W = replay_window_slots(d);
  const double full = 3 * B + 2, late = 3 * B - 2 * H - 13;  // late + x, x = slots before the window's end
  double sum = 0;
  for (double x = 1; x <= W; ++x) sum += std::min(full, late + x);
  return {full, sum / W};
}

LaneBanks lane_banks(const RiflConfig& c, const RiflDerived& d) {
  if (c.lanes < 2) return {0, 0};
  const double H = d.delay_slots;
  return {std::max(0.0, d.fc_off - (2 * H + 1)), std::max(0.0, d.fc_on - 12.0)};
}

namespace {
// Offsets a of reverse_hit_extension: replay part, idle part; the split dd.
struct ReverseOffsets {
  double a_replay, a_idle, first, last, split, window, f_hit;
  bool primary_stream;
};
ReverseOffsets reverse_offsets(const RiflDerived& d, double f_primary, double f_hit, bool primary_stream) {
  const double H = d.delay_slots;
  // Isolated placement: the primary's forward stream stalls over
  // [2H + 13, 2H + 13 + F1), its reverse stream over [H + 3, F1 - H - 12);
  // the hit's recovery would stall them over [dd + H + 3, dd + F2 - H - 12)
  // and [dd + 2H + 13, dd + 2H + 13 + F2). It ends later: the frames X's
  // rolled-back receiver needs are the newest of Y's buffer (Y stopped data
  // when it became the requester), so X's requester part ends at the end of
  // Y's replay, 2 (2H + 13) + 2 = 4H + 28 slots later than an isolated one,
  // and Y leaves Retrans only when X's requests have stopped and its
  // remote-retransmit flag has dropped (H out, 16 data-or-idle frames, 3
  // reaction slots): 2H + 19 later.
  // 8 of those slots are the interleaving of X's 8 requests with its
  // replayed frames; a hit X detects in the idle part of its sequence
  // (first 3B - rc slots of Retrans, all requests) does not pay them.
  const double a_replay =
      primary_stream ? f_primary - f_hit + 3 * H + 25 - (4 * H + 28) : f_primary - f_hit - 3 * H - 25 - (2 * H + 19);
  const double a_idle = a_replay + 8;
  const double idle = std::max(0.0, f_primary - 2.0 * d.buffer - 2);
  // Once X's requests for the hit (H to detect it, 1 + 8 interleaved, 2 x 8
  // slots, H back) reach Y after Y has left its requester role
  // (dd + 2H + 16 >= F1 - H - 12), Y starts an ordinary recovery from
  // Normal: a later hit no longer ends later.
  // The interleaving costs one slot per request of the 8 that falls into
  // the replay part of X's sequence: 0 for dd <= H + 3 + idle, 8 from
  // 8 slots later (split).
  return {a_replay, a_idle, H + 3, f_primary - H - 13, H + 3 + idle, f_primary - 3 * H - 28, f_hit, primary_stream};
}
}  // namespace

namespace {
double extension(const ReverseOffsets& o, double dd) {
  if (dd < o.first || dd > o.last) return 0;
  if (dd > o.window) {
    // The forward stream's end stays put (-1 per slot); the reverse
    // stream's extension falls to the hit's own isolated cost F2 (its data
    // was flowing again), about two slots per slot.
    const double at = extension(o, o.window);
    return o.primary_stream ? std::max(0.0, at - (dd - o.window))
                            : std::max(std::min(at, o.f_hit), at - 2 * (dd - o.window));
  }
  const double interleave = std::clamp(dd - o.split, 0.0, 8.0);
  return std::max(0.0, dd - o.a_idle + interleave);
}
}  // namespace

double reverse_hit_extension(const RiflDerived& d, double f_primary, double f_hit, bool primary_stream, double dd) {
  return extension(reverse_offsets(d, f_primary, f_hit, primary_stream), dd);
}

double reverse_overlap_slots(const RiflDerived& d, double f_primary, double f_hit, bool primary_stream) {
  const ReverseOffsets o = reverse_offsets(d, f_primary, f_hit, primary_stream);
  // The per-hit extension is piecewise linear; a sum over the ~3B request
  // slots is exact and cheap.
  double sum = 0;
  for (double dd = std::ceil(o.first); dd <= o.last; ++dd) sum += extension(o, dd);
  return sum;
}

double reverse_overlap_expected(const RiflDerived& d, double f_primary, double f_hit, bool primary_stream, double p) {
  // Only the first hit counts: it makes Y the forwarder, and a later hit on
  // Y's frames falls in Y's own recovery (free before its replay window,
  // whose restarts the restart factor carries). E = sum over dd of
  // P(first hit at dd) e(dd), P = p (1 - p)^(dd - first).
  const ReverseOffsets o = reverse_offsets(d, f_primary, f_hit, primary_stream);
  double sum = 0, none = 1;  // none = P(no hit in the earlier request slots)
  for (double dd = std::ceil(o.first); dd <= o.last; ++dd) {
    sum += none * p * extension(o, dd);
    none *= 1 - p;
  }
  return sum;
}

double resume_wait_slots(const RiflDerived& d) { return 4.0 * d.delay_slots + 25; }

AnalyticTerms analytic_terms(const RiflConfig& c, const RiflDerived& d) {
  AnalyticTerms t;
  t.p_ab = frame_error_probability(c.ber_ab, c.frame_bits);
  t.p_ba = frame_error_probability(c.errors_ba ? c.ber_ba : 0.0, c.frame_bits);
  const double lam = t.p_ab + t.p_ba;
  if (lam <= 0) return t;
  t.phase = stationary_phase_costs(d, t.p_ab / lam);
  t.window_slots = replay_window_slots(d);
  t.banks = lane_banks(c, d);
  t.resume_wait = c.lanes > 1 ? resume_wait_slots(d) : 0;
  const double qa = t.p_ab * t.window_slots, qb = t.p_ba * t.window_slots;
  if (qa >= 1 || qb >= 1) {  // every recovery restarts: no progress
    t.restart_ab = t.restart_ba = INFINITY;
    t.ratio_ab = t.ratio_ba = 0;
    return t;
  }
  t.restart_ab = 1 / (1 - qa);
  t.restart_ba = 1 / (1 - qb);
  // Restarts beyond the failure's own recovery, q / (1 - q), each a
  // steady-state recovery appended to the current one (restart_cost).
  t.restart = restart_cost(d);
  const double na = t.restart_ab - 1, nb = t.restart_ba - 1;
  const double fa = t.phase.ab_per_ab + na * t.restart.forward_slots;
  const double fb = t.phase.ba_per_ba + nb * t.restart.forward_slots;
  t.fail_cost_ab = {fa + reverse_overlap_expected(d, fa, fb, true, t.p_ba),
                    t.phase.ab_per_ba + nb * t.restart.reverse_slots + reverse_overlap_expected(d, fb, fa, false, t.p_ab)};
  t.fail_cost_ba = {fb + reverse_overlap_expected(d, fb, fa, true, t.p_ab),
                    t.phase.ba_per_ab + na * t.restart.reverse_slots + reverse_overlap_expected(d, fa, fb, false, t.p_ba)};
  const double N = c.lanes;
  // One stream: fraction f of the time one lane blocks it, self-consistent.
  auto stream = [&](const FailCost& k, double p_own, double p_rev, double& blocking, double& stall) {
    const double C = (p_own * k.own + p_rev * k.rev) / lam;
    const double Cp = C + p_rev / lam * t.resume_wait;  // failing while paused
    double f = 0;
    for (int it = 0; it < 100000; ++it) {
      const double ro = std::max(std::pow(1 - f, N - 1), 1e-12);  // no other lane blocks
      const double S =
          ro * std::max(0.0, C - t.banks.isolated / ro) + (1 - ro) * std::max(0.0, Cp - t.banks.overlap / ro);
      const double Cm = ro * C + (1 - ro) * Cp;
      const double fn = lam * S / (1 + lam * Cm);
      blocking = S;
      stall = Cm;
      if (std::fabs(fn - f) < 1e-15) break;
      f = 0.5 * (f + fn);
    }
    return std::pow(1 - f, N);
  };
  t.ratio_ab = stream(t.fail_cost_ab, t.p_ab, t.p_ba, t.blocking_ab, t.stall_ab);
  t.ratio_ba = stream(t.fail_cost_ba, t.p_ba, t.p_ab, t.blocking_ba, t.stall_ba);
  return t;
}

double analytic_bandwidth_ratio(const RiflConfig& c, const RiflDerived& d) {
  const AnalyticTerms t = analytic_terms(c, d);
  return c.load_ba ? 0.5 * (t.ratio_ab + t.ratio_ba) : t.ratio_ab;
}

}  // namespace fabricsim::rifl
