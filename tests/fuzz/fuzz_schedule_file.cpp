// libFuzzer target: a user's collective schedule (MSCCL XML or the native
// YAML form) through the loader a run uses. Phase 1: sw::load_schedule (parse
// and validate; a ScheduleError is the expected outcome of bad input). Phase
// 2, for a schedule that loads: the run's own path, `fabricsim check` on a
// ring of the schedule's ranks with workload.algorithm: schedule
// (parse_fabric: the size and buffer checks against the run, rank_map; and
// validate_fabric: the layout's memory estimate), where a ConfigError is the
// expected outcome. An input whose first non-blank byte is '<' is written as
// .xml, any other as .yaml. Seeds: topologies/schedules/ and the CLI tests'
// schedules (run_fuzz.sh).
#include <algorithm>
#include <numeric>

#include "platform/config/yaml_config.h"
#include "platform/fabric/fabric_config.h"
#include "platform/sim/check.h"
#include "sw/schedule.h"
#include "tests/fuzz/fuzz_common.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace fabricsim;
  const std::uint8_t* p = std::find_if(data, data + size, [](std::uint8_t c) { return c > ' '; });
  const bool xml = p != data + size && *p == '<';
  const std::string path = fuzz::write_input(xml ? "schedule.xml" : "schedule.yaml", data, size);
  fuzz::expect_clean([&] {
    sw::Schedule s;
    try {
      s = sw::load_schedule(path);
    } catch (const sw::ScheduleError&) {
      return;  // bad input, rejected with file:line
    }
    // A ring of the schedule's ranks at a size the schedule's chunking
    // allows, about 1 MiB. At most 64 ranks: the fabric graph of a larger ring
    // costs O(N^2) to build, time spent outside the schedule loader.
    if (s.ngpus < 2 || s.ngpus > 64) return;
    const std::uint64_t l = std::lcm<std::uint64_t>(s.nchunksperloop, static_cast<std::uint64_t>(s.ngpus));
    if (l > (1ull << 28)) return;
    const std::uint64_t unit = 4 * l;
    const std::uint64_t bytes = unit * std::max<std::uint64_t>(1, (1ull << 20) / unit);
    sim::check_fabric(fuzz::scratch_dir() + "/ring8.yaml",
                      {"fabric.accelerators=" + std::to_string(s.ngpus), "workload.algorithm=schedule",
                       "workload.schedule=" + path, "workload.size=" + std::to_string(bytes) + "B",
                       "workload.data=false"});
  });
  return 0;
}
