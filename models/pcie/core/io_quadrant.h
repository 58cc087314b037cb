#pragma once
// IO-die quadrant (one NBIO, host-bridge.md §1-§2): the ports of its host
// bridges into the NBIO, its place in the stall calendar, and the read
// stalls of completions its GPUs send to requesters in other quadrants
// (mechanism A). Plain C++.
#include <cstdint>
#include <ostream>
#include <string>
#include <utility>

#include "models/common/stats_source.h"
#include "models/pcie/core/pcie_port.h"
#include "models/pcie/core/stall_calendar.h"

namespace fabricsim::pcie {

/// IO-die quadrant parameters.
struct IoQuadrantParams {
  int quadrant = 0;            ///< quadrant id: its place in the stall calendar's order
  ReadStallParams read_stall;  ///< how an in-window cross-quadrant read is slowed
};

/// Statistics of a quadrant as a read target.
struct IoQuadrantStats {
  std::uint64_t reads = 0;          ///< read completions sent by endpoints in the quadrant
  std::uint64_t stalled_reads = 0;  ///< of which delayed by a degraded window
  ps_t read_stall_ps = 0;           ///< total delay of the stalled reads, ps
};

/// An IO-die quadrant. The stall calendar (shared by every quadrant of the
/// host, a pure function of time) says when it is degraded; a completion
/// that an endpoint inside it sends to a requester in another quadrant
/// while it is degraded starts late by read_stall() (stall_calendar.h).
/// Draws are keyed by (seed, the host's read sequence number), so they do
/// not depend on which quadrant asks first.
class IoQuadrant : public common::StatsSource {
 public:
  /// `calendar` must outlive the quadrant.
  IoQuadrant(std::string name, const IoQuadrantParams& p, const StallCalendar& calendar, std::uint64_t seed)
      : name_(std::move(name)), p_(p), cal_(calendar), seed_(seed) {}
  IoQuadrant(const IoQuadrant&) = delete;
  IoQuadrant& operator=(const IoQuadrant&) = delete;

  /// True iff the quadrant is inside a degraded window at t (ps).
  bool degraded(ps_t t) const { return cal_.in_window(p_.quadrant, t); }
  /// Delay (ps) of a read completion of `bytes` leaving an endpoint of this
  /// quadrant at t toward a requester in quadrant `requester_quadrant` (-1:
  /// above the quadrants); read_key: the host's read sequence number.
  ps_t completion_stall(int requester_quadrant, ps_t t, std::uint64_t bytes, std::uint64_t read_key) {
    ++stats_.reads;
    const ps_t s = read_stall(cal_, p_.read_stall, requester_quadrant, p_.quadrant, t, bytes, seed_, read_key);
    if (s > 0) {
      ++stats_.stalled_reads;
      stats_.read_stall_ps += s;
    }
    return s;
  }

  const std::string& name() const { return name_; }
  int quadrant() const { return p_.quadrant; }
  const IoQuadrantParams& params() const { return p_; }
  const StallCalendar& calendar() const { return cal_; }
  PciePortSet& ports() { return ports_; }
  const PciePortSet& ports() const { return ports_; }
  const IoQuadrantStats& stats() const { return stats_; }
  /// Statistics: reads, stalled_reads, read_stall_ps, then ports.
  void visit_stats(const common::StatVisitor& v) const override {
    v("reads", stats_.reads);
    v("stalled_reads", stats_.stalled_reads);
    v("read_stall_ps", stats_.read_stall_ps);
    ports_.visit_stats(v);
  }
  /// Window state at t (ps) and ports.
  void dump_state(std::ostream& os, ps_t t) const {
    os << "  quadrant " << name_ << " (id " << p_.quadrant
       << "): " << (degraded(t) ? "inside a degraded window" : "clean") << " at " << t / 1000.0 << "ns, "
       << stats_.stalled_reads << " of " << stats_.reads << " read(s) stalled\n";
    ports_.dump_state(os, "    ");
  }

 private:
  std::string name_;
  IoQuadrantParams p_;
  const StallCalendar& cal_;
  std::uint64_t seed_;
  PciePortSet ports_;
  IoQuadrantStats stats_;
};

}  // namespace fabricsim::pcie
