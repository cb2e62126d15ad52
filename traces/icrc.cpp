// RoCEv2 ICRC: CRC-32 (IEEE 802.3 polynomial, reflected) over the masked pseudo-header and the rest of the
// packet, as specified by IBTA vol. 1 annex A17.3.3 (RoCEv2 ICRC computation).
#include "traces/icrc.h"

#include <array>
#include <cstring>

namespace fabricsim::traces {
namespace {

// Byte-at-a-time table for the reflected polynomial 0xEDB88320 (the same CRC as the Ethernet FCS).
constexpr std::array<uint32_t, 256> make_crc_table() {
  std::array<uint32_t, 256> table{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t c = i;
    for (int bit = 0; bit < 8; ++bit) c = (c & 1) ? (c >> 1) ^ 0xedb88320u : c >> 1;
    table[i] = c;
  }
  return table;
}
constexpr std::array<uint32_t, 256> crc_table = make_crc_table();

// Feeds bytes into the running (non-inverted) CRC register.
uint32_t crc_update(uint32_t crc, const uint8_t* p, size_t n) {
  for (size_t i = 0; i < n; ++i) crc = crc_table[(crc ^ p[i]) & 0xff] ^ (crc >> 8);
  return crc;
}

constexpr size_t udp_bytes = 8;
constexpr size_t bth_bytes = 12;
constexpr size_t max_ipv4_header_bytes = 60;  // IHL is 4 bits of 32-bit words

}  // namespace

uint32_t roce_icrc(const uint8_t* ip, size_t ip_header_bytes, size_t bytes_before_icrc, bool is_v6) {
  // The masked part (IP + UDP + BTH) is copied to the stack so the caller's frame stays untouched and no
  // allocation happens per frame.
  std::array<uint8_t, max_ipv4_header_bytes + udp_bytes + bth_bytes> masked{};
  const size_t masked_bytes = ip_header_bytes + udp_bytes + bth_bytes;
  if (masked_bytes > masked.size() || bytes_before_icrc < masked_bytes) return 0;  // caller checked sizes
  std::memcpy(masked.data(), ip, masked_bytes);

  // Annex A17.3.3: the fields a router may change are replaced by ones. The LRH that InfiniBand would carry
  // is replaced by 8 bytes of ones ahead of the IP header.
  if (is_v6) {
    masked[0] |= 0x0f;  // traffic class, high nibble (the version nibble stays)
    masked[1] = 0xff;   // traffic class low nibble + flow label bits 19..16
    masked[2] = 0xff;   // flow label
    masked[3] = 0xff;   // flow label
    masked[7] = 0xff;   // hop limit
  } else {
    masked[1] = 0xff;   // type of service (DSCP + ECN)
    masked[8] = 0xff;   // time to live
    masked[10] = 0xff;  // header checksum
    masked[11] = 0xff;
  }
  masked[ip_header_bytes + 6] = 0xff;  // UDP checksum
  masked[ip_header_bytes + 7] = 0xff;
  masked[ip_header_bytes + udp_bytes + 4] = 0xff;  // BTH byte 4: FECN, BECN and reserved bits

  static constexpr uint8_t masked_lrh[8] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
  uint32_t crc = 0xffffffffu;
  crc = crc_update(crc, masked_lrh, sizeof masked_lrh);
  crc = crc_update(crc, masked.data(), masked_bytes);
  crc = crc_update(crc, ip + masked_bytes, bytes_before_icrc - masked_bytes);
  return ~crc;
}

}  // namespace fabricsim::traces
