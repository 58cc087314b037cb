#pragma once
// Links of the PCIe host tree (docs/models/pcie.md): a downstream port of a
// tree element (switch partition, host bridge, IO-die quadrant, data fabric)
// and the link to the child below it, as two FIFO resources (up, down); a
// route is the chain of link directions a burst crosses. Plain C++.
#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "models/common/stats_source.h"
#include "models/link/core/types.h"

namespace fabricsim::pcie {

using link::ps_t;

/// One direction of a link: a FIFO resource with a bandwidth and a head latency.
struct PcieLinkDir {
  double ps_per_byte = 0;  ///< serialisation, ps per payload byte (0: no bandwidth limit)
  ps_t latency_ps = 0;     ///< head latency over the link (wire + the receiving element's forwarding), ps
  ps_t free_ps = 0;        ///< the direction is reserved until then, ps
  // Statistics.
  std::uint64_t bursts = 0;  ///< bursts (and read requests) that crossed it
  std::uint64_t bytes = 0;   ///< payload bytes (read requests: their header bytes) that crossed it
  ps_t busy_ps = 0;          ///< sum of the reservations' lengths (start to end), ps

  /// Reserve the direction for a burst of `bytes` whose head and tail arrive
  /// at head / tail (ps), cut-through: it starts when its head has arrived
  /// and the direction is free, ends no earlier than its serialisation and
  /// its tail's arrival. head / tail become the arrival after the link.
  /// Returns the end of the reservation.
  ps_t reserve(std::uint64_t n, ps_t& head, ps_t& tail) {
    const ps_t start = head > free_ps ? head : free_ps;
    const ps_t s = start + link::checked_ps(ps_per_byte * static_cast<double>(n), "serialization time");
    const ps_t end = s > tail ? s : tail;
    free_ps = end;
    ++bursts;
    bytes += n;
    busy_ps += end - start;
    head = start + latency_ps;
    tail = end + latency_ps;
    return end;
  }
};

/// Parameters of the link below a port (both directions).
struct PciePortParams {
  double up_ps_per_byte = 0;    ///< toward the element (upstream), ps per payload byte (0: unlimited)
  double down_ps_per_byte = 0;  ///< toward the child (downstream), ps per payload byte
  ps_t up_latency_ps = 0;       ///< upstream head latency: wire + the element's forwarding, ps
  ps_t down_latency_ps = 0;     ///< downstream head latency: wire + the child's forwarding, ps
};

/// A downstream port: the link to one child (named by the child).
struct PciePort {
  std::string child;
  PcieLinkDir up, down;
};

/// The downstream ports of one tree element. Ports are added while the tree
/// is built, before any route takes their address.
class PciePortSet {
 public:
  /// Add the port toward `child`; returns its index.
  std::size_t add(const std::string& child, const PciePortParams& p) {
    PciePort port;
    port.child = child;
    port.up.ps_per_byte = p.up_ps_per_byte;
    port.up.latency_ps = p.up_latency_ps;
    port.down.ps_per_byte = p.down_ps_per_byte;
    port.down.latency_ps = p.down_latency_ps;
    ports_.push_back(std::move(port));
    return ports_.size() - 1;
  }
  std::size_t size() const { return ports_.size(); }
  PciePort& operator[](std::size_t i) { return ports_[i]; }
  const PciePort& operator[](std::size_t i) const { return ports_[i]; }
  /// Statistics "port.<child>.{up,down}_{bursts,bytes,busy_ps}".
  void visit_stats(const common::StatVisitor& v) const {
    for (const auto& p : ports_) {
      const std::string k = "port." + p.child + ".";
      v(k + "up_bursts", p.up.bursts);
      v(k + "up_bytes", p.up.bytes);
      v(k + "up_busy_ps", p.up.busy_ps);
      v(k + "down_bursts", p.down.bursts);
      v(k + "down_bytes", p.down.bytes);
      v(k + "down_busy_ps", p.down.busy_ps);
    }
  }
  /// One line per port: reservation ends of both directions (ns).
  void dump_state(std::ostream& os, const std::string& indent) const {
    for (const auto& p : ports_)
      os << indent << "port " << p.child << ": up free at " << p.up.free_ps / 1000.0 << "ns, down free at "
         << p.down.free_ps / 1000.0 << "ns\n";
  }

 private:
  std::vector<PciePort> ports_;
};

/// The link directions a burst crosses from one endpoint to another (tree
/// path: up to the lowest common ancestor, then down), with the two places
/// where the source's host bridge acts on posted writes.
struct PcieRoute {
  std::vector<PcieLinkDir*> hops;
  int order_idx = -1;  ///< first hop after the source's host bridge (its ordering point); -1: no host bridge on the way
  int accept_idx = -1;  ///< hop whose end is the acceptance at the destination host bridge (else the last hop)
  int dest_key = -1;    ///< fabric destination of a write: the destination's quadrant (host memory: -2)
  ps_t order_to_accept_ps =
      0;  ///< head latency of hops [order_idx, accept_idx]: ordering point to destination host bridge, ps
};

/// Reserve hops [from, to) of r for a burst of `bytes`; head / tail: arrival
/// at hop `from` in, after hop to-1 out (ps); *accept: end of hop
/// r.accept_idx when it is crossed.
inline void walk(const PcieRoute& r, int from, int to, std::uint64_t bytes, ps_t& head, ps_t& tail, ps_t* accept) {
  for (int i = from; i < to; ++i) {
    const ps_t end = r.hops[i]->reserve(bytes, head, tail);
    if (accept && i == r.accept_idx) *accept = end;
  }
}

}  // namespace fabricsim::pcie
