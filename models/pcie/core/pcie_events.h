#pragma once
// What the PCIe host's components share: the one event queue (a radix heap
// ordering events by time) and the table of transfers in flight. The queue
// knows no component; PcieEngine pops events and delivers each to the
// component it names. Plain C++.
#include <cstdint>
#include <vector>

#include "models/fabric/core/radix_heap.h"
#include "models/fabric/core/timing_core.h"

namespace fabricsim::pcie {

using fabric_core::TransferKind;
using link::ps_t;

/// Events of the PCIe host. The id is an endpoint index (inject: the
/// endpoint may send its next burst; release: the endpoint's ordering point
/// at its host bridge may release its head burst) or a transfer id (complete).
enum class PcieEvent : std::size_t { inject = 0, release = 1, complete = 2 };

/// The one event queue of a PCIe host: (time, event, id), popped in time
/// order; among equal times the most recently pushed first (RadixHeap).
class PcieEventQueue {
 public:
  /// Schedule an event at t (ps, >= now()).
  void push(ps_t t, PcieEvent e, std::size_t id) { heap_.push(t, id * 4 + static_cast<std::size_t>(e)); }
  bool empty() const { return heap_.empty(); }
  /// Earliest pending event time (link::kNever if none).
  ps_t next_time() { return heap_.empty() ? link::kNever : heap_.min_key(); }
  /// Pop the earliest event; now() becomes its time.
  void pop(ps_t& t, PcieEvent& e, std::size_t& id) {
    const auto [k, v] = heap_.pop();
    t = now_ = k;
    e = static_cast<PcieEvent>(v % 4);
    id = v / 4;
  }
  /// Time of the last event popped, ps.
  ps_t now() const { return now_; }
  std::size_t size() const { return heap_.size(); }

 private:
  fabric_core::RadixHeap heap_;
  ps_t now_ = 0;
};

/// A transfer in flight: a posted write, a read request or a read completion.
struct PcieTransfer {
  std::uint64_t cookie = 0;
  int src = 0, dst = 0;  ///< ranks
  int dst_ep = 0;        ///< endpoint index of dst
  TransferKind kind = TransferKind::write;
  std::uint64_t left = 0;        ///< payload bytes not yet injected
  std::uint32_t unresolved = 0;  ///< bursts injected whose arrival is not yet known (held at an ordering point)
  ps_t release = 0;              ///< eligible from, ps
  ps_t last_arrival = 0;         ///< latest tail arrival of its bursts so far, ps
  bool complete_scheduled = false;
};

/// Transfers in flight, with ids reused after completion.
class PcieTransferTable {
 public:
  /// A fresh transfer's id.
  std::uint32_t create() {
    if (!free_.empty()) {
      const auto k = free_.back();
      free_.pop_back();
      t_[k] = PcieTransfer{};
      return k;
    }
    t_.emplace_back();
    return static_cast<std::uint32_t>(t_.size() - 1);
  }
  PcieTransfer& operator[](std::size_t id) { return t_[id]; }
  const PcieTransfer& operator[](std::size_t id) const { return t_[id]; }
  /// The id may be reused.
  void release_id(std::uint32_t id) { free_.push_back(id); }
  /// A burst of transfer `id` arrives (its tail) at t: once every byte is
  /// injected and every burst's arrival known, schedule the completion at the
  /// last arrival (no earlier than q.now()).
  void arrived(std::uint32_t id, ps_t t, PcieEventQueue& q) {
    PcieTransfer& T = t_[id];
    if (t > T.last_arrival) T.last_arrival = t;
    if (T.left == 0 && T.unresolved == 0 && !T.complete_scheduled) {
      T.complete_scheduled = true;
      q.push(T.last_arrival > q.now() ? T.last_arrival : q.now(), PcieEvent::complete, id);
    }
  }

 private:
  std::vector<PcieTransfer> t_;
  std::vector<std::uint32_t> free_;
};

}  // namespace fabricsim::pcie
