// Runs the fabricsim binary (FABRICSIM_BINARY, set by tests/CMakeLists.txt) as a user would, for the CLI
// tests: its exit status and everything it printed.
#pragma once

#include <sys/wait.h>

#include <cstdio>
#include <string>

namespace fabricsim::test {

struct run_result {
  int exit_code;
  std::string output;  // stdout and stderr together
};

// Runs a shell command line (stderr joined to stdout).
inline run_result run_shell(const std::string& command) {
  const std::string cmd = command + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return {-1, "popen failed"};
  std::string out;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  const int status = pclose(p);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

inline run_result fabricsim(const std::string& args) { return run_shell(std::string(FABRICSIM_BINARY) + " " + args); }

}  // namespace fabricsim::test
