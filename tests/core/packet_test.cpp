// Wire sizes and serialization times of RoCEv2 packets against hand calculations from the header sizes of
// IBTA annex A17, IEEE 802.3 and the IP/UDP RFCs (see docs/calibration.md, RoCEv2 framing).
#include <gtest/gtest.h>

#include "sc_models/core/packet.h"
#include "sc_models/core/units.h"

namespace fabricsim::core {
namespace packet_test {

packet write_packet(bth_opcode op, uint32_t payload) {
  packet p;
  p.bth.opcode = op;
  p.payload_bytes = payload;
  p.bth.pad_count = uint8_t((4 - payload % 4) % 4);
  p.has_reth = op == bth_opcode::rc_rdma_write_first || op == bth_opcode::rc_rdma_write_only;
  return p;
}

TEST(packet, write_middle_4096_wire_size) {
  // Eth 14 + IPv4 20 + UDP 8 + BTH 12 + 4096 + ICRC 4 + FCS 4 = 4158; + preamble 8 + IFG 12 = 4178.
  const packet p = write_packet(bth_opcode::rc_rdma_write_middle, 4096);
  EXPECT_EQ(p.frame_size().value, 4158u);
  EXPECT_EQ(p.wire_size().value, 4178u);
}

TEST(packet, write_first_4096_carries_reth) {
  // The FIRST packet adds the 16-byte RETH: 4174 frame bytes, 4194 on the wire.
  const packet p = write_packet(bth_opcode::rc_rdma_write_first, 4096);
  EXPECT_EQ(p.frame_size().value, 4174u);
  EXPECT_EQ(p.wire_size().value, 4194u);
}

TEST(packet, serialization_of_4096_byte_write_at_400_and_800_gbps) {
  const packet p = write_packet(bth_opcode::rc_rdma_write_middle, 4096);
  // 4178 bytes * 8 = 33424 bits; at 400 Gb/s 83.56 ns, at 800 Gb/s 41.78 ns.
  EXPECT_EQ(serialization_time(p.wire_size(), bits_per_second::from_gbps(400)).value, 83560u);
  EXPECT_EQ(serialization_time(p.wire_size(), bits_per_second::from_gbps(800)).value, 41780u);
  const packet f = write_packet(bth_opcode::rc_rdma_write_first, 4096);
  // 4194 * 8 = 33552 bits: 83.88 ns and 41.94 ns.
  EXPECT_EQ(serialization_time(f.wire_size(), bits_per_second::from_gbps(400)).value, 83880u);
  EXPECT_EQ(serialization_time(f.wire_size(), bits_per_second::from_gbps(800)).value, 41940u);
}

TEST(packet, serialization_rounds_up_to_the_picosecond) {
  // 86 bytes at 300 Gb/s: 688 bits / 0.3 bits per ps = 2293.33 ps -> 2294 ps.
  EXPECT_EQ(serialization_time(bytes(86), bits_per_second::from_gbps(300)).value, 2294u);
}

TEST(packet, payload_is_padded_to_four_bytes) {
  // 1001 bytes of payload need 3 pad bytes: 14 + 20 + 8 + 12 + 1001 + 3 + 4 + 4 = 1066.
  const packet p = write_packet(bth_opcode::rc_rdma_write_last, 1001);
  EXPECT_EQ(p.bth.pad_count, 3);
  EXPECT_EQ(p.frame_size().value, 1066u);
}

TEST(packet, ack_and_cnp_sizes) {
  packet ack;
  ack.bth.opcode = bth_opcode::rc_acknowledge;
  ack.has_aeth = true;
  // 14 + 20 + 8 + 12 + AETH 4 + ICRC 4 + FCS 4 = 66 frame bytes, 86 on the wire.
  EXPECT_EQ(ack.frame_size().value, 66u);
  EXPECT_EQ(ack.wire_size().value, 86u);
  packet cnp;
  cnp.bth.opcode = bth_opcode::cnp;
  // 14 + 20 + 8 + 12 + 16 reserved + 4 + 4 = 78.
  EXPECT_EQ(cnp.frame_size().value, 78u);
}

// nic.retransmission sack: the ACK carries a 4-byte SACK extension after the AETH (reserved byte, 24-bit PSN).
TEST(packet, sack_extension_adds_four_bytes_on_ethernet_and_infiniband) {
  packet ack;
  ack.bth.opcode = bth_opcode::rc_acknowledge;
  ack.has_aeth = true;
  ack.aeth.sack = true;
  // 14 + 20 + 8 + 12 + AETH 4 + SACK 4 + ICRC 4 + FCS 4 = 70 frame bytes; + preamble 8 + gap 12 = 90.
  EXPECT_EQ(ack.frame_size().value, 70u);
  EXPECT_EQ(ack.wire_size().value, 90u);
  ack.kind = frame_kind::infiniband;
  // LRH 8 + BTH 12 + AETH 4 + SACK 4 + ICRC 4 + VCRC 2 = 34.
  EXPECT_EQ(ack.frame_size().value, 34u);
}

TEST(packet, minimum_frame_is_64_bytes) {
  const packet p = write_packet(bth_opcode::rc_rdma_write_last, 0);
  // 14 + 20 + 8 + 12 + 4 + 4 = 62 < 64: padded to the Ethernet minimum.
  EXPECT_EQ(p.frame_size().value, 64u);
}

TEST(packet, vlan_and_ipv6_headers) {
  packet p = write_packet(bth_opcode::rc_rdma_write_middle, 1024);
  p.eth.has_vlan = true;
  p.ip.is_v6 = true;
  // 14 + 4 + 40 + 8 + 12 + 1024 + 4 + 4 = 1110.
  EXPECT_EQ(p.frame_size().value, 1110u);
}

TEST(packet, psn_arithmetic_wraps_at_2_pow_24) {
  EXPECT_EQ(psn_add(0xfffffe, 1), 0xffffffu);
  EXPECT_EQ(psn_add(0xffffff, 1), 0u);
  EXPECT_EQ(psn_add(0xffffff, 5), 4u);
  EXPECT_TRUE(psn_before(0xffffff, 0));
  EXPECT_TRUE(psn_before(0xfffff0, 0x10));
  EXPECT_FALSE(psn_before(0x10, 0xfffff0));
  EXPECT_FALSE(psn_before(7, 7));
}

TEST(packet, ecmp_hash_depends_on_source_port_and_seed) {
  packet a;
  a.ip.src = ip_address::v4(0x0a000001);
  a.ip.dst = ip_address::v4(0x0a000002);
  a.udp.src_port = 0xc001;
  packet b = a;
  b.udp.src_port = 0xc002;
  EXPECT_EQ(a.five_tuple_hash(1), packet(a).five_tuple_hash(1));
  EXPECT_NE(a.five_tuple_hash(1), b.five_tuple_hash(1));
  EXPECT_NE(a.five_tuple_hash(1), a.five_tuple_hash(2));
}

// The hash written out a second way, from its definition (a switch's hash unit over the header bits): the
// murmur3 finaliser folded over the source and destination addresses as 32-bit words in network order (the
// first octet most significant), then the protocol (UDP, 17), then the two ports. The model reads each word
// with one load and a byte swap; this reads it octet by octet.
uint32_t fmix(uint32_t h) {
  h ^= h >> 16;
  h *= 0x85ebca6bu;
  h ^= h >> 13;
  h *= 0xc2b2ae35u;
  return h ^ (h >> 16);
}
uint32_t hash_by_octets(const packet& p, uint32_t seed) {
  uint32_t h = seed;
  for (size_t i = 0; i < 16; i += 4) {
    for (const ip_address* a : {&p.ip.src, &p.ip.dst}) {
      uint32_t w = 0;
      for (size_t k = 0; k < 4; ++k) w = w << 8 | a->octets[i + k];
      h = fmix(h ^ w);
    }
  }
  h = fmix(h ^ 17u);
  return fmix(h ^ (uint32_t(p.udp.src_port) << 16 | p.udp.dst_port));
}

TEST(packet, ecmp_hash_is_the_finaliser_over_network_order_words) {
  packet p;
  uint32_t x = 12345;
  auto next = [&x] { return x = x * 1664525u + 1013904223u; };
  for (int round = 0; round < 64; ++round) {
    for (auto& o : p.ip.src.octets) o = uint8_t(next() >> 24);
    for (auto& o : p.ip.dst.octets) o = uint8_t(next() >> 24);
    p.udp.src_port = uint16_t(next() >> 16);
    p.udp.dst_port = uint16_t(next() >> 16);
    const uint32_t seed = next();
    ASSERT_EQ(p.five_tuple_hash(seed), hash_by_octets(p, seed)) << "round " << round;
  }
  // And one IPv4 packet by hand: the v4-mapped prefix (octets 10 and 11 are 0xff) is hashed like any word.
  p = packet();
  p.ip.src = ip_address::v4(0x0a000001);
  p.ip.dst = ip_address::v4(0x0a000002);
  p.udp.src_port = 0xc001;
  p.udp.dst_port = 4791;
  uint32_t h = 7;
  for (uint32_t w : {0u, 0u, 0u, 0u, 0x0000ffffu, 0x0000ffffu, 0x0a000001u, 0x0a000002u}) h = fmix(h ^ w);
  h = fmix(fmix(h ^ 17u) ^ (0xc001u << 16 | 4791u));
  EXPECT_EQ(p.five_tuple_hash(7), h);
}

// A switch's hash unit (core::five_tuple_hasher) folds the IPv4-mapped prefix into its seed once: it must give
// the octet-wise definition's value for IPv4 packets, for IPv6 ones, for a packet with one address of each kind,
// and for addresses one octet away from the prefix (each of its twelve octets changed in turn).
TEST(packet, the_switch_hash_unit_gives_the_definitions_value_for_every_kind_of_address) {
  uint32_t x = 777;
  auto next = [&x] { return x = x * 1664525u + 1013904223u; };
  size_t v4_both = 0, other = 0;
  for (int round = 0; round < 256; ++round) {
    packet p;
    const int kind = round % 4;  // 0, 1: both IPv4; 2: both random (IPv6); 3: IPv4 source, IPv6 destination
    p.ip.src = ip_address::v4(next());
    p.ip.dst = ip_address::v4(next());
    if (kind >= 2)
      for (auto& o : p.ip.dst.octets) o = uint8_t(next() >> 24);
    if (kind == 2)
      for (auto& o : p.ip.src.octets) o = uint8_t(next() >> 24);
    p.udp.src_port = uint16_t(next() >> 16);
    p.udp.dst_port = uint16_t(next() >> 16);
    const uint32_t seed = next();
    const fabricsim::core::five_tuple_hasher unit(seed);
    ASSERT_EQ(unit.seed(), seed);
    ASSERT_EQ(unit(p), hash_by_octets(p, seed)) << "round " << round << ", kind " << kind;
    (p.ip.src.is_v4_mapped() && p.ip.dst.is_v4_mapped() ? v4_both : other) += 1;
  }
  EXPECT_EQ(v4_both, 128u);  // both paths were taken
  EXPECT_EQ(other, 128u);
  // One octet of the prefix changed, in either address: no longer IPv4-mapped, hashed in full.
  packet p;
  p.ip.src = ip_address::v4(0x0a000001);
  p.ip.dst = ip_address::v4(0x0a000002);
  const fabricsim::core::five_tuple_hasher unit(99);
  for (size_t i = 0; i < 12; ++i) {
    for (ip_address* a : {&p.ip.src, &p.ip.dst}) {
      const uint8_t was = a->octets[i];
      a->octets[i] = uint8_t(was ^ 0x10);
      ASSERT_FALSE(a->is_v4_mapped());
      ASSERT_EQ(unit(p), hash_by_octets(p, 99)) << "octet " << i;
      a->octets[i] = was;
    }
  }
  EXPECT_EQ(unit(p), hash_by_octets(p, 99));
}

TEST(packet, ipv4_addresses_are_v4_mapped) {
  const ip_address a = ip_address::v4(0x0a000102);
  EXPECT_TRUE(a.is_v4_mapped());
  EXPECT_EQ(a.v4_value(), 0x0a000102u);
  EXPECT_EQ(a.octets[15], 2);
}

}  // namespace packet_test
}  // namespace fabricsim::core
