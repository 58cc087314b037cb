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
//  - UBSan: stop at the first report with a stack trace (the build also
//    compiles with -fno-sanitize-recover=all).
extern "C" const char* __asan_default_options() {
  return "detect_leaks=1:abort_on_error=1:detect_stack_use_after_return=0";
}
extern "C" const char* __ubsan_default_options() { return "halt_on_error=1:print_stacktrace=1"; }
