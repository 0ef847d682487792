// stop_signal.cpp: the SIGINT/SIGTERM handler behind StopOnSignal.
#include "train/stop_signal.h"

#include <unistd.h>

#include <csignal>
#include <cstring>

namespace sf {

static volatile std::sig_atomic_t g_stop_signal = 0;
static const char* g_message = "";
static size_t g_message_len = 0;

static void on_stop_signal(int sig) {
  g_stop_signal = sig;
  ssize_t written = ::write(STDERR_FILENO, g_message, g_message_len);
  (void)written;  // nothing useful to do if stderr is gone
}

StopOnSignal::StopOnSignal(bool enabled, const char* message) {
  g_stop_signal = 0;
  if (!enabled) return;
  g_message = message;
  g_message_len = std::strlen(message);
  struct sigaction sa {};
  sa.sa_handler = on_stop_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESETHAND | SA_RESTART;  // one-shot; interrupted writes (checkpoints) resume
  for (Saved& s : saved_) {
    sigaction(s.sig, nullptr, &s.old);
    s.installed = s.old.sa_handler != SIG_IGN && sigaction(s.sig, &sa, nullptr) == 0;
  }
}

StopOnSignal::~StopOnSignal() {
  for (Saved& s : saved_)
    if (s.installed) sigaction(s.sig, &s.old, nullptr);
}

int StopOnSignal::signal() const { return g_stop_signal; }

}  // namespace sf
