// The SuperNIC: RoCEv2 RC requester and responder for RDMA WRITE (with immediate), SEND and RDMA READ.
#include "sc_models/nic/supernic.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>

#include "sc_models/core/transaction_log.h"
#include "sc_models/nic/block_clock.h"
#include "sc_models/nic/block_lockstep.h"
#include "sc_models/nic/block_recording.h"
#include "sc_models/nic/congestion_control.h"
#include "sc_models/nic/loss_recovery.h"
#include "sc_models/nic/path_entropy.h"

namespace fabricsim::nic {

using core::bth_opcode;
using core::never;
using core::packet;
using core::picoseconds;

namespace {

bool is_read_response(bth_opcode op) {
  return op >= bth_opcode::rc_rdma_read_response_first && op <= bth_opcode::rc_rdma_read_response_only;
}
constexpr uint8_t ecn_ect0 = 2;
}  // namespace

// What the NIC keeps of a queue pair beyond its units' state (requester.h, responder.h): the connection and
// the transmit reads of nic.placement pcie.
struct supernic::queue_pair {
  uint32_t qpn = 0;
  bool connected = false;
  core::ip_address remote_ip;
  uint32_t remote_qpn = 0;
  uint16_t src_port = 0;
  uint64_t mtu = 0;  // the QP's path MTU: payload bytes per packet, at most the NIC's nic.mtu_bytes
  // HPCC responder: the telemetry of the newest data packet, echoed by the next ACK. Its count beside the
  // header fields: every ACK built reads it.
  uint8_t echo_hops = 0;
  std::array<core::int_record, core::max_int_hops> echo{};
};

// The keys whose checks need more than a range (check_ranges does the rest): fails naming this NIC and the keys.
void supernic::check_params(const supernic_params& params, const std::string& inst) {
  const uint64_t mtu = params.mtu_bytes;
  core::require(mtu >= 256 && mtu <= 4096 && (mtu & (mtu - 1)) == 0, inst,
                "nic.mtu_bytes " + std::to_string(mtu) + " is not one of 256, 512, 1024, 2048, 4096");
  const uint64_t path_mtu = params.path_mtu_bytes;
  core::require(path_mtu == 0 || (path_mtu >= 256 && path_mtu <= 4096 && (path_mtu & (path_mtu - 1)) == 0), inst,
                "nic.path_mtu_bytes " + std::to_string(path_mtu) + " is not one of 0, 256, 512, 1024, 2048, 4096");
  const uint64_t w = params.reorder_window;
  core::require(w >= 16 && w <= 4096 && (w & (w - 1)) == 0, inst,
                "nic.reorder_window " + std::to_string(w) + " is not a power of two in [16, 4096]");
  core::require(params.tx_fifo_frames >= 1, inst, "nic.tx_fifo_frames must be at least 1");
  core::require(params.rx_overflow != "pfc" || (params.rx_pfc_xon_bytes <= params.rx_pfc_xoff_bytes &&
                                                params.rx_pfc_xoff_bytes + mtu <= params.rx_buffer_bytes),
                inst,
                "nic.rx_pfc_xon_bytes " + std::to_string(params.rx_pfc_xon_bytes) + " <= nic.rx_pfc_xoff_bytes " +
                    std::to_string(params.rx_pfc_xoff_bytes) + " <= nic.rx_buffer_bytes " +
                    std::to_string(params.rx_buffer_bytes) + " - one MTU is required (the rest is PFC headroom)");
  core::check_ranges(params, inst + ": nic");  // retransmission mode, rto_us, retry_count, nak_threshold
  const rtl_mutant_choice mutant = parse_rtl_mutant(params.rtl_mutant, inst + ": nic.rtl_mutant");
  try {
    // Fail at construction, naming this NIC and the keys.
    make_nic_reorder_tracker(params.reorder, uint32_t(w), mutant.of("reorder_tracker"), {inst, "", nullptr});
  } catch (const core::config_error& e) {
    throw core::config_error(
        inst + ": nic.reorder " + params.reorder + " with nic.reorder_window " + std::to_string(w) +
        (params.rtl_mutant.empty() ? "" : " and nic.rtl_mutant " + params.rtl_mutant) + ": " + e.what());
  }
}

void supernic::register_counters(const std::string& inst) {
  auto& s = m_ctx.stats;
  s.counter(inst, "tx_packets", "packets", "frames transmitted", &m_tx_packets);
  s.counter(inst, "tx_read_responses", "packets", "READ response packets transmitted (responder)",
            &m_tx_read_responses);
  s.counter(inst, "rx_read_responses", "packets", "READ response packets received (requester)", &m_rx_read_responses);
  s.counter(inst, "flowlets", "flowlets", "per_flowlet entropy: new UDP source ports picked after an idle gap",
            m_entropy->flowlets());
  s.counter(inst, "tx_payload_bytes", "bytes", "payload bytes transmitted", &m_shared.tx_payload_bytes);
  s.counter(inst, "rx_packets", "packets", "frames received", &m_rx_packets);
  s.counter(inst, "rx_access_errors", "packets", "packets for an unregistered or out-of-range address",
            &m_shared.access_errors);
  s.counter(inst, "rx_unknown_qp", "packets", "packets for a QP that does not exist or is not connected",
            &m_rx_unknown_qp);
  s.counter(inst, "rx_acks", "packets", "ACKs and NAKs received", &m_rx_acks);
  s.counter(inst, "sack_overflow", "packets",
            "retransmission sack: out-of-order arrivals not SACKed (the QP's SACK queue was full) or SACKs beyond "
            "the scoreboard",
            &m_shared.sack_overflow);
  s.counter(inst, "pause_frames_received", "frames", "PFC frames received from the switch", &m_rx_pause_frames);
  s.counter(inst, "rx_ecn_marked", "packets", "data packets that arrived marked CE", &m_rx_ecn_marked);
  s.counter(inst, "rx_cnps", "packets", "CNPs received (reaction point)", &m_rx_cnps);
  s.gauge(inst, "paused_us", "us", "time the transmitter was paused by PFC",
          [this] { return m_mac_tx->paused_us(core::now()); });
  s.counter(inst, "placed_bytes", "bytes",
            "payload bytes placed (copied into host memory unless nic.place_data is false)", &m_shared.placed_bytes);
  m_dma->register_stats(s, inst);  // nic.placement pcie only
  s.counter(inst, "rx_buffer_drops", "packets",
            "nic.placement pcie: data packets dropped because the receive buffer was full of unlanded writes",
            &m_rx_buffer_drops);
  s.counter(inst, "tx_pause_frames", "frames",
            "nic.rx_overflow pfc: PFC frames sent to the switch (XOFF, refreshes and XON)", &m_tx_pause_frames);
}

supernic::supernic(sc_core::sc_module_name name, const supernic_params& params, core::ip_address ip, uint64_t mac,
                   core::sim_context& ctx)
    : sc_core::sc_module(name),
      dma("dma"),
      m_ctx(ctx),
      m_rx_buffer_bytes(params.rx_buffer_bytes),
      m_rx_pfc_xoff_bytes(params.rx_pfc_xoff_bytes),
      m_mac(mac),
      m_ip(ip),
      m_priority(unsigned(params.dscp >> 3) & 7u),
      m_dscp(uint8_t(params.dscp)),
      m_params(params),
      m_wqe_latency(picoseconds::from_ns(params.wqe_latency_ns)),
      m_rx_latency(picoseconds::from_ns(params.rx_latency_ns)),
      m_rng(nic_stream(ctx.seed, this->name())) {
  const std::string inst = this->name();
  m_rx_pfc = params.rx_overflow == "pfc";
  check_params(params, inst);
  const uint64_t mtu = params.mtu_bytes;
  m_ib = params.link_layer == "infiniband";
  uint64_t ib_max_blocks = 0;  // credits the largest packet needs: checked before one is built
  if (m_ib) {
    // The largest packet: LRH, BTH, RETH, immediate, a full MTU, ICRC and VCRC (no GRH inside a subnet).
    namespace h = core::header_bytes;
    ib_max_blocks = sw::ib::blocks_of(h::ib_lrh + h::bth + h::reth + h::immediate + mtu + h::icrc + h::ib_vcrc);
    m_ib_rx = std::make_unique<sw::ib::credit_receiver>(sw::ib::credit_params{}, 1u, ctx.calendar);
  }
  m_mac_tx = std::make_unique<mac_transmit>(params.tx_fifo_frames, m_priority, m_ib, ib_max_blocks);

  m_cc = make_congestion_control(params.cc, params,
                                 {inst, m_ctx.rtl_log, &m_ctx.lockstep, params.clock_mhz, &m_ctx.stats});
  // Requests (WRITE, SEND, READ request) wait for the reorder block and are processed at their result cycle;
  // the block is busy for the tracker cycles their processing stepped.
  m_rx_block = std::make_unique<block_clock>(inst, "tracker", params.clock_mhz, m_ctx.calendar, m_ctx.stats);
  m_rx_block->set_server([this](packet* p) {
    const uint64_t before = m_responder->tracker_cycles();
    on_request(p);
    return m_responder->tracker_cycles() - before;
  });
  m_rx_block->set_on_served([this] { rx_drained(); });
  // nic.placement pcie: writes not yet landed hold receive-buffer space too. With dmi nothing else does, and
  // an admission reads no line of the payload DMA (two per data packet: arrival and transaction).
  if (params.placement == "pcie") m_rx_block->set_also_held([this] { return m_dma->bytes_in_flight(); });
  m_entropy = make_path_entropy(params.path_entropy, params, m_rng, inst);
  m_lr = make_loss_recovery(params.retransmission, params, *this, inst, &m_ctx.stats);
  ack_host& acks_host = *this;  // a private base: converted here, where it is accessible
  m_ack = std::make_unique<ack_engine>(params, m_lr->sacks(), acks_host, inst, &m_ctx.stats);
  responder_host& rx_host = *this;
  m_responder =
      std::make_unique<responder>(params, *m_ack, m_lr->sacks(), rx_host, m_ctx.pool, m_shared, inst, &m_ctx.stats);
  requester_host& tx_host = *this;
  m_requester = std::make_unique<requester>(params, *m_lr, *m_cc, tx_host, m_ctx.pool, m_shared, inst, &m_ctx.stats);
  payload_dma_host& dma_host = *this;
  m_dma = std::make_unique<payload_dma>(dma_host, params.placement == "pcie", params.tx_read_ahead_packets,
                                        m_wqe_latency, params.place_data, inst);

  SC_METHOD(initial_transmit);  // runs once at time 0 to pick up work posted before the start

  register_counters(inst);
}

supernic::~supernic() {
  while (packet* p = m_rx_block->take_waiting()) m_ctx.pool.release(p);
}

void supernic::connect(core::link& out) { m_out = &out; }

void supernic::end_of_elaboration() {
  tlm::tlm_generic_payload trans;
  trans.set_address(0);
  trans.set_command(tlm::TLM_WRITE_COMMAND);
  tlm::tlm_dmi dmi;
  core::require(dma->get_direct_mem_ptr(trans, dmi) && dmi.is_read_write_allowed() && dmi.get_start_address() == 0,
                name(), "host memory does not grant read/write DMI from address 0");
  m_mem_size = dmi.get_end_address() + 1;
  m_dma->set_memory(dmi.get_dmi_ptr(), m_mem_size);
  m_responder->set_memory_size(m_mem_size);
  core::require(!m_dma->generated() || (m_dma->placement() == nullptr && !m_dma->pcie()), name(),
                "generated payloads cannot go through the PCIe tray (nic.placement pcie reads and writes memory)");
  core::require(m_out != nullptr, name(), "no link connected");
  if (m_ib) {
    // Link initialisation with the switch port: each side learns the other's credit limit.
    auto* peer = dynamic_cast<sw::ib::credit_peer*>(m_out->sink());
    m_ib_rx->attach(peer, m_out->sink_port(), *m_out);
    if (peer == nullptr) m_mac_tx->credits().set_unlimited(true);  // an Ethernet switch: no credits to wait for
    // Scale-out keeps a host with its leaf: the switch port's initial limit comes from the switch, here.
    core::require(m_out->proxy() == nullptr, name(), "nic.link_layer infiniband: the cable to the switch crosses "
                  "processes (docs/scale_out.md)");
    m_ctx.stats.counter(name(), "credit_stall_ps", "ps",
                        "nic.link_layer infiniband: time a packet was ready and the switch port had no credit",
                        m_mac_tx->credits().stall_ps_counter(0));
  }
  core::require(!m_dma->pcie() || m_dma->placement() != nullptr, name(),
                "nic.placement is pcie but no PCIe tray is attached");
  for (size_t q = 0; q < m_qps.size(); ++q) {
    const send_queue& sq = m_requester->queue(q);
    for (size_t i = 0; i < sq.wqes.size(); ++i) check_work_request(sq.wqes[i]);
  }
}

void supernic::start_of_simulation() { m_started = true; }

uint32_t supernic::register_region(uint64_t addr, uint64_t length) {
  return m_responder->register_region(addr, length);  // rkey_of(the regions before it)
}

core::rng_stream supernic::nic_stream(uint64_t seed, const std::string& nic_name) {
  return core::make_stream(seed, nic_name, "nic");
}

uint32_t supernic::initial_psn(const supernic_params& params, core::rng_stream& stream) {
  return params.random_initial_psn ? uint32_t(stream() & core::psn_mask) : uint32_t(params.initial_psn);
}

uint32_t supernic::draw_initial_psn() { return initial_psn(m_params, m_rng); }

uint32_t supernic::create_qp() {
  auto qp = std::make_unique<queue_pair>();
  qp->qpn = qpn_of(m_qps.size());
  const uint32_t mutant = parse_rtl_mutant(m_params.rtl_mutant, "nic.rtl_mutant").of("reorder_tracker");
  auto tracker = make_nic_reorder_tracker(m_params.reorder, uint32_t(m_params.reorder_window), mutant,
                                          {name(), "qp " + std::to_string(qp->qpn), &m_ctx.lockstep});
  const std::string qp_name = m_ctx.rtl_log ? std::string(name()) + ".qp" + std::to_string(qp->qpn) : std::string();
  if (m_ctx.rtl_log) tracker = record_reorder_tracker(std::move(tracker), *m_ctx.rtl_log, qp_name + ".reorder_tracker");
  m_responder->add_qp(qp->qpn, std::move(tracker));
  m_requester->add_qp(qp->qpn);
  qp->mtu = m_params.mtu_bytes;
  m_dma->add_qp(qp->mtu);
  m_cc->add_qp(qp_name, m_out ? m_out->rate().value : 0, core::now());
  m_entropy->add_qp();
  m_lr->add_qp();
  m_ack->add_qp();
  m_qps.push_back(std::move(qp));
  return m_qps.back()->qpn;
}

void supernic::connect_qp(uint32_t qpn, core::ip_address remote_ip, uint32_t remote_qpn, uint32_t sq_psn,
                          uint32_t rq_psn, uint64_t path_mtu) {
  core::require(qpn >= first_qpn && qpn - first_qpn < m_qps.size(), name(), "connect_qp: no QP " + std::to_string(qpn));
  core::require(
      path_mtu == 0 || (path_mtu >= 256 && path_mtu <= m_params.mtu_bytes && (path_mtu & (path_mtu - 1)) == 0), name(),
      "connect_qp: path MTU " + std::to_string(path_mtu) + " is not one of 256 .. nic.mtu_bytes " +
          std::to_string(m_params.mtu_bytes) + " (a power of two)");
  queue_pair& qp = *m_qps[qpn - first_qpn];
  qp.mtu = path_mtu == 0 ? m_params.mtu_bytes : path_mtu;
  qp.connected = true;
  qp.remote_ip = remote_ip;
  qp.remote_qpn = remote_qpn;
  m_requester->connect(qpn - first_qpn, sq_psn, qp.mtu);
  m_dma->connect(qpn - first_qpn, sq_psn, qp.mtu);
  m_responder->connect(qpn - first_qpn, rq_psn, qp.mtu);
  m_ack->connect(qpn - first_qpn, rq_psn & core::psn_mask);
  // Fixed entropy: a hash of the connection, as NICs derive the RoCEv2 source port from the QP.
  qp.src_port = uint16_t(roce_entropy_base | (core::splitmix64(uint64_t(qpn) << 24 ^ remote_qpn ^ m_mac) & 0x3fff));
  m_entropy->connect(qpn - first_qpn, qp.src_port);
}

void supernic::check_work_request(const work_request& wr) const {
  // Work requests are posted inside the loop: the messages are only built for a request that fails.
  if (!(wr.local_addr <= m_mem_size && wr.length <= m_mem_size - wr.local_addr))
    core::require(false, name(),
                  "work request " + std::to_string(wr.wr_id) + ": source [" + std::to_string(wr.local_addr) + ", +" +
                      std::to_string(wr.length) + ") is outside host memory of " + std::to_string(m_mem_size) +
                      " bytes");
  if (wr.length >= (uint64_t(1) << 31))
    core::require(false, name(),
                  "work request " + std::to_string(wr.wr_id) + ": length exceeds the 2^31 byte RC message limit");
}

void supernic::post_write(uint32_t qpn, uint64_t wr_id, uint64_t local_addr, uint64_t remote_addr, uint32_t rkey,
                          uint64_t length, picoseconds post_at) {
  post(qpn, wr_id, rdma_op::write, local_addr, remote_addr, rkey, length, post_at);
}

void supernic::post_recv(uint32_t qpn, uint64_t wr_id, uint64_t addr, uint64_t length) {
  core::require(qpn >= first_qpn && qpn - first_qpn < m_qps.size(), name(),
                "post_recv: no QP " + std::to_string(qpn));
  core::require(m_mem_size == 0 || (addr <= m_mem_size && length <= m_mem_size - addr), name(),
                "post_recv " + std::to_string(wr_id) + ": buffer outside host memory");
  m_responder->post_recv(qpn - first_qpn, wr_id, addr, length);
}

void supernic::post(uint32_t qpn, uint64_t wr_id, rdma_op op, uint64_t local_addr, uint64_t remote_addr,
                    uint32_t rkey, uint64_t length, picoseconds post_at, uint32_t imm) {
  if (!(qpn >= first_qpn && qpn - first_qpn < m_qps.size() && m_qps[qpn - first_qpn]->connected))
    core::require(false, name(), "post: QP " + std::to_string(qpn) + " is not connected");
  send_queue& sq = m_requester->queue(qpn - first_qpn);
  if (!(sq.wqes.empty() || sq.wqes.back().post_at <= post_at))
    core::require(false, name(), "post: work requests on one QP must be posted in time order");
  work_request wr;
  wr.wr_id = wr_id;
  wr.local_addr = local_addr;
  wr.remote_addr = remote_addr;
  wr.length = length;
  wr.rkey = rkey;
  wr.post_at = post_at;
  wr.staged_at = post_at;
  wr.op = op;
  wr.imm = imm;
  if (m_mem_size > 0) check_work_request(wr);  // known once DMI is (end of elaboration)
  m_requester->post(qpn - first_qpn, std::move(wr), core::now());
}

qp_status supernic::qp_state(uint32_t qpn) const {
  const queue_pair& qp = *m_qps.at(qpn - first_qpn);
  const send_queue& sq = m_requester->queue(qpn - first_qpn);
  qp_status st;
  st.outstanding = sq.wqes.size();
  st.placed_bytes = m_responder->placed_bytes(qpn - first_qpn);
  st.inflight_bytes = uint64_t((sq.snd_max - sq.una) & core::psn_mask) * qp.mtu;
  st.rate_mbps = st.target_mbps = m_out ? double(m_out->rate().value) / 1e6 : 0.0;
  m_cc->status(qpn - first_qpn, st);  // a paced QP: its policy's rate, window and estimate
  return st;
}

uint64_t supernic::outstanding_work() const {
  uint64_t n = 0;
  for (size_t q = 0; q < m_qps.size(); ++q) n += m_requester->queue(q).wqes.size();
  return n;
}

supernic::posted_work supernic::posted_work_kinds() const {
  posted_work w;
  for (size_t q = 0; q < m_qps.size(); ++q) {
    const core::ring<work_request>& wqes = m_requester->queue(q).wqes;
    for (size_t i = 0; i < wqes.size(); ++i) {
      w.all_writes = w.all_writes && wqes[i].op == rdma_op::write;
      w.fewest_packets =
          w.fewest_packets == 0 ? wqes[i].packets : std::min<uint64_t>(w.fewest_packets, wqes[i].packets);
    }
  }
  return w;
}

// ---- transmit ------------------------------------------------------------------------------------------

void supernic::wake_transmitter(picoseconds at) {
  if (!(at < m_tx_wake)) return;  // an earlier wake-up is already pending; it re-evaluates everything
  m_tx_wake = at;
  m_ctx.transmit_calendar.schedule(this, at);
}

void supernic::on_wake(picoseconds /*t*/) { transmit(); }

void supernic::initial_transmit() {
  // A wake-up asked before this first run (work posted by a process that ran first at time 0) still runs
  // after it, as the kernel event it used to be would have fired: unless this run asked for an earlier one.
  const picoseconds pending = m_tx_wake;
  transmit();
  if (pending < m_tx_wake) m_tx_wake = pending;  // the calendar keeps the earlier of the two
}

void supernic::transmit() {
  ++m_ctx.events;
  const picoseconds t = core::now();
  m_tx_wake = never;
  if (m_lr->wake_at() <= t) m_lr->expire(t);
  // Every path out of here re-arms the retransmission timer: an earlier wake-up replaced its notification.
  if (m_lr->wake_at() != never) wake_transmitter(m_lr->wake_at());
  if (m_rx_xoff && m_pfc_refresh_at != never && t < m_pfc_refresh_at) wake_transmitter(m_pfc_refresh_at);
  // A CNP still in the generator goes at its result cycle, whatever else keeps the transmitter asleep.
  if (m_ack->cnp_due() != never && t < m_ack->cnp_due()) wake_transmitter(m_ack->cnp_due());
  m_mac_tx->drain(t);
  m_dma->tick(t);  // nic.placement pcie: free the buffers of packets that have left, read ahead
  // PFC pauses the priority of data and ACKs; CNPs travel on their own priority and still go.
  const bool paused = m_mac_tx->paused(t);
  // Fill the MAC FIFO: each frame starts when the one before it has left, so the wire stays busy while the
  // scheduler sleeps; one wake-up serves up to tx_fifo_frames frames.
  picoseconds next_ready = never;
  bool credit_blocked = false;
  while (m_mac_tx->has_room()) {
    // InfiniBand: never build a packet without credit for the largest one (the credit update wakes us).
    if (m_mac_tx->credit_blocked(t)) {
      credit_blocked = true;
      break;
    }
    packet* p = next_pfc(t);  // MAC control: never paused itself
    if (p == nullptr) p = next_cnp(t);
    if (p == nullptr && !paused) p = next_ack(t);
    if (p == nullptr && !paused && m_client != nullptr) p = m_client->next_packet(t, &next_ready);
    if (p == nullptr && !paused) p = next_data(t, &next_ready);
    if (p == nullptr) break;
    const picoseconds start = max(t, m_out->wire_free_at());
    m_mac_tx->sent(p->wire().value, t);
    p->injected_at = start;
    ++m_tx_packets;
    m_mac_tx->committed(m_out->transmit(p, start));
    m_dma->committed(m_mac_tx->last_leaves());  // a transmit buffer it holds frees when it has left
  }
  // All transmit buffers taken: the next one frees when its packet has left, and more can be read then.
  if (m_dma->buffers_free_at() != never) wake_transmitter(m_dma->buffers_free_at());
  if (!m_mac_tx->empty()) {
    wake_transmitter(m_mac_tx->refill_at());  // when one frame is left in the FIFO
    return;
  }
  if (paused) {
    wake_transmitter(m_mac_tx->paused_until());  // resume then (an XON wakes it sooner)
    return;
  }
  if (credit_blocked) return;  // credit_update() wakes the transmitter
  if (m_ack->next_due() < next_ready) next_ready = m_ack->next_due();
  if (next_ready != never) wake_transmitter(next_ready);
}

void supernic::credit_update(unsigned /*port*/, unsigned vl, uint64_t fccl_blocks) {
  m_mac_tx->credits().update(vl, fccl_blocks);
  if (m_started) wake_transmitter(core::now());
}

void supernic::fill_headers(packet* p, const queue_pair& qp, uint16_t src_port) {
  if (m_ib) {
    // An HCA: LRH + BTH. The IP fields stay in the descriptor as model state (the QP's peer), not on the
    // wire; the SL is the priority the DSCP would have given.
    p->kind = core::frame_kind::infiniband;
    p->lrh.dlid = sw::ib::host_lid(qp.remote_ip);
    p->lrh.slid = sw::ib::host_lid(m_ip);
    p->lrh.sl = uint8_t(m_priority);
    p->lrh.vl = 0;
  }
  p->eth.src_mac = m_mac;
  p->eth.dst_mac = 0x02'00'00'00'00'01ull;  // the first-hop router
  p->ip.dscp = m_dscp;
  p->ip.ecn = ecn_ect0;
  p->ip.src = m_ip;
  p->ip.dst = qp.remote_ip;
  p->udp.src_port = src_port;
  p->bth.dest_qp = qp.remote_qpn;
}

packet* supernic::next_ack(picoseconds t) {
  ack_frame a;
  if (!m_ack->next(t, &a)) return nullptr;
  queue_pair& qp = *m_qps[a.q];
  packet* p = m_ctx.pool.acquire();
  fill_headers(p, qp, qp.src_port);
  p->bth.opcode = bth_opcode::rc_acknowledge;
  p->bth.psn = a.psn;
  p->has_aeth = true;
  p->aeth.syndrome = a.syndrome;
  p->aeth.msn = m_responder->msn(a.q) & core::psn_mask;
  if (a.sack) {  // sack: the out-of-order arrival it names
    p->aeth.sack = true;
    p->aeth.sack_psn = a.sack_psn;
  }
  if (qp.echo_hops > 0) {  // HPCC: the ACK carries the newest data packet's records back (not added to)
    std::copy(qp.echo.begin(), qp.echo.begin() + qp.echo_hops, m_ctx.pool.telemetry(p).begin());
    p->int_hops = qp.echo_hops;
    qp.echo_hops = 0;
  }
  p->seal();
  return p;
}

uint32_t supernic::ack_head(size_t q) const { return m_responder->head(q); }

void supernic::ack_wake(picoseconds ready) {
  if (m_started) wake_transmitter(max(ready, m_out->wire_free_at()));
}

packet* supernic::next_data(picoseconds t, picoseconds* next_ready) {
  const size_t n = m_qps.size();
  for (size_t i = 0; i < n; ++i) {
    const size_t q = (m_rr + i) % n;
    queue_pair& qp = *m_qps[q];
    if (m_requester->failed(q)) continue;
    core::ring<read_job>& responses = m_responder->responses(q);
    if (t < m_cc->next_send(q)) {  // pacing: this QP's rate does not allow another packet yet
      // Its timers may raise the rate before the packet is due: run them, then wake at whichever is first.
      const picoseconds timer = m_cc->timers(q, t);
      if (t < m_cc->next_send(q)) {
        if (m_requester->has_work(q) || m_lr->resend_queued(q) || !responses.empty())
          *next_ready = std::min({*next_ready, m_cc->next_send(q), timer});
        continue;
      }
    }
    // READ responses (the responder's side of the QP) go first: the peer's READ waits on them.
    if (!responses.empty()) {
      read_job& job = responses.front();
      // nic.placement pcie: only once the response's payload is in its transmit buffer.
      if (t >= job.ready && m_dma->response_ready(q, job)) {
        m_rr = (m_rr + i + 1) % n;
        packet* p = build_read_response(qp, job, t);
        if (++job.k == job.packets) {
          responses.pop_front();
          m_dma->response_done(q);
        }
        return p;
      }
      if (t < job.ready && job.ready < *next_ready) *next_ready = job.ready;  // (a read in flight wakes us itself)
    }
    // Then the requester: selective resends, then new packets.
    if (packet* p = m_requester->next_packet(q, t, next_ready)) {
      m_rr = (m_rr + i + 1) % n;
      return p;
    }
  }
  return nullptr;
}

uint16_t supernic::data_port(queue_pair& qp, picoseconds t) {
  return m_entropy->data_port(qp.qpn - first_qpn, qp.src_port, t, m_out->wire_free_at());
}

packet* supernic::data_packet(size_t q, picoseconds t) {
  queue_pair& qp = *m_qps[q];
  packet* p = m_ctx.pool.acquire();
  fill_headers(p, qp, data_port(qp, t));
  return p;
}

void supernic::attach_payload(size_t q, packet* p, uint64_t va, uint64_t bytes, bool fresh) {
  m_dma->attach(q, p, va, bytes, fresh, false);
}

bool supernic::payload_ready(size_t q, uint32_t psn, const work_request& wr) { return m_dma->data_ready(q, psn, wr); }

picoseconds supernic::staged_at(size_t q, uint64_t va, uint64_t length, picoseconds post_at) {
  return m_dma->staged_at(q, va, length, post_at);  // a bounce copy first (never), or visible at post_at
}

bool supernic::dma_qp_live(size_t q) const { return m_qps[q]->connected && !m_requester->failed(q); }

send_queue& supernic::dma_send_queue(size_t q) { return m_requester->queue(q); }

core::ring<read_job>& supernic::dma_responses(size_t q) { return m_responder->responses(q); }

void supernic::requester_wake(picoseconds at) {
  if (m_started) wake_transmitter(at);
}

packet* supernic::build_read_response(queue_pair& qp, read_job& job, picoseconds t) {
  const uint64_t mtu = qp.mtu;
  const uint64_t offset = uint64_t(job.k) * mtu;
  const uint64_t payload = std::min(mtu, job.length - std::min(job.length, offset));
  const bool first = job.k == 0, last = job.k + 1 == job.packets;
  packet* p = m_ctx.pool.acquire();
  fill_headers(p, qp, data_port(qp, t));
  p->bth.opcode = first && last ? bth_opcode::rc_rdma_read_response_only
                  : first       ? bth_opcode::rc_rdma_read_response_first
                  : last        ? bth_opcode::rc_rdma_read_response_last
                                : bth_opcode::rc_rdma_read_response_middle;
  p->bth.psn = core::psn_add(job.first_psn, job.k);
  // IBTA: FIRST, LAST and ONLY carry an AETH (an ACK with the MSN); MIDDLE does not.
  if (first || last) {
    p->has_aeth = true;
    p->aeth.syndrome = ack_syndrome;
    p->aeth.msn = m_responder->msn(qp.qpn - first_qpn) & core::psn_mask;
  }
  p->bth.pad_count = uint8_t((4 - payload % 4) % 4);
  m_dma->attach(qp.qpn - first_qpn, p, job.va + offset, payload, true, true);  // the responder's memory
  p->payload_bytes = uint32_t(payload);
  p->int_requested = m_cc->telemetry();  // HPCC: every switch egress on the way appends its record
  p->seal();
  ++m_tx_read_responses;
  m_shared.tx_payload_bytes += payload;
  account_data(qp, p, t);
  return p;
}

void supernic::account_data(queue_pair& qp, packet* p, picoseconds t) {
  // The policy counts the bytes and sets the pace: the next packet may start once this one's wire bytes
  // have gone at the current rate.
  m_cc->sent(qp.qpn - first_qpn, p->wire().value, t);
}

// ---- loss recovery at the requester (the scheme's host) ---------------------------------------------------

send_queue& supernic::recovery_sender(size_t q) { return m_requester->queue(q); }

void supernic::recovery_failed(size_t q) { m_requester->fail(q, completion_status::retry_exceeded, core::now()); }

void supernic::recovery_wake(picoseconds at) {
  if (m_started) wake_transmitter(at);
}

void supernic::recovery_idle() {
  // The transmitter's event may also serve a refill or a ready ACK: an immediate wake-up replaces the
  // withdrawn timer's and re-arms only those.
  if (m_started && m_tx_wake != never) wake_transmitter(core::now());
}

// ---- receive -------------------------------------------------------------------------------------------

void supernic::on_pause(const packet* p, picoseconds t) {
  ++m_rx_pause_frames;
  // Quanta of 512 bit times at the link's rate; zero resumes at once.
  if (!m_mac_tx->pause(p->pfc.class_enable, p->pfc.quanta[m_priority], m_out->rate(), t)) return;
  if (m_started) wake_transmitter(m_mac_tx->paused_until());  // resume then (or now, for an XON)
}

void supernic::receive(packet* p, unsigned /*port*/) {
  const picoseconds t = core::now();
  // The packet's fields first: its lines are read anyway, the NIC's flags' line need not be.
  if (p->kind == core::frame_kind::infiniband && m_ib) {
    // The HCA takes a packet out of its receive buffer at once: the credit goes straight back.
    const uint64_t blocks = sw::ib::blocks_of(p->wire().value);
    m_ib_rx->received(0, blocks);
    m_ib_rx->released(0, blocks, t);
  }
  if ((p->bth.opcode == core::bth_opcode::sharp_up || p->bth.opcode == core::bth_opcode::sharp_down) &&
      m_client != nullptr) {
    m_client->receive(p);
    return;
  }
  if (p->kind == core::frame_kind::pfc) {
    on_pause(p, t);
    m_ctx.pool.release(p);
    return;
  }
  ++m_rx_packets;
  if (p->payload_bytes > 0) m_ctx.data_latency.add((t - p->injected_at).value);
  if (p->bth.opcode == bth_opcode::rc_acknowledge)
    on_ack(p, t);
  else if (p->bth.opcode == bth_opcode::cnp)
    on_cnp(p);
  else if (is_read_response(p->bth.opcode))
    on_read_response(p);
  else if (rx_buffer_admits(p))  // it occupies the receive buffer while it waits for the reorder block
    m_rx_block->arrive(p);
}

// ---- congestion control --------------------------------------------------------------------------------

void supernic::on_cnp(packet* p) {
  ++m_rx_cnps;
  const uint32_t qpn = p->bth.dest_qp;
  m_ctx.pool.release(p);
  if (qpn < first_qpn || qpn - first_qpn >= m_qps.size()) {
    ++m_rx_unknown_qp;
    return;
  }
  m_cc->on_cnp(qpn - first_qpn, core::now());  // without a reaction point a CNP is counted and ignored
}

void supernic::notify_congestion(queue_pair& qp) {
  // Moderated: one CNP per interval per flow (or port); otherwise it leaves at the generator's result cycle.
  const picoseconds ready = m_cc->marked_arrival(qp.qpn, core::now());
  if (ready == never) return;
  m_ack->cnp(qp.qpn - first_qpn, ready);
  if (m_started) wake_transmitter(ready);
}

packet* supernic::next_cnp(picoseconds t) {
  // One generator: its results come in arrival order (transmit() wakes for the front one).
  size_t q = 0;
  if (!m_ack->next_cnp(t, &q)) return nullptr;
  queue_pair& qp = *m_qps[q];
  packet* p = m_ctx.pool.acquire();
  fill_headers(p, qp, qp.src_port);
  p->ip.dscp = uint8_t(m_params.cnp_dscp);
  p->ip.ecn = 0;  // a CNP is not ECN-capable
  p->bth.opcode = bth_opcode::cnp;
  p->bth.becn = true;
  p->bth.psn = 0;
  p->seal();
  return p;
}

void supernic::on_ack(packet* p, picoseconds t) {
  ++m_rx_acks;
  const uint32_t qpn = p->bth.dest_qp;
  if (qpn < first_qpn || qpn - first_qpn >= m_qps.size()) {
    ++m_rx_unknown_qp;
    m_ctx.pool.release(p);
    return;
  }
  m_requester->on_ack(qpn - first_qpn, p, t);
  m_ctx.pool.release(p);
}

void supernic::on_read_response(packet* p) {
  ++m_rx_read_responses;
  const uint32_t qpn = p->bth.dest_qp;
  if (qpn < first_qpn || qpn - first_qpn >= m_qps.size() || !m_qps[qpn - first_qpn]->connected) {
    ++m_rx_unknown_qp;
    m_ctx.pool.release(p);
    return;
  }
  if (!rx_buffer_admits(p)) return;
  queue_pair& qp = *m_qps[qpn - first_qpn];
  if (p->ip.ecn == 3) {  // the responses are this QP's incoming data: the notification point sees them
    ++m_rx_ecn_marked;
    notify_congestion(qp);
  }
  // The responder's NAK threshold, applied to responses: a response this far beyond a missing one re-issues.
  m_requester->on_read_response(qpn - first_qpn, p, m_ack->nak_threshold(), core::now());
}

// A request packet at its reorder-block transaction (it was admitted to the receive buffer on arrival and is
// admitted again here, where it always fits): the NIC's part, then the responder's.
void supernic::on_request(packet* p) {
  const uint32_t qpn = p->bth.dest_qp;
  if (qpn < first_qpn || qpn - first_qpn >= m_qps.size() || !m_qps[qpn - first_qpn]->connected) {
    ++m_rx_unknown_qp;
    m_ctx.pool.release(p);
    return;
  }
  if (!rx_buffer_admits(p)) return;
  const size_t q = qpn - first_qpn;
  queue_pair& qp = *m_qps[q];
  if (p->int_hops > 0) {  // HPCC: keep the newest telemetry for the next ACK to echo
    const auto& rec = m_ctx.pool.telemetry(p);
    qp.echo_hops = p->int_hops;
    std::copy(rec.begin(), rec.begin() + p->int_hops, qp.echo.begin());
  }
  if (p->ip.ecn == 3) {  // CE: a switch on the way saw its queue above the RED line
    ++m_rx_ecn_marked;
    notify_congestion(qp);
  }
  m_responder->receive(q, p, core::now());
}

picoseconds supernic::response_ready(size_t q, uint64_t va, uint64_t length, picoseconds ready) {
  return m_dma->response_staged(q, va, length, ready);  // a bounce copy of its data first, or none
}

void supernic::response_queued(picoseconds ready) {
  if (m_started && ready != never) wake_transmitter(max(ready, m_out->wire_free_at()));
}

// A real NIC's receive buffer holds packets until their PCIe writes have gone. With rx_overflow pfc it pauses
// the switch port above before the buffer is full (the rest is headroom for what is already on the way);
// a packet that still finds no room is dropped, as ConnectX counts in rx_out_of_buffer, and the requester's
// loss recovery resends it.
uint64_t supernic::rx_buffer_occupancy() const { return m_rx_block->buffer_occupancy(); }

// With nic.placement dmi the buffer holds only the packets waiting for the reorder block (placement is
// immediate); a packet being admitted again when its transaction comes (on_request) always fits.
bool supernic::rx_buffer_admits(const core::packet* p) {
  if (p->payload_bytes == 0) return true;
  const uint64_t occupancy = rx_buffer_occupancy() + p->payload_bytes;
  if (occupancy <= m_rx_buffer_bytes) {
    if (m_rx_pfc && !m_rx_xoff && occupancy >= m_rx_pfc_xoff_bytes) {
      m_rx_xoff = true;
      m_pfc_owed = true;
      if (m_started) wake_transmitter(core::now());
    }
    return true;
  }
  ++m_rx_buffer_drops;
  m_ctx.pool.release(const_cast<core::packet*>(p));
  return false;
}

void supernic::rx_drained() {
  if (!m_rx_xoff || rx_buffer_occupancy() > m_params.rx_pfc_xon_bytes) return;
  m_rx_xoff = false;
  m_pfc_owed = true;  // XON
  m_pfc_refresh_at = never;
  if (m_started) wake_transmitter(core::now());
}

// 802.1Qbb from the NIC to the switch port above, for the priority its RoCE traffic arrives on; an XOFF is
// refreshed at half its pause time for as long as the buffer stays above XON.
packet* supernic::next_pfc(picoseconds t) {
  if (m_rx_xoff && m_pfc_refresh_at <= t) m_pfc_owed = true;
  if (!m_pfc_owed) return nullptr;
  m_pfc_owed = false;
  packet* f = m_ctx.pool.acquire();
  f->kind = core::frame_kind::pfc;
  f->eth.dst_mac = core::pfc_mac_control_da;
  f->eth.src_mac = m_mac;
  f->pfc.class_enable = uint8_t(1u << m_priority);
  f->pfc.quanta[m_priority] = m_rx_xoff ? uint16_t(m_params.rx_pfc_quanta) : 0;
  f->seal();
  ++m_tx_pause_frames;
  if (m_rx_xoff) {
    const uint64_t pause_ps = core::pause_duration(m_params.rx_pfc_quanta, m_out->rate()).value;
    m_pfc_refresh_at = t + picoseconds(pause_ps / 2);
    wake_transmitter(m_pfc_refresh_at);
  }
  return f;
}

void supernic::message_placed(const placed_message& done) {
  m_dma->message_issued(done.va, done.bytes);
  m_placed.push_back(done);
  if (m_on_placed) m_on_placed(done);  // `done` is a copy: the callback may post, and m_placed may grow
}

}  // namespace fabricsim::nic
