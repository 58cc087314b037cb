// Unit tests for the global address map (models/fabric/core/address_map.h)
// and its configuration (fabric_config: `address:`, fabric.address_base,
// kind: tlm-initiator). No SystemC kernel.
#include "models/fabric/core/address_map.h"

#include <gtest/gtest.h>

#include <fstream>
#include <memory>
#include <string>

#include "platform/config/yaml_config.h"
#include "platform/fabric/fabric_config.h"
#include "platform/fabric/fabric_graph.h"
#include "temp_dir.h"

namespace {

using fabricsim::fabric_core::AddressMap;
using fabricsim::fabric_core::AddressRegion;

AddressMap three() {
  AddressMap m;
  m.add({"acc1", 1, 0x200000, 0x100000});  // [2 MiB, 3 MiB)
  m.add({"acc0", 0, 0x0, 0x100000});       // [0, 1 MiB)
  m.add({"acc2", 2, 0x400000, 0x1000});    // [4 MiB, 4 MiB + 4 KiB)
  return m;
}

TEST(AddressMap, DecodeFindsTheOwningRegion) {
  const AddressMap m = three();
  ASSERT_EQ(m.regions().size(), 3u);
  EXPECT_EQ(m.regions()[0].name, "acc0");  // sorted by base
  EXPECT_EQ(m.regions()[1].name, "acc1");
  const AddressRegion* r = m.decode(0x200000 + 0x1234, 16);
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->rank, 1);
  EXPECT_EQ(0x200000 + 0x1234 - r->base, 0x1234u);
  EXPECT_EQ(m.decode(0x0, 0x100000)->name, "acc0");    // the whole region
  EXPECT_EQ(m.decode(0x400fff, 1)->name, "acc2");      // its last byte
  EXPECT_EQ(m.decode(0x3fffff + 1, 0)->name, "acc2");  // bytes 0 decodes the address
}

TEST(AddressMap, OutsideOrAcrossTheEndIsNotDecoded) {
  const AddressMap m = three();
  EXPECT_EQ(m.decode(0x100000, 1), nullptr);       // gap after acc0
  EXPECT_EQ(m.decode(0xfffff, 2), nullptr);        // crosses acc0's end
  EXPECT_EQ(m.decode(0x1ff000, 0x2000), nullptr);  // starts in the gap
  EXPECT_EQ(m.decode(0x401000, 1), nullptr);       // past the last region
  EXPECT_EQ(m.decode(~0ull, 1), nullptr);
  EXPECT_EQ(AddressMap{}.decode(0, 1), nullptr);
}

TEST(AddressMap, OverlapMisalignmentAndWrapAreRejected) {
  AddressMap m = three();
  try {
    m.add({"acc3", 3, 0x2ff000, 0x2000});
    FAIL() << "overlap accepted";
  } catch (const std::invalid_argument& e) {
    const std::string w = e.what();
    EXPECT_NE(w.find("acc3"), std::string::npos) << w;
    EXPECT_NE(w.find("overlaps the memory of acc1"), std::string::npos) << w;
  }
  EXPECT_THROW(m.add({"acc3", 3, 0x500800, 0x1000}), std::invalid_argument);  // not 4 KiB aligned
  EXPECT_THROW(m.add({"acc3", 3, 0x600000, 0}), std::invalid_argument);
  EXPECT_THROW(m.add({"acc3", 3, ~0ull - 0xfff, 0x2000}), std::invalid_argument);
  m.add({"acc3", 3, 0x100000, 0x100000});    // exactly fills the gap [1 MiB, 2 MiB)
  EXPECT_EQ(m.decode(0xfffff, 2), nullptr);  // crosses from acc0 into acc3: two regions
  ASSERT_NE(m.decode(0x100000, 1), nullptr);
  EXPECT_EQ(m.decode(0x100000, 1)->name, "acc3");
}

