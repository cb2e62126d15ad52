// RoCEv2 frame decoder: Ethernet [802.1Q] IPv4|IPv6 UDP:4791 BTH [RETH|AETH|ImmDt|CNP] payload pad ICRC.
#include "traces/roce_decoder.h"

#include <cinttypes>
#include <cstdarg>
#include <cstdio>

#include "traces/icrc.h"

namespace fabricsim::traces {
namespace {

namespace hb = core::header_bytes;

constexpr uint16_t ethertype_ipv4 = 0x0800;
constexpr uint16_t ethertype_ipv6 = 0x86dd;
constexpr uint16_t ethertype_vlan = 0x8100;  // 802.1Q C-tag
constexpr uint8_t ip_protocol_udp = 17;

uint16_t be16(const uint8_t* p) { return uint16_t(p[0] << 8 | p[1]); }
uint32_t be24(const uint8_t* p) { return uint32_t(p[0]) << 16 | uint32_t(p[1]) << 8 | p[2]; }
uint32_t be32(const uint8_t* p) { return uint32_t(p[0]) << 24 | be24(p + 1); }
uint64_t be48(const uint8_t* p) { return uint64_t(be16(p)) << 32 | be32(p + 2); }
uint64_t be64(const uint8_t* p) { return uint64_t(be32(p)) << 32 | be32(p + 4); }

// The descriptor holds IPv4 addresses as ::ffff:a.b.c.d (core::ip_address); filled here directly so that
// this library needs only the header of the packet descriptor.
void set_v4(core::ip_address& a, const uint8_t* p) {
  a.octets = {};
  a.octets[10] = 0xff;
  a.octets[11] = 0xff;
  for (int i = 0; i < 4; ++i) a.octets[12 + i] = p[i];
}
void set_v6(core::ip_address& a, const uint8_t* p) {
  for (int i = 0; i < 16; ++i) a.octets[i] = p[i];
}

}  // namespace

opcode_layout layout_of(uint8_t opcode) {
  opcode_layout l;
  if (opcode == uint8_t(core::bth_opcode::cnp)) {
    l.known = l.cnp = true;
    return l;
  }
  const uint8_t transport = opcode >> 5;  // 0 RC, 1 UC, 2 RD, 3 UD, 5 XRC
  const uint8_t operation = opcode & 0x1f;
  if (transport == 3) {  // UD: SEND ONLY (0x04), SEND ONLY with immediate (0x05), each with a DETH
    l.known = l.deth = operation == 0x04 || operation == 0x05;
    l.immediate = operation == 0x05;
    return l;
  }
  if (transport > 1) return l;
  const bool rc = transport == 0;
  switch (operation) {
    case 0x00: case 0x01: case 0x02: case 0x04:  // SEND first/middle/last/only
    case 0x07: case 0x08:                        // WRITE middle/last
      l.known = true;
      break;
    case 0x03: case 0x05: case 0x09:  // SEND last/only with immediate, WRITE last with immediate
      l.known = l.immediate = true;
      break;
    case 0x06: case 0x0a:  // WRITE first/only
      l.known = l.reth = true;
      break;
    case 0x0b:  // WRITE only with immediate: RETH then ImmDt
      l.known = l.reth = l.immediate = true;
      break;
    case 0x0c:  // READ request
      l.known = l.reth = rc;
      break;
    case 0x0d: case 0x0f: case 0x10: case 0x11:  // READ response first/last/only, ACK
      l.known = l.aeth = rc;
      break;
    case 0x0e:  // READ response middle
      l.known = rc;
      break;
    case 0x12:  // ATOMIC ACKNOWLEDGE: AETH then AtomicAckETH
      l.known = l.aeth = l.atomic_ack_eth = rc;
      break;
    case 0x13:
    case 0x14:  // COMPARE_SWAP, FETCH_ADD
      l.known = l.atomic_eth = rc;
      break;
    case 0x16:
    case 0x17:  // SEND last/only with invalidate
      l.known = l.ieth = rc;
      break;
    default:  // reserved
      break;
  }
  return l;
}

const char* opcode_name(uint8_t opcode) {
  if (opcode == uint8_t(core::bth_opcode::cnp)) return "CNP";
  static constexpr const char* rc_names[] = {"RC SEND_FIRST",
                                             "RC SEND_MIDDLE",
                                             "RC SEND_LAST",
                                             "RC SEND_LAST_WITH_IMMEDIATE",
                                             "RC SEND_ONLY",
                                             "RC SEND_ONLY_WITH_IMMEDIATE",
                                             "RC RDMA_WRITE_FIRST",
                                             "RC RDMA_WRITE_MIDDLE",
                                             "RC RDMA_WRITE_LAST",
                                             "RC RDMA_WRITE_LAST_WITH_IMMEDIATE",
                                             "RC RDMA_WRITE_ONLY",
                                             "RC RDMA_WRITE_ONLY_WITH_IMMEDIATE",
                                             "RC RDMA_READ_REQUEST",
                                             "RC RDMA_READ_RESPONSE_FIRST",
                                             "RC RDMA_READ_RESPONSE_MIDDLE",
                                             "RC RDMA_READ_RESPONSE_LAST",
                                             "RC RDMA_READ_RESPONSE_ONLY",
                                             "RC ACKNOWLEDGE",
                                             "RC ATOMIC_ACKNOWLEDGE",
                                             "RC COMPARE_SWAP",
                                             "RC FETCH_ADD",
                                             "unknown",
                                             "RC SEND_LAST_WITH_INVALIDATE",
                                             "RC SEND_ONLY_WITH_INVALIDATE"};
  static constexpr const char* uc_names[] = {
      "UC SEND_FIRST", "UC SEND_MIDDLE", "UC SEND_LAST", "UC SEND_LAST_WITH_IMMEDIATE", "UC SEND_ONLY",
      "UC SEND_ONLY_WITH_IMMEDIATE", "UC RDMA_WRITE_FIRST", "UC RDMA_WRITE_MIDDLE", "UC RDMA_WRITE_LAST",
      "UC RDMA_WRITE_LAST_WITH_IMMEDIATE", "UC RDMA_WRITE_ONLY", "UC RDMA_WRITE_ONLY_WITH_IMMEDIATE"};
  if (opcode < sizeof rc_names / sizeof *rc_names) return rc_names[opcode];
  if (opcode >= 0x20 && opcode - 0x20u < sizeof uc_names / sizeof *uc_names) return uc_names[opcode - 0x20];
  if (opcode == 0x64) return "UD SEND_ONLY";
  if (opcode == 0x65) return "UD SEND_ONLY_WITH_IMMEDIATE";
  return "unknown";
}

decode_verdict roce_decoder::fail(decode_verdict verdict, uint64_t frame_number, const char* format, ...) {
  int n = std::snprintf(m_message.data(), m_message.size(), "frame %" PRIu64 ": ", frame_number);
  if (n < 0) n = 0;
  if (size_t(n) < m_message.size()) {
    va_list args;
    va_start(args, format);
    std::vsnprintf(m_message.data() + n, m_message.size() - size_t(n), format, args);
    va_end(args);
  }
  return verdict;
}

decode_verdict roce_decoder::decode(const uint8_t* frame, size_t captured_bytes, uint64_t frame_number,
                                    core::packet& out, size_t original_bytes) {
  using v = decode_verdict;
  // A frame cut by the snapshot length: its length fields are checked against its length on the wire, its
  // headers against what was captured.
  const bool cut = original_bytes > captured_bytes;
  const size_t wire_bytes = cut ? original_bytes : captured_bytes;
  m_message[0] = '\0';
  m_reason = "malformed";  // every failure below is malformed unless it says otherwise
  m_layout = frame_layout{};

  // Ethernet II, optionally one 802.1Q tag.
  if (captured_bytes < hb::ethernet)
    return fail(v::malformed, frame_number, "Ethernet header needs %u bytes, only %zu captured",
                unsigned(hb::ethernet), captured_bytes);
  size_t offset = hb::ethernet;
  uint16_t ethertype = be16(frame + 12);
  bool has_vlan = false;
  uint16_t tci = 0;
  if (ethertype == ethertype_vlan) {
    if (captured_bytes < hb::ethernet + hb::vlan_tag)
      return fail(v::malformed, frame_number, "802.1Q tag needs %u bytes after the MAC addresses, only %zu captured",
                  unsigned(hb::vlan_tag + 2), captured_bytes - 12);
    has_vlan = true;
    tci = be16(frame + 14);
    ethertype = be16(frame + 16);
    offset += hb::vlan_tag;
  }
  if (ethertype != ethertype_ipv4 && ethertype != ethertype_ipv6) {
    m_reason = "not_ip";
    return fail(v::not_roce, frame_number, "EtherType 0x%04x is neither IPv4 nor IPv6", ethertype);
  }

  // IP. The IP length fields, not the capture length, say where the datagram ends: anything after it is
  // the FCS (when the capture kept it) or padding up to the 60-byte minimum frame.
  const uint8_t* ip = frame + offset;
  const size_t after_ethernet = wire_bytes - offset;  // on the wire; the IP header itself must be captured
  const size_t captured_after_ethernet = captured_bytes - offset;
  const char* kept = cut ? "on the wire" : "captured";
  const bool is_v6 = ethertype == ethertype_ipv6;
  size_t ip_header = 0;
  size_t datagram = 0;  // IP header + IP payload, as the IP header claims
  if (!is_v6) {
    if (captured_after_ethernet < hb::ipv4)
      return fail(v::malformed, frame_number, "IPv4 header needs %u bytes, only %zu captured after the Ethernet header",
                  unsigned(hb::ipv4), captured_after_ethernet);
    if (ip[0] >> 4 != 4)
      return fail(v::malformed, frame_number, "IPv4 version field is %u (EtherType says IPv4)", unsigned(ip[0] >> 4));
    ip_header = size_t(ip[0] & 0x0f) * 4;
    if (ip_header < hb::ipv4)
      return fail(v::malformed, frame_number, "IPv4 IHL %u is below the minimum 5", unsigned(ip[0] & 0x0f));
    datagram = be16(ip + 2);
    if (datagram < ip_header)
      return fail(v::malformed, frame_number, "IPv4 total length %zu is shorter than its %zu-byte header", datagram,
                  ip_header);
    if (datagram > after_ethernet)
      return fail(v::malformed, frame_number,
                  "IPv4 total length %zu exceeds the %zu bytes %s after the Ethernet header", datagram, after_ethernet,
                  kept);
    if (be16(ip + 6) & 0x3fff) {  // MF flag or a fragment offset: only the reassembled datagram is RoCEv2
      m_reason = "ip_fragment";
      return fail(v::not_roce, frame_number, "IPv4 fragment (RoCEv2 sets don't-fragment)");
    }
    if (ip[9] != ip_protocol_udp) {
      m_reason = "not_udp";
      return fail(v::not_roce, frame_number, "IPv4 protocol %u is not UDP", unsigned(ip[9]));
    }
  } else {
    if (captured_after_ethernet < hb::ipv6)
      return fail(v::malformed, frame_number, "IPv6 header needs %u bytes, only %zu captured after the Ethernet header",
                  unsigned(hb::ipv6), captured_after_ethernet);
    if (ip[0] >> 4 != 6)
      return fail(v::malformed, frame_number, "IPv6 version field is %u (EtherType says IPv6)", unsigned(ip[0] >> 4));
    ip_header = hb::ipv6;
    datagram = hb::ipv6 + be16(ip + 4);
    if (datagram > after_ethernet)
      return fail(v::malformed, frame_number, "IPv6 payload length %zu exceeds the %zu bytes %s after the IPv6 header",
                  datagram - hb::ipv6, after_ethernet - hb::ipv6, kept);
    // RoCEv2 NICs send UDP directly after the fixed header; extension headers mean some other traffic.
    if (ip[6] != ip_protocol_udp) {
      m_reason = "not_udp";
      return fail(v::not_roce, frame_number, "IPv6 next header %u is not UDP", unsigned(ip[6]));
    }
  }
  const char* ip_name = is_v6 ? "IPv6" : "IPv4";

  // UDP: destination port 4791 says RoCEv2; the source port is path entropy and may take any value.
  const uint8_t* udp = ip + ip_header;
  const size_t ip_payload = datagram - ip_header;
  if (ip_payload < hb::udp)
    return fail(v::malformed, frame_number, "UDP header needs %u bytes, the %s datagram holds %zu after its header",
                unsigned(hb::udp), ip_name, ip_payload);
  if (ip_header + hb::udp > captured_after_ethernet)
    return fail(v::malformed, frame_number,
                "the snapshot length cut the UDP header: %zu of the frame's %zu bytes captured", captured_bytes,
                wire_bytes);
  const uint16_t dst_port = be16(udp + 2);
  if (dst_port != core::roce_v2_udp_port) {
    m_reason = "udp_port_not_4791";
    return fail(v::not_roce, frame_number, "UDP destination port %u is not RoCEv2 (%u)", unsigned(dst_port),
                unsigned(core::roce_v2_udp_port));
  }
  const size_t udp_length = be16(udp + 4);
  if (udp_length < hb::udp)
    return fail(v::malformed, frame_number, "UDP length %zu is shorter than the 8-byte UDP header", udp_length);
  if (udp_length > ip_payload)
    return fail(v::malformed, frame_number, "UDP length %zu exceeds the %zu bytes the %s length leaves after its header",
                udp_length, ip_payload, ip_name);

  // BTH (IBTA vol. 1 section 9.2): opcode; SE, M, pad count, TVer; P_Key; FECN, BECN (A17.9), reserved;
  // destination QP; AckReq, reserved; PSN.
  const uint8_t* bth = udp + hb::udp;
  const size_t transport_bytes = udp_length - hb::udp;  // BTH .. ICRC
  const size_t bth_at = size_t(bth - frame);
  if (bth_at + hb::bth > captured_bytes && transport_bytes >= hb::bth)
    return fail(v::malformed, frame_number, "the snapshot length cut the BTH: %zu of the frame's %zu bytes captured",
                captured_bytes, wire_bytes);
  if (transport_bytes < hb::bth + hb::icrc)
    return fail(v::malformed, frame_number, "BTH and ICRC need %u bytes, the UDP datagram carries %zu",
                unsigned(hb::bth + hb::icrc), transport_bytes);
  const uint8_t opcode = bth[0];
  const uint8_t header_version = bth[1] & 0x0f;
  if (header_version != 0)
    return fail(v::malformed, frame_number, "BTH header version %u is not 0", unsigned(header_version));
  const opcode_layout lay = layout_of(opcode);
  if (!lay.known)
    return fail(v::malformed, frame_number,
                "BTH opcode 0x%02x is not one this decoder knows (RC, UC and UD opcodes, CNP; not RD or XRC)",
                unsigned(opcode));
  const uint8_t pad = (bth[1] >> 4) & 0x03;
  const size_t extended = (lay.deth ? deth_bytes : 0) + (lay.reth ? hb::reth : 0) +
                          (lay.atomic_eth ? atomic_eth_bytes : 0) + (lay.aeth ? hb::aeth : 0) +
                          (lay.atomic_ack_eth ? atomic_ack_eth_bytes : 0) + (lay.immediate ? hb::immediate : 0) +
                          (lay.ieth ? ieth_bytes : 0) + (lay.cnp ? hb::cnp_reserved : 0);
  if (hb::bth + extended + pad + hb::icrc > transport_bytes)
    return fail(v::malformed, frame_number,
                "BTH opcode 0x%02x (%s) needs %zu header bytes, pad %u and a 4-byte ICRC, the UDP datagram carries %zu",
                unsigned(opcode), opcode_name(opcode), size_t(hb::bth + extended), unsigned(pad), transport_bytes);

  if (bth_at + hb::bth + extended > captured_bytes)
    return fail(v::malformed, frame_number,
                "the snapshot length cut the %s headers: %zu of the frame's %zu bytes captured, the headers end at "
                "byte %zu",
                opcode_name(opcode), captured_bytes, wire_bytes, bth_at + hb::bth + extended);
  const size_t icrc_offset = bth_at + transport_bytes - hb::icrc;
  if (m_params.check_icrc && !cut) {
    const uint32_t expected = roce_icrc(ip, ip_header, icrc_offset - offset, is_v6);
    const uint32_t carried = load_icrc(frame + icrc_offset);
    if (carried != expected)
      return fail(v::malformed, frame_number, "ICRC 0x%08x does not match the computed 0x%08x", carried, expected);
  }

  // Every check passed: fill the descriptor.
  out = core::packet{};
  out.id = frame_number;
  out.eth.dst_mac = be48(frame);
  out.eth.src_mac = be48(frame + 6);
  out.eth.has_vlan = has_vlan;
  out.eth.pcp = uint8_t(tci >> 13);
  out.eth.vlan_id = tci & 0x0fff;
  out.ip.is_v6 = is_v6;
  if (!is_v6) {
    out.ip.dscp = ip[1] >> 2;
    out.ip.ecn = ip[1] & 0x03;
    out.ip.ttl = ip[8];
    set_v4(out.ip.src, ip + 12);
    set_v4(out.ip.dst, ip + 16);
  } else {
    const uint8_t traffic_class = uint8_t((ip[0] & 0x0f) << 4 | ip[1] >> 4);
    out.ip.dscp = traffic_class >> 2;
    out.ip.ecn = traffic_class & 0x03;
    out.ip.flow_label = (uint32_t(ip[1] & 0x0f) << 16) | be16(ip + 2);
    out.ip.ttl = ip[7];
    set_v6(out.ip.src, ip + 8);
    set_v6(out.ip.dst, ip + 24);
  }
  out.udp.src_port = be16(udp);
  out.udp.dst_port = dst_port;

  out.bth.opcode = core::bth_opcode(opcode);
  out.bth.solicited = bth[1] & 0x80;
  out.bth.mig_req = bth[1] & 0x40;
  out.bth.pad_count = pad;
  out.bth.pkey = be16(bth + 2);
  out.bth.fecn = bth[4] & 0x80;
  out.bth.becn = bth[4] & 0x40;
  out.bth.dest_qp = be24(bth + 5);
  out.bth.ack_req = bth[8] & 0x80;
  out.bth.psn = be24(bth + 9);

  const uint8_t* ext = bth + hb::bth;
  if (lay.deth) {
    m_layout.has_deth = true;
    m_layout.deth_qkey = be32(ext);
    m_layout.deth_src_qp = be24(ext + 5);
    ext += deth_bytes;
  }
  if (lay.reth) {
    out.has_reth = true;
    out.reth.va = be64(ext);
    out.reth.rkey = be32(ext + 8);
    out.reth.dma_length = be32(ext + 12);
    ext += hb::reth;
  }
  if (lay.atomic_eth) {
    m_layout.has_atomic_eth = true;
    m_layout.atomic_va = be64(ext);
    m_layout.atomic_rkey = be32(ext + 8);
    m_layout.atomic_swap_add = be64(ext + 12);
    m_layout.atomic_compare = be64(ext + 20);
    ext += atomic_eth_bytes;
  }
  if (lay.aeth) {
    out.has_aeth = true;
    out.aeth.syndrome = ext[0];
    out.aeth.msn = be24(ext + 1);
    ext += hb::aeth;
  }
  if (lay.atomic_ack_eth) {
    m_layout.has_atomic_ack_eth = true;
    m_layout.atomic_original = be64(ext);
    ext += atomic_ack_eth_bytes;
  }
  if (lay.immediate) {
    out.has_immediate = true;
    out.immediate = be32(ext);
    ext += hb::immediate;
  }
  if (lay.ieth) {
    m_layout.has_ieth = true;
    m_layout.ieth_rkey = be32(ext);
    ext += ieth_bytes;
  }
  if (lay.cnp) ext += hb::cnp_reserved;
  out.payload_bytes = uint32_t(transport_bytes - hb::bth - extended - pad - hb::icrc);
  out.payload = out.payload_bytes && !cut ? ext : nullptr;

  m_layout.ip_offset = uint32_t(offset);
  m_layout.ip_header_bytes = uint32_t(ip_header);
  m_layout.bth_offset = uint32_t(bth - frame);
  m_layout.icrc_offset = uint32_t(icrc_offset);
  m_layout.frame_bytes = uint32_t(offset + datagram);
  m_layout.icrc_on_wire = cut ? 0 : load_icrc(frame + icrc_offset);
  m_layout.has_trailer = wire_bytes > offset + datagram;
  m_layout.header_only = cut;
  m_reason = "";
  return v::roce;
}

}  // namespace fabricsim::traces
