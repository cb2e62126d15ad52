// The SuperNIC: RoCEv2 RC requester and responder for RDMA WRITE.
#include "sc_models/nic/supernic.h"

#include <algorithm>
#include <cstring>

namespace fabricsim::nic {

using core::bth_opcode;
using core::packet;
using core::picoseconds;

namespace {
constexpr uint32_t first_qpn = 2;  // QP0 and QP1 are the special management QPs
constexpr picoseconds never{UINT64_MAX};
constexpr uint8_t ack_syndrome = 0x1f;  // ACK, credit count field "invalid" (no end-to-end credits)
constexpr uint8_t ecn_ect0 = 2;
constexpr uint16_t roce_entropy_base = 0xc000;  // UDP source ports 0xC000-0xFFFF carry path entropy
}  // namespace

void supernic_params::visit(core::param_visitor& v) {
  v.field({"mtu_bytes", "bytes", "path MTU (IBTA: 256, 512, 1024, 2048, 4096)", 256, 4096}, mtu_bytes);
  v.field({"reorder", "", "receiver PSN tracker implementation", 0, 0, {"rtl", "ref"}}, reorder);
  v.field({"reorder_window", "PSNs", "PSNs tracked beyond the in-order head (power of two)", 16, 4096}, reorder_window);
  v.field({"wqe_latency_ns", "ns", "work request posted to first packet ready", 0, 1e6}, wqe_latency_ns);
  v.field({"rx_latency_ns", "ns", "last bit received to placed and ACK ready", 0, 1e6}, rx_latency_ns);
  v.field({"ack_every_packets", "packets", "ACK coalescing: in-order packets per ACK (also on message end)", 1, 65536},
          ack_every_packets);
  v.field({"path_entropy", "", "UDP source port: fixed per QP, or a new one per packet (spraying)", 0, 0,
           {"fixed", "per_packet"}},
          path_entropy);
  v.field({"random_initial_psn", "", "draw each QP's first PSN from the NIC's seeded stream"}, random_initial_psn);
  v.field({"initial_psn", "", "first PSN of every QP when random_initial_psn is false", 0, double(core::psn_mask)},
          initial_psn);
  v.field({"dscp", "", "DSCP of RoCE data and ACK packets", 0, 63}, dscp);
  v.field({"place_data", "", "copy payload bytes into host memory; false models timing only (no byte check)"},
          place_data);
  v.field({"tx_fifo_frames", "frames",
           "MAC transmit FIFO depth: the scheduler commits up to this many frames ahead of the wire and refills "
           "when one is left",
           1, 64},
          tx_fifo_frames);
  v.field({"cc", "", "congestion control: none (line rate, PFC only) or dcqcn", 0, 0, {"none", "dcqcn"}}, cc);
  v.field({"dcqcn_preset", "", "DCQCN reaction-point knobs: NVIDIA firmware defaults or the paper's", 0, 0,
           {"nvidia", "paper"}},
          dcqcn_preset);
  v.field({"dcqcn_model", "", "DCQCN reaction point: Verilated RTL or its C++ reference model", 0, 0, {"rtl", "ref"}},
          dcqcn_model);
  v.field({"cnp_model", "", "CNP generator (notification point): Verilated RTL or its C++ reference model", 0, 0,
           {"rtl", "ref"}},
          cnp_model);
  v.field({"cnp_interval_ns", "ns", "notification point: at most one CNP per flow (or port) per this interval", 0,
           1e9},
          cnp_interval_ns);
  v.field({"cnp_mode", "", "notification point moderation: per QP, or one context for the whole port", 0, 0,
           {"per_flow", "per_port"}},
          cnp_mode);
  v.field({"cnp_dscp", "", "DSCP of CNPs (NVIDIA default 48: priority 6)", 0, 63}, cnp_dscp);
}

struct supernic::queue_pair {
  uint32_t qpn = 0;
  bool connected = false;
  core::ip_address remote_ip;
  uint32_t remote_qpn = 0;
  uint16_t src_port = 0;
  // Requester.
  core::ring<work_request> send_queue;  // posted; the front one is being segmented
  uint64_t tx_offset = 0;               // bytes of the front work request already sent
  uint32_t next_psn = 0;
  core::ring<work_request> unacked;     // fully sent, waiting for their ACK
  std::unique_ptr<dcqcn_rate_engine> rate;  // DCQCN reaction point (nic.cc dcqcn)
  picoseconds next_send{};              // pacing: the earliest start of this QP's next data packet
  // Responder.
  std::unique_ptr<reorder_tracker> tracker;
  uint32_t head = 0;                    // the tracker's expected PSN after the last arrival
  std::vector<known_message> messages;  // learnt from FIRST/ONLY, ordered by PSN from the head
  std::vector<packet*> stash;           // packets whose FIRST has not come yet, slot = PSN mod window
  uint32_t window_mask = 0;
  uint32_t msn = 0;
  uint64_t since_ack = 0;
  bool ack_queued = false;
};

supernic::supernic(sc_core::sc_module_name name, const supernic_params& params, core::ip_address ip, uint64_t mac,
                   core::sim_context& ctx)
    : sc_core::sc_module(name),
      dma("dma"),
      m_params(params),
      m_ip(ip),
      m_mac(mac),
      m_ctx(ctx),
      m_rng(core::make_stream(ctx.seed, this->name(), "nic")),
      m_wqe_latency(picoseconds::from_ns(params.wqe_latency_ns)),
      m_rx_latency(picoseconds::from_ns(params.rx_latency_ns)),
      m_spray(params.path_entropy == "per_packet"),
      m_priority(unsigned(params.dscp >> 3) & 7u),
      m_dcqcn(params.cc == "dcqcn") {
  const std::string inst = this->name();
  const uint64_t mtu = params.mtu_bytes;
  core::require(mtu >= 256 && mtu <= 4096 && (mtu & (mtu - 1)) == 0, inst,
                "nic.mtu_bytes " + std::to_string(mtu) + " is not one of 256, 512, 1024, 2048, 4096");
  const uint64_t w = params.reorder_window;
  core::require(w >= 16 && w <= 4096 && (w & (w - 1)) == 0, inst,
                "nic.reorder_window " + std::to_string(w) + " is not a power of two in [16, 4096]");
  core::require(params.tx_fifo_frames >= 1, inst, "nic.tx_fifo_frames must be at least 1");
  try {
    make_reorder_tracker(params.reorder, uint32_t(w));  // fail at construction, naming this NIC and the keys
  } catch (const core::config_error& e) {
    throw core::config_error(inst + ": nic.reorder " + params.reorder + " with nic.reorder_window " +
                             std::to_string(w) + ": " + e.what());
  }

  if (m_dcqcn) {
    try {
      m_dcqcn_params = dcqcn_preset(params.dcqcn_preset);
      cnp_gen_params np;
      np.min_interval_ns = params.cnp_interval_ns;
      np.mode = params.cnp_mode;
      m_cnp_gen = make_cnp_gen(params.cnp_model, np);
      make_dcqcn_rate_engine(params.dcqcn_model, m_dcqcn_params);  // fail here, naming this NIC
    } catch (const core::config_error& e) {
      throw core::config_error(inst + ": nic.cc dcqcn: " + e.what());
    }
  }

  SC_METHOD(transmit);  // runs once at time 0 to pick up work posted before the start, then on every wake-up
  sensitive << m_tx_event;

  auto& s = m_ctx.stats;
  s.counter(inst, "tx_packets", "packets", "frames transmitted", &m_tx_packets);
  s.counter(inst, "tx_data_packets", "packets", "RDMA WRITE packets transmitted", &m_tx_data_packets);
  s.counter(inst, "tx_acks", "packets", "ACKs transmitted", &m_tx_acks);
  s.counter(inst, "tx_payload_bytes", "bytes", "payload bytes transmitted", &m_tx_payload_bytes);
  s.counter(inst, "rx_packets", "packets", "frames received", &m_rx_packets);
  s.counter(inst, "rx_in_order", "packets", "data packets at the expected PSN", &m_rx_in_order);
  s.counter(inst, "rx_out_of_order", "packets", "data packets ahead of the expected PSN, inside the window",
            &m_rx_out_of_order);
  s.counter(inst, "rx_duplicate", "packets", "data packets already received", &m_rx_duplicate);
  s.counter(inst, "rx_out_of_window", "packets", "data packets beyond the reorder window, dropped", &m_rx_out_of_window);
  s.counter(inst, "rx_deferred", "packets", "packets held until their message's FIRST packet arrived", &m_rx_deferred);
  s.counter(inst, "rx_access_errors", "packets", "packets for an unregistered or out-of-range address",
            &m_rx_access_errors);
  s.counter(inst, "rx_unknown_qp", "packets", "packets for a QP that does not exist or is not connected",
            &m_rx_unknown_qp);
  s.counter(inst, "rx_acks", "packets", "ACKs received", &m_rx_acks);
  s.counter(inst, "pause_frames_received", "frames", "PFC frames received from the switch", &m_rx_pause_frames);
  s.counter(inst, "rx_ecn_marked", "packets", "data packets that arrived marked CE", &m_rx_ecn_marked);
  s.counter(inst, "tx_cnps", "packets", "CNPs sent (notification point)", &m_tx_cnps);
  s.counter(inst, "rx_cnps", "packets", "CNPs received (reaction point)", &m_rx_cnps);
  s.gauge(inst, "paused_us", "us", "time the transmitter was paused by PFC", [this] {
    const picoseconds end = std::min(m_paused_until, core::now());
    return double(m_paused_ps + (end > m_paused_from ? (end - m_paused_from).value : 0)) / 1e6;
  });
  s.counter(inst, "placed_bytes", "bytes", "payload bytes placed (copied into host memory unless nic.place_data is false)",
            &m_placed_bytes);
  s.counter(inst, "tracker_cycles", "cycles", "clock cycles the reorder tracker was stepped", &m_tracker_cycles);
  s.hist(inst, "ooo_distance", "PSNs", "distance of out-of-order arrivals ahead of the expected PSN", &m_ooo_distance);
}

supernic::~supernic() {
  for (auto& qp : m_qps)
    for (packet* p : qp->stash)
      if (p) m_ctx.pool.release(p);
}

void supernic::connect(core::link& out) { m_out = &out; }

void supernic::end_of_elaboration() {
  tlm::tlm_generic_payload trans;
  trans.set_address(0);
  trans.set_command(tlm::TLM_WRITE_COMMAND);
  tlm::tlm_dmi dmi;
  core::require(dma->get_direct_mem_ptr(trans, dmi) && dmi.is_read_write_allowed() && dmi.get_start_address() == 0,
                name(), "host memory does not grant read/write DMI from address 0");
  m_mem_ptr = dmi.get_dmi_ptr();
  m_mem_size = dmi.get_end_address() + 1;
  core::require(m_out != nullptr, name(), "no link connected");
  for (auto& qp : m_qps)
    for (size_t i = 0; i < qp->send_queue.size(); ++i) check_work_request(qp->send_queue[i]);
}

void supernic::start_of_simulation() { m_started = true; }

uint32_t supernic::register_region(uint64_t addr, uint64_t length) {
  m_regions.push_back({addr, length});
  return uint32_t(m_regions.size());
}

uint32_t supernic::draw_initial_psn() {
  return m_params.random_initial_psn ? uint32_t(m_rng() & core::psn_mask) : uint32_t(m_params.initial_psn);
}

uint32_t supernic::create_qp() {
  auto qp = std::make_unique<queue_pair>();
  qp->qpn = first_qpn + uint32_t(m_qps.size());
  qp->tracker = make_reorder_tracker(m_params.reorder, uint32_t(m_params.reorder_window));
  qp->stash.assign(m_params.reorder_window, nullptr);
  qp->window_mask = uint32_t(m_params.reorder_window - 1);
  qp->messages.reserve(16);
  if (m_dcqcn) {
    core::require(m_out != nullptr, name(), "create_qp: connect the NIC's link first (DCQCN needs its line rate)");
    dcqcn_params rp = m_dcqcn_params;
    rp.line_rate_mbps = m_out->rate().value / 1'000'000;  // the port's rate, whatever the preset's testbed
    qp->rate = make_dcqcn_rate_engine(m_params.dcqcn_model, rp);
    qp->rate->reset(rp, cc_cycles());
  }
  m_qps.push_back(std::move(qp));
  return m_qps.back()->qpn;
}

void supernic::connect_qp(uint32_t qpn, core::ip_address remote_ip, uint32_t remote_qpn, uint32_t sq_psn,
                          uint32_t rq_psn) {
  core::require(qpn >= first_qpn && qpn - first_qpn < m_qps.size(), name(), "connect_qp: no QP " + std::to_string(qpn));
  queue_pair& qp = *m_qps[qpn - first_qpn];
  qp.connected = true;
  qp.remote_ip = remote_ip;
  qp.remote_qpn = remote_qpn;
  qp.next_psn = sq_psn & core::psn_mask;
  qp.tracker->reset(rq_psn & core::psn_mask);
  qp.head = rq_psn & core::psn_mask;
  // Fixed entropy: a hash of the connection, as NICs derive the RoCEv2 source port from the QP.
  qp.src_port = uint16_t(roce_entropy_base | (core::splitmix64(uint64_t(qpn) << 24 ^ remote_qpn ^ m_mac) & 0x3fff));
}

void supernic::check_work_request(const work_request& wr) const {
  core::require(wr.local_addr <= m_mem_size && wr.length <= m_mem_size - wr.local_addr, name(),
                "work request " + std::to_string(wr.wr_id) + ": source [" + std::to_string(wr.local_addr) + ", +" +
                    std::to_string(wr.length) + ") is outside host memory of " + std::to_string(m_mem_size) + " bytes");
  core::require(wr.length < (uint64_t(1) << 31), name(),
                "work request " + std::to_string(wr.wr_id) + ": length exceeds the 2^31 byte RC message limit");
}

void supernic::post_write(uint32_t qpn, uint64_t wr_id, uint64_t local_addr, uint64_t remote_addr, uint32_t rkey,
                          uint64_t length, picoseconds post_at) {
  core::require(qpn >= first_qpn && qpn - first_qpn < m_qps.size() && m_qps[qpn - first_qpn]->connected, name(),
                "post_write: QP " + std::to_string(qpn) + " is not connected");
  queue_pair& qp = *m_qps[qpn - first_qpn];
  core::require(qp.send_queue.empty() || qp.send_queue.back().post_at <= post_at, name(),
                "post_write: work requests on one QP must be posted in time order");
  work_request wr{wr_id, local_addr, remote_addr, length, rkey, post_at};
  if (m_mem_ptr) check_work_request(wr);
  qp.send_queue.push_back(wr);
  if (m_started) wake_transmitter(max(post_at + m_wqe_latency, core::now()));
}

uint64_t supernic::outstanding_work() const {
  uint64_t n = 0;
  for (const auto& qp : m_qps) n += qp->send_queue.size() + qp->unacked.size();
  return n;
}

// ---- transmit ------------------------------------------------------------------------------------------

void supernic::wake_transmitter(picoseconds at) {
  if (!(at < m_tx_wake)) return;  // an earlier wake-up is already pending; it re-evaluates everything
  m_tx_wake = at;
  m_tx_event.notify(core::to_sc_time(at - core::now()));
}

void supernic::transmit() {
  ++m_ctx.events;
  const picoseconds t = core::now();
  m_tx_wake = never;
  while (!m_tx_fifo.empty() && m_tx_fifo.front() <= t) m_tx_fifo.pop_front();
  // PFC pauses the priority of data and ACKs; CNPs travel on their own priority and still go.
  const bool paused = t < m_paused_until;
  // Fill the MAC FIFO: each frame starts when the one before it has left, so the wire stays busy while the
  // scheduler sleeps; one wake-up serves up to tx_fifo_frames frames.
  picoseconds next_ready = never;
  while (m_tx_fifo.size() < m_params.tx_fifo_frames) {
    packet* p = next_cnp();
    if (p == nullptr && !paused) p = next_ack();
    if (p == nullptr && !paused) p = next_data(&next_ready);
    if (p == nullptr) break;
    const picoseconds start = max(t, m_out->wire_free_at());
    p->injected_at = start;
    ++m_tx_packets;
    m_tx_fifo.push_back(m_out->transmit(p, start));
  }
  if (!m_tx_fifo.empty()) {
    // Refill when one frame is left in the FIFO (at once for a FIFO of one frame).
    const size_t n = m_tx_fifo.size();
    wake_transmitter(n >= 2 ? m_tx_fifo[n - 2] : m_tx_fifo[n - 1]);
    return;
  }
  if (paused) {
    wake_transmitter(m_paused_until);  // resume then (an XON wakes it sooner)
    return;
  }
  if (!m_acks.empty() && m_acks.front().ready < next_ready) next_ready = m_acks.front().ready;
  if (next_ready != never) wake_transmitter(next_ready);
}

void supernic::fill_headers(packet* p, const queue_pair& qp, uint16_t src_port) {
  p->eth.src_mac = m_mac;
  p->eth.dst_mac = 0x02'00'00'00'00'01ull;  // the first-hop router
  p->ip.dscp = uint8_t(m_params.dscp);
  p->ip.ecn = ecn_ect0;
  p->ip.src = m_ip;
  p->ip.dst = qp.remote_ip;
  p->udp.src_port = src_port;
  p->bth.dest_qp = qp.remote_qpn;
}

packet* supernic::next_ack() {
  if (m_acks.empty() || core::now() < m_acks.front().ready) return nullptr;
  queue_pair& qp = *m_qps[m_acks.front().qpn - first_qpn];
  m_acks.pop_front();
  qp.ack_queued = false;
  packet* p = m_ctx.pool.acquire();
  fill_headers(p, qp, qp.src_port);
  p->bth.opcode = bth_opcode::rc_acknowledge;
  // The ACK is built when it leaves, so it carries the newest in-order PSN (coalescing for free).
  p->bth.psn = (qp.head - 1) & core::psn_mask;
  p->has_aeth = true;
  p->aeth.syndrome = ack_syndrome;
  p->aeth.msn = qp.msn & core::psn_mask;
  p->seal();
  ++m_tx_acks;
  return p;
}

packet* supernic::next_data(picoseconds* next_ready) {
  const picoseconds t = core::now();
  const size_t n = m_qps.size();
  for (size_t i = 0; i < n; ++i) {
    queue_pair& qp = *m_qps[(m_rr + i) % n];
    if (qp.send_queue.empty()) continue;
    const picoseconds ready = qp.send_queue.front().post_at + m_wqe_latency;
    if (t < ready) {
      if (ready < *next_ready) *next_ready = ready;
      continue;
    }
    if (t < qp.next_send) {  // DCQCN pacing: this QP's rate does not allow another packet yet
      if (qp.next_send < *next_ready) *next_ready = qp.next_send;
      continue;
    }
    m_rr = (m_rr + i + 1) % n;
    return build_data_packet(qp);
  }
  return nullptr;
}

packet* supernic::build_data_packet(queue_pair& qp) {
  work_request& wr = qp.send_queue.front();
  const uint64_t mtu = m_params.mtu_bytes;
  const uint64_t payload = std::min(mtu, wr.length - qp.tx_offset);
  const bool first = qp.tx_offset == 0;
  const bool last = qp.tx_offset + payload == wr.length;
  const uint16_t port = m_spray ? uint16_t(roce_entropy_base | (m_rng() & 0x3fff)) : qp.src_port;
  packet* p = m_ctx.pool.acquire();
  fill_headers(p, qp, port);
  p->bth.opcode = first && last ? bth_opcode::rc_rdma_write_only
                  : first       ? bth_opcode::rc_rdma_write_first
                  : last        ? bth_opcode::rc_rdma_write_last
                                : bth_opcode::rc_rdma_write_middle;
  p->bth.psn = qp.next_psn;
  p->bth.ack_req = last;
  p->bth.pad_count = uint8_t((4 - payload % 4) % 4);
  if (first) {
    wr.first_psn = qp.next_psn;
    p->has_reth = true;
    p->reth = {wr.remote_addr, wr.rkey, uint32_t(wr.length)};
  }
  p->payload = m_mem_ptr + wr.local_addr + qp.tx_offset;  // a reference: the bytes are read where placed
  p->payload_bytes = uint32_t(payload);
  qp.next_psn = core::psn_add(qp.next_psn, 1);
  qp.tx_offset += payload;
  p->seal();
  ++m_tx_data_packets;
  m_tx_payload_bytes += payload;
  if (qp.rate) {
    // The reaction point counts the bytes and sets the pace: the next packet may start once this one's
    // wire bytes have gone at the current rate.
    const uint64_t wire = p->wire().value;
    qp.rate->sent(uint32_t(std::min<uint64_t>(wire, 65535)), cc_cycles());
    const uint64_t rate_kbps = std::max<uint64_t>(1, qp.rate->outputs().rate_kbps);
    const picoseconds gap(uint64_t((unsigned __int128)wire * 8 * 1'000'000'000ull / rate_kbps));
    qp.next_send = max(core::now(), qp.next_send) + gap;
  }
  if (last) {
    wr.last_psn = p->bth.psn;
    qp.unacked.push_back(wr);
    qp.send_queue.pop_front();
    qp.tx_offset = 0;
  }
  return p;
}

// ---- receive -------------------------------------------------------------------------------------------

void supernic::on_pause(const packet* p) {
  ++m_rx_pause_frames;
  if (!(p->pfc.class_enable >> m_priority & 1)) return;
  const picoseconds t = core::now();
  const picoseconds end = std::min(m_paused_until, t);
  if (end > m_paused_from) m_paused_ps += (end - m_paused_from).value;
  m_paused_from = t;
  // Quanta of 512 bit times at the link's rate; zero resumes at once.
  const uint64_t quanta = p->pfc.quanta[m_priority];
  m_paused_until = t + picoseconds(uint64_t((unsigned __int128)quanta * core::pfc_quantum_bits *
                                            1'000'000'000'000ull / m_out->rate().value));
  if (m_started) wake_transmitter(m_paused_until);  // resume then (or now, for an XON)
}

void supernic::receive(packet* p, unsigned /*port*/) {
  if (p->kind == core::frame_kind::pfc) {
    on_pause(p);
    m_ctx.pool.release(p);
    return;
  }
  ++m_rx_packets;
  if (p->bth.opcode == bth_opcode::rc_acknowledge)
    on_ack(p);
  else if (p->bth.opcode == bth_opcode::cnp)
    on_cnp(p);
  else
    on_write(p);
}

// ---- congestion control --------------------------------------------------------------------------------

uint64_t supernic::cc_cycles() const {
  // Both blocks count cycles of the NIC's timestamp clock (1 GHz in their defaults: one cycle per ns).
  return uint64_t((unsigned __int128)core::now().value * m_dcqcn_params.clock_mhz / 1'000'000);
}

void supernic::on_cnp(packet* p) {
  ++m_rx_cnps;
  const uint32_t qpn = p->bth.dest_qp;
  m_ctx.pool.release(p);
  if (qpn < first_qpn || qpn - first_qpn >= m_qps.size()) {
    ++m_rx_unknown_qp;
    return;
  }
  queue_pair& qp = *m_qps[qpn - first_qpn];
  if (qp.rate) qp.rate->cnp(cc_cycles());  // without DCQCN a CNP is counted and ignored
}

void supernic::notify_congestion(queue_pair& qp) {
  if (!m_cnp_gen->marked_arrival(qp.qpn, cc_cycles())) return;  // one CNP per interval per flow (or port)
  m_cnps.push_back(qp.qpn);
  if (m_started) wake_transmitter(core::now());
}

packet* supernic::next_cnp() {
  if (m_cnps.empty()) return nullptr;
  queue_pair& qp = *m_qps[m_cnps.front() - first_qpn];
  m_cnps.pop_front();
  packet* p = m_ctx.pool.acquire();
  fill_headers(p, qp, qp.src_port);
  p->ip.dscp = uint8_t(m_params.cnp_dscp);
  p->ip.ecn = 0;  // a CNP is not ECN-capable
  p->bth.opcode = bth_opcode::cnp;
  p->bth.becn = true;
  p->bth.psn = 0;
  p->seal();
  ++m_tx_cnps;
  return p;
}

void supernic::on_ack(packet* p) {
  ++m_rx_acks;
  const uint32_t qpn = p->bth.dest_qp;
  if (qpn < first_qpn || qpn - first_qpn >= m_qps.size()) {
    ++m_rx_unknown_qp;
    m_ctx.pool.release(p);
    return;
  }
  queue_pair& qp = *m_qps[qpn - first_qpn];
  const uint32_t acked = p->bth.psn;  // every PSN up to and including this one
  while (!qp.unacked.empty() && !core::psn_before(acked, qp.unacked.front().last_psn)) {
    const work_request& wr = qp.unacked.front();
    m_completions.push_back({wr.wr_id, qp.qpn, wr.length, wr.post_at, core::now()});
    qp.unacked.pop_front();
  }
  m_ctx.pool.release(p);
}

void supernic::on_write(packet* p) {
  const uint32_t qpn = p->bth.dest_qp;
  if (qpn < first_qpn || qpn - first_qpn >= m_qps.size() || !m_qps[qpn - first_qpn]->connected) {
    ++m_rx_unknown_qp;
    m_ctx.pool.release(p);
    return;
  }
  queue_pair& qp = *m_qps[qpn - first_qpn];
  if (p->ip.ecn == 3) {  // CE: a switch on the way saw its queue above the RED line
    ++m_rx_ecn_marked;
    if (m_dcqcn) notify_congestion(qp);
  }
  const uint32_t head_before = qp.head;
  const psn_result r = qp.tracker->arrive(p->bth.psn);
  m_tracker_cycles += r.cycles;
  qp.head = r.head_psn;
  switch (r.verdict) {
    case psn_verdict::duplicate:
      ++m_rx_duplicate;
      queue_ack(qp);  // the first ACK may have been lost: acknowledge again
      m_ctx.pool.release(p);
      return;
    case psn_verdict::out_of_window:
      ++m_rx_out_of_window;
      m_ctx.pool.release(p);
      return;
    case psn_verdict::in_order:
      ++m_rx_in_order;
      break;
    case psn_verdict::out_of_order:
      ++m_rx_out_of_order;
      m_ooo_distance.add((p->bth.psn - head_before) & core::psn_mask);
      break;
  }
  const bth_opcode op = p->bth.opcode;
  if (op == bth_opcode::rc_rdma_write_first || op == bth_opcode::rc_rdma_write_only) {
    learn_message(qp, p);
  } else if (!try_place(qp, p)) {
    ++m_rx_deferred;  // its FIRST (with the RETH) is still on the way: hold the descriptor, not the bytes
    qp.stash[p->bth.psn & qp.window_mask] = p;
  }
  if (r.advanced > 0) {
    qp.since_ack += r.advanced;
    const bool retired = retire_messages(qp);
    if (retired || qp.since_ack >= m_params.ack_every_packets) {
      qp.since_ack = 0;
      queue_ack(qp);
    }
  }
}

void supernic::place(known_message& m, const packet* p) {
  const uint64_t offset = uint64_t((p->bth.psn - m.first_psn) & core::psn_mask) * m_params.mtu_bytes;
  if (!m.valid || offset + p->payload_bytes > m.length) {
    ++m_rx_access_errors;
    return;
  }
  if (m_params.place_data)
    std::memcpy(m_mem_ptr + m.va + offset, p->payload, p->payload_bytes);  // direct data placement
  m.placed_bytes += p->payload_bytes;
  m_placed_bytes += p->payload_bytes;
}

bool supernic::try_place(queue_pair& qp, packet* p) {
  for (auto it = qp.messages.rbegin(); it != qp.messages.rend(); ++it) {
    if (((p->bth.psn - it->first_psn) & core::psn_mask) < it->packets) {
      place(*it, p);
      m_ctx.pool.release(p);
      return true;
    }
  }
  return false;
}

void supernic::learn_message(queue_pair& qp, packet* p) {
  const uint64_t mtu = m_params.mtu_bytes;
  const uint64_t length = p->reth.dma_length;
  known_message m{};
  m.first_psn = p->bth.psn;
  m.packets = uint32_t(std::max<uint64_t>(1, (length + mtu - 1) / mtu));
  m.va = p->reth.va;
  m.length = length;
  m.first_arrival = core::now();
  const uint32_t key = p->reth.rkey;
  m.valid = key >= 1 && key <= m_regions.size() && m.va >= m_regions[key - 1].addr &&
            m.va - m_regions[key - 1].addr <= m_regions[key - 1].length &&
            length <= m_regions[key - 1].length - (m.va - m_regions[key - 1].addr) && m.va + length <= m_mem_size;
  // Keep messages ordered by their distance from the in-order head (FIRSTs may arrive out of order).
  const uint32_t head = qp.head;
  auto pos = std::find_if(qp.messages.begin(), qp.messages.end(), [&](const known_message& k) {
    return ((k.first_psn - head) & core::psn_mask) > ((m.first_psn - head) & core::psn_mask);
  });
  known_message& placed = *qp.messages.insert(pos, m);
  place(placed, p);
  m_ctx.pool.release(p);
  // Packets of this message that overtook its FIRST wait in the stash: place them now.
  for (uint32_t k = 1; k < placed.packets; ++k) {
    const uint32_t psn = core::psn_add(placed.first_psn, k);
    packet*& slot = qp.stash[psn & qp.window_mask];
    if (slot != nullptr && slot->bth.psn == psn) {
      place(placed, slot);
      m_ctx.pool.release(slot);
      slot = nullptr;
    }
  }
}

bool supernic::retire_messages(queue_pair& qp) {
  bool any = false;
  while (!qp.messages.empty()) {
    const known_message& m = qp.messages.front();
    const uint32_t last = core::psn_add(m.first_psn, m.packets - 1);
    if (!core::psn_before(last, qp.head)) break;  // the head has not passed its last packet yet
    if (m.valid && m.placed_bytes == m.length)
      m_placed.push_back({qp.qpn, m.va, m.length, m.first_arrival, core::now()});
    qp.msn = (qp.msn + 1) & core::psn_mask;
    qp.messages.erase(qp.messages.begin());
    any = true;
  }
  return any;
}

void supernic::queue_ack(queue_pair& qp) {
  if (qp.ack_queued) return;  // the queued ACK will carry the newest PSN when it is built
  qp.ack_queued = true;
  const picoseconds ready = core::now() + m_rx_latency;
  m_acks.push_back({ready, qp.qpn});
  if (m_started) wake_transmitter(max(ready, m_out->wire_free_at()));
}

}  // namespace fabricsim::nic
