// DCQCN notification point (CNP generator): the Verilated rtl/cnp_gen.sv, stepped by hand (no SystemC clock,
// no kernel events: two eval() per cycle), behind the cycle-level port bundle.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "sc_models/nic/cnp_gen.h"

namespace fabricsim::nic {

class cnp_gen_rtl final : public cnp_gen_cycle_model {
 public:
  // flows: one of compiled_flows() (throws core::config_error otherwise). fst_path: if not empty, every half
  // cycle is dumped to this FST waveform file until the model is destroyed.
  explicit cnp_gen_rtl(uint32_t flows, const std::string& fst_path = "");
  ~cnp_gen_rtl() override;
  cnp_gen_rtl(const cnp_gen_rtl&) = delete;
  cnp_gen_rtl& operator=(const cnp_gen_rtl&) = delete;

  cnp_gen_outputs step(const cnp_gen_inputs& in) override;
  cnp_gen_outputs peek() const override;
  uint32_t flows() const override { return m_flows; }
  const char* kind() const override { return "rtl"; }

  // The Flows values Verilated into this build (rtl/CMakeLists.txt), ascending.
  static const std::vector<uint32_t>& compiled_flows();

  // One Verilated instance of a given Flows; defined in the .cpp so Verilator headers stay out of users.
  class binding;

 private:
  uint32_t m_flows;
  std::unique_ptr<binding> m_binding;
};

}  // namespace fabricsim::nic
