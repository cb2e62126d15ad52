// The SuperNIC responder: what happens to a request packet (RDMA WRITE, SEND, READ request) once the reorder
// block has taken it. Its PSN goes through the QP's reorder tracker (RTL or its reference model); WRITE payloads
// are placed at their offsets in whatever order packets arrive, a packet whose FIRST (with the RETH) is still
// on the way waits in the stash; SEND packets wait in the stash until the in-order head passes them (a SEND
// MIDDLE names no buffer: which message it belongs to is only certain once every earlier PSN is in), then go
// into the posted receive buffers in PSN order; a READ request queues READ responses (read_job) for the
// transmitter. A SEND FIRST or a WRITE with immediate's LAST that finds no receive posted takes the head back
// to its PSN and owes an RNR NAK. The acknowledgements themselves are the ack engine's (ack_engine.h): the
// responder tells it what arrives and how the head moves.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "sc_models/core/packet.h"
#include "sc_models/core/packet_pool.h"
#include "sc_models/core/ring.h"
#include "sc_models/core/stats.h"
#include "sc_models/core/units.h"
#include "sc_models/nic/ack_engine.h"
#include "sc_models/nic/nic_counters.h"
#include "sc_models/nic/reorder_tracker.h"
#include "sc_models/nic/work_request.h"

namespace fabricsim::nic {

struct supernic_params;

// READ responses owed: packets k .. packets-1 of the response to one READ request.
struct read_job {
  uint32_t first_psn, packets, k;
  uint64_t va, length;
  core::picoseconds ready;  // never: a bounce copy of its data is still to be done
};

// What the responder asks of its NIC.
class responder_host {
 public:
  virtual ~responder_host() = default;
  // Places `p`'s payload at `va` (DMI, a posted PCIe write, or generated; the landing observer sees it).
  virtual void place_payload(uint64_t va, const core::packet* p) = 0;
  // A message is fully placed and the head has passed its last PSN.
  virtual void message_placed(const placed_message& done) = 0;
  // QP q's responses to a READ of [va, +length) could leave at `ready`: when they may (never: a bounce copy
  // of the data must run first, and its end sets read_job::ready).
  virtual core::picoseconds response_ready(size_t q, uint64_t va, uint64_t length, core::picoseconds ready) = 0;
  // A read_job was queued, ready at `ready` (never: not yet): the transmitter looks then.
  virtual void response_queued(core::picoseconds ready) = 0;
};

class alignas(64) responder {
 public:
  static constexpr core::picoseconds never{UINT64_MAX};
  // `sacks`: every out-of-order arrival is SACKed (loss_recovery::sacks()). Statistics go under `instance`.
  responder(const supernic_params& params, ack_engine& acks, bool sacks, responder_host& host, core::packet_pool& pool,
            shared_counters& shared, const std::string& instance, core::stats_registry* stats);
  responder(const responder&) = delete;
  responder& operator=(const responder&) = delete;
  ~responder();  // gives back the packets still in the stashes

  // A memory region the peers may write and read: [addr, +length), its R_Key the number registered so far.
  uint32_t register_region(uint64_t addr, uint64_t length);
  void set_memory_size(uint64_t bytes) { m_mem_size = bytes; }  // host memory: a region must lie inside it
  // A new queue pair, index q = the number added before it; `qpn` names it in the completions.
  void add_qp(uint32_t qpn, std::unique_ptr<reorder_tracker> tracker);
  // QP q is connected: the first PSN it expects is `rq_psn`; `mtu` its path MTU (payload bytes per packet).
  void connect(size_t q, uint32_t rq_psn, uint64_t mtu);
  // A receive buffer for the peer's SENDs (and a receive for its WRITEs with immediate), consumed in order.
  void post_recv(size_t q, uint64_t wr_id, uint64_t addr, uint64_t length) {
    m_qps[q]->rq.push_back({wr_id, addr, length});
  }

  // A request packet of QP q at its reorder-block transaction, time `t`; the responder owns it from here.
  void receive(size_t q, core::packet* p, core::picoseconds t);

  uint32_t head(size_t q) const { return m_qps[q]->head; }  // the tracker's expected PSN after the last arrival
  uint32_t msn(size_t q) const { return m_qps[q]->msn; }    // messages completed (ACKs and READ responses carry it)
  uint64_t placed_bytes(size_t q) const { return m_qps[q]->placed_bytes; }
  // QP q's READ responses still to send, oldest request first (the transmitter takes them from the front).
  core::ring<read_job>& responses(size_t q) { return m_qps[q]->responses; }
  const std::vector<recv_completion>& recv_completions() const { return m_recv_completions; }
  uint64_t tracker_cycles() const { return m_tracker_cycles; }  // clock cycles the trackers were stepped

