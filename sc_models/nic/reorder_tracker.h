// Receiver PSN reorder tracker of a RoCEv2 NIC: transaction interface, cycle-level port bundle and the one
// handshake adapter that turns any cycle-level model (RTL or reference) into transactions.
#pragma once

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>

namespace fabricsim::nic {

enum class psn_verdict : uint8_t { in_order = 0, out_of_order = 1, duplicate = 2, out_of_window = 3 };

inline const char* to_string(psn_verdict verdict) {
  switch (verdict) {
    case psn_verdict::in_order: return "in_order";
    case psn_verdict::out_of_order: return "out_of_order";
    case psn_verdict::duplicate: return "duplicate";
    case psn_verdict::out_of_window: return "out_of_window";
  }
  return "invalid";
}

struct psn_result {
  psn_verdict verdict;
  uint32_t head_psn;  // expected PSN after this arrival was processed (24 bit)
  uint32_t advanced;  // how many PSNs the head moved past because of this arrival
  uint32_t cycles;    // clock cycles the block took (for the NIC's latency accounting)
};

class reorder_tracker {
 public:
  virtual ~reorder_tracker() = default;
  virtual void reset(uint32_t expected_psn) = 0;
  virtual psn_result arrive(uint32_t psn) = 0;
  virtual uint32_t window() const = 0;
  virtual const char* kind() const = 0;  // "rtl" or "ref"
};

// kind "rtl" (Verilated block) or "ref" (C++ reference model). Throws fabricsim::core::config_error (from
// "sc_models/core/params.h") with a message naming the field and allowed values when the kind is unknown or
// the window is not one the RTL was compiled for (list the compiled windows). Both kinds accept exactly the
// compiled windows, so a scenario can switch kind without touching the window.
std::unique_ptr<reorder_tracker> make_reorder_tracker(const std::string& kind, uint32_t window);

inline constexpr uint32_t psn_bits = 24;
inline constexpr uint32_t psn_mask = (1u << psn_bits) - 1;  // BTH PSN: 24 bits, wraps at 2^24

// Values driven onto the RTL input ports during one clock cycle (rtl/reorder_tracker.sv).
struct reorder_tracker_inputs {
  bool rst_n = true;  // rst_ni, asynchronous active-low reset
  bool init_valid = false;
  uint32_t init_psn = 0;  // 24 bit
  bool in_valid = false;
  uint32_t in_psn = 0;  // 24 bit
};

// Values on the RTL output ports during one clock cycle, sampled before the rising edge that ends it.
struct reorder_tracker_outputs {
  bool in_ready = false;
  bool res_valid = false;
  uint8_t res_verdict = 0;  // psn_verdict encoding, 2 bits
  uint32_t res_psn = 0;
  uint32_t head_psn = 0;
  bool adv_valid = false;
  uint32_t adv_psn = 0;
  bool busy = false;

