#include "platform/cli/bench.h"

#include <fmt/format.h>

#include <chrono>
#include <iostream>
#include <memory>

#include "models/link/core/link_engine.h"
#include "platform/config/link_config.h"
#include "platform/fabric/fabric_config.h"
#include "platform/sim/sweep.h"

namespace fabricsim::cli {

int run_bench(const std::string& study_file) {
  const sim::Study st = sim::load_study(study_file);
  if (st.fabric_kind != "link-pair")
    throw config::ConfigError(study_file + ": key 'study.fabric': bench times the link engine on link-pair studies; "
                              "'" + st.fabric_kind + "' fabrics are timed whole, e.g. /usr/bin/time fabricsim run FABRIC "
                              "(docs/performance.md)");
  std::uint64_t transmissions = 0, points = 0;
  double wall = 0.0;
  for (const auto& v : st.variants)
  for (const auto& pol : st.policies) {
    for (auto seed : (v.seeds.empty() ? st.seeds : v.seeds)) {
      std::vector<std::string> a = st.common;
      a.insert(a.end(), v.assignments.begin(), v.assignments.end());
      a.push_back(fabric::policy_key(st.fabric_kind) + "=" + pol);
      const auto doc = config::load_with_overrides(st.fabric, a);
      const auto cfg = config::parse_link_experiment(config::root_section(doc));
      const auto t0 = std::chrono::steady_clock::now();
      link::LinkEngine e(cfg.link, link::make_policy(pol, cfg.link.fec_menu, cfg.link.policy), seed, cfg.link_id);
      for (std::uint64_t i = 0; i < cfg.traffic.flits; ++i) e.offer(cfg.traffic.start_ps + i * cfg.traffic.period_ps);
      e.run_to_completion();
      wall += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      transmissions += e.stats().transmissions;
      ++points;
    }
  }
  std::cout << fmt::format("bench {}: {} points, {} flit transmissions in {:.3f} s wall on one core\n", st.name,
                           points, transmissions, wall);
  std::cout << fmt::format("{:.2f} M flit transmissions per wall-second\n", transmissions / wall / 1e6);
  return 0;
}

}  // namespace fabricsim::cli
