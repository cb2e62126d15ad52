// The differential bench of the DCQCN notification point: RTL against reference, every port every cycle.
#include "sc_models/nic/cnp_gen_differential.h"

#include <optional>
#include <random>
#include <vector>

#include "sc_models/nic/cnp_gen.h"
#include "sc_models/nic/cnp_gen_ref.h"
#include "sc_models/nic/cnp_gen_rtl.h"

namespace fabricsim::nic {

const char* to_string(cnp_gen_bin bin) {
  switch (bin) {
    case cnp_gen_bin::first_cnp_of_flow: return "first_cnp_of_flow";
    case cnp_gen_bin::suppressed_within_interval: return "suppressed_within_interval";
    case cnp_gen_bin::suppressed_one_before_boundary: return "suppressed_one_before_boundary";
    case cnp_gen_bin::emitted_at_boundary: return "emitted_at_boundary";
    case cnp_gen_bin::emitted_after_interval: return "emitted_after_interval";
    case cnp_gen_bin::time_wrap_crossed: return "time_wrap_crossed";
    case cnp_gen_bin::flow_aliasing: return "flow_aliasing";
    case cnp_gen_bin::per_port_first_cnp: return "per_port_first_cnp";
    case cnp_gen_bin::per_port_suppression: return "per_port_suppression";
    case cnp_gen_bin::zero_interval_back_to_back: return "zero_interval_back_to_back";
    case cnp_gen_bin::storm_on_one_flow: return "storm_on_one_flow";
    case cnp_gen_bin::back_pressure_stall: return "back_pressure_stall";
    case cnp_gen_bin::idle_gap: return "idle_gap";
    case cnp_gen_bin::init_mid_run: return "init_mid_run";
    case cnp_gen_bin::reset_mid_run: return "reset_mid_run";
    case cnp_gen_bin::count_: break;
  }
  return "invalid";
}

bool cnp_gen_differential_result::all_bins_hit() const {
  for (uint64_t h : coverage)
    if (h == 0) return false;
  return true;
}

namespace {

constexpr uint64_t time_space = uint64_t{1} << cnp_time_bits;

// Traffic of one phase (between two inits); each init picks one.
enum class pattern : uint8_t {
  storm,     // one hot QPN back to back, a few others
  many,      // QPNs over four times the table: aliasing
  boundary,  // a few QPNs, each arrival timed at the edge of its context's interval
  sparse,    // mostly idle, long time jumps (across the wrap)
};

// What the bench knows of one context, from the results the block gave (for coverage only: the check is
// RTL against reference).
struct shadow_context {
  std::optional<uint32_t> last;  // time of its last CNP
  uint32_t last_qpn = 0;
};

// An accepted arrival, classified against the shadow when accepted; its result comes one cycle later.
struct pending_result {
  bool per_port = false;
  bool sent_before = false;
  uint32_t elapsed = 0;
  bool wrapped = false;
  bool other_qpn = false;
};

class bench {
 public:
  bench(uint32_t flows, uint64_t seed) : m_flows(flows), m_rng(seed), m_shadow(flows) {
    // Start just below the wrap of the time field, so the first phase already crosses it.
    m_now = time_space - uniform(1, 60000);
  }

  // Inputs for the next cycle.
  cnp_gen_inputs next(uint64_t cycle, bool last_busy) {
    cnp_gen_inputs in;
    ++m_now;  // the free-running cycle counter
    if (cycle == 0 || m_reset_left > 0) {
      in.rst_n = false;
      if (m_reset_left > 0) --m_reset_left;
      m_need_init = true;
    } else if (!m_need_init && cycle >= m_phase_end && m_reset_at_end) {
      // A short phase ending in a reset: it lands in the clear sweep of the init that started the phase.
      in.rst_n = false;
      m_reset_at_end = false;
      m_next_interval = 0;
      m_phase_end = cycle + uniform(300, 3000);
    } else if (m_need_init || cycle >= m_phase_end) {
      start_phase(cycle, in);
    } else if (cycle > 2 && chance(1.0 / 5000)) {
      in.rst_n = false;
      m_reset_left = uniform(0, 2);
      // Half the time the phase goes on in the reset state (interval 0, per-flow mode, the table swept), as
      // the contract allows: what reset leaves is then seen, not only what the next init sets.
      m_need_init = chance(0.5);
      if (!m_need_init) m_next_interval = 0;
    }
    if (!m_pending && !chance(m_idle_probability)) present(last_busy);
    in.in_valid = m_pending;
    in.in_flow = m_pending ? m_pending_flow : 0;
    in.in_now = m_pending ? m_pending_now : 0;
    return in;
  }

