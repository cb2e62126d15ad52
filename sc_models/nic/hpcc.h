// HPCC-style window control driven by in-band telemetry (Li et al., "HPCC: High Precision Congestion
// Control", SIGCOMM 2019, Algorithm 1). It is OUR model of a telemetry-based congestion control as
// Spectrum-X pairs with its switches: NVIDIA's own NIC algorithm is not public (docs/hpcc.md).
//
// Per ACK, carrying the telemetry records its data packet collected (one per switch egress it left):
//   per hop i     txRate_i = (tx_bytes_i - last.tx_bytes_i) / (at_i - last.at_i)            (bytes/s)
//                 u_i = min(qlen_i, last.qlen_i) / (B_i T) + txRate_i / B_i                 (B_i: bytes/s)
//   the hop with the largest u_i sets u and tau = at_i - last.at_i, tau <- min(tau, T);
//   U <- (1 - tau/T) U + (tau/T) u                                 (an EWMA over about one base RTT)
//   window        if U >= eta or stage >= max_stage:  W = Wc / (U / eta) + W_AI   (multiplicative step)
//                 else:                                W = Wc + W_AI              (additive step)
//                 clamped to [min_window, B_nic T]; the reference Wc (and stage: 0 after a multiplicative
//                 step, + 1 after an additive one) is updated only once per RTT: on the first ACK that
//                 acknowledges a PSN sent after the last update (ack_psn past last_update_psn), which then
//                 becomes the next PSN to send.
//   rate          R = W / T (the NIC paces at R and keeps at most W bytes in flight).
// The first ACK of a path (or one whose hop count changed) only stores the records: a rate needs two.
// An ACK whose records carry no new time on the deciding hop (a re-echo) changes nothing; one whose byte
// count went back or whose link rate differs at some hop came another way (records carry no port id): the
// records are stored and nothing else changes. HPCC needs one path per flow (nic.path_entropy fixed).
#pragma once

#include <array>
#include <cstdint>

#include "sc_models/core/packet.h"
#include "sc_models/core/params.h"

namespace fabricsim::nic {

struct hpcc_params {
  double eta = 0.95;              // target utilization of the most loaded hop
  uint64_t max_stage = 5;         // additive steps before a multiplicative update is forced
  uint64_t w_ai_bytes = 2000;     // W_AI: additive window step, W_init (1 - eta) / N for N = 5
  double base_rtt_us = 4.0;       // T: base RTT of the longest path; W at line rate is B T
  uint64_t line_rate_mbps = 400000;  // the NIC's port rate: the window ceiling is line rate x T
  uint64_t min_window_bytes = 256;   // floor of W (keeps a flow probing)
  void visit(core::param_visitor& v);
};

class hpcc_cc {
 public:
  explicit hpcc_cc(const hpcc_params& p);  // validated (core::config_error); starts at W = B T
  void reset();
  // One ACK: `hops` records (at most core::max_int_hops) echoed from the data packet it answers, the PSN it
  // acknowledges (cumulative) and the requester's next PSN to send.
  void on_ack(const core::int_record* records, unsigned hops, uint32_t ack_psn, uint32_t next_psn);

  double window_bytes() const { return m_w; }
  double reference_window_bytes() const { return m_wc; }
  double rate_mbps() const { return m_w * 8.0 / m_t_s / 1e6; }  // W / T
  double utilization() const { return m_u; }                     // U, the EWMA of the normalized inflight
  uint64_t stage() const { return m_stage; }
  uint64_t updates() const { return m_updates; }                 // ACKs that changed W

 private:
  double compute_window(double u, bool update_wc);

  hpcc_params m_p;
  double m_t_s;        // T in seconds
  double m_w_max;      // B_nic T in bytes
  double m_w = 0, m_wc = 0, m_u = 0;
  uint64_t m_stage = 0, m_updates = 0;
  bool m_have_last = false, m_have_update_psn = false;
  uint32_t m_last_update_psn = 0;
  unsigned m_hops = 0;
  std::array<core::int_record, core::max_int_hops> m_last{};
};

}  // namespace fabricsim::nic
