// Wire sizes and the ECMP hash input of a RoCEv2 packet descriptor.
#include "sc_models/core/packet.h"

#include <algorithm>
#include <cstddef>
#include <cstring>

namespace fabricsim::core {

// What a switch reads at every hop stays in the descriptor's first cache line.
static_assert(offsetof(packet, bth) == 64, "switch-side fields must fit the first cache line");

ip_address ip_address::v4(uint32_t addr) {
  ip_address a;
  a.octets[10] = 0xff;
  a.octets[11] = 0xff;
  a.octets[12] = uint8_t(addr >> 24);
  a.octets[13] = uint8_t(addr >> 16);
  a.octets[14] = uint8_t(addr >> 8);
  a.octets[15] = uint8_t(addr);
  return a;
}

bool ip_address::is_v4_mapped() const {
  // ::ffff:0:0/96: ten zero octets, then 0xff 0xff. Compared as one 8-byte and one 4-byte block (the switch's
  // hash unit asks for every packet), the same on any byte order.
  static constexpr uint8_t tail[4] = {0, 0, 0xff, 0xff};
  uint64_t head;
  std::memcpy(&head, octets.data(), 8);
  return head == 0 && std::memcmp(octets.data() + 8, tail, 4) == 0;
}

uint32_t ip_address::v4_value() const {
  return uint32_t(octets[12]) << 24 | uint32_t(octets[13]) << 16 | uint32_t(octets[14]) << 8 | octets[15];
}

bytes packet::frame_size() const {
  namespace h = header_bytes;
  if (kind == frame_kind::pfc) return bytes(h::min_frame);  // MAC control frame, padded to the minimum
  if (kind == frame_kind::nvlink) return bytes(sealed_wire_bytes);  // flits: set by the NVLink sender
  if (kind == frame_kind::infiniband) {
    uint64_t ib = h::ib_lrh + (lrh.has_grh ? h::ib_grh : 0) + h::bth;
    if (has_reth) ib += h::reth;
    if (has_aeth) ib += h::aeth + (aeth.sack ? h::sack : 0);
    if (has_immediate) ib += h::immediate;
    return bytes(ib + payload_bytes + bth.pad_count + h::icrc + h::ib_vcrc);
  }
  uint64_t size = h::ethernet + (eth.has_vlan ? h::vlan_tag : 0) + (ip.is_v6 ? h::ipv6 : h::ipv4) + h::udp + h::bth;
  if (bth.opcode == bth_opcode::cnp) size += h::cnp_reserved;
  if (has_reth) size += h::reth;
  if (has_aeth) size += h::aeth + (aeth.sack ? h::sack : 0);
  if (has_immediate) size += h::immediate;
  // A data packet that asked for telemetry, or an ACK echoing the records back (int_hops without a request).
  if (int_requested || int_hops > 0) size += h::int_shim + uint64_t(int_hops) * h::int_record;
  size += payload_bytes + bth.pad_count + h::icrc + h::fcs;
  return bytes(std::max<uint64_t>(size, h::min_frame));
}

bytes packet::wire_size() const {
  if (kind == frame_kind::infiniband || kind == frame_kind::nvlink) return frame_size();
  return frame_size() + bytes(header_bytes::preamble_sfd + header_bytes::inter_frame_gap);
}

namespace {
// 32-bit finaliser (murmur3 fmix); a switch's hash unit is a fixed function of the header bits and a seed.
constexpr uint32_t mix(uint32_t h) {
  h ^= h >> 16;
  h *= 0x85ebca6bu;
  h ^= h >> 13;
  h *= 0xc2b2ae35u;
  h ^= h >> 16;
  return h;
}

// The four octets at `o` as one word, the first octet most significant (network order): one load and a
// byte swap on a little-endian host, where the compiler does not merge the four loads by itself.
inline uint32_t big_endian_word(const uint8_t* o) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  uint32_t w;
  std::memcpy(&w, o, 4);
  return __builtin_bswap32(w);
#else
  return uint32_t(o[0]) << 24 | uint32_t(o[1]) << 16 | uint32_t(o[2]) << 8 | o[3];
#endif
}
}  // namespace

uint32_t packet::five_tuple_hash(uint32_t seed) const {
  uint32_t h = seed;
  for (int i = 0; i < 16; i += 4) {
    h = mix(h ^ big_endian_word(ip.src.octets.data() + i));
    h = mix(h ^ big_endian_word(ip.dst.octets.data() + i));
  }
  h = mix(h ^ 17u);  // IP protocol: UDP
  h = mix(h ^ (uint32_t(udp.src_port) << 16 | udp.dst_port));
  return h;
}

namespace {
// ::ffff:0:0/96, the first twelve octets of every IPv4-mapped address, as three network-order words.
constexpr uint32_t v4_prefix_words[3] = {0u, 0u, 0x0000ffffu};
}  // namespace

five_tuple_hasher::five_tuple_hasher(uint32_t seed) : m_seed(seed) {
  uint32_t h = seed;
  for (const uint32_t w : v4_prefix_words) {
    h = mix(h ^ w);  // the source address's word
    h = mix(h ^ w);  // the destination's
  }
  m_v4_state = h;
}

uint32_t five_tuple_hasher::operator()(const packet& p) const {
  if (!p.ip.src.is_v4_mapped() || !p.ip.dst.is_v4_mapped()) return p.five_tuple_hash(m_seed);
  uint32_t h = m_v4_state;
  h = mix(h ^ big_endian_word(p.ip.src.octets.data() + 12));
  h = mix(h ^ big_endian_word(p.ip.dst.octets.data() + 12));
  h = mix(h ^ 17u);  // IP protocol: UDP
  return mix(h ^ (uint32_t(p.udp.src_port) << 16 | p.udp.dst_port));
}

}  // namespace fabricsim::core
