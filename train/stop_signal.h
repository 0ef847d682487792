// stop_signal.h: Ctrl-C (SIGINT) or SIGTERM as a request to stop at the next safe point.
//
// The training loop stops at the end of the current step (saving its checkpoint); sampling stops
// after the current token. The handler only records which signal came (a volatile sig_atomic_t
// is all a handler may safely write) and says so with write(2); the caller looks at signal()
// when it can stop. SA_RESETHAND puts the default action back after the first signal, so a
// second Ctrl-C aborts at once. A signal the process was started ignoring (SIGINT in a shell's
// background job, nohup) stays ignored, as Unix programs do.
#pragma once
#include <signal.h>

namespace sf {

// Installs the handler for SIGINT and SIGTERM for its lifetime (when enabled), then restores the
// previous handlers. `message` is written to stderr when the first signal arrives (a string
// literal: it must outlive the object). signal() is the signal that asked to stop, 0 while none did.
class StopOnSignal {
 public:
  explicit StopOnSignal(bool enabled,
                        const char* message = "\nstopping at the end of this step (Ctrl-C again to abort at once)\n");
  ~StopOnSignal();
  StopOnSignal(const StopOnSignal&) = delete;
  StopOnSignal& operator=(const StopOnSignal&) = delete;
  int signal() const;

 private:
  struct Saved {
    int sig;
    struct sigaction old {};
    bool installed = false;
  };
  Saved saved_[2] = {{SIGINT}, {SIGTERM}};
};

}  // namespace sf
