// The fabric's standard TLM-2.0 boundary (models/fabric/fabric_kernel.h,
// platform/sim/fabric_platform.h): a plain tlm_generic_payload from an
// external initiator bound to a tlm-initiator node, decoded through the
// global address map, timed by the fabric's timing core. One elaboration
// per test process.
#include <gtest/gtest.h>
#include <tlm_utils/simple_initiator_socket.h>

#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <unistd.h>

#include "platform/config/yaml_config.h"
#include "platform/fabric/fabric_config.h"
#include "platform/fabric/fabric_graph.h"
#include "platform/sim/fabric_platform.h"
#include "platform/sim/fabric_run.h"

using namespace fabricsim;

namespace {

// acc0 at 4 GiB (declared), acc1 assigned (first fit from 0), both 64 KiB,
// behind one switch with the initiator cpu0. Error-free links, one fixed FEC
// profile: every latency is the analytic sum.
const char* kFabric =
    "fabric: {name: tlm, kind: explicit}\n"
    "defaults:\n"
    "  accelerator: {memory: 64KiB}\n"
    "  switch: {latency: 100ns}\n"
    "  link:\n"
    "    flit: 640B\n"
    "    forward_rate: 400Gb/s\n"
    "    reverse_rate: 400Gb/s\n"
    "    propagation: 20ns\n"
    "    fec_profiles: [{name: ONLY, overhead: 0%, decode_delay: 10ns, correctable: 15}]\n"
    "    channel: {model: gilbert-elliott, error_good: 0, error_bad: 0}\n"
    "    policy: {name: fixed-strong}\n"
    "nodes:\n"
    "  - {id: acc0, kind: accelerator, address: 0x100000000}\n"
    "  - {id: acc1, kind: accelerator}\n"
    "  - {id: sw0, kind: ualink-switch}\n"
    "  - {id: cpu0, kind: tlm-initiator}\n"
    "links:\n"
    "  - {a: acc0.0, b: sw0.0}\n"
    "  - {a: acc1.0, b: sw0.1}\n"
    "  - {a: cpu0.0, b: sw0.2}\n"
    "workload: {size: 4KiB}\n";

fabric::FabricRunConfig load(const std::vector<std::string>& sets = {}) {
  const std::string p = ::testing::TempDir() + "tlm_boundary_" + std::to_string(::getpid()) + ".yaml";
  {
    std::FILE* f = std::fopen(p.c_str(), "w");
    std::fputs(kFabric, f);
    std::fclose(f);
  }
  auto c = fabric::parse_fabric(config::root_section(config::load_with_overrides(p, sets)));
  std::remove(p.c_str());
  c.workload.run = false;
  return c;
}

// Per link: 640 B at 400 Gb/s = 12.8 ns wire, 20 ns propagation, 10 ns decode.
constexpr double kWireNs = 12.8, kPropNs = 20, kDecNs = 10, kSwitchNs = 100;
// n flits from cpu0 through sw0 to an accelerator (or back): the last flit
// leaves the source after n wires, crosses the switch, is serialized once more.
double path_ns(int flits) { return (flits + 1) * kWireNs + 2 * (kPropNs + kDecNs) + kSwitchNs; }

/// An initiator that runs a script of accesses in its thread (standard TLM only).
struct script_initiator : sc_core::sc_module {
  tlm_utils::simple_initiator_socket<script_initiator> socket;
  std::function<void(script_initiator&)> script;
  bool finished = false;
  explicit script_initiator(const sc_core::sc_module_name& n) : sc_module(n), socket("socket") {
    SC_HAS_PROCESS(script_initiator);
    SC_THREAD(run);
  }
  void run() {
    script(*this);
    finished = true;
  }
  /// One access; returns the response and sets `end` to its completion time
  /// (sc_time_stamp() + annotated delay) given the local offset `offset`.
  tlm::tlm_response_status access(tlm::tlm_command cmd, std::uint64_t addr, unsigned char* data, unsigned len,
                                  sc_core::sc_time offset = sc_core::SC_ZERO_TIME, sc_core::sc_time* end = nullptr,
                                  unsigned char* be = nullptr, unsigned be_len = 0, unsigned width = 0) {
    tlm::tlm_generic_payload tx;
    tx.set_command(cmd);
    tx.set_address(addr);
    tx.set_data_ptr(data);
    tx.set_data_length(len);
    tx.set_streaming_width(width ? width : len);
    tx.set_byte_enable_ptr(be);
    tx.set_byte_enable_length(be_len);
    tx.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
    socket->b_transport(tx, offset);
    if (end) *end = sc_core::sc_time_stamp() + offset;
    return tx.get_response_status();
  }
  unsigned dbg(tlm::tlm_command cmd, std::uint64_t addr, unsigned char* data, unsigned len) {
    tlm::tlm_generic_payload tx;
    tx.set_command(cmd);
    tx.set_address(addr);
    tx.set_data_ptr(data);
    tx.set_data_length(len);
    return socket->transport_dbg(tx);
  }
};

}  // namespace

