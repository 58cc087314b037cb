// example_tlm_initiator FABRIC.yaml [--set key.path=value]... [--target ACC] [--at NODE.PORT]
//
// Elaborates a UALink fabric file with fabricsim's library, attaches a
// standard TLM-2.0 load/store generator (load_store_initiator.h, standard
// headers only) at a tlm-initiator node, stores a 4 KiB pattern into the
// memory of accelerator ACC (default acc5) across the fabric in 64-B
// accesses, loads it back, reads it once more in one 4 KiB burst, and
// prints the latencies and "read-back ok".
//
// The fabric's first tlm-initiator node is used; if it has none, one named
// `cpu0` is attached with defaults.link at NODE.PORT (--at), by default at
// the first UALink switch (else the first accelerator) on its first free port.
// The file's workload is not run; `memory: auto` accelerators get 1 MiB.
// Exit status: 0 read back ok (or a timing-only fabric, workload.data: false,
// whose memories hold no bytes to check), 1 wrong data or an error response, 2 bad
// input (file, line and key named), 3 the run could not finish.
#include <systemc>
#include <tlm>

#include <fmt/format.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include "examples/tlm_initiator/load_store_initiator.h"
#include "models/fabric/core/fabric_engine.h"
#include "platform/config/yaml_config.h"
#include "platform/fabric/fabric_config.h"
#include "platform/fabric/fabric_graph.h"
#include "platform/sim/fabric_platform.h"

using namespace fabricsim;

namespace {

constexpr unsigned kPatternBytes = 4096;
constexpr unsigned kAccessBytes = 64;

int usage() {
  std::cerr << "usage: example_tlm_initiator FABRIC.yaml [--set key.path=value]... [--target ACC] [--at NODE.PORT]\n";
  return 2;
}

// The initiator node: the fabric's first tlm-initiator, else `cpu0` attached at `at` (or the default point).
std::string initiator_node(fabric::FabricRunConfig& cfg, std::string at) {
  for (const auto& n : cfg.fabric.nodes)
    if (n.kind == fabric::kTlmInitiator) return n.id;
  std::string node;
  std::uint32_t port = 0;
  if (!at.empty()) {
    const auto dot = at.rfind('.');
    if (dot == std::string::npos) throw fabric::FabricError("--at '" + at + "' is not NODE.PORT");
    node = at.substr(0, dot);
    // a port index as in a fabric file's links: digits, 0 .. 65535
    const std::string p = at.substr(dot + 1);
    if (p.empty() || p.size() > 5 || p.find_first_not_of("0123456789") != std::string::npos || std::stoul(p) > 65535)
      throw fabric::FabricError("--at '" + at + "': the port must be a number from 0 to 65535");
    port = static_cast<std::uint32_t>(std::stoul(p));
  } else {
    for (const auto& n : cfg.fabric.nodes)
      if (node.empty() && n.kind == "ualink-switch") node = n.id;
    if (node.empty()) node = cfg.fabric.nodes.at(0).id;
    std::size_t idx = 0;
    while (cfg.fabric.nodes[idx].id != node) ++idx;
    for (const auto& l : cfg.fabric.links) {  // first free port: one past the highest in use
      if (l.a == idx) port = std::max(port, l.a_port + 1);
      if (l.b == idx) port = std::max(port, l.b_port + 1);
    }
  }
  sim::attach_tlm_initiator(cfg, "cpu0", node, port);
  std::cout << fmt::format("attached tlm-initiator cpu0 at {}.{}\n", node, port);
  return "cpu0";
}

// No SystemC banner on stdout (it would print after the example's own lines).
const bool kBannerOff = (setenv("SC_COPYRIGHT_MESSAGE", "DISABLE", 1), true);

}  // namespace

