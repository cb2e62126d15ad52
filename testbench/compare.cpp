// Comparison runs: fork a child per value, collect the children's JSON reports.
#include "testbench/compare.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <stdexcept>

#include "sc_models/nic/block_lockstep.h"
#include "testbench/verdict.h"

namespace fabricsim::testbench {

using core::config_error;

compare_params parse_compare_option(const std::string& text) {
  auto bad = [&](const std::string& why) {
    return config_error("--compare " + text + ": " + why +
                        " (expected KEY=V1,V2,..., e.g. --compare nic.path_entropy=fixed,per_packet)");
  };
  const size_t eq = text.find('=');
  if (eq == std::string::npos) throw bad("no '='");
  compare_params c;
  c.key = text.substr(0, eq);
  if (c.key.empty()) throw bad("empty key");
  for (size_t start = eq + 1;;) {
    const size_t comma = text.find(',', start);
    c.values.push_back(text.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (c.values.back().empty()) throw bad("empty value");
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return c;
}

compare_params effective_compare(const compare_params& from_file, const std::string& option,
                                 const std::vector<std::string>& sets, bool no_compare) {
  if (!option.empty()) {
    if (no_compare)
      throw config_error("--compare " + option + " and --no-compare contradict each other: give one of them");
    return parse_compare_option(option);
  }
  if (no_compare || from_file.empty()) return {};
  for (const std::string& set : sets)
    if (set.compare(0, set.find('='), from_file.key) == 0 && set.find('=') == from_file.key.size()) return {};
  return from_file;
}

std::string mpi_compare_advice(const compare_params& compare, const std::string& origin) {
  const std::string one = compare.key + "=" + compare.values.front();
  std::string advice = origin + " " + compare.key +
                       ": a comparison runs each value in its own process and is not "
                       "cut across MPI ranks; run one value per mpirun instead, e.g. --set " +
                       one;
  advice += origin == "--compare" ? " in place of --compare"
                                  : " (a --set of the compare key runs that value alone), or --no-compare for the "
                                    "file's own values";
  return advice + " (docs/scale_out.md)";
}

child_outcome run_forked(const std::function<std::string()>& fn) {
  // Anything buffered now would be written twice, once by each process.
  std::cout.flush();
  std::cerr.flush();
  std::fflush(nullptr);
  int fds[2];
  if (pipe(fds) != 0) throw std::runtime_error(std::string("pipe failed: ") + std::strerror(errno));
  const pid_t pid = fork();
  if (pid < 0) throw std::runtime_error(std::string("fork failed: ") + std::strerror(errno));
  if (pid == 0) {
    close(fds[0]);
    std::string out;
    int code = 0;
    try {
      out = fn();
    } catch (const config_error& e) {
      out = e.what();
      code = 2;
    } catch (const nic::rtl_divergence& e) {
      out = e.what();
      code = exit_rtl_divergence;
    } catch (const std::exception& e) {
      out = e.what();
      code = 3;
    } catch (...) {
      out = "unknown exception";
      code = 3;
    }
    for (size_t off = 0; off < out.size();) {
      const ssize_t n = write(fds[1], out.data() + off, out.size() - off);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      off += size_t(n);
    }
    close(fds[1]);
    _exit(code);  // no destructors, no atexit handlers: the SystemC kernel is not torn down
  }
  close(fds[1]);
  child_outcome result;
  char buf[65536];
  for (;;) {
    const ssize_t n = read(fds[0], buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    result.output.append(buf, size_t(n));
  }
  close(fds[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFSIGNALED(status)) result.signal = WTERMSIG(status);
  else result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 3;
  return result;
}

namespace {

// Throws for a child that did not finish cleanly, naming the value.
void check_child(const child_outcome& c, const std::string& label, const char* what) {
  if (c.signal != 0)
    throw std::runtime_error(label + ": the " + what + " crashed (signal " + std::to_string(c.signal) + ", " +
                             strsignal(c.signal) + ")" + (c.output.empty() ? "" : ": " + c.output));
  if (c.exit_code == 2) throw config_error(label + ": " + c.output);
  if (c.exit_code == exit_rtl_divergence) throw nic::rtl_divergence(label + ": " + c.output);
  if (c.exit_code != 0)
    throw std::runtime_error(label + ": the " + what + " failed (exit " + std::to_string(c.exit_code) + ")" +
                             (c.output.empty() ? "" : ": " + c.output));
}

}  // namespace

nlohmann::json run_comparison(const compare_params& compare, const std::vector<scenario>& runs,
                              const run_options& opts, const std::string& origin) {
  if (runs.size() != compare.values.size())
    throw std::logic_error("run_comparison: " + std::to_string(runs.size()) + " scenarios for " +
                           std::to_string(compare.values.size()) + " values");
  auto label = [&](size_t i) { return origin + " " + compare.key + "=" + compare.values[i]; };
  // Each value captures into its own files: --tap h0:0=a.pcap -> a.<value>.pcap.
  auto options_of = [&](size_t i) {
    run_options o = opts;
    for (std::string& t : o.taps) t = tap_for_value(t, compare.values[i]);
    o.progress_label = compare.key + "=" + compare.values[i];
    return o;
  };
  // Every value is elaborated before any is run, so that a value a block rejects costs no run.
  for (size_t i = 0; i < runs.size(); ++i) {
    run_options check = options_of(i);
    check.elaborate_only = true;
    check_child(run_forked([&] { return run_scenario(runs[i], check).dump(); }), label(i), "elaboration check");
  }
  nlohmann::json out;
  out["compare"] = compare.key;
  out["runs"] = nlohmann::json::array();
  for (size_t i = 0; i < runs.size(); ++i) {
    const child_outcome c = run_forked([&] { return run_scenario(runs[i], options_of(i)).dump(); });
    check_child(c, label(i), "run");
    nlohmann::json report;
    try {
      report = nlohmann::json::parse(c.output);
    } catch (const nlohmann::json::exception& e) {
      throw std::runtime_error(label(i) + ": the run's report is not valid JSON (" + e.what() + ")");
    }
    out["runs"].push_back({{"value", compare.values[i]}, {"report", std::move(report)}});
  }
  return out;
}

}  // namespace fabricsim::testbench
