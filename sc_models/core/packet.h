// The packet descriptor: parsed RoCEv2 header fields as they would be on the wire, plus a reference to the
// payload bytes in the sender's memory model (never copied per hop). Descriptors are pooled (packet_pool.h).
#pragma once

#include <array>
#include <cstdint>
#include <cstring>

#include "sc_models/core/units.h"

namespace fabricsim::core {

// Header sizes on the wire (IBTA vol. 1 annex A17 RoCEv2; IEEE 802.3; RFC 791/8200/768).
namespace header_bytes {
constexpr uint64_t ethernet = 14;        // destination MAC, source MAC, EtherType
constexpr uint64_t vlan_tag = 4;         // 802.1Q: TPID + PCP/DEI/VID
constexpr uint64_t ipv4 = 20;            // without options
constexpr uint64_t ipv6 = 40;
constexpr uint64_t udp = 8;
constexpr uint64_t bth = 12;             // base transport header
constexpr uint64_t reth = 16;            // RDMA extended: VA 8, R_Key 4, DMA length 4
constexpr uint64_t aeth = 4;             // ACK extended: syndrome 8 bit, MSN 24 bit
constexpr uint64_t sack = 4;             // fabricsim's SACK extension after the AETH: reserved 8 bit, PSN 24 bit
constexpr uint64_t immediate = 4;
constexpr uint64_t cnp_reserved = 16;    // CNP: 16 reserved bytes after the BTH
constexpr uint64_t icrc = 4;
constexpr uint64_t fcs = 4;
constexpr uint64_t preamble_sfd = 8;     // per frame on the wire, not in the frame
constexpr uint64_t inter_frame_gap = 12;
constexpr uint64_t min_frame = 64;       // minimum Ethernet frame, FCS included
constexpr uint64_t int_shim = 8;         // in-band telemetry header (HPCC style), when the sender asks for it
constexpr uint64_t int_record = 8;       // one hop's telemetry record on the wire (HPCC: 8 B per hop)
// InfiniBand (IBTA vol. 1 ch. 7-9): local route header, global route header (IPv6 layout), variant CRC.
// BTH, RETH, AETH, immediate and ICRC are the same as above (RoCEv2 carries the IB transport unchanged).
constexpr uint64_t ib_lrh = 8;
constexpr uint64_t ib_grh = 40;
constexpr uint64_t ib_vcrc = 2;
}  // namespace header_bytes

// What a frame is: RoCEv2 traffic, or an IEEE 802.1Qbb priority flow control (PFC) MAC control frame.
// InfiniBand: a native IB packet (LRH, optional GRH, BTH ...), see local_route_header; the IP/UDP fields
// are unused except ip.src/ip.dst (the GRH's SGID/DGID) when lrh.has_grh.
// nvlink: an NVLink packet (sc_models/nvlink/): header and payload in flits, whose size on the wire the sender
// computes from its nvlink parameters and seals (frame_size() returns the sealed size); lrh.dlid/slid carry
// the destination and source GPU, reth the target address, transfer tag and length.
enum class frame_kind : uint8_t { roce = 0, pfc = 1, infiniband = 2, nvlink = 3 };

// 802.1Qbb: EtherType 0x8808, opcode 0x0101, a class-enable vector and one pause time per priority in
// quanta of 512 bit times at the link's rate (core::pause_duration); a time of zero resumes the priority (XON).
struct pfc_fields {
  uint8_t class_enable = 0;
  std::array<uint16_t, 8> quanta{};
};
constexpr uint64_t pfc_mac_control_da = 0x01'80'c2'00'00'01ull;

// One switch hop's in-band telemetry (HPCC's record: when, how much sent, how deep, how fast). The model
// keeps full-width fields; the wire carries int_record bytes per hop.
struct int_record {
  picoseconds at;       // when the packet left the egress port
  uint64_t tx_bytes;    // bytes the egress port had sent by then
  uint32_t qlen_bytes;  // egress queue depth seen by the packet
  uint32_t rate_mbps;   // egress link rate
};
constexpr unsigned max_int_hops = 5;

constexpr uint16_t roce_v2_udp_port = 4791;
constexpr uint32_t psn_modulus = 1u << 24;  // PSNs are 24 bit
constexpr uint32_t psn_mask = psn_modulus - 1;

// BTH opcodes used by the model: top 3 bits transport (RC = 000), low 5 bits operation (IBTA table 38).
enum class bth_opcode : uint8_t {
  rc_send_first = 0x00,
  rc_send_middle = 0x01,
  rc_send_last = 0x02,
  rc_send_last_imm = 0x03,
  rc_send_only = 0x04,
  rc_send_only_imm = 0x05,
  rc_rdma_write_first = 0x06,
  rc_rdma_write_middle = 0x07,
  rc_rdma_write_last = 0x08,
  rc_rdma_write_last_imm = 0x09,
  rc_rdma_write_only = 0x0a,
  rc_rdma_write_only_imm = 0x0b,
  rc_rdma_read_request = 0x0c,
  rc_rdma_read_response_first = 0x0d,
  rc_rdma_read_response_middle = 0x0e,
  rc_rdma_read_response_last = 0x0f,
  rc_rdma_read_response_only = 0x10,
  rc_acknowledge = 0x11,
  cnp = 0x81,  // RoCEv2 congestion notification packet
  // Manufacturer-specific opcodes (IBTA 0xC0-0xFF): SHARP aggregation data going up a tree, results coming
  // down (sc_models/switch/quantum/sharp_aggregator.h).
  sharp_up = 0xc0,
  sharp_down = 0xc1,
  // NVLink packets (frame_kind::nvlink, sc_models/nvlink/): a write into a peer GPU's HBM, an NVLS
  // contribution to a switch chip's in-switch reduction, and an NVLS result multicast back to the GPUs.
  nvlink_write = 0xd0,
  nvls_contribution = 0xd1,
  nvls_result = 0xd2,
};

// An IPv4 address is held as ::ffff:a.b.c.d so that one type carries both families.
struct ip_address {
  std::array<uint8_t, 16> octets{};

