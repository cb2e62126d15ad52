// The RoCEv2 invariant CRC (ICRC): the end-to-end CRC-32 a RoCEv2 NIC appends after the payload, computed
// over the frame with the fields that switches may rewrite replaced by ones (IBTA vol. 1 annex A17.3.3).
#pragma once

#include <cstddef>
#include <cstdint>

namespace fabricsim::traces {

// ICRC of a RoCEv2 packet. `ip` points at the first byte of the IP header, `ip_header_bytes` is its length
// (IHL * 4 for IPv4, 40 for IPv6) and `bytes_before_icrc` counts from there up to (not including) the ICRC:
// IP header, UDP header, BTH, extended headers, payload and pad. The caller guarantees that at least
// ip_header_bytes + 8 (UDP) + 12 (BTH) bytes are readable.
uint32_t roce_icrc(const uint8_t* ip, size_t ip_header_bytes, size_t bytes_before_icrc, bool is_v6);

// The ICRC goes on the wire least significant byte first, like the Ethernet FCS (the CRC register is
// shifted out bit-reflected); these helpers keep that order in one place.
inline void store_icrc(uint8_t* p, uint32_t icrc) {
  p[0] = uint8_t(icrc);
  p[1] = uint8_t(icrc >> 8);
  p[2] = uint8_t(icrc >> 16);
  p[3] = uint8_t(icrc >> 24);
}
inline uint32_t load_icrc(const uint8_t* p) {
  return uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24;
}

}  // namespace fabricsim::traces
