// DCQCN notification point (CNP generator) of a RoCEv2 NIC receiver: parameters, transaction interface,
// cycle-level port bundle and the one handshake adapter that turns any cycle-level model (RTL or reference)
// into transactions.
#pragma once

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>

#include "sc_models/core/params.h"

namespace fabricsim::nic {

struct cnp_gen_params {
  // NVIDIA firmware MIN_TIME_BETWEEN_CNPS is 0-2 us depending on the release; the DCQCN paper uses 50 us.
  uint64_t min_interval_ns = 2000;  // no second CNP for the same context within this time
  std::string mode = "per_flow";    // "per_flow": one context per flow; "per_port": one for the whole port
  uint64_t flows = 64;              // flow contexts, a power of two; context = QPN mod flows (QPNs alias)
  double clock_ghz = 1.0;           // clock of the free-running cycle counter that timestamps arrivals

  void visit(core::param_visitor& v);

  // The interval in clock cycles, rounded to the nearest cycle.
  uint64_t min_interval_cycles() const;
  bool per_port() const { return mode == "per_port"; }

  // Presets (docs/calibration.md): NVIDIA firmware (MIN_TIME_BETWEEN_CNPS at the top of its 0-2 us range,
  // per-port as ConnectX-8 since fw 40.45) and the DCQCN paper (50 us per flow).
  static cnp_gen_params nvidia_cx8() {
    cnp_gen_params p;
    p.mode = "per_port";
    return p;
  }
  static cnp_gen_params dcqcn_paper() {
    cnp_gen_params p;
    p.min_interval_ns = 50000;
    return p;
  }
};

// Width of the time field in the RTL and of the cycle counts it compares: the interval must stay below half
// of it (checked), and a context silent for 2^32 cycles or more aliases (rtl/cnp_gen.sv header).
inline constexpr uint32_t cnp_time_bits = 32;
inline constexpr uint64_t cnp_time_mask = (uint64_t{1} << cnp_time_bits) - 1;
inline constexpr uint32_t qpn_mask = (1u << 24) - 1;  // BTH destination QP: 24 bits

// Counters since the last reset(), widened to 64 bits from the block's 32-bit wrapping registers.
struct cnp_gen_counters {
  uint64_t emitted = 0;
  uint64_t suppressed = 0;
};

class cnp_gen {
 public:
  virtual ~cnp_gen() = default;
  // Loads the interval and the mode and forgets every CNP sent. params.flows must be the instance's flows()
  // (the table size is fixed when it is built); throws core::config_error otherwise or for an illegal field.
  virtual void reset(const cnp_gen_params& params) = 0;
  // An ECN-CE-marked packet of QP `flow` (24 bits used) arrived at cycle `now_cycles` (a free-running count;
  // the low 32 bits are used and may wrap). True: send a CNP to that flow's sender now.
  virtual bool marked_arrival(uint32_t flow, uint64_t now_cycles) = 0;
  virtual cnp_gen_counters counters() const = 0;
  virtual uint32_t flows() const = 0;
  virtual const char* kind() const = 0;  // "rtl" or "ref"
};

// kind "rtl" (Verilated block) or "ref" (C++ reference model), reset with `params`. Throws core::config_error
// naming the field and the allowed values for an unknown kind, an illegal field, or a flows value the RTL was
// not compiled for (both kinds accept exactly the compiled ones, so a scenario can switch kind freely).
std::unique_ptr<cnp_gen> make_cnp_gen(const std::string& kind, const cnp_gen_params& params);

// Values driven onto the RTL input ports during one clock cycle (rtl/cnp_gen.sv).
struct cnp_gen_inputs {
  bool rst_n = true;  // rst_ni, asynchronous active-low reset
  bool init_valid = false;
  uint32_t init_interval = 0;  // cycles
  bool init_per_port = false;
  bool in_valid = false;
  uint32_t in_flow = 0;  // QPN, 24 bits
  uint32_t in_now = 0;   // arrival time, low 32 bits of the cycle count
};

// Values on the RTL output ports during one clock cycle, sampled before the rising edge that ends it.
struct cnp_gen_outputs {
  bool in_ready = false;
  bool res_valid = false;
  bool res_emit = false;
  uint32_t res_flow = 0;
  uint32_t cnp_count = 0;
  uint32_t suppressed_count = 0;
  bool busy = false;

