// The SuperNIC: RoCEv2 reliable-connected queue pairs. The requester segments RDMA WRITEs (with or without
// immediate) and SENDs at the path MTU with consecutive 24-bit PSNs, and issues RDMA READ requests that
// reserve one PSN per response packet; the responder tracks PSNs with the reorder tracker (RTL or its
// reference model), places WRITE payloads straight into host memory at their offsets in whatever order
// packets arrive, places SEND payloads into posted receive buffers as its in-order head passes them (a SEND
// MIDDLE names no buffer: which message it belongs to is only certain once every earlier PSN is in),
// answers READs with READ RESPONSE packets that the requester places at their offsets in any order, and
// acknowledges. A SEND or WRITE with immediate that finds no receive posted gets an RNR NAK; the requester
// resends from that PSN after nic.rnr_timer_us. One transmit scheduler owns the port: one kernel event per transmitted packet.
// Loss recovery (IBTA RC): the responder re-acknowledges duplicates and sends a NAK "PSN sequence error" for
// its expected PSN once per gap; the requester resends go-back-N or selectively, on NAK or on the local ACK
// timeout, and after nic.retry_count fruitless retries moves the QP to the error state (error completions).
#pragma once

#include <tlm_utils/simple_initiator_socket.h>

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <systemc>
#include <tlm>
#include <vector>

#include "sc_models/core/link.h"
#include "sc_models/core/params.h"
#include "sc_models/core/ring.h"
#include "sc_models/core/rng.h"
#include "sc_models/core/sim_context.h"
#include "sc_models/ib/credit_link.h"
#include "sc_models/memory/landing_observer.h"
#include "sc_models/memory/payload_pattern.h"
#include "sc_models/nic/ack_engine.h"
#include "sc_models/nic/cnp_gen.h"
#include "sc_models/nic/dcqcn_rp.h"
#include "sc_models/nic/hpcc.h"
#include "sc_models/nic/loss_recovery.h"
#include "sc_models/nic/mac_transmit.h"
#include "sc_models/nic/nic_counters.h"
#include "sc_models/nic/placement_fault.h"
#include "sc_models/nic/reorder_tracker.h"
#include "sc_models/nic/requester.h"
#include "sc_models/nic/responder.h"
#include "sc_models/nic/work_request.h"

