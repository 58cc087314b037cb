// Unit tests for a run's identity (platform/report/identity.h) and for --set
// addressing list items (platform/config/yaml_config.h, apply_overrides).

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "platform/config/yaml_config.h"
#include "platform/report/identity.h"

namespace {

using fabricsim::config::apply_overrides;
using fabricsim::config::ConfigError;
using fabricsim::config::Document;
namespace report = fabricsim::report;

Document doc_of(const std::string& yaml) {
  Document d;
  d.file = "test.yaml";
  d.root = YAML::Load(yaml);
  return d;
}

std::string error_of(Document& d, const std::string& assignment) {
  try {
    apply_overrides(d, {assignment});
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

TEST(Identity, Fnv1a64MatchesTheReferenceVectors) {
  // FNV-1a 64 test vectors (offset basis for "", and "a").
  EXPECT_EQ(report::fnv1a64_hex(""), "cbf29ce484222325");
  EXPECT_EQ(report::fnv1a64_hex("a"), "af63dc4c8601ec8c");
}

TEST(Identity, ConfigHashCoversReferencedFilesButNotTheFabricPath) {
  const std::vector<report::InputFile> in1{{"a/fabric.yaml", "1111"}, {"a/ladder.yaml", "2222"}};
  const std::vector<report::InputFile> in2{{"b/fabric.yaml", "9999"}, {"b/ladder.yaml", "2222"}};
  const std::vector<report::InputFile> in3{{"a/fabric.yaml", "1111"}, {"a/ladder.yaml", "3333"}};
  const auto r1 = report::make_run_identity(7, "x: 1\n", in1);
  // Same effective configuration and the same referenced bytes: same hash,
  // wherever the files lie (the fabric file enters through its effective text).
  EXPECT_EQ(r1.config_hash, report::make_run_identity(7, "x: 1\n", in2).config_hash);
  EXPECT_NE(r1.config_hash, report::make_run_identity(7, "x: 1\n", in3).config_hash);  // ladder changed
  EXPECT_NE(r1.config_hash, report::make_run_identity(7, "x: 2\n", in1).config_hash);  // config changed
  EXPECT_EQ(r1.id(), "seed7-config" + r1.config_hash);
  const auto j = r1.json();
  EXPECT_EQ(j["seed"], 7);
  EXPECT_EQ(j["inputs"].size(), 2u);
  EXPECT_EQ(j["program"]["name"], "fabricsim");
  EXPECT_FALSE(j["program"]["build_id"].get<std::string>().empty());
}

TEST(Identity, RunIdColumnIsAppendedToEveryLine) {
  EXPECT_EQ(report::with_run_id_column("a,b\n1,2\n3,4\n", "seed1-configab"),
            "a,b,run_id\n1,2,seed1-configab\n3,4,seed1-configab\n");
  EXPECT_EQ(report::with_run_id_column("a\n1", "X"), "a,run_id\n1,X\n");  // a last line without newline
}

TEST(SetOverrides, AddressListItemsAsErrorMessagesNameThem) {
  Document d = doc_of("links:\n  - {a: acc0.0, b: sw0.0}\n  - {a: acc1.0, b: sw0.1}\nworkload: {group: [0, 1, 2]}\n");
  apply_overrides(d, {"links[1].b=sw0.5", "workload.group[2]=9", "links[0]={a: acc7.0, b: sw0.7}"});
  EXPECT_EQ(d.root["links"][1]["b"].as<std::string>(), "sw0.5");
  EXPECT_EQ(d.root["links"][1]["a"].as<std::string>(), "acc1.0");  // the rest of the item is kept
  EXPECT_EQ(d.root["workload"]["group"][2].as<int>(), 9);
  EXPECT_EQ(d.root["links"][0]["a"].as<std::string>(), "acc7.0");
  EXPECT_EQ(d.root["links"].size(), 2u);
  EXPECT_EQ(d.overridden.count("links[1].b"), 1u);  // the key path errors use

  std::string m = error_of(d, "links[2].b=sw0.1");
  EXPECT_NE(m.find("--set links[2].b"), std::string::npos) << m;
  EXPECT_NE(m.find("has 2 item(s)"), std::string::npos) << m;
  m = error_of(d, "workload[0]=1");
  EXPECT_NE(m.find("'workload' is not a list"), std::string::npos) << m;
  m = error_of(d, "links[x].a=1");
  EXPECT_NE(m.find("[N]"), std::string::npos) << m;
  m = error_of(d, "links[0.a=1");
  EXPECT_NE(m.find("[N]"), std::string::npos) << m;
  m = error_of(d, "nolist[0]=1");
  EXPECT_NE(m.find("no list 'nolist'"), std::string::npos) << m;
  m = error_of(d, "links[0]x=1");
  EXPECT_NE(m.find("expected '.'"), std::string::npos) << m;
}

TEST(SetOverrides, AssignmentSetsKnowsWhichKeyAMapValueHolds) {
  using fabricsim::config::assignment_sets;
  EXPECT_TRUE(assignment_sets("run.seed=4", "run.seed"));
  EXPECT_TRUE(assignment_sets("run={seed: 4}", "run.seed"));
  EXPECT_FALSE(assignment_sets("run={deadline: 1s}", "run.seed"));
  EXPECT_TRUE(assignment_sets("link.policy={name: preface}", "link.policy.name"));
  EXPECT_FALSE(assignment_sets("link.policy.threshold=3", "link.policy.name"));  // a policy parameter
  EXPECT_FALSE(assignment_sets("link={policy: {threshold: 3}}", "link.policy.name"));
  EXPECT_TRUE(assignment_sets("link={policy: {name: x}}", "link.policy.name"));
  EXPECT_FALSE(assignment_sets("run.seeds=4", "run.seed"));  // a prefix of the name is not the key
  EXPECT_FALSE(assignment_sets("run=[", "run.seed"));        // malformed: reported where applied
}

}  // namespace
