// DCQCN notification point (CNP generator): C++ reference model, written from the moderation rule rather than
// from the RTL. Each arrival is decided at once against the time of the context's last CNP; the cycle timing
// of rtl/cnp_gen.sv (result one cycle later, the table clear after reset and init) is replayed around it.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "sc_models/nic/cnp_gen.h"

namespace fabricsim::nic {

class cnp_gen_ref final : public cnp_gen_cycle_model {
 public:
  // flows: contexts, a power of two in 2..65536 (throws core::config_error otherwise).
  explicit cnp_gen_ref(uint32_t flows);
  cnp_gen_ref(const cnp_gen_ref&) = delete;
  cnp_gen_ref& operator=(const cnp_gen_ref&) = delete;

  cnp_gen_outputs step(const cnp_gen_inputs& in) override;
  cnp_gen_outputs peek() const override;
  uint32_t flows() const override { return m_flows; }
  const char* kind() const override { return "ref"; }

  // Untimed rule, exposed for tests: load a configuration and forget every CNP; decide one arrival.
  void configure(uint32_t interval_cycles, bool per_port);
  bool decide(uint32_t qpn, uint32_t now);

 private:
  uint32_t m_flows;
  // Rule state: the configuration, and the time of the last CNP per context (none since the last init).
  uint32_t m_interval = 0;
  bool m_per_port = false;
  std::vector<std::optional<uint32_t>> m_last_cnp;  // indexed by QPN mod flows
  std::optional<uint32_t> m_port_last_cnp;
  uint32_t m_emitted = 0;  // 32-bit hardware counters: they wrap
  uint32_t m_suppressed = 0;

  // Timing state.
  uint32_t m_clear_left = 0;  // clocks of table clear still to run; busy while non-zero
  cnp_gen_outputs m_registered;
};

}  // namespace fabricsim::nic