namespace fabricsim::nic {

struct supernic_params {
  uint64_t mtu_bytes = 4096;    // the NIC's largest MTU: 256, 512, 1024, 2048 or 4096
  uint64_t path_mtu_bytes = 0;  // its queue pairs' path MTU; 0: the smaller of the two ends' mtu_bytes
  std::string reorder = "rtl";  // receiver PSN tracking: "rtl" (Verilated), "ref" (C++ model) or both
                                // in "lockstep" (sc_models/nic/block_lockstep.h)
  // A user's reorder tracker (docs/rtl_contract.md): Verilated at run time in place of ours for nic.reorder
  // rtl or lockstep, in every NIC (testbench/user_rtl.h). The NIC never reads these; the run set-up does.
  std::string reorder_rtl;             // the .sv file, relative to the scenario file; empty: ours
  std::string reorder_rtl_top;         // its top module; empty: reorder_tracker
  uint64_t reorder_window = 256;       // PSNs tracked beyond the in-order head
  // Clock of the NIC's RTL blocks: the reorder tracker takes one transaction per packet at this clock and is
  // busy for the cycles the RTL reports (sc_models/nic/block_clock.h); the CNP generator and the DCQCN
  // reaction point take theirs at it too (block_timing.h; estimate, docs/calibration.md).
  double clock_mhz = 1000.0;
  double wqe_latency_ns = 200.0;       // work request posted -> first packet ready (estimate)
  double rx_latency_ns = 200.0;        // last bit in -> placed and ACK ready (estimate)
  uint64_t ack_every_packets = 16;     // ACK coalescing: one ACK per this many in-order packets, or on AckReq
  std::string path_entropy = "fixed";  // UDP source port: "fixed" per QP, "per_packet" (spraying) or
                                       // "per_flowlet" (a new one after an idle gap of flowlet_gap_ns)
  double flowlet_gap_ns = 1000.0;      // per_flowlet: a QP idle this long starts a new flowlet (new port)
  bool random_initial_psn = true;      // initial PSN drawn from the NIC's seeded stream, as real NICs do
  uint64_t initial_psn = 0;            // used when random_initial_psn is false
  std::string link_layer = "ethernet";  // "infiniband": LRH/BTH packets, credit flow control to the switch
  uint64_t dscp = 26;                  // RoCE traffic class (NVIDIA default: priority 3)
  bool place_data = true;              // copy payloads into host memory (off: timing only, memory untouched)
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
  uint64_t rx_pfc_quanta = 65535;      // pause time in XOFF frames, 512-bit times (refreshed at half of it)
  uint64_t tx_fifo_frames = 4;         // MAC transmit FIFO: frames the scheduler may commit ahead of the wire
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
  std::string dcqcn_rtl;                // the .sv file, relative to the scenario file; empty: ours
  std::string dcqcn_rtl_top;            // its top module; empty: dcqcn_rp
  std::string cnp_model = "rtl";        // notification point: Verilated rtl/cnp_gen.sv or its C++ model
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
  double rto_us = 65.536;              // local ACK timeout: 4.096 us x 2^4 (IBTA C9-141 encoding, exponent 4)
  uint64_t retry_count = 7;            // IB retry_cnt (3 bits): retries without progress before the QP errors
  uint64_t nak_threshold_packets = 2048;  // responder: NAK the expected PSN once a packet arrives this far
                                         // beyond it (at most half the reorder window); requester: re-issue a
                                         // READ for a missing response once one arrives this far beyond it
  uint64_t sack_reorder_packets = 128;  // sack: a PSN is lost once one this far beyond it has been SACKed
  // Work request limits and receiver not ready (IBTA RC).
  uint64_t sq_depth = 32768;           // send queue depth: work requests in flight per QP (later ones wait)
  uint64_t max_rd_atomic = 16;         // READ requests outstanding per QP (ibv_qp_attr.max_rd_atomic)
  uint64_t send_window_packets = 0;    // PSNs in flight per QP (sent, not acknowledged); 0: no limit
  double rnr_timer_us = 10.24;         // requester wait after an RNR NAK before resending (responder's timer)
  uint64_t rnr_retry_count = 7;        // RNR NAKs without progress before the QP errors; 7 = retry for ever
  void visit(core::param_visitor& v);
};

// A queue pair as the report sees it at one instant (read-only; testbench sampling and figures).
struct qp_status {
  bool paced = false;          // a DCQCN reaction point or the HPCC window paces it (nic.cc dcqcn, hpcc)
  double rate_mbps = 0.0;      // DCQCN current rate, HPCC W / T; the line rate without congestion control
  double target_mbps = 0.0;    // DCQCN target rate; the line rate without congestion control
  double alpha = 0.0;          // DCQCN congestion estimate, 0..1 (0 without congestion control)
  double window_bytes = 0.0;   // HPCC window W (0 unless nic.cc hpcc)
  uint64_t inflight_bytes = 0; // requester: bytes sent and not yet acknowledged (whole packets at the MTU)
  double utilization = 0.0;    // HPCC normalized inflight U (0 unless nic.cc hpcc)
  uint64_t outstanding = 0;    // requester: work requests posted and not yet completed
  uint64_t placed_bytes = 0;   // responder: payload bytes placed for this QP so far
};

// Where the NIC's received payloads land with nic.placement pcie (a host tray, sc_models/pcie/host_tray.h):
// posted writes into the memory system, and what is still in flight.
class placement_target {
 public:
  virtual ~placement_target() = default;
  // A posted write of `length` bytes at the workload address `va`; `data` stays valid (it points into the
  // sender's memory, which a workload does not change while it runs).
  virtual void post_write(uint64_t va, const uint8_t* data, uint64_t length) = 0;
  // Payload bytes issued and not yet landed (the NIC's receive buffer occupancy).
  virtual uint64_t bytes_in_flight() const = 0;
  // A message's last write has been issued (WRITE placed, SEND in its buffer, READ response data in).
  virtual void message_issued(uint64_t va, uint64_t bytes) = 0;
  // Called (by the target) whenever writes have landed and bytes_in_flight() fell.
  void set_on_landed(std::function<void()> f) { m_on_landed = std::move(f); }

