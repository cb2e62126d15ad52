// Receiver PSN reorder tracker of a RoCEv2 NIC: C++ reference model.
#include "sc_models/nic/reorder_tracker_ref.h"

#include <algorithm>
#include <string>

#include "sc_models/core/params.h"

namespace fabricsim::nic {

namespace {
constexpr uint32_t half_psn_space = 1u << (psn_bits - 1);  // PSNs at or beyond this distance lie behind
}  // namespace

reorder_tracker_ref::reorder_tracker_ref(uint32_t window) : m_window(window), m_received(window, false) {
  const bool power_of_two = window != 0 && (window & (window - 1)) == 0;
  core::require(power_of_two && window >= 16 && window <= 4096, "reorder_tracker_ref",
                "window " + std::to_string(window) + " must be a power of two in 16..4096");
  clear(0);
}

void reorder_tracker_ref::clear(uint32_t head) {
  m_expected = head & psn_mask;
  std::fill(m_received.begin(), m_received.end(), false);
  m_shown_head = m_expected;
  m_retire_left = 0;
}

psn_verdict reorder_tracker_ref::resolve(uint32_t psn, uint32_t& retired) {
  psn &= psn_mask;
  retired = 0;
  const uint32_t d = (psn - m_expected) & psn_mask;
  if (d >= half_psn_space) return psn_verdict::duplicate;
  if (d >= m_window) return psn_verdict::out_of_window;
  if (d != 0) {
    if (received(psn)) return psn_verdict::duplicate;
    m_received[psn & (m_window - 1)] = true;
    return psn_verdict::out_of_order;
  }
  // In order: deliver it, then everything that was waiting behind it.
  do {
    m_received[m_expected & (m_window - 1)] = false;  // its slot now stands for expected + window
    m_expected = (m_expected + 1) & psn_mask;
    ++retired;
  } while (received(m_expected));
  return psn_verdict::in_order;
}

reorder_tracker_outputs reorder_tracker_ref::peek() const {
  reorder_tracker_outputs out = m_registered;
  out.head_psn = m_shown_head;
  out.busy = m_retire_left != 0;
  out.in_ready = !out.busy;
  return out;
}

reorder_tracker_outputs reorder_tracker_ref::step(const reorder_tracker_inputs& in) {
  // The reset is asynchronous: it shows in the cycle it is asserted.
  if (!in.rst_n) {
    clear(0);
    m_registered = reorder_tracker_outputs{};
    return m_registered;
  }

  reorder_tracker_outputs out = m_registered;
  out.head_psn = m_shown_head;
  out.busy = m_retire_left != 0;
  out.in_ready = !in.init_valid && !out.busy;

  // Rising edge. Registered pulses last one cycle unless set again below.
  reorder_tracker_outputs next{};
  if (in.init_valid) {
    clear(in.init_psn);
  } else if (m_retire_left != 0) {
    next.adv_valid = true;
    next.adv_psn = m_shown_head;
    m_shown_head = (m_shown_head + 1) & psn_mask;
    --m_retire_left;
  } else if (in.in_valid) {
    const uint32_t psn = in.in_psn & psn_mask;
    uint32_t retired = 0;
    const psn_verdict verdict = resolve(psn, retired);
    next.res_valid = true;
    next.res_verdict = static_cast<uint8_t>(verdict);
    next.res_psn = psn;
    if (retired != 0) {
      // The arriving PSN retires at the accepting edge; the rest follow one per clock.
      next.adv_valid = true;
      next.adv_psn = psn;
      m_shown_head = (psn + 1) & psn_mask;
      m_retire_left = retired - 1;
    }
  }
  m_registered = next;
  return out;
}

}  // namespace fabricsim::nic
