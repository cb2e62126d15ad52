// `fabricsim sweep`: the cross product of several keys, forked points run in parallel, resumable
// (testbench/sweep.h).
#include "testbench/sweep.h"

#include <fmt/format.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <sstream>

#include "sc_models/core/params.h"
#include "testbench/explain.h"
#include "testbench/run_summary.h"
#include "testbench/simulation.h"
#include "testbench/verdict.h"

namespace fabricsim::testbench {

using core::config_error;

CLI::App* add_sweep_command(CLI::App& app, sweep_options& opts) {
  CLI::App* cmd = app.add_subcommand(
      "sweep",
      "Run one scenario over the cross product of several keys' values, each point in its own process, --jobs at\n"
      "a time; write one headline row per point to DIR/sweep.csv and DIR/sweep.json (docs/sweep.md). Run it\n"
      "again to resume: points already complete in DIR are kept. `fabricsim plot DIR/sweep.csv` draws it.\n"
      "Example: fabricsim sweep leaf_spine_small --grid switch.routing=ecmp,adaptive --grid topology.spines=1,2 "
      "--jobs 2 --out sw");
  cmd->add_option("scenario", opts.scenario, "Scenario YAML file, or the name of a shipped one")->required();
  cmd->add_option("--grid", opts.grids, "One axis of the sweep, KEY=V1,V2,... (any key --set accepts; repeatable)")
      ->required()
      ->allow_extra_args(false);
  cmd->add_option("--set", opts.sets, "Override one scenario key at every point (repeatable)")->allow_extra_args(false);
  cmd->add_option("--jobs", opts.jobs, "Points run at once, each in its own process")
      ->check(CLI::Range(1u, 256u))
      ->capture_default_str();
  cmd->add_option("--out", opts.out_dir, "Directory of the results (created if missing)")->capture_default_str();
  cmd->add_flag("--quiet", opts.quiet, "Print nothing but errors");
  return cmd;
}

grid_axis parse_grid_option(const std::string& text) {
  auto bad = [&](const std::string& why) {
    return config_error("--grid " + text + ": " + why + " (expected KEY=V1,V2,..., e.g. --grid nic.cc=none,dcqcn)");
  };
  const size_t eq = text.find('=');
  if (eq == std::string::npos) throw bad("no '='");
  grid_axis axis{text.substr(0, eq), {}};
  if (axis.key.empty()) throw bad("empty key");
  std::istringstream values(text.substr(eq + 1) + ",");  // the trailing comma: "a," has one value, "a,," two
  std::string v;
  while (std::getline(values, v, ',')) {
    if (v.empty()) throw bad("empty value");
    axis.values.push_back(v);
  }
  return axis;
}

std::vector<std::vector<std::string>> grid_points(const std::vector<grid_axis>& axes) {
  std::vector<std::vector<std::string>> points{{}};
  for (const grid_axis& axis : axes) {
    std::vector<std::vector<std::string>> next;
    for (const auto& p : points)
      for (const std::string& v : axis.values) {
        next.push_back(p);
        next.back().push_back(axis.key + "=" + v);
      }
    points = std::move(next);
  }
  return points;
}

const std::vector<std::string>& headline_columns() {
  static const std::vector<std::string> columns = {"completed",
                                                   "operations",
                                                   "verified",
                                                   "checked_bytes",
                                                   "placed_bytes",
                                                   "simulated_us",
                                                   "effective_throughput",
                                                   "mean_flow_throughput",
                                                   "min_flow_throughput",
                                                   "jain_fairness",
                                                   "bottleneck_utilization",
                                                   "drops",
                                                   "ecn_marked",
                                                   "pfc_pause_frames",
                                                   "max_queue_bytes",
                                                   "avg_busbw_gbps",
                                                   "max_busbw_gbps",
                                                   "leaf_oversubscription",
                                                   "bisection_gbps"};
  return columns;
}

nlohmann::json headline_of(const nlohmann::json& r) {
  const nlohmann::json& fab = r.at("fabric");
  auto field = [&](const char* key) { return fab.contains(key) ? fab.at(key) : nlohmann::json(nullptr); };
  nlohmann::json h;
  h["completed"] = r.at("completed");
  h["operations"] = r.at("operations");
  h["verified"] = r.at("data_checked").get<bool>() ? r.at("verified") : nlohmann::json(nullptr);
  h["checked_bytes"] = r.at("checked_bytes");
  h["placed_bytes"] = r.at("placed_bytes");
  h["simulated_us"] = r.at("simulated_time_ns").get<double>() / 1000.0;
  for (const char* key : {"effective_throughput", "mean_flow_throughput", "min_flow_throughput", "jain_fairness",
                          "drops", "ecn_marked", "pfc_pause_frames", "max_queue_bytes"})
    h[key] = field(key);
  const nlohmann::json b = field("bottleneck");
  h["bottleneck_utilization"] = b.is_object() && b.contains("utilization") ? b.at("utilization") : nlohmann::json();
  h["avg_busbw_gbps"] = nullptr;
  h["max_busbw_gbps"] = nullptr;
  if (r.contains("collective")) {
    const auto& c = r.at("collective");
    h["avg_busbw_gbps"] = c.at("avg_busbw_gbps");
    for (const auto& row : c.at("rows"))
      if (!row.at("busbw_gbps").is_null() &&
          (h["max_busbw_gbps"].is_null() || row.at("busbw_gbps").get<double>() > h["max_busbw_gbps"].get<double>()))
        h["max_busbw_gbps"] = row.at("busbw_gbps");
  }
  return h;
}

namespace {

// The exit status a point's run would give on its own (as `fabricsim run`: testbench/verdict.h).
int point_status(const nlohmann::json& r) { return report_status(r); }

std::string point_file(const std::string& dir, size_t i) { return fmt::format("{}/points/p{:04}.json", dir, i); }

void make_dir(const std::string& dir) {
  if (mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST)
    throw config_error("--out " + dir + ": cannot create the directory (" + std::strerror(errno) + ")");
}

// The point's row when its file holds a complete result for exactly these assignments, else null.
nlohmann::json completed_row(const std::string& file, const std::vector<std::string>& set) {
  std::ifstream in(file);
  if (!in) return nullptr;
  nlohmann::json row = nlohmann::json::parse(in, nullptr, false);
  if (row.is_discarded() || !row.is_object() || !row.value("complete", false) ||
      row.value("set", nlohmann::json()) != set)
    return nullptr;
  // A row from a fabricsim with other columns is run again rather than left with holes.
  if (!row.contains("headline") || !row["headline"].is_object()) return nullptr;
  for (const std::string& c : headline_columns())
    if (!row["headline"].contains(c)) return nullptr;
  return row;
}

// Written whole then renamed, so that a point killed while writing leaves no file that looks complete.
void write_atomically(const std::string& file, const std::string& text) {
  const std::string tmp = file + ".tmp";
  {
    std::ofstream out(tmp);
    out << text;
    if (!out) throw std::runtime_error(tmp + ": write failed");
  }
  if (std::rename(tmp.c_str(), file.c_str()) != 0)
    throw std::runtime_error(file + ": rename failed (" + std::strerror(errno) + ")");
}

// The child's work: run the point, write its row. Exit 0 done, 2 configuration error, 3 anything else; the
// message of an error goes to FILE.err.
[[noreturn]] void run_point(const scenario& s, const std::vector<std::string>& set, size_t index,
                            const std::string& file) {
  int code = 0;
  std::string error;
  try {
    const auto wall0 = std::chrono::steady_clock::now();
    run_options opts;
    opts.scenario_file = s.source;
    const nlohmann::json report = run_scenario(s, opts);
    nlohmann::json row{{"point", index}, {"set", set}, {"complete", true}, {"status", point_status(report)}};
    row["wall_s"] = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
    row["headline"] = headline_of(report);
    // The fabric's shape beside its result, so that a sweep over topology keys reads on its own.
    const fabric_capacity fabric = capacity_of(s.topology);
    row["headline"]["leaf_oversubscription"] = fabric.leaf_oversubscription;
    row["headline"]["bisection_gbps"] = fabric.bisection_gbps;
    write_atomically(file, row.dump(2) + "\n");
  } catch (const config_error& e) {
    error = e.what();
    code = 2;
  } catch (const std::exception& e) {
    error = e.what();
    code = 3;
  }
  if (code != 0) std::ofstream(file + ".err") << error;
  std::fflush(nullptr);
  _exit(code);  // no destructors: the SystemC kernel is not torn down
}

std::string read_all(const std::string& file) {
  std::ifstream in(file);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string csv_cell(const nlohmann::json& v) {
  if (v.is_null()) return "";
  if (v.is_boolean()) return v.get<bool>() ? "true" : "false";
  if (v.is_number_float()) return fmt::format("{:.6g}", v.get<double>());
  if (v.is_string()) return v.get<std::string>();
  return v.dump();
}

std::string value_of(const std::string& assignment) { return assignment.substr(assignment.find('=') + 1); }

void write_results(const sweep_options& o, const std::vector<grid_axis>& axes,
                   const std::vector<nlohmann::json>& rows) {
  std::string csv = "point";
  for (const grid_axis& a : axes) csv += "," + a.key;
  csv += ",status";
  for (const std::string& c : headline_columns()) csv += "," + c;
  csv += "\n";
  nlohmann::json all = nlohmann::json::array();
  for (const nlohmann::json& row : rows) {
    csv += std::to_string(row.at("point").get<size_t>());
    nlohmann::json flat{{"point", row.at("point")}, {"status", row.at("status")}};
    for (const auto& a : row.at("set")) {
      const std::string s = a.get<std::string>();
      csv += "," + value_of(s);
      flat[s.substr(0, s.find('='))] = value_of(s);
    }
    csv += "," + csv_cell(row.at("status"));
    for (const std::string& c : headline_columns()) {
      csv += "," + csv_cell(row.at("headline").at(c));
      flat[c] = row.at("headline").at(c);
    }
    csv += "\n";
    all.push_back(std::move(flat));
  }
  write_atomically(o.out_dir + "/sweep.csv", csv);
  nlohmann::json grid = nlohmann::json::array();
  for (const grid_axis& a : axes) grid.push_back({{"key", a.key}, {"values", a.values}});
  write_atomically(
      o.out_dir + "/sweep.json",
      nlohmann::json{{"scenario", o.scenario}, {"set", o.sets}, {"grid", grid}, {"rows", all}}.dump(2) + "\n");
}

// The child of the check: build the point's fabric and post its workload without simulating, so that what
// a block checks when it is built (a port faster than switch.port_config, ...) fails before any point runs.
[[noreturn]] void elaborate_point(const scenario& s, const std::string& error_file) {
  int code = 0;
  std::string error;
  try {
    run_options opts;
    opts.scenario_file = s.source;
    opts.elaborate_only = true;
    run_scenario(s, opts);
  } catch (const config_error& e) {
    error = e.what();
    code = 2;
  } catch (const std::exception& e) {
    error = e.what();
    code = 3;
  }
  if (code != 0) std::ofstream(error_file) << error;
  std::fflush(nullptr);
  _exit(code);
}

// Forks `child(i)` for every i of `todo`, at most `jobs` at once, and calls `finished(i, status)` (waitpid's
// status) as each ends, in the order they end.
void run_children(const std::vector<size_t>& todo, unsigned jobs, const std::function<void(size_t)>& child,
                  const std::function<void(size_t, int)>& finished) {
  std::map<pid_t, size_t> running;
  size_t next = 0;
  while (next < todo.size() || !running.empty()) {
    while (next < todo.size() && running.size() < jobs) {
      const size_t i = todo[next++];
      std::cout.flush();  // else what is buffered would be written by the child too
      std::cerr.flush();
      std::fflush(nullptr);
      const pid_t pid = fork();
      if (pid < 0) throw std::runtime_error(std::string("sweep: fork failed: ") + std::strerror(errno));
      if (pid == 0) child(i);  // never returns
      running[pid] = i;
    }
    int status = 0;
    const pid_t pid = waitpid(-1, &status, 0);
    if (pid < 0) {
      if (errno == EINTR) continue;
      throw std::runtime_error(std::string("sweep: waitpid failed: ") + std::strerror(errno));
    }
    const auto it = running.find(pid);
    if (it == running.end()) continue;
    const size_t i = it->second;
    running.erase(it);
    finished(i, status);
  }
}

std::string label_of(const std::vector<std::string>& point) {
  std::string label;
  for (const std::string& a : point) label += (label.empty() ? "" : " ") + a;
  return label;
}

// Why a child that left no result failed: its signal, or the message it wrote.
std::string child_failure(int status, const std::string& error_file) {
  if (WIFSIGNALED(status)) return fmt::format("killed by signal {}", WTERMSIG(status));
  return read_all(error_file);
}

// Every point's scenario: the file, the --sets, then its grid values. A bad key or value is refused here,
// before anything runs, naming the --grid value.
std::vector<scenario> load_points(const sweep_options& o, const std::vector<std::vector<std::string>>& points) {
  std::vector<scenario> loaded;
  for (const auto& p : points) {
    std::vector<std::string> all = o.sets;
    all.insert(all.end(), p.begin(), p.end());
    try {
      loaded.push_back(load_scenario_by_name(o.scenario, all));
    } catch (const config_error& e) {
      // The loader quotes a grid value as a --set; say where it came from instead.
      std::string what = e.what();
      for (const std::string& a : p)
        if (what.rfind("--set " + a + ":", 0) == 0) what = "--grid " + what.substr(6);
      throw config_error("sweep: " + what);
    }
  }
  return loaded;
}

void print_point(const nlohmann::json& row, const std::string& label, size_t done, size_t points) {
  const nlohmann::json& h = row.at("headline");
  const std::string figure = !h.at("avg_busbw_gbps").is_null()
                                 ? fmt::format("avg busbw {:.2f} GB/s", h.at("avg_busbw_gbps").get<double>())
                                 : fmt::format("eff.thru {:.1f}%", 100.0 * h.at("effective_throughput").get<double>());
  std::cout << fmt::format(
                   "sweep: {}/{} done: point {} ({}): {}, {}/{} completed; leaf oversubscription {:g}:1, "
                   "bisection {:g} Gb/s; {:.1f} s\n",
                   done, points, row.at("point").get<size_t>(), label, figure, h.at("completed").get<uint64_t>(),
                   h.at("operations").get<uint64_t>(), h.at("leaf_oversubscription").get<double>(),
                   h.at("bisection_gbps").get<double>(), row.at("wall_s").get<double>())
            << std::flush;
}

}  // namespace

int run_sweep(const sweep_options& o) {
  std::vector<grid_axis> axes;
  for (const std::string& g : o.grids) axes.push_back(parse_grid_option(g));
  for (size_t i = 0; i < axes.size(); ++i)
    for (size_t k = 0; k < i; ++k)
      if (axes[k].key == axes[i].key) throw config_error("--grid " + axes[i].key + ": the key is swept twice");
  const std::vector<std::vector<std::string>> points = grid_points(axes);
  std::vector<scenario> loaded = load_points(o, points);
  make_dir(o.out_dir);
  make_dir(o.out_dir + "/points");
  std::vector<nlohmann::json> rows(points.size());
  std::vector<size_t> todo;
  for (size_t i = 0; i < points.size(); ++i) {
    rows[i] = completed_row(point_file(o.out_dir, i), points[i]);
    if (rows[i].is_null()) todo.push_back(i);
    std::remove((point_file(o.out_dir, i) + ".err").c_str());
  }
  // A point's files are its own: its time series and RTL records go next to its row.
  for (size_t i : todo) {
    scenario& s = loaded[i];
    if (!s.run.timeseries_csv.empty()) s.run.timeseries_csv = fmt::format("{}/points/p{:04}.csv", o.out_dir, i);
    if (!s.run.record_rtl_dir.empty()) s.run.record_rtl_dir = fmt::format("{}/points/p{:04}.rtl", o.out_dir, i);
  }
  // Every point to run is built once before any runs: a value a block refuses costs no run.
  std::string refused;
  run_children(
      todo, o.jobs, [&](size_t i) { elaborate_point(loaded[i], point_file(o.out_dir, i) + ".err"); },
      [&](size_t i, int status) {
        if (refused.empty() && status != 0)
          refused = fmt::format("sweep: point {} ({}): {}", i, label_of(points[i]),
                                child_failure(status, point_file(o.out_dir, i) + ".err"));
      });
  if (!refused.empty()) throw config_error(refused);
  if (!o.quiet)
    std::cout << fmt::format("sweep: {} points ({} already complete in {}), {} at a time\n", points.size(),
                             points.size() - todo.size(), o.out_dir, o.jobs);
  std::string failures;
  size_t done = points.size() - todo.size();
  run_children(
      todo, o.jobs, [&](size_t i) { run_point(loaded[i], points[i], i, point_file(o.out_dir, i)); },
      [&](size_t i, int status) {
        ++done;
        rows[i] = completed_row(point_file(o.out_dir, i), points[i]);
        if (rows[i].is_null())
          failures += fmt::format("sweep: point {} ({}) failed: {}\n", i, label_of(points[i]),
                                  child_failure(status, point_file(o.out_dir, i) + ".err"));
        else if (!o.quiet)
          print_point(rows[i], label_of(points[i]), done, points.size());
      });
  if (!failures.empty()) {
    std::cerr << failures << "sweep: run the same command again to retry the failed points (the others are kept)\n";
    return 1;
  }
  write_results(o, axes, rows);
  int status = 0;
  for (const nlohmann::json& row : rows) status = worse_status(status, row.at("status").get<int>());
  if (!o.quiet) std::cout << "sweep: wrote " << o.out_dir << "/sweep.csv and " << o.out_dir << "/sweep.json\n";
  return status;
}

}  // namespace fabricsim::testbench