// The map: acc0 where declared, acc1 first fit from 0; a write then a read of
// a pattern across the switch; the bytes land in the accelerator's memory; the
// write takes the analytic path time, the read a request flit there and the
// data back; a local time offset is honoured (the completion moves with it).
TEST(TlmBoundary, WriteAndReadBackAcrossTheFabric) {
  auto cfg = load();
  sim::FabricPlatform plat(cfg);
  ASSERT_EQ(plat.address_map().regions().size(), 2u);
  EXPECT_EQ(plat.base_address("acc0"), 0x100000000ull);
  EXPECT_EQ(plat.base_address("acc1"), 0x0ull);
  script_initiator cpu("cpu");
  cpu.socket.bind(plat.target_socket("cpu0"));
  std::vector<unsigned char> out(1280), in(1280, 0);  // two flits
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = static_cast<unsigned char>(i * 13 + 1);
  sc_core::sc_time w_end, r_end, off_end;
  sc_core::sc_time w_start, r_start, off_start;
  cpu.script = [&](script_initiator& s) {
    sc_core::wait(sc_core::sc_time(1, sc_core::SC_US));  // away from time 0
    w_start = sc_core::sc_time_stamp();
    EXPECT_EQ(s.access(tlm::TLM_WRITE_COMMAND, 0x100000000ull + 0x100, out.data(), 1280, sc_core::SC_ZERO_TIME, &w_end),
              tlm::TLM_OK_RESPONSE);
    sc_core::wait(w_end - sc_core::sc_time_stamp());
    r_start = sc_core::sc_time_stamp();
    EXPECT_EQ(s.access(tlm::TLM_READ_COMMAND, 0x100000000ull + 0x100, in.data(), 1280, sc_core::SC_ZERO_TIME, &r_end),
              tlm::TLM_OK_RESPONSE);
    // Temporal decoupling: the same write issued 3 us ahead of SystemC time.
    off_start = sc_core::sc_time_stamp() + (r_end - sc_core::sc_time_stamp()) + sc_core::sc_time(3, sc_core::SC_US);
    EXPECT_EQ(
        s.access(tlm::TLM_WRITE_COMMAND, 0x0 + 0x40, out.data(), 1280, off_start - sc_core::sc_time_stamp(), &off_end),
        tlm::TLM_OK_RESPONSE);
  };
  sc_core::sc_start();
  ASSERT_TRUE(cpu.finished);
  EXPECT_EQ(in, out);
  EXPECT_EQ(std::memcmp(plat.accelerator("acc0").memory() + 0x100, out.data(), out.size()), 0);
  EXPECT_EQ(std::memcmp(plat.accelerator("acc1").memory() + 0x40, out.data(), out.size()), 0);
  const double w_ns = (w_end - w_start).to_seconds() * 1e9;
  const double r_ns = (r_end - r_start).to_seconds() * 1e9;
  const double o_ns = (off_end - off_start).to_seconds() * 1e9;
  EXPECT_NEAR(w_ns, path_ns(2), 0.002) << "write: 2 flits to acc0";
  EXPECT_NEAR(r_ns, path_ns(1) + path_ns(2), 0.002) << "read: request flit there, 2 data flits back";
  EXPECT_NEAR(o_ns, path_ns(2), 0.002) << "write at a local time offset of 3 us";
}

// Outside the map (a gap, past the end, across a region's end), byte enables
// and a streaming width below the length get the standard error responses,
// move nothing and take no time.
TEST(TlmBoundary, ErrorResponses) {
  auto cfg = load();
  sim::FabricPlatform plat(cfg);
  script_initiator cpu("cpu");
  cpu.socket.bind(plat.target_socket("cpu0"));
  std::vector<unsigned char> buf(64, 0xab);
  unsigned char be[4] = {0xff, 0, 0xff, 0};
  std::vector<tlm::tlm_response_status> got;
  sc_core::sc_time end;
  cpu.script = [&](script_initiator& s) {
    got.push_back(s.access(tlm::TLM_READ_COMMAND, 0x10000, buf.data(), 64));          // gap after acc1 (64 KiB)
    got.push_back(s.access(tlm::TLM_WRITE_COMMAND, 0x200000000ull, buf.data(), 64));  // beyond acc0
    got.push_back(s.access(tlm::TLM_WRITE_COMMAND, 0x10000 - 32, buf.data(), 64));    // crosses acc1's end
    got.push_back(s.access(tlm::TLM_WRITE_COMMAND, 0x0, buf.data(), 64, sc_core::SC_ZERO_TIME, nullptr, be, 4));
    got.push_back(s.access(tlm::TLM_READ_COMMAND, 0x0, buf.data(), 64, sc_core::SC_ZERO_TIME, nullptr, nullptr, 0, 4));
    got.push_back(s.access(tlm::TLM_WRITE_COMMAND, 0x0, buf.data(), 64, sc_core::SC_ZERO_TIME, &end));
  };
  sc_core::sc_start();
  ASSERT_EQ(got.size(), 6u);
  EXPECT_EQ(got[0], tlm::TLM_ADDRESS_ERROR_RESPONSE);
  EXPECT_EQ(got[1], tlm::TLM_ADDRESS_ERROR_RESPONSE);
  EXPECT_EQ(got[2], tlm::TLM_ADDRESS_ERROR_RESPONSE);
  EXPECT_EQ(got[3], tlm::TLM_BYTE_ENABLE_ERROR_RESPONSE);
  EXPECT_EQ(got[4], tlm::TLM_BURST_ERROR_RESPONSE);
  EXPECT_EQ(got[5], tlm::TLM_OK_RESPONSE);
  // Nothing before the last write reached a memory or took time.
  EXPECT_NEAR(end.to_seconds() * 1e9, path_ns(1), 0.002);
  EXPECT_EQ(plat.accelerator("acc1").memory()[0x10000 - 32], 0);
}

