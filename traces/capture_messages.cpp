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

// The RC message size limit (IBTA vol. 1 section 9.4.1: a message is at most 2^31 bytes).
constexpr uint64_t k_max_message_bytes = uint64_t(1) << 31;

// The operation and position of a request opcode (RC or UC: the low five bits; UD SEND ONLY), false for
// anything that is not a request (READ responses, ACKs, CNPs).
bool classify(uint8_t opcode, message_op& op, position& pos, bool& immediate) {
  immediate = false;
  if (opcode == 0x64 || opcode == 0x65) {  // UD SEND ONLY [with immediate]
    op = message_op::ud_send;
    pos = position::only;
    immediate = opcode == 0x65;
    return true;
  }
  if (opcode == 0x13 || opcode == 0x14) {  // RC COMPARE_SWAP, FETCH_ADD
    op = opcode == 0x13 ? message_op::cmp_swap : message_op::fetch_add;
    pos = position::only;
    return true;
  }
  if (opcode == uint8_t(core::bth_opcode::cnp) || opcode >> 5 > 1) return false;
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

// Why a message's RETH DMA length cannot be right, naming the frame that carried it; empty when it can be.
// `complete`: every packet from FIRST to LAST is in the capture, so a WRITE's payload must add up to it.
std::string check_reth_length(const captured_message& m, const request_packet& p, bool complete,
                              uint64_t payload_seen) {
  const std::string head = "frame " + std::to_string(p.frame) + ": " + opcode_name(p.opcode) + " RETH DMA length " +
                           std::to_string(m.length);
  if (m.length > k_max_message_bytes) return head + " exceeds the RC message limit of 2^31 bytes";
  if (m.op == message_op::write && complete && payload_seen != m.length)
    return head + " differs from the " + std::to_string(payload_seen) + " payload bytes its " +
           std::to_string(m.packets) + " packets (PSN " + std::to_string(m.first_psn) + " on) carry in the capture";
  return "";
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
  uint64_t missing = 0, payload_seen = 0;
  const request_packet* reth_packet = nullptr;  // the FIRST/ONLY that carried the message's RETH
  auto close = [&](const char* why_unfinished) {
    if (missing > 0) m.note = std::to_string(missing) + " of its packets are not in the capture";
    if (why_unfinished) m.note += std::string(m.note.empty() ? "" : "; ") + why_unfinished;
    if (reth_packet) m.length_error = check_reth_length(m, *reth_packet, !why_unfinished && missing == 0, payload_seen);
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
    missing = payload_seen = 0;
    reth_packet = nullptr;
    open = true;
  };
  auto add = [&](const request_packet& p, bool immediate) {
    ++m.packets;
    m.immediate = m.immediate || immediate;
    payload_seen += p.payload;
    if (m.op == message_op::send || m.op == message_op::ud_send) m.length += p.payload;
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
      if (op == message_op::write || op == message_op::read) {
        m.length = p.reth_length;
        reth_packet = &p;
      }
      if (op == message_op::cmp_swap || op == message_op::fetch_add) m.length = 8;
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

// The CM message a QP1 datagram carries: the attribute ID of its MAD (bytes 16-17; IBTA vol. 1 section
// 12.6, table 97), "other" for another, "header_only" when the capture did not keep the MAD.
std::string cm_message_name(const core::packet& pkt) {
  if (!pkt.payload || pkt.payload_bytes < 24) return "header_only";
  static const char* const names[] = {"REQ",  "MRA",      "REJ",      "REP", "RTU", "DREQ",
                                      "DREP", "SIDR_REQ", "SIDR_REP", "LAP", "APR"};
  const unsigned attribute = unsigned(pkt.payload[16]) << 8 | pkt.payload[17];
  return attribute >= 0x10 && attribute <= 0x1a ? names[attribute - 0x10] : "other";
}

}  // namespace

const char* to_string(message_op op) {
  switch (op) {
    case message_op::write: return "WRITE";
    case message_op::send: return "SEND";
    case message_op::read: return "READ";
    case message_op::cmp_swap:
      return "CMP_SWAP";
    case message_op::fetch_add:
      return "FETCH_ADD";
    case message_op::ud_send:
      return "UD_SEND";
  }
  return "?";
}

capture_trace analyze_capture(const std::string& path, const roce_decoder_params& params) {
  capture_trace t;
  std::map<flow_key, std::vector<request_packet>> requests;
  t.summary = summarize_capture(
      path, params, [&](const capture_frame& frame, const core::packet& pkt, const frame_layout& layout) {
        const uint8_t opcode = uint8_t(pkt.bth.opcode);
        const flow_key key{pkt.ip.src, pkt.ip.dst, pkt.bth.dest_qp};
        if (pkt.has_aeth && (pkt.bth.opcode == core::bth_opcode::rc_acknowledge || opcode == 0x12)) {
          ack_counts& a = t.acks[key];
          switch (pkt.aeth.syndrome >> 5) {
            case 0:
              ++a.acks;
              break;
            case 1:
              ++a.rnr_naks;
              break;
            case 3:
              ++a.naks;
              break;
            default:
              break;  // reserved
          }
          t.atomic_acks += layout.has_atomic_ack_eth;
        }
        if (layout.has_deth && pkt.bth.dest_qp == cm_queue_pair) {  // a CM MAD, not application traffic
          ++t.connection_management.packets;
          ++t.connection_management.by_message[cm_message_name(pkt)];
          return;
        }
        // FIRST and MIDDLE packets of any multi-packet message carry exactly one path MTU of payload.
        const bool full_mtu =
            (opcode >> 5 <= 1 && ((opcode & 0x1f) <= 0x01 || (opcode & 0x1f) == 0x06 || (opcode & 0x1f) == 0x07)) ||
            opcode == uint8_t(core::bth_opcode::rc_rdma_read_response_first) ||
            opcode == uint8_t(core::bth_opcode::rc_rdma_read_response_middle);
        if (full_mtu) {
          t.path_mtu_bytes = std::max<uint64_t>(t.path_mtu_bytes, pkt.payload_bytes);
          uint64_t& mtu = t.path_mtu_by_flow[key];
          mtu = std::max<uint64_t>(mtu, pkt.payload_bytes);
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
        requests[key].push_back(r);
      });
  for (auto& [key, packets] : requests) walk_flow(key, packets, t.messages);
  for (captured_message& m : t.messages) {
    auto it = t.path_mtu_by_flow.find(m.flow);
    m.path_mtu_bytes = it == t.path_mtu_by_flow.end() ? 0 : it->second;
  }
  std::stable_sort(t.messages.begin(), t.messages.end(), [](const captured_message& a, const captured_message& b) {
    if (a.first_seen_ns != b.first_seen_ns) return a.first_seen_ns < b.first_seen_ns;
    return a.first_frame < b.first_frame;
  });
  return t;
}

}  // namespace fabricsim::traces