TEST(AddressMap, FirstFitIsAlignedAndSkipsTakenRanges) {
  const AddressMap m = three();
  EXPECT_EQ(m.first_fit(0, 0x1000), 0x100000u);         // first gap after acc0
  EXPECT_EQ(m.first_fit(0x100001, 0x1000), 0x101000u);  // aligned up
  EXPECT_EQ(m.first_fit(0, 0x200000), 0x401000u);       // does not fit in either gap
  EXPECT_EQ(m.first_fit(0x300000, 0x100000), 0x300000u);
}

// ---- configuration -------------------------------------------------------

std::string write(fabricsim::testing::TempDir& d, const std::string& text) { return d.write("f.yaml", text); }

fabricsim::fabric::FabricRunConfig parse(const std::string& path) {
  return fabricsim::fabric::parse_fabric(
      fabricsim::config::root_section(fabricsim::config::load_with_overrides(path, {})));
}

const char* kFabric =
    "fabric: {name: t, kind: explicit}\n"
    "nodes:\n"
    "  - {id: acc0, kind: accelerator, address: ADDR0}\n"
    "  - {id: acc1, kind: accelerator}\n"
    "  - {id: sw0, kind: ualink-switch}\n"
    "  - {id: cpu0, kind: tlm-initiator}\n"
    "links:\n"
    "  - {a: acc0.0, b: sw0.0}\n"
    "  - {a: acc1.0, b: sw0.1}\n"
    "  - {a: cpu0.0, b: sw0.2}\n";

std::string with(const std::string& addr) {
  std::string s = kFabric;
  s.replace(s.find("ADDR0"), 5, addr);
  return s;
}

TEST(AddressMapConfig, AddressAndInitiatorAreParsed) {
  fabricsim::testing::TempDir d("addrmap");
  const auto c = parse(write(d, with("0x100000000")));
  const auto& F = c.fabric;
  ASSERT_EQ(F.nodes.size(), 4u);
  EXPECT_TRUE(F.nodes[0].has_address);
  EXPECT_EQ(F.nodes[0].address, 0x100000000ull);
  EXPECT_FALSE(F.nodes[1].has_address);
  EXPECT_EQ(F.nodes[3].kind, "tlm-initiator");
  EXPECT_EQ(F.nodes[3].rank, 2);  // after the two accelerators
  EXPECT_EQ(F.accelerators(), 2u);
  EXPECT_EQ(F.initiators(), 1u);
  EXPECT_EQ(parse(write(d, with("4GiB"))).fabric.nodes[0].address, 4ull << 30);
  // The initiator is an endpoint of routes: two hops to either accelerator through sw0.
  const fabricsim::fabric::FabricGraph g(F);
  EXPECT_EQ(g.hops(2, 0), 2);
  EXPECT_EQ(g.hops(1, 2), 2);
}

TEST(AddressMapConfig, MisalignedOrMalformedAddressNamesFileLineKey) {
  fabricsim::testing::TempDir d("addrmap");
  for (const char* bad : {"0x100000800", "0xZZ", "12345"}) {
    const std::string p = write(d, with(bad));
    try {
      parse(p);
      FAIL() << bad << " accepted";
    } catch (const fabricsim::config::ConfigError& e) {
      const std::string w = e.what();
      EXPECT_NE(w.find(p + ":3:"), std::string::npos) << w;
      EXPECT_NE(w.find("key 'nodes[0].address'"), std::string::npos) << w;
    }
  }
}

TEST(AddressMapConfig, AddressOnlyOnAccelerators) {
  fabricsim::testing::TempDir d("addrmap");
  std::string s = with("0x0");
  s.replace(s.find("{id: cpu0, kind: tlm-initiator}"), 31, "{id: cpu0, kind: tlm-initiator, address: 0x0}");
  try {
    parse(write(d, s));
    FAIL() << "address on a tlm-initiator accepted";
  } catch (const fabricsim::config::ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("key 'nodes[3].address'"), std::string::npos) << e.what();
  }
}

}  // namespace
