// `fabricsim verify-rtl`: the Verilated reorder tracker against its reference model, every port every cycle.
#include "testbench/verify_rtl.h"

#include <algorithm>
#include <fstream>
#include <iomanip>
#include <random>
#include <sstream>
#include <vector>

#include "sc_models/core/params.h"
#include "sc_models/nic/reorder_tracker.h"
#include "sc_models/nic/reorder_tracker_ref.h"
#include "sc_models/nic/reorder_tracker_rtl.h"

namespace fabricsim::testbench {
namespace {

using namespace fabricsim::nic;

constexpr uint32_t half_space = 1u << 23;  // PSNs at distance >= 2^23 behind the head are stale
uint32_t wrap(uint64_t psn) { return static_cast<uint32_t>(psn) & psn_mask; }

// Valid/ready PSN source following the stimulus list in rtl/reorder_tracker.sv's header: shuffled blocks wider
// than the window, retransmissions, duplicates, stale and out-of-window PSNs, idle cycles, occasional init,
// heads starting just below 2^24 so they wrap. A presented PSN is held until accepted (handshake rule).
class psn_stimulus {
 public:
  psn_stimulus(uint32_t window, uint64_t seed) : m_window(window), m_rng(seed) {}

  reorder_tracker_inputs next(uint64_t cycle, const reorder_tracker_outputs& last) {
    reorder_tracker_inputs in;
    if (cycle == 0) {
      in.rst_n = false;
    } else if (cycle == 1 || chance(1.0 / 3000)) {
      in.init_valid = true;
      in.init_psn = chance(0.75) ? wrap(uint64_t{psn_mask} + 1 - uniform(1, 2 * m_window)) : uniform(0, psn_mask);
      restart_fresh(in.init_psn);
    }
    if (!m_pending && !chance(0.2)) {  // 20% idle cycles when nothing is held
      m_pending = true;
      m_pending_psn = pick(last.head_psn);
    }
    in.in_valid = m_pending;
    in.in_psn = m_pending ? m_pending_psn : 0;
    return in;
  }

  void observe(const reorder_tracker_inputs& in, const reorder_tracker_outputs& out) {
    if (!in.in_valid || !out.in_ready) return;
    m_pending = false;
    m_recent[m_recent_next++ % m_recent.size()] = in.in_psn;
  }

 private:
  bool chance(double p) { return std::uniform_real_distribution<double>(0, 1)(m_rng) < p; }
  uint32_t uniform(uint32_t lo, uint32_t hi) { return std::uniform_int_distribution<uint32_t>(lo, hi)(m_rng); }

  void restart_fresh(uint32_t from) {
    m_fresh.clear();
    m_fresh_pos = 0;
    m_next_fresh = from;
  }

  // The sender's new PSNs: a shuffled block of window+1 .. 3*window PSNs, so some land beyond the window.
  uint32_t next_fresh(uint32_t head) {
    const uint32_t lead = wrap(uint64_t{m_next_fresh} + psn_mask + 1 - head);
    if (lead >= 4 * m_window && lead < half_space) restart_fresh(head);  // too far ahead: go back N
    if (m_fresh_pos == m_fresh.size()) {
      m_fresh.resize(uniform(m_window + 1, 3 * m_window));
      for (size_t i = 0; i < m_fresh.size(); ++i) m_fresh[i] = wrap(m_next_fresh + uint64_t{i});
      std::shuffle(m_fresh.begin(), m_fresh.end(), m_rng);
      m_fresh_pos = 0;
      m_next_fresh = wrap(m_next_fresh + uint64_t{m_fresh.size()});
    }
    return m_fresh[m_fresh_pos++];
  }

  uint32_t pick(uint32_t head) {
    const uint32_t roll = uniform(0, 99);
    if (roll < 50) return next_fresh(head);
    if (roll < 62) return head;                                           // retransmission of the hole
    if (roll < 72) return m_recent[uniform(0, m_recent.size() - 1)];      // duplicate of a recent PSN
    if (roll < 80) return wrap(uint64_t{head} + uniform(1, m_window - 1));  // in window
    if (roll < 87) return wrap(uint64_t{head} + psn_mask + 1 - uniform(1, half_space));  // stale, behind head
    if (roll < 94) return wrap(uint64_t{head} + uniform(m_window, half_space - 1));     // out of window
    const uint64_t edges[] = {m_window - 1u, m_window, half_space - 1, half_space, psn_mask};  // region edges
    return wrap(head + edges[uniform(0, 4)]);
  }

