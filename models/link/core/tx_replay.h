#pragma once
// TxReplay: the transmitter's retained-flit buffer (link-layer.md §1).
#include <cstdint>
#include <cstring>
#include <memory>

namespace fabricsim::link {

/// Retains every admitted payload flit until a cumulative ACK covers it, and
/// counts attempts per retained flit against the retry limit.
///
/// Sequence numbers are 64-bit and never wrap (wrap is abstracted, as in the
/// paper). Entries are [oldest(), next_seq()). Occupancy = retained entries.
/// A replay request is NOT an ACK: only release_through() frees entries.
class TxReplay {
 public:
  /// retry_limit: the maximum number of transmissions of one flit (paper: 20).
  explicit TxReplay(std::uint32_t retry_limit) : ring_(new std::uint32_t[64]()), retry_limit_(retry_limit) {}
  TxReplay(const TxReplay& o)
      : oldest_(o.oldest_), next_(o.next_), ring_(new std::uint32_t[o.mask_ + 1]), mask_(o.mask_),
        retry_limit_(o.retry_limit_) {
    std::memcpy(ring_.get(), o.ring_.get(), sizeof(std::uint32_t) * (mask_ + 1));
  }
  TxReplay& operator=(const TxReplay& o) {
    if (this != &o) {
      TxReplay t(o);
      std::swap(*this, t);
    }
    return *this;
  }
  TxReplay(TxReplay&&) noexcept = default;
  TxReplay& operator=(TxReplay&&) noexcept = default;

  /// Admit a new payload flit; returns its sequence number.
  std::uint64_t admit() {
    if (occupancy() == static_cast<std::uint64_t>(mask_) + 1) grow();
    ring_[next_ & mask_] = 0;
    return next_++;
  }

  /// Cumulative ACK `cum`: every entry with seq < cum is released. Values at
  /// or below oldest() are stale and ignored; values above next_seq() are
  /// clamped. Returns the number of entries released.
  std::uint64_t release_through(std::uint64_t cum) {
    if (cum > next_) cum = next_;
    if (cum <= oldest_) return 0;
    const std::uint64_t n = cum - oldest_;
    oldest_ = cum;
    return n;
  }

  /// Record one transmission of `seq`. Returns the attempt number (1 = first)
  /// of a retained entry, 0 for a copy of an entry already released (a stale
  /// queued copy), or kRetryExceeded when this transmission would exceed the
  /// retry limit (a terminal failure; the attempt is not recorded).
  static constexpr std::uint32_t kRetryExceeded = 0xffffffffu;
  std::uint32_t record_attempt(std::uint64_t seq) {
    if (!retained(seq)) return 0;
    auto& a = ring_[seq & mask_];
    if (a >= retry_limit_) return kRetryExceeded;
    return ++a;
  }

  /// Attempts made so far for a retained entry (0 if not retained).
  std::uint32_t attempts(std::uint64_t seq) const { return retained(seq) ? ring_[seq & mask_] : 0; }
  bool retained(std::uint64_t seq) const { return seq >= oldest_ && seq < next_; }
  std::uint64_t oldest() const { return oldest_; }
  std::uint64_t next_seq() const { return next_; }
  std::uint64_t occupancy() const { return next_ - oldest_; }
  std::uint32_t retry_limit() const { return retry_limit_; }

 private:
  // Attempts per retained entry in a power-of-two ring indexed by seq & mask_
  // (32 bytes in all: the hot state of a link direction stays in few lines).
  void grow() {
    const std::uint64_t n = (static_cast<std::uint64_t>(mask_) + 1) * 2;
    std::unique_ptr<std::uint32_t[]> bigger(new std::uint32_t[n]());
    for (std::uint64_t s = oldest_; s < next_; ++s) bigger[s & (n - 1)] = ring_[s & mask_];
    ring_.swap(bigger);
    mask_ = static_cast<std::uint32_t>(n - 1);
  }
  std::uint64_t oldest_ = 0;
  std::uint64_t next_ = 0;
  std::unique_ptr<std::uint32_t[]> ring_;
  std::uint32_t mask_ = 63;
  std::uint32_t retry_limit_;
};

}  // namespace fabricsim::link
