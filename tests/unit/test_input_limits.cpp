// Inputs a user can trust: values beyond the documented limits, YAML alias
// bombs and node kinds or ids a fabric cannot build are rejected at load
// (ConfigError naming file, line and key), and the reduction check is exact
// at any rank count.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "platform/config/yaml_config.h"
#include "platform/fabric/fabric_config.h"
#include "sw/collectives.h"

namespace {

namespace fs = std::filesystem;
using namespace fabricsim;

class TempDir {
 public:
  TempDir() {
    dir_ = fs::temp_directory_path() / ("fabricsim_test_limits_" + std::to_string(::getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  std::string write(const std::string& name, const std::string& text) const {
    const fs::path p = dir_ / name;
    std::ofstream(p) << text;
    return p.string();
  }

 private:
  fs::path dir_;
};

// The error message of loading `path` (with `sets`) as a UALink fabric, or "" if it loads.
std::string fabric_error(const std::string& path, const std::vector<std::string>& sets = {}) {
  try {
    const auto doc = config::load_with_overrides(path, sets);
    fabric::parse_fabric(config::root_section(doc));
  } catch (const config::ConfigError& e) {
    return e.what();
  }
  return "";
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
          if (op == sw::Op::reduce_scatter && i >= 3) continue;  // a ReduceScatter output is one chunk
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