  static ip_address v4(uint32_t addr);
  bool is_v4_mapped() const;
  uint32_t v4_value() const;  // valid when is_v4_mapped()
  bool operator==(const ip_address& o) const {
    uint64_t a[2], b[2];
    std::memcpy(a, octets.data(), 16);
    std::memcpy(b, o.octets.data(), 16);
    return a[0] == b[0] && a[1] == b[1];
  }
  bool operator!=(const ip_address& o) const { return !(*this == o); }
  // A well-mixed 64-bit hash of the address, for route tables.
  uint64_t hash() const {
    uint64_t w[2];
    std::memcpy(w, octets.data(), 16);
    uint64_t x = w[0] ^ (w[1] * 0x9e3779b97f4a7c15ull);
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
  }
};

// The fabric's host addresses (topology::host_ip): host i is 10.0.0.1 + i (and, on InfiniBand, LID i + 1).
// The one place the base is written: the fabric assigns it, the switches route and the InfiniBand blocks name
// LIDs by it.
constexpr uint32_t fabric_host_ip_base = 0x0a000001;

// InfiniBand LRH (frame_kind::infiniband): what a subnet switch reads. VL is rewritten at every hop (the
// SL-to-VL table of the egress port); SL stays end to end.
struct local_route_header {
  uint16_t dlid = 0;
  uint16_t slid = 0;
  uint8_t sl = 0;  // 4 bit service level
  uint8_t vl = 0;  // 4 bit virtual lane (VL15: subnet management)
  bool has_grh = false;
};
// IB MTUs (IBTA: 256, 512, 1024, 2048, 4096 bytes of payload per packet).
constexpr bool valid_ib_mtu(uint64_t mtu) {
  return mtu == 256 || mtu == 512 || mtu == 1024 || mtu == 2048 || mtu == 4096;
}

struct ethernet_header {
  uint64_t dst_mac = 0;  // 48 bit
  uint64_t src_mac = 0;  // 48 bit
  bool has_vlan = false;
  uint16_t vlan_id = 0;  // 12 bit
  uint8_t pcp = 0;       // 3 bit priority code point
};

struct ip_header {
  ip_address dst;  // first: the one field every switch reads
  ip_address src;
  uint32_t flow_label = 0;  // IPv6 only, 20 bit
  uint8_t dscp = 0;  // 6 bit
  uint8_t ecn = 0;   // 2 bit: 0 not-ECT, 1 ECT(1), 2 ECT(0), 3 CE
  uint8_t ttl = 64;  // hop limit for IPv6
  bool is_v6 = false;
};

struct udp_header {
  uint16_t src_port = 0;  // path entropy: the NIC varies it to spread a QP over paths
  uint16_t dst_port = roce_v2_udp_port;
};

struct base_transport_header {
  bth_opcode opcode = bth_opcode::rc_rdma_write_only;
  uint8_t pad_count = 0;   // 2 bit: bytes added to make the payload a multiple of 4
  uint16_t pkey = 0xffff;
  uint32_t dest_qp = 0;    // 24 bit
  uint32_t psn = 0;        // 24 bit
  bool solicited = false;
  bool mig_req = true;
  bool fecn = false;
  bool becn = false;
  bool ack_req = false;
};

struct rdma_extended_header {
  uint64_t va = 0;
  uint32_t rkey = 0;
  uint32_t dma_length = 0;
};

struct ack_extended_header {
  uint8_t syndrome = 0;  // 0b000xxxxx ACK (credit count), 0b011xxxxx NAK
  uint32_t msn = 0;      // 24 bit message sequence number
  // nic.retransmission sack only (not IBTA; after IRN, Mittal et al., SIGCOMM 2018): the ACK also names one
  // PSN the responder holds beyond its expected PSN, in a 4-byte extension after the AETH.
  uint32_t sack_psn = 0;
  bool sack = false;
};

// Laid out by use: the first cache line holds what a switch reads at every hop (addresses, ports, size on
// the wire), the second what a NIC reads (transport headers, payload reference).
struct alignas(64) packet {
  ip_header ip;
  udp_header udp;
  uint32_t sealed_wire_bytes = 0;  // wire_size() frozen by seal(); 0 while headers may still change
  frame_kind kind = frame_kind::roce;
  // Set by the switch a packet is in (model state, not on the wire): its ingress port and traffic class.
  uint8_t hop_tc = 0;
  uint16_t hop_in_port = 0;
  bool int_requested = false;      // the sender asked for in-band telemetry; switches append records
  uint8_t int_hops = 0;            // telemetry records carried
  picoseconds injected_at{};       // when the sender put it on its first link

