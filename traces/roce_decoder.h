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
};

// Decodes frames one at a time. Allocation-free: the message of a malformed frame is formatted into a
// fixed buffer owned by the decoder, valid until the next decode().
class roce_decoder {
 public:
  explicit roce_decoder(const roce_decoder_params& params = {}) : m_params(params) {}

  // Decodes `captured_bytes` bytes at `frame`. On roce, `out` is reset and filled; its payload pointer
  // points into `frame`, so the buffer must outlive the use of the descriptor. `frame_number` (1-based,
  // as in tcpdump and Wireshark) only names the frame in messages and becomes out.id.
  decode_verdict decode(const uint8_t* frame, size_t captured_bytes, uint64_t frame_number, core::packet& out);

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

// Extended headers that follow the BTH for an opcode (IBTA vol. 1 section 9.2, table 38). `known` is false
// for opcodes the descriptor cannot carry (atomics, UD/RD/XRC transports, SEND with invalidate).
struct opcode_layout {
  bool known = false;
  bool reth = false;
  bool aeth = false;
  bool immediate = false;
  bool cnp = false;  // 16 reserved bytes
};
opcode_layout layout_of(uint8_t opcode);

// Short name of an opcode for messages and reports, e.g. "RC RDMA_WRITE_FIRST"; "unknown" otherwise.
const char* opcode_name(uint8_t opcode);

}  // namespace fabricsim::traces
