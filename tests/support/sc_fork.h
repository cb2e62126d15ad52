// SystemC elaborates once per process, so each SystemC bench in a test runs in a forked child: the child
// builds its models, simulates, and sends back a text result; the parent (which never touches SystemC)
// asserts on it. A child that crashes or throws fails the test with what it said.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <exception>
#include <functional>
#include <stdexcept>
#include <string>

namespace fabricsim::test {

struct child_result {
  bool ok;             // the child returned normally
  std::string output;  // what the function returned, or the exception's message
};

inline child_result run_in_child(const std::function<std::string()>& fn) {
  int fds[2];
  if (pipe(fds) != 0) throw std::runtime_error("pipe failed");
  const pid_t pid = fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {
    close(fds[0]);
    setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 1);
    std::string out;
    int code = 0;
    try {
      out = fn();
    } catch (const std::exception& e) {
      out = e.what();
      code = 3;
    }
    size_t off = 0;
    while (off < out.size()) {
      const ssize_t n = write(fds[1], out.data() + off, out.size() - off);
      if (n <= 0) break;
      off += size_t(n);
    }
    close(fds[1]);
    _exit(code);
  }
  close(fds[1]);
  std::string out;
  char buf[65536];
  ssize_t n;
  while ((n = read(fds[0], buf, sizeof buf)) > 0) out.append(buf, size_t(n));
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (WIFSIGNALED(status)) return {false, "child killed by signal " + std::to_string(WTERMSIG(status)) + ": " + out};
  return {WIFEXITED(status) && WEXITSTATUS(status) == 0, out};
}

}  // namespace fabricsim::test
