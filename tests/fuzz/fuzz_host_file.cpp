// libFuzzer target: a PCIe host file (fabric.kind: pcie-host) through
// `fabricsim check`'s loader (fabric::parse_host with its ladder files,
// host_summary, host_dot). Inputs of another kind are left to
// fuzz_fabric_file and kept out of this target's corpus. Seeds:
// topologies/frank*.yaml.
#include "platform/fabric/fabric_config.h"
#include "platform/sim/check.h"
#include "tests/fuzz/fuzz_common.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace fabricsim;
  const std::string path = fuzz::write_input("host.yaml", data, size);
  int verdict = 0;
  fuzz::expect_clean([&] {
    auto doc = config::load_with_overrides(path, {});
    if (fabric::fabric_kind(*doc) != "pcie-host") {
      verdict = -1;  // not a host file: do not add to this corpus
      return;
    }
    sim::check_document(doc);
  });
  return verdict;
}
