// cli_runner.h: runs the real `scratchformer` binary as a learner would, for the bad-input and
// fault tests: arguments in, exit code, stdout and stderr out, with a time limit. Also starts a
// run in the background to kill it at a chosen moment.
#pragma once
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <string>
#include <vector>

namespace sf::test {

// The scratchformer built next to this test (build/ or build-asan/).
inline std::string cli_path() { return std::string(SF_BINARY_DIR) + "/scratchformer"; }

struct CliResult {
  int exit_code = -1;  // the process's exit status, or 128 + signal when a signal ended it
  bool timed_out = false;
  std::string out, err;
};

// Starts `cli_path() args...` with stdout/stderr on pipes; returns the pid.
inline pid_t spawn_cli(const std::vector<std::string>& args, int& out_fd, int& err_fd) {
  int po[2], pe[2];
  if (::pipe(po) != 0 || ::pipe(pe) != 0) return -1;
  pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(po[1], 1);
    ::dup2(pe[1], 2);
    ::close(po[0]);
    ::close(po[1]);
    ::close(pe[0]);
    ::close(pe[1]);
    ::setenv("SF_NUM_THREADS", "1", 0);
    std::string exe = cli_path();
    std::vector<char*> argv{exe.data()};
    std::vector<std::string> copy = args;
    for (auto& a : copy) argv.push_back(a.data());
    argv.push_back(nullptr);
    ::execv(exe.c_str(), argv.data());
    std::fprintf(stderr, "cannot exec %s: %s\n", exe.c_str(), std::strerror(errno));
    ::_exit(127);
  }
  ::close(po[1]);
  ::close(pe[1]);
  out_fd = po[0];
  err_fd = pe[0];
  return pid;
}

// Reads both pipes until the child closes them or `timeout_s` passes (then SIGKILL), and reaps it.
inline CliResult collect(pid_t pid, int out_fd, int err_fd, double timeout_s) {
  CliResult r;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  pollfd fds[2] = {{out_fd, POLLIN, 0}, {err_fd, POLLIN, 0}};
  int open_fds = 2;
  char buf[4096];
  while (open_fds > 0) {
    auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count();
    if (left <= 0) {
      r.timed_out = true;
      ::kill(pid, SIGKILL);
      break;
    }
    if (::poll(fds, 2, static_cast<int>(left)) < 0 && errno != EINTR) break;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      ssize_t n = ::read(fds[i].fd, buf, sizeof buf);
      if (n > 0) {
        (i == 0 ? r.out : r.err).append(buf, static_cast<size_t>(n));
      } else {
        ::close(fds[i].fd);
        fds[i].fd = -1;
        --open_fds;
      }
    }
  }
  for (auto& f : fds)
    if (f.fd >= 0) ::close(f.fd);
  int status = 0;
  ::waitpid(pid, &status, 0);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return r;
}

// Runs the CLI to completion (at most timeout_s seconds).
inline CliResult run_cli(const std::vector<std::string>& args, double timeout_s = 120) {
  int out_fd = -1, err_fd = -1;
  pid_t pid = spawn_cli(args, out_fd, err_fd);
  if (pid < 0) return {};
  return collect(pid, out_fd, err_fd, timeout_s);
}

// Lines of `s` that are not empty.
inline std::vector<std::string> lines_of(const std::string& s) {
  std::vector<std::string> lines;
  size_t start = 0;
  while (start < s.size()) {
    size_t nl = s.find('\n', start);
    if (nl == std::string::npos) nl = s.size();
    if (nl > start) lines.push_back(s.substr(start, nl - start));
    start = nl + 1;
  }
  return lines;
}

}  // namespace sf::test
