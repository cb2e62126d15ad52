// The SuperNIC: RoCEv2 reliable-connected queue pairs. The requester segments RDMA WRITEs (with or without
// immediate) and SENDs at the path MTU with consecutive 24-bit PSNs, and issues RDMA READ requests that
// reserve one PSN per response packet; the responder tracks PSNs with the reorder tracker (RTL or its
// reference model), places WRITE payloads straight into host memory at their offsets in whatever order
// packets arrive, places SEND payloads into posted receive buffers as its in-order head passes them (a SEND
// MIDDLE names no buffer: which message it belongs to is only certain once every earlier PSN is in),
// answers READs with READ RESPONSE packets that the requester places at their offsets in any order, and
// acknowledges. A SEND or WRITE with immediate that finds no receive posted gets an RNR NAK; the requester
// resends from that PSN after nic.rnr_timer_us. One transmit scheduler owns the port, woken through the run's transmit
// calendar. Loss recovery (IBTA RC): the responder re-acknowledges duplicates and sends a NAK "PSN sequence error" for
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
#include "sc_models/nic/payload_dma.h"
#include "sc_models/nic/placement_fault.h"
#include "sc_models/nic/reorder_tracker.h"
#include "sc_models/nic/requester.h"
#include "sc_models/nic/responder.h"
#include "sc_models/nic/supernic_params.h"
#include "sc_models/nic/work_request.h"

namespace fabricsim::nic {

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
                 private requester_host,
                 private payload_dma_host,
                 private core::wakeup_client {
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
    m_dma->set_placement(t);
    t.set_on_landed([this] { rx_drained(); });
  }

  // Generated payloads (elaboration; not with nic.placement pcie): this NIC's source bytes are `pattern`'s
  // for `host`, named in each packet as (host, address) and never read from memory; received payloads are
  // generated from their packet's reference where they land and are not stored (memory untouched).
  void set_generated_payloads(const memory::payload_pattern& pattern, uint32_t host) {
    m_dma->set_generated(pattern, host);
  }
  // Every payload write, as it lands (after a planted misplacement): a scoreboard checks it there.
  void set_landing_observer(memory::landing_observer* o) { m_dma->set_landing_observer(o); }

  const std::vector<completion>& completions() const { return m_requester->completions(); }
  const std::vector<placed_message>& placed() const { return m_placed; }
  // Called at the instant a message is recorded in placed() (a collective engine posts what depended on it).
  void set_placed_callback(std::function<void(const placed_message&)> cb) { m_on_placed = std::move(cb); }
  const std::vector<recv_completion>& recv_completions() const { return m_responder->recv_completions(); }
  uint64_t outstanding_work() const;  // posted WRs not yet completed (successfully or in error)
  // The posted WRs not yet completed: whether every one is an RDMA WRITE (without immediate), and the fewest
  // packets of any (0 when none is posted). The memory guard's send-window bound holds for WRITEs only.
  struct posted_work {
    bool all_writes = true;
    uint64_t fewest_packets = 0;
  };
  posted_work posted_work_kinds() const;
  const supernic_params& params() const { return m_params; }
  size_t qp_count() const { return m_qps.size(); }      // queue pairs created (each has a reorder stash)
  const core::link* out_link() const { return m_out; }  // the NIC's transmit link (line rate)
  // nic.placement pcie: the transmit buffer, where the NIC's PCIe reads put each payload at its own address
  // (a packet's payload refers into it); nullptr otherwise. Its size is the memory's (memory_size()).
  const uint8_t* transmit_buffer() const { return m_dma->transmit_buffer(); }
  uint64_t memory_size() const { return m_dma->memory_size(); }
  qp_status qp_state(uint32_t qpn) const;  // `qpn` as create_qp() returned it
  // A planted placement fault (faults kind misplace): armed before the run, read by the report after it.
  placement_fault& misplace_fault() { return m_dma->misplace_fault(); }

 private:
  struct queue_pair;

