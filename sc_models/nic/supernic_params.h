// The SuperNIC's parameters (the scenario's `nic` section): one struct read by the NIC and its units, with
// each key's unit, range and description in visit() (docs/scenario.md is generated from it).
#pragma once

#include <cstdint>
#include <string>

#include "sc_models/core/params.h"

namespace fabricsim::nic {

struct supernic_params {
  uint64_t mtu_bytes = 4096;    // the NIC's largest MTU: 256, 512, 1024, 2048 or 4096
  uint64_t path_mtu_bytes = 0;  // its queue pairs' path MTU; 0: the smaller of the two ends' mtu_bytes
  std::string reorder = "rtl";  // receiver PSN tracking: "rtl" (Verilated), "ref" (C++ model) or both
                                // in "lockstep" (sc_models/nic/block_lockstep.h)
  // A user's reorder tracker (docs/rtl_contract.md): Verilated at run time in place of ours for nic.reorder
  // rtl or lockstep, in every NIC (testbench/user_rtl.h). The NIC never reads these; the run set-up does.
  std::string reorder_rtl;        // the .sv file, relative to the scenario file; empty: ours
  std::string reorder_rtl_top;    // its top module; empty: reorder_tracker
  uint64_t reorder_window = 256;  // PSNs tracked beyond the in-order head
  // Clock of the NIC's RTL blocks: the reorder tracker takes one transaction per packet at this clock and is
  // busy for the cycles the RTL reports (sc_models/nic/block_clock.h); the CNP generator and the DCQCN
  // reaction point take theirs at it too (block_timing.h; estimate, docs/calibration.md).
  double clock_mhz = 1000.0;
  double wqe_latency_ns = 200.0;        // work request posted -> first packet ready (estimate)
  double rx_latency_ns = 200.0;         // last bit in -> placed and ACK ready (estimate)
  uint64_t ack_every_packets = 16;      // ACK coalescing: one ACK per this many in-order packets, or on AckReq
  std::string path_entropy = "fixed";   // UDP source port: "fixed" per QP, "per_packet" (spraying) or
                                        // "per_flowlet" (a new one after an idle gap of flowlet_gap_ns)
  double flowlet_gap_ns = 1000.0;       // per_flowlet: a QP idle this long starts a new flowlet (new port)
  bool random_initial_psn = true;       // initial PSN drawn from the NIC's seeded stream, as real NICs do
  uint64_t initial_psn = 0;             // used when random_initial_psn is false
  std::string link_layer = "ethernet";  // "infiniband": LRH/BTH packets, credit flow control to the switch
  uint64_t dscp = 26;                   // RoCE traffic class (NVIDIA default: priority 3)
  bool place_data = true;               // copy payloads into host memory (off: timing only, memory untouched)
  // Where received payloads go: "dmi" copies them into host memory at once (the fast path); "pcie" issues
  // posted writes through the host's PCIe tray (set_placement(); docs/pcie.md), holding at most
  // rx_buffer_bytes of payload not yet landed: a data packet that would overflow it is dropped and counted.
  std::string placement = "dmi";
  uint64_t rx_buffer_bytes = 1u << 20;
  // nic.placement pcie, transmit: payloads are read from memory with non-posted reads into MTU-sized packet
  // buffers, at most this many read ahead of the wire (reads in flight plus data waiting for its packet to
  // leave); a packet goes on the wire only once its payload's completions are all in.
  uint64_t tx_read_ahead_packets = 32;
  // When the receive buffer fills: "pfc" pauses the switch port above (XOFF once rx_pfc_xoff_bytes are in
  // flight, XON below rx_pfc_xon_bytes; the rest of the buffer is headroom for what is on the way), "drop"
  // only drops what does not fit (the requester's loss recovery resends it).
  std::string rx_overflow = "pfc";
  uint64_t rx_pfc_xoff_bytes = 786432;
  uint64_t rx_pfc_xon_bytes = 524288;
  uint64_t rx_pfc_quanta = 65535;  // pause time in XOFF frames, 512-bit times (refreshed at half of it)
  uint64_t tx_fifo_frames = 4;     // MAC transmit FIFO: frames the scheduler may commit ahead of the wire
  // Congestion control. "none": send at line rate (PFC alone holds senders back); "dcqcn": the receiver's
  // notification point sends CNPs for ECN-marked arrivals, the sender's reaction point paces each QP.
  // "hpcc": data packets ask for in-band telemetry, the responder echoes the records in its ACK and the
  // requester's HPCC-style window (sc_models/nic/hpcc.h) limits inflight bytes and paces each QP at W / T.
  // "ecn_only": a toy (docs/extending_cc.md): CNPs as with dcqcn, each cuts the QP's rate by a fixed factor.
  // "dcqcn_distance": our distance-aware DCQCN (dcqcn_distance_control.h): knobs and window by measured RTT.
  // The policies: sc_models/nic/congestion_control.h.
  std::string cc = "none";
  std::string dcqcn_preset = "nvidia";  // reaction-point knobs: "nvidia" firmware defaults or the "paper"'s
  std::string dcqcn_model = "rtl";      // reaction point: Verilated rtl/dcqcn_rp.sv or its C++ model
  // A user's reaction point in every NIC for dcqcn_model rtl or lockstep, as reorder_rtl (testbench/user_rtl.h).
  std::string dcqcn_rtl;          // the .sv file, relative to the scenario file; empty: ours
  std::string dcqcn_rtl_top;      // its top module; empty: dcqcn_rp
  std::string cnp_model = "rtl";  // notification point: Verilated rtl/cnp_gen.sv or its C++ model
  // A user's CNP generator in every NIC for cnp_model rtl or lockstep, as reorder_rtl (testbench/user_rtl.h).
  std::string cnp_rtl;                  // the .sv file, relative to the scenario file; empty: ours
  std::string cnp_rtl_top;              // its top module; empty: cnp_gen
  std::string rtl_mutant;               // "BLOCK:N": that block's RTL is mutant N (empty: the real RTL)
  uint64_t cnp_interval_ns = 2000;      // notification point: at most one CNP per flow per this interval
  uint64_t cnp_time_origin_cycles = 0;  // the notification point's cycle counter at time 0 (it wraps at 2^32)
  std::string cnp_mode = "per_port";    // notification point moderation: one context for the whole port
                                        // (ConnectX-8 default since fw 40.45) or one per QP
  uint64_t cnp_dscp = 48;               // CNPs travel on DSCP 48 (priority 6, strict at the switch)
  // Reaction-point knobs over the preset (-1: the preset's value); names as in dcqcn_params.
  double dcqcn_rpg_time_reset_us = -1;
  double dcqcn_rpg_byte_reset = -1;
  double dcqcn_rpg_threshold = -1;
  double dcqcn_rpg_ai_rate_mbps = -1;
  double dcqcn_rpg_hai_rate_mbps = -1;
  double dcqcn_rpg_min_rate_mbps = -1;
  double dcqcn_rpg_gd = -1;
  double dcqcn_rpg_min_dec_fac = -1;
  double dcqcn_dce_tcp_g = -1;
  double dcqcn_dce_tcp_rtt_us = -1;
  double dcqcn_initial_alpha = -1;
  double dcqcn_rate_reduce_monitor_period_us = -1;
  // HPCC-style control (nic.cc hpcc; docs/hpcc.md). The window ceiling is the port rate x hpcc_base_rtt_us.
  double hpcc_eta = 0.95;
  uint64_t hpcc_max_stage = 5;
  uint64_t hpcc_w_ai_bytes = 2000;  // W_init (1 - eta) / N with N = 5 (docs/hpcc.md)
  double hpcc_base_rtt_us = 4.0;
  // nic.cc ecn_only (toy, not a product algorithm): each CNP multiplies the QP's rate by the factor; each
  // nic.cnp_interval_ns after the last cut adds the step back, up to the line rate.
  double ecn_only_cut_factor = 0.5;
  double ecn_only_ai_mbps = 5000.0;
  // nic.cc dcqcn_distance (our model; dcqcn_distance_control.h): a QP whose measured base RTT is s times the
  // reference runs its reaction point's timers and byte counter s times longer (s at most max_scale), and
  // keeps at most window_bdp x its path's bandwidth-delay product in flight (0: no window).
  double dcqcn_distance_ref_rtt_us = 10.0;
  double dcqcn_distance_max_scale = 1000.0;
  double dcqcn_distance_window_bdp = 1.0;
  // Loss recovery.
  std::string retransmission = "selective";  // requester: "go_back_n", "selective" (resend only what a NAK
                                             // names) or "sack" (resend what SACKs show missing)
  double rto_us = 65.536;                    // local ACK timeout: 4.096 us x 2^4 (IBTA C9-141 encoding, exponent 4)
  uint64_t retry_count = 7;                  // IB retry_cnt (3 bits): retries without progress before the QP errors
  uint64_t nak_threshold_packets = 2048;     // responder: NAK the expected PSN once a packet arrives this far
                                             // beyond it (at most half the reorder window); requester: re-issue a
                                             // READ for a missing response once one arrives this far beyond it
  uint64_t sack_reorder_packets = 128;       // sack: a PSN is lost once one this far beyond it has been SACKed
  // Work request limits and receiver not ready (IBTA RC).
  uint64_t sq_depth = 32768;         // send queue depth: work requests in flight per QP (later ones wait)
  uint64_t max_rd_atomic = 16;       // READ requests outstanding per QP (ibv_qp_attr.max_rd_atomic)
  uint64_t send_window_packets = 0;  // PSNs in flight per QP (sent, not acknowledged); 0: no limit
  double rnr_timer_us = 10.24;       // requester wait after an RNR NAK before resending (responder's timer)
  uint64_t rnr_retry_count = 7;      // RNR NAKs without progress before the QP errors; 7 = retry for ever
  void visit(core::param_visitor& v);

 private:
  void visit_port(core::param_visitor& v);
  void visit_congestion(core::param_visitor& v);
  void visit_window_controls(core::param_visitor& v);
  void visit_recovery(core::param_visitor& v);
};

}  // namespace fabricsim::nic
