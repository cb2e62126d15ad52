// The differential bench of the DCQCN reaction point: RTL against reference, every output every transaction.
#include "sc_models/nic/dcqcn_rp_differential.h"

#include <algorithm>
#include <array>
#include <random>

#include "sc_models/core/params.h"
#include "sc_models/nic/dcqcn_rp.h"
#include "sc_models/nic/dcqcn_rp_ref.h"
#include "sc_models/nic/dcqcn_rp_rtl.h"

namespace fabricsim::nic {
namespace {

// Coverage bins; dcqcn_rp_coverage_bins() names them in this order.
enum bin : size_t {
  bin_cut,
  bin_cnp_suppressed,
  bin_rate_at_floor,
  bin_recovered_to_line_rate,
  bin_fast_recovery,
  bin_additive_increase,
  bin_hyper_increase,
  bin_alpha_decay,
  bin_alpha_decayed_to_zero,
  bin_timer_event,
  bin_byte_event,
  bin_byte_and_timer_in_one_transaction,
  bin_min_dec_clamp,
  bin_min_rate_clamp,
  bin_cnp_at_line_rate,
  bin_cnp_at_floor,
  bin_cnp_before_recovery,
  bin_cnp_in_fast_recovery,
  bin_cnp_in_additive_increase,
  bin_cnp_in_hyper_increase,
  bin_cnp_as_timer_expires,
  bin_sent_as_timer_expires,
  bin_many_timers_in_one_transaction,
  bin_counter_saturated,
  bin_reset_mid_run,
  bin_rst_during_request,
  bin_count
};

const std::vector<std::string> bin_names{
    "cut",
    "cnp_suppressed",
    "rate_at_floor",
    "recovered_to_line_rate",
    "fast_recovery",
    "additive_increase",
    "hyper_increase",
    "alpha_decay",
    "alpha_decayed_to_zero",
    "timer_event",
    "byte_event",
    "byte_and_timer_in_one_transaction",
    "min_dec_clamp",
    "min_rate_clamp",
    "cnp_at_line_rate",
    "cnp_at_floor",
    "cnp_before_recovery",
    "cnp_in_fast_recovery",
    "cnp_in_additive_increase",
    "cnp_in_hyper_increase",
    "cnp_as_timer_expires",
    "sent_as_timer_expires",
    "many_timers_in_one_transaction",
    "counter_saturated",
    "reset_mid_run",
    "rst_during_request",
};

// idle: one clock with no request; rst_pulse: rst_ni low for a clock, then an idle clock; rst_in_request: an
// advance to `now` cut by rst_ni after two busy clocks, then an idle clock (all three RTL only).
enum class op { reset, cnp, sent, advance, idle, rst_pulse, rst_in_request };

struct transaction {
  op kind = op::advance;
  uint64_t now = 0;
  uint32_t bytes = 0;
  dcqcn_params params;  // op::reset
};

std::string describe(const transaction& t) {
  switch (t.kind) {
    case op::reset: return "reset at cycle " + std::to_string(t.now);
    case op::cnp: return "cnp at cycle " + std::to_string(t.now);
    case op::sent: return "sent " + std::to_string(t.bytes) + " bytes at cycle " + std::to_string(t.now);
    case op::advance: return "advance to cycle " + std::to_string(t.now);
    case op::idle:
      return "a clock with no request after cycle " + std::to_string(t.now);
    case op::rst_pulse:
      return "rst_ni pulsed after cycle " + std::to_string(t.now);
    case op::rst_in_request:
      return "rst_ni pulsed during an advance to cycle " + std::to_string(t.now);
  }
  return "?";
}

std::string describe(const dcqcn_params& p) {
  struct lister : core::param_visitor {
    std::string text;
    void field(const core::field_info& f, uint64_t& v) override {
      text += std::string(text.empty() ? "" : " ") + f.name + "=" + std::to_string(v);
    }
    void field(const core::field_info&, double&) override {}
    void field(const core::field_info&, bool&) override {}
    void field(const core::field_info&, std::string&) override {}
  } l;
  dcqcn_params copy = p;
  copy.visit(l);
  return l.text;
}

// Seeded constrained-random transactions. Bursts of one mode at a time, each aimed at a corner of the
// state machine; parameter sets change every few hundred to few thousand transactions.
class dcqcn_stimulus {
 public:
  dcqcn_stimulus(uint64_t seed, std::string preset) : m_rng(seed), m_preset(std::move(preset)) {}