 private:
  // A message known from its RETH: a WRITE (placed at va) or a READ request (answered).
  struct known_message {
    uint32_t first_psn, packets;
    uint64_t va, length, placed_bytes;
    core::picoseconds first_arrival;
    bool valid;  // R_Key and range checked against a registered region
    bool read = false;
    bool imm = false;  // its LAST carried an immediate: it consumes a receive when the head passes it
    uint32_t imm_value = 0;
  };
  struct recv_wqe {
    uint64_t wr_id, addr, length;
  };
  struct region {
    uint64_t addr, length;
  };
  struct rx_qp {
    uint32_t qpn = 0;
    std::unique_ptr<reorder_tracker> tracker;
    uint32_t head = 0;                    // the tracker's expected PSN after the last arrival
    uint64_t held = 0;                    // PSNs the tracker holds beyond the head (reorder occupancy)
    std::vector<known_message> messages;  // learnt from FIRST/ONLY, ordered by PSN from the head
    std::vector<core::packet*> stash;     // packets waiting for their FIRST or the head, slot = PSN mod window
    uint32_t window_mask = 0;
    uint64_t mtu = 0;
    uint32_t msn = 0;
    uint64_t placed_bytes = 0;          // payload placed for this QP (report only)
    core::ring<recv_wqe> rq{8};         // posted receives, consumed in order
    core::ring<read_job> responses{4};  // READ responses to send, oldest request first
    bool in_send = false;               // a SEND is being assembled as the head passes its packets
    recv_wqe send_buf{};                // its receive buffer
    uint32_t send_first = 0;            // its first PSN
    uint64_t send_bytes = 0;
    bool send_error = false;  // longer than its buffer
    core::picoseconds send_first_arrival{};
  };

  // Tracker use.
  void note_held(rx_qp& qp, const psn_result& r);  // reorder-window occupancy
  uint32_t retire_read_psns(rx_qp& qp, uint32_t psn, uint32_t packets);
  void on_duplicate(size_t q, core::packet* p, uint32_t head_before, core::picoseconds t);
  // Placement of WRITEs.
  bool region_valid(uint32_t rkey, uint64_t va, uint64_t length) const;
  known_message& insert_message(rx_qp& qp, const known_message& m);  // in PSN order from the head
  void learn_message(rx_qp& qp, core::packet* p, core::picoseconds t);
  bool try_place(rx_qp& qp, core::packet* p);  // false: message not known yet (FIRST still to come)
  void place(rx_qp& qp, known_message& m, const core::packet* p);
  // In PSN order as the head passes [from, to): retires messages, places SENDs, consumes receives; false when
  // a missing receive forced an RNR NAK (the head is then back at its PSN).
  bool walk_head(size_t q, uint32_t from, uint32_t to, bool* message_done, core::picoseconds t);
  // Retires the messages whose last PSN is at or before `psn`; false as walk_head.
  bool retire_messages(size_t q, uint32_t psn, bool* message_done, core::picoseconds t);
  void rnr_reset(size_t q, uint32_t psn, core::picoseconds t);
  // The receive queue and SEND.
  bool bind_recv(rx_qp& qp, recv_wqe* out);  // false: the receive queue is empty
  void process_send(rx_qp& qp, core::packet* p, core::picoseconds t);
  // READ serving.
  void on_read_request(size_t q, core::packet* p, bool duplicate, core::picoseconds t);
  uint32_t serve_deferred_read(size_t q, core::packet* p, core::picoseconds t);

  // Laid out by use (the class is aligned to a line): lines 0 and 1 hold what every received packet reads
  // and the counters it updates; a NIC is cold at nearly every packet of a large fabric, so each line here is
  // a miss per packet (docs/performance.md, session 12).
  ack_engine& m_ack;
  responder_host& m_host;
  core::packet_pool& m_pool;
  shared_counters& m_shared;
  std::vector<std::unique_ptr<rx_qp>> m_qps;  // unique: a reference stays valid while QPs are added
  const bool m_sacks;
  const bool m_place_data;
  uint64_t m_rx_in_order = 0, m_rx_out_of_order = 0;
  uint64_t m_tracker_cycles = 0;
  uint64_t m_reorder_peak = 0;  // most PSNs any QP's tracker held beyond its head at once
  uint64_t m_rx_deferred = 0;
  const uint64_t m_window;
  const core::picoseconds m_rx_latency;
  uint64_t m_mem_size = 0;

  std::vector<region> m_regions;  // index = R_Key - 1
  std::vector<recv_completion> m_recv_completions;
  uint64_t m_rx_duplicate = 0, m_rx_out_of_window = 0;
  uint64_t m_rx_read_deferred = 0, m_rx_read_already_queued = 0, m_recv_consumed = 0;
  core::histogram m_ooo_distance;
};

}  // namespace fabricsim::nic
