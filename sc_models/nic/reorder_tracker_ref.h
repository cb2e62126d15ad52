// Receiver PSN reorder tracker of a RoCEv2 NIC: C++ reference model, written from the PSN rules rather than
// from the RTL. Each arrival is resolved completely at once (verdict, marks, how far the head moves); the
// cycle timing of rtl/reorder_tracker.sv is then replayed from a small schedule.
#pragma once

#include <cstdint>
#include <vector>

#include "sc_models/nic/reorder_tracker.h"

namespace fabricsim::nic {

class reorder_tracker_ref final : public reorder_tracker_cycle_model {
 public:
  // window: PSNs tracked ahead of the head; a power of two in 16..4096 (throws core::config_error otherwise).
  explicit reorder_tracker_ref(uint32_t window);
  reorder_tracker_ref(const reorder_tracker_ref&) = delete;
  reorder_tracker_ref& operator=(const reorder_tracker_ref&) = delete;

  reorder_tracker_outputs step(const reorder_tracker_inputs& in) override;
  reorder_tracker_outputs peek() const override;
  uint32_t window() const override { return m_window; }
  const char* kind() const override { return "ref"; }

  // Untimed rules, exposed for tests: classify `psn` against the current head, record it, and move the head
  // past every consecutive received PSN. `retired` receives how many PSNs the head moved past.
  psn_verdict resolve(uint32_t psn, uint32_t& retired);
  uint32_t expected_psn() const { return m_expected; }

 private:
  void clear(uint32_t head);
  bool received(uint32_t psn) const { return m_received[psn & (m_window - 1)]; }

  uint32_t m_window;
  // Rules state: the expected PSN once every accepted arrival has been fully resolved, and which PSNs in
  // [m_expected, m_expected + window) have been received (indexed by PSN mod window).
  uint32_t m_expected = 0;
  std::vector<bool> m_received;

  // Timing state: what the ports show. The head shown lags m_expected while the block is still retiring.
  uint32_t m_shown_head = 0;
  uint32_t m_retire_left = 0;  // PSNs still to retire at one per clock; busy while non-zero
  reorder_tracker_outputs m_registered;  // registered outputs for the current cycle
};

}  // namespace fabricsim::nic
