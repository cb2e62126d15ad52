// The differential bench of the receiver PSN reorder tracker: RTL against reference, every port every cycle.
#include "sc_models/nic/reorder_tracker_differential.h"

#include <algorithm>
#include <random>
#include <vector>

#include "sc_models/nic/reorder_tracker.h"
#include "sc_models/nic/reorder_tracker_ref.h"
#include "sc_models/nic/reorder_tracker_rtl.h"

namespace fabricsim::nic {

const char* to_string(reorder_tracker_bin bin) {
  switch (bin) {
    case reorder_tracker_bin::in_order: return "in_order";
    case reorder_tracker_bin::out_of_order: return "out_of_order";
    case reorder_tracker_bin::duplicate_of_marked: return "duplicate_of_marked";
    case reorder_tracker_bin::duplicate_behind_head: return "duplicate_behind_head";
    case reorder_tracker_bin::out_of_window: return "out_of_window";
    case reorder_tracker_bin::last_slot_of_window: return "last_slot_of_window";
    case reorder_tracker_bin::first_psn_beyond_window: return "first_psn_beyond_window";
    case reorder_tracker_bin::half_space_boundary: return "half_space_boundary";
    case reorder_tracker_bin::verdict_across_wrap: return "verdict_across_wrap";
    case reorder_tracker_bin::head_wrap_crossed: return "head_wrap_crossed";
    case reorder_tracker_bin::head_jump_over_one: return "head_jump_over_one";
    case reorder_tracker_bin::window_full: return "window_full";
    case reorder_tracker_bin::back_pressure_stall: return "back_pressure_stall";
    case reorder_tracker_bin::idle_gap: return "idle_gap";
    case reorder_tracker_bin::init_with_marks_pending: return "init_with_marks_pending";
    case reorder_tracker_bin::reset_mid_stream: return "reset_mid_stream";
    case reorder_tracker_bin::count_: break;
  }
  return "invalid";
}

bool reorder_tracker_differential_result::all_bins_hit() const {
  for (uint64_t h : coverage)
    if (h == 0) return false;
  return true;
}

namespace {

constexpr uint32_t half_space = 1u << 23;
constexpr uint32_t wrap(uint64_t psn) { return static_cast<uint32_t>(psn) & psn_mask; }

// How one seed exercises the block; each seed picks one of these.
struct stimulus_profile {
  double idle_probability;   // a cycle with in_valid low when nothing is pending
  double init_probability;   // per cycle: re-initialise to a new expected PSN
  double reset_probability;  // per cycle: pulse rst_ni for 1..3 cycles
  uint64_t reset_after;      // no reset before this cycle (the start near the PSN wrap is crossed first)
};

constexpr std::array<stimulus_profile, 4> profiles{{
    {0.0, 0.0, 0.0, 0},                    // back to back, no disturbance: maximal back-pressure
    {0.3, 1.0 / 3000, 1.0 / 5000, 16384},  // some idle cycles, occasional init, occasional reset
    {0.7, 1.0 / 1500, 0.0, 0},             // mostly idle, frequent init
    {0.1, 1.0 / 4000, 1.0 / 8000, 0},
}};

// Valid/ready source of PSNs for one seed. Once presented, a PSN is held until accepted (the handshake rule);
// the choice of the next PSN looks at the head the block reported, like a sender reacting to ACKs would.
class psn_source {
 public:
  psn_source(uint32_t window, uint64_t seed) : m_window(window), m_rng(seed), m_profile(profiles[seed % profiles.size()]) {
    m_start_near_wrap = (seed / profiles.size()) % 2 == 0;
  }

