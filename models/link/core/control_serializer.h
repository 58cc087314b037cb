#pragma once
// Reverse control path shared by cumulative ACKs and replay-request copies
// (link-layer.md §1: base delay 50 ns, then serialization at the reverse rate,
// then propagation).
#include <cstdint>
#include <tuple>

#include "models/link/core/intern.h"
#include "models/link/core/ring_queue.h"
#include "models/link/core/types.h"

namespace fabricsim::link {

/// One control flit on the reverse link.
struct ControlFlit {
  enum class Kind : std::uint8_t { ack, replay_request };
  Kind kind = Kind::ack;
  std::uint64_t seq = 0;         ///< ACK: cumulative (all < seq received); request: requested seq
  std::uint64_t request_id = 0;  ///< request: id shared by its copies (0 for ACKs)
  ps_t start = 0;                ///< serialization start on the reverse link
  ps_t arrival = 0;              ///< arrival at the transmitter
};

/// FIFO reverse serializer. A control flit generated at t is ready at
/// t + base_delay, serialized in order of readiness (one at a time, each for
/// `serialization` ps) and arrives `propagation` ps after its last bit.
/// Since every delay is constant the FIFO is exact without events: the
/// arrival time is computed on enqueue. Optional ACK coalescing (a project
/// extension, off by default): a new ACK replaces the newest queued ACK that
/// has not started serializing.
class ControlSerializer {
 public:
  ControlSerializer(ps_t base_delay, ps_t serialization, ps_t propagation, bool coalesce_acks)
      : k_(&intern(Timing{base_delay, serialization, propagation, coalesce_acks})) {}

  /// Schedule a cumulative ACK generated at `now`.
  void send_ack(ps_t now, std::uint64_t cum) {
    const ps_t ready = now + k_->base;
    if (k_->coalesce && !q_.empty() && !q_.back().is_request() && q_.back().arrival - k_->prop - k_->ser > ready) {
      q_.back().seq = cum;
      ++coalesced_;
      return;
    }
    push({ControlFlit::Kind::ack, cum, 0, 0, 0}, ready);
  }

  /// Schedule `copies` copies of replay request `id` for `seq`, generated at `now`.
  void send_request(ps_t now, std::uint64_t seq, std::uint64_t id, std::uint32_t copies) {
    for (std::uint32_t c = 0; c < copies; ++c) push({ControlFlit::Kind::replay_request, seq, id, 0, 0}, now + k_->base);
    requests_queued_ += copies;
  }

  bool empty() const { return q_.empty(); }
  ps_t next_arrival() const { return q_.empty() ? kNever : q_.front().arrival; }
  ControlFlit pop() {
    const Slot q = q_.front();
    q_.pop_front();
    ControlFlit f;
    f.kind = q.is_request() ? ControlFlit::Kind::replay_request : ControlFlit::Kind::ack;
    f.seq = q.seq;
    f.request_id = q.id_kind >> 1;
    f.arrival = q.arrival;
    f.start = q.arrival - k_->prop - k_->ser;
    if (q.is_request()) --requests_queued_;
    return f;
  }
  /// Replay-request copies queued or in flight.
  std::size_t requests_queued() const { return requests_queued_; }
  std::size_t in_flight() const { return q_.size(); }
  /// Room for n control flits before the queue's first growth.
  void reserve(std::size_t n) { q_.reserve(n); }
  /// Address of the oldest control flit's slot (for a prefetch).
  const void* head_address() const { return q_.head_address(); }
  std::uint64_t flits_sent() const { return sent_; }
  std::uint64_t acks_coalesced() const { return coalesced_; }

 private:
  void push(ControlFlit f, ps_t ready) {
    f.start = ready > free_ ? ready : free_;
    free_ = f.start + k_->ser;
    f.arrival = free_ + k_->prop;
    // The start is not stored: it is arrival - propagation - serialization.
    q_.emplace_back(f.seq, f.arrival, f.request_id << 1 | (f.kind == ControlFlit::Kind::replay_request ? 1u : 0u));
    ++sent_;
  }
  // A queued control flit in 24 bytes (kind in the low bit of the id).
  struct Slot {
    std::uint64_t seq;
    ps_t arrival;
    std::uint64_t id_kind;  // request_id << 1 | (replay request ? 1 : 0)
    bool is_request() const { return (id_kind & 1u) != 0; }
  };
  // What every event reads (the queue's head, the request count) first. The
  // first kInlineFlits control flits in flight live inside the serializer
  // (in the 1,024-accelerator pod at most 8 are in flight on nearly every
  // ACK), so the head of a short queue is in the link direction's own lines.
  static constexpr std::uint32_t kInlineFlits = 4;
  InlineRingQueue<Slot, kInlineFlits> q_;
  std::size_t requests_queued_ = 0;
  ps_t free_ = 0;
  // The constants (base delay, serialization, propagation, ACK coalescing),
  // interned: every serializer with those values shares one copy (a
  // fabric's 16,384 serializers keep 8 bytes of them).
  struct Timing {
    ps_t base, ser, prop;
    bool coalesce;
    bool operator<(const Timing& o) const {
      return std::tie(base, ser, prop, coalesce) < std::tie(o.base, o.ser, o.prop, o.coalesce);
    }
  };
  const Timing* k_;
  std::uint64_t sent_ = 0;
  std::uint64_t coalesced_ = 0;
};

}  // namespace fabricsim::link