  // Transmit scheduler: ACKs first, then round-robin over QPs with sendable work.
  void transmit();
  void wake_transmitter(core::picoseconds at);
  void on_wake(core::picoseconds t) override;  // the transmit calendar's wake-up
  void initial_transmit();                     // once at time 0: work posted before the start
  // Each at the transmitter's run time `t`.
  core::packet* next_ack(core::picoseconds t);
  core::packet* next_data(core::picoseconds t, core::picoseconds* next_ready);
  core::packet* build_read_response(queue_pair& qp, read_job& job, core::picoseconds t);
  uint16_t data_port(queue_pair& qp, core::picoseconds t);  // UDP source port of the next data packet (path entropy)
  void account_data(queue_pair& qp, core::packet* p, core::picoseconds t);  // pacing
  // The requester (requester.h) asks for packets with their headers, payloads, staging and wake-ups.
  core::packet* data_packet(size_t q, core::picoseconds t) override;
  void attach_payload(size_t q, core::packet* p, uint64_t va, uint64_t bytes, bool fresh) override;
  bool payload_ready(size_t q, uint32_t psn, const work_request& wr) override;
  core::picoseconds staged_at(size_t q, uint64_t va, uint64_t length, core::picoseconds post_at) override;
  void place_response(uint64_t va, const core::packet* p) override { m_dma->write(va, p); }
  void work_retired(size_t q, const work_request& wr) override { m_dma->work_retired(q, wr); }
  void qp_failed(size_t q) override { m_dma->qp_failed(q); }
  void requester_wake(core::picoseconds at) override;
  void on_read_response(core::packet* p);
  // The responder (responder.h) asks for placement, records placed messages and queues READ responses.
  void place_payload(uint64_t va, const core::packet* p) override { m_dma->write(va, p); }
  void message_placed(const placed_message& done) override;  // into placed(), then the placed callback
  core::picoseconds response_ready(size_t q, uint64_t va, uint64_t length, core::picoseconds ready) override;
  void response_queued(core::picoseconds ready) override;
  // Loss recovery at the requester: the scheme (nic.retransmission, loss_recovery.h) keeps the timers and
  // what to resend; the requester acknowledges, completes and fails work requests.
  send_queue& recovery_sender(size_t q) override;
  void recovery_failed(size_t q) override;
  void recovery_wake(core::picoseconds at) override;
  void recovery_idle() override;
  // The payload DMA (payload_dma.h) reads the QPs' work requests and READ responses and wakes the transmitter.
  bool dma_qp_live(size_t q) const override;
  send_queue& dma_send_queue(size_t q) override;
  core::ring<read_job>& dma_responses(size_t q) override;
  void dma_wake(core::picoseconds at) override { wake_transmitter(at); }
  // Receive paths.
  void on_ack(core::packet* p, core::picoseconds t);
  // A request packet (WRITE, SEND, READ request) at its reorder-block transaction: to the responder.
  void on_request(core::packet* p);
  // The acknowledgements and CNPs owed (ack_engine.h): the engine decides, the NIC builds the packets.
  uint32_t ack_head(size_t q) const override;
  void ack_wake(core::picoseconds ready) override;
  // Congestion control: the policy (nic.cc) paces the QPs; the NIC sends and receives its CNPs.
  void on_cnp(core::packet* p);                 // reaction point: a CNP for one of our QPs
  void notify_congestion(queue_pair& qp);       // notification point: a CE-marked arrival
  core::packet* next_cnp(core::picoseconds t);  // a CNP whose generator result is due, if any
  void fill_headers(core::packet* p, const queue_pair& qp, uint16_t src_port);

  static void check_params(const supernic_params& params, const std::string& inst);
  void register_counters(const std::string& inst);
  void end_of_elaboration() override;
  void start_of_simulation() override;
  void check_work_request(const work_request& wr) const;

  // nic.placement pcie: false (and the packet counted) when its payload would overflow the receive buffer.
  bool rx_buffer_admits(const core::packet* p);
  // nic.rx_overflow pfc: XON once the buffer has drained below rx_pfc_xon_bytes.
  void rx_drained();
  // Receive-buffer occupancy: payload waiting for the clocked reorder block, plus (nic.placement pcie)
  // payload whose writes have not landed.
  uint64_t rx_buffer_occupancy() const;
  core::packet* next_pfc(core::picoseconds t);  // an XOFF (or its refresh) or XON owed to the switch, if any
  void on_pause(const core::packet* p, core::picoseconds t);

