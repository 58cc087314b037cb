// Test entry point for SystemC model tests. Debian's libsystemc defines
// main() and calls sc_main(), so the tests cannot use gtest_main. ctest runs
// every test in its own process (gtest_discover_tests), one elaboration each.
#include <gtest/gtest.h>

#include <systemc>

#include <cstdlib>

// Keep SystemC's banner out of the test output (read before sc_main runs).
static const bool kBannerOff = (setenv("SC_COPYRIGHT_MESSAGE", "DISABLE", 1), true);

int sc_main(int argc, char* argv[]) {
  (void)kBannerOff;
  sc_core::sc_set_time_resolution(1, sc_core::SC_PS);
  ::testing::InitGoogleTest(&argc, argv);
  // SystemC warnings become failures (style.md item 7).
  sc_core::sc_report_handler::set_actions(sc_core::SC_WARNING, sc_core::SC_DISPLAY | sc_core::SC_THROW);
  return RUN_ALL_TESTS();
}
