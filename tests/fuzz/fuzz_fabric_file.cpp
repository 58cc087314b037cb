// libFuzzer target: a fabric file through `fabricsim check`'s loader
// (sim::check_fabric: YAML, every kind's parser, model registry, fabric graph,
// DOT and summary). Seeds: topologies/*.yaml.
#include "platform/sim/check.h"
#include "tests/fuzz/fuzz_common.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string path = fabricsim::fuzz::write_input("fabric.yaml", data, size);
  fabricsim::fuzz::expect_clean([&] { fabricsim::sim::check_fabric(path, {}); });
  return 0;
}
