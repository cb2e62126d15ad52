// nic.cc dcqcn_distance: OUR distance-aware variant of DCQCN for scale-across fabrics (docs/dcqcn.md,
// "dcqcn_distance"). NVIDIA's Spectrum-XGS distance-adaptive algorithm is not public; this is not it.
//
// Each QP measures its base RTT: the time from sending a packet to the first ACK that covers it (its first
// packet, then one probe at a time: the next new PSN after each completed sample), the smallest sample kept.
// At the first sample, whatever the QP's rate (a CNP may have cut it already):
//   scale s = clamp(base_rtt / nic.dcqcn_distance_ref_rtt_us, 1, nic.dcqcn_distance_max_scale)
//   the reaction point restarts, at line rate, with every time constant and the byte counter multiplied by s:
//   rpg_time_reset_us, rpg_byte_reset, dce_tcp_rtt_us and rate_reduce_monitor_period_us (each clamped to its
//   field's width and range), so that a QP whose feedback takes s times longer neither climbs s times further nor cuts
//   s times more often than an in-site QP between two signals;
//   and its new PSNs wait while its bytes in flight reach nic.dcqcn_distance_window_bdp x line rate x
//   base_rtt (the path's bandwidth-delay product; 0: no window).
// A QP whose base RTT is at most the reference behaves exactly as nic.cc dcqcn, window aside.
#pragma once

#include <memory>

#include "sc_models/nic/congestion_control.h"
#include "sc_models/nic/dcqcn_rp.h"

namespace fabricsim::nic {

std::unique_ptr<congestion_control> make_dcqcn_distance_control(const supernic_params& params, const cc_context& ctx);

// The reaction-point knobs of `base` scaled for a path of `base_rtt_ps` (the rule above), for tests and the
// policy alike.
dcqcn_params distance_scaled(const dcqcn_params& base, double scale);
// The largest values dcqcn_params accepts (its visit()): a timer period, and the byte counter.
inline constexpr double k_max_period_us = 4e6;
inline constexpr double k_max_byte_reset = double(1u << 30);
double distance_scale(uint64_t base_rtt_ps, double ref_rtt_us, double max_scale);

}  // namespace fabricsim::nic
