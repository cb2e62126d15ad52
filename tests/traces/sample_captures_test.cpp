// The sample captures (traces/samples, written by scapy through scripts/make_samples) through the reader and
// the message rebuilding: UD and connection management, atomics, header-only frames, a lying RETH, READs
// with request and response PSNs apart. Expected figures come from traces/samples/README.md (the script's
// construction parameters) and from tshark's decoding of the same files.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <string>

#include "tests/support/sample_traces.h"
#include "traces/capture_messages.h"

namespace fabricsim::traces {
namespace {

namespace fs = std::filesystem;
using test::v4;

std::string sample(const char* name) { return (test::sample_traces_dir() / name).string(); }

const flow_stats& flow(const capture_summary& s, const core::ip_address& src, const core::ip_address& dst,
                       uint32_t qp) {
  static const flow_stats none;
  auto it = s.flows.find(flow_key{src, dst, qp});
  return it == s.flows.end() ? none : it->second;
}

// tshark's count of InfiniBand (RoCEv2) packets in a file; -1 without tshark.
long tshark_roce_packets(const std::string& path) {
  if (!fs::exists("/usr/bin/tshark")) return -1;
  const std::string cmd = "/usr/bin/tshark -r '" + path + "' -Y infiniband 2>/dev/null | wc -l";
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return -1;
  long n = -1;
  if (std::fscanf(p, "%ld", &n) != 1) n = -1;
  pclose(p);
  return n;
}

TEST(sample_captures, every_sample_has_the_roce_packets_of_the_readme_and_of_tshark) {
  struct expected {
    const char* file;
    uint64_t frames, roce;
  };
  // traces/samples/README.md, columns frames and RoCEv2.
  for (const expected& e :
       {expected{"rdma_write_inorder.pcap", 34, 34}, expected{"rdma_write_sprayed.pcap", 66, 66},
        expected{"mixed_vlan_ipv6.pcapng", 14, 12}, expected{"rdma_read.pcap", 24, 24}, expected{"send_imm.pcap", 7, 7},
        expected{"ud_cm.pcap", 7, 7}, expected{"atomics.pcap", 6, 6}, expected{"header_only.pcap", 34, 34},
        expected{"bad_reth_length.pcap", 5, 5}}) {
    SCOPED_TRACE(e.file);
    const capture_trace t = analyze_capture(sample(e.file));
    EXPECT_EQ(t.summary.frames, e.frames);
    EXPECT_EQ(t.summary.roce_packets, e.roce);
    EXPECT_EQ(t.summary.malformed_frames, 0u);
    const long tshark = tshark_roce_packets(sample(e.file));
    if (tshark >= 0) EXPECT_EQ(long(t.summary.roce_packets), tshark);
  }
}

TEST(sample_captures, ud_cm_exchange_is_connection_management_not_malformed) {
  const capture_trace t = analyze_capture(sample("ud_cm.pcap"));
  // README: REQ, REP, RTU on QP1 (UD SEND ONLY + DETH), one UD datagram to QP 0x100, an 8 KiB WRITE, an ACK.
  EXPECT_EQ(t.summary.malformed_frames, 0u);
  EXPECT_EQ(t.connection_management.packets, 3u);
  EXPECT_EQ(t.connection_management.by_message.at("REQ"), 1u);
  EXPECT_EQ(t.connection_management.by_message.at("REP"), 1u);
  EXPECT_EQ(t.connection_management.by_message.at("RTU"), 1u);
  ASSERT_EQ(t.messages.size(), 2u);  // the CM MADs are not messages
  EXPECT_EQ(t.messages[0].op, message_op::ud_send);
  EXPECT_EQ(t.messages[0].flow.dest_qp, 0x100u);
  EXPECT_EQ(t.messages[0].length, 64u);
  EXPECT_TRUE(t.messages[0].immediate);
  EXPECT_EQ(t.messages[1].op, message_op::write);
  EXPECT_EQ(t.messages[1].length, 8192u);
  EXPECT_EQ(t.messages[1].path_mtu_bytes, 4096u);

  // The DETH as written: Q_Key 0x80010000, source QP 1 for the CM; 0x1234 / 0x101 for the datagram.
  pcap_reader reader(sample("ud_cm.pcap"));
  roce_decoder d;
  capture_frame f;
  core::packet p;
  ASSERT_TRUE(reader.next(f));
  ASSERT_EQ(d.decode(f.data, f.captured_bytes, f.number, p, f.original_bytes), decode_verdict::roce) << d.message();
  EXPECT_TRUE(d.layout().has_deth);
  EXPECT_EQ(d.layout().deth_qkey, 0x80010000u);
  EXPECT_EQ(d.layout().deth_src_qp, 1u);
  EXPECT_EQ(p.payload_bytes, 256u);  // the MAD
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(reader.next(f));
  ASSERT_EQ(d.decode(f.data, f.captured_bytes, f.number, p, f.original_bytes), decode_verdict::roce) << d.message();
  EXPECT_EQ(d.layout().deth_qkey, 0x1234u);
  EXPECT_EQ(d.layout().deth_src_qp, 0x101u);
  EXPECT_EQ(p.immediate, 9u);
  EXPECT_EQ(p.payload_bytes, 64u);
}

TEST(sample_captures, atomics_are_decoded_and_counted_as_their_own_operations) {
  const capture_trace t = analyze_capture(sample("atomics.pcap"));
  // README: COMPARE_SWAP (swap 7, compare 0), FETCH_ADD (add 1), an ATOMIC ACKNOWLEDGE each (original 0, 7),
  // a 2048-byte WRITE ONLY and its ACK.
  EXPECT_EQ(t.summary.malformed_frames, 0u);
  EXPECT_EQ(t.atomic_acks, 2u);
  ASSERT_EQ(t.messages.size(), 3u);
  EXPECT_EQ(t.messages[0].op, message_op::cmp_swap);
  EXPECT_EQ(t.messages[0].first_psn, 400u);
  EXPECT_EQ(t.messages[1].op, message_op::fetch_add);
  EXPECT_EQ(t.messages[2].op, message_op::write);
  EXPECT_EQ(t.messages[2].length, 2048u);
  pcap_reader reader(sample("atomics.pcap"));
  roce_decoder d;
  capture_frame f;
  core::packet p;
  uint64_t swap = 0, original = 0;
  while (reader.next(f)) {
    ASSERT_EQ(d.decode(f.data, f.captured_bytes, f.number, p, f.original_bytes), decode_verdict::roce);
    if (d.layout().has_atomic_eth) {
      EXPECT_EQ(d.layout().atomic_rkey, 0xaau);
      swap += d.layout().atomic_swap_add;
    }
    if (d.layout().has_atomic_ack_eth) original += d.layout().atomic_original;
  }
  EXPECT_EQ(swap, 7u + 1u);
  EXPECT_EQ(original, 0u + 7u);
}

TEST(sample_captures, header_only_frames_keep_their_messages_with_lengths_from_the_headers) {
  const capture_trace t = analyze_capture(sample("header_only.pcap"));
  // README: the in-order capture at a 128-byte snapshot length: 32 WRITE frames cut, 2 ACKs whole.
  EXPECT_EQ(t.summary.header_only_frames, 32u);
  EXPECT_EQ(t.summary.malformed_frames, 0u);
  ASSERT_EQ(t.messages.size(), 2u);
  for (const captured_message& m : t.messages) {
    EXPECT_EQ(m.length, 65536u);
    EXPECT_EQ(m.packets, 16u);
    EXPECT_TRUE(m.note.empty()) << m.note;
    EXPECT_TRUE(m.length_error.empty()) << m.length_error;
  }
  EXPECT_EQ(flow(t.summary, v4(10, 0, 0, 1), v4(10, 0, 0, 2), 0x11).payload_bytes, 65536u);
  EXPECT_EQ(t.path_mtu_bytes, 4096u);
}

TEST(sample_captures, a_reth_length_the_capture_contradicts_names_its_frame) {
  const capture_trace t = analyze_capture(sample("bad_reth_length.pcap"));
  ASSERT_EQ(t.messages.size(), 1u);
  EXPECT_EQ(t.messages[0].length, 0xffffffffu);
  EXPECT_NE(t.messages[0].length_error.find("frame 1: RC RDMA_WRITE_FIRST RETH DMA length 4294967295 exceeds the RC "
                                            "message limit of 2^31 bytes"),
            std::string::npos)
      << t.messages[0].length_error;
}

TEST(sample_captures, read_capture_keeps_request_and_response_psns_apart) {
  const capture_trace t = analyze_capture(sample("rdma_read.pcap"));
  // README: .1 -> .2 (QP 0x77) carries READ requests PSN 300 and 316 and the ACK of PSN 7003; .2 -> .1 (QP
  // 0x66) carries READ responses PSN 300..316 and the WRITE PSN 7000..7003.
  const flow_stats& up = flow(t.summary, v4(10, 0, 0, 1), v4(10, 0, 0, 2), 0x77);
  const flow_stats& down = flow(t.summary, v4(10, 0, 0, 2), v4(10, 0, 0, 1), 0x66);
  struct expected {
    const psn_stats& got;
    uint64_t packets;
    uint32_t first, last;
  };
  for (const expected& e : {expected{up.requests, 2, 300, 316}, expected{up.responses, 1, 7003, 7003},
                            expected{down.requests, 4, 7000, 7003}, expected{down.responses, 17, 300, 316}}) {
    SCOPED_TRACE(e.first);
    EXPECT_EQ(e.got.packets, e.packets);
    EXPECT_EQ(e.got.first, e.first);
    EXPECT_EQ(e.got.last, e.last);
    EXPECT_EQ(e.got.out_of_order, 0u);
    EXPECT_EQ(e.got.duplicates, 0u);  // the old single count saw PSN 7003 twice in .1 -> .2
  }
  EXPECT_EQ(t.path_mtu_by_flow.at(flow_key{v4(10, 0, 0, 2), v4(10, 0, 0, 1), 0x66}), 1024u);
  ASSERT_EQ(t.messages.size(), 3u);
  EXPECT_EQ(t.messages[0].op, message_op::read);
  EXPECT_EQ(t.messages[0].length, 16384u);
}

}  // namespace
}  // namespace fabricsim::traces
