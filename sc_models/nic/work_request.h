// The SuperNIC requester's work requests: one posted RDMA operation, cut into consecutive PSNs at post time,
// and the send queue of one queue pair (its work requests and the PSNs the segmentation path and the ACKs
// have reached), which loss recovery (loss_recovery.h) reads and rewinds.
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

}  // namespace fabricsim::nic
