// libFuzzer target: a study file through `fabricsim sweep`'s loader
// (sim::load_study: the study keys, grid and variants, and the fabric parsed
// under every variant x policy), placed in studies/ of the scratch folder so
// `fabric: ../frank2.yaml` finds the shipped fabrics. Seeds:
// topologies/studies/*.yaml.
#include "platform/sim/sweep.h"
#include "tests/fuzz/fuzz_common.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string path = fabricsim::fuzz::write_input("studies/study.yaml", data, size);
  fabricsim::fuzz::expect_clean([&] { fabricsim::sim::load_study(path); });
  return 0;
}
