// `fabricsim plot`: figures from a run's JSON report (and optional time-series CSV) or a sweep's CSV, drawn by
// scripts/plot.py with matplotlib. Python draws the figures only; nothing of the simulation runs in it.
#pragma once

#include <string>
#include <vector>

namespace fabricsim::testbench {

struct plot_options {
  std::string report;                   // REPORT.json (fabricsim run --json, or a --compare report)
  std::string out_dir = "plots";        // written here, created if missing
  std::vector<std::string> timeseries;  // --timeseries CSV files (fabricsim run --timeseries)
  std::string title;                    // prefix of every title; default: the report's scenario name
  std::string format = "png";           // png (150 dpi), svg or pdf
  unsigned flows = 0;                   // flow_rate: the first N flows only; 0: all
  std::string metric;                   // a sweep CSV: the column to draw; default: its headline figure
  std::string red;                      // KMIN,KMAX bytes on queue_depth; default: the report's scenario's
};

// The RED lines of the scenario a report came from (its scenario_file, or its first run's): "KMIN,KMAX" of
// switch.ecn_kmin_bytes and ecn_kmax_bytes as the file sets them (a run's --set is not in the report), or ""
// when the file cannot be loaded or its switches are not Spectrum (no ECN marking).
std::string red_lines_of_report(const std::string& report);

// The plotting script: $FABRICSIM_PLOT_SCRIPT when set, else scripts/plot.py of the source tree the
// binary was built from.
std::string plot_script_path();

// The --timeseries files to draw: each given file, or when it does not exist and the report is a comparison,
// its per-value files (`ts.csv` -> ts.<value>.csv, as `fabricsim run --compare ... --timeseries ts.csv`
// wrote them). Throws core::config_error naming the file when neither exists.
std::vector<std::string> expand_timeseries(const std::string& report, const std::vector<std::string>& given);

// Runs /usr/bin/python3 plot.py on the options and returns its exit status (0: figures written, their paths
// on stdout). Throws core::config_error when the report is missing or python3 / the script cannot be run.
int run_plot(const plot_options& opts);

}  // namespace fabricsim::testbench
