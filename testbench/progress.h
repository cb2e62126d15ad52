// The progress line of a long run: simulated time reached, share of the planned run, packet-hops per second
// and an estimate of the wall time left, redrawn in place a few times a second on a terminal's stderr.
// It reads the clock and counters between sc_start slices and adds no kernel event, so a run's results are
// the same with it and without it (tests/testbench/progress_test.cpp).
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

namespace fabricsim::testbench {

// Whether a run shows progress: never with --quiet, and only when stderr is a terminal (never in a pipe, a
// file or a CI log). `stderr_is_tty` is isatty(2) in the command line; tests pass it in.
bool progress_wanted(bool quiet, bool stderr_is_tty);

// What one progress line says.
struct progress_state {
  double simulated_ns = 0.0;  // reached so far
  double planned_ns = 0.0;    // run.duration_us, or run.limit_us when the run ends when the workload is done
  bool until_done = false;    // planned_ns is a limit (the run may end earlier)
  double wall_s = 0.0;        // since the run started
  uint64_t packet_hops = 0;
};

// "sim 12.34 us of 120.00 us (10.3 %), 1.46 M packet-hops/s, about 3 s left" (or "limit 100.00 ms" and
// "at most ... left" for a run until the workload is done). The estimate is the simulated time left at the
// rate simulated so far; "-" until there is a rate.
std::string format_progress(const progress_state& p);

// The line a collective run prints as each message size finishes, as nccl-tests prints its rows:
// "# size 1048576 B done (1 of 7 sizes): time 50.96 us, algbw 20.57 GB/s, busbw 36.01 GB/s; 1.2 s wall".
// `iteration_us` are the timed iterations (their mean is the time), `bus_factor` turns algbw into busbw
// (testbench/collective.h).
std::string format_collective_size_done(uint64_t bytes, const std::vector<double>& iteration_us, double bus_factor,
                                        size_t done, size_t sizes, double wall_s);

// Draws format_progress() lines on `out`, over the previous one ('\r' and padding), at most every
// `interval_s` of wall time and only once `delay_s` have passed (short runs show nothing); finish() clears it.
class progress_reporter {
 public:
  progress_reporter(std::ostream& out, double interval_s = 0.25, double delay_s = 2.0)
      : m_out(out), m_interval_s(interval_s), m_delay_s(delay_s) {}
  // Called between slices; draws when due. Returns whether it drew.
  bool update(const progress_state& p);
  // Erases the line, if one was drawn.
  void finish();
  unsigned lines_drawn() const { return m_drawn; }

 private:
  std::ostream& m_out;
  double m_interval_s;
  double m_delay_s;
  double m_last_draw_s = -1.0;
  size_t m_width = 0;
  unsigned m_drawn = 0;
};

// A long phase outside the loop (set-up, verification, the report) on the same terminal: "set-up: 4096
// hosts, 192 switches, 8448 links ..." drawn in place when it begins; at end() erased when the phase took less
// than `delay_s` of wall time (short runs show nothing), else replaced by a lasting line
// "# set-up: 4096 hosts, 192 switches, 8448 links: 3.21 s wall". Writes nothing when `out` is null.
class phase_progress {
 public:
  phase_progress(std::ostream* out, std::string what, double delay_s = 2.0);
  phase_progress(const phase_progress&) = delete;
  phase_progress& operator=(const phase_progress&) = delete;
  ~phase_progress() { end(); }
  // Ends the phase, timed by its own clock or (tests) by `wall_s`; later calls do nothing.
  void end();
  void end(double wall_s);

 private:
  std::ostream* m_out;
  std::string m_what;
  double m_delay_s;
  double m_start_s;
  bool m_ended = false;
};

// "# set-up: 4096 hosts, 192 switches: 3.21 s wall" (the lasting line of a phase).
std::string format_phase_done(const std::string& what, double wall_s);

}  // namespace fabricsim::testbench