// transport_dbg: writes and reads memories at global addresses without
// timing (SystemC time stays 0, no flit moves); outside the map it moves 0
// bytes; a b_transport read sees the debug write.
TEST(TlmBoundary, TransportDbgHasNoTiming) {
  auto cfg = load();
  sim::FabricPlatform plat(cfg);
  script_initiator cpu("cpu");
  cpu.socket.bind(plat.target_socket("cpu0"));
  unsigned char w[16], r[16] = {0}, r2[16] = {0};
  for (int i = 0; i < 16; ++i) w[i] = static_cast<unsigned char>(0xc0 + i);
  unsigned nw = 0, nr = 0, nbad = 0;
  sc_core::sc_time t_dbg;
  cpu.script = [&](script_initiator& s) {
    nw = s.dbg(tlm::TLM_WRITE_COMMAND, 0x100000000ull + 0x2000, w, 16);
    nr = s.dbg(tlm::TLM_READ_COMMAND, 0x100000000ull + 0x2000, r, 16);
    nbad = s.dbg(tlm::TLM_READ_COMMAND, 0x80000000ull, r, 16);
    t_dbg = sc_core::sc_time_stamp();
    s.access(tlm::TLM_READ_COMMAND, 0x100000000ull + 0x2000, r2, 16);
  };
  sc_core::sc_start();
  EXPECT_EQ(nw, 16u);
  EXPECT_EQ(nr, 16u);
  EXPECT_EQ(nbad, 0u);
  EXPECT_EQ(t_dbg, sc_core::SC_ZERO_TIME);
  EXPECT_EQ(std::memcmp(r, w, 16), 0);
  EXPECT_EQ(std::memcmp(r2, w, 16), 0);
  EXPECT_EQ(std::memcmp(plat.accelerator("acc0").memory() + 0x2000, w, 16), 0);
}

// Causality with accelerator traffic: while acc1 writes to acc0 in a loop,
// the initiator's write to acc0 shares the switch's output port and the
// accelerators' run takes exactly as long as without the initiator when the
// initiator only idles (an idle foreign initiator never lets the core run
// ahead of what it could still send, and never delays the ranks).
TEST(TlmBoundary, IdleInitiatorDoesNotDisturbRanks) {
  auto cfg = load();
  sim::FabricPlatform plat(cfg);
  script_initiator cpu("cpu");
  cpu.socket.bind(plat.target_socket("cpu0"));
  std::uint64_t acc_end = 0;
  plat.accelerator(1).set_program(
      [&](models::accelerator_api& a) {
        for (int i = 0; i < 4; ++i) a.wait(a.post_write(0, 0, 0, 1280, -1));
        acc_end = a.now_ps();
      },
      2);
  cpu.script = [&](script_initiator&) { sc_core::wait(sc_core::sc_time(10, sc_core::SC_US)); };
  sc_core::sc_start();
  ASSERT_TRUE(cpu.finished);
  // acc1 -> sw0 -> acc0: 4 sequential 2-flit writes, each the analytic path time.
  EXPECT_NEAR(acc_end / 1e3, 4 * path_ns(2), 0.01);
}

// A plain `run` has no initiator to bind a tlm-initiator to: exit-2 error
// naming the node (file, line, key); `check` accepts the fabric.
TEST(TlmBoundary, RunWithUnboundInitiatorIsAClearError) {
  auto cfg = load();
  cfg.workload.run = true;
  try {
    sim::run_fabric(cfg);
    FAIL() << "no error";
  } catch (const fabric::FabricError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("key 'nodes[3].id'"), std::string::npos) << m;
    EXPECT_NE(m.find("tlm-initiator"), std::string::npos) << m;
  }
}
