// Tests of the message rebuilding of a capture: the sample scapy captures (traces/samples) (expected figures from
// traces/samples/README.md) and small captures written here with the cases the samples lack (a missing
// FIRST, a missing MIDDLE, the PSN wrap, retransmissions, SEND and READ).
#include "traces/capture_messages.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "tests/support/sample_traces.h"
#include "traces/pcap_writer.h"

namespace fabricsim::traces {
namespace capture_messages_test {

namespace fs = std::filesystem;
using core::bth_opcode;
using test::v4;

fs::path scratch(const std::string& name) {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  return fs::temp_directory_path() /
         ("fabricsim_" + std::string(info->name()) + "_" + std::to_string(::getpid()) + "_" + name);
}

// Writes request packets of one QP (10.0.0.1 -> 10.0.0.2, QP 0x21) one per microsecond, in the order given.
struct capture_builder {
  fs::path path;
  pcap_writer w;
  uint64_t t_ns = 1000000000;
  explicit capture_builder(const fs::path& p) : path(p), w(p.string()) {}
  void add(bth_opcode op, uint32_t psn, uint32_t payload, uint32_t reth_length = 0, uint32_t qp = 0x21) {
    core::packet p;
    p.id = w.frames_written() + 1;
    p.ip.src = v4(10, 0, 0, 1);
    p.ip.dst = v4(10, 0, 0, 2);
    p.bth.opcode = op;
    p.bth.psn = psn;
    p.bth.dest_qp = qp;
    p.payload_bytes = payload;
    if (reth_length || op == bth_opcode::rc_rdma_write_first || op == bth_opcode::rc_rdma_write_only ||
        op == bth_opcode::rc_rdma_read_request) {
      p.has_reth = true;
      p.reth = {0x1000, 0x42, reth_length};
    }
    w.write(p, t_ns);
    t_ns += 1000;
  }
};

TEST(capture_messages, sample_inorder_capture_two_writes_of_64_kib) {
  const capture_trace t = analyze_capture((test::sample_traces_dir() / "rdma_write_inorder.pcap").string());
  // README: two QPs, each one 64 KiB WRITE at MTU 4096 (16 packets), PSN 1000..1015 and 5000..5015.
  ASSERT_EQ(t.messages.size(), 2u);
  EXPECT_EQ(t.path_mtu_bytes, 4096u);
  const captured_message* a = nullptr;
  const captured_message* b = nullptr;
  for (const captured_message& m : t.messages) (m.flow.dest_qp == 0x11 ? a : b) = &m;
  ASSERT_TRUE(a && b);
  EXPECT_EQ(a->flow.src, v4(10, 0, 0, 1));
  EXPECT_EQ(a->flow.dst, v4(10, 0, 0, 2));
  EXPECT_EQ(b->flow.dest_qp, 0x22u);
  EXPECT_EQ(b->flow.src, v4(10, 0, 0, 3));
  for (const captured_message* m : {a, b}) {
    EXPECT_EQ(m->op, message_op::write);
    EXPECT_EQ(m->length, 65536u);
    EXPECT_EQ(m->packets, 65536u / 4096u);
    EXPECT_TRUE(m->unreplayable.empty()) << m->unreplayable;
    EXPECT_TRUE(m->note.empty()) << m->note;
  }
  EXPECT_EQ(a->first_psn, 1000u);
  EXPECT_EQ(b->first_psn, 5000u);
  // Interleaved: QP 0x11's FIRST is the first frame of the file; QP 0x22's comes right after it.
  EXPECT_EQ(a->first_frame, 1u);
  EXPECT_EQ(b->first_frame, 2u);
  EXPECT_EQ(t.summary.first_frame_ns, a->first_seen_ns);
}

TEST(capture_messages, sample_sprayed_capture_is_one_message_despite_the_shuffle) {
  const capture_trace t = analyze_capture((test::sample_traces_dir() / "rdma_write_sprayed.pcap").string());
  // README: one 256 KiB WRITE, PSN 200..263 at MTU 4096, shuffled in blocks of 8; CNP and ACK go back.
  ASSERT_EQ(t.messages.size(), 1u);
  const captured_message& m = t.messages[0];
  EXPECT_EQ(m.length, 256u * 1024u);
  EXPECT_EQ(m.packets, 64u);
  EXPECT_EQ(m.first_psn, 200u);
  EXPECT_EQ(m.flow.dest_qp, 0x33u);
  EXPECT_TRUE(m.unreplayable.empty()) << m.unreplayable;
  EXPECT_TRUE(m.note.empty()) << m.note;
  // Its earliest packet is frame 1 whichever PSN that is: the shuffle stays within the first block of 8.
  EXPECT_EQ(m.first_frame, 1u);
  EXPECT_EQ(t.path_mtu_bytes, 4096u);
}

TEST(capture_messages, sample_mixed_capture_counts_skipped_frames_by_reason) {
  const capture_trace t = analyze_capture((test::sample_traces_dir() / "mixed_vlan_ipv6.pcapng").string());
  // README: 14 frames, 12 RoCEv2: an 8 KiB WRITE (VLAN, IPv4, MTU 1024) and a 4 KiB WRITE (IPv6), one ARP
  // and one plain UDP frame.
  EXPECT_EQ(t.summary.frames, 14u);
  EXPECT_EQ(t.summary.roce_packets, 12u);
  EXPECT_EQ(t.summary.skipped_by_reason.at("not_ip"), 1u);             // ARP, EtherType 0x0806
  EXPECT_EQ(t.summary.skipped_by_reason.at("udp_port_not_4791"), 1u);  // the plain UDP frame
  EXPECT_EQ(t.summary.skipped_by_reason.size(), 2u);
  EXPECT_EQ(t.path_mtu_bytes, 1024u);
  ASSERT_EQ(t.messages.size(), 2u);
  uint64_t v4_bytes = 0, v6_bytes = 0, v4_packets = 0, v6_packets = 0;
  for (const captured_message& m : t.messages) {
    EXPECT_EQ(m.op, message_op::write);
    EXPECT_TRUE(m.unreplayable.empty());
    (m.flow.src.is_v4_mapped() ? v4_bytes : v6_bytes) += m.length;
    (m.flow.src.is_v4_mapped() ? v4_packets : v6_packets) += m.packets;
  }
  EXPECT_EQ(v4_bytes, 8192u);
  EXPECT_EQ(v4_packets, 8192u / 1024u);
  EXPECT_EQ(v6_bytes, 4096u);
  EXPECT_EQ(v6_packets, 4096u / 1024u);
}

TEST(capture_messages, missing_first_is_unreplayable_missing_middle_is_noted) {
  const fs::path file = scratch("gaps.pcap");
  {
    capture_builder c(file);
    // Message A (PSN 10..13, 3 x 1024 + 100 bytes): its FIRST was not captured.
    c.add(bth_opcode::rc_rdma_write_middle, 11, 1024);
    c.add(bth_opcode::rc_rdma_write_middle, 12, 1024);
    c.add(bth_opcode::rc_rdma_write_last, 13, 100);
    // Message B (PSN 14..17, RETH 3172 bytes): MIDDLE 15 was not captured.
    c.add(bth_opcode::rc_rdma_write_first, 14, 1024, 3172);
    c.add(bth_opcode::rc_rdma_write_middle, 16, 1024);
    c.add(bth_opcode::rc_rdma_write_last, 17, 100);
    // Message C (PSN 18..19): its LAST was not captured.
    c.add(bth_opcode::rc_rdma_write_first, 18, 1024, 2000);
    c.w.close();
  }
  const capture_trace t = analyze_capture(file.string());
  ASSERT_EQ(t.messages.size(), 3u);
  const captured_message &a = t.messages[0], &b = t.messages[1], &cm = t.messages[2];
  EXPECT_EQ(a.first_psn, 11u);
  EXPECT_EQ(a.packets, 3u);
  EXPECT_NE(a.unreplayable.find("FIRST packet (before PSN 11) is not in the capture"), std::string::npos)
      << a.unreplayable;
  EXPECT_TRUE(b.unreplayable.empty()) << b.unreplayable;
  EXPECT_EQ(b.length, 3172u);
  EXPECT_EQ(b.packets, 3u);
  EXPECT_EQ(b.note, "1 of its packets are not in the capture");
  EXPECT_TRUE(cm.unreplayable.empty());
  EXPECT_EQ(cm.length, 2000u);
  EXPECT_EQ(cm.note, "its LAST packet is not in the capture");
  EXPECT_EQ(t.path_mtu_bytes, 1024u);
  fs::remove(file);
}

TEST(capture_messages, psn_wrap_reordering_and_retransmission) {
  const fs::path file = scratch("wrap.pcap");
  {
    capture_builder c(file);
    // One WRITE of 4 packets over the 2^24 wrap: PSN 0xfffffe, 0xffffff, 0, 1, captured as 0, 0xffffff,
    // 0xfffffe (FIRST), 1 (LAST), then 0 again (a retransmission).
    c.add(bth_opcode::rc_rdma_write_middle, 0, 512);
    c.add(bth_opcode::rc_rdma_write_middle, 0xffffff, 512);
    c.add(bth_opcode::rc_rdma_write_first, 0xfffffe, 512, 1600);
    c.add(bth_opcode::rc_rdma_write_last, 1, 64);
    c.add(bth_opcode::rc_rdma_write_middle, 0, 512);
    // The next WRITE ONLY, PSN 2.
    c.add(bth_opcode::rc_rdma_write_only, 2, 300, 300);
    c.w.close();
  }
  const capture_trace t = analyze_capture(file.string());
  ASSERT_EQ(t.messages.size(), 2u);
  const captured_message& m = t.messages[0];
  EXPECT_EQ(m.first_psn, 0xfffffeu);
  EXPECT_EQ(m.length, 1600u);
  EXPECT_EQ(m.packets, 4u);
  EXPECT_TRUE(m.unreplayable.empty()) << m.unreplayable;
  EXPECT_TRUE(m.note.empty()) << m.note;
  EXPECT_EQ(m.first_frame, 1u);  // its earliest packet is the MIDDLE captured first
  EXPECT_EQ(t.messages[1].first_psn, 2u);
  EXPECT_EQ(t.messages[1].length, 300u);
  EXPECT_EQ(t.messages[1].first_frame, 6u);
  fs::remove(file);
}

TEST(capture_messages, send_length_is_its_payload_and_read_length_its_reth) {
  const fs::path file = scratch("ops.pcap");
  {
    capture_builder c(file);
    c.add(bth_opcode::rc_send_first, 100, 1024);
    c.add(bth_opcode::rc_send_middle, 101, 1024);
    c.add(bth_opcode::rc_send_last, 102, 7);
    c.add(bth_opcode::rc_rdma_read_request, 103, 0, 65536);  // its responses take PSNs 103..118
    c.add(bth_opcode::rc_send_only, 119, 50);
    c.w.close();
  }
  const capture_trace t = analyze_capture(file.string());
  ASSERT_EQ(t.messages.size(), 3u);
  EXPECT_EQ(t.messages[0].op, message_op::send);
  EXPECT_EQ(t.messages[0].length, 1024u + 1024u + 7u);
  EXPECT_EQ(t.messages[0].packets, 3u);
  EXPECT_EQ(t.messages[1].op, message_op::read);
  EXPECT_EQ(t.messages[1].length, 65536u);
  EXPECT_EQ(t.messages[1].packets, 1u);
  EXPECT_EQ(t.messages[2].op, message_op::send);
  EXPECT_EQ(t.messages[2].length, 50u);
  for (const captured_message& m : t.messages) {
    EXPECT_TRUE(m.unreplayable.empty()) << m.unreplayable;
    EXPECT_TRUE(m.note.empty()) << m.note;
  }
  fs::remove(file);
}

TEST(capture_messages, acknowledges_are_counted_by_syndrome) {
  const fs::path file = scratch("acks.pcap");
  {
    pcap_writer w(file.string());
    uint64_t t = 0;
    for (uint8_t syndrome : {0x1f, 0x1f, 0x60, 0x20, 0x61}) {  // ACK, ACK, NAK PSN error, RNR NAK, NAK
      core::packet p;
      p.ip.src = v4(10, 0, 0, 2);
      p.ip.dst = v4(10, 0, 0, 1);
      p.bth.opcode = bth_opcode::rc_acknowledge;
      p.bth.dest_qp = 0x21;
      p.bth.psn = 5;
      p.has_aeth = true;
      p.aeth.syndrome = syndrome;
      w.write(p, t += 100);
    }
    w.close();
  }
  const capture_trace t = analyze_capture(file.string());
  ASSERT_EQ(t.acks.size(), 1u);
  const ack_counts& a = t.acks.begin()->second;
  EXPECT_EQ(a.acks, 2u);
  EXPECT_EQ(a.naks, 2u);
  EXPECT_EQ(a.rnr_naks, 1u);
  EXPECT_TRUE(t.messages.empty());  // acknowledges are no requests
  fs::remove(file);
}

TEST(capture_messages, capture_out_of_time_order_starts_at_its_earliest_frame) {
  const fs::path file = scratch("merged.pcap");
  {
    capture_builder c(file);
    c.t_ns = 5000;
    c.add(bth_opcode::rc_rdma_write_only, 1, 100, 100, 0x21);  // at 5000 ns
    c.t_ns = 2000;
    c.add(bth_opcode::rc_rdma_write_only, 9, 100, 100, 0x22);  // frame 2, at 2000 ns: the earliest
    c.t_ns = 9000;
    c.add(bth_opcode::rc_rdma_write_only, 2, 100, 100, 0x21);  // at 9000 ns: the latest
    c.w.close();
  }
  const capture_trace t = analyze_capture(file.string());
  EXPECT_EQ(t.summary.first_frame_ns, 2000u);
  EXPECT_EQ(t.summary.last_frame_ns, 9000u);
  ASSERT_EQ(t.messages.size(), 3u);
  // Messages in time order, whatever the file order.
  EXPECT_EQ(t.messages[0].first_frame, 2u);
  EXPECT_EQ(t.messages[1].first_frame, 1u);
  EXPECT_EQ(t.messages[2].first_frame, 3u);
  fs::remove(file);
}

}  // namespace capture_messages_test
}  // namespace fabricsim::traces
