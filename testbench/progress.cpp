// The progress line of a long run (testbench/progress.h).
#include "testbench/progress.h"

#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <utility>

namespace fabricsim::testbench {

namespace {

// "12.34 us", "1.50 ms", "2.000 s": simulated time in the unit that reads best.
std::string sim_time(double ns) {
  char buf[32];
  if (ns < 1e3) std::snprintf(buf, sizeof buf, "%.1f ns", ns);
  else if (ns < 1e6) std::snprintf(buf, sizeof buf, "%.2f us", ns / 1e3);
  else if (ns < 1e9) std::snprintf(buf, sizeof buf, "%.2f ms", ns / 1e6);
  else std::snprintf(buf, sizeof buf, "%.3f s", ns / 1e9);
  return buf;
}

// "45 s", "3 min 20 s", "1 h 05 min": wall time left.
std::string wall_time(double s) {
  char buf[32];
  if (s < 60) std::snprintf(buf, sizeof buf, "%.0f s", std::ceil(s));
  else if (s < 3600) std::snprintf(buf, sizeof buf, "%d min %02d s", int(s / 60), int(std::fmod(s, 60)));
  else std::snprintf(buf, sizeof buf, "%d h %02d min", int(s / 3600), int(std::fmod(s, 3600) / 60));
  return buf;
}

double steady_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace

bool progress_wanted(bool quiet, bool stderr_is_tty) { return !quiet && stderr_is_tty; }

std::string format_progress(const progress_state& p) {
  char buf[64];
  std::string out = "sim " + sim_time(p.simulated_ns) + (p.until_done ? " (limit " : " of ") + sim_time(p.planned_ns);
  const double share = p.planned_ns > 0 ? 100.0 * p.simulated_ns / p.planned_ns : 0.0;
  std::snprintf(buf, sizeof buf, p.until_done ? ", %.1f %%)" : " (%.1f %%)", share);
  out += buf;
  const double rate = p.wall_s > 0 ? double(p.packet_hops) / p.wall_s : 0.0;
  if (rate >= 1e6) std::snprintf(buf, sizeof buf, ", %.2f M packet-hops/s", rate / 1e6);
  else if (rate >= 1e3) std::snprintf(buf, sizeof buf, ", %.1f k packet-hops/s", rate / 1e3);
  else std::snprintf(buf, sizeof buf, ", %.0f packet-hops/s", rate);
  out += buf;
  // Time left at the simulated-time rate reached so far.
  if (p.simulated_ns > 0 && p.wall_s > 0 && p.planned_ns >= p.simulated_ns) {
    const double left = (p.planned_ns - p.simulated_ns) * p.wall_s / p.simulated_ns;
    out += (p.until_done ? ", at most " : ", about ") + wall_time(left) + " left";
  } else {
    out += ", time left -";
  }
  return out;
}

bool progress_reporter::update(const progress_state& p) {
  if (p.wall_s < m_delay_s) return false;
  if (m_last_draw_s >= 0 && p.wall_s - m_last_draw_s < m_interval_s) return false;
  const std::string line = format_progress(p);
  // Pad over the previous, possibly longer, line; no terminal escapes, so any terminal shows it.
  const size_t width = line.size();
  m_out << '\r' << line << std::string(m_width > width ? m_width - width : 0, ' ') << std::flush;
  m_width = width;
  m_last_draw_s = p.wall_s;
  ++m_drawn;
  return true;
}

void progress_reporter::finish() {
  if (m_width == 0) return;
  m_out << '\r' << std::string(m_width, ' ') << '\r' << std::flush;
  m_width = 0;
}

std::string format_collective_size_done(uint64_t bytes, const std::vector<double>& iteration_us, double bus_factor,
                                        size_t done, size_t sizes, double wall_s) {
  double sum = 0.0;
  for (double t : iteration_us) sum += t;
  const double time_us = iteration_us.empty() ? 0.0 : sum / double(iteration_us.size());
  const double algbw = time_us > 0 ? double(bytes) / (time_us * 1e3) : 0.0;  // bytes per ns = GB/s
  return fmt::format(
      "# size {} B done ({} of {} sizes): time {:.2f} us, algbw {:.2f} GB/s, busbw {:.2f} GB/s; "
      "{:.1f} s wall\n",
      bytes, done, sizes, time_us, algbw, algbw * bus_factor, wall_s);
}

std::string format_phase_done(const std::string& what, double wall_s) {
  return fmt::format("# {}: {:.2f} s wall\n", what, wall_s);
}

phase_progress::phase_progress(std::ostream* out, std::string what, double delay_s)
    : m_out(out), m_what(std::move(what)), m_delay_s(delay_s), m_start_s(steady_seconds()) {
  if (m_out) *m_out << '\r' << m_what << " ..." << std::flush;
}

void phase_progress::end() { end(steady_seconds() - m_start_s); }

void phase_progress::end(double wall_s) {
  if (m_ended) return;
  m_ended = true;
  if (!m_out) return;
  *m_out << '\r' << std::string(m_what.size() + 4, ' ') << '\r';
  if (wall_s >= m_delay_s) *m_out << format_phase_done(m_what, wall_s);
  *m_out << std::flush;
}

}  // namespace fabricsim::testbench