  // After both models stepped and agreed: the handshake, the result and the coverage of this cycle.
  void observe(uint64_t cycle, const cnp_gen_inputs& in, const cnp_gen_outputs& out,
               cnp_gen_differential_result& r) {
    auto hit = [&r](cnp_gen_bin bin) { ++r.coverage[static_cast<size_t>(bin)]; };
    if (out.res_valid && m_result) {
      const pending_result& p = *m_result;
      ++r.transactions;
      if (out.res_emit) ++r.emitted;
      if (!p.per_port && !p.sent_before && out.res_emit) hit(cnp_gen_bin::first_cnp_of_flow);
      if (p.per_port && !p.sent_before && out.res_emit) hit(cnp_gen_bin::per_port_first_cnp);
      if (p.sent_before) {
        if (!out.res_emit && !p.per_port && p.elapsed < m_interval) hit(cnp_gen_bin::suppressed_within_interval);
        if (!out.res_emit && m_interval > 0 && p.elapsed == m_interval - 1)
          hit(cnp_gen_bin::suppressed_one_before_boundary);
        if (out.res_emit && m_interval > 0 && p.elapsed == m_interval) hit(cnp_gen_bin::emitted_at_boundary);
        if (out.res_emit && p.elapsed > m_interval) hit(cnp_gen_bin::emitted_after_interval);
        if (p.wrapped) hit(cnp_gen_bin::time_wrap_crossed);
        if (!out.res_emit && !p.per_port && p.other_qpn) hit(cnp_gen_bin::flow_aliasing);
        if (!out.res_emit && p.per_port && p.other_qpn) hit(cnp_gen_bin::per_port_suppression);
        if (out.res_emit && m_interval == 0 && p.elapsed < 4) hit(cnp_gen_bin::zero_interval_back_to_back);
      }
      if (out.res_emit) {
        shadow_context& c = context(out.res_flow);
        c.last = m_result_now;
        c.last_qpn = out.res_flow;
      }
    }
    m_result.reset();

    if (!in.rst_n || in.init_valid) {
      for (auto& c : m_shadow) c = shadow_context{};
      m_port = shadow_context{};
      if (!in.rst_n) {
        m_interval = 0;
        m_per_port = false;
        if (cycle > 0 && !m_in_reset) hit(cnp_gen_bin::reset_mid_run);
      } else {
        m_interval = in.init_interval;
        m_per_port = in.init_per_port;
        if (m_inits++ > 0) hit(cnp_gen_bin::init_mid_run);
      }
    }
    m_in_reset = !in.rst_n;

    if (in.in_valid && !out.in_ready) hit(cnp_gen_bin::back_pressure_stall);
    if (!in.in_valid && in.rst_n && !in.init_valid && !out.busy && m_accepted_any) m_idle_seen = true;
    if (in.in_valid && out.in_ready) {
      m_pending = false;
      m_accepted_any = true;
      if (m_idle_seen) hit(cnp_gen_bin::idle_gap);
      m_idle_seen = false;
      const bool same = m_storm_cycle + 1 == cycle && m_storm_qpn == in.in_flow;
      m_storm_run = same ? m_storm_run + 1 : 1;
      m_storm_qpn = in.in_flow;
      m_storm_cycle = cycle;
      if (m_storm_run == 16) hit(cnp_gen_bin::storm_on_one_flow);

      const shadow_context& c = context(in.in_flow);
      pending_result p;
      p.per_port = m_per_port;
      p.sent_before = c.last.has_value();
      if (c.last) {
        p.elapsed = in.in_now - *c.last;
        p.wrapped = in.in_now < *c.last;
        p.other_qpn = c.last_qpn != in.in_flow;
      }
      m_result = p;
      m_result_now = in.in_now;
    }
  }

