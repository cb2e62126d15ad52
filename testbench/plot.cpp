// `fabricsim plot` (testbench/plot.h): hands the report to scripts/plot.py.
#include "testbench/plot.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>

#include "sc_models/core/params.h"
#include "testbench/explain.h"

#ifndef FABRICSIM_PLOT_SCRIPT
#define FABRICSIM_PLOT_SCRIPT "scripts/plot.py"
#endif

namespace fabricsim::testbench {

std::string plot_script_path() {
  const char* env = std::getenv("FABRICSIM_PLOT_SCRIPT");
  return env && *env ? env : FABRICSIM_PLOT_SCRIPT;
}

namespace {

// The values of a --compare report (its runs[].value), or none for a single run's report.
std::vector<std::string> compare_values(const std::string& report) {
  std::vector<std::string> values;
  std::ifstream in(report);
  const nlohmann::json j = nlohmann::json::parse(in, nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("runs") || !j["runs"].is_array()) return values;
  for (const auto& r : j["runs"])
    if (r.is_object() && r.contains("value")) values.push_back(r["value"].is_string() ? r["value"].get<std::string>()
                                                                                        : r["value"].dump());
  return values;
}

}  // namespace

// A comparison's `fabricsim run --timeseries ts.csv` writes ts.<value>.csv per value; `--timeseries ts.csv`
// given back to plot, when that file does not exist, stands for those (the same name the run was given).
std::vector<std::string> expand_timeseries(const std::string& report, const std::vector<std::string>& given) {
  std::vector<std::string> out;
  for (const std::string& csv : given) {
    if (std::ifstream(csv).good()) {
      out.push_back(csv);
      continue;
    }
    const size_t slash = csv.find_last_of('/');
    const size_t dot = csv.find_last_of('.');
    const bool has_ext = dot != std::string::npos && (slash == std::string::npos || dot > slash);
    const std::string stem = has_ext ? csv.substr(0, dot) : csv, ext = has_ext ? csv.substr(dot) : "";
    std::vector<std::string> found;
    std::string tried;
    for (const std::string& v : compare_values(report)) {
      const std::string per_value = stem + "." + v + ext;
      tried += (tried.empty() ? "" : ", ") + per_value;
      if (std::ifstream(per_value).good()) found.push_back(per_value);
    }
    if (found.empty())
      throw core::config_error("--timeseries " + csv + ": cannot open the file" +
                               (tried.empty() ? std::string() : " (nor the comparison's " + tried + ")"));
    out.insert(out.end(), found.begin(), found.end());
  }
  return out;
}

std::string red_lines_of_report(const std::string& report) {
  std::ifstream in(report);
  const nlohmann::json j = nlohmann::json::parse(in, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return "";
  const nlohmann::json& r =
      j.contains("runs") && j["runs"].is_array() && !j["runs"].empty() ? j["runs"][0]["report"] : j;
  if (!r.is_object() || !r.contains("scenario_file") || !r["scenario_file"].is_string()) return "";
  try {
    const scenario s = load_scenario_by_name(r["scenario_file"].get<std::string>());
    if (s.switch_model.name != "spectrum4") return "";
    return std::to_string(s.switch_.ecn_kmin_bytes) + "," + std::to_string(s.switch_.ecn_kmax_bytes);
  } catch (const core::config_error&) {
    return "";  // the built-in default scenario, or a file moved since the run
  }
}

int run_plot(const plot_options& opts) {
  if (!std::ifstream(opts.report).good())
    throw core::config_error(opts.report + ": cannot open the report (write one with `fabricsim run S.yaml --json " +
                             opts.report + "`)");
  const std::vector<std::string> timeseries = expand_timeseries(opts.report, opts.timeseries);
  const std::string python = "/usr/bin/python3";
  const std::string script = plot_script_path();
  if (access(python.c_str(), X_OK) != 0)
    throw core::config_error("plot needs " + python + " with matplotlib (scripts/setup installs python3-matplotlib)");
  if (!std::ifstream(script).good())
    throw core::config_error(script + ": the plotting script is missing (set FABRICSIM_PLOT_SCRIPT to scripts/plot.py)");
  std::vector<std::string> args = {python, script, opts.report, "--out", opts.out_dir};
  for (const std::string& csv : timeseries) {
    args.push_back("--timeseries");
    args.push_back(csv);
  }
  if (!opts.title.empty()) {
    args.push_back("--title");
    args.push_back(opts.title);
  }
  const std::string red = opts.red.empty() ? red_lines_of_report(opts.report) : opts.red;
  for (const auto& [flag, value] : {std::pair<std::string, std::string>{"--format", opts.format},
                                    {"--red", red},
                                    {"--metric", opts.metric},
                                    {"--flows", opts.flows ? std::to_string(opts.flows) : ""}})
    if (!value.empty()) {
      args.push_back(flag);
      args.push_back(value);
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
