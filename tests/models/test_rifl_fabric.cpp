// Fabrics over RIFL links (`link.protocol: rifl`): the collectives move real
// bytes through the accelerators while the links run the RIFL lanes; every
// result is checked against the reference. One elaboration per test process.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <unistd.h>

#include "platform/config/yaml_config.h"
#include "platform/fabric/fabric_config.h"
#include "platform/sim/fabric_run.h"

using namespace fabricsim;

namespace {
const std::string kRing8 = std::string(FABRICSIM_SOURCE_DIR) + "/topologies/ring8.yaml";

fabric::FabricRunConfig load(const std::string& path, std::vector<std::string> sets) {
  return fabric::parse_fabric(config::root_section(config::load_with_overrides(path, sets)));
}

// ring8.yaml with `extra` appended, in a file of this process.
std::string ring8_with(const std::string& extra) {
  std::ifstream in(kRing8);
  std::stringstream ss;
  ss << in.rdbuf() << extra;
  const auto p = std::filesystem::temp_directory_path() / ("rifl-fabric-" + std::to_string(::getpid()) + ".yaml");
  std::ofstream(p) << ss.str();
  return p.string();
}

std::uint64_t sum(const nlohmann::ordered_json& links, const char* key) {
  std::uint64_t s = 0;
  for (const auto& d : links) s += d[key].get<std::uint64_t>();
  return s;
}
}  // namespace

TEST(RiflFabric, Ring8AllReduceOverRiflLinksIsExact) {
  const auto cfg = load(kRing8, {"defaults.link.protocol=rifl", "workload.size=1MiB"});
  const auto r = sim::run_fabric(cfg);
  ASSERT_TRUE(r.ok) << r.diagnosis;
  ASSERT_TRUE(r.link_down.empty()) << r.link_down;
  EXPECT_TRUE(r.row.correct);
  EXPECT_EQ(r.json["collective"]["correct"], true);
  const auto& rl = r.json["rifl_links"];
  ASSERT_EQ(rl.size(), 16u);  // 8 links, both directions
  // Ring AllReduce: each rank sends 2 (N-1)/N of the vector to its successor,
  // in 640-B flits, one direction of each link only.
  const std::uint64_t flits_per_link = 2 * 7 * ((1u << 20) / 8 / 640 + ((1u << 20) / 8 % 640 ? 1 : 0));
  std::uint64_t loaded = 0;
  for (const auto& d : rl) {
    EXPECT_EQ(d["flits_delivered"], d["flits_offered"]);
    if (d["flits_delivered"].get<std::uint64_t>() > 0) {
      ++loaded;
      EXPECT_EQ(d["flits_delivered"].get<std::uint64_t>(), flits_per_link) << d.dump();
      EXPECT_EQ(d["fresh_data_frames"].get<std::uint64_t>(), flits_per_link * 22) << d.dump();  // 22 frames a flit
    }
  }
  EXPECT_EQ(loaded, 8u);
  EXPECT_EQ(sum(rl, "retransmitted_frames"), 0u);  // the default RIFL channel is error-free
  // Bounded below by the wire: 22 frames of 256 bits per flit over 4 x 100 Gb/s.
  const double wire_us = flits_per_link * 22 * 256 / 400e9 * 1e6;
  EXPECT_GT(r.row.time_us, wire_us);
  EXPECT_LT(r.row.time_us, 2 * wire_us);
  EXPECT_NE(r.links_csv.find("fabric.acc0,1,fabric.acc1,"), std::string::npos);
}

TEST(RiflFabric, BitErrorsAreRetransmittedAndTheResultStaysExact) {
  const auto cfg = load(kRing8, {"defaults.link.protocol=rifl", "defaults.link.rifl.channel.ber=2e-6", "workload.size=1MiB"});
  const auto r = sim::run_fabric(cfg);
  ASSERT_TRUE(r.ok) << r.diagnosis;
  EXPECT_TRUE(r.row.correct);
  const auto& rl = r.json["rifl_links"];
  EXPECT_GT(sum(rl, "hit_frames"), 0u);
  EXPECT_GT(sum(rl, "retrans_entries"), 0u);
  EXPECT_GT(sum(rl, "retransmitted_frames"), 0u);
  EXPECT_EQ(sum(rl, "flits_delivered"), sum(rl, "flits_offered"));
  EXPECT_EQ(r.json["fabric"]["replayed_flits"].get<std::uint64_t>(), sum(rl, "retransmitted_frames"));
}

TEST(RiflFabric, MixedUalinkAndRiflLinksOnOneRing) {
  const auto path = ring8_with(
      "link_overrides:\n"
      "  - index: 3\n"
      "    link:\n"
      "      protocol: rifl\n"
      "      rifl: {lanes: 8, frame_bits: 512}\n");
  const auto cfg = load(path, {"workload.size=1MiB"});
  std::filesystem::remove(path);
  ASSERT_EQ(cfg.fabric.links[3].proto.protocol, fabric_core::LinkProtocol::rifl);
  ASSERT_EQ(cfg.fabric.links[3].proto.rifl.lanes, 8u);
  ASSERT_EQ(cfg.fabric.links[2].proto.protocol, fabric_core::LinkProtocol::ualink);
  const auto r = sim::run_fabric(cfg);
  ASSERT_TRUE(r.ok) << r.diagnosis;
  EXPECT_TRUE(r.row.correct);
  const auto& rl = r.json["rifl_links"];
  ASSERT_EQ(rl.size(), 2u);
  EXPECT_EQ(rl[0]["from"], "fabric.acc3");
  EXPECT_EQ(rl[0]["to"], "fabric.acc4");
  EXPECT_GT(rl[0]["flits_delivered"].get<std::uint64_t>(), 0u);
  // The UALink links keep their FEC residency columns; the RIFL rows leave them empty.
  EXPECT_NE(r.links_csv.find(",tx_LOW,tx_LIGHT,tx_STRONG"), std::string::npos);
  EXPECT_EQ(r.json["config"]["link_overrides"][0]["config"]["protocol"], "rifl");
  EXPECT_EQ(r.json["config"]["link_overrides"][0]["config"]["rifl"]["lanes"], 8);
}

TEST(RiflFabric, LinkThatCannotProgressEndsWithADiagnosis) {
  // Parsed before the run (a run that stops with SystemC threads suspended,
  // docs/testing.md).
  // Two ranks: one link, both directions loaded.
  const auto cfg = load(kRing8, {"fabric.accelerators=2", "defaults.link.protocol=rifl",
                                 "defaults.link.rifl.channel.ber=0.01", "workload.size=64KiB"});
  const auto r = sim::run_fabric(cfg);
  ASSERT_FALSE(r.ok);
  EXPECT_NE(r.diagnosis.find("makes no progress"), std::string::npos) << r.diagnosis;
  EXPECT_NE(r.diagnosis.find("RIFL link fabric.acc0.port1 <-> fabric.acc1"), std::string::npos) << r.diagnosis;
}
