// DCQCN reaction point of a RoCEv2 NIC: the Verilated rtl/dcqcn_rp.sv, stepped by hand per transaction (no
// SystemC clock, no kernel events: two eval() per cycle, only while a request is in flight).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "sc_models/nic/dcqcn_rp.h"

namespace fabricsim::nic {

class dcqcn_rp_rtl final : public dcqcn_rate_engine {
 public:
  // fst_path: if not empty, every half cycle is dumped to this FST waveform file until the model is destroyed.
  // mutant: 0 for the real block, else one of compiled_mutants(), a deliberately buggy variant for
  // bench-sensitivity tests (no waveform; throws core::config_error otherwise).
  explicit dcqcn_rp_rtl(const dcqcn_params& params, uint64_t now_cycles = 0, const std::string& fst_path = "",
                        uint32_t mutant = 0);
  ~dcqcn_rp_rtl() override;
  dcqcn_rp_rtl(const dcqcn_rp_rtl&) = delete;
  dcqcn_rp_rtl& operator=(const dcqcn_rp_rtl&) = delete;

  void reset(const dcqcn_params& params, uint64_t now_cycles = 0) override;
  void cnp(uint64_t now_cycles) override;
  void sent(uint32_t bytes, uint64_t now_cycles) override;
  void advance(uint64_t now_cycles) override;

  const dcqcn_outputs& outputs() const override { return m_out; }
  const char* kind() const override { return m_kind.c_str(); }  // "rtl" or "rtl_mutant_<N>"
  // The mutants (rtl/mutants/dcqcn_rp/<N>.patch) in this build, ascending; empty when FABRICSIM_RTL_MUTANTS is
  // off.
  static const std::vector<uint32_t>& compiled_mutants();
  uint64_t last_cycles() const override { return m_last_cycles; }
  uint64_t total_cycles() const { return m_total_cycles; }  // clock edges since construction

  // One Verilated instance; defined in the .cpp so Verilator headers stay out of users.
  class binding;

 private:
  void request(uint32_t kind, uint64_t now, uint32_t bytes);

  std::unique_ptr<binding> m_binding;
  std::string m_kind;
  uint64_t m_now = 0;
  dcqcn_outputs m_out;
  uint64_t m_last_cycles = 0;
  uint64_t m_total_cycles = 0;
};

}  // namespace fabricsim::nic