  // ---- What a transmitter run or a received packet reads comes first, together (four cache lines after
  // the module's bases); the parameters and the cold state after it. A NIC is cold at nearly every packet of
  // a large fabric, so each line here is a miss per packet (docs/performance.md, "The NIC's hot path").
  core::sim_context& m_ctx;
  port_client* m_client = nullptr;  // attach_port_client
  // The MAC transmit side: FIFO, the PFC pause of our priority, the credits of the data VL (mac_transmit.h).
  std::unique_ptr<mac_transmit> m_mac_tx;
  // nic.link_layer infiniband: the HCA end of the credit flow control (one data VL).
  std::unique_ptr<sw::ib::credit_receiver> m_ib_rx;
  // Payloads: DMI or PCIe placement, transmit reads ahead of the wire, bounce buffers, generated payloads.
  std::unique_ptr<payload_dma> m_dma;
  // The reorder tracker as clocked hardware (nic.clock_mhz): data packets wait in it for their transaction.
  std::unique_ptr<block_clock> m_rx_block;
  core::link* m_out = nullptr;
  std::unique_ptr<path_entropy> m_entropy;  // nic.path_entropy: the UDP source port of data packets
  // nic.retransmission. Its one pending timer wake-up (the earliest QP deadline) is served by the
  // transmitter's own wake-up: no extra process.
  std::unique_ptr<loss_recovery> m_lr;
  std::vector<std::unique_ptr<queue_pair>> m_qps;
  shared_counters m_shared;                  // rx_access_errors, placed_bytes, sack_overflow
  std::unique_ptr<ack_engine> m_ack;         // ACKs, NAKs, SACKs and CNPs owed
  std::unique_ptr<responder> m_responder;    // tracker, stash, placement, receive queue, SEND, READ serving
  std::unique_ptr<requester> m_requester;    // work-request ring, segmentation, PSNs, READ requests
  std::unique_ptr<congestion_control> m_cc;  // nic.cc
  size_t m_rr = 0;                           // round-robin position over QPs
  // The transmitter's one wake-up is an entry of the run's transmit calendar (core/wakeup_calendar.h), not a
  // kernel event: m_tx_wake, the earliest asked for since it last ran.
  core::picoseconds m_tx_wake{UINT64_MAX};
  core::picoseconds m_pfc_refresh_at{UINT64_MAX};
  uint64_t m_rx_buffer_bytes, m_rx_pfc_xoff_bytes;  // nic.rx_buffer_bytes, nic.rx_pfc_xoff_bytes
  uint64_t m_tx_packets = 0, m_rx_packets = 0, m_rx_acks = 0;
  uint64_t m_mac;
  core::ip_address m_ip;
  // PFC: the switch port above may pause the priority the NIC's frames travel on (priority = DSCP / 8).
  unsigned m_priority;
  uint8_t m_dscp;            // nic.dscp
  bool m_ib = false;         // nic.link_layer infiniband
  bool m_rx_xoff = false;    // the switch port above is paused by us
  bool m_rx_pfc = false;     // nic.rx_overflow pfc
  bool m_pfc_owed = false;   // a PFC frame (XOFF if m_rx_xoff, else XON) waits for the wire
  bool m_started = false;

  // ---- Cold.
  supernic_params m_params;
  uint64_t m_tx_pause_frames = 0;
  uint64_t m_mem_size = 0;
  core::picoseconds m_wqe_latency, m_rx_latency;
  std::vector<placed_message> m_placed;
  std::function<void(const placed_message&)> m_on_placed;
  uint64_t m_rx_unknown_qp = 0;
  uint64_t m_rx_pause_frames = 0, m_rx_buffer_drops = 0;
  uint64_t m_rx_ecn_marked = 0, m_rx_cnps = 0;
  uint64_t m_tx_read_responses = 0, m_rx_read_responses = 0;
  core::rng_stream m_rng;  // the NIC's seeded stream: initial PSNs and path entropy (2.5 KB: kept last)
};

}  // namespace fabricsim::nic
