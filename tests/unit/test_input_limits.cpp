// Inputs a user can trust: values beyond the documented limits, YAML alias
// bombs and node kinds or ids a fabric cannot build are rejected at load
// (ConfigError naming file, line and key), and the reduction check is exact
// at any rank count.
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tests/unit/temp_dir.h"
#include "models/link/core/types.h"
#include "platform/config/link_config.h"
#include "platform/config/units.h"
#include "platform/config/yaml_config.h"
#include "platform/fabric/fabric_config.h"
#include "sw/collectives.h"

namespace {

namespace fs = std::filesystem;
using namespace fabricsim;

struct TempDir : fabricsim::testing::TempDir {
  TempDir() : fabricsim::testing::TempDir("limits") {}
};

// The error message of loading `path` (with `sets`) as a UALink fabric (or a
// link-pair experiment), or "" if it loads.
std::string fabric_error_of(const std::string& path, const std::vector<std::string>& sets, bool link_pair) {
  try {
    const auto doc = config::load_with_overrides(path, sets);
    if (link_pair)
      config::parse_link_experiment(config::root_section(doc));
    else
      fabric::parse_fabric(config::root_section(doc));
  } catch (const config::ConfigError& e) {
    return e.what();
  }
  return "";
}
std::string fabric_error(const std::string& path, const std::vector<std::string>& sets = {}) {
  return fabric_error_of(path, sets, false);
}

// `levels` levels of `fanout` aliases each under key a<levels>: fanout^levels
// paths to the leaf in a file of a few hundred bytes.
std::string alias_bomb(int levels, int fanout, const std::string& top) {
  std::string y = top + "a0: &a0 [x]\n";
  for (int l = 1; l <= levels; ++l) {
    y += "a" + std::to_string(l) + ": &a" + std::to_string(l) + " [";
    for (int k = 0; k < fanout; ++k) y += (k ? ", *a" : "*a") + std::to_string(l - 1);
    y += "]\n";
  }
  return y;
}

}  // namespace

// ---------------------------------------------------------------------------
// YAML alias bombs

// Nine levels of ten aliases: 10^9 paths. The loader walks each shared node
// once, so the unknown key is reported at once (before the fix the duplicate
// key walk expanded every path: minutes).
TEST(AliasBomb, NineLevelsOfTenAliasesAreRejectedAtOnce) {
  TempDir tmp;
  const std::string f = tmp.write("bomb.yaml", alias_bomb(9, 10, "fabric: {kind: ring}\n"));
  const std::string m = fabric_error(f);
  EXPECT_NE(m.find("bomb.yaml:2:1: key 'a0': unknown key"), std::string::npos) << m;
}

// Thirty levels of two aliases (2^30 paths) under a key the schema reads as a
// list of values: still one pass, rejected as the wrong shape.
TEST(AliasBomb, DeepBombUnderAReadKeyIsRejectedAtOnce) {
  TempDir tmp;
  std::string y = alias_bomb(30, 2, "fabric: {kind: ring}\n");
  y += "workload: {collective: *a30}\n";
  const std::string f = tmp.write("deep.yaml", y);
  const std::string m = fabric_error(f);
  EXPECT_NE(m.find("key 'workload.collective': expected a single value"), std::string::npos) << m;
}

// Walking a shared node once still finds a duplicate key inside it.
TEST(AliasBomb, DuplicateKeyInsideAnAliasedMapIsFound) {
  TempDir tmp;
  const std::string f = tmp.write("dup.yaml",
                                  "base: &b {x: 1, y: 2, x: 3}\n"
                                  "fabric: {kind: ring}\n"
                                  "other: [*b, *b]\n");
  const std::string m = fabric_error(f);
  EXPECT_NE(m.find("dup.yaml:1:23: key 'base.x': duplicate key"), std::string::npos) << m;
}

// ---------------------------------------------------------------------------
// node kinds and ids of an explicit fabric

namespace {
std::string tiny(const std::string& node1) {
  return "fabric: {name: tiny, kind: explicit}\n"
         "nodes:\n"
         "  - {id: acc0, kind: accelerator}\n" +
         node1 +
         "\n"
         "  - {id: sw0, kind: ualink-switch}\n"
         "links:\n"
         "  - {a: acc0.0, b: sw0.0}\n"
         "  - {a: x.0, b: sw0.1}\n"
         "workload: {collective: allgather, algorithm: direct, size: 32KiB}\n";
}
}  // namespace

TEST(ExplicitFabric, NodeKindOfAnotherFabricIsRejectedAtLoad) {
  TempDir tmp;
  EXPECT_EQ(fabric_error(tmp.write("ok.yaml", tiny("  - {id: x, kind: accelerator}"))), "");
  for (const std::string kind : {"host-bridge", "pcie-switch-partition", "data-fabric", "switch"}) {
    const std::string m = fabric_error(tmp.write("k.yaml", tiny("  - {id: x, kind: " + kind + "}")));
    EXPECT_NE(m.find("k.yaml:4:19: key 'nodes[1].kind': unknown node kind '" + kind + "'"), std::string::npos) << m;
  }
}