 private:
  bool chance(double p) { return p > 0 && std::uniform_real_distribution<double>(0, 1)(m_rng) < p; }
  uint64_t uniform(uint64_t lo, uint64_t hi) { return std::uniform_int_distribution<uint64_t>(lo, hi)(m_rng); }

  shadow_context& context(uint32_t qpn) { return m_per_port ? m_port : m_shadow[qpn & (m_flows - 1)]; }

  void start_phase(uint64_t cycle, cnp_gen_inputs& in) {
    in.init_valid = true;
    in.init_per_port = chance(0.3);
    static constexpr std::array<uint32_t, 6> fixed{0, 1, 2000, 50000, 5, 64};  // 2 us and 50 us at 1 GHz
    const uint64_t roll = uniform(0, 9);
    in.init_interval = roll < 4 ? fixed[roll] : static_cast<uint32_t>(uniform(2, roll < 8 ? 200 : 8000));
    m_next_interval = in.init_interval;
    m_pattern = static_cast<pattern>(uniform(0, 3));
    m_idle_probability = m_pattern == pattern::storm  ? 0.0
                         : m_pattern == pattern::many ? 0.3
                         : m_pattern == pattern::sparse ? 0.8
                                                        : 0.1;
    m_hot.clear();
    const uint32_t base = static_cast<uint32_t>(uniform(0, qpn_mask));
    for (uint32_t i = 0; i < 4; ++i) {
      // Hot QPNs: two pairs that share a context.
      m_hot.push_back((base + i / 2 + (i % 2) * m_flows * static_cast<uint32_t>(uniform(1, 8))) & qpn_mask);
    }
    m_phase_end = cycle + uniform(300, 3000);
    m_reset_at_end = false;
    if (chance(0.1)) {
      // Now and then a phase shorter than the clear sweep: the next init or a reset comes in the middle of it.
      m_phase_end = cycle + uniform(2, m_flows);
      m_reset_at_end = chance(0.5);
    }
    m_need_init = false;
    // Sometimes move time to just below the next wrap of the time field, sometimes to just past it (a first
    // arrival whose time is below the interval).
    if (chance(0.25)) {
      m_now += (time_space - (m_now % time_space)) - uniform(1, uint64_t{m_next_interval} + 100);
    } else if (chance(0.1)) {
      m_now += (time_space - (m_now % time_space)) + uniform(0, m_next_interval);
    }
  }

  // Picks the next arrival: a QPN and its arrival time (this cycle, after any idle time jump).
  void present(bool last_busy) {
    uint32_t qpn = 0;
    switch (m_pattern) {
      case pattern::storm:
        qpn = chance(0.9) ? m_hot[0] : m_hot[uniform(1, 3)];
        break;
      case pattern::many:
        qpn = static_cast<uint32_t>(uniform(0, 4 * uint64_t{m_flows} - 1));
        break;
      case pattern::boundary:
      case pattern::sparse:
        qpn = m_hot[uniform(0, 3)];
        break;
    }
    if (m_pattern == pattern::sparse && chance(0.3)) {
      // A long quiet period: up to a few intervals, now and then up to half the time field.
      const uint64_t span = chance(0.1) ? time_space / 2 : 4 * uint64_t{m_next_interval} + 100;
      m_now += uniform(1, span);
    }
    if (m_pattern == pattern::boundary && !last_busy) {
      // Time the arrival at the edge of its context's interval, if that lies ahead.
      const shadow_context& c = context(qpn);
      if (c.last) {
        const uint32_t now32 = static_cast<uint32_t>(m_now);
        const uint32_t elapsed = now32 - *c.last;
        const uint32_t target = static_cast<uint32_t>(m_next_interval - uniform(0, 1));
        if (m_next_interval > 0 && elapsed < target) m_now += target - elapsed;
      }
    }
    m_pending = true;
    m_pending_flow = qpn;
    m_pending_now = static_cast<uint32_t>(m_now);
  }

