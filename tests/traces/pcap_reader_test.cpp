// Tests of the capture reader and the per-flow summary against the sample captures (traces/samples, written by scapy)
// (expected figures from traces/samples/README.md) and against broken files made here.
#include "traces/pcap_reader.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <vector>

#include "tests/support/sample_traces.h"

namespace fabricsim::traces {
namespace pcap_reader_test {

namespace fs = std::filesystem;
using core::bth_opcode;

const fs::path& samples_dir = test::sample_traces_dir();
using test::v4;



// A scratch file per test and process, so parallel ctest runs never share one.
fs::path scratch(const std::string& name) {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  return fs::temp_directory_path() /
         ("fabricsim_" + std::string(info->name()) + "_" + std::to_string(::getpid()) + "_" + name);
}

std::vector<char> slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::vector<char>(std::istreambuf_iterator<char>(in), {});
}
void spill(const fs::path& p, const char* data, size_t n) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out.write(data, std::streamsize(n));
}

// Classic pcap written byte by byte here (microsecond magic, little-endian), independent of pcap_writer.
struct pcap_bytes {
  std::vector<char> b;
  void le32(uint32_t v) {
    for (int i = 0; i < 4; ++i) b.push_back(char(v >> (8 * i)));
  }
  explicit pcap_bytes(uint32_t link_type) {
    le32(0xa1b2c3d4);
    le32(2 | 4u << 16);  // version 2.4
    le32(0);
    le32(0);
    le32(65535);
    le32(link_type);
  }
  void record(const std::vector<uint8_t>& frame, size_t captured, uint32_t usec) {
    le32(1700000000);
    le32(usec);
    le32(uint32_t(captured));
    le32(uint32_t(frame.size()));
    b.insert(b.end(), frame.begin(), frame.begin() + long(captured));
  }
};

const flow_stats& flow(const capture_summary& s, core::ip_address src, core::ip_address dst, uint32_t qp) {
  static const flow_stats none;
  auto it = s.flows.find(flow_key{src, dst, qp});
  return it == s.flows.end() ? none : it->second;
}

uint64_t opcode_count(const flow_stats& f, bth_opcode op) {
  auto it = f.packets_by_opcode.find(uint8_t(op));
  return it == f.packets_by_opcode.end() ? 0 : it->second;
}

TEST(pcap_reader, inorder_capture_two_queue_pairs) {
  const capture_summary s = summarize_capture((samples_dir / "rdma_write_inorder.pcap").string());
  EXPECT_EQ(s.frames, 34u);
  EXPECT_EQ(s.roce_packets, 34u);
  EXPECT_EQ(s.skipped_frames, 0u);
  EXPECT_EQ(s.malformed_frames, 0u);
  EXPECT_TRUE(s.warning.empty()) << s.warning;
  EXPECT_EQ(s.flows.size(), 4u);  // two WRITE directions, two ACK directions

  struct expected_qp { core::ip_address src, dst; uint32_t qp, first_psn; };
  for (const expected_qp& e : {expected_qp{v4(10, 0, 0, 1), v4(10, 0, 0, 2), 0x11, 1000},
                               expected_qp{v4(10, 0, 0, 3), v4(10, 0, 0, 4), 0x22, 5000}}) {
    SCOPED_TRACE(e.qp);
    // 64 KiB at MTU 4096: FIRST (with RETH), 14 MIDDLE, LAST; 16 PSNs.
    const flow_stats& f = flow(s, e.src, e.dst, e.qp);
    EXPECT_EQ(f.packets, 16u);
    EXPECT_EQ(f.payload_bytes, 64u * 1024);
    EXPECT_EQ(opcode_count(f, bth_opcode::rc_rdma_write_first), 1u);
    EXPECT_EQ(opcode_count(f, bth_opcode::rc_rdma_write_middle), 14u);
    EXPECT_EQ(opcode_count(f, bth_opcode::rc_rdma_write_last), 1u);
    EXPECT_EQ(f.requests.first, e.first_psn);
    EXPECT_EQ(f.requests.last, e.first_psn + 15);
    EXPECT_EQ(f.requests.out_of_order, 0u);
    EXPECT_EQ(f.requests.duplicates, 0u);
    EXPECT_EQ(f.ecn_ce_packets, 0u);
    // One ACK back per QP.
    const flow_stats& ack = flow(s, e.dst, e.src, e.qp);
    EXPECT_EQ(ack.packets, 1u);
    EXPECT_EQ(opcode_count(ack, bth_opcode::rc_acknowledge), 1u);
    EXPECT_EQ(ack.payload_bytes, 0u);
  }
}