  transaction next(const dcqcn_outputs& out) {
    transaction t;
    if (m_left_in_segment == 0) {
      m_left_in_segment = uniform(300, 3000);
      t.kind = op::reset;
      t.now = m_now += uniform(0, 1000);
      t.params = pick_params();
      m_params = t.params;
      m_cfg = dcqcn_encode(m_params);
      return t;
    }
    --m_left_in_segment;
    if (m_left_in_burst == 0) {
      m_left_in_burst = uniform(5, 120);
      const uint32_t roll = uniform(0, 99);
      m_mode = roll < 30 ? mode::traffic : roll < 50 ? mode::storm : roll < 60 ? mode::idle
             : roll < 75 ? mode::race : roll < 92 ? mode::nic_loop : mode::bulk;
      // A long clean transfer: enough bytes for several byte-counter events even at 10 MiB each.
      if (m_mode == mode::bulk) m_left_in_burst = uniform(200, 2500);
    }
    --m_left_in_burst;
    switch (m_mode) {
      case mode::traffic:
        if (chance(0.03)) {
          t.kind = op::cnp;
          t.now = m_now += uniform(0, 100);
        } else {
          t.kind = op::sent;
          t.bytes = pick_bytes();
          t.now = m_now += wire_cycles(t.bytes, out.rate_kbps) + uniform(0, 3);
        }
        break;
      case mode::bulk:
        t.kind = op::sent;
        t.bytes = dcqcn_max_sent_bytes;
        t.now = m_now += wire_cycles(t.bytes, out.rate_kbps);
        break;
      case mode::storm: {
        // CNPs around the monitor period, so some cut and some are suppressed; a few frames in between.
        const uint64_t spread = 2 * uint64_t{m_cfg.monitor_period} + m_cfg.alpha_period / 4 + 2;
        t.now = m_now += uniform(0, spread);
        if (chance(0.75)) {
          t.kind = op::cnp;
        } else {
          t.kind = op::sent;
          t.bytes = pick_bytes();
        }
        break;
      }
      case mode::idle: {
        const uint64_t period = std::max(m_cfg.alpha_period, m_cfg.increase_period);
        const uint64_t periods = chance(0.05) ? uniform(30, 200) : uniform(1, 30);
        t.kind = op::advance;
        t.now = m_now += periods * period + uniform(0, period);
        break;
      }
      case mode::race:
      case mode::nic_loop: {
        if (out.next_deadline == dcqcn_never) {
          t.kind = op::sent;
          t.bytes = pick_bytes();
          t.now = m_now += wire_cycles(t.bytes, out.rate_kbps);
          break;
        }
        // The NIC's loop: one timed event at the deadline. The race: a CNP or a frame in that very cycle,
        // or one cycle either side of it.
        uint64_t at = out.next_deadline;
        if (m_mode == mode::race) {
          const uint32_t roll = uniform(0, 9);
          if (roll == 0 && at > m_now) --at;
          if (roll == 1) ++at;
          const uint32_t what = uniform(0, 2);
          t.kind = what == 0 ? op::cnp : what == 1 ? op::sent : op::advance;
        } else {
          t.kind = chance(0.8) ? op::advance : op::sent;
        }
        if (t.kind == op::sent) t.bytes = pick_bytes();
        t.now = m_now = std::max(m_now, at);
        break;
      }
    }
    return t;
  }

 private:
  enum class mode { traffic, storm, idle, race, nic_loop, bulk };

  bool chance(double p) { return std::uniform_real_distribution<double>(0, 1)(m_rng) < p; }
  uint64_t uniform(uint64_t lo, uint64_t hi) { return std::uniform_int_distribution<uint64_t>(lo, hi)(m_rng); }
  template <class T, size_t N>
  T pick(const std::array<T, N>& values) {
    return values[uniform(0, N - 1)];
  }

  // Time the frame takes on the wire at the current rate, in cycles.
  uint64_t wire_cycles(uint32_t bytes, uint32_t rate_kbps) const {
    return uint64_t{bytes} * 8 * m_params.clock_mhz * 1000 / std::max<uint32_t>(rate_kbps, 1);
  }

