// Capture file writer: descriptor -> RoCEv2 frame bytes (with the real ICRC) -> classic pcap records.
#include "traces/pcap_writer.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "traces/icrc.h"
#include "traces/roce_decoder.h"

namespace fabricsim::traces {
namespace {

namespace hb = core::header_bytes;

constexpr size_t min_frame_without_fcs = hb::min_frame - hb::fcs;  // 60
constexpr uint32_t link_type_ethernet = 1;                          // DLT_EN10MB / LINKTYPE_ETHERNET

void put16(uint8_t* p, uint32_t v) {
  p[0] = uint8_t(v >> 8);
  p[1] = uint8_t(v);
}
void put24(uint8_t* p, uint32_t v) {
  p[0] = uint8_t(v >> 16);
  put16(p + 1, v);
}
void put32(uint8_t* p, uint32_t v) {
  p[0] = uint8_t(v >> 24);
  put24(p + 1, v);
}
void put48(uint8_t* p, uint64_t v) {
  put16(p, uint32_t(v >> 32));
  put32(p + 2, uint32_t(v));
}
void put64(uint8_t* p, uint64_t v) {
  put32(p, uint32_t(v >> 32));
  put32(p + 4, uint32_t(v));
}
// pcap file and record headers are written little-endian; readers detect the order from the magic.
void put_le32(uint8_t* p, uint32_t v) {
  p[0] = uint8_t(v);
  p[1] = uint8_t(v >> 8);
  p[2] = uint8_t(v >> 16);
  p[3] = uint8_t(v >> 24);
}

// Internet checksum (RFC 1071): ones' complement of the ones' complement sum of 16-bit words.
uint32_t sum16(const uint8_t* p, size_t n, uint32_t sum = 0) {
  for (size_t i = 0; i + 1 < n; i += 2) sum += uint32_t(p[i] << 8 | p[i + 1]);
  if (n & 1) sum += uint32_t(p[n - 1] << 8);
  return sum;
}
uint16_t fold(uint32_t sum) {
  while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
  return uint16_t(~sum);
}

std::string packet_name(const core::packet& pkt) { return "packet id " + std::to_string(pkt.id); }

// As core::ip_address::is_v4_mapped(), restated so this library needs only the descriptor's header.
bool v4_mapped(const core::ip_address& a) {
  for (int i = 0; i < 10; ++i)
    if (a.octets[i] != 0) return false;
  return a.octets[10] == 0xff && a.octets[11] == 0xff;
}

std::string hex_byte(uint8_t v) {
  char text[8];
  std::snprintf(text, sizeof text, "0x%02x", v);
  return text;
}

// 802.1Qbb PFC, a MAC control frame: DA 01:80:c2:00:00:01, EtherType 0x8808, opcode 0x0101, class-enable
// vector (16 bit, priorities in the low byte), eight pause times in quanta, zero padding to the minimum.
// Untagged, as PFC frames are sent.
void serialize_pfc(const core::packet& pkt, std::vector<uint8_t>& out) {
  out.assign(min_frame_without_fcs, 0);
  uint8_t* f = out.data();
  put48(f, pkt.eth.dst_mac);
  put48(f + 6, pkt.eth.src_mac);
  put16(f + 12, 0x8808);  // MAC control
  put16(f + 14, 0x0101);  // priority-based flow control
  put16(f + 16, pkt.pfc.class_enable);
  for (size_t prio = 0; prio < pkt.pfc.quanta.size(); ++prio) put16(f + 18 + 2 * prio, pkt.pfc.quanta[prio]);
}

}  // namespace

void serialize_frame(const core::packet& pkt, std::vector<uint8_t>& out) {
  if (pkt.kind == core::frame_kind::pfc) return serialize_pfc(pkt, out);
  const uint8_t opcode = uint8_t(pkt.bth.opcode);
  const bool cnp = pkt.bth.opcode == core::bth_opcode::cnp;
  // A descriptor whose extended-header flags disagree with its opcode would be misread by every receiver.
  const opcode_layout lay = layout_of(opcode);
  if (lay.known && (lay.reth != pkt.has_reth || lay.aeth != pkt.has_aeth || lay.immediate != pkt.has_immediate))
    throw capture_error(packet_name(pkt) + ": opcode " + hex_byte(opcode) + " (" + opcode_name(opcode) +
                        ") needs RETH " + (lay.reth ? "yes" : "no") + ", AETH " +
                        (lay.aeth ? "yes" : "no") + ", immediate " + (lay.immediate ? "yes" : "no") +
                        "; the descriptor has " + (pkt.has_reth ? "yes" : "no") + ", " +
                        (pkt.has_aeth ? "yes" : "no") + ", " + (pkt.has_immediate ? "yes" : "no"));
  if (pkt.bth.pad_count > 3)
    throw capture_error(packet_name(pkt) + ": bth.pad_count " + std::to_string(pkt.bth.pad_count) + " exceeds 3");
  if (!pkt.ip.is_v6 && (!v4_mapped(pkt.ip.src) || !v4_mapped(pkt.ip.dst)))
    throw capture_error(packet_name(pkt) + ": IPv4 packet whose ip.src or ip.dst is not an IPv4 (::ffff:a.b.c.d) address");

  const size_t l2 = hb::ethernet + (pkt.eth.has_vlan ? hb::vlan_tag : 0);
  const size_t l3 = pkt.ip.is_v6 ? hb::ipv6 : hb::ipv4;
  const size_t sack = pkt.has_aeth && pkt.aeth.sack ? hb::sack : 0;
  const size_t extended = (pkt.has_reth ? hb::reth : 0) + (pkt.has_aeth ? hb::aeth + sack : 0) +
                          (pkt.has_immediate ? hb::immediate : 0) + (cnp ? hb::cnp_reserved : 0);
  const uint64_t udp_length =
      hb::udp + hb::bth + extended + uint64_t(pkt.payload_bytes) + pkt.bth.pad_count + hb::icrc;
  const uint64_t ip_length = (pkt.ip.is_v6 ? 0 : hb::ipv4) + udp_length;  // IPv6 counts the payload only
  if (ip_length > 0xffff)
    throw capture_error(packet_name(pkt) + ": payload_bytes " + std::to_string(pkt.payload_bytes) +
                        " does not fit an IP datagram (length " + std::to_string(ip_length) + " > 65535)");
  const size_t datagram_end = l2 + l3 + size_t(udp_length);
  out.assign(std::max(datagram_end, min_frame_without_fcs), 0);  // zeros: pad bytes and Ethernet padding
  uint8_t* f = out.data();

  // Ethernet, 802.1Q.
  put48(f, pkt.eth.dst_mac);
  put48(f + 6, pkt.eth.src_mac);
  if (pkt.eth.has_vlan) {
    put16(f + 12, 0x8100);
    put16(f + 14, uint32_t(pkt.eth.pcp & 0x7) << 13 | (pkt.eth.vlan_id & 0x0fff));  // DEI 0
  }
  put16(f + l2 - 2, pkt.ip.is_v6 ? 0x86dd : 0x0800);

  // IP.
  uint8_t* ip = f + l2;
  const uint8_t tos = uint8_t((pkt.ip.dscp & 0x3f) << 2 | (pkt.ip.ecn & 0x3));
  if (!pkt.ip.is_v6) {
    ip[0] = 0x45;
    ip[1] = tos;
    put16(ip + 2, uint32_t(ip_length));
    put16(ip + 4, 0);       // identification: meaningless with DF set (RFC 6864)
    put16(ip + 6, 0x4000);  // don't fragment
    ip[8] = pkt.ip.ttl;
    ip[9] = 17;  // UDP
    std::memcpy(ip + 12, pkt.ip.src.octets.data() + 12, 4);
    std::memcpy(ip + 16, pkt.ip.dst.octets.data() + 12, 4);
    put16(ip + 10, fold(sum16(ip, hb::ipv4)));
  } else {
    put32(ip, uint32_t(6) << 28 | uint32_t(tos) << 20 | (pkt.ip.flow_label & 0xfffff));
    put16(ip + 4, uint32_t(udp_length));
    ip[6] = 17;  // next header: UDP
    ip[7] = pkt.ip.ttl;
    std::memcpy(ip + 8, pkt.ip.src.octets.data(), 16);
    std::memcpy(ip + 24, pkt.ip.dst.octets.data(), 16);
  }

  // UDP; the checksum is filled last because it covers the ICRC.
  uint8_t* udp = ip + l3;
  put16(udp, pkt.udp.src_port);
  put16(udp + 2, pkt.udp.dst_port);
  put16(udp + 4, uint32_t(udp_length));

  // BTH.
  uint8_t* bth = udp + hb::udp;
  bth[0] = opcode;
  bth[1] = uint8_t((pkt.bth.solicited ? 0x80 : 0) | (pkt.bth.mig_req ? 0x40 : 0) | (pkt.bth.pad_count & 0x3) << 4);
  put16(bth + 2, pkt.bth.pkey);
  bth[4] = uint8_t((pkt.bth.fecn ? 0x80 : 0) | (pkt.bth.becn ? 0x40 : 0));
  put24(bth + 5, pkt.bth.dest_qp & 0xffffff);
  bth[8] = pkt.bth.ack_req ? 0x80 : 0;
  put24(bth + 9, pkt.bth.psn & core::psn_mask);

  uint8_t* p = bth + hb::bth;
  if (pkt.has_reth) {
    put64(p, pkt.reth.va);
    put32(p + 8, pkt.reth.rkey);
    put32(p + 12, pkt.reth.dma_length);
    p += hb::reth;
  }
  if (pkt.has_aeth) {
    p[0] = pkt.aeth.syndrome;
    put24(p + 1, pkt.aeth.msn & 0xffffff);
    p += hb::aeth;
    if (pkt.aeth.sack) {  // nic.retransmission sack: reserved byte, then the PSN (decoders show it as payload)
      put24(p + 1, pkt.aeth.sack_psn & 0xffffff);
      p += hb::sack;
    }
  }
  if (pkt.has_immediate) {
    put32(p, pkt.immediate);
    p += hb::immediate;
  }
  if (cnp) p += hb::cnp_reserved;  // already zero
  if (pkt.payload && pkt.payload_bytes) std::memcpy(p, pkt.payload, pkt.payload_bytes);
  p += pkt.payload_bytes + pkt.bth.pad_count;

  const size_t before_icrc = size_t(p - ip);
  store_icrc(p, roce_icrc(ip, l3, before_icrc, pkt.ip.is_v6));

  if (pkt.ip.is_v6) {
    // RFC 8200 section 8.1 makes the UDP checksum mandatory over IPv6 (a zero one is dropped by receivers
    // and flagged by Wireshark); the ICRC masks it, so computing it last does not change the ICRC.
    uint32_t sum = sum16(ip + 8, 32);  // pseudo-header: source and destination addresses
    sum += uint32_t(udp_length >> 16) + uint32_t(udp_length & 0xffff) + 17;
    sum = sum16(udp, size_t(udp_length), sum);
    uint16_t checksum = fold(sum);
    put16(udp + 6, checksum ? checksum : 0xffff);  // 0 means "no checksum", so a computed 0 is sent as ones
  }
  // IPv4: UDP checksum 0 (none), as RoCEv2 NICs send it; the ICRC protects the transport end to end.
}

pcap_writer::pcap_writer(const std::string& path) : m_path(path) {
  m_file = std::fopen(path.c_str(), "wb");
  if (!m_file) throw capture_error(path + ": cannot create the capture file: " + std::strerror(errno));
  uint8_t header[24] = {};
  put_le32(header, nanosecond_magic);
  header[4] = 2;  // version 2.4
  header[6] = 4;
  // thiszone and sigfigs stay 0
  put_le32(header + 16, snaplen_bytes);
  put_le32(header + 20, link_type_ethernet);
  put(header, sizeof header);
}

pcap_writer::~pcap_writer() {
  if (m_file) std::fclose(m_file);
}

void pcap_writer::put(const void* data, size_t bytes) {
  if (!m_file) throw capture_error(m_path + ": write after close");
  if (std::fwrite(data, 1, bytes, m_file) != bytes)
    throw capture_error(m_path + ": write failed after " + std::to_string(m_frames) + " frames: " +
                        std::strerror(errno));
}

void pcap_writer::write(const core::packet& pkt, uint64_t timestamp_ns) {
  try {
    serialize_frame(pkt, m_frame);
  } catch (const capture_error& e) {
    throw capture_error(m_path + ": frame " + std::to_string(m_frames + 1) + ": " + e.what());
  }
  write_frame(m_frame.data(), m_frame.size(), timestamp_ns);
}

void pcap_writer::write_frame(const uint8_t* data, size_t bytes, uint64_t timestamp_ns, size_t original_bytes) {
  if (bytes > snaplen_bytes)
    throw capture_error(m_path + ": frame " + std::to_string(m_frames + 1) + " is " + std::to_string(bytes) +
                        " bytes, over the snaplen " + std::to_string(snaplen_bytes));
  uint8_t record[16];
  put_le32(record, uint32_t(timestamp_ns / 1000000000u));
  put_le32(record + 4, uint32_t(timestamp_ns % 1000000000u));
  put_le32(record + 8, uint32_t(bytes));
  put_le32(record + 12, uint32_t(original_bytes ? original_bytes : bytes));
  put(record, sizeof record);
  put(data, bytes);
  ++m_frames;
}

void pcap_writer::close() {
  if (!m_file) return;
  const bool flushed = std::fflush(m_file) == 0;
  const int flush_errno = errno;
  const bool closed = std::fclose(m_file) == 0;
  m_file = nullptr;
  if (!flushed || !closed)
    throw capture_error(m_path + ": writing the capture failed at close: " +
                        std::strerror(flushed ? errno : flush_errno));
}

}  // namespace fabricsim::traces
