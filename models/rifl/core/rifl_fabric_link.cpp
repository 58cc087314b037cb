#include "models/rifl/core/rifl_fabric_link.h"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <stdexcept>

namespace fabricsim::rifl {

using link::kNever;

namespace {
RiflConfig external(RiflConfig c) {
  c.external = true;
  return c;
}
}  // namespace

FabricRiflLink::FabricRiflLink(RiflConfig cfg, std::uint32_t flit_bytes, std::uint32_t credits)
    : link_(external(std::move(cfg))), flit_bytes_(flit_bytes), credits_on_(credits > 0), credits_{credits, credits} {
  const double rate = std::round(link_.config().lane_rate_bps);
  if (!(rate >= 1.0) || rate > 1e15) throw std::invalid_argument("lane_rate: must be in [1 b/s, 1 Pb/s]");
  if (flit_bytes_ == 0) throw std::invalid_argument("flit: must be > 0");
  // One slot carries a frame; with a light FEC also its share of the
  // codeword's parity (derive(): codeword bits / frames per codeword).
  const RiflDerived& d = link_.derived();
  const bool fec = link_.config().fec_on;
  slot_num_ = static_cast<std::uint64_t>(fec ? d.fec_codeword_bits : link_.config().frame_bits) * 1'000'000'000'000ULL;
  slot_den_ = static_cast<std::uint64_t>(rate) * (fec ? d.fec_frames : 1);
}

ps_t FabricRiflLink::slot_start_ps(std::uint64_t k) const {
  return static_cast<ps_t>(static_cast<unsigned __int128>(k) * slot_num_ / slot_den_);
}

std::uint64_t FabricRiflLink::slot_at_or_after(ps_t t) const {
  if (t == kNever) return kNever;
  const unsigned __int128 x = static_cast<unsigned __int128>(t) * slot_den_;
  return static_cast<std::uint64_t>((x + slot_num_ - 1) / slot_num_);
}

ps_t FabricRiflLink::signal_delay_ps() const {
  const auto& d = link_.derived();
  return slot_start_ps(d.delay_slots + 1);
}

void FabricRiflLink::offer(int dir, ps_t t) {
  ++fc_[dir].offered;
  arrivals_[dir].push_back(t);
}

void FabricRiflLink::return_credit(int dir, ps_t t) { credit_returns_[dir].push_back(t); }

ps_t FabricRiflLink::next_admission(int dir) const {
  if (arrivals_[dir].empty()) return kNever;
  const ps_t a = arrivals_[dir].front();
  if (!credits_on_ || credits_[dir] > 0) return a;
  return credit_returns_[dir].empty() ? kNever : std::max(a, credit_returns_[dir].front());
}

ps_t FabricRiflLink::next_event_time() const {
  ps_t t = std::min(next_admission(0), next_admission(1));
  if (!deliveries_.empty()) t = std::min(t, deliveries_.front().second);
  // While busy: the end of the next unprocessed slot, the earliest instant
  // a delivery can come out of it (its start may still receive offers).
  if (link_.busy() && !failed()) t = std::min(t, slot_start_ps(link_.slots() + 1));
  return t;
}

// Admit every flit whose arrival and credit are due at t into the transmitter.
void FabricRiflLink::admit(ps_t t) {
  for (int d = 0; d < 2; ++d) {
    auto& cr = credit_returns_[d];
    while (!cr.empty() && cr.front() <= t) {
      cr.pop_front();
      ++credits_[d];
    }
    while (!arrivals_[d].empty() && arrivals_[d].front() <= t && (!credits_on_ || credits_[d] > 0)) {
      arrivals_[d].pop_front();
      if (credits_on_) {
        --credits_[d];
        if (stall_since_[d] != kNever) fc_[d].admission_stall_credit_ps += t - stall_since_[d];
        stall_since_[d] = kNever;
      }
      const std::uint64_t s = slot_at_or_after(t);
      if (s > link_.slots()) {
        // The link catches up (idle lanes, recoveries of idle-frame errors);
        // nothing of its own is due before t, so nothing completes.
        link_.advance(s);
        for (const auto& c : link_.completions()) deliveries_.push_back({c.dir, slot_start_ps(c.slot + 1)});
      } else if (s < link_.slots()) {
        ++fc_[d].late_offers;
      }
      link_.offer_packet(d, flit_bytes_);
      ++fc_[d].admitted;
      if (on_admit_) on_admit_(d, t);
    }
    // The head flit is due but has no credit: back-pressure from here on.
    if (!arrivals_[d].empty() && arrivals_[d].front() <= t && stall_since_[d] == kNever)
      stall_since_[d] = std::max(arrivals_[d].front(), t);
  }
}

void FabricRiflLink::run_until(std::uint64_t until) {
  if (until <= link_.slots() || failed()) return;
  link_.advance(until);
  for (const auto& c : link_.completions()) deliveries_.push_back({c.dir, slot_start_ps(c.slot + 1)});
  // Idle from here until the next offer: counters exact up to now.
  if (!link_.busy()) link_.settle();
}

void FabricRiflLink::step(ps_t bound) {
  const ps_t P = next_event_time();
  if (P == kNever) return;
  now_ = P;
  // Every event before P is done everywhere, so every offer into a slot
  // starting before P is known: process those slots (their completions come
  // out at P at the earliest).
  const std::uint64_t upto = slot_at_or_after(P);
  while (link_.slots() < upto && !failed()) run_until(upto);
  while (!deliveries_.empty() && deliveries_.front().second <= P) {
    const auto [d, t] = deliveries_.front();
    deliveries_.pop_front();
    ++fc_[d].delivered;
    if (on_deliver_) on_deliver_(d, t);  // may offer() or return_credit() at t
  }
  admit(P);
  if (!link_.busy() || failed()) return;
  // Run ahead through the slots that start before the next instant at which
  // anything could offer into them: another component's next event
  // (`bound`), a pending delivery or admission here.
  ps_t b = std::min({bound, next_admission(0), next_admission(1)});
  if (!deliveries_.empty()) b = std::min(b, deliveries_.front().second);
  run_until(slot_at_or_after(b));
}

std::string FabricRiflLink::diagnosis() const {
  std::ostringstream o;
  for (int d = 0; d < 2; ++d)
    o << (d ? "; " : "") << (d ? "B->A" : "A->B") << ": " << fc_[d].offered << " flits offered, "
      << fc_[d].admitted << " admitted, " << fc_[d].delivered << " delivered, " << waiting(d) << " waiting"
      << (credits_on_ ? ", " + std::to_string(credits_[d]) + " credits" : "");
  o << "; " << link_.diagnosis();
  return o.str();
}

}  // namespace fabricsim::rifl
