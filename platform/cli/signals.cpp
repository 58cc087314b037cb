#include "platform/cli/signals.h"

#include <csignal>
#include <initializer_list>

namespace fabricsim::cli {

void install_interrupt_handler(void (*on_signal)(int)) {
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) {
    struct sigaction old {};
    sigaction(sig, nullptr, &old);
    if (old.sa_handler != SIG_IGN) sigaction(sig, &sa, nullptr);  // an ignored signal (nohup) stays ignored
  }
}

}  // namespace fabricsim::cli
