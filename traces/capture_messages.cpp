// Request messages of a RoCEv2 capture, rebuilt per flow by walking its request packets in PSN order.
#include "traces/capture_messages.h"

#include <algorithm>
#include <map>
#include <string>

namespace fabricsim::traces {
namespace {

// Where a request packet sits in its message (IBTA vol. 1 section 9.4 packet sequencing).
enum class position : uint8_t { first, middle, last, only };

// One request packet of a flow as captured.
struct request_packet {
  uint32_t psn = 0;
  uint8_t opcode = 0;
  uint64_t time_ns = 0;
  uint64_t frame = 0;
  uint64_t reth_length = 0;
  uint32_t payload = 0;
};

// The operation and position of a request opcode (RC or UC: the low five bits), false for anything that is
// not a request (READ responses, ACKs, CNPs).
bool classify(uint8_t opcode, message_op& op, position& pos, bool& immediate) {
  if (opcode == uint8_t(core::bth_opcode::cnp) || opcode >> 5 > 1) return false;
  immediate = false;
  switch (opcode & 0x1f) {
    case 0x00: op = message_op::send; pos = position::first; return true;
    case 0x01: op = message_op::send; pos = position::middle; return true;
    case 0x02: op = message_op::send; pos = position::last; return true;
    case 0x03: op = message_op::send; pos = position::last; immediate = true; return true;
    case 0x04: op = message_op::send; pos = position::only; return true;
    case 0x05: op = message_op::send; pos = position::only; immediate = true; return true;
    case 0x06: op = message_op::write; pos = position::first; return true;
    case 0x07: op = message_op::write; pos = position::middle; return true;
    case 0x08: op = message_op::write; pos = position::last; return true;
    case 0x09: op = message_op::write; pos = position::last; immediate = true; return true;
    case 0x0a: op = message_op::write; pos = position::only; return true;
    case 0x0b: op = message_op::write; pos = position::only; immediate = true; return true;
    case 0x0c: op = message_op::read; pos = position::only; return true;
    default: return false;
  }
}

// The start of the shortest arc of the 24-bit PSN circle that covers every PSN in `sorted` (ascending,
// distinct): the PSN after the widest gap between neighbours, the wrap-around gap included.
uint32_t arc_start(const std::vector<uint32_t>& sorted) {
  uint32_t start = sorted.front();
  uint32_t widest = (sorted.front() + core::psn_modulus - sorted.back()) & core::psn_mask;  // across the wrap
  for (size_t i = 1; i < sorted.size(); ++i)
    if (sorted[i] - sorted[i - 1] > widest) {
      widest = sorted[i] - sorted[i - 1];
      start = sorted[i];
    }
  return start;
}

void walk_flow(const flow_key& key, std::vector<request_packet>& packets, std::vector<captured_message>& out) {
  // One record per PSN, the earliest capture of it (a retransmission is the same packet again).
  std::sort(packets.begin(), packets.end(), [](const request_packet& a, const request_packet& b) {
    return a.psn != b.psn ? a.psn < b.psn : a.time_ns < b.time_ns;
  });
  packets.erase(std::unique(packets.begin(), packets.end(),
                            [](const request_packet& a, const request_packet& b) { return a.psn == b.psn; }),
                packets.end());
  std::vector<uint32_t> psns;
  for (const request_packet& p : packets) psns.push_back(p.psn);
  const uint32_t base = arc_start(psns);
  std::stable_sort(packets.begin(), packets.end(), [base](const request_packet& a, const request_packet& b) {
    return ((a.psn - base) & core::psn_mask) < ((b.psn - base) & core::psn_mask);
  });

  bool open = false;
  captured_message m;
  uint32_t expect = 0;
  uint64_t missing = 0;
  auto close = [&](const char* why_unfinished) {
    if (missing > 0) m.note = std::to_string(missing) + " of its packets are not in the capture";
    if (why_unfinished) m.note += std::string(m.note.empty() ? "" : "; ") + why_unfinished;
    out.push_back(m);
    open = false;
  };
  auto start = [&](const request_packet& p, message_op op) {
    m = captured_message{};
    m.flow = key;
    m.op = op;
    m.first_psn = p.psn;
    m.first_seen_ns = p.time_ns;
    m.first_frame = p.frame;
    missing = 0;
    open = true;
  };
  auto add = [&](const request_packet& p, bool immediate) {
    ++m.packets;
    m.immediate = m.immediate || immediate;
    if (m.op == message_op::send) m.length += p.payload;
    if (p.time_ns < m.first_seen_ns) {
      m.first_seen_ns = p.time_ns;
      m.first_frame = p.frame;
    }
    expect = core::psn_add(p.psn, 1);
  };
  for (const request_packet& p : packets) {
    message_op op{};
    position pos{};
    bool immediate = false;
    classify(p.opcode, op, pos, immediate);
    if (pos == position::first || pos == position::only) {
      if (open) close("its LAST packet is not in the capture");
      start(p, op);
      if (op != message_op::send) m.length = p.reth_length;
      add(p, immediate);
      if (pos == position::only) close(nullptr);
      continue;
    }
    if (open && m.op == op) {
      missing += (p.psn - expect) & core::psn_mask;
    } else {
      if (open) close("its LAST packet is not in the capture");
      start(p, op);
      m.unreplayable = "its FIRST packet (before PSN " + std::to_string(p.psn) +
                       ") is not in the capture: the message length is unknown";
    }
    add(p, immediate);
    if (pos == position::last) close(nullptr);
  }
  if (open) close("its LAST packet is not in the capture");
}

}  // namespace

const char* to_string(message_op op) {
  switch (op) {
    case message_op::write: return "WRITE";
    case message_op::send: return "SEND";
    case message_op::read: return "READ";
  }
  return "?";
}

capture_trace analyze_capture(const std::string& path, const roce_decoder_params& params) {
  capture_trace t;
  std::map<flow_key, std::vector<request_packet>> requests;
  t.summary = summarize_capture(path, params, [&](const capture_frame& frame, const core::packet& pkt) {
    const uint8_t opcode = uint8_t(pkt.bth.opcode);
    if (pkt.bth.opcode == core::bth_opcode::rc_acknowledge && pkt.has_aeth) {
      ack_counts& a = t.acks[flow_key{pkt.ip.src, pkt.ip.dst, pkt.bth.dest_qp}];
      switch (pkt.aeth.syndrome >> 5) {
        case 0: ++a.acks; break;
        case 1: ++a.rnr_naks; break;
        case 3: ++a.naks; break;
        default: break;  // reserved
      }
    }
    // FIRST and MIDDLE packets of any multi-packet message carry exactly one path MTU of payload.
    switch (opcode & 0x1f) {
      case 0x00: case 0x01: case 0x06: case 0x07:
        if (opcode >> 5 <= 1) t.path_mtu_bytes = std::max<uint64_t>(t.path_mtu_bytes, pkt.payload_bytes);
        break;
      case 0x0d: case 0x0e:
        if (opcode >> 5 == 0) t.path_mtu_bytes = std::max<uint64_t>(t.path_mtu_bytes, pkt.payload_bytes);
        break;
      default:
        break;
    }
    message_op op{};
    position pos{};
    bool immediate = false;
    if (!classify(opcode, op, pos, immediate)) return;
    request_packet r;
    r.psn = pkt.bth.psn & core::psn_mask;
    r.opcode = opcode;
    r.time_ns = frame.timestamp_ns;
    r.frame = frame.number;
    r.reth_length = pkt.has_reth ? pkt.reth.dma_length : 0;
    r.payload = pkt.payload_bytes;
    requests[flow_key{pkt.ip.src, pkt.ip.dst, pkt.bth.dest_qp}].push_back(r);
  });
  for (auto& [key, packets] : requests) walk_flow(key, packets, t.messages);
  std::stable_sort(t.messages.begin(), t.messages.end(), [](const captured_message& a, const captured_message& b) {
    if (a.first_seen_ns != b.first_seen_ns) return a.first_seen_ns < b.first_seen_ns;
    return a.first_frame < b.first_frame;
  });
  return t;
}

}  // namespace fabricsim::traces
