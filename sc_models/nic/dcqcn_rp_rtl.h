// DCQCN reaction point of a RoCEv2 NIC: the Verilated rtl/dcqcn_rp.sv, stepped by hand per transaction (no
// SystemC clock, no kernel events: two eval() per cycle, only while a request is in flight) by the shared
// verilated_block adapter.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "sc_models/nic/dcqcn_rp.h"
#include "sc_models/nic/verilated_port.h"

namespace fabricsim::nic {

// Values driven onto the input ports of rtl/dcqcn_rp.sv during one clock cycle.
struct dcqcn_rp_inputs {
  bool rst_n = true;  // rst_ni, asynchronous active-low reset
  dcqcn_config cfg;   // cfg_*_i, quasi-static
  bool req_valid = false;
  uint32_t req_kind = 0;  // fabricsim_pkg::dcqcn_req_e
  uint64_t req_now = 0;   // cycles
  uint32_t req_bytes = 0;
};

// Values on its output ports during one clock cycle, sampled before the rising edge that ends it.
struct dcqcn_rp_ports {
  bool req_ready = false;
  bool rsp_valid = false;
  bool busy = false;
  dcqcn_outputs out;  // rate_o .. events_o (deadline_valid_o low: next_deadline dcqcn_never)
};

class dcqcn_rp_rtl final : public dcqcn_rate_engine {
 public:
  // fst_path: if not empty, every half cycle is dumped to this FST waveform file until the model is destroyed.
  // mutant: 0 for the real block, else one of compiled_mutants(), a deliberately buggy variant for
  // bench-sensitivity tests (throws core::config_error otherwise). traceable: start_trace() may open a
  // waveform later.
  explicit dcqcn_rp_rtl(const dcqcn_params& params, uint64_t now_cycles = 0, const std::string& fst_path = "",
                        uint32_t mutant = 0, bool traceable = false);
  // Another block with the same ports (a user's, sc_models/nic/user_rtl_block.h) behind the same handshake;
  // kind() returns `kind`.
  using port = verilated_port<dcqcn_rp_inputs, dcqcn_rp_ports>;
  dcqcn_rp_rtl(std::unique_ptr<port> block, std::string kind, const dcqcn_params& params, uint64_t now_cycles = 0);
  ~dcqcn_rp_rtl() override;
  dcqcn_rp_rtl(const dcqcn_rp_rtl&) = delete;
  dcqcn_rp_rtl& operator=(const dcqcn_rp_rtl&) = delete;

  void reset(const dcqcn_params& params, uint64_t now_cycles = 0) override;
  void cnp(uint64_t now_cycles) override;
  void sent(uint32_t bytes, uint64_t now_cycles) override;
  void advance(uint64_t now_cycles) override;

  const dcqcn_outputs& outputs() const override { return m_out; }
  const char* kind() const override { return m_kind.c_str(); }  // "rtl", "rtl_mutant_<N>" or "user"
  // Every half cycle from now on to this FST file (built traceable only: std::logic_error otherwise).
  void start_trace(const std::string& fst_path) { m_block->start_trace(fst_path); }
  // The mutants (rtl/mutants/dcqcn_rp/<N>.patch) in this build, ascending; empty when FABRICSIM_RTL_MUTANTS is
  // off.
  static const std::vector<uint32_t>& compiled_mutants();
  uint64_t last_cycles() const override { return m_last_cycles; }
  uint64_t total_cycles() const { return m_total_cycles; }  // clock edges since construction
  // One clock with no request (the contract: nothing is taken, so no response and no busy cycle follows).
  // The bench's directed phase uses it; a NIC never clocks an idle block.
  void idle_cycle();
  // rst_ni pulsed low for one clock, then one clock with no request: after each, the contract's reset state
  // (all state 0, no timer armed, no response, not busy). The bench then inits the block again.
  void reset_pulse();
  // An advance to `now_cycles` presented, rst_ni pulled low after `busy_clocks` busy clocks (the request still in
  // flight), then a clock with no request: the same reset state as reset_pulse(), checked with rst_ni low and
  // a clock after. True when busy_o was high as rst_ni fell (the request really was cut). A NIC never does
  // this (it never aborts a request); the bench's directed phase does, for the contract's reset rule.
  bool reset_during_request(uint64_t now_cycles, uint32_t busy_clocks);
  // The first handshake rule of docs/rtl_contract.md the block broke (req_ready_o = rst_ni && !busy_o, busy_o
  // high until the response, rsp_valid_o only after a request): the signal, what the rule wants and what the
  // block gave, in the cycle named. Empty signal while every cycle kept the rules.
  struct handshake_violation {
    std::string signal, expected, got;
    uint64_t request_cycle = 0;  // req_now of the request in flight (or the last one, for an idle clock)
  };
  const handshake_violation& violation() const { return m_violation; }

 private:
  void request(uint32_t kind, uint64_t now, uint32_t bytes);
  void pulse_rst_ni(const std::string& during);
  // Records the first broken handshake rule of a sampled cycle (`working`: a request is in flight).
  void check_handshake(const dcqcn_rp_ports& ports, bool working);
  // Records the first output that is not its reset value (`when`: which sampled cycle).
  void check_reset_state(const dcqcn_rp_ports& ports, const char* when);

  std::unique_ptr<port> m_block;
  dcqcn_rp_inputs m_in;  // the pins as last driven (configuration included)
  std::string m_kind;
  uint64_t m_now = 0;
  dcqcn_outputs m_out;
  uint64_t m_last_cycles = 0;
  uint64_t m_total_cycles = 0;
  handshake_violation m_violation;
};

}  // namespace fabricsim::nic
