#include "models/rifl/core/error_stream.h"

#include <algorithm>
#include <cmath>

#include "models/link/core/counter_rng.h"

namespace fabricsim::rifl {

namespace {
constexpr std::uint64_t kStreamPos = 12, kStreamSym = 13, kStreamSymBit = 14;  // (11: link::BitErrorStream)
}

IndependentBitErrors::IndependentBitErrors(double ber, std::uint32_t frame_bits, std::uint64_t seed,
                                           std::uint64_t stream_id)
    : s_(ber, seed, stream_id), bits_(frame_bits) {}

void IndependentBitErrors::take(std::uint64_t slot, std::vector<std::uint16_t>& pos) {
  pos.clear();
  const std::uint64_t end = (slot + 1) * bits_;
  while (s_.next() != link::kNever && s_.next() < end) {
    pos.push_back(static_cast<std::uint16_t>(s_.next() - slot * bits_));
    s_.pop();
  }
}

GilbertElliottFrames::GilbertElliottFrames(const link::GeParams& p, std::uint32_t frame_bits, std::uint64_t seed,
                                           std::uint64_t stream_id)
    : ge_(p, seed, stream_id), bits_(frame_bits), seed_(seed), stream_(stream_id) {}

std::uint64_t GilbertElliottFrames::next_hit_slot() {
  while (hit_ == link::kNever) {
    const auto d = ge_.draw(cursor_, 0);
    if (d.magnitude > 0) {
      hit_ = cursor_;
      magnitude_ = std::min<std::uint32_t>(d.magnitude, bits_);
    }
    ++cursor_;
  }
  return hit_;
}

void GilbertElliottFrames::take(std::uint64_t slot, std::vector<std::uint16_t>& pos) {
  pos.clear();
  for (std::uint32_t i = 0; pos.size() < magnitude_; ++i) {
    const auto p =
        static_cast<std::uint16_t>(link::to_unit(link::key_hash(seed_, stream_, slot, i, kStreamPos)) * bits_);
    if (std::find(pos.begin(), pos.end(), p) == pos.end()) pos.push_back(p);
  }
  std::sort(pos.begin(), pos.end());
  hit_ = link::kNever;
}

GilbertElliottWire::GilbertElliottWire(const link::GeParams& p, std::uint64_t seed, std::uint64_t stream_id,
                                       std::uint64_t step_bits, std::uint32_t symbol_bits)
    : ge_(p, seed, stream_id), seed_(seed), stream_(stream_id), step_bits_(step_bits), symbol_bits_(symbol_bits) {}

std::uint64_t GilbertElliottWire::next() {
  const auto& p = ge_.params();
  if (p.e_good <= 0 && p.e_bad <= 0) return link::kNever;  // a channel that never corrupts
  while (pos_ >= bits_.size()) {
    // Find the next corrupted step (one chain step per S wire bits).
    const auto d = ge_.draw(step_, 0);
    const std::uint64_t i = step_++;
    bits_.clear();
    pos_ = 0;
    if (d.magnitude == 0) continue;
    const std::uint64_t symbols = (step_bits_ + symbol_bits_ - 1) / symbol_bits_;
    const std::uint64_t m = std::min<std::uint64_t>(d.magnitude, symbols);
    std::vector<std::uint64_t> syms;
    for (std::uint64_t k = 0; syms.size() < m; ++k) {
      const std::uint64_t h = link::key_hash(seed_, stream_, i, k, kStreamSym);
      const std::uint64_t sym = static_cast<std::uint64_t>(link::to_unit(h) * static_cast<double>(symbols));
      if (std::find(syms.begin(), syms.end(), sym) == syms.end()) syms.push_back(sym);
    }
    std::sort(syms.begin(), syms.end());
    for (auto sym : syms) {
      const std::uint64_t first = sym * symbol_bits_;
      const std::uint64_t width = std::min<std::uint64_t>(symbol_bits_, step_bits_ - first);
      const std::uint64_t bit = link::key_hash(seed_, stream_, i, sym, kStreamSymBit) % width;
      bits_.push_back(i * step_bits_ + first + bit);
    }
  }
  return bits_[pos_];
}

std::uint32_t codeword_symbol_errors(const std::vector<std::uint64_t>& offsets, std::uint32_t symbol_bits) {
  std::uint32_t n = 0;
  std::uint64_t last = link::kNever;
  for (auto o : offsets) {
    const std::uint64_t s = o / symbol_bits;
    if (s != last) ++n;
    last = s;
  }
  return n;
}

WireFrames::WireFrames(std::unique_ptr<WireErrors> wire, std::uint32_t frame_bits, std::uint32_t frames_per_codeword,
                       std::uint32_t parity_bits, std::uint32_t symbol_bits, int correctable)
    : wire_(std::move(wire)),
      F_(frame_bits),
      K_(frames_per_codeword),
      P_(parity_bits),
      sym_(symbol_bits),
      t_(correctable),
      n_(static_cast<std::uint64_t>(frames_per_codeword) * frame_bits + parity_bits) {}

std::uint64_t WireFrames::next_hit_slot() {
  while (hits_.empty()) {
    const std::uint64_t b = wire_->next();
    if (b == link::kNever) return link::kNever;
    // Decode the codeword holding the next error: all its error bits.
    const std::uint64_t c = b / n_, base = c * n_;
    cw_.clear();
    while (wire_->next() != link::kNever && wire_->next() < base + n_) {
      cw_.push_back(wire_->next() - base);
      wire_->pop();
    }
    int fec = 0;
    if (t_ >= 0) {
      const std::uint32_t s = codeword_symbol_errors(cw_, sym_);
      if (s <= static_cast<std::uint32_t>(t_)) {
        // Report the codeword's first errored frame with nothing flipped, so
        // that the search for the next uncorrectable codeword stays lazy (one
        // decode per errored codeword, never a scan of the whole stream).
        const std::uint64_t first = cw_.front() < static_cast<std::uint64_t>(K_) * F_ ? cw_.front() / F_ : K_ - 1;
        hits_.push_back({c * K_ + first, {}, 1, s});
        continue;
      }
      fec = 2;
    }
    // Uncorrectable (or no FEC): the data bits reach the frames as they are.
    for (auto o : cw_) {
      if (o >= static_cast<std::uint64_t>(K_) * F_) break;  // parity bits carry no frame
      const std::uint64_t slot = c * K_ + o / F_;
      if (hits_.empty() || hits_.back().slot != slot) hits_.push_back({slot, {}, fec, 0});
      hits_.back().pos.push_back(static_cast<std::uint16_t>(o % F_));
      fec = 0;  // count the failed codeword once, with its first frame
    }
    if (fec == 2) hits_.push_back({c * K_ + K_ - 1, {}, 2, 0});  // errors in the parity only
  }
  return hits_.front().slot;
}

void WireFrames::take(std::uint64_t slot, std::vector<std::uint16_t>& pos) {
  pos.clear();
  if (next_hit_slot() != slot) return;
  Hit& h = hits_.front();
  pos = std::move(h.pos);
  if (h.fec == 1) {
    ++corrected_;
    symbols_corrected_ += h.symbols;
  } else if (h.fec == 2) {
    ++failed_;
  }
  hits_.pop_front();
}

}  // namespace fabricsim::rifl
