// The SuperNIC requester: each queue pair's work-request ring (send_queue, work_request.h), segmentation at the
// path MTU into consecutive 24-bit PSNs given at post time, READ requests that reserve one PSN per response
// packet, the send window, send-queue depth and max_rd_atomic limits, and what comes back: ACKs, NAKs, RNR NAKs
// and READ responses (placed at their offsets in any order), completing work requests in order. Loss recovery
// (loss_recovery.h) keeps the timers and says what to resend; congestion control (congestion_control.h) paces
// and, with HPCC, holds a window. The NIC builds the headers and chooses the payload's source (payload DMA).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "sc_models/core/packet.h"
#include "sc_models/core/packet_pool.h"
#include "sc_models/core/stats.h"
#include "sc_models/core/units.h"
#include "sc_models/nic/loss_recovery.h"
#include "sc_models/nic/nic_counters.h"
#include "sc_models/nic/work_request.h"

namespace fabricsim::nic {

struct supernic_params;
class congestion_control;

// What the requester asks of its NIC.
class requester_host {
 public:
  virtual ~requester_host() = default;
  // A fresh data packet of QP q with its headers filled (addresses, QPN, the UDP port path entropy picks
  // at `t`, now).
  virtual core::packet* data_packet(size_t q, core::picoseconds t) = 0;
  // Sets `p`'s payload to [va, +bytes) of source memory; `fresh`: its PSN is sent for the first time.
  virtual void attach_payload(size_t q, core::packet* p, uint64_t va, uint64_t bytes, bool fresh) = 0;
  // May QP q send the new PSN `psn` of `wr` now (nic.placement pcie: its payload's read is complete)?
  virtual bool payload_ready(size_t q, uint32_t psn, const work_request& wr) = 0;
  // A WRITE or SEND of [va, +length) posted at `post_at`: when the NIC may see it (never: a bounce copy to
  // host memory runs first and its end sets work_request::staged_at).
  virtual core::picoseconds staged_at(size_t q, uint64_t va, uint64_t length, core::picoseconds post_at) = 0;
  // Places a READ response's payload at `va` of local memory.
  virtual void place_response(uint64_t va, const core::packet* p) = 0;
  // QP q's oldest work request `wr` completed (it leaves the ring after this call), or QP q failed.
  virtual void work_retired(size_t q, const work_request& wr) = 0;
  virtual void qp_failed(size_t q) = 0;
  virtual void requester_wake(core::picoseconds at) = 0;  // the transmitter looks again at `at`
};

class requester {
 public:
  static constexpr core::picoseconds never{UINT64_MAX};
  requester(const supernic_params& params, loss_recovery& lr, congestion_control& cc, requester_host& host,
            core::packet_pool& pool, shared_counters& shared, const std::string& instance, core::stats_registry* stats);
  requester(const requester&) = delete;
  requester& operator=(const requester&) = delete;

  void add_qp(uint32_t qpn);  // index q = the number added before it; `qpn` names it in the completions
  // QP q is connected: its first send PSN is `sq_psn`, `mtu` its path MTU (payload bytes per packet).
  void connect(size_t q, uint32_t sq_psn, uint64_t mtu);
  // A work request (its PSNs are given here), visible to the NIC at `wr.post_at`; on a failed QP it completes
  // at once as flushed.
  void post(size_t q, work_request wr, core::picoseconds t);

  // QP q's next request packet at `t` (a selective resend first, then the segmentation path), or nullptr;
  // lowers `*next_ready` to when QP q will have one.
  core::packet* next_packet(size_t q, core::picoseconds t, core::picoseconds* next_ready);
  // An ACK, NAK or RNR NAK for QP q; `p` stays the caller's.
  void on_ack(size_t q, core::packet* p, core::picoseconds t);
  // A READ response for QP q, admitted to the receive buffer; given back to `pool`.
  void on_read_response(size_t q, core::packet* p, uint32_t nak_threshold, core::picoseconds t);
  // QP q moves to the error state: its work requests complete in error, the first with `why`.
  void fail(size_t q, completion_status why, core::picoseconds t);

  send_queue& queue(size_t q) { return *m_qps[q]; }
  const send_queue& queue(size_t q) const { return *m_qps[q]; }
  bool failed(size_t q) const { return m_qps[q]->error; }
  bool has_work(size_t q) const { return m_qps[q]->tx_index < m_qps[q]->wqes.size(); }
  const std::vector<completion>& completions() const { return m_completions; }

 private:
  struct tx_qp : send_queue {
    uint32_t qpn = 0;
    uint64_t mtu = 0;
    uint64_t reads_in_flight = 0;   // READ requests sent whose responses are not all in (max_rd_atomic)
    bool stalled = false;           // new work waits for sq_depth or max_rd_atomic: wake on completion
    core::picoseconds rnr_until{};  // after an RNR NAK: no request before this
    uint64_t rnr_retries = 0;       // RNR NAKs since the last progress
    uint32_t rd_max = 0;            // one past the highest READ response PSN received
    bool error = false;             // retries exhausted: every work request completes in error
  };
  // May a new PSN of `next` go (send window, send queue depth, READ limit, HPCC window)? Counts a READ.
  bool admits_new(size_t q, const work_request& next, uint32_t psn);
  core::packet* build(size_t q, size_t index, uint32_t psn, core::picoseconds t);  // segmentation
  void build_read_request(tx_qp& qp, const work_request& wr, uint32_t k, core::packet* p);
  void build_payload(size_t q, const work_request& wr, uint32_t k, core::packet* p);
  void acknowledge(size_t q, uint32_t psn, core::picoseconds t);  // cumulative: every PSN up to `psn`
  void advance(size_t q, core::picoseconds t);                    // una, completions, limits after progress
  void on_nak(size_t q, uint32_t psn, core::picoseconds t);
  void on_rnr(size_t q, uint32_t psn, core::picoseconds t);

  loss_recovery& m_lr;
  congestion_control& m_cc;
  requester_host& m_host;
  core::packet_pool& m_pool;
  shared_counters& m_shared;
  const bool m_place_data;
  const core::picoseconds m_wqe_latency, m_rnr_timer;
  const uint64_t m_send_window, m_sq_depth, m_max_rd_atomic, m_rnr_retry_count;
  std::vector<std::unique_ptr<tx_qp>> m_qps;
  std::vector<completion> m_completions;
  uint64_t m_tx_data_packets = 0, m_tx_read_requests = 0, m_read_reissues = 0, m_tx_retransmitted = 0;
  uint64_t m_rx_nak = 0, m_rx_rnr_nak = 0, m_qp_errors = 0, m_rx_duplicate_responses = 0;
};

}  // namespace fabricsim::nic
