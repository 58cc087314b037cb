#pragma once
// Strictly in-order receiver (link-layer.md §1).
#include <cstdint>

namespace fabricsim::link {

/// Accepts only the expected sequence number; everything after a failed flit
/// is dropped until the failed one arrives intact.
class InOrderReceiver {
 public:
  enum class Verdict {
    deliver,       ///< decoded and == expected: delivered, expected advances
    duplicate,     ///< decoded but < expected: already delivered, dropped
    out_of_order,  ///< decoded but > expected: dropped (a hole precedes it)
    failed,        ///< uncorrectable: dropped
  };

  /// Classify one decoded flit `seq`; `decoded` = FEC decode succeeded.
  Verdict receive(std::uint64_t seq, bool decoded) {
    if (!decoded) return Verdict::failed;
    if (seq == expected_) {
      ++expected_;
      return Verdict::deliver;
    }
    return seq < expected_ ? Verdict::duplicate : Verdict::out_of_order;
  }
  /// Next sequence number the receiver will accept; also the cumulative ACK value.
  std::uint64_t expected() const { return expected_; }

 private:
  std::uint64_t expected_ = 0;
};

}  // namespace fabricsim::link
