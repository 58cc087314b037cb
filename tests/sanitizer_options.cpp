// Default sanitizer settings of the test binaries and fabricsim under
// -DFABRICSIM_SANITIZE=ON (docs/testing.md, "Sanitizers"); ASAN_OPTIONS and
// UBSAN_OPTIONS in the environment still override them.
//  - detect_leaks=1: a leak fails the test binary.
//  - detect_stack_use_after_return=0: SystemC runs each SC_THREAD on a stack
//    of its own and switches between them by hand (coroutines); the
//    use-after-return detector's fake stack frames cannot follow those
//    switches (with it on, model tests die with a SEGV on a fake frame inside
//    accelerator::block_until). Off, ASan still checks every stack access for
//    overflows. A "WARNING: ASan is ignoring requested
//    __asan_handle_no_return" line when an exception leaves an SC_THREAD is
//    the same stack switching, not a finding.
//  - use_stacks=0: the leak check at exit does not scan thread stacks. The
//    SystemC library announces its coroutine switches to ASan
//    (__sanitizer_start_switch_fiber); after a run, the bounds ASan keeps for
//    the main thread can still be those of a coroutine stack that is freed or
//    carries SystemC's PROT_NONE red zone, and the leak checker's scan of it
//    dies with "Tracer caught signal 11" (seen in many runs, on a
//    6.18 kernel, in tests that pass). Heap, globals and thread-local storage
//    are still scanned, and the coroutine stacks are heap blocks.
//  - UBSan: stop at the first report with a stack trace (the build also
//    compiles with -fno-sanitize-recover=all).
extern "C" const char* __asan_default_options() {
  return "detect_leaks=1:abort_on_error=1:detect_stack_use_after_return=0";
}
extern "C" const char* __lsan_default_options() { return "use_stacks=0"; }
extern "C" const char* __ubsan_default_options() { return "halt_on_error=1:print_stacktrace=1"; }
