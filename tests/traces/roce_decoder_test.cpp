// Tests of the RoCEv2 frame decoder: hand-built frames (bytes laid out here from the specs, not by the
// writer), the sample captures (traces/samples, written by scapy), malformed frames and the optional ICRC check.
#include "traces/roce_decoder.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <new>
#include <string>
#include <vector>

#include "tests/support/sample_traces.h"
#include "traces/icrc.h"
#include "traces/pcap_reader.h"

// Counts heap allocations while `g_counting` is set, to show that decode() allocates nothing.
namespace {
std::atomic<bool> g_counting{false};
std::atomic<uint64_t> g_allocations{0};
}  // namespace
// GCC flags free() on memory from operator new even when both are the replacements below (a known false
// positive once they are inlined); the pair is consistent, so the warning is silenced for these lines only.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
void* operator new(std::size_t n) {
  if (g_counting) ++g_allocations;
  if (void* p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
#pragma GCC diagnostic pop

namespace fabricsim::traces {
namespace {

namespace fs = std::filesystem;
using core::bth_opcode;

const fs::path& samples_dir = test::sample_traces_dir();
using test::v4;



// Big-endian byte builder for hand-made frames.
struct bytes_builder {
  std::vector<uint8_t> b;
  bytes_builder& u8(unsigned v) { b.push_back(uint8_t(v)); return *this; }
  bytes_builder& u16(unsigned v) { return u8(v >> 8).u8(v); }
  bytes_builder& u24(uint32_t v) { return u8(v >> 16).u16(v & 0xffff); }
  bytes_builder& u32(uint32_t v) { return u16(v >> 16).u16(v & 0xffff); }
  bytes_builder& fill(size_t n, uint8_t v) { b.insert(b.end(), n, v); return *this; }
  size_t size() const { return b.size(); }
  void set16(size_t at, unsigned v) { b[at] = uint8_t(v >> 8), b[at + 1] = uint8_t(v); }
};

// Ethernet (optionally with a VLAN tag) + IPv4 (IHL 5 or with options) + UDP header, lengths patched later.
struct v4_frame {
  bytes_builder f;
  size_t ip_at = 0;
  size_t udp_at = 0;
  v4_frame(bool vlan, unsigned option_words, uint8_t tos, uint16_t dport = 4791, uint8_t protocol = 17) {
    f.u16(0x0200).u32(0x00000002).u16(0x0200).u32(0x00000001);  // dst 02:00:00:00:00:02, src ..:01
    if (vlan) f.u16(0x8100).u16(5u << 13 | 100);                 // PCP 5, VID 100
    f.u16(0x0800);
    ip_at = f.size();
    f.u8(0x40 | (5 + option_words)).u8(tos).u16(0).u16(7).u16(0x4000).u8(63).u8(protocol).u16(0);
    f.u8(10).u8(0).u8(0).u8(1).u8(10).u8(0).u8(0).u8(2);
    for (unsigned i = 0; i < option_words; ++i) f.u32(0x01010101);  // NOP options
    udp_at = f.size();
    f.u16(50000).u16(dport).u16(0).u16(0);
  }
  // Patches IP total length and UDP length to the current end plus `icrc` bytes, then appends the ICRC.
  std::vector<uint8_t> finish(bool fcs = false) {
    f.fill(4, 0);  // ICRC placeholder
    f.set16(ip_at + 2, unsigned(f.size() - ip_at));
    f.set16(udp_at + 4, unsigned(f.size() - udp_at));
    const size_t ihl = (f.b[ip_at] & 0x0f) * 4u;
    store_icrc(&f.b[f.size() - 4], roce_icrc(&f.b[ip_at], ihl, f.size() - 4 - ip_at, false));
    if (fcs) f.u32(0xdeadbeef);
    return f.b;
  }
};

std::vector<std::vector<uint8_t>> read_frames(const fs::path& file) {
  pcap_reader reader(file.string());
  std::vector<std::vector<uint8_t>> frames;
  capture_frame frame;
  while (reader.next(frame)) frames.emplace_back(frame.data, frame.data + frame.captured_bytes);
  return frames;
}

TEST(roce_decoder, write_only_immediate_over_vlan_with_ip_options_pad_and_fcs) {
  v4_frame v(true, 2, 0x68 | 0x3, 4791);  // DSCP 26, ECN CE
  v.f.u8(0x0b).u8(0x80 | 0x40 | 2 << 4).u16(0x8001).u8(0x80).u24(0x123456).u8(0x80).u24(0xfffffe);  // BTH
  v.f.u32(0x00007f00).u32(0x12345678).u32(0xabcd).u32(1001);  // RETH: VA, R_Key, DMA length
  v.f.u32(0xcafef00d);                                        // ImmDt
  const size_t payload_at = v.f.size();
  for (int i = 0; i < 1001; ++i) v.f.u8(uint8_t(i));
  v.f.fill(2, 0);  // pad count 2
  auto frame = v.finish(true);

  roce_decoder d;
  core::packet p;
  ASSERT_EQ(d.decode(frame.data(), frame.size(), 3, p), decode_verdict::roce) << d.message();
  EXPECT_STREQ(d.message(), "");
  EXPECT_EQ(p.id, 3u);
  EXPECT_EQ(p.eth.dst_mac, 0x020000000002u);
  EXPECT_EQ(p.eth.src_mac, 0x020000000001u);
  EXPECT_TRUE(p.eth.has_vlan);
  EXPECT_EQ(p.eth.vlan_id, 100);
  EXPECT_EQ(p.eth.pcp, 5);
  EXPECT_FALSE(p.ip.is_v6);
  EXPECT_EQ(p.ip.dscp, 26);
  EXPECT_EQ(p.ip.ecn, 3);
  EXPECT_EQ(p.ip.ttl, 63);
  EXPECT_TRUE(p.ip.src == v4(10, 0, 0, 1));
  EXPECT_TRUE(p.ip.dst == v4(10, 0, 0, 2));
  EXPECT_EQ(p.udp.src_port, 50000);
  EXPECT_EQ(p.udp.dst_port, 4791);
  EXPECT_EQ(p.bth.opcode, bth_opcode::rc_rdma_write_only_imm);
  EXPECT_TRUE(p.bth.solicited);
  EXPECT_TRUE(p.bth.mig_req);
  EXPECT_EQ(p.bth.pad_count, 2);
  EXPECT_EQ(p.bth.pkey, 0x8001);
  EXPECT_TRUE(p.bth.fecn);
  EXPECT_FALSE(p.bth.becn);
  EXPECT_EQ(p.bth.dest_qp, 0x123456u);
  EXPECT_TRUE(p.bth.ack_req);
  EXPECT_EQ(p.bth.psn, 0xfffffeu);
  EXPECT_TRUE(p.has_reth);
  EXPECT_FALSE(p.has_aeth);
  EXPECT_TRUE(p.has_immediate);
  EXPECT_EQ(p.reth.va, 0x00007f0012345678u);
  EXPECT_EQ(p.reth.rkey, 0xabcdu);
  EXPECT_EQ(p.reth.dma_length, 1001u);
  EXPECT_EQ(p.immediate, 0xcafef00du);
  EXPECT_EQ(p.payload_bytes, 1001u);  // the FCS and the pad are not payload
  EXPECT_EQ(p.payload, frame.data() + payload_at);  // points into the caller's buffer
  EXPECT_TRUE(d.layout().has_trailer);
  EXPECT_EQ(d.layout().frame_bytes, frame.size() - 4);

  roce_decoder checking({true});
  EXPECT_EQ(checking.decode(frame.data(), frame.size(), 3, p), decode_verdict::roce) << checking.message();
}

TEST(roce_decoder, ipv6_read_response_first_with_aeth) {
  bytes_builder f;
  f.u16(0x0200).u32(2).u16(0x0200).u32(1).u16(0x86dd);
  const size_t ip_at = f.size();
  // Version 6, traffic class 0xb9 (DSCP 46, ECN 1), flow label 0xabcde.
  f.u32(6u << 28 | 0xb9u << 20 | 0xabcde).u16(0).u8(17).u8(7);
  for (int i = 0; i < 16; ++i) f.u8(i == 0 ? 0xfd : i == 15 ? 7 : 0);
  for (int i = 0; i < 16; ++i) f.u8(i == 0 ? 0xfd : i == 15 ? 8 : 0);
  const size_t udp_at = f.size();
  f.u16(1234).u16(4791).u16(0).u16(0);
  f.u8(0x0d).u8(0x00).u16(0xffff).u8(0x40).u24(0x55).u8(0).u24(42);  // BTH, BECN set
  f.u8(0x1f).u24(0x000777);                                          // AETH: ACK, credit 31; MSN
  f.fill(512, 0xab);
  f.fill(4, 0);  // ICRC (not checked by default)
  f.set16(ip_at + 4, unsigned(f.size() - udp_at));
  f.set16(udp_at + 4, unsigned(f.size() - udp_at));

  roce_decoder d;
  core::packet p;
  ASSERT_EQ(d.decode(f.b.data(), f.size(), 1, p), decode_verdict::roce) << d.message();
  EXPECT_TRUE(p.ip.is_v6);
  EXPECT_EQ(p.ip.dscp, 46);
  EXPECT_EQ(p.ip.ecn, 1);
  EXPECT_EQ(p.ip.flow_label, 0xabcdeu);
  EXPECT_EQ(p.ip.ttl, 7);
  EXPECT_EQ(p.ip.src.octets[0], 0xfd);
  EXPECT_EQ(p.ip.src.octets[15], 7);
  EXPECT_EQ(p.ip.dst.octets[15], 8);
  EXPECT_EQ(p.bth.opcode, bth_opcode::rc_rdma_read_response_first);
  EXPECT_TRUE(p.bth.becn);
  EXPECT_FALSE(p.bth.fecn);
  EXPECT_FALSE(p.bth.mig_req);
  EXPECT_TRUE(p.has_aeth);
  EXPECT_EQ(p.aeth.syndrome, 0x1f);
  EXPECT_EQ(p.aeth.msn, 0x777u);
  EXPECT_EQ(p.payload_bytes, 512u);
  EXPECT_FALSE(d.layout().has_trailer);

  // The ICRC field holds zeros: rejected only when the check is asked for.
  roce_decoder checking({true});
  EXPECT_EQ(checking.decode(f.b.data(), f.size(), 1, p), decode_verdict::malformed);
  EXPECT_NE(std::string(checking.message()).find("frame 1: ICRC 0x00000000 does not match"), std::string::npos)
      << checking.message();
}

TEST(roce_decoder, cnp_ack_and_read_request) {
  roce_decoder d;
  core::packet p;
  {
    v4_frame v(false, 0, 0xc2);
    v.f.u8(0x81).u8(0).u16(0xffff).u8(0x40).u24(0x33).u8(0).u24(0);  // CNP, BECN
    v.f.fill(16, 0);
    auto frame = v.finish();
    ASSERT_EQ(d.decode(frame.data(), frame.size(), 31, p), decode_verdict::roce) << d.message();
    EXPECT_EQ(p.bth.opcode, bth_opcode::cnp);
    EXPECT_TRUE(p.bth.becn);
    EXPECT_EQ(p.payload_bytes, 0u);
    EXPECT_EQ(p.payload, nullptr);
    EXPECT_EQ(p.ip.dscp, 48);
    EXPECT_EQ(frame.size(), 74u);  // 14 + 20 + 8 + 12 + 16 + 4, as the CNP in the sprayed capture
  }
  {
    v4_frame v(false, 0, 0x02);
    v.f.u8(0x11).u8(0).u16(0xffff).u8(0).u24(0x11).u8(0).u24(1015);
    v.f.u8(0x60 | 3).u24(1);  // NAK syndrome: 011 00011
    auto frame = v.finish();
    ASSERT_EQ(d.decode(frame.data(), frame.size(), 33, p), decode_verdict::roce) << d.message();
    EXPECT_EQ(p.bth.opcode, bth_opcode::rc_acknowledge);
    EXPECT_TRUE(p.has_aeth);
    EXPECT_EQ(p.aeth.syndrome, 0x63);
    EXPECT_EQ(p.aeth.msn, 1u);
    EXPECT_EQ(p.payload_bytes, 0u);
  }
  {
    v4_frame v(false, 0, 0x02);
    v.f.u8(0x0c).u8(0).u16(0xffff).u8(0).u24(0x99).u8(0x80).u24(7);
    v.f.u32(0x1).u32(0x2).u32(0x3).u32(1u << 20);
    auto frame = v.finish();
    ASSERT_EQ(d.decode(frame.data(), frame.size(), 2, p), decode_verdict::roce) << d.message();
    EXPECT_EQ(p.bth.opcode, bth_opcode::rc_rdma_read_request);
    EXPECT_TRUE(p.has_reth);
    EXPECT_EQ(p.reth.va, 0x100000002u);
    EXPECT_EQ(p.reth.rkey, 3u);
    EXPECT_EQ(p.reth.dma_length, 1u << 20);
    EXPECT_EQ(p.payload_bytes, 0u);
  }
}

TEST(roce_decoder, skips_frames_that_are_not_roce) {
  roce_decoder d;
  core::packet p;
  bytes_builder arp;
  arp.u16(0xffff).u32(0xffffffff).u16(0x0200).u32(1).u16(0x0806).fill(28, 0);
  EXPECT_EQ(d.decode(arp.b.data(), arp.size(), 4, p), decode_verdict::not_roce);
  EXPECT_NE(std::string(d.message()).find("frame 4: EtherType 0x0806"), std::string::npos) << d.message();
  EXPECT_STREQ(d.reason(), "not_ip");

  v4_frame mdns(false, 0, 0, 5353);
  mdns.f.fill(40, 0);
  auto udp = mdns.finish();
  EXPECT_EQ(d.decode(udp.data(), udp.size(), 7, p), decode_verdict::not_roce);
  EXPECT_NE(std::string(d.message()).find("UDP destination port 5353"), std::string::npos) << d.message();
  EXPECT_STREQ(d.reason(), "udp_port_not_4791");

  v4_frame tcp(false, 0, 0, 4791, 6);
  tcp.f.fill(40, 0);
  auto t = tcp.finish();
  EXPECT_EQ(d.decode(t.data(), t.size(), 8, p), decode_verdict::not_roce);
  EXPECT_STREQ(d.reason(), "not_udp");  // IP protocol 6, TCP

  // A fragment (more-fragments flag set) is not RoCEv2 either, whatever it carries.
  v4_frame frag(false, 0, 0, 4791);
  frag.f.fill(40, 0);
  auto fr = frag.finish();
  fr[14 + 6] = 0x20;
  EXPECT_EQ(d.decode(fr.data(), fr.size(), 9, p), decode_verdict::not_roce);
  EXPECT_STREQ(d.reason(), "ip_fragment");
}

TEST(roce_decoder, malformed_frames_name_the_frame_header_and_field) {
  roce_decoder d;
  core::packet p;
  auto expect_malformed = [&](std::vector<uint8_t> frame, size_t captured, uint64_t number, const std::string& text) {
    EXPECT_EQ(d.decode(frame.data(), captured, number, p), decode_verdict::malformed) << text;
    EXPECT_STREQ(d.reason(), "malformed");
    EXPECT_NE(std::string(d.message()).find(text), std::string::npos) << "got: " << d.message();
  };
  auto write_middle = [](size_t payload) {
    v4_frame v(false, 0, 0x02);
    v.f.u8(0x07).u8(0).u16(0xffff).u8(0).u24(0x11).u8(0).u24(1);
    v.f.fill(payload, 0x5a);
    return v;
  };

  auto good = write_middle(100).finish();
  // IP total length beyond what was captured: the capture length is never trusted over the IP header.
  auto longer = good;
  longer[14 + 2] = 2000 >> 8, longer[14 + 3] = 2000 & 0xff;
  expect_malformed(longer, longer.size(), 12, "frame 12: IPv4 total length 2000 exceeds the 144 bytes captured");
  // Captured short of the headers (snaplen cut): same check.
  expect_malformed(good, 60, 13, "frame 13: IPv4 total length 144 exceeds the 46 bytes captured");
  expect_malformed(good, 10, 14, "frame 14: Ethernet header needs 14 bytes, only 10 captured");
  expect_malformed(good, 30, 15, "frame 15: IPv4 header needs 20 bytes, only 16 captured");

  auto udp_long = good;
  udp_long[34 + 4] = 0x07, udp_long[34 + 5] = 0xd0;  // UDP length 2000
  expect_malformed(udp_long, udp_long.size(), 16, "frame 16: UDP length 2000 exceeds the 124 bytes");

  auto ihl = good;
  ihl[14] = 0x44;
  expect_malformed(ihl, ihl.size(), 17, "frame 17: IPv4 IHL 4 is below the minimum 5");

  auto rd = good;
  rd[42] = 0x44;  // RD SEND only: reliable datagram headers (RDETH, DETH) are not decoded
  expect_malformed(rd, rd.size(), 18, "frame 18: BTH opcode 0x44 is not one this decoder knows");

  auto version = good;
  version[43] = 0x01;
  expect_malformed(version, version.size(), 19, "frame 19: BTH header version 1 is not 0");

  // A WRITE FIRST whose UDP datagram is too short for its RETH.
  auto first = write_middle(0).finish();
  first[42] = 0x06;
  expect_malformed(first, first.size(), 20, "frame 20: BTH opcode 0x06 (RC RDMA_WRITE_FIRST) needs 28 header bytes");

  auto v6_short = good;
  v6_short[12] = 0x86, v6_short[13] = 0xdd;
  v6_short[14] = 0x60;
  v6_short[18] = 2000 >> 8, v6_short[19] = 2000 & 0xff;  // payload length
  expect_malformed(v6_short, v6_short.size(), 21,
                   "frame 21: IPv6 payload length 2000 exceeds the 104 bytes captured after the IPv6 header");
}

TEST(roce_decoder, sample_ipv4_captures_carry_the_icrc_this_library_computes) {
  // scapy wrote these frames with its own ICRC code; agreement on every IPv4 RoCEv2 frame (CNP and VLAN
  // included) checks the masking of annex A17.3.3 against an independent implementation.
  roce_decoder checking({true});
  core::packet p;
  for (const char* name : {"rdma_write_inorder.pcap", "rdma_write_sprayed.pcap", "mixed_vlan_ipv6.pcapng"}) {
    uint64_t n = 0, roce = 0, v4 = 0;
    for (auto& frame : read_frames(samples_dir / name)) {
      ++n;
      const decode_verdict verdict = checking.decode(frame.data(), frame.size(), n, p);
      if (verdict == decode_verdict::roce) {
        ++roce;
        v4 += !p.ip.is_v6;
        continue;
      }
      // The only RoCEv2 frames allowed to fail are the IPv6 ones, whose ICRC the writer left at zero.
      if (verdict == decode_verdict::malformed) {
        EXPECT_NE(std::string(checking.message()).find("ICRC 0x00000000"), std::string::npos)
            << name << ": " << checking.message();
      }
    }
    if (std::string(name) == "mixed_vlan_ipv6.pcapng") {
      EXPECT_EQ(roce, 8u) << name;  // the 8 VLAN IPv4 frames; the 4 IPv6 frames carry no ICRC
    } else {
      EXPECT_EQ(roce, n) << name;
    }
    EXPECT_EQ(v4, roce);
  }
}

TEST(roce_decoder, sample_frames_decode_and_corruption_breaks_the_icrc) {
  auto frames = read_frames(samples_dir / "rdma_write_inorder.pcap");
  ASSERT_EQ(frames.size(), 34u);
  roce_decoder d;
  core::packet p;
  ASSERT_EQ(d.decode(frames[0].data(), frames[0].size(), 1, p), decode_verdict::roce) << d.message();
  // README: 10.0.0.1 -> .2 QP 0x11 from PSN 1000, 64 KiB WRITE at MTU 4096 with RETH on FIRST.
  EXPECT_TRUE(p.ip.src == v4(10, 0, 0, 1));
  EXPECT_TRUE(p.ip.dst == v4(10, 0, 0, 2));
  EXPECT_EQ(p.bth.opcode, bth_opcode::rc_rdma_write_first);
  EXPECT_EQ(p.bth.dest_qp, 0x11u);
  EXPECT_EQ(p.bth.psn, 1000u);
  EXPECT_TRUE(p.has_reth);
  EXPECT_EQ(p.reth.dma_length, 64u * 1024);
  EXPECT_EQ(p.payload_bytes, 4096u);

  frames[0][100] ^= 0x01;  // one payload bit
  roce_decoder checking({true});
  EXPECT_EQ(checking.decode(frames[0].data(), frames[0].size(), 1, p), decode_verdict::malformed);
  EXPECT_NE(std::string(checking.message()).find("frame 1: ICRC"), std::string::npos) << checking.message();
  EXPECT_EQ(d.decode(frames[0].data(), frames[0].size(), 1, p), decode_verdict::roce);  // default: not checked
}

TEST(roce_decoder, decoding_allocates_nothing) {
  v4_frame v(true, 0, 0x02);
  v.f.u8(0x06).u8(0).u16(0xffff).u8(0).u24(0x11).u8(0).u24(1);
  v.f.u32(0).u32(0).u32(0).u32(4096);
  v.f.fill(4096, 1);
  auto good = v.finish();
  auto bad = good;
  bad[18 + 2] = 0xff;  // IP total length
  roce_decoder d({true});
  core::packet p;
  g_allocations = 0;
  g_counting = true;
  for (int i = 0; i < 1000; ++i) {
    d.decode(good.data(), good.size(), uint64_t(i), p);
    d.decode(bad.data(), bad.size(), uint64_t(i), p);
  }
  g_counting = false;
  EXPECT_EQ(g_allocations.load(), 0u);
  EXPECT_EQ(d.decode(good.data(), good.size(), 1, p), decode_verdict::roce) << d.message();
}

}  // namespace
}  // namespace fabricsim::traces
