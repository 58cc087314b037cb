// The model registry's typed factories (models/registry.h): a kind is built
// from its own parameter struct or not at all; nothing is cast at run time.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "models/accelerator/accelerator.h"
#include "models/pcie/pcie_host.h"
#include "models/registry.h"
#include "models/switch/ualink_switch.h"

namespace fabricsim::models {
namespace {

TEST(ModelRegistry, EveryKindOfTheFabricsIsRegistered) {
  const auto& reg = model_registry::instance();
  for (const char* k : {"accelerator", "ualink-switch", "host-memory"}) EXPECT_TRUE(reg.has(k)) << k;
  EXPECT_FALSE(reg.has("host-bridge"));  // a PCIe host tree element is a component, not a module
}

TEST(ModelRegistry, AKindIsBuiltOnlyFromItsOwnParameterStruct) {
  const auto& reg = model_registry::instance();
  node_config nc{"accelerator", 0, 1};
  // The accelerator's kind asked to build from a switch's parameters: refused
  // before any module is constructed.
  try {
    reg.create("accelerator", "wrong", nc, switch_params{});
    FAIL() << "no error";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("'accelerator' is not built from"), std::string::npos) << e.what();
  }
}

TEST(ModelRegistry, AnUnknownKindNamesTheRegisteredOnes) {
  const auto& reg = model_registry::instance();
  try {
    reg.create("no-such-kind", "x", node_config{"no-such-kind"}, switch_params{});
    FAIL() << "no error";
  } catch (const std::out_of_range& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("unknown node kind 'no-such-kind'"), std::string::npos) << m;
    EXPECT_NE(m.find("accelerator, host-memory, ualink-switch"), std::string::npos) << m;
  }
}

TEST(ModelRegistry, ARegisteredKindCannotBeRegisteredAgain) {
  auto& reg = model_registry::instance();
  EXPECT_THROW(reg.add<switch_params>("ualink-switch",
                                      [](const sc_core::sc_module_name& n, const node_config& c,
                                         const switch_params& p) { return std::make_unique<ualink_switch>(n, c, p); }),
               std::logic_error);
}

TEST(ModelRegistry, TheSwitchIsBuiltFromItsParameters) {
  switch_params p;
  p.latency_ps = 123000;
  p.output_queue_flits = 7;
  auto m = model_registry::instance().create("ualink-switch", "sw_registry_test", node_config{"ualink-switch", -1, 4}, p);
  auto* sw = dynamic_cast<ualink_switch*>(m.get());
  ASSERT_NE(sw, nullptr);
  EXPECT_EQ(sw->params().latency_ps, 123000u);
  EXPECT_EQ(sw->params().output_queue_flits, 7u);
  EXPECT_EQ(sw->ports(), 4u);
}

}  // namespace
}  // namespace fabricsim::models