int sc_main(int argc, char* argv[]) {
  if (argc < 2) return usage();
  std::string path = argv[1], target = "acc5", at;
  std::vector<std::string> sets;
  for (int i = 2; i < argc; ++i) {
    const std::string a = argv[i];
    if (i + 1 >= argc) return usage();
    if (a == "--set")
      sets.push_back(argv[++i]);
    else if (a == "--target")
      target = argv[++i];
    else if (a == "--at")
      at = argv[++i];
    else
      return usage();
  }
  sc_core::sc_set_time_resolution(1, sc_core::SC_PS);
  // The initiators' global quantum (tlm_quantumkeeper): 1 us.
  tlm_utils::tlm_quantumkeeper::set_global_quantum(sc_core::sc_time(1, sc_core::SC_US));
  try {
    auto cfg = fabric::parse_fabric(config::root_section(config::load_with_overrides(path, sets)));
    // No collective runs here: `memory: auto` accelerators get 1 MiB, not the
    // file's workload buffers (a 64-rank pod would otherwise hold GiBs).
    cfg.workload.run = false;
    const std::string node = initiator_node(cfg, at);
    sim::FabricPlatform plat(cfg);
    const std::uint64_t base = plat.base_address(target);
    load_store_initiator cpu("cpu", base, kPatternBytes, kAccessBytes);
    cpu.socket.bind(plat.target_socket(node));
    std::cout << fmt::format("{}: {} accelerators; {} -> {} memory at {:#x}\n", cfg.fabric.name,
                             cfg.fabric.accelerators(), node, target, base);
    sc_core::sc_start();
    const auto& r = cpu.outcome();
    if (!r.done) {
      std::cerr << "error: the initiator did not finish\n";
      return 3;
    }
    std::cout << fmt::format("store latency ({} B): {:.3f} ns\n", kAccessBytes, r.first_store_ps / 1e3);
    std::cout << fmt::format("round-trip latency ({} B load): {:.3f} ns\n", kAccessBytes, r.first_load_ps / 1e3);
    std::cout << fmt::format("round-trip latency ({} B burst load): {:.3f} ns\n", kPatternBytes, r.burst_read_ps / 1e3);
    std::cout << fmt::format("{} stores + {} loads + 1 burst: {:.3f} ns of local time\n", kPatternBytes / kAccessBytes,
                             kPatternBytes / kAccessBytes, r.total_ps / 1e3);
    // The link directions that carried flits (the path there and back), with
    // the FEC profiles they used (names of the fabric's FEC menu).
    const auto& eng = dynamic_cast<const fabric_core::FabricEngine&>(plat.kernel().engine());
    for (std::size_t d = 0; d < eng.directions(); ++d) {
      const auto ds = eng.direction_stats(d);
      if (ds.stats->transmissions == 0) continue;
      if (ds.protocol == fabric_core::LinkProtocol::rifl) {  // frames, no FEC profiles
        std::cout << fmt::format("link {}.port{} -> {} (RIFL): {} frames, {} retransmitted\n", ds.from, ds.from_port,
                                 ds.to, ds.stats->transmissions, ds.replayed_flits);
        continue;
      }
      std::string prof;
      const auto& menu = cfg.fabric.links[d / 2].link.fec_menu;  // direction d belongs to link d / 2
      for (std::size_t k = 0; k < menu.size() && k < ds.stats->profile_transmissions.size(); ++k)
        if (ds.stats->profile_transmissions[k])
          prof += fmt::format(" {}={}", menu[k].name, ds.stats->profile_transmissions[k]);
      std::cout << fmt::format("link {}.port{} -> {}: {} flit transmissions, {} replayed, profiles{}\n", ds.from,
                               ds.from_port, ds.to, ds.stats->transmissions, ds.replayed_flits, prof);
    }
    if (!r.error.empty()) {
      std::cout << "error response: " << r.error << "\n";
      return 1;
    }
    // The bytes in the accelerator's memory itself, as stored.
    const unsigned char* m = plat.accelerator(target).memory();
    if (m == nullptr) {  // workload.data: false: timed, but no bytes to check
      std::cout << "timing only (workload.data: false): the memories hold no bytes, read-back not checked\n";
      return 0;
    }
    bool in_memory = true;
    for (unsigned i = 0; in_memory && i < kPatternBytes; ++i) in_memory = m[i] == load_store_initiator::pattern(i);
    if (!r.read_back_ok || !in_memory) {
      std::cout << "read-back WRONG\n";
      return 1;
    }
    std::cout << "read-back ok\n";
    return 0;
  } catch (const config::ConfigError& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 2;
  } catch (const fabric::FabricError& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 2;
  } catch (const std::out_of_range& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 2;
  }
}
