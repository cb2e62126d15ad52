// `fabricsim plot` (testbench/plot.h): hands the report to scripts/plot.py.
#include "testbench/plot.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>

#include "sc_models/core/params.h"

#ifndef FABRICSIM_PLOT_SCRIPT
#define FABRICSIM_PLOT_SCRIPT "scripts/plot.py"
#endif

namespace fabricsim::testbench {

std::string plot_script_path() {
  const char* env = std::getenv("FABRICSIM_PLOT_SCRIPT");
  return env && *env ? env : FABRICSIM_PLOT_SCRIPT;
}

int run_plot(const plot_options& opts) {
  if (!std::ifstream(opts.report).good())
    throw core::config_error(opts.report + ": cannot open the report (write one with `fabricsim run S.yaml --json " +
                             opts.report + "`)");
  for (const std::string& csv : opts.timeseries)
    if (!std::ifstream(csv).good()) throw core::config_error("--timeseries " + csv + ": cannot open the file");
  const std::string python = "/usr/bin/python3";
  const std::string script = plot_script_path();
  if (access(python.c_str(), X_OK) != 0)
    throw core::config_error("plot needs " + python + " with matplotlib (scripts/setup installs python3-matplotlib)");
  if (!std::ifstream(script).good())
    throw core::config_error(script + ": the plotting script is missing (set FABRICSIM_PLOT_SCRIPT to scripts/plot.py)");
  std::vector<std::string> args = {python, script, opts.report, "--out", opts.out_dir};
  for (const std::string& csv : opts.timeseries) {
    args.push_back("--timeseries");
    args.push_back(csv);
  }
  if (!opts.title.empty()) {
    args.push_back("--title");
    args.push_back(opts.title);
  }
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  const pid_t pid = fork();
  if (pid < 0) throw core::config_error(std::string("plot: cannot start python3: ") + std::strerror(errno));
  if (pid == 0) {
    execv(python.c_str(), argv.data());
    _exit(127);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) throw core::config_error(std::string("plot: waiting for python3: ") + std::strerror(errno));
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  return 3;
}

}  // namespace fabricsim::testbench
