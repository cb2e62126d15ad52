// `fabricsim replay`: re-injects the RDMA messages of a RoCEv2 capture into a modelled fabric and reports
// what the fabric did with them, next to what the capture holds. Design: docs/replay.md.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "traces/capture_messages.h"

namespace fabricsim::testbench {

// When each captured message is posted (--timing).
struct replay_timing {
  enum class mode { captured, asap, scale };
  mode kind = mode::captured;
  double factor = 1.0;  // scale: multiplies every gap from the first frame
  std::string text = "captured";
};

// Parses a --timing value: captured, asap or scale=X (X a number above 0). Throws core::config_error
// "--timing VALUE: expected ..." otherwise.
replay_timing parse_replay_timing(const std::string& value);

struct replay_options {
  std::string trace;                // pcap or pcapng file
  std::string scenario_file;        // empty: one Spectrum switch with a port per endpoint (docs/replay.md)
  std::vector<std::string> sets;    // --set overrides of the scenario (or of the default fabric)
  std::string seed;                 // --seed, empty: the scenario's
  replay_timing timing;
  std::vector<std::string> taps;    // --tap, as for `fabricsim run`
};

struct replay_result {
  // The run's report (docs/report.md) with `trace` and `replay` added; only those two when nothing of the
  // capture could be posted (no simulation then).
  nlohmann::json report;
  bool simulated = false;
  std::vector<std::string> warnings;  // for stderr: a file cut short, malformed frames, ops not replayed
};

// Reads the capture, maps its endpoints onto the fabric's hosts, posts its messages and runs. Throws
// core::config_error (traces::capture_error included) for a capture or scenario that cannot be used.
// SystemC elaborates once per process: call it at most once.
replay_result run_replay(const replay_options& opts);

// The `trace` object of the report: what the capture holds (docs/report.md). `hosts[i]` names the host
// endpoint i (in address order) is mapped to; empty: no mapping shown.
nlohmann::json trace_json(const traces::capture_trace& t, const std::vector<std::string>& hosts);

// The replay's part of the result table: capture figures and one row per replayed flow.
std::string format_replay_table(const nlohmann::json& report);

}  // namespace fabricsim::testbench
