// The RDMA messages of a RoCEv2 capture: requests (WRITE, SEND, READ) rebuilt from their packets in PSN
// order, so a capture can be replayed as work requests (testbench/replay.h, docs/replay.md).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "traces/pcap_reader.h"

namespace fabricsim::traces {

// cmp_swap and fetch_add: RC atomics (AtomicETH, 8 bytes at the responder); ud_send: a UD datagram to any QP
// but QP1 (those are connection management, counted in capture_trace::connection_management).
enum class message_op : uint8_t { write, send, read, cmp_swap, fetch_add, ud_send };
const char* to_string(message_op op);  // "WRITE", "SEND", "READ", "CMP_SWAP", "FETCH_ADD", "UD_SEND"

// One request message as the capture shows it. `flow` is the requester -> responder direction keyed by the
// responder's QP, as in capture_summary::flows.
struct captured_message {
  flow_key flow;
  message_op op = message_op::write;
  uint32_t first_psn = 0;      // PSN of its FIRST/ONLY packet (of the earliest packet seen when that is missing)
  uint64_t length = 0;         // WRITE, READ: the RETH DMA length; SEND, UD_SEND: the payload bytes seen;
                               // atomics: 8
  uint64_t first_seen_ns = 0;  // earliest capture timestamp of any of its packets (reordering included)
  uint64_t first_frame = 0;    // frame number of that packet
  uint64_t packets = 0;        // distinct request packets of it in the capture
  bool immediate = false;      // carries immediate data (WRITE/SEND ..._WITH_IMMEDIATE)
  // Empty when the message can be posted as a work request; otherwise why not, e.g. "its FIRST packet is
  // not in the capture: the message length is unknown".
  std::string unreplayable;
  // Informational: the capture lacks some of its packets, or it lacks its LAST (the length is still known
  // from the RETH, so it stays replayable).
  std::string note;
  // Non-empty when the RETH DMA length cannot be right: beyond the RC message limit (2^31 bytes) or, for a
  // WRITE whose every packet is in the capture, different from the payload its packets carry. Names the frame
  // and the field, e.g. "frame 1: RC RDMA_WRITE_FIRST RETH DMA length 4294967295 ...". A replay refuses the
  // capture before it allocates anything (testbench/replay.h).
  std::string length_error;
  uint64_t path_mtu_bytes = 0;  // of its flow (capture_trace::path_mtu_by_flow), 0 when the capture shows none
};

// Connection management on QP1 (UD SEND ONLY with a DETH carrying a CM MAD, IBTA vol. 1 chapter 12).
struct cm_counts {
  uint64_t packets = 0;
  std::map<std::string, uint64_t> by_message;  // "REQ", "REP", "RTU", "DREQ", ... by the MAD attribute ID
};

// Acknowledge packets of a flow by AETH syndrome (IBTA vol. 1 section 9.7.5.1, bits 7:5).
struct ack_counts {
  uint64_t acks = 0;      // 000: ACK
  uint64_t rnr_naks = 0;  // 001: receiver not ready
  uint64_t naks = 0;      // 011: NAK (PSN sequence error, invalid request, access or operational error)
};

struct capture_trace {
  capture_summary summary;
  std::map<flow_key, ack_counts> acks;  // flows with ACKNOWLEDGE packets
  std::vector<captured_message> messages;  // by first_seen_ns, then flow, then PSN
  // The path MTU the capture shows: the largest payload of a FIRST or MIDDLE packet (those are full-MTU
  // packets by IBTA rule); 0 when it has none.
  uint64_t path_mtu_bytes = 0;
  // The same per flow (each direction of each QP: its WRITE/SEND FIRST and MIDDLE, READ RESPONSE FIRST and
  // MIDDLE payloads); flows without such packets are absent.
  std::map<flow_key, uint64_t> path_mtu_by_flow;
  cm_counts connection_management;
  uint64_t atomic_acks = 0;  // ATOMIC ACKNOWLEDGE packets (AtomicAckETH)
};

// Reads and summarizes a capture (summarize_capture) and rebuilds its request messages. Throws
// capture_error like pcap_reader.
capture_trace analyze_capture(const std::string& path, const roce_decoder_params& params = {});

}  // namespace fabricsim::traces