  uint32_t m_window;
  std::mt19937_64 m_rng;
  bool m_pending = false;
  uint32_t m_pending_psn = 0;
  std::vector<uint32_t> m_fresh;
  size_t m_fresh_pos = 0;
  uint32_t m_next_fresh = 0;
  std::array<uint32_t, 16> m_recent{};
  size_t m_recent_next = 0;
};

std::string window_list() {
  std::string list;
  for (uint32_t w : reorder_tracker_rtl::compiled_windows()) list += (list.empty() ? "" : ", ") + std::to_string(w);
  return list;
}

std::string describe(const char* what, const reorder_tracker_inputs& in, const reorder_tracker_outputs& rtl,
                     const reorder_tracker_outputs& ref) {
  return std::string(what) + "\n  inputs " + to_string(in) + "\n  rtl    " + to_string(rtl) + "\n  ref    " +
         to_string(ref);
}

}  // namespace

std::string verify_rtl_blocks() { return "reorder_tracker"; }

verify_rtl_result verify_rtl(const verify_rtl_options& options) {
  if (options.block != "reorder_tracker")
    throw core::config_error("verify-rtl --block " + options.block + ": unknown block; known blocks: " +
                             verify_rtl_blocks());
  const auto& windows = reorder_tracker_rtl::compiled_windows();
  if (std::find(windows.begin(), windows.end(), options.window) == windows.end())
    throw core::config_error("verify-rtl --window " + std::to_string(options.window) +
                             " is not a window the RTL was compiled for; compiled windows: " + window_list());
  if (!options.wave.empty() && !std::ofstream(options.wave))
    throw core::config_error("verify-rtl --wave " + options.wave + ": cannot open for writing");

  verify_rtl_result r;
  // The RTL model closes the waveform when destroyed, so it ends at the mismatching cycle.
  reorder_tracker_rtl rtl(options.window, options.wave);
  reorder_tracker_ref ref(options.window);
  psn_stimulus source(options.window, options.seed);
  reorder_tracker_outputs last;
  uint32_t busy_run = 0;
  for (uint64_t cycle = 0; cycle < options.cycles; ++cycle) {
    const reorder_tracker_inputs in = source.next(cycle, last);
    const reorder_tracker_outputs rtl_out = rtl.step(in);
    const reorder_tracker_outputs ref_out = ref.step(in);
    r.cycles = cycle + 1;
    if (rtl_out != ref_out) {
      r.matched = false;
      r.mismatch_cycle = cycle;
      r.mismatch = describe("outputs differ", in, rtl_out, ref_out);
      return r;
    }
    reorder_tracker_outputs rtl_peek = rtl.peek(), ref_peek = ref.peek();
    if (in.init_valid || !in.rst_n) rtl_peek.in_ready = ref_peek.in_ready;  // combinational on those inputs
    if (rtl_peek != ref_peek) {
      r.matched = false;
      r.mismatch_cycle = cycle;
      r.mismatch = describe("peek() after the edge differs", in, rtl_peek, ref_peek);
      return r;
    }
    source.observe(in, rtl_out);
    last = rtl_out;

    if (rtl_out.res_valid) ++r.verdicts[rtl_out.res_verdict & 3];
    if (in.in_valid && !rtl_out.in_ready) ++r.stalled_presentations;
    if (rtl_out.adv_valid && rtl_out.adv_psn == psn_mask) ++r.head_wraps;
    if (in.init_valid) ++r.inits;
    busy_run = rtl_out.busy ? busy_run + 1 : 0;
    r.longest_busy_cycles = std::max(r.longest_busy_cycles, busy_run);
  }
  return r;
}

std::string format_verify_rtl(const verify_rtl_options& options, const verify_rtl_result& r) {
  std::ostringstream s;
  s << "verify-rtl " << options.block << " window " << options.window << " seed " << options.seed << '\n';
  if (!r.matched) {
    s << "MISMATCH at cycle " << r.mismatch_cycle << ": " << r.mismatch << '\n';
    if (!options.wave.empty()) s << "waveform up to the mismatch: " << options.wave << '\n';
    return s.str();
  }
  s << "  cycles                 " << r.cycles << '\n';
  for (uint8_t v = 0; v < 4; ++v)
    s << "  " << std::left << std::setw(23) << to_string(static_cast<psn_verdict>(v)) << r.verdicts[v] << '\n';
  s << "  stalled presentations  " << r.stalled_presentations << '\n'
    << "  head wraps             " << r.head_wraps << '\n'
    << "  inits                  " << r.inits << '\n'
    << "  longest busy run       " << r.longest_busy_cycles << " cycles\n";
  if (!options.wave.empty()) s << "  waveform               " << options.wave << '\n';
  s << "RTL matches the reference model on every cycle\n";
  return s.str();
}

}  // namespace fabricsim::testbench