  uint32_t pick_bytes() {
    if (chance(0.05)) return static_cast<uint32_t>(uniform(1, dcqcn_max_sent_bytes));
    return pick(std::array<uint32_t, 6>{64, 1086, 4178, 4178, 4194, 2048}) - static_cast<uint32_t>(uniform(0, 16));
  }

  dcqcn_params pick_params() {
    std::string which = m_preset;
    if (which == "mixed") {
      const uint64_t roll = m_sets++ % 4;
      which = roll == 0 ? "paper" : roll == 1 ? "nvidia" : "random";
    }
    if (which != "random") return dcqcn_preset(which);
    // Random but legal: short timers in cycles (a slow clock) and steps large enough against the line rate
    // that a flow can climb back to line rate within a segment.
    dcqcn_params p;
    p.clock_mhz = pick(std::array<uint64_t, 4>{1, 2, 10, 100});
    p.line_rate_mbps = pick(std::array<uint64_t, 6>{100, 1000, 25000, 100000, 400000, 800000});
    p.rpg_min_rate_mbps = std::max<uint64_t>(1, p.line_rate_mbps / pick(std::array<uint64_t, 4>{4, 100, 10000, 1000000}));
    p.rpg_hai_rate_mbps = std::max<uint64_t>(1, p.line_rate_mbps / uniform(4, 400));
    p.rpg_ai_rate_mbps = p.rpg_hai_rate_mbps / uniform(1, 20);
    p.rpg_time_reset_us = uniform(1, 400);
    p.dce_tcp_rtt_us = uniform(1, 100);
    p.rate_reduce_monitor_period_us = chance(0.3) ? 0 : uniform(1, 60);
    p.rpg_byte_reset = pick(std::array<uint64_t, 6>{64, 1000, 4096, 32767, 150000, 1 << 20});
    p.rpg_threshold = uniform(0, 8);
    p.rpg_gd = uniform(10, 15);
    p.rpg_min_dec_fac = uniform(0, 100);
    p.dce_tcp_g = chance(0.8) ? uniform(960, 1023) : uniform(0, 1023);
    p.initial_alpha = chance(0.1) ? 0 : uniform(0, 1023);
    return p;
  }

