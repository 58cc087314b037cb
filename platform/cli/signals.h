#pragma once
// Interrupts of the command line's long operations (run, bench).

namespace fabricsim::cli {

/// Install `on_signal` (async-signal-safe) for SIGINT, SIGTERM and SIGHUP,
/// without SA_RESTART; a signal that is ignored (nohup) stays ignored.
void install_interrupt_handler(void (*on_signal)(int));

}  // namespace fabricsim::cli