  // Inputs for the next cycle, given the outputs of the previous one.
  reorder_tracker_inputs next(uint64_t cycle, const reorder_tracker_outputs& last) {
    reorder_tracker_inputs in;
    if (cycle == 0 || m_reset_left > 0) {
      in.rst_n = false;
      if (m_reset_left > 0) --m_reset_left;
    } else if (cycle == 1 || chance(m_profile.init_probability)) {
      in.init_valid = true;
      in.init_psn = pick_start();
      restart_fresh(in.init_psn);
    } else if (chance(m_profile.reset_probability) && cycle >= m_profile.reset_after) {  // draws every cycle
      in.rst_n = false;
      m_reset_left = uniform(0, 2);
      restart_fresh(0);
    }
    const uint32_t head = last.head_psn;
    if (!m_pending && !chance(m_profile.idle_probability)) {
      m_pending = true;
      m_pending_psn = pick_psn(head);
    }
    in.in_valid = m_pending;
    in.in_psn = m_pending ? m_pending_psn : 0;
    return in;
  }

  // Completes the handshake of the cycle just stepped.
  void observe(const reorder_tracker_inputs& in, const reorder_tracker_outputs& out) {
    if (in.in_valid && out.in_ready) {
      m_pending = false;
      m_recent[m_recent_next++ % m_recent.size()] = in.in_psn;
    }
  }

 private:
  bool chance(double p) { return p > 0 && std::uniform_real_distribution<double>(0, 1)(m_rng) < p; }
  uint32_t uniform(uint32_t lo, uint32_t hi) { return std::uniform_int_distribution<uint32_t>(lo, hi)(m_rng); }

  uint32_t pick_start() {
    if (m_start_near_wrap) return wrap(uint64_t{psn_mask} + 1 - uniform(1, 2 * m_window));
    return uniform(0, psn_mask);
  }

  // Fresh PSNs come in blocks of up to three windows, shuffled within the block: a permutation of a range
  // larger than the window, so some land out of window and are dropped until retransmitted.
  void restart_fresh(uint32_t from) {
    m_fill.clear();
    m_fresh.clear();
    m_fresh_pos = 0;
    m_next_fresh = from;
  }
  uint32_t next_fresh(uint32_t head) {
    const uint32_t lead = wrap(uint64_t{m_next_fresh} + (uint64_t{1} << 24) - head);
    if (lead >= 4 * m_window && lead < half_space) restart_fresh(head);  // sender goes back N
    if (m_fresh_pos == m_fresh.size()) {
      const uint32_t block = uniform(m_window / 4, 3 * m_window);
      m_fresh.resize(block);
      for (uint32_t i = 0; i < block; ++i) m_fresh[i] = wrap(uint64_t{m_next_fresh} + i);
      std::shuffle(m_fresh.begin(), m_fresh.end(), m_rng);
      m_fresh_pos = 0;
      m_next_fresh = wrap(uint64_t{m_next_fresh} + block);
    }
    return m_fresh[m_fresh_pos++];
  }

  uint32_t pick_psn(uint32_t head) {
    // Now and then fill the whole window behind a hole, then plug the hole: the longest release there is.
    if (m_fill.empty() && chance(fill_probability)) {
      m_fill.push_back(head);
      for (uint32_t d = 1; d < m_window; ++d) m_fill.push_back(wrap(uint64_t{head} + d));
    }
    if (!m_fill.empty()) {
      const uint32_t psn = m_fill.back();
      m_fill.pop_back();
      return psn;
    }
    const uint32_t roll = uniform(0, 99);
    if (roll < 45) return next_fresh(head);
    if (roll < 57) return head;                                          // retransmission of the hole
    if (roll < 69) return wrap(uint64_t{head} + uniform(0, m_window - 1));  // in window
    if (roll < 79) return m_recent[uniform(0, m_recent.size() - 1)];     // duplicate of a recent PSN
    if (roll < 85) return wrap(uint64_t{head} + (uint64_t{1} << 24) - uniform(1, half_space));  // stale
    if (roll < 91) return wrap(uint64_t{head} + uniform(m_window, half_space - 1));  // beyond the window
    if (roll < 96) {
      // The edges of each verdict region.
      const std::array<uint64_t, 6> edges{uint64_t{m_window} - 1, m_window, half_space - 1, half_space,
                                          psn_mask, 1};
      return wrap(head + edges[uniform(0, edges.size() - 1)]);
    }
    return uniform(0, psn_mask);
  }