TEST(pcap_reader, sprayed_capture_reordered_with_ecn_and_cnp) {
  const capture_summary s = summarize_capture((samples_dir / "rdma_write_sprayed.pcap").string());
  EXPECT_EQ(s.frames, 66u);
  EXPECT_EQ(s.roce_packets, 66u);
  EXPECT_EQ(s.skipped_frames, 0u);
  EXPECT_EQ(s.malformed_frames, 0u);

  // 256 KiB at MTU 4096 = 64 packets, PSN 200..263, each PSN once, shuffled within blocks of 8.
  const flow_stats& f = flow(s, v4(10, 0, 0, 1), v4(10, 0, 0, 2), 0x33);
  EXPECT_EQ(f.packets, 64u);
  EXPECT_EQ(f.payload_bytes, 256u * 1024);
  EXPECT_EQ(opcode_count(f, bth_opcode::rc_rdma_write_first), 1u);
  EXPECT_EQ(opcode_count(f, bth_opcode::rc_rdma_write_middle), 62u);
  EXPECT_EQ(opcode_count(f, bth_opcode::rc_rdma_write_last), 1u);
  EXPECT_EQ(f.requests.first, 200u);
  EXPECT_EQ(f.requests.last, 263u);
  EXPECT_EQ(f.requests.duplicates, 0u);
  EXPECT_GT(f.requests.out_of_order, 0u);   // shuffled
  EXPECT_LT(f.requests.out_of_order, 64u);  // at most 7 late per block of 8
  EXPECT_LE(f.requests.out_of_order, 8u * 7);
  EXPECT_EQ(f.ecn_ce_packets, 2u);

  // Back to the sender: one CNP and the final ACK.
  const flow_stats& back = flow(s, v4(10, 0, 0, 2), v4(10, 0, 0, 1), 0x33);
  EXPECT_EQ(back.packets, 2u);
  EXPECT_EQ(opcode_count(back, bth_opcode::cnp), 1u);
  EXPECT_EQ(opcode_count(back, bth_opcode::rc_acknowledge), 1u);
  EXPECT_EQ(back.requests.packets, 0u);  // the CNP's PSN means nothing; the ACK's is a response PSN
  EXPECT_EQ(back.responses.packets, 1u);
  EXPECT_EQ(back.responses.first, 263u);  // the ACK of the last PSN
  EXPECT_EQ(s.flows.size(), 2u);

  // Frame by frame: the RETH announces 256 KiB, every data packet fits the 4096-byte MTU.
  pcap_reader reader((samples_dir / "rdma_write_sprayed.pcap").string());
  roce_decoder decoder;
  capture_frame frame;
  core::packet p;
  uint64_t last_number = 0, full_mtu = 0;
  while (reader.next(frame)) {
    EXPECT_EQ(frame.number, last_number + 1);
    last_number = frame.number;
    EXPECT_EQ(frame.captured_bytes, frame.original_bytes);
    ASSERT_EQ(decoder.decode(frame.data, frame.captured_bytes, frame.number, p), decode_verdict::roce);
    if (p.bth.opcode == bth_opcode::rc_rdma_write_first) {
      EXPECT_EQ(p.reth.dma_length, 256u * 1024);
    }
    EXPECT_LE(p.payload_bytes, 4096u);
    full_mtu += p.payload_bytes == 4096;
  }
  EXPECT_EQ(full_mtu, 64u);
  EXPECT_EQ(last_number, 66u);
}

