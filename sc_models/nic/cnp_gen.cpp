// DCQCN notification point (CNP generator): parameters and the valid/ready handshake adapter.
#include "sc_models/nic/cnp_gen.h"

#include <cmath>
#include <string>

namespace fabricsim::nic {

void cnp_gen_params::visit(core::param_visitor& v) {
  v.field({"min_interval_ns", "ns", "minimum time between two CNPs of one context (MIN_TIME_BETWEEN_CNPS)", 0.0,
           1e8},
          min_interval_ns);
  v.field({"mode", "", "CNP moderation context: per flow (QP) or one per port", 0, 0,
           {"per_flow", "per_port"}},
          mode);
  v.field({"flows", "", "flow contexts in the table, a power of two; context = QPN mod flows", 2.0, 65536.0},
          flows);
  v.field({"clock_ghz", "GHz", "clock of the cycle counter that timestamps arrivals", 0.1, 10.0}, clock_ghz);
}

uint64_t cnp_gen_params::min_interval_cycles() const {
  return static_cast<uint64_t>(std::llround(static_cast<double>(min_interval_ns) * clock_ghz));
}

void check_cnp_gen_params(const cnp_gen_params& params, const std::string& instance) {
  core::check_ranges(params, instance);
  core::require((params.flows & (params.flows - 1)) == 0, instance,
                "flows " + std::to_string(params.flows) + " must be a power of two");
  // Below half the time field, so an elapsed time is never confused with a wrapped one in ordinary use.
  core::require(params.min_interval_cycles() < (uint64_t{1} << (cnp_time_bits - 1)), instance,
                "min_interval_ns " + std::to_string(params.min_interval_ns) + " at " +
                    std::to_string(params.clock_ghz) + " GHz is " + std::to_string(params.min_interval_cycles()) +
                    " cycles, beyond half of the 32-bit time field");
}

std::string to_string(const cnp_gen_inputs& in) {
  return "rst_n=" + std::to_string(in.rst_n) + " init_valid=" + std::to_string(in.init_valid) +
         " init_interval=" + std::to_string(in.init_interval) + " init_per_port=" + std::to_string(in.init_per_port) +
         " in_valid=" + std::to_string(in.in_valid) + " in_flow=" + std::to_string(in.in_flow) +
         " in_now=" + std::to_string(in.in_now);
}

std::string to_string(const cnp_gen_outputs& out) {
  return "in_ready=" + std::to_string(out.in_ready) + " res_valid=" + std::to_string(out.res_valid) +
         " res_emit=" + std::to_string(out.res_emit) + " res_flow=" + std::to_string(out.res_flow) +
         " cnp_count=" + std::to_string(out.cnp_count) + " suppressed_count=" + std::to_string(out.suppressed_count) +
         " busy=" + std::to_string(out.busy);
}

std::string describe_difference(const cnp_gen_outputs& expected, const cnp_gen_outputs& got) {
  std::string s;
  auto field = [&s](const char* name, uint64_t e, uint64_t g) {
    if (e != g) s += std::string("signal ") + name + ": expected " + std::to_string(e) + ", got " + std::to_string(g) + "\n";
  };
  field("req_ready_o", expected.in_ready, got.in_ready);
  field("rsp_valid_o", expected.res_valid, got.res_valid);
  field("rsp_emit_o", expected.res_emit, got.res_emit);
  field("rsp_flow_o", expected.res_flow, got.res_flow);
  field("cnp_count_o", expected.cnp_count, got.cnp_count);
  field("suppressed_count_o", expected.suppressed_count, got.suppressed_count);
  field("busy_o", expected.busy, got.busy);
  return s;
}

cnp_gen_handshake::cnp_gen_handshake(std::unique_ptr<cnp_gen_cycle_model> model, const cnp_gen_params& params)
    : m_model(std::move(model)) {
  cnp_gen_inputs in;
  in.rst_n = false;
  m_model->step(in);
  ++m_cycles;
  reset(params);
}

void cnp_gen_handshake::fail(const std::string& what) const {
  throw std::logic_error(std::string("cnp_gen ") + m_model->kind() + " flows " + std::to_string(m_model->flows()) +
                         ": " + what);
}

void cnp_gen_handshake::reset(const cnp_gen_params& params) {
  check_cnp_gen_params(params, "cnp_gen");
  if (params.flows != m_model->flows())
    throw core::config_error("cnp_gen.flows: " + std::to_string(params.flows) + " differs from the " +
                             std::to_string(m_model->flows()) + " contexts this instance was built with");
  cnp_gen_inputs in;
  in.init_valid = true;
  in.init_interval = static_cast<uint32_t>(params.min_interval_cycles());
  in.init_per_port = params.per_port();
  m_model->step(in);
  ++m_cycles;
  // The table clear: one entry per clock.
  cnp_gen_outputs out = m_model->peek();
  for (uint32_t wait = 0; out.busy; ++wait) {
    if (wait > m_model->flows() + 2) fail("stayed busy longer than a table clear");
    m_model->step(cnp_gen_inputs{});
    ++m_cycles;
    out = m_model->peek();
  }
  m_counters = cnp_gen_counters{};
  m_last_emitted = out.cnp_count;
  m_last_suppressed = out.suppressed_count;
}

void cnp_gen_handshake::widen(const cnp_gen_outputs& out) {
  // Unsigned 32-bit differences are exact across the registers' wrap as long as they are read at least once
  // per 2^32 events, and they are read after every arrival.
  m_counters.emitted += static_cast<uint32_t>(out.cnp_count - m_last_emitted);
  m_counters.suppressed += static_cast<uint32_t>(out.suppressed_count - m_last_suppressed);
  m_last_emitted = out.cnp_count;
  m_last_suppressed = out.suppressed_count;
}

bool cnp_gen_handshake::marked_arrival(uint32_t flow, uint64_t now_cycles) {
  cnp_gen_inputs in;
  in.in_valid = true;
  in.in_flow = flow & qpn_mask;
  in.in_now = static_cast<uint32_t>(now_cycles & cnp_time_mask);
  // The adapter leaves the model idle after reset(), so the first cycle accepts; waiting covers a model that
  // a direct step() left clearing.
  cnp_gen_outputs out = m_model->step(in);
  ++m_cycles;
  for (uint32_t wait = 0; !out.in_ready; ++wait) {
    if (wait > m_model->flows() + 2) fail("never became ready");
    out = m_model->step(in);
    ++m_cycles;
  }
  out = m_model->peek();
  if (!out.res_valid || out.res_flow != in.in_flow) fail("gave no result for flow " + std::to_string(in.in_flow));
  widen(out);
  return out.res_emit;
}

}  // namespace fabricsim::nic
