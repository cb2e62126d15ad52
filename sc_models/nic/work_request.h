// The SuperNIC requester's work requests: one posted RDMA operation, cut into consecutive PSNs at post time,
// and the send queue of one queue pair (its work requests and the PSNs the segmentation path and the ACKs
// have reached), which loss recovery (loss_recovery.h) reads and rewinds; and what the completion queues
// report at either end (a finished work request, a consumed receive, a placed message).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "sc_models/core/packet.h"
#include "sc_models/core/ring.h"
#include "sc_models/core/units.h"

namespace fabricsim::nic {

// The operation of a work request.
enum class rdma_op : uint8_t { write, write_imm, send, send_imm, read };
const char* to_string(rdma_op op);

struct work_request {
  uint64_t wr_id = 0;
  uint64_t local_addr = 0, remote_addr = 0, length = 0;
  uint32_t rkey = 0;
  core::picoseconds post_at{};
  uint32_t first_psn = 0, packets = 1;  // PSNs are given at post time: the QP's PSNs are consecutive
  core::picoseconds staged_at{};        // visible to the NIC (post_at; bounce: when its copy was posted)
  uint64_t retransmitted = 0;
  rdma_op op = rdma_op::write;
  uint32_t imm = 0;
  // READ: which response packets have arrived (one flag per PSN; sized at post, not per packet) and how
  // many from the first are all in.
  std::vector<uint8_t> got;
  uint32_t rd_done = 0;
  uint32_t last_psn() const { return core::psn_add(first_psn, packets - 1); }
};

// A queue pair's requester: work requests stay in `wqes` from post to completion; their PSN ranges are
// consecutive. una <= next_psn <= snd_max <= post_psn (24-bit, in that order).
struct send_queue {
  core::ring<work_request> wqes;
  size_t tx_index = 0;    // the work request holding next_psn (wqes.size(): nothing to send)
  uint32_t next_psn = 0;  // the next PSN the segmentation path sends (go-back-N rewinds it)
  uint32_t snd_max = 0;   // one past the highest PSN ever sent: PSNs before it are resends
  uint32_t una = 0;       // the oldest unacknowledged PSN
  uint32_t post_psn = 0;  // first PSN of the next work request posted
  uint32_t acked = 0;     // one past the highest PSN an ACK (or NAK) acknowledged

  // The work request holding `psn`, wqes.size() if none.
  size_t find_wr(uint32_t psn) const;
  // Go-back-N: the next packet the segmentation path sends is `psn`.
  void seek(uint32_t psn) {
    next_psn = psn;
    tx_index = find_wr(psn);
  }
};

// How a work request ended (ibv_wc_status): success, IBV_WC_RETRY_EXC_ERR for the request whose retries
// ran out, IBV_WC_WR_FLUSH_ERR for the ones behind it on the failed QP.
// rnr_retry_exceeded: IBV_WC_RNR_RETRY_EXC_ERR; length_error: a SEND longer than the receive buffer
// (IBV_WC_LOC_LEN_ERR at the responder).
enum class completion_status : uint8_t { success, retry_exceeded, flushed, rnr_retry_exceeded, length_error };
const char* to_string(completion_status s);

// A finished work request, as the completion queue reports it.
struct completion {
  uint64_t wr_id;
  uint32_t qpn;
  uint64_t bytes;
  core::picoseconds posted_at;
  core::picoseconds completed_at;
  completion_status status = completion_status::success;
  uint64_t retransmitted_packets = 0;  // packets of this request sent more than once
  rdma_op op = rdma_op::write;
};

// A receive work request consumed by a SEND or a WRITE with immediate, as the responder's completion queue
// reports it (in PSN order).
struct recv_completion {
  uint64_t wr_id;  // the receive's
  uint32_t qpn;
  uint64_t bytes;  // SEND: bytes placed into the buffer; WRITE with immediate: the WRITE's length
  rdma_op op;      // send, send_imm or write_imm
  uint32_t imm;    // the immediate (when op carries one)
  core::picoseconds completed_at;
  completion_status status = completion_status::success;
};

// A message fully placed at the responder (a WRITE at its address, a SEND in its receive buffer).
struct placed_message {
  uint32_t qpn;
  uint64_t va;
  uint64_t bytes;
  core::picoseconds first_arrival;
  core::picoseconds placed_at;  // all bytes in memory and the PSN head past its last packet
};

}  // namespace fabricsim::nic
