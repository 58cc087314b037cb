#include "models/pcie/core/stall_calendar.h"

#include <algorithm>
#include <set>
#include <stdexcept>

#include "models/link/core/counter_rng.h"

namespace fabricsim::pcie {

StallCalendar::StallCalendar(const StallCalendarParams& p) : p_(p) {
  if (p_.period_ps == 0) throw std::invalid_argument("stall calendar: period must be > 0");
  if (p_.window_ps > p_.period_ps) throw std::invalid_argument("stall calendar: window longer than its period");
  std::set<int> seen;
  for (int q : p_.order)
    if (!seen.insert(q).second) throw std::invalid_argument("stall calendar: quadrant listed twice in the order");
  if (!p_.order.empty() && (p_.order.size() - 1) * p_.stagger_ps + p_.window_ps > p_.period_ps)
    throw std::invalid_argument("stall calendar: the staggered windows do not fit into one period");
}

long long StallCalendar::phase(int q) const {
  const auto it = std::find(p_.order.begin(), p_.order.end(), q);
  if (it == p_.order.end()) return -1;
  const ps_t i = static_cast<ps_t>(it - p_.order.begin());
  return static_cast<long long>((p_.offset_ps + i * p_.stagger_ps) % p_.period_ps);
}

bool StallCalendar::in_window(int q, ps_t t) const {
  if (!p_.enabled) return false;
  const long long ph = phase(q);
  if (ph < 0) return false;
  // Position of t after the window's start, modulo the period.
  const ps_t pos = (t % p_.period_ps + p_.period_ps - static_cast<ps_t>(ph)) % p_.period_ps;
  return pos < p_.window_ps;
}

ps_t StallCalendar::window_end(int q, ps_t t) const {
  const ps_t pos = (t % p_.period_ps + p_.period_ps - static_cast<ps_t>(phase(q))) % p_.period_ps;
  return t - pos + p_.window_ps;
}

ps_t StallCalendar::next_window_start(int q, ps_t t) const {
  if (!p_.enabled) return link::kNever;
  const long long ph = phase(q);
  if (ph < 0) return link::kNever;
  const ps_t pos = (t % p_.period_ps + p_.period_ps - static_cast<ps_t>(ph)) % p_.period_ps;
  return pos == 0 ? t : t + (p_.period_ps - pos);
}

double StallCalendar::degraded_fraction(const std::vector<int>& quadrants) const {
  if (!p_.enabled) return 0.0;
  // Union of the windows' intervals over one period [0, period).
  std::vector<std::pair<ps_t, ps_t>> iv;
  for (int q : quadrants) {
    const long long ph = phase(q);
    if (ph < 0) continue;
    const ps_t s = static_cast<ps_t>(ph), e = s + p_.window_ps;
    if (e <= p_.period_ps) {
      iv.push_back({s, e});
    } else {
      iv.push_back({s, p_.period_ps});
      iv.push_back({0, e - p_.period_ps});
    }
  }
  std::sort(iv.begin(), iv.end());
  ps_t covered = 0, cur_s = 0, cur_e = 0;
  bool open = false;
  for (const auto& [s, e] : iv) {
    if (!open || s > cur_e) {
      if (open) covered += cur_e - cur_s;
      cur_s = s;
      cur_e = e;
      open = true;
    } else {
      cur_e = std::max(cur_e, e);
    }
  }
  if (open) covered += cur_e - cur_s;
  return static_cast<double>(covered) / static_cast<double>(p_.period_ps);
}

ps_t read_stall(const StallCalendar& cal, const ReadStallParams& p, int from_q, int to_q, ps_t t, std::uint64_t bytes,
                std::uint64_t seed, std::uint64_t key) {
  if (!p.enabled || from_q == to_q || !cal.in_window(to_q, t)) return 0;
  const std::uint64_t pieces =
      p.granule_bytes ? std::max<std::uint64_t>(1, (bytes + p.granule_bytes - 1) / p.granule_bytes) : 1;
  const std::uint64_t piece_bytes = p.granule_bytes ? std::min(bytes, p.granule_bytes) : bytes;
  ps_t total = 0;
  for (std::uint64_t i = 0; i < pieces; ++i) {
    const double u = link::to_unit(link::key_hash(seed, key, i, 0, 0x51));
    if (u >= p.stall_fraction) continue;
    const double v = link::to_unit(link::key_hash(seed, key, i, 0, 0x52));
    const double factor = 1.0 - p.jitter + 2.0 * p.jitter * v;
    const double d = (static_cast<double>(p.base_ps) + p.per_byte_ps * static_cast<double>(piece_bytes)) * factor;
    link::checked_ps(d, "read stall");  // range check only: the stall keeps its truncation to whole ps
    total += static_cast<ps_t>(d);
  }
  const ps_t cap = cal.window_end(to_q, t) + p.max_past_window_ps - t;
  return std::min(total, cap);
}

}  // namespace fabricsim::pcie