  uint32_t m_flows;
  std::mt19937_64 m_rng;
  uint64_t m_now = 0;  // the cycle counter, 64 bits here; the block sees its low 32
  uint32_t m_reset_left = 0;
  bool m_need_init = true;
  uint64_t m_phase_end = 0;
  bool m_reset_at_end = false;  // the phase ends in a reset (the phase after it runs without an init)
  pattern m_pattern = pattern::many;
  double m_idle_probability = 0.3;
  uint32_t m_next_interval = 0;  // the interval of the current phase, for the stimulus
  std::vector<uint32_t> m_hot{0, 0, 0, 0};
  bool m_pending = false;
  uint32_t m_pending_flow = 0;
  uint32_t m_pending_now = 0;

  // Coverage state.
  std::vector<shadow_context> m_shadow;
  shadow_context m_port;
  uint32_t m_interval = 0;
  bool m_per_port = false;
  std::optional<pending_result> m_result;
  uint32_t m_result_now = 0;
  uint64_t m_inits = 0;
  bool m_in_reset = true;
  bool m_accepted_any = false;
  bool m_idle_seen = false;
  uint32_t m_storm_qpn = 0;
  uint64_t m_storm_cycle = 0;
  uint32_t m_storm_run = 0;
};

std::string describe(const char* what, uint64_t seed, const cnp_gen_inputs& in, const cnp_gen_outputs& rtl,
                     const cnp_gen_outputs& ref) {
  return std::string(what) + " (seed " + std::to_string(seed) + ")\n" + describe_difference(ref, rtl) +
         "  inputs   " + to_string(in) + "\n  expected " + to_string(ref) + " (ref)\n  got      " + to_string(rtl) +
         " (rtl)";
}

}  // namespace

cnp_gen_differential_result run_cnp_gen_differential(uint32_t flows, uint64_t cycles, uint64_t seed,
                                                     const std::string& wave, uint32_t mutant) {
  cnp_gen_rtl rtl(flows, wave, mutant);  // closes the waveform when destroyed: it ends at a mismatch
  return run_cnp_gen_differential(rtl, cycles, seed);
}

cnp_gen_differential_result run_cnp_gen_differential(cnp_gen_cycle_model& rtl, uint64_t cycles, uint64_t seed) {
  cnp_gen_differential_result r;
  r.seed = seed;
  const uint32_t flows = rtl.flows();
  cnp_gen_ref ref(flows);
  bench b(flows, seed);
  bool last_busy = true;
  auto fail = [&](uint64_t cycle, std::string what) {
    r.matched = false;
    r.mismatch_cycle = cycle;
    r.mismatch = std::move(what);
    return r;
  };
  for (uint64_t cycle = 0; cycle < cycles; ++cycle) {
    const cnp_gen_inputs in = b.next(cycle, last_busy);
    const cnp_gen_outputs rtl_out = rtl.step(in);
    const cnp_gen_outputs ref_out = ref.step(in);
    r.cycles = cycle + 1;
    if (rtl_out != ref_out) return fail(cycle, describe("outputs differ", seed, in, rtl_out, ref_out));
    // peek() after the edge: both kinds agree (in_ready is combinational on init and reset, so it is left out
    // while those are applied).
    cnp_gen_outputs rtl_peek = rtl.peek(), ref_peek = ref.peek();
    if (in.init_valid || !in.rst_n) rtl_peek.in_ready = ref_peek.in_ready;
    if (rtl_peek != ref_peek) return fail(cycle, describe("peek() after the edge differs", seed, in, rtl_peek, ref_peek));
    b.observe(cycle, in, rtl_out, r);
    last_busy = rtl_out.busy;
  }
  return r;
}

}  // namespace fabricsim::nic
