// Receiver PSN reorder tracker of a RoCEv2 NIC: the Verilated rtl/reorder_tracker.sv, stepped by hand
// (no SystemC clock, no kernel events: two eval() per cycle) by the shared verilated_block adapter, behind
// the cycle-level port bundle.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "sc_models/nic/reorder_tracker.h"
#include "sc_models/nic/verilated_port.h"

namespace fabricsim::nic {

class reorder_tracker_rtl final : public reorder_tracker_cycle_model {
 public:
  // window: one of compiled_windows() (throws core::config_error otherwise). fst_path: if not empty, every
  // half cycle is dumped to this FST waveform file until the model is destroyed. mutant: 0 for the real
  // block, else one of compiled_mutants(), a deliberately buggy variant for bench-sensitivity tests (window
  // mutant_window() only; throws core::config_error otherwise). traceable: start_trace() may open a
  // waveform later.
  explicit reorder_tracker_rtl(uint32_t window, const std::string& fst_path = "", uint32_t mutant = 0,
                               bool traceable = false);
  ~reorder_tracker_rtl() override;
  reorder_tracker_rtl(const reorder_tracker_rtl&) = delete;
  reorder_tracker_rtl& operator=(const reorder_tracker_rtl&) = delete;

  reorder_tracker_outputs step(const reorder_tracker_inputs& in) override;
  reorder_tracker_outputs peek() const override;
  uint32_t window() const override { return m_window; }
  const char* kind() const override { return m_kind.c_str(); }  // "rtl" or "rtl_mutant_<N>"
  // Every half cycle from now on to this FST file (built traceable only: std::logic_error otherwise).
  void start_trace(const std::string& fst_path) { m_block->start_trace(fst_path); }

  // The Window values Verilated into this build (rtl/CMakeLists.txt), ascending.
  static const std::vector<uint32_t>& compiled_windows();
  // The mutants (rtl/mutants/reorder_tracker/<N>.patch) in this build, ascending; empty when
  // FABRICSIM_RTL_MUTANTS is off. They are Verilated for one window only.
  static const std::vector<uint32_t>& compiled_mutants();
  static uint32_t mutant_window();

  // One Verilated instance of a given Window (verilated_block, defined in the .cpp so Verilator headers
  // stay out of users).
  using port = verilated_port<reorder_tracker_inputs, reorder_tracker_outputs>;

 private:
  uint32_t m_window;
  std::string m_kind;
  std::unique_ptr<port> m_block;
};

}  // namespace fabricsim::nic