  std::mt19937_64 m_rng;
  std::string m_preset;
  uint64_t m_sets = 0;
  dcqcn_params m_params;
  dcqcn_config m_cfg;
  uint64_t m_now = 0;
  uint64_t m_left_in_segment = 0;
  uint64_t m_left_in_burst = 0;
  mode m_mode = mode::traffic;
};

// After the random run, corners it draws too rarely, each an exact coincidence (docs/verification.md lists
// the mutants they kill): a cut landing exactly on the rpg_min_dec_fac floor and on rpg_min_rate, a sent()
// reaching the byte threshold exactly and one of more than twice it, an init with initial alpha 0, a CNP one
// monitor period and one cycle after an init, one cycle after a cut and an init, and 2^32 - 1 cycles after an
// init; and clocks with no request, where the handshake rules must hold.
std::vector<transaction> directed_transactions(uint64_t now) {
  std::vector<transaction> out;
  auto add = [&](op kind, uint64_t dt, uint32_t bytes = 0, const dcqcn_params& params = {}) {
    transaction t;
    t.kind = kind;
    t.now = now += dt;
    t.bytes = bytes;
    t.params = params;
    out.push_back(t);
  };
  // Line rate 8192000 kb/s = 125 * 2^16, alpha 32768 (initial_alpha 512), cut shift 16 (rpg_gd 10): the cut
  // leaves 8192000 - 8192000 * 32768 / 2^16 = 4096000 kb/s, which is both the 50 % floor (512 / 1024) and the
  // minimum rate: neither clamp applies (each needs the cut strictly below it).
  dcqcn_params floor;
  floor.clock_mhz = 10;
  floor.line_rate_mbps = 8192;
  floor.rpg_gd = 10;
  floor.rpg_min_dec_fac = 50;
  floor.rpg_min_rate_mbps = 4096;
  floor.initial_alpha = 512;
  floor.rate_reduce_monitor_period_us = 10;  // 100 cycles
  add(op::reset, 1, 0, floor);
  add(op::cnp, 0);
  // A rate timer event (rpg_time_reset 300 us: 3000 cycles) and then rst_ni: every output must go to 0.
  add(op::advance, 3000);
  add(op::rst_pulse, 0);
  // The byte threshold (1000 bytes) reached exactly, then crossed twice over in one sent() (the remainder is
  // clamped to 999), then the bytes that tell a remainder of 999 from 1000 or 1001.
  dcqcn_params bytes = floor;
  bytes.rpg_byte_reset = 1000;
  add(op::reset, 1, 0, bytes);
  for (uint32_t n : {1000u, 2000u, 1u, 999u, 2500u, 1u, 998u, 1u, 999u}) add(op::sent, 1, n);
  add(op::rst_pulse, 0);  // with byte events counted
  // An init with initial alpha 0: the alpha timer stays disarmed.
  dcqcn_params no_alpha = floor;
  no_alpha.initial_alpha = 0;
  add(op::reset, 1, 0, no_alpha);
  add(op::advance, 1);
  // A cut, an init the next cycle and a CNP the cycle after (the init forgets the cut: it cuts again); then
  // an init and a CNP one monitor period and a cycle later (cut: the init set the last cut a period back).
  add(op::reset, 1, 0, floor);
  add(op::cnp, 1);
  add(op::reset, 1, 0, floor);
  add(op::cnp, 1);
  add(op::reset, 1, 0, floor);
  add(op::cnp, 101);
  // A CNP 2^32 - 1 cycles after an init (initial alpha 0: no timer is armed, so nothing fires between): the
  // last cut the init set, a monitor period back, is 2^32 - 1 + 100 cycles old, so it cuts; a last cut set with
  // the period's upper TimeW - PeriodW bits wrong would be 99 cycles old.
  add(op::reset, 1, 0, no_alpha);
  add(op::cnp, (uint64_t{1} << 32) - 1);
  // Clocks with no request, after each kind of request (the contract: nothing is taken, no response follows).
  add(op::reset, 1, 0, floor);
  add(op::idle, 0);
  for (op kind : {op::cnp, op::sent, op::advance}) {
    add(kind, 1, 1);
    add(op::idle, 0);
  }
  // rst_ni during a request: an advance 100000 cycles after an init finds 10000 alpha decays due (10-cycle
  // period), so the block is busy when rst_ni falls two clocks in; every output, busy_o included, must be 0
  // then and a clock later, and the init and CNP after it must be taken as after any reset.
  add(op::reset, 1, 0, floor);
  add(op::rst_in_request, 100000);
  add(op::reset, 1, 0, floor);
  add(op::cnp, 1);
  return out;
}

void apply(dcqcn_rate_engine& engine, const transaction& t) {
  switch (t.kind) {
    case op::reset: engine.reset(t.params, t.now); break;
    case op::cnp: engine.cnp(t.now); break;
    case op::sent: engine.sent(t.bytes, t.now); break;
    case op::advance: engine.advance(t.now); break;
    case op::idle:
    case op::rst_pulse:
    case op::rst_in_request:
      break;  // the reference has no clock and no reset pin
  }
}

// The RTL-only transactions: a clock with no request, a reset pulse, a reset during a request. True when a
// reset cut a request in flight.
bool apply_pins(dcqcn_rp_rtl& rtl, const transaction& t) {
  if (t.kind == op::idle) rtl.idle_cycle();
  if (t.kind == op::rst_pulse) rtl.reset_pulse();
  return t.kind == op::rst_in_request && rtl.reset_during_request(t.now, 2);
}

// A port rule of the contract the RTL broke (handshake, reset state), as the mismatch.
bool port_rule_broken(const dcqcn_rp_rtl& rtl, dcqcn_rp_differential_result& r) {
  const dcqcn_rp_rtl::handshake_violation& broken = rtl.violation();
  if (broken.signal.empty()) return false;
  r.mismatch_signal = broken.signal;
  r.expected = broken.expected;
  r.got = broken.got;
  return true;
}

// The first output that differs: its name, expected (reference) and got (RTL).
bool first_difference(const dcqcn_outputs& ref, const dcqcn_outputs& rtl, dcqcn_rp_differential_result& r) {
  auto check = [&](const char* name, uint64_t expected, uint64_t got) {
    if (expected == got) return false;
    r.mismatch_signal = name;
    r.expected = std::to_string(expected);
    r.got = std::to_string(got);
    return true;
  };
  return check("rate_o (kb/s)", ref.rate_kbps, rtl.rate_kbps) ||
         check("target_o (kb/s)", ref.target_kbps, rtl.target_kbps) ||
         check("alpha_o (Q0.16)", ref.alpha_q16, rtl.alpha_q16) ||
         check("deadline_o (cycles; 18446744073709551615: none)", ref.next_deadline, rtl.next_deadline) ||
         check("timer_count_o", ref.timer_count, rtl.timer_count) ||
         check("byte_count_o", ref.byte_count, rtl.byte_count) || check("events_o", ref.events, rtl.events);
}

// The transaction, the parameters and both engines' outputs, for the mismatch report.
std::string describe_mismatch(const transaction& t, uint64_t seed, uint64_t number, const dcqcn_params& params,
                              const dcqcn_outputs& before, const dcqcn_rate_engine& ref, const dcqcn_rate_engine& rtl) {
  return describe(t) + " (seed " + std::to_string(seed) + ", transaction " + std::to_string(number) +
         ")\n  parameters " + describe(params) + "\n  before     " + to_string(before) + "\n  ref        " +
         to_string(ref.outputs()) + ", cycles " + std::to_string(ref.last_cycles()) + "\n  rtl        " +
         to_string(rtl.outputs()) + ", cycles " + std::to_string(rtl.last_cycles());
}

}  // namespace

const std::vector<std::string>& dcqcn_rp_coverage_bins() { return bin_names; }

dcqcn_rp_differential_result run_dcqcn_rp_differential(const dcqcn_rp_differential_options& options) {
  const uint32_t mutant = options.mutant;
  return run_dcqcn_rp_differential(options,
                                   [mutant](const dcqcn_params& params, uint64_t now, const std::string& wave) {
                                     return std::make_unique<dcqcn_rp_rtl>(params, now, wave, mutant);
                                   });
}

dcqcn_rp_differential_result run_dcqcn_rp_differential(const dcqcn_rp_differential_options& options,
                                                       const dcqcn_rp_dut_factory& make) {
  const std::string& preset = options.preset;
  if (preset != "mixed" && preset != "random" && preset != "paper" && preset != "nvidia" && preset != "fabric_400g")
    throw core::config_error("dcqcn_rp bench preset: '" + preset +
                             "' is not known; known: paper, nvidia, fabric_400g, random, mixed");
  dcqcn_rp_differential_result r;
  std::array<uint64_t, bin_count> hits{};
  dcqcn_stimulus stimulus(options.seed, preset);
  // The first transaction is always a reset with the segment's parameters; build both engines from it.
  const transaction first = stimulus.next(dcqcn_outputs{});
  const std::unique_ptr<dcqcn_rp_rtl> dut = make(first.params, first.now, options.wave);  // closes the waveform
  dcqcn_rp_rtl& rtl = *dut;
  dcqcn_rp_ref ref(first.params, first.now);
  r.parameter_sets = 1;
  r.transactions = 1;
  const uint64_t start = first.now;
  uint64_t now = first.now;

  dcqcn_params params = first.params;  // the parameter set in force, for the report and the coverage
  dcqcn_config c = dcqcn_encode(params);
  std::vector<transaction> directed;  // once the random run is over
  size_t next_directed = 0;
  for (;;) {
    const dcqcn_outputs before = ref.outputs();
    const bool random = rtl.total_cycles() < options.cycles;
    if (options.transactions != 0 && r.transactions >= options.transactions) break;
    if (!random && directed.empty()) directed = directed_transactions(now);
    if (!random && next_directed == directed.size()) break;
    const transaction t = random ? stimulus.next(before) : directed[next_directed++];
    if (t.kind == op::reset) {
      params = t.params;
      c = dcqcn_encode(params);
    }
    apply(ref, t);
    apply(rtl, t);
    const bool request_cut = apply_pins(rtl, t);
    ++r.transactions;
    now = t.now;
    const dcqcn_outputs& out = ref.outputs();
    const bool cycles_differ = rtl.last_cycles() != ref.last_cycles();
    if (cycles_differ) {
      r.mismatch_signal = "cycles to rsp_valid_o";
      r.expected = std::to_string(ref.last_cycles());
      r.got = std::to_string(rtl.last_cycles());
    }
    if (cycles_differ || port_rule_broken(rtl, r) || first_difference(out, rtl.outputs(), r)) {
      r.matched = false;
      r.mismatch_cycle = t.now;
      r.mismatch = describe_mismatch(t, options.seed, r.transactions, params, before, ref, rtl);
      break;
    }

    hits[bin_rst_during_request] += request_cut ? 1 : 0;
    if (t.kind == op::idle || t.kind == op::rst_pulse || t.kind == op::rst_in_request) continue;  // no outputs
    // Coverage, from the agreed outputs and the state before the transaction.
    const uint32_t ev = out.events;
    auto hit = [&](bin b, bool cond) { hits[b] += cond ? 1 : 0; };
    if (t.kind == op::reset) {
      ++r.parameter_sets;
      ++hits[bin_reset_mid_run];
      continue;
    }
    const bool increased = ev & (dcqcn_ev_fast_recovery | dcqcn_ev_additive | dcqcn_ev_hyper);
    hit(bin_cut, ev & dcqcn_ev_cut);
    hit(bin_cnp_suppressed, ev & dcqcn_ev_cnp_suppressed);
    hit(bin_rate_at_floor, out.rate_kbps == c.min_rate_kbps && before.rate_kbps != c.min_rate_kbps);
    hit(bin_recovered_to_line_rate, increased && out.rate_kbps == c.line_rate_kbps &&
                                        before.rate_kbps != c.line_rate_kbps);
    hit(bin_fast_recovery, ev & dcqcn_ev_fast_recovery);
    hit(bin_additive_increase, ev & dcqcn_ev_additive);
    hit(bin_hyper_increase, ev & dcqcn_ev_hyper);
    hit(bin_alpha_decay, ev & dcqcn_ev_alpha_decay);
    hit(bin_alpha_decayed_to_zero, (ev & dcqcn_ev_alpha_decay) && out.alpha_q16 == 0);
    hit(bin_timer_event, ev & dcqcn_ev_timer);
    hit(bin_byte_event, ev & dcqcn_ev_byte);
    hit(bin_byte_and_timer_in_one_transaction, (ev & dcqcn_ev_byte) && (ev & dcqcn_ev_timer));
    hit(bin_min_dec_clamp, ev & dcqcn_ev_min_dec_clamp);
    hit(bin_min_rate_clamp, ev & dcqcn_ev_min_rate_clamp);
    if (t.kind == op::cnp && (ev & dcqcn_ev_cut)) {
      const uint32_t most = std::max(before.timer_count, before.byte_count);
      const uint32_t least = std::min(before.timer_count, before.byte_count);
      hit(bin_cnp_at_line_rate, before.rate_kbps == c.line_rate_kbps);
      hit(bin_cnp_at_floor, before.rate_kbps == c.min_rate_kbps);
      hit(bin_cnp_before_recovery, most == 0);
      hit(bin_cnp_in_fast_recovery, most > 0 && most <= c.threshold);
      hit(bin_cnp_in_hyper_increase, least > c.threshold);
      hit(bin_cnp_in_additive_increase, most > c.threshold && least <= c.threshold);
    }
    hit(bin_cnp_as_timer_expires, t.kind == op::cnp && t.now == before.next_deadline);
    hit(bin_sent_as_timer_expires, t.kind == op::sent && t.now == before.next_deadline);
    hit(bin_many_timers_in_one_transaction, rtl.last_cycles() >= 10);
    hit(bin_counter_saturated,
        increased && std::max(out.timer_count, out.byte_count) == (1u << dcqcn_widths::count) - 1);
  }
  r.rtl_cycles = rtl.total_cycles();
  r.simulated_cycles = now - start;
  for (size_t b = 0; b < bin_count; ++b) r.coverage.emplace_back(bin_names[b], hits[b]);
  return r;
}

}  // namespace fabricsim::nic