  base_transport_header bth;
  uint64_t id = 0;                 // model bookkeeping, not on the wire: unique per run, for traces
  bool has_reth = false;
  bool has_aeth = false;
  bool has_immediate = false;
  uint32_t payload_bytes = 0;
  // Payload: a reference into the sender's memory model. The bytes are read once, where they are placed.
  const uint8_t* payload = nullptr;
  // A generated payload (memory::payload_pattern) when `payload` is null: the bytes at [payload_va,
  // +payload_bytes) of host `payload_host`'s memory, made where they are placed. Both travel with the
  // descriptor, so a packet crossing to another MPI rank names the same bytes there.
  uint64_t payload_va = 0;
  uint32_t payload_host = 0;
  // Telemetry records live beside the pool (packet_pool::telemetry), not in the descriptor: most packets
  // carry none, and every byte here is touched at every acquire and hop. 0: none allocated. In the NIC's
  // line: the pool's release reads it, at the receiver, which has read this line already.
  uint32_t telemetry_slot = 0;
  rdma_extended_header reth;
  ack_extended_header aeth;
  uint32_t immediate = 0;

  ethernet_header eth;
  local_route_header lrh;  // frame_kind::infiniband only
  pfc_fields pfc;          // frame_kind::pfc only

  // Frame size from the destination MAC to the FCS inclusive (what a capture shows plus the FCS).
  bytes frame_size() const;
  // Bytes the frame occupies on the wire: the frame plus preamble/SFD and the inter-frame gap. An InfiniBand
  // packet is LRH to VCRC: IB has no preamble or inter-frame gap (start/end of packet are marked by the
  // physical layer's block coding, already inside the data rate).
  bytes wire_size() const;
  // The sender calls seal() once the headers are final; every hop then reads wire() without recomputing.
  // A block that changes the size afterwards (telemetry records) seals again.
  void seal() { sealed_wire_bytes = uint32_t(wire_size().value); }
  bytes wire() const { return sealed_wire_bytes ? bytes(sealed_wire_bytes) : wire_size(); }
  // Hash input for ECMP: the 5-tuple (addresses, protocol, ports).
  uint32_t five_tuple_hash(uint32_t seed) const;
};

// A switch's ECMP hash unit for one seed: p.five_tuple_hash(seed), with the rounds over the part of the
// 5-tuple every IPv4 packet shares (the first three words of both addresses, the IPv4-mapped prefix) folded
// into the seed once, so an IPv4 packet costs four rounds instead of ten. Any other packet is hashed in full.
class five_tuple_hasher {
 public:
  explicit five_tuple_hasher(uint32_t seed);
  uint32_t operator()(const packet& p) const;
  uint32_t seed() const { return m_seed; }

 private:
  uint32_t m_seed;
  uint32_t m_v4_state;  // the hash's state after the IPv4-mapped prefix of both addresses
};

// Compares 24-bit PSNs: true when a is before b in the half of PSN space ahead of a.
constexpr bool psn_before(uint32_t a, uint32_t b) {
  const uint32_t d = (b - a) & psn_mask;
  return d != 0 && d < psn_modulus / 2;
}
constexpr uint32_t psn_add(uint32_t psn, uint32_t n) { return (psn + n) & psn_mask; }

}  // namespace fabricsim::core
