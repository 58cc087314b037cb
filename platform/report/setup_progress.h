#pragma once
// A progress line for long set-up work before a simulation starts (the
// routing tables of a large fabric): `run` and `check` of a 4096-accelerator
// pod spend tens of seconds there, which would otherwise pass in silence.
#include <chrono>
#include <cstddef>

namespace fabricsim::report {

/// Turn the set-up progress line on (the CLI: stderr a terminal, no --quiet).
void set_setup_progress(bool on);

/// Report `done` of `total` units of the set-up step `what` ("routing
/// tables"). Prints "[fabricsim] WHAT: DONE of TOTAL, N s wall" on stderr,
/// overwriting itself, at most once a second and only when turned on and a
/// second has passed since the process started; `done == total` ends the
/// line if one was printed. Cheap enough to call per unit.
void setup_progress(const char* what, std::size_t done, std::size_t total);

/// Wall time since the process started (static initialisation), in seconds:
/// the progress lines count from there.
double seconds_since_start();

}  // namespace fabricsim::report
