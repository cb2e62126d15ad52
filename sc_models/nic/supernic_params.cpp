// The SuperNIC's parameters: each key with its unit, range and description, in the order docs/scenario.md
// lists them.
#include "sc_models/nic/supernic_params.h"

#include "sc_models/core/packet.h"
#include "sc_models/nic/congestion_control.h"
#include "sc_models/nic/loss_recovery.h"
#include "sc_models/nic/path_entropy.h"

namespace fabricsim::nic {

void supernic_params::visit(core::param_visitor& v) {
  visit_port(v);
  visit_congestion(v);
  visit_window_controls(v);
  visit_recovery(v);
}

// The port, the receive path and its placement.
void supernic_params::visit_port(core::param_visitor& v) {
  v.field({"mtu_bytes", "bytes",
           "the NIC's largest MTU (IBTA: 256, 512, 1024, 2048, 4096); a queue pair's path MTU is the smaller of "
           "its two ends' unless nic.path_mtu_bytes sets it",
           256, 4096},
          mtu_bytes);
  v.field({"path_mtu_bytes", "bytes",
           "path MTU of this NIC's queue pairs (IBTA: 256 .. 4096, at most both ends' nic.mtu_bytes); 0: the "
           "smaller of the two ends' nic.mtu_bytes",
           0, 4096},
          path_mtu_bytes);
  v.field({"reorder",
           "",
           "receiver PSN tracker implementation: Verilated RTL, its C++ reference model, or lockstep (both on every "
           "PSN, the run stopped at the first difference; docs/verification.md)",
           0,
           0,
           {"rtl", "ref", "lockstep"}},
          reorder);
  v.field({"reorder_window", "PSNs", "PSNs tracked beyond the in-order head (power of two)", 16, 4096}, reorder_window);
  v.field({"reorder_rtl", "",
           "a user's reorder tracker (.sv, relative to the scenario file; docs/rtl_contract.md), Verilated at run "
           "time and cached, in place of ours in every NIC with nic.reorder rtl or lockstep (lockstep: against the "
           "reference model); empty: ours. Same as run --user-rtl reorder_tracker=FILE"},
          reorder_rtl);
  v.field({"reorder_rtl_top", "", "nic.reorder_rtl: its top module (empty: reorder_tracker)"}, reorder_rtl_top);
  v.field({"clock_mhz", "MHz",
           "clock of the NIC's RTL blocks: the reorder tracker takes one transaction per data packet at its edges "
           "and stays busy for the cycles the RTL reports, packets waiting in order; the CNP generator takes one "
           "CE-marked arrival per cycle and its CNP leaves a cycle later; the DCQCN reaction point holds the "
           "NIC's paced packets while busy (2 cycles per packet sent, 1 more per timer) (estimate: "
           "docs/calibration.md)",
           0.001, 1e5},
          clock_mhz);
  v.field({"wqe_latency_ns", "ns", "work request posted to first packet ready", 0, 1e6}, wqe_latency_ns);
  v.field({"rx_latency_ns", "ns", "last bit received to placed and ACK ready", 0, 1e6}, rx_latency_ns);
  v.field({"link_layer",
           "",
           "ethernet: RoCEv2 frames; infiniband: LRH/BTH packets and credit-based flow control "
           "with the switch port (docs/quantum_x800.md); set by switch.model quantum_x800",
           0,
           0,
           {"ethernet", "infiniband"}},
          link_layer);
  v.field({"ack_every_packets", "packets", "ACK coalescing: in-order packets per ACK (also on message end)", 1, 65536},
          ack_every_packets);
  v.field({"path_entropy", "",
           "UDP source port: fixed per QP, a new one per packet (spraying), or a new one per flowlet (after the QP "
           "was idle for flowlet_gap_ns)",
           0, 0, path_entropy_names()},
          path_entropy);
  v.field(
      {"flowlet_gap_ns", "ns", "per_flowlet: idle gap since the QP's last packet that starts a new flowlet", 0, 1e9},
      flowlet_gap_ns);
  v.field({"random_initial_psn", "", "draw each QP's first PSN from the NIC's seeded stream"}, random_initial_psn);
  v.field({"initial_psn", "", "first PSN of every QP when random_initial_psn is false", 0, double(core::psn_mask)},
          initial_psn);
  v.field({"dscp", "", "DSCP of RoCE data and ACK packets", 0, 63}, dscp);
  v.field({"place_data", "", "copy payload bytes into host memory; false models timing only (no byte check)"},
          place_data);
  v.field({"placement",
           "",
           "received payloads: dmi copies them into host memory at once; pcie posts writes through the host's PCIe "
           "tray (pcie section; docs/pcie.md)",
           0,
           0,
           {"dmi", "pcie"}},
          placement);
  v.field({"rx_buffer_bytes", "bytes",
           "placement pcie: receive buffer for payload whose writes have not landed; a packet that would overflow "
           "it is dropped and counted (rx_buffer_drops)",
           4096, 1ull << 32},
          rx_buffer_bytes);
  v.field({"tx_read_ahead_packets", "packets",
           "placement pcie: packet payloads the NIC reads from memory ahead of the wire (non-posted reads in "
           "flight plus data waiting for its packet to leave); each holds an MTU-sized transmit buffer (estimate)",
           1, 65536},
          tx_read_ahead_packets);
  v.field({"rx_overflow",
           "",
           "placement pcie, receive buffer filling: pfc pauses the switch port (XOFF/XON at the thresholds below), "
           "drop drops what does not fit",
           0,
           0,
           {"pfc", "drop"}},
          rx_overflow);
  v.field({"rx_pfc_xoff_bytes", "bytes", "rx_overflow pfc: unlanded payload that sends XOFF (the rest is headroom)", 0,
           1ull << 32},
          rx_pfc_xoff_bytes);
  v.field({"rx_pfc_xon_bytes", "bytes", "rx_overflow pfc: unlanded payload below which XON goes", 0, 1ull << 32},
          rx_pfc_xon_bytes);
  v.field({"rx_pfc_quanta", "quanta", "rx_overflow pfc: pause time in XOFF frames, 512-bit times", 1, 65535},
          rx_pfc_quanta);
  v.field({"tx_fifo_frames", "frames",
           "MAC transmit FIFO depth: the scheduler commits up to this many frames ahead of the wire and refills "
           "when one is left",
           1, 64},
          tx_fifo_frames);
}

// Congestion control: the policy, its RTL blocks and their knobs.
void supernic_params::visit_congestion(core::param_visitor& v) {
  v.field({"cc", "",
           "congestion control: none (line rate, PFC only), dcqcn, hpcc (telemetry-driven window), ecn_only (a toy: "
           "a fixed cut per CNP, additive recovery) or dcqcn_distance (our distance-aware DCQCN: knobs and window "
           "scaled by each QP's measured base RTT)",
           0, 0, congestion_control_names()},
          cc);
  v.field({"dcqcn_preset",
           "",
           "DCQCN reaction-point knobs: NVIDIA firmware defaults, the paper's, or our 400G tuning (docs/dcqcn.md)",
           0,
           0,
           {"nvidia", "paper", "fabric_400g"}},
          dcqcn_preset);
  v.field({"dcqcn_model",
           "",
           "DCQCN reaction point: Verilated RTL, its C++ reference model, or lockstep (both)",
           0,
           0,
           {"rtl", "ref", "lockstep"}},
          dcqcn_model);
  v.field({"dcqcn_rtl", "",
           "a user's DCQCN reaction point (.sv, relative to the scenario file; docs/rtl_contract.md) in place of "
           "ours in every NIC with nic.dcqcn_model rtl or lockstep, as nic.reorder_rtl; run --user-rtl dcqcn_rp=FILE"},
          dcqcn_rtl);
  v.field({"dcqcn_rtl_top", "", "nic.dcqcn_rtl: its top module (empty: dcqcn_rp)"}, dcqcn_rtl_top);
  v.field({"cnp_model",
           "",
           "CNP generator (notification point): Verilated RTL, its C++ reference model, or lockstep (both)",
           0,
           0,
           {"rtl", "ref", "lockstep"}},
          cnp_model);
  v.field({"cnp_rtl", "",
           "a user's CNP generator (.sv, relative to the scenario file; docs/rtl_contract.md) in place of ours in "
           "every NIC with nic.cnp_model rtl or lockstep, as nic.reorder_rtl; run --user-rtl cnp_gen=FILE"},
          cnp_rtl);
  v.field({"cnp_rtl_top", "", "nic.cnp_rtl: its top module (empty: cnp_gen)"}, cnp_rtl_top);
  v.field({"rtl_mutant", "",
           "BLOCK:N (reorder_tracker, cnp_gen or dcqcn_rp): that block's RTL is the planted-bug mutant N "
           "(rtl/mutants/BLOCK/N.patch, built at configure time) wherever it runs as rtl or lockstep; empty: "
           "the real RTL (--rtl-mutant sets it)"},
          rtl_mutant);
  v.field({"cnp_interval_ns", "ns", "notification point: at most one CNP per flow (or port) per this interval", 0, 1e9},
          cnp_interval_ns);
  v.field({"cnp_time_origin_cycles", "cycles",
           "the notification point's free-running cycle counter at time 0: a NIC's counter runs from power-on, "
           "so its 32-bit time field (rtl/cnp_gen.sv) wraps at any moment of a job; near 2^32 a short run "
           "crosses the wrap (results do not change)",
           0, 4294967295.0},
          cnp_time_origin_cycles);
  v.field({"cnp_mode",
           "",
           "notification point moderation: per QP, or one context for the whole port",
           0,
           0,
           {"per_flow", "per_port"}},
          cnp_mode);
  v.field({"cnp_dscp", "", "DSCP of CNPs (NVIDIA default 48: priority 6)", 0, 63}, cnp_dscp);
  // Each reaction-point knob can be set over the preset; -1 keeps the preset's value. Ranges: dcqcn_params.
  v.field({"dcqcn_rpg_time_reset_us", "us", "DCQCN RPG_TIME_RESET over the preset (-1: preset)", -1, 4e6},
          dcqcn_rpg_time_reset_us);
  v.field({"dcqcn_rpg_byte_reset", "bytes", "DCQCN RPG_BYTE_RESET over the preset (-1: preset)", -1, 1 << 30},
          dcqcn_rpg_byte_reset);
  v.field({"dcqcn_rpg_threshold", "events", "DCQCN RPG_THRESHOLD over the preset (-1: preset)", -1, 31},
          dcqcn_rpg_threshold);
  v.field({"dcqcn_rpg_ai_rate_mbps", "Mb/s", "DCQCN RPG_AI_RATE over the preset (-1: preset)", -1, 4e6},
          dcqcn_rpg_ai_rate_mbps);
  v.field({"dcqcn_rpg_hai_rate_mbps", "Mb/s", "DCQCN RPG_HAI_RATE over the preset (-1: preset)", -1, 4e6},
          dcqcn_rpg_hai_rate_mbps);
  v.field({"dcqcn_rpg_min_rate_mbps", "Mb/s", "DCQCN RPG_MIN_RATE over the preset (-1: preset)", -1, 4e6},
          dcqcn_rpg_min_rate_mbps);
  v.field({"dcqcn_rpg_gd", "log2", "DCQCN RPG_GD over the preset (-1: preset)", -1, 15}, dcqcn_rpg_gd);
  v.field({"dcqcn_rpg_min_dec_fac", "%", "DCQCN RPG_MIN_DEC_FAC over the preset (-1: preset)", -1, 100},
          dcqcn_rpg_min_dec_fac);
  v.field({"dcqcn_dce_tcp_g", "1/1024", "DCQCN DCE_TCP_G over the preset (-1: preset)", -1, 1023}, dcqcn_dce_tcp_g);
  v.field({"dcqcn_dce_tcp_rtt_us", "us", "DCQCN DCE_TCP_RTT (alpha period) over the preset (-1: preset)", -1, 4e6},
          dcqcn_dce_tcp_rtt_us);
  v.field({"dcqcn_initial_alpha", "1/1024", "DCQCN INITIAL_ALPHA_VALUE over the preset (-1: preset)", -1, 1023},
          dcqcn_initial_alpha);
  v.field({"dcqcn_rate_reduce_monitor_period_us", "us", "DCQCN RATE_REDUCE_MONITOR_PERIOD over the preset (-1: preset)",
           -1, 4e6},
          dcqcn_rate_reduce_monitor_period_us);
}

// The window and toy controls: HPCC, ecn_only and the distance-aware DCQCN.
void supernic_params::visit_window_controls(core::param_visitor& v) {
  v.field({"hpcc_eta", "", "HPCC target utilization eta of the most loaded hop", 0.5, 1.0}, hpcc_eta);
  v.field({"hpcc_max_stage", "steps", "HPCC maxStage: additive steps before a multiplicative update", 0, 100},
          hpcc_max_stage);
  v.field({"hpcc_w_ai_bytes", "bytes", "HPCC additive window step W_AI", 1, 1e7}, hpcc_w_ai_bytes);
  v.field({"hpcc_base_rtt_us", "us", "HPCC base RTT T: the reference window at line rate is rate x T", 0.1, 1e4},
          hpcc_base_rtt_us);
  v.field({"ecn_only_cut_factor", "", "cc ecn_only (toy): each CNP multiplies the QP's rate by this", 0.01, 0.99},
          ecn_only_cut_factor);
  v.field({"ecn_only_ai_mbps", "Mb/s",
           "cc ecn_only (toy): rate added back every cnp_interval_ns after the last cut, up to the line rate", 1, 4e6},
          ecn_only_ai_mbps);
  v.field({"dcqcn_distance_ref_rtt_us", "us",
           "cc dcqcn_distance: reference base RTT; a QP measuring s times this scales its DCQCN timers, byte "
           "counter and monitor period by s",
           0.1, 1e5},
          dcqcn_distance_ref_rtt_us);
  v.field({"dcqcn_distance_max_scale", "", "cc dcqcn_distance: largest scale s of the DCQCN knobs", 1.0, 1e4},
          dcqcn_distance_max_scale);
  v.field({"dcqcn_distance_window_bdp", "BDP",
           "cc dcqcn_distance: bytes in flight per QP at most this x line rate x measured base RTT; 0: no window", 0.0,
           100.0},
          dcqcn_distance_window_bdp);
}

// Loss recovery and the work-request limits.
void supernic_params::visit_recovery(core::param_visitor& v) {
  v.field({"retransmission", "",
           "requester loss recovery: go_back_n resends everything from the lost PSN; selective resends only the "
           "PSN a NAK names (or, on a timeout, the oldest unacknowledged one); sack (not IBTA, after IRN): the "
           "responder SACKs every out-of-order arrival and the requester resends each PSN SACKs show missing",
           0, 0, loss_recovery_names()},
          retransmission);
  v.field({"sack_reorder_packets", "PSNs",
           "retransmission sack: an unacknowledged PSN is taken as lost once a PSN this far beyond it has been "
           "SACKed (above the fabric's reordering depth, or reordering causes resends)",
           1, 4096},
          sack_reorder_packets);
  v.field({"rto_us", "us",
           "retransmission (local ACK) timeout: no progress for this long resends the oldest unacknowledged PSN; "
           "IB encodes it as 4.096 us x 2^n",
           0.1, 1e7},
          rto_us);
  v.field({"retry_count", "retries",
           "IB retry_cnt: timeouts and NAK retries without progress before the QP goes to the error state and its "
           "work requests complete in error",
           0, 7},
          retry_count);
  v.field({"nak_threshold_packets", "PSNs",
           "responder: a NAK (PSN sequence error) for the expected PSN, once per gap, when a packet has arrived "
           "this far beyond it (capped at half of reorder_window); 1 NAKs at the first out-of-order arrival",
           1, 16777215},
          nak_threshold_packets);
  v.field({"sq_depth", "WRs", "send queue depth: work requests per QP in flight at once; later ones wait", 1, 1 << 20},
          sq_depth);
  v.field({"max_rd_atomic", "READs", "READ requests per QP outstanding at once (ibv_qp_attr.max_rd_atomic)", 1, 255},
          max_rd_atomic);
  v.field({"send_window_packets", "PSNs",
           "requester: PSNs in flight per QP (sent and not acknowledged) at most; set it to the responder's "
           "reorder_window so that a loss does not push later packets out of its window (0: no limit)",
           0, 16777215},
          send_window_packets);
  v.field({"rnr_timer_us", "us",
           "receiver not ready: the requester waits this long after an RNR NAK, then resends from its PSN "
           "(IBTA encodes 0.01 .. 655.36 ms)",
           0.01, 1e6},
          rnr_timer_us);
  v.field({"rnr_retry_count", "retries",
           "RNR NAKs without progress before the QP errors (IBV_WC_RNR_RETRY_EXC_ERR); 7 retries for ever", 0, 7},
          rnr_retry_count);
}

}  // namespace fabricsim::nic