TEST(ExplicitFabric, NodeIdsThatBreakNamesOrCsvAreRejected) {
  TempDir tmp;
  for (const std::string id : {"a b", "a,b", "a.b", "a;b", "", "a\tb"}) {
    std::string y = tiny("  - {id: \"" + id + "\", kind: accelerator}");
    y.replace(y.find("a: x.0"), 6, "a: \"" + id + ".0\"");
    const std::string m = fabric_error(tmp.write("id.yaml", y));
    EXPECT_NE(m.find("id.yaml:4:"), std::string::npos) << id << ": " << m;
    EXPECT_NE(m.find("key 'nodes[1].id'"), std::string::npos) << id << ": " << m;
  }
  EXPECT_TRUE(fabric::valid_node_id("leaf-0_A"));
  EXPECT_FALSE(fabric::valid_node_id("leaf:0"));
}

// ---------------------------------------------------------------------------
// sizes of one operation

// The fabric graph's all-pairs tables grow as N^2: a generated fabric of more
// than 4096 accelerators is rejected at load instead of taking minutes.
TEST(ValueLimits, GeneratedFabricsHoldAtMost4096Accelerators) {
  const std::string ring8 = std::string(FABRICSIM_SOURCE_DIR) + "/topologies/ring8.yaml";
  EXPECT_EQ(fabric_error(ring8, {"fabric.accelerators=4096", "workload.data=false"}), "");
  const std::string m = fabric_error(ring8, {"fabric.accelerators=8192", "workload.data=false"});
  EXPECT_NE(m.find("fabric.accelerators"), std::string::npos) << m;
  EXPECT_NE(m.find("4096"), std::string::npos) << m;
}

TEST(WorkloadSize, FourGibibytesOrMoreIsRejectedAtLoad) {
  const std::string ring8 = std::string(FABRICSIM_SOURCE_DIR) + "/topologies/ring8.yaml";
  EXPECT_EQ(fabric_error(ring8, {"workload.size=4294967264B", "workload.data=false"}), "");
  const std::string m = fabric_error(ring8, {"workload.size=4GiB", "workload.data=false"});
  EXPECT_NE(m.find("--set workload.size: 4294967296 B is 4 GiB or more"), std::string::npos) << m;
}

// ---------------------------------------------------------------------------
// exact reductions at scale

// Every partial sum of the AllReduce / ReduceScatter inputs is a float32
// integer below 2^24, so any summation order gives exactly expected_value.
// Before, inputs (r + 1) x m summed to m N (N + 1) / 2, past 2^24 from 1,607
// ranks on, and the check flagged correct results as wrong.
TEST(ExactReduction, SumsAreExactInAnyOrderAt2048And65536Ranks) {
  for (const int N : {2048, 65536}) {
    for (const auto op : {sw::Op::allreduce, sw::Op::reduce_scatter}) {
      sw::CollectiveSpec s;
      s.op = op;
      s.bytes = 4ull * N * 3;  // three elements per rank's chunk
      for (int r : {0, 1, N - 1})
        for (const std::uint64_t i : std::vector<std::uint64_t>{0, 1, 2, 250, 251, s.bytes / 4 - 1}) {
          if (op == sw::Op::reduce_scatter && i >= 3) continue;               // a ReduceScatter output is one chunk
          const std::uint64_t idx = op == sw::Op::allreduce ? i : r * 3 + i;  // input element reduced into out[i]
          float up = 0, down = 0, pairs = 0;
          double exact = 0;
          for (int q = 0; q < N; ++q) {
            up += sw::input_value(op, q, idx);
            down += sw::input_value(op, N - 1 - q, idx);
            exact += sw::input_value(op, q, idx);
          }
          // Pairwise (tree) order.
          std::vector<float> v(N);
          for (int q = 0; q < N; ++q) v[q] = sw::input_value(op, q, idx);
          for (int w = 1; w < N; w *= 2)
            for (int q = 0; q + w < N; q += 2 * w) v[q] += v[q + w];
          pairs = v[0];
          const float want = sw::expected_value(s, N, r, i);
          ASSERT_EQ(static_cast<double>(want), exact) << "N " << N << " rank " << r << " element " << i;
          ASSERT_EQ(up, want) << "N " << N << " rank " << r << " element " << i;
          ASSERT_EQ(down, want) << "N " << N << " rank " << r << " element " << i;
          ASSERT_EQ(pairs, want) << "N " << N << " rank " << r << " element " << i;
        }
    }
  }
}

