// RoCEv2 frame decoder: turns one captured Ethernet frame into the model's packet descriptor
// (core::packet), the way a NIC's receive parser walks Ethernet, 802.1Q, IPv4/IPv6, UDP and the IBA
// transport headers.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

#include "sc_models/core/packet.h"

namespace fabricsim::traces {

enum class decode_verdict : uint8_t {
  roce,       // a RoCEv2 packet: the descriptor is filled
  not_roce,   // a well-formed frame of another kind (ARP, plain UDP, other EtherTypes): skipped
  malformed,  // a frame that claims to be IP/UDP/RoCEv2 but whose headers do not fit or are invalid
};

struct roce_decoder_params {
  // Reject frames whose ICRC does not match. Off by default: real captures often carry no valid ICRC
  // (NIC offload, mirrored copies, and the shared IPv6 samples hold zeros).
  bool check_icrc = false;
};

// What the decoder saw besides the descriptor fields: where the headers sit in the caller's buffer.
struct frame_layout {
  uint32_t ip_offset = 0;        // first byte of the IP header
  uint32_t ip_header_bytes = 0;  // IHL * 4 or 40
  uint32_t bth_offset = 0;
  uint32_t icrc_offset = 0;
  uint32_t frame_bytes = 0;      // end of the IP datagram plus Ethernet: what follows is FCS or padding
  uint32_t icrc_on_wire = 0;     // as carried by the frame (not checked unless check_icrc)
  bool has_trailer = false;      // captured bytes past the IP datagram (FCS and/or padding to 60 bytes)
  // The capture kept only the first bytes of the frame (caplen < orig_len, a snapshot length as switches and
  // mirror ports use): every header is there, the lengths come from them, the payload is not captured
  // (core::packet::payload is null; payload_bytes is what the headers say) and the ICRC is not checked.
  bool header_only = false;
  // Extended transport headers the packet descriptor has no field for (IBTA vol. 1 section 9.3).
  bool has_deth = false;  // UD: Q_Key, source QP
  uint32_t deth_qkey = 0;
  uint32_t deth_src_qp = 0;
  bool has_atomic_eth = false;  // COMPARE_SWAP, FETCH_ADD: VA, R_Key, swap (or add) data, compare data
  uint64_t atomic_va = 0;
  uint32_t atomic_rkey = 0;
  uint64_t atomic_swap_add = 0;
  uint64_t atomic_compare = 0;
  bool has_atomic_ack_eth = false;  // ATOMIC ACKNOWLEDGE: the original remote data
  uint64_t atomic_original = 0;
  bool has_ieth = false;  // SEND with invalidate: the R_Key invalidated
  uint32_t ieth_rkey = 0;
};

// Decodes frames one at a time. Allocation-free: the message of a malformed frame is formatted into a
// fixed buffer owned by the decoder, valid until the next decode().
class roce_decoder {
 public:
  explicit roce_decoder(const roce_decoder_params& params = {}) : m_params(params) {}

  // Decodes `captured_bytes` bytes at `frame`. On roce, `out` is reset and filled; its payload pointer
  // points into `frame`, so the buffer must outlive the use of the descriptor. `frame_number` (1-based,
  // as in tcpdump and Wireshark) only names the frame in messages and becomes out.id.
  // `original_bytes` is the frame's length on the wire (the capture record's orig_len); when it exceeds
  // `captured_bytes` the frame was cut by the snapshot length and decodes as header_only (frame_layout).
  decode_verdict decode(const uint8_t* frame, size_t captured_bytes, uint64_t frame_number, core::packet& out,
                        size_t original_bytes = 0);

  // Why the last frame was malformed (or skipped), e.g. "frame 12: UDP length 2000 exceeds the 60 bytes
  // captured after the IPv4 header"; empty after a roce verdict.
  const char* message() const { return m_message.data(); }
  // Why the last frame was skipped, as a fixed key for counting: "not_ip" (another EtherType, e.g. ARP),
  // "ip_fragment", "not_udp", "udp_port_not_4791", or "malformed"; empty after a roce verdict.
  const char* reason() const { return m_reason; }
  const frame_layout& layout() const { return m_layout; }
  const roce_decoder_params& params() const { return m_params; }

 private:
  decode_verdict fail(decode_verdict verdict, uint64_t frame_number, const char* format, ...)
      __attribute__((format(printf, 4, 5)));

  roce_decoder_params m_params;
  frame_layout m_layout;
  const char* m_reason = "";
  std::array<char, 256> m_message{};
};

// Extended headers that follow the BTH for an opcode (IBTA vol. 1 section 9.2, table 38), in wire order:
// DETH, RETH, AtomicETH, AETH, AtomicAckETH, ImmDt, IETH. `known` is false for opcodes this decoder does not
// know (RD, XRC, reserved).
struct opcode_layout {
  bool known = false;
  bool deth = false;  // UD SEND ONLY [with immediate]
  bool reth = false;
  bool atomic_eth = false;  // COMPARE_SWAP, FETCH_ADD
  bool aeth = false;
  bool atomic_ack_eth = false;  // ATOMIC ACKNOWLEDGE
  bool immediate = false;
  bool ieth = false;  // SEND LAST/ONLY with invalidate
  bool cnp = false;  // 16 reserved bytes
};
constexpr uint64_t deth_bytes = 8;            // Q_Key 4, reserved 1, source QP 3
constexpr uint64_t atomic_eth_bytes = 28;     // VA 8, R_Key 4, swap/add data 8, compare data 8
constexpr uint64_t atomic_ack_eth_bytes = 8;  // original remote data
constexpr uint64_t ieth_bytes = 4;            // R_Key
// The queue pair of the communication manager (IBTA vol. 1 section 12.11): UD datagrams sent to QP1 are
// connection management MADs (REQ, REP, RTU, ...), not application traffic.
constexpr uint32_t cm_queue_pair = 1;
opcode_layout layout_of(uint8_t opcode);

// Short name of an opcode for messages and reports, e.g. "RC RDMA_WRITE_FIRST"; "unknown" otherwise.
const char* opcode_name(uint8_t opcode);

}  // namespace fabricsim::traces