  // Transmit: read `length` bytes at the workload address `va` into `dst` with non-posted reads (GPU memory,
  // or host memory for a bounce buffer); the read-done callback gets `cookie` when the last completion is in.
  virtual void post_read(uint64_t va, uint8_t* dst, uint64_t length, uint64_t cookie) = 0;
  // Transmit, bounce buffer: the payload at [va, +bytes) must first be copied from GPU to host memory, no
  // earlier than `at`; the staged callback gets `cookie` once the copy is done and the host has posted the
  // send. Copies finish in the order asked. False: no staging on this path (GPUDirect reads GPU memory).
  virtual bool stage_send(uint64_t va, uint64_t bytes, core::picoseconds at, uint64_t cookie) = 0;
  void set_on_read(std::function<void(uint64_t)> f) { m_on_read = std::move(f); }
  void set_on_staged(std::function<void(uint64_t)> f) { m_on_staged = std::move(f); }

 protected:
  std::function<void()> m_on_landed;
  std::function<void(uint64_t)> m_on_read;
  std::function<void(uint64_t)> m_on_staged;
};

// A block beside the RC engine that sends and receives its own packets on the NIC's port (SHARP:
// sc_models/switch/quantum/sharp_host.h). Its packets share the transmit scheduler, the credit check and
// the link; received SHARP packets go to it.
class port_client {
 public:
  virtual ~port_client() = default;
  // The next packet to send at `t`, or nullptr; lowers `*next_ready` to when one will be.
  virtual core::packet* next_packet(core::picoseconds t, core::picoseconds* next_ready) = 0;
  virtual void receive(core::packet* p) = 0;
};

class block_clock;
class congestion_control;
class path_entropy;

class supernic : public sc_core::sc_module,
                 public core::packet_sink,
                 public sw::ib::credit_peer,
                 private recovery_host,
                 private ack_host,
                 private responder_host,
                 private requester_host {
 public:
  void attach_port_client(port_client* c) { m_client = c; }
  void wake_port_client(core::picoseconds at) {
    if (m_started) wake_transmitter(at);
  }
  // DMA into host memory: DMI for placement and source reads, taken once at the end of elaboration.
  tlm_utils::simple_initiator_socket<supernic> dma;

  SC_HAS_PROCESS(supernic);
  supernic(sc_core::sc_module_name name, const supernic_params& params, core::ip_address ip, uint64_t mac,
           core::sim_context& ctx);
  supernic(const supernic&) = delete;
  supernic& operator=(const supernic&) = delete;
  ~supernic() override;

  // Elaboration.
  void connect(core::link& out);
  // nic.link_layer infiniband: a credit update from the switch port (the far end of the host link).
  void credit_update(unsigned port, unsigned vl, uint64_t fccl_blocks) override;
  const sw::ib::credit_sender& ib_sender() const { return m_mac_tx->credits(); }
  sw::ib::credit_receiver* ib_receiver() { return m_ib_rx.get(); }  // null unless nic.link_layer infiniband
  sw::ib::credit_receiver* receiver_at(unsigned /*port*/) override { return ib_receiver(); }
  unsigned receiver_vls() const override { return 1; }       // one data VL
  uint32_t register_region(uint64_t addr, uint64_t length);  // returns the R_Key
  uint32_t create_qp();                                      // returns the local QPN
  // RC connection: the remote end's address and QPN; `sq_psn` is this side's first send PSN and `rq_psn`
  // the first PSN it expects from the peer (the peer's sq_psn).
  // `path_mtu`: the QP's payload bytes per packet (0: nic.mtu_bytes); both ends of a QP must use the same one.
  void connect_qp(uint32_t qpn, core::ip_address remote_ip, uint32_t remote_qpn, uint32_t sq_psn, uint32_t rq_psn,
                  uint64_t path_mtu = 0);
  // The first send PSN this NIC would pick for a new QP (seeded stream or the fixed parameter).
  uint32_t draw_initial_psn();
  // The rules behind the three calls above, for a NIC that is not built here: a scale-out run
  // (docs/scale_out.md) numbers the queue pairs, regions and PSNs of a NIC another process simulates with
  // them, so that both ends of a queue pair agree. `stream` is the NIC's seeded stream (nic_stream), drawn
  // from only by draw_initial_psn before the run starts.
  static constexpr uint32_t first_qpn = 2;  // QP0 and QP1 are the special management QPs
  static uint32_t qpn_of(size_t index) { return first_qpn + uint32_t(index); }  // the index-th create_qp()
  static uint32_t rkey_of(size_t index) { return uint32_t(index) + 1; }        // the index-th register_region()
  static core::rng_stream nic_stream(uint64_t seed, const std::string& nic_name);
  static uint32_t initial_psn(const supernic_params& params, core::rng_stream& stream);

  // Posts an RDMA WRITE of `length` bytes from local `local_addr` to the peer's `remote_addr`; the work
  // request becomes visible to the NIC at `post_at` (which may be in the future).
  void post_write(uint32_t qpn, uint64_t wr_id, uint64_t local_addr, uint64_t remote_addr, uint32_t rkey,
                  uint64_t length, core::picoseconds post_at);
  // Any operation. write/write_imm: local -> remote; send/send_imm: local -> the peer's next posted receive
  // (remote_addr and rkey unused); read: the peer's remote_addr -> local_addr. `imm` rides on *_imm.
  void post(uint32_t qpn, uint64_t wr_id, rdma_op op, uint64_t local_addr, uint64_t remote_addr, uint32_t rkey,
            uint64_t length, core::picoseconds post_at, uint32_t imm = 0);
  // A receive buffer for the peer's SENDs (and a receive for its WRITEs with immediate), consumed in order.
  void post_recv(uint32_t qpn, uint64_t wr_id, uint64_t addr, uint64_t length);

  void receive(core::packet* p, unsigned port) override;
  // nic.placement pcie: where payloads are written (elaboration; required with pcie).
  void set_placement(placement_target& t) {
    m_placement = &t;
    t.set_on_landed([this] { rx_drained(); });
    t.set_on_read([this](uint64_t cookie) { tx_read_done(cookie); });
    t.set_on_staged([this](uint64_t cookie) { tx_staged(cookie); });
  }

  // Generated payloads (elaboration; not with nic.placement pcie): this NIC's source bytes are `pattern`'s
  // for `host`, named in each packet as (host, address) and never read from memory; received payloads are
  // generated from their packet's reference where they land and are not stored (memory untouched).
  void set_generated_payloads(const memory::payload_pattern& pattern, uint32_t host) {
    m_pattern = &pattern;
    m_host = host;
  }
  // Every payload write, as it lands (after a planted misplacement): a scoreboard checks it there.
  void set_landing_observer(memory::landing_observer* o) { m_landing = o; }

  const std::vector<completion>& completions() const { return m_requester->completions(); }
  const std::vector<placed_message>& placed() const { return m_placed; }
  // Called at the instant a message is recorded in placed() (a collective engine posts what depended on it).
  void set_placed_callback(std::function<void(const placed_message&)> cb) { m_on_placed = std::move(cb); }
  const std::vector<recv_completion>& recv_completions() const { return m_responder->recv_completions(); }
  uint64_t outstanding_work() const;  // posted WRs not yet completed (successfully or in error)
  const supernic_params& params() const { return m_params; }
  const core::link* out_link() const { return m_out; }  // the NIC's transmit link (line rate)
  // nic.placement pcie: the transmit buffer, where the NIC's PCIe reads put each payload at its own address
  // (a packet's payload refers into it); nullptr otherwise. Its size is the memory's (memory_size()).
  const uint8_t* transmit_buffer() const { return m_tx_buf.get(); }
  uint64_t memory_size() const { return m_mem_size; }
  qp_status qp_state(uint32_t qpn) const;  // `qpn` as create_qp() returned it
  // A planted placement fault (faults kind misplace): armed before the run, read by the report after it.
  placement_fault& misplace_fault() { return m_misplace; }

 private:
  // nic.placement pcie: one packet's payload read ahead into a transmit buffer.
  struct tx_fetch {
    uint32_t psn;   // the data packet's PSN (READ responses: unused, they go in order)
    uint64_t seq;   // the read's number (its cookie)
    bool done;      // every completion is in
  };
  struct queue_pair;

  // Transmit scheduler: ACKs first, then round-robin over QPs with sendable work.
  void transmit();
  void wake_transmitter(core::picoseconds at);
  core::packet* next_ack();
  core::packet* next_data(core::picoseconds* next_ready);
  core::packet* build_read_response(queue_pair& qp, read_job& job);
  uint16_t data_port(queue_pair& qp);  // UDP source port of the next data packet (path entropy)
  void account_data(queue_pair& qp, core::packet* p);  // pacing
  // The requester (requester.h) asks for packets with their headers, payloads, staging and wake-ups.
  core::packet* data_packet(size_t q) override;
  void attach_payload(size_t q, core::packet* p, uint64_t va, uint64_t bytes, bool fresh) override;
  bool payload_ready(size_t q, uint32_t psn, const work_request& wr) override;
  core::picoseconds staged_at(size_t q, uint64_t va, uint64_t length, core::picoseconds post_at) override;
  void place_response(uint64_t va, const core::packet* p) override { write_payload(va, p); }
  void work_retired(size_t q, const work_request& wr) override;
  void qp_failed(size_t q) override { drop_fetches(*m_qps[q]); }
  void requester_wake(core::picoseconds at) override;
  void on_read_response(core::packet* p);
  // The responder (responder.h) asks for placement, records placed messages and queues READ responses.
  void place_payload(uint64_t va, const core::packet* p) override { write_payload(va, p); }
  void message_placed(const placed_message& done) override;  // into placed(), then the placed callback
  core::picoseconds response_ready(size_t q, uint64_t va, uint64_t length, core::picoseconds ready) override;
  void response_queued(core::picoseconds ready) override;
  // Loss recovery at the requester: the scheme (nic.retransmission, loss_recovery.h) keeps the timers and
  // what to resend; the requester acknowledges, completes and fails work requests.
  send_queue& recovery_sender(size_t q) override;
  void recovery_failed(size_t q) override;
  void recovery_wake(core::picoseconds at) override;
  void recovery_idle() override;
  // Receive paths.
  void on_ack(core::packet* p);
  // A request packet (WRITE, SEND, READ request) at its reorder-block transaction: to the responder.
  void on_request(core::packet* p);
  // The acknowledgements and CNPs owed (ack_engine.h): the engine decides, the NIC builds the packets.
  uint32_t ack_head(size_t q) const override;
  void ack_wake(core::picoseconds ready) override;
  // Congestion control: the policy (nic.cc) paces the QPs; the NIC sends and receives its CNPs.
  void on_cnp(core::packet* p);                 // reaction point: a CNP for one of our QPs
  void notify_congestion(queue_pair& qp);       // notification point: a CE-marked arrival
  core::packet* next_cnp();                     // a CNP whose generator result is due, if any
  void fill_headers(core::packet* p, const queue_pair& qp, uint16_t src_port);

  void end_of_elaboration() override;
  void start_of_simulation() override;
  void check_work_request(const work_request& wr) const;

  supernic_params m_params;
  // nic.link_layer infiniband: the HCA end of the credit flow control (one data VL).
  bool m_ib = false;
  port_client* m_client = nullptr;  // attach_port_client
  // The MAC transmit side: FIFO, the PFC pause of our priority, the credits of the data VL (mac_transmit.h).
  std::unique_ptr<mac_transmit> m_mac_tx;
  std::unique_ptr<sw::ib::credit_receiver> m_ib_rx;
  uint8_t* m_mem_ptr = nullptr;  // DMI view of host memory
  placement_target* m_placement = nullptr;  // nic.placement pcie
  placement_fault m_misplace;               // off unless a scenario's faults arm it
  const memory::payload_pattern* m_pattern = nullptr;  // set_generated_payloads
  uint32_t m_host = 0;
  memory::landing_observer* m_landing = nullptr;
  std::vector<uint8_t> m_landing_bytes;  // a generated payload made where it lands (one packet's worth)
  // Places `p`'s payload at `va`: a memcpy through DMI, a posted write through the PCIe tray, or (generated
  // payloads) nothing stored; the landing observer sees it either way.
  void write_payload(uint64_t va, const core::packet* p);
  // Sets `p`'s payload reference to [va, +length) of this NIC's source memory (a pointer, or generated).
  void refer_payload(core::packet* p, uint64_t va);
  // nic.placement pcie: false (and the packet counted) when its payload would overflow the receive buffer.
  bool rx_buffer_admits(const core::packet* p);
  // nic.rx_overflow pfc: XON once the buffer has drained below rx_pfc_xon_bytes.
  void rx_drained();
  // Receive-buffer occupancy: payload waiting for the clocked reorder block, plus (nic.placement pcie)
  // payload whose writes have not landed.
  uint64_t rx_buffer_occupancy() const;
  // The reorder tracker as clocked hardware (nic.clock_mhz): data packets wait in it for their transaction.
  std::unique_ptr<block_clock> m_rx_block;
  // nic.placement pcie, transmit: payload reads ahead of the wire (docs/pcie.md).
  bool m_tx_pcie = false;
  std::unique_ptr<uint8_t[]> m_tx_buf;  // the transmit buffers, kept at the payload's own address (see prefetch)
  uint64_t m_tx_slots = 0;              // packet buffers read into or waiting for their packet to leave
  uint64_t m_tx_reads_outstanding = 0, m_tx_zombie_reads = 0, m_tx_read_seq = 0;
  size_t m_fetch_rr = 0;
  core::ring<core::picoseconds> m_tx_departures{16};  // when each sent packet holding a buffer leaves the wire
  bool m_tx_took_slot = false;                         // the packet just built holds a buffer
  void prefetch();
  bool fetch_one(queue_pair& qp, size_t index);
  void issue_fetch(queue_pair& qp, size_t index, bool response, uint32_t psn, uint64_t va, uint64_t length);
  bool data_fetched(queue_pair& qp, uint32_t psn, const work_request& wr);  // may the new PSN `psn` go?
  void tx_read_done(uint64_t cookie);
  void tx_staged(uint64_t cookie);
  void drop_fetches(queue_pair& qp);
  uint64_t m_tx_reads = 0, m_tx_read_bytes = 0, m_tx_peak_reads = 0, m_tx_peak_slots = 0, m_tx_read_waits = 0;
  core::packet* next_pfc();  // an XOFF (or its refresh) or XON owed to the switch, if any
  bool m_rx_xoff = false;    // the switch port above is paused by us
  bool m_rx_pfc = false;     // nic.rx_overflow pfc
  bool m_pfc_owed = false;   // a PFC frame (XOFF if m_rx_xoff, else XON) waits for the wire
  core::picoseconds m_pfc_refresh_at{UINT64_MAX};
  uint64_t m_tx_pause_frames = 0;
  uint64_t m_mem_size = 0;
  bool m_started = false;
  core::ip_address m_ip;
  uint64_t m_mac;
  core::sim_context& m_ctx;
  core::rng_stream m_rng;
  core::link* m_out = nullptr;
  core::picoseconds m_wqe_latency, m_rx_latency;
  std::unique_ptr<path_entropy> m_entropy;  // nic.path_entropy: the UDP source port of data packets
  // nic.retransmission. Its one pending timer wake-up (the earliest QP deadline) is served by the
  // transmitter's own event: no extra process.
  std::unique_ptr<loss_recovery> m_lr;
  sc_core::sc_event m_tx_event;
  core::picoseconds m_tx_wake{UINT64_MAX};  // earliest pending transmitter wake-up
  // PFC: the switch port above may pause the priority the NIC's frames travel on (priority = DSCP / 8).
  unsigned m_priority;
  void on_pause(const core::packet* p);
  std::vector<std::unique_ptr<queue_pair>> m_qps;
  shared_counters m_shared;                  // rx_access_errors, placed_bytes, sack_overflow
  std::unique_ptr<ack_engine> m_ack;         // ACKs, NAKs, SACKs and CNPs owed
  std::unique_ptr<responder> m_responder;    // tracker, stash, placement, receive queue, SEND, READ serving
  std::unique_ptr<requester> m_requester;    // work-request ring, segmentation, PSNs, READ requests
  std::unique_ptr<congestion_control> m_cc;  // nic.cc
  size_t m_rr = 0;                           // round-robin position over QPs
  std::vector<placed_message> m_placed;
  std::function<void(const placed_message&)> m_on_placed;

  // Counters.
  uint64_t m_tx_packets = 0;
  uint64_t m_rx_packets = 0, m_rx_unknown_qp = 0, m_rx_acks = 0;
  uint64_t m_rx_pause_frames = 0, m_rx_buffer_drops = 0;
  uint64_t m_rx_ecn_marked = 0, m_rx_cnps = 0;
  uint64_t m_tx_read_responses = 0, m_rx_read_responses = 0;
};

}  // namespace fabricsim::nic