// Data-movement collectives keep inputs that tell every rank apart.
TEST(ExactReduction, MovedDataStillNamesItsRank) {
  for (const auto op : {sw::Op::allgather, sw::Op::alltoall, sw::Op::broadcast, sw::Op::sendrecv})
    for (std::uint64_t i : {0ull, 5ull, 12ull})
      for (int r = 1; r < 4096; r += 97) EXPECT_NE(sw::input_value(op, r, i), sw::input_value(op, r - 1, i));
}

// ---------------------------------------------------------------------------
// value limits (docs/user-guide.md, "Value limits") and checked conversions

TEST(ValueLimits, RatesOutsideOneMbpsToOnePbpsAreRejected) {
  using config::parse_rate_bps;
  // Before: 1e-21 b/s gave an infinite wire time cast to an integer (undefined
  // behaviour, the same goodput as 1e30 Gb/s), with exit 0.
  for (const char* bad : {"1e-21b/s", "999999b/s", "1e30Gb/s", "1001Tb/s", "126TB/s"})
    EXPECT_THROW(parse_rate_bps(bad), config::UnitError) << bad;
  EXPECT_DOUBLE_EQ(parse_rate_bps("1Mb/s"), 1e6);
  EXPECT_DOUBLE_EQ(parse_rate_bps("1000Tb/s"), 1e15);
  EXPECT_DOUBLE_EQ(parse_rate_bps("125TB/s"), 1e15);
}

TEST(ValueLimits, TimesAndSizesHaveUpperLimits) {
  EXPECT_EQ(config::parse_time_ps("100000s"), 100'000'000'000'000'000ull);
  EXPECT_THROW(config::parse_time_ps("100001s"), config::UnitError);
  EXPECT_THROW(config::parse_time_ps("1e7s"), config::UnitError);
  EXPECT_EQ(config::parse_bytes("1048576GiB"), 1ull << 50);
  EXPECT_THROW(config::parse_bytes("1048577GiB"), config::UnitError);
  EXPECT_THROW(config::parse_bytes("1e19B"), config::UnitError);
}

TEST(ValueLimits, CheckedPicosecondConversion) {
  EXPECT_EQ(link::checked_ps(1234.4), 1234u);
  EXPECT_EQ(link::checked_ps(1234.5), 1235u);
  EXPECT_EQ(link::wire_time_ps(640, 400e9), 12800u);
  EXPECT_EQ(link::wire_time_ps(680, 400e9), 13600u);
  for (const double bad : {-1.0, 1e19, std::numeric_limits<double>::infinity(), std::nan("")})
    EXPECT_THROW(link::checked_ps(bad), std::range_error) << bad;
  EXPECT_THROW(link::wire_time_ps(640, 0.0), std::range_error);  // infinite
}

namespace {
std::string link_pair_error(const std::vector<std::string>& sets) {
  return fabric_error_of(std::string(FABRICSIM_SOURCE_DIR) + "/topologies/link-primary.yaml", sets, true);
}
}  // namespace

TEST(ValueLimits, LinkRatesAreCheckedWhereTheyAreRead) {
  const std::string m = link_pair_error({"link.forward_rate=1e-21b/s"});
  EXPECT_NE(m.find("--set link.forward_rate: rate '1e-21b/s' outside the limits"), std::string::npos) << m;
  // In range, but a 16 B flit would take 0.128 ps: rounds to 0.
  const std::string z = link_pair_error({"link.flit=16B", "link.forward_rate=1000Tb/s"});
  EXPECT_NE(z.find("--set link.forward_rate"), std::string::npos) << z;
  EXPECT_NE(z.find("wire time must lie in [1 ps, 1e17 ps]"), std::string::npos) << z;
  const std::string c = link_pair_error({"link.control_flit=1B", "link.reverse_rate=1000Tb/s"});
  EXPECT_NE(c.find("--set link.reverse_rate"), std::string::npos) << c;
  // 2^32 flits one second apart: the last would be offered past the time limit.
  const std::string t = link_pair_error({"traffic.flits=4294967296", "traffic.period=1s"});
  EXPECT_NE(t.find("--set traffic.period"), std::string::npos) << t;
  EXPECT_EQ(link_pair_error({"traffic.flits=1000", "traffic.period=1s"}), "");
}

TEST(ValueLimits, TinyReduceRateIsRejectedAtLoad) {
  const std::string ring8 = std::string(FABRICSIM_SOURCE_DIR) + "/topologies/ring8.yaml";
  const std::string m = fabric_error(ring8, {"defaults.accelerator.reduce_rate=1e-21b/s"});
  EXPECT_NE(m.find("--set defaults.accelerator.reduce_rate: rate '1e-21b/s' outside the limits"), std::string::npos)
      << m;
}