  friend bool operator==(const cnp_gen_outputs& a, const cnp_gen_outputs& b) {
    return a.in_ready == b.in_ready && a.res_valid == b.res_valid && a.res_emit == b.res_emit &&
           a.res_flow == b.res_flow && a.cnp_count == b.cnp_count && a.suppressed_count == b.suppressed_count &&
           a.busy == b.busy;
  }
  friend bool operator!=(const cnp_gen_outputs& a, const cnp_gen_outputs& b) { return !(a == b); }
};

// For bench failure messages.
std::string to_string(const cnp_gen_inputs& in);
std::string to_string(const cnp_gen_outputs& out);
// Every output signal that differs, one "signal: expected X, got Y" per line.
std::string describe_difference(const cnp_gen_outputs& expected, const cnp_gen_outputs& got);

// A model with the RTL's ports, advanced one clock per call: drive `in` for the cycle, return the outputs seen
// during that cycle (before the rising edge), then take the rising edge. Cycle timing is documented in the
// header of rtl/cnp_gen.sv; every implementation matches it output for output.
class cnp_gen_cycle_model {
 public:
  virtual ~cnp_gen_cycle_model() = default;
  virtual cnp_gen_outputs step(const cnp_gen_inputs& in) = 0;
  // The outputs of the cycle that the last rising edge began, as step() would return them for idle inputs
  // (no init, reset released), without taking another edge.
  virtual cnp_gen_outputs peek() const = 0;
  virtual uint32_t flows() const = 0;
  virtual const char* kind() const = 0;
};

// Drives a cycle-level model through its valid/ready handshake, one transaction per call. Both kinds go
// through this adapter, so the NIC and the differential bench exercise the same interface.
class cnp_gen_handshake final : public cnp_gen {
 public:
  // Applies one reset cycle, then reset(params).
  cnp_gen_handshake(std::unique_ptr<cnp_gen_cycle_model> model, const cnp_gen_params& params);
  cnp_gen_handshake(const cnp_gen_handshake&) = delete;
  cnp_gen_handshake& operator=(const cnp_gen_handshake&) = delete;

  // One init cycle, then the table clear (flows() cycles); the model is idle and ready afterwards.
  void reset(const cnp_gen_params& params) override;
  // One clock: the arrival is accepted at the first edge and its result read from the registered outputs.
  bool marked_arrival(uint32_t flow, uint64_t now_cycles) override;
  cnp_gen_counters counters() const override { return m_counters; }
  uint32_t flows() const override { return m_model->flows(); }
  const char* kind() const override { return m_model->kind(); }

  // Clock cycles stepped since construction (reset sweeps included), for latency accounting.
  uint64_t cycles() const { return m_cycles; }
  cnp_gen_cycle_model& model() { return *m_model; }

 private:
  [[noreturn]] void fail(const std::string& what) const;
  void widen(const cnp_gen_outputs& out);

  std::unique_ptr<cnp_gen_cycle_model> m_model;
  cnp_gen_counters m_counters;
  uint32_t m_last_emitted = 0;  // the 32-bit registers as last read, to widen their increments
  uint32_t m_last_suppressed = 0;
  uint64_t m_cycles = 0;
};

// Checks params (ranges, choices, the interval against the time field); throws core::config_error naming the
// field. Whether `flows` was compiled into the RTL is checked by make_cnp_gen().
void check_cnp_gen_params(const cnp_gen_params& params, const std::string& instance);

}  // namespace fabricsim::nic
