// DCQCN notification point (CNP generator): the Verilated rtl/cnp_gen.sv, stepped by hand (no SystemC clock,
// no kernel events: two eval() per cycle) by the shared verilated_block adapter, behind the cycle-level port
// bundle.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "sc_models/nic/cnp_gen.h"
#include "sc_models/nic/verilated_port.h"

namespace fabricsim::nic {

class cnp_gen_rtl final : public cnp_gen_cycle_model {
 public:
  // flows: one of compiled_flows() (throws core::config_error otherwise). fst_path: if not empty, every half
  // cycle is dumped to this FST waveform file until the model is destroyed. mutant: 0 for the real block,
  // else one of compiled_mutants(), a deliberately buggy variant for bench-sensitivity tests (flows
  // mutant_flows() only; throws core::config_error otherwise). traceable: start_trace() may open a
  // waveform later.
  explicit cnp_gen_rtl(uint32_t flows, const std::string& fst_path = "", uint32_t mutant = 0, bool traceable = false);
  ~cnp_gen_rtl() override;
  cnp_gen_rtl(const cnp_gen_rtl&) = delete;
  cnp_gen_rtl& operator=(const cnp_gen_rtl&) = delete;

  cnp_gen_outputs step(const cnp_gen_inputs& in) override;
  cnp_gen_outputs peek() const override;
  uint32_t flows() const override { return m_flows; }
  const char* kind() const override { return m_kind.c_str(); }  // "rtl" or "rtl_mutant_<N>"
  // Every half cycle from now on to this FST file (built traceable only: std::logic_error otherwise).
  void start_trace(const std::string& fst_path) { m_block->start_trace(fst_path); }

  // The Flows values Verilated into this build (rtl/CMakeLists.txt), ascending.
  static const std::vector<uint32_t>& compiled_flows();
  // The mutants (rtl/mutants/cnp_gen/<N>.patch) in this build, ascending; empty when FABRICSIM_RTL_MUTANTS
  // is off. They are Verilated for one flow count only.
  static const std::vector<uint32_t>& compiled_mutants();
  static uint32_t mutant_flows();

  // One Verilated instance of a given Flows (verilated_block, defined in the .cpp so Verilator headers stay
  // out of users).
  using port = verilated_port<cnp_gen_inputs, cnp_gen_outputs>;

 private:
  uint32_t m_flows;
  std::string m_kind;
  std::unique_ptr<port> m_block;
};

}  // namespace fabricsim::nic
