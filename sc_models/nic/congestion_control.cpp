// Congestion control of the SuperNIC: the pacing every rate-setting policy shares, "none", and the factory.
#include "sc_models/nic/congestion_control.h"

#include <algorithm>

#include "sc_models/nic/block_lockstep.h"
#include "sc_models/nic/block_recording.h"
#include "sc_models/nic/dcqcn_control.h"
#include "sc_models/nic/dcqcn_distance_control.h"
#include "sc_models/nic/ecn_only_control.h"
#include "sc_models/nic/hpcc_control.h"
#include "sc_models/nic/policy_table.h"

namespace fabricsim::nic {

void congestion_control::add_qp(const std::string& qp_name, uint64_t line_rate_bps, core::picoseconds t) {
  on_add_qp(qp_name, line_rate_bps, t);
  m_pace.push_back({});
}

void congestion_control::sent(size_t q, uint64_t wire_bytes, core::picoseconds t) {
  if (!m_paced) return;
  on_sent(q, wire_bytes, t);
  pacing& p = m_pace[q];
  p.pace_from = std::max(t, p.next_send);
  p.pace_bits = wire_bytes * 8;
  repace(q);
}

void congestion_control::repace(size_t q) {
  pacing& p = m_pace[q];
  if (p.pace_bits == 0) return;
  const uint64_t rate = std::max<uint64_t>(1, rate_kbps(q));
  p.next_send = p.pace_from + core::picoseconds(uint64_t((unsigned __int128)p.pace_bits * 1'000'000'000ull / rate));
}

namespace {

std::unique_ptr<cnp_gen> make_cnp_block(const supernic_params& params, const cc_context& ctx) {
  cnp_gen_params np;
  np.min_interval_ns = params.cnp_interval_ns;
  np.mode = params.cnp_mode;
  const uint32_t mutant = parse_rtl_mutant(params.rtl_mutant, ctx.instance + ": nic.rtl_mutant").of("cnp_gen");
  std::unique_ptr<cnp_gen> gen = make_nic_cnp_gen(params.cnp_model, np, mutant, {ctx.instance, "", ctx.lockstep});
  if (ctx.rtl_log) gen = record_cnp_gen(std::move(gen), np, *ctx.rtl_log, ctx.instance + ".cnp_gen");
  return gen;
}

}  // namespace

notification_point::notification_point(const supernic_params& params, const cc_context& ctx)
    : m_gen(make_cnp_block(params, ctx)), m_clock(ctx.instance, "cnp_gen", ctx.clock_mhz, ctx.stats) {}

core::picoseconds notification_point::arrival(uint32_t qpn, core::picoseconds t, uint64_t stamp_cycles) {
  const uint64_t edge = m_clock.take(t, 1);  // one arrival per clock (rtl/cnp_gen.sv, cycle timing)
  if (!m_gen->marked_arrival(qpn, stamp_cycles)) return congestion_control::never;
  return m_clock.edge_time(edge + 1);  // the decision is on the outputs the cycle after the accepting edge
}

namespace {

// "none": every QP sends at line rate (PFC alone holds senders back); CNPs are counted by the NIC and ignored.
class no_control final : public congestion_control {
 public:
  no_control() : congestion_control(false, false) {}
  const char* name() const override { return "none"; }
};

std::unique_ptr<congestion_control> make_no_control(const supernic_params&, const cc_context&) {
  return std::make_unique<no_control>();
}

struct policy {
  const char* name;
  std::unique_ptr<congestion_control> (*make)(const supernic_params&, const cc_context&);
};
// One line per policy: its nic.cc name and its maker.
constexpr policy policies[] = {
    {"none", make_no_control},
    {"dcqcn", make_dcqcn_control},
    {"hpcc", make_hpcc_control},
    {"ecn_only", make_ecn_only_control},
    {"dcqcn_distance", make_dcqcn_distance_control},
};

}  // namespace

const std::vector<std::string>& congestion_control_names() {
  static const std::vector<std::string> names = policy_names(policies);
  return names;
}

std::unique_ptr<congestion_control> make_congestion_control(const std::string& name, const supernic_params& params,
                                                            const cc_context& ctx) {
  return find_policy(policies, name, ctx.instance, "nic.cc").make(params, ctx);
}

}  // namespace fabricsim::nic
