// DCQCN notification point (CNP generator): C++ reference model.
#include "sc_models/nic/cnp_gen_ref.h"

#include <string>

#include "sc_models/core/params.h"

namespace fabricsim::nic {

cnp_gen_ref::cnp_gen_ref(uint32_t flows) : m_flows(flows), m_last_cnp(flows) {
  const bool power_of_two = flows != 0 && (flows & (flows - 1)) == 0;
  core::require(power_of_two && flows >= 2 && flows <= 65536, "cnp_gen_ref",
                "flows " + std::to_string(flows) + " must be a power of two in 2..65536");
}

void cnp_gen_ref::configure(uint32_t interval_cycles, bool per_port) {
  m_interval = interval_cycles;
  m_per_port = per_port;
  for (auto& last : m_last_cnp) last.reset();
  m_port_last_cnp.reset();
  m_emitted = 0;
  m_suppressed = 0;
}

bool cnp_gen_ref::decide(uint32_t qpn, uint32_t now) {
  std::optional<uint32_t>& last = m_per_port ? m_port_last_cnp : m_last_cnp[(qpn & qpn_mask) % m_flows];
  // Elapsed time modulo 2^32: the arithmetic of a wrapping cycle counter.
  const bool emit = !last || static_cast<uint32_t>(now - *last) >= m_interval;
  if (emit) {
    last = now;
    ++m_emitted;
  } else {
    ++m_suppressed;
  }
  return emit;
}

cnp_gen_outputs cnp_gen_ref::peek() const {
  cnp_gen_outputs out = m_registered;
  out.busy = m_clear_left != 0;
  out.in_ready = !out.busy;
  return out;
}

cnp_gen_outputs cnp_gen_ref::step(const cnp_gen_inputs& in) {
  // The reset is asynchronous: it shows in the cycle it is asserted, and the table clear follows it.
  if (!in.rst_n) {
    configure(0, false);
    m_clear_left = m_flows;
    m_registered = cnp_gen_outputs{};
    cnp_gen_outputs out = m_registered;
    out.busy = true;
    return out;
  }

  cnp_gen_outputs out = m_registered;
  out.busy = m_clear_left != 0;
  out.in_ready = !in.init_valid && !out.busy;

  // Rising edge. The result pulse lasts one cycle unless set again below; the counters hold.
  cnp_gen_outputs next{};
  if (in.init_valid) {
    configure(in.init_interval, in.init_per_port);
    m_clear_left = m_flows;
  } else if (m_clear_left != 0) {
    --m_clear_left;
  } else if (in.in_valid) {
    next.res_valid = true;
    next.res_flow = in.in_flow & qpn_mask;
    next.res_emit = decide(in.in_flow, in.in_now);
  }
  next.cnp_count = m_emitted;
  next.suppressed_count = m_suppressed;
  m_registered = next;
  return out;
}

}  // namespace fabricsim::nic
