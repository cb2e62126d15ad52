// The RDMA messages of a RoCEv2 capture: requests (WRITE, SEND, READ) rebuilt from their packets in PSN
// order, so a capture can be replayed as work requests (testbench/replay.h, docs/replay.md).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "traces/pcap_reader.h"

namespace fabricsim::traces {

enum class message_op : uint8_t { write, send, read };
const char* to_string(message_op op);  // "WRITE", "SEND", "READ"

// One request message as the capture shows it. `flow` is the requester -> responder direction keyed by the
// responder's QP, as in capture_summary::flows.
struct captured_message {
  flow_key flow;
  message_op op = message_op::write;
  uint32_t first_psn = 0;      // PSN of its FIRST/ONLY packet (of the earliest packet seen when that is missing)
  uint64_t length = 0;         // WRITE, READ: the RETH DMA length; SEND: the payload bytes seen
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
};

// Reads and summarizes a capture (summarize_capture) and rebuilds its request messages. Throws
// capture_error like pcap_reader.
capture_trace analyze_capture(const std::string& path, const roce_decoder_params& params = {});

}  // namespace fabricsim::traces