  friend bool operator==(const reorder_tracker_outputs& a, const reorder_tracker_outputs& b) {
    return a.in_ready == b.in_ready && a.res_valid == b.res_valid && a.res_verdict == b.res_verdict &&
           a.res_psn == b.res_psn && a.head_psn == b.head_psn && a.adv_valid == b.adv_valid &&
           a.adv_psn == b.adv_psn && a.busy == b.busy;
  }
  friend bool operator!=(const reorder_tracker_outputs& a, const reorder_tracker_outputs& b) { return !(a == b); }
};

// For bench failure messages.
inline std::string to_string(const reorder_tracker_inputs& in) {
  return "rst_n=" + std::to_string(in.rst_n) + " init_valid=" + std::to_string(in.init_valid) +
         " init_psn=" + std::to_string(in.init_psn) + " in_valid=" + std::to_string(in.in_valid) +
         " in_psn=" + std::to_string(in.in_psn);
}
inline std::string to_string(const reorder_tracker_outputs& out) {
  return "in_ready=" + std::to_string(out.in_ready) + " res_valid=" + std::to_string(out.res_valid) +
         " res_verdict=" + std::to_string(out.res_verdict) + " res_psn=" + std::to_string(out.res_psn) +
         " head_psn=" + std::to_string(out.head_psn) + " adv_valid=" + std::to_string(out.adv_valid) +
         " adv_psn=" + std::to_string(out.adv_psn) + " busy=" + std::to_string(out.busy);
}

// A model with the RTL's ports, advanced one clock per call: drive `in` for the cycle, return the outputs seen
// during that cycle (before the rising edge), then take the rising edge. Cycle timing is documented in the
// header of rtl/reorder_tracker.sv; every implementation matches it output for output.
class reorder_tracker_cycle_model {
 public:
  virtual ~reorder_tracker_cycle_model() = default;
  virtual reorder_tracker_outputs step(const reorder_tracker_inputs& in) = 0;
  // The outputs of the cycle that the last rising edge began, as step() would return them for idle inputs
  // (no init, reset released), without taking another edge.
  virtual reorder_tracker_outputs peek() const = 0;
  virtual uint32_t window() const = 0;
  virtual const char* kind() const = 0;
};

// Drives a cycle-level model through its valid/ready handshake, one transaction per call. Both kinds go
// through this adapter, so the NIC and the differential bench exercise the same interface.
// Holds no per-call state on the heap: arrive() only steps the model.
class reorder_tracker_handshake final : public reorder_tracker {
 public:
  // Applies one reset cycle, leaving head 0 and the model idle.
  explicit reorder_tracker_handshake(std::unique_ptr<reorder_tracker_cycle_model> model) : m_model(std::move(model)) {
    reorder_tracker_inputs in;
    in.rst_n = false;
    m_model->step(in);
  }
  reorder_tracker_handshake(const reorder_tracker_handshake&) = delete;
  reorder_tracker_handshake& operator=(const reorder_tracker_handshake&) = delete;

  // One init cycle; the model is idle afterwards.
  void reset(uint32_t expected_psn) override {
    reorder_tracker_inputs in;
    in.init_valid = true;
    in.init_psn = expected_psn & psn_mask;
    m_model->step(in);
  }

  // The PSN's upper 8 bits are ignored (the BTH field is 24 bits). `cycles` counts the accepting cycle plus
  // every cycle the block stayed busy retiring stored PSNs: the number of clocks before it can take the next
  // PSN. The result is read from the outputs after the last edge (peek), so an in-order PSN costs one clock.
  psn_result arrive(uint32_t psn) override {
    reorder_tracker_inputs in;
    in.in_valid = true;
    in.in_psn = psn & psn_mask;
    psn_result result{psn_verdict::in_order, 0, 0, 1};
    // The adapter always leaves the model idle, so the first cycle accepts; waiting covers any model whose
    // idle state is still draining (a retirement left running by a previous direct step()).
    reorder_tracker_outputs out = m_model->step(in);
    for (uint32_t wait = 0; !out.in_ready; ++wait) {
      if (wait > m_model->window() + 2) fail("never became ready");
      out = m_model->step(in);
      ++result.cycles;
    }
    in.in_valid = false;
    in.in_psn = 0;
    bool seen_result = false;
    for (uint32_t busy_cycles = 0;; ++busy_cycles) {
      if (busy_cycles > m_model->window() + 2) fail("stayed busy longer than a full window");
      out = m_model->peek();
      if (out.res_valid) {
        result.verdict = static_cast<psn_verdict>(out.res_verdict);
        seen_result = true;
      }
      if (out.adv_valid) ++result.advanced;
      if (!out.busy) break;
      m_model->step(in);  // a busy cycle: one more PSN retires at its edge
      ++result.cycles;
    }
    if (!seen_result) fail("gave no result the cycle after accepting a PSN");
    result.head_psn = out.head_psn;
    return result;
  }

  uint32_t window() const override { return m_model->window(); }
  const char* kind() const override { return m_model->kind(); }

  // The wrapped model, for benches that mix transactions with direct cycle stepping.
  reorder_tracker_cycle_model& model() { return *m_model; }

 private:
  [[noreturn]] void fail(const char* what) const {
    throw std::logic_error(std::string("reorder_tracker ") + m_model->kind() + " window " +
                           std::to_string(m_model->window()) + ": " + what);
  }

  std::unique_ptr<reorder_tracker_cycle_model> m_model;
};

}  // namespace fabricsim::nic
