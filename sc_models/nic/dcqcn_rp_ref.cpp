// DCQCN reaction point of a RoCEv2 NIC: C++ reference model (specification in dcqcn_rp.h).
#include "sc_models/nic/dcqcn_rp_ref.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace fabricsim::nic {
namespace {

constexpr uint32_t alpha_one = 1u << dcqcn_widths::alpha;                // 1.0 in Q0.16
constexpr uint32_t count_max = (1u << dcqcn_widths::count) - 1;          // counters saturate here

// Time is modular: a is at or before b when b - a, read as signed, is not negative.
bool at_or_before(uint64_t a, uint64_t b) { return static_cast<int64_t>(b - a) >= 0; }

uint32_t saturating_increment(uint32_t count) { return std::min(count + 1, count_max); }

}  // namespace

void dcqcn_rp_ref::reset(const dcqcn_params& params, uint64_t now_cycles) {
  m_cfg = dcqcn_encode(params);
  m_now = now_cycles;
  m_rate = m_target = m_cfg.line_rate_kbps;
  m_alpha = m_cfg.initial_alpha_q16;
  m_alpha_armed = m_alpha != 0;
  m_alpha_deadline = now_cycles + m_cfg.alpha_period;
  m_increase_armed = false;  // at line rate there is nothing to recover
  m_increase_deadline = 0;
  m_timer_count = m_byte_count = m_byte_acc = 0;
  m_last_cut = now_cycles - m_cfg.monitor_period;  // the first CNP always cuts
  m_events = 0;
  m_last_cycles = 1;  // an init is done at its accepting edge
  publish();
}

void dcqcn_rp_ref::begin(uint64_t now) {
  if (!at_or_before(m_now, now))
    throw std::invalid_argument("dcqcn_rp_ref: time went backwards from cycle " + std::to_string(m_now) + " to " +
                                std::to_string(now));
  m_now = now;
  m_events = 0;
  m_last_cycles = 2;  // the accepting edge and the edge that applies the request; one more per timer fired
  for (;;) {
    const bool alpha_due = m_alpha_armed && at_or_before(m_alpha_deadline, now);
    const bool increase_due = m_increase_armed && at_or_before(m_increase_deadline, now);
    if (alpha_due && (!increase_due || at_or_before(m_alpha_deadline, m_increase_deadline))) {
      // No CNP for a whole alpha period: alpha <- (1 - g) alpha, rounded down.
      m_alpha = static_cast<uint32_t>((uint64_t{m_alpha} * m_cfg.alpha_keep_q10) >> 10);
      m_alpha_armed = m_alpha != 0;
      m_alpha_deadline += m_cfg.alpha_period;
      m_events |= dcqcn_ev_alpha_decay;
      ++m_last_cycles;
    } else if (increase_due) {
      m_timer_count = saturating_increment(m_timer_count);
      m_events |= dcqcn_ev_timer;
      increase_event();
      m_increase_deadline += m_cfg.increase_period;
      ++m_last_cycles;
    } else {
      break;
    }
  }
}

void dcqcn_rp_ref::increase_event() {
  const uint32_t most = std::max(m_timer_count, m_byte_count);
  const uint32_t least = std::min(m_timer_count, m_byte_count);
  if (most <= m_cfg.threshold) {
    m_events |= dcqcn_ev_fast_recovery;  // target stays: current climbs half-way back to it
  } else {
    const bool hyper = least > m_cfg.threshold;
    m_events |= hyper ? dcqcn_ev_hyper : dcqcn_ev_additive;
    const uint64_t raised = uint64_t{m_target} + (hyper ? m_cfg.hai_rate_kbps : m_cfg.ai_rate_kbps);
    m_target = static_cast<uint32_t>(std::min<uint64_t>(raised, m_cfg.line_rate_kbps));
  }
  m_rate = static_cast<uint32_t>((uint64_t{m_target} + m_rate + 1) / 2);  // rounded up: reaches the target
  m_increase_armed = m_rate != m_cfg.line_rate_kbps;
}

void dcqcn_rp_ref::cnp(uint64_t now_cycles) {
  begin(now_cycles);
  if (now_cycles - m_last_cut >= m_cfg.monitor_period) {
    // current * (1 - alpha / 2^(gd-10)), alpha in 1024ths: the cut is current * alpha_q16 / 2^cut_shift.
    const uint64_t cut = (uint64_t{m_rate} * m_alpha) >> m_cfg.cut_shift;
    uint64_t rate = m_rate - cut;
    const uint64_t keep = (uint64_t{m_rate} * m_cfg.min_dec_q10) >> 10;  // rpg_min_dec_fac of current
    if (rate < keep) {
      rate = keep;
      m_events |= dcqcn_ev_min_dec_clamp;
    }
    if (rate < m_cfg.min_rate_kbps) {
      rate = m_cfg.min_rate_kbps;
      m_events |= dcqcn_ev_min_rate_clamp;
    }
    m_target = m_rate;
    m_rate = static_cast<uint32_t>(rate);  // at most the old rate: min_rate <= rate always
    m_timer_count = m_byte_count = m_byte_acc = 0;
    m_increase_armed = m_rate != m_cfg.line_rate_kbps;
    m_increase_deadline = now_cycles + m_cfg.increase_period;
    m_last_cut = now_cycles;
    m_events |= dcqcn_ev_cut;
  } else {
    m_events |= dcqcn_ev_cnp_suppressed;
  }
  // alpha <- (1 - g) alpha + g, rounded down; stays below 1.0 (and above 0, so the timer re-arms).
  m_alpha = static_cast<uint32_t>(
      (uint64_t{m_alpha} * m_cfg.alpha_keep_q10 + uint64_t{1024 - m_cfg.alpha_keep_q10} * alpha_one) >> 10);
  m_alpha_armed = true;
  m_alpha_deadline = now_cycles + m_cfg.alpha_period;
  publish();
}

void dcqcn_rp_ref::sent(uint32_t bytes, uint64_t now_cycles) {
  if (bytes > dcqcn_max_sent_bytes)
    throw std::invalid_argument("dcqcn_rp_ref: sent(" + std::to_string(bytes) + ") exceeds " +
                                std::to_string(dcqcn_max_sent_bytes) + " bytes per call");
  begin(now_cycles);
  const uint64_t total = uint64_t{m_byte_acc} + bytes;
  if (total >= m_cfg.byte_reset) {
    m_byte_count = saturating_increment(m_byte_count);
    m_events |= dcqcn_ev_byte;
    increase_event();
    m_byte_acc = static_cast<uint32_t>(std::min<uint64_t>(total - m_cfg.byte_reset, m_cfg.byte_reset - 1));
  } else {
    m_byte_acc = static_cast<uint32_t>(total);
  }
  publish();
}

void dcqcn_rp_ref::advance(uint64_t now_cycles) {
  begin(now_cycles);
  publish();
}

void dcqcn_rp_ref::publish() {
  m_out.rate_kbps = m_rate;
  m_out.target_kbps = m_target;
  m_out.alpha_q16 = m_alpha;
  if (m_alpha_armed && m_increase_armed)
    m_out.next_deadline =
        at_or_before(m_alpha_deadline, m_increase_deadline) ? m_alpha_deadline : m_increase_deadline;
  else if (m_alpha_armed)
    m_out.next_deadline = m_alpha_deadline;
  else if (m_increase_armed)
    m_out.next_deadline = m_increase_deadline;
  else
    m_out.next_deadline = dcqcn_never;
  m_out.timer_count = m_timer_count;
  m_out.byte_count = m_byte_count;
  m_out.events = m_events;
}

}  // namespace fabricsim::nic