TEST(pcap_reader, pcapng_with_vlan_ipv6_arp_and_plain_udp) {
  const std::string path = (samples_dir / "mixed_vlan_ipv6.pcapng").string();
  const capture_summary s = summarize_capture(path);
  EXPECT_EQ(s.frames, 14u);
  EXPECT_EQ(s.roce_packets, 12u);
  EXPECT_EQ(s.skipped_frames, 2u);  // one ARP, one plain UDP
  EXPECT_EQ(s.malformed_frames, 0u);
  ASSERT_EQ(s.flows.size(), 2u);
  for (const auto& [key, f] : s.flows) {
    if (key.src.octets[10] == 0xff) {  // IPv4 (the VLAN one): 8 KiB at MTU 1024
      EXPECT_EQ(f.packets, 8u);
      EXPECT_EQ(f.payload_bytes, 8u * 1024);
      EXPECT_EQ(f.requests.last - f.requests.first, 7u);
    } else {  // IPv6: 4 KiB at MTU 1024
      EXPECT_EQ(f.packets, 4u);
      EXPECT_EQ(f.payload_bytes, 4u * 1024);
      EXPECT_EQ(f.requests.last - f.requests.first, 3u);
    }
    EXPECT_EQ(opcode_count(f, bth_opcode::rc_rdma_write_first), 1u);
    EXPECT_EQ(opcode_count(f, bth_opcode::rc_rdma_write_last), 1u);
  }

  pcap_reader reader(path);
  roce_decoder decoder;
  capture_frame frame;
  core::packet p;
  uint64_t vlan100 = 0, v6 = 0, previous_ns = 0;
  while (reader.next(frame)) {
    EXPECT_GE(frame.timestamp_ns, previous_ns);
    EXPECT_GT(frame.timestamp_ns, 1000000000000000000u);  // nanoseconds since 1970, not microseconds
    previous_ns = frame.timestamp_ns;
    if (decoder.decode(frame.data, frame.captured_bytes, frame.number, p) != decode_verdict::roce) continue;
    EXPECT_EQ(p.payload_bytes, 1024u);
    if (p.eth.has_vlan && p.eth.vlan_id == 100 && !p.ip.is_v6) ++vlan100;
    if (p.ip.is_v6 && !p.eth.has_vlan) ++v6;
  }
  EXPECT_EQ(vlan100, 8u);
  EXPECT_EQ(v6, 4u);
}

TEST(pcap_reader, file_cut_inside_a_frame_yields_the_whole_frames_and_a_warning) {
  for (const char* name : {"rdma_write_inorder.pcap", "mixed_vlan_ipv6.pcapng"}) {
    SCOPED_TRACE(name);
    const auto bytes = slurp(samples_dir / name);
    // Cut the file at growing sizes until a cut falls inside frame 5: 4 whole frames and a warning.
    uint64_t four_frames_bytes = 0;
    const fs::path cut = scratch(std::string("cut_") + name);
    for (uint64_t size = 24; size < bytes.size(); size += 97) {
      spill(cut, bytes.data(), size);
      uint64_t n = 0;
      std::string warning;
      try {
        pcap_reader reader(cut.string());
        capture_frame frame;
        while (reader.next(frame)) ++n;
        warning = reader.warning();
      } catch (const capture_error&) {
        continue;  // cut inside the file header (pcapng: its first blocks): not a capture at all
      }
      if (n == 4 && !warning.empty()) {
        four_frames_bytes = size;
        EXPECT_NE(warning.find(cut.string() + ": frame 5 is cut short"), std::string::npos) << warning;
        break;
      }
    }
    ASSERT_NE(four_frames_bytes, 0u) << "no cut gave 4 whole frames and a warning";
    const capture_summary s = summarize_capture(cut.string());
    EXPECT_EQ(s.frames, 4u);
    EXPECT_NE(s.warning.find("frame 5"), std::string::npos) << s.warning;
    fs::remove(cut);
  }
}

