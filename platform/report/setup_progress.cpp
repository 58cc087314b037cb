#include "platform/report/setup_progress.h"

#include <cstdio>

namespace fabricsim::report {
namespace {
const std::chrono::steady_clock::time_point g_start = std::chrono::steady_clock::now();
bool g_on = false;
bool g_printed = false;
std::chrono::steady_clock::time_point g_last = g_start;
}  // namespace

void set_setup_progress(bool on) { g_on = on; }

double seconds_since_start() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - g_start).count();
}

void setup_progress(const char* what, std::size_t done, std::size_t total) {
  if (!g_on) return;
  if (done >= total) {
    if (g_printed)
      std::fprintf(stderr, "\r[fabricsim] %s: %zu of %zu, %.0f s wall\n", what, total, total, seconds_since_start());
    g_printed = false;
    return;
  }
  const auto now = std::chrono::steady_clock::now();
  if (now - g_last < std::chrono::seconds(1)) return;
  g_last = now;
  g_printed = true;
  std::fprintf(stderr, "\r[fabricsim] %s: %zu of %zu, %.0f s wall ", what, done, total, seconds_since_start());
  std::fflush(stderr);
}

}  // namespace fabricsim::report