  static constexpr double fill_probability = 1.0 / 5000;  // per fresh pick

  uint32_t m_window;
  std::mt19937_64 m_rng;
  stimulus_profile m_profile;
  bool m_start_near_wrap = false;
  uint32_t m_reset_left = 0;
  bool m_pending = false;
  uint32_t m_pending_psn = 0;
  std::vector<uint32_t> m_fresh;
  size_t m_fresh_pos = 0;
  uint32_t m_next_fresh = 0;
  std::vector<uint32_t> m_fill;  // a window fill in progress, popped from the back
  std::array<uint32_t, 16> m_recent{};
  size_t m_recent_next = 0;
};

// Counts the coverage bins one cycle hits. The result of a PSN accepted in cycle N shows in cycle N + 1, so
// its offset (taken against the head of cycle N) waits in `offset_pending` for the verdict.
template <class Bin>
void cover(uint32_t window, const reorder_tracker_inputs& in, const reorder_tracker_outputs& out, uint32_t busy_run,
           Bin bin, bool& offset_pending, uint32_t& pending_offset, bool& pending_across_wrap, uint64_t& marks,
           bool& presented, bool& gap, uint64_t cycle) {
  if (out.res_valid && offset_pending) {
    const auto verdict = static_cast<psn_verdict>(out.res_verdict & 3);
    const uint32_t d = pending_offset;
    switch (verdict) {
      case psn_verdict::in_order: bin(reorder_tracker_bin::in_order); break;
      case psn_verdict::out_of_order:
        bin(reorder_tracker_bin::out_of_order);
        ++marks;
        break;
      case psn_verdict::duplicate:
        bin(d < window ? reorder_tracker_bin::duplicate_of_marked : reorder_tracker_bin::duplicate_behind_head);
        break;
      case psn_verdict::out_of_window: bin(reorder_tracker_bin::out_of_window); break;
    }
    if (d == window - 1) bin(reorder_tracker_bin::last_slot_of_window);
    if (d == window) bin(reorder_tracker_bin::first_psn_beyond_window);
    if (d == half_space - 1 || d == half_space) bin(reorder_tracker_bin::half_space_boundary);
    if (pending_across_wrap) bin(reorder_tracker_bin::verdict_across_wrap);
  }
  offset_pending = false;
  // A retirement pulse without a result is a stored PSN leaving the bitmap.
  if (out.adv_valid && !out.res_valid && marks > 0) --marks;
  if (out.adv_valid && out.adv_psn == psn_mask) bin(reorder_tracker_bin::head_wrap_crossed);
  if (busy_run == 1) bin(reorder_tracker_bin::head_jump_over_one);
  if (busy_run == window - 1) bin(reorder_tracker_bin::window_full);
  if (in.in_valid && !out.in_ready) bin(reorder_tracker_bin::back_pressure_stall);
  if (!in.rst_n) {
    if (cycle > 0) bin(reorder_tracker_bin::reset_mid_stream);
    marks = 0;
    return;
  }
  if (in.init_valid) {
    if (marks > 0) bin(reorder_tracker_bin::init_with_marks_pending);
    marks = 0;
    return;
  }
  if (in.in_valid && out.in_ready) {
    if (gap) bin(reorder_tracker_bin::idle_gap);
    presented = true;
    gap = false;
    offset_pending = true;
    pending_offset = wrap(uint64_t{in.in_psn} + (uint64_t{1} << 24) - out.head_psn);
    pending_across_wrap = pending_offset != 0 && pending_offset < window && in.in_psn < out.head_psn;
  } else if (!in.in_valid && presented) {
    gap = true;
  }
}

std::string describe(const char* what, const reorder_tracker_inputs& in, const reorder_tracker_outputs& rtl,
                     const reorder_tracker_outputs& ref) {
  return std::string(what) + "\n  inputs " + to_string(in) + "\n  rtl    " + to_string(rtl) + "\n  ref    " +
         to_string(ref);
}

}  // namespace

reorder_tracker_differential_result run_reorder_tracker_differential(uint32_t window, uint64_t cycles, uint64_t seed,
                                                                     const std::string& wave, uint32_t mutant) {
  reorder_tracker_rtl rtl(window, wave, mutant);  // closes the waveform when destroyed: it ends at a mismatch
  return run_reorder_tracker_differential(rtl, cycles, seed);
}

reorder_tracker_differential_result run_reorder_tracker_differential(reorder_tracker_cycle_model& rtl, uint64_t cycles,
                                                                     uint64_t seed) {
  reorder_tracker_differential_result r;
  const uint32_t window = rtl.window();
  reorder_tracker_ref ref(window);
  psn_source source(window, seed);
  reorder_tracker_outputs last, last_peek;
  bool last_in_reset = true;
  uint32_t busy_run = 0;
  // Coverage state: the offset of the PSN accepted last cycle, the marks the bitmap holds, whether a PSN
  // was ever presented and whether the last cycle presented none.
  auto bin = [&](reorder_tracker_bin b) { ++r.coverage[static_cast<size_t>(b)]; };
  bool offset_pending = false;
  uint32_t pending_offset = 0;
  bool pending_across_wrap = false;
  uint64_t marks = 0;
  bool presented = false, gap = false;
  auto fail = [&](uint64_t cycle, std::string what) {
    r.matched = false;
    r.mismatch_cycle = cycle;
    r.mismatch = std::move(what);
    return r;
  };
  for (uint64_t cycle = 0; cycle < cycles; ++cycle) {
    const reorder_tracker_inputs in = source.next(cycle, last);
    const reorder_tracker_outputs rtl_out = rtl.step(in);
    const reorder_tracker_outputs ref_out = ref.step(in);
    r.cycles = cycle + 1;
    if (rtl_out != ref_out) return fail(cycle, describe("outputs differ", in, rtl_out, ref_out));
    // peek() after the edge: both kinds agree (in_ready is combinational on init and reset, so it is left
    // out while those are applied), and it is what the next cycle shows when its inputs are idle.
    reorder_tracker_outputs rtl_peek = rtl.peek(), ref_peek = ref.peek();
    if (in.init_valid || !in.rst_n) rtl_peek.in_ready = ref_peek.in_ready;
    if (rtl_peek != ref_peek) return fail(cycle, describe("peek() after the edge differs", in, rtl_peek, ref_peek));
    if (cycle > 0 && !in.init_valid && in.rst_n && !last_in_reset && rtl_out != last_peek)
      return fail(cycle, describe("the cycle differs from the peek() before it", in, rtl_out, last_peek));
    last_peek = rtl_peek;
    last_in_reset = !in.rst_n;
    source.observe(in, rtl_out);
    last = rtl_out;

    if (rtl_out.res_valid) ++r.verdicts[rtl_out.res_verdict & 3];
    if (in.in_valid && !rtl_out.in_ready) ++r.stalled_presentations;
    if (rtl_out.adv_valid && rtl_out.adv_psn == psn_mask) ++r.head_wraps;
    if (in.init_valid) ++r.inits;
    busy_run = rtl_out.busy ? busy_run + 1 : 0;
    r.longest_busy_cycles = std::max(r.longest_busy_cycles, busy_run);
    cover(window, in, rtl_out, busy_run, bin, offset_pending, pending_offset, pending_across_wrap, marks, presented,
          gap, cycle);
  }
  return r;
}

}  // namespace fabricsim::nic