TEST(pcap_reader, not_a_capture_and_missing_file_name_the_file) {
  const fs::path text = scratch("notes.pcap");
  spill(text, "this is not a capture, just some text\n", 38);
  try {
    pcap_reader reader(text.string());
    FAIL() << "expected capture_error";
  } catch (const capture_error& e) {
    EXPECT_NE(std::string(e.what()).find(text.string() + ": cannot read as a pcap or pcapng capture"),
              std::string::npos)
        << e.what();
  }
  fs::remove(text);
  const std::string missing = "/nonexistent/dir/none.pcap";
  try {
    summarize_capture(missing);
    FAIL() << "expected capture_error";
  } catch (const core::config_error& e) {  // capture errors are configuration errors
    EXPECT_EQ(std::string(e.what()).rfind(missing + ":", 0), 0u) << e.what();
  }
}

TEST(pcap_reader, unsupported_link_type_names_file_and_type) {
  const fs::path wifi = scratch("wifi.pcap");
  pcap_bytes pcap(105);  // DLT_IEEE802_11
  pcap.record(std::vector<uint8_t>(40, 0), 40, 0);
  spill(wifi, pcap.b.data(), pcap.b.size());
  try {
    pcap_reader reader(wifi.string());
    FAIL() << "expected capture_error";
  } catch (const capture_error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find(wifi.string()), std::string::npos) << what;
    EXPECT_NE(what.find("link type 105"), std::string::npos) << what;
    EXPECT_NE(what.find("only Ethernet"), std::string::npos) << what;
  }
  fs::remove(wifi);
}

TEST(pcap_reader, oversized_record_length_is_a_corrupt_file_naming_the_frame) {
  // Frame 1 is whole; frame 2's record header claims 4294967280 captured bytes, far beyond the file's
  // 65535-byte snapshot length: a damaged file, refused, not read as a 1-frame capture.
  const fs::path bad = scratch("huge_caplen.pcap");
  pcap_bytes pcap(1);
  pcap.record(std::vector<uint8_t>(60, 0), 60, 0);
  pcap.le32(1700000000);
  pcap.le32(1);
  pcap.le32(0xfffffff0u);
  pcap.le32(0xfffffff0u);
  pcap.b.resize(pcap.b.size() + 64, 0);
  spill(bad, pcap.b.data(), pcap.b.size());
  pcap_reader reader(bad.string());
  capture_frame frame;
  ASSERT_TRUE(reader.next(frame));
  try {
    reader.next(frame);
    FAIL() << "expected capture_error";
  } catch (const capture_error& e) {
    const std::string what = e.what();
    EXPECT_EQ(what.rfind(bad.string() + ": frame 2: corrupt record header", 0), 0u) << what;
    EXPECT_NE(what.find("4294967280"), std::string::npos) << what;  // libpcap names the length
    EXPECT_NE(what.find("expected a capture length within the snapshot length"), std::string::npos) << what;
  }
  fs::remove(bad);
}

TEST(pcap_reader, frame_shorter_than_its_headers_claim_is_malformed_and_counted) {
  // Frame 1: a RoCEv2 WRITE MIDDLE; frame 2: the same with IP total length 2000; frame 3: frame 1 cut by
  // the snaplen (captured 60 of its bytes: every header, so it decodes header-only); frame 4: frame 1 again;
  // frame 5: frame 1 cut inside its BTH (50 bytes).
  std::vector<uint8_t> f = {0x02, 0, 0, 0, 0, 2, 0x02, 0, 0, 0, 0, 1, 0x08, 0x00,
                            0x45, 0x02, 0, 0, 0, 1, 0x40, 0, 64, 17, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2,
                            0xc0, 0x00, 0x12, 0xb7, 0, 0, 0, 0,
                            0x07, 0, 0xff, 0xff, 0, 0, 0, 0x11, 0, 0, 0x03, 0xe9};
  f.insert(f.end(), 256, 0x42);  // payload
  f.insert(f.end(), 4, 0);       // ICRC
  const size_t ip_total = f.size() - 14, udp_length = ip_total - 20;
  f[16] = uint8_t(ip_total >> 8), f[17] = uint8_t(ip_total);
  f[38] = uint8_t(udp_length >> 8), f[39] = uint8_t(udp_length);
  auto lying = f;
  lying[16] = 2000 >> 8, lying[17] = 2000 & 0xff;

  pcap_bytes pcap(1);
  pcap.record(f, f.size(), 1);
  pcap.record(lying, lying.size(), 2);
  pcap.record(f, 60, 3);
  pcap.record(f, f.size(), 4);
  pcap.record(f, 50, 5);
  const fs::path file = scratch("lying.pcap");
  spill(file, pcap.b.data(), pcap.b.size());

  const capture_summary s = summarize_capture(file.string());
  EXPECT_EQ(s.frames, 5u);
  EXPECT_EQ(s.roce_packets, 3u);
  EXPECT_EQ(s.header_only_frames, 1u);
  EXPECT_EQ(s.malformed_frames, 2u);
  ASSERT_EQ(s.malformed_messages.size(), 2u);
  EXPECT_NE(s.malformed_messages[0].find("frame 2: IPv4 total length 2000 exceeds the 300 bytes captured"),
            std::string::npos)
      << s.malformed_messages[0];
  EXPECT_NE(s.malformed_messages[1].find("frame 5: the snapshot length cut the BTH: 50 of the frame's 314 bytes"),
            std::string::npos)
      << s.malformed_messages[1];
  EXPECT_EQ(s.malformed_messages[0].rfind(file.string(), 0), 0u);
  const flow_stats& fl = flow(s, v4(10, 0, 0, 1), v4(10, 0, 0, 2), 0x11);
  EXPECT_EQ(fl.packets, 3u);
  EXPECT_EQ(fl.requests.duplicates, 2u);  // the same PSN 1001 three times
  EXPECT_EQ(fl.payload_bytes, 3u * 256);  // the header-only frame's 256 from its UDP length

  // Microsecond files come back in nanoseconds.
  pcap_reader reader(file.string());
  capture_frame frame;
  ASSERT_TRUE(reader.next(frame));
  EXPECT_EQ(frame.timestamp_ns, 1700000000u * 1000000000ull + 1000u);
  fs::remove(file);
}

TEST(pcap_reader, psn_order_handles_the_24_bit_wrap) {
  std::map<flow_key, flow_stats> flows;
  core::packet p;
  p.ip.src = v4(10, 0, 0, 1);
  p.ip.dst = v4(10, 0, 0, 2);
  p.bth.dest_qp = 7;
  p.payload_bytes = 10;
  // 0xfffffe, 0xffffff, 1, 0 (late), 2, 1 (duplicate), 0xfffffd (late, becomes the first).
  for (uint32_t psn : {0xfffffeu, 0xffffffu, 1u, 0u, 2u, 1u, 0xfffffdu}) {
    p.bth.psn = psn;
    add_to_flows(flows, p);
  }
  p.bth.opcode = bth_opcode::cnp;  // its PSN (0) must not count
  p.bth.psn = 0;
  add_to_flows(flows, p);
  const flow_stats& f = flows.begin()->second;
  EXPECT_EQ(f.packets, 8u);
  EXPECT_EQ(f.requests.packets, 7u);
  EXPECT_EQ(f.requests.first, 0xfffffdu);
  EXPECT_EQ(f.requests.last, 2u);
  EXPECT_EQ(f.requests.out_of_order, 2u);
  EXPECT_EQ(f.requests.duplicates, 1u);
  EXPECT_EQ(f.payload_bytes, 80u);
}

}  // namespace pcap_reader_test
}  // namespace fabricsim::traces
