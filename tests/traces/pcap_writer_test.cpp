// Tests of the capture writer: descriptors written, read back and decoded field for field; the frames
// compared with the sample captures (written by scapy) and with tshark's decoding; write errors.
#include "traces/pcap_writer.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "tests/support/sample_traces.h"
#include "traces/icrc.h"
#include "traces/pcap_reader.h"
#include "traces/roce_decoder.h"

namespace fabricsim::traces {
namespace pcap_writer_test {

namespace fs = std::filesystem;
using core::bth_opcode;

const fs::path& samples_dir = test::sample_traces_dir();
using test::v4;
const char* const tshark = "/usr/bin/tshark";


fs::path scratch(const std::string& name) {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  return fs::temp_directory_path() /
         ("fabricsim_" + std::string(info->name()) + "_" + std::to_string(::getpid()) + "_" + name);
}

core::ip_address fd00(uint8_t last) {
  core::ip_address r;
  r.octets[0] = 0xfd;
  r.octets[15] = last;
  return r;
}

// A mix of every header combination the writer serializes.
struct sample {
  std::vector<core::packet> packets;
  std::vector<std::vector<uint8_t>> payloads;  // kept alive: descriptors point into them
  sample() {
    payloads.emplace_back(4096, 0x80);
    payloads.emplace_back(1001);
    for (size_t i = 0; i < payloads[1].size(); ++i) payloads[1][i] = uint8_t(i * 7);
    payloads.emplace_back(8, 0x11);

    core::packet base;
    base.eth.dst_mac = 0x020000000002;
    base.eth.src_mac = 0x020000000001;
    base.ip.src = v4(10, 0, 0, 1);
    base.ip.dst = v4(10, 0, 0, 2);
    base.ip.ecn = 2;
    base.bth.dest_qp = 0x33;
    base.bth.mig_req = false;

    core::packet p = base;  // WRITE FIRST, CE-marked, RETH, real payload
    p.id = 1;
    p.ip.ecn = 3;
    p.ip.dscp = 26;
    p.udp.src_port = 50479;
    p.bth.opcode = bth_opcode::rc_rdma_write_first;
    p.bth.psn = 200;
    p.has_reth = true;
    p.reth = {0x00007f0000200000, 0x1033, 256 * 1024};
    p.payload = payloads[0].data();
    p.payload_bytes = 4096;
    packets.push_back(p);

    p = base;  // WRITE MIDDLE without payload bytes: zeros on the wire
    p.id = 2;
    p.bth.opcode = bth_opcode::rc_rdma_write_middle;
    p.bth.psn = 201;
    p.payload_bytes = 4096;
    packets.push_back(p);

    p = base;  // WRITE ONLY with immediate, pad 3, FECN, SE, AckReq, VLAN
    p.id = 3;
    p.eth.has_vlan = true;
    p.eth.vlan_id = 100;
    p.eth.pcp = 3;
    p.bth.opcode = bth_opcode::rc_rdma_write_only_imm;
    p.bth.psn = 0xffffff;
    p.bth.pad_count = 3;
    p.bth.solicited = p.bth.fecn = p.bth.ack_req = true;
    p.bth.pkey = 0x8001;
    p.has_reth = p.has_immediate = true;
    p.reth = {0x1000, 0x77, 1001};
    p.immediate = 0xcafef00d;
    p.payload = payloads[1].data();
    p.payload_bytes = 1001;
    packets.push_back(p);

    p = base;  // ACK back
    p.id = 4;
    std::swap(p.ip.src, p.ip.dst);
    p.bth.opcode = bth_opcode::rc_acknowledge;
    p.bth.psn = 263;
    p.has_aeth = true;
    p.aeth = {0x1f, 1};
    packets.push_back(p);

    p = base;  // CNP back, BECN
    p.id = 5;
    std::swap(p.ip.src, p.ip.dst);
    p.ip.dscp = 48;
    p.bth.opcode = bth_opcode::cnp;
    p.bth.psn = 0;
    p.bth.becn = true;
    packets.push_back(p);

    p = base;  // IPv6 READ RESPONSE FIRST
    p.id = 6;
    p.ip.is_v6 = true;
    p.ip.src = fd00(7);
    p.ip.dst = fd00(8);
    p.ip.flow_label = 0xabcde;
    p.ip.dscp = 46;
    p.ip.ecn = 1;
    p.ip.ttl = 9;
    p.bth.opcode = bth_opcode::rc_rdma_read_response_first;
    p.bth.dest_qp = 0x55;
    p.bth.psn = 17;
    p.has_aeth = true;
    p.aeth = {0x00, 0x123456};
    p.payload = payloads[0].data();
    p.payload_bytes = 1024;
    packets.push_back(p);

    p = base;  // IPv6 READ REQUEST
    p.id = 7;
    p.ip.is_v6 = true;
    p.ip.src = fd00(8);
    p.ip.dst = fd00(7);
    p.bth.opcode = bth_opcode::rc_rdma_read_request;
    p.bth.dest_qp = 0x56;
    p.bth.psn = 16;
    p.has_reth = true;
    p.reth = {0xdeadbeef00, 0x99, 1 << 20};
    packets.push_back(p);

    p = base;  // empty WRITE MIDDLE: 58 bytes, padded to the 60-byte minimum
    p.id = 8;
    p.bth.opcode = bth_opcode::rc_rdma_write_middle;
    p.bth.psn = 5;
    packets.push_back(p);

    p = base;  // SEND ONLY
    p.id = 9;
    p.bth.opcode = bth_opcode::rc_send_only;
    p.bth.psn = 6;
    p.payload = payloads[2].data();
    p.payload_bytes = 8;
    packets.push_back(p);
  }
};

constexpr uint64_t t0_ns = 1700000000123456789ull;

void expect_same(const core::packet& a, const core::packet& b) {
  SCOPED_TRACE("packet id " + std::to_string(a.id));
  EXPECT_EQ(a.eth.dst_mac, b.eth.dst_mac);
  EXPECT_EQ(a.eth.src_mac, b.eth.src_mac);
  EXPECT_EQ(a.eth.has_vlan, b.eth.has_vlan);
  if (a.eth.has_vlan) {
    EXPECT_EQ(a.eth.vlan_id, b.eth.vlan_id);
    EXPECT_EQ(a.eth.pcp, b.eth.pcp);
  }
  EXPECT_EQ(a.ip.is_v6, b.ip.is_v6);
  EXPECT_TRUE(a.ip.src == b.ip.src);
  EXPECT_TRUE(a.ip.dst == b.ip.dst);
  EXPECT_EQ(a.ip.dscp, b.ip.dscp);
  EXPECT_EQ(a.ip.ecn, b.ip.ecn);
  EXPECT_EQ(a.ip.ttl, b.ip.ttl);
  if (a.ip.is_v6) {
    EXPECT_EQ(a.ip.flow_label, b.ip.flow_label);
  }
  EXPECT_EQ(a.udp.src_port, b.udp.src_port);
  EXPECT_EQ(a.udp.dst_port, b.udp.dst_port);
  EXPECT_EQ(a.bth.opcode, b.bth.opcode);
  EXPECT_EQ(a.bth.solicited, b.bth.solicited);
  EXPECT_EQ(a.bth.mig_req, b.bth.mig_req);
  EXPECT_EQ(a.bth.pad_count, b.bth.pad_count);
  EXPECT_EQ(a.bth.pkey, b.bth.pkey);
  EXPECT_EQ(a.bth.fecn, b.bth.fecn);
  EXPECT_EQ(a.bth.becn, b.bth.becn);
  EXPECT_EQ(a.bth.dest_qp, b.bth.dest_qp);
  EXPECT_EQ(a.bth.ack_req, b.bth.ack_req);
  EXPECT_EQ(a.bth.psn, b.bth.psn);
  EXPECT_EQ(a.has_reth, b.has_reth);
  EXPECT_EQ(a.has_aeth, b.has_aeth);
  EXPECT_EQ(a.has_immediate, b.has_immediate);
  EXPECT_EQ(a.reth.va, b.reth.va);
  EXPECT_EQ(a.reth.rkey, b.reth.rkey);
  EXPECT_EQ(a.reth.dma_length, b.reth.dma_length);
  EXPECT_EQ(a.aeth.syndrome, b.aeth.syndrome);
  EXPECT_EQ(a.aeth.msn, b.aeth.msn);
  EXPECT_EQ(a.immediate, b.immediate);
  ASSERT_EQ(a.payload_bytes, b.payload_bytes);
  for (uint32_t i = 0; i < a.payload_bytes; ++i) {
    const uint8_t want = a.payload ? a.payload[i] : 0;
    if (want != b.payload[i]) {
      ADD_FAILURE() << "payload byte " << i << " is " << int(b.payload[i]) << ", wrote " << int(want);
      break;
    }
  }
}

fs::path write_sample(const sample& s, const std::string& name) {
  const fs::path file = scratch(name);
  pcap_writer writer(file.string());
  for (size_t i = 0; i < s.packets.size(); ++i) writer.write(s.packets[i], t0_ns + i * 1001);
  EXPECT_EQ(writer.frames_written(), s.packets.size());
  writer.close();
  return file;
}

TEST(pcap_writer, round_trip_keeps_every_field_timestamps_and_a_valid_icrc) {
  const sample s;
  const fs::path file = write_sample(s, "round_trip.pcap");
  pcap_reader reader(file.string());
  roce_decoder decoder({true});  // the ICRC must verify
  capture_frame frame;
  core::packet back;
  size_t i = 0;
  while (reader.next(frame)) {
    ASSERT_LT(i, s.packets.size());
    const core::packet& sent = s.packets[i];
    EXPECT_EQ(frame.timestamp_ns, t0_ns + i * 1001);
    EXPECT_EQ(frame.captured_bytes, frame.original_bytes);
    // The writer's frame is the model's frame size less the FCS (packet.cpp's accounting).
    EXPECT_EQ(frame.captured_bytes + core::header_bytes::fcs, sent.frame_size().value) << "packet id " << sent.id;
    ASSERT_EQ(decoder.decode(frame.data, frame.captured_bytes, frame.number, back), decode_verdict::roce)
        << decoder.message();
    expect_same(sent, back);
    ++i;
  }
  EXPECT_EQ(i, s.packets.size());
  EXPECT_TRUE(reader.warning().empty()) << reader.warning();
  fs::remove(file);
}

TEST(pcap_writer, reserializing_the_sample_captures_gives_their_bytes) {
  // scapy wrote the reference frames; decoding and re-serializing them must give the same bytes except
  // where the descriptor holds nothing or the reference left a field out: the IPv4 identification and
  // flags (the writer always sets don't-fragment; the reference's CNP does not), hence the header checksum
  // and the ICRC, which covers them; and the IPv6 UDP checksum and ICRC (zeros in the reference).
  roce_decoder decoder;
  core::packet p;
  std::vector<uint8_t> mine;
  uint64_t compared = 0;
  for (const char* name : {"rdma_write_inorder.pcap", "rdma_write_sprayed.pcap", "mixed_vlan_ipv6.pcapng"}) {
    pcap_reader reader((samples_dir / name).string());
    capture_frame frame;
    while (reader.next(frame)) {
      if (decoder.decode(frame.data, frame.captured_bytes, frame.number, p) != decode_verdict::roce) continue;
      serialize_frame(p, mine);
      ASSERT_EQ(mine.size(), frame.captured_bytes) << name << " frame " << frame.number;
      const frame_layout& l = decoder.layout();
      for (size_t i = 0; i < mine.size(); ++i) {
        const size_t in_ip = i - l.ip_offset;
        const bool ignored = i >= l.icrc_offset ||
                             (!p.ip.is_v6 && ((in_ip >= 4 && in_ip <= 7) || in_ip == 10 || in_ip == 11)) ||
                             (p.ip.is_v6 && (in_ip == 46 || in_ip == 47));
        if (!ignored && mine[i] != frame.data[i]) {
          ADD_FAILURE() << name << " frame " << frame.number << " byte " << i << ": wrote " << int(mine[i])
                        << ", reference has " << int(frame.data[i]);
          break;
        }
      }
      // With the reference's IPv4 identification and flags put back, the ICRC agrees too.
      if (!p.ip.is_v6) {
        uint8_t* ip = mine.data() + l.ip_offset;
        for (size_t k = 4; k < 8; ++k) ip[k] = frame.data[l.ip_offset + k];
        EXPECT_EQ(roce_icrc(ip, 20, l.icrc_offset - l.ip_offset, false), load_icrc(frame.data + l.icrc_offset))
            << name << " frame " << frame.number;
      }
      ++compared;
    }
  }
  EXPECT_EQ(compared, 34u + 66u + 12u);
}

std::string run(const std::string& command) {
  std::string out;
  if (FILE* pipe = ::popen(command.c_str(), "r")) {
    char buf[4096];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, pipe)) > 0) out.append(buf, n);
    ::pclose(pipe);
  }
  return out;
}

std::vector<std::vector<std::string>> rows(const std::string& text) {
  std::vector<std::vector<std::string>> result;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    std::vector<std::string> cells;
    std::string cell;
    std::istringstream fields(line);
    while (std::getline(fields, cell, '\t')) cells.push_back(cell);
    if (!line.empty() && line.back() == '\t') cells.emplace_back();
    result.push_back(cells);
  }
  return result;
}

std::string hex24(uint32_t v) {
  char text[16];
  std::snprintf(text, sizeof text, "0x%06x", v);
  return text;
}

// The payloads are fill patterns, not an upper-layer protocol: tshark's guessers for SEND payloads
// (RPC-over-RDMA, NVMe-oF, SMB Direct, ...) would otherwise call them malformed.
const std::string tshark_options =
    " -o ip.check_checksum:TRUE -o udp.check_checksum:TRUE"
    " --disable-heuristic rpcrdma_infiniband --disable-heuristic smcr_infiniband"
    " --disable-heuristic smb_direct_infiniband --disable-heuristic iser_infiniband --disable-heuristic lnet_ib"
    " --disable-heuristic sdp_infiniband --disable-heuristic fc_infiniband --disable-heuristic eth_over_ib"
    " --disable-heuristic nvme_rdma";

TEST(pcap_writer, tshark_decodes_what_was_written) {
  if (!fs::exists(tshark)) GTEST_SKIP() << tshark << " not installed: no independent decoder to compare with";
  const sample s;
  const fs::path file = write_sample(s, "tshark.pcap");
  // Checksum validation on (tshark_options), so tshark reports the IPv4 header and IPv6 UDP checksums.
  const std::string out =
      run(std::string(tshark) + " -r " + file.string() + tshark_options + " -T fields"
          " -e ip.dsfield.ecn -e ipv6.tclass.ecn -e udp.dstport -e infiniband.bth.opcode -e infiniband.bth.destqp"
          " -e infiniband.bth.psn -e infiniband.reth.dmalen -e infiniband.invariant.crc -e ip.checksum.status"
          " -e udp.checksum.status -e vlan.id -e _ws.malformed 2>/dev/null");
  const auto table = rows(out);
  ASSERT_EQ(table.size(), s.packets.size()) << out;

  std::vector<uint8_t> frame;
  roce_decoder decoder;
  for (size_t i = 0; i < s.packets.size(); ++i) {
    const core::packet& p = s.packets[i];
    const auto& r = table[i];
    SCOPED_TRACE("packet id " + std::to_string(p.id));
    ASSERT_GE(r.size(), 11u) << "row " << i;
    EXPECT_EQ(r[p.ip.is_v6 ? 1 : 0], std::to_string(p.ip.ecn));
    EXPECT_EQ(r[2], "4791");
    EXPECT_EQ(r[3], std::to_string(uint8_t(p.bth.opcode)));
    EXPECT_EQ(r[4], hex24(p.bth.dest_qp));
    EXPECT_EQ(r[5], std::to_string(p.bth.psn));
    EXPECT_EQ(r[6], p.has_reth ? std::to_string(p.reth.dma_length) : "");
    // tshark 4.0 shows the ICRC (big-endian reading of the four wire bytes) without checking it; it must
    // be the bytes written. CNPs are not dissected past the BTH, so no ICRC field there.
    serialize_frame(p, frame);
    core::packet decoded;
    ASSERT_EQ(decoder.decode(frame.data(), frame.size(), i + 1, decoded), decode_verdict::roce);
    if (p.bth.opcode != bth_opcode::cnp) {
      char expected[16];
      const uint8_t* icrc = frame.data() + decoder.layout().icrc_offset;
      std::snprintf(expected, sizeof expected, "0x%02x%02x%02x%02x", icrc[0], icrc[1], icrc[2], icrc[3]);
      EXPECT_EQ(r[7], expected);
    }
    if (!p.ip.is_v6) {
      EXPECT_EQ(r[8], "1") << "IPv4 header checksum status (1 = good)";
    } else {
      EXPECT_EQ(r[9], "1") << "IPv6 UDP checksum status (1 = good)";
    }
    EXPECT_EQ(r[10], p.eth.has_vlan ? std::to_string(p.eth.vlan_id) : "");
    if (r.size() > 11) {
      EXPECT_EQ(r[11], "") << "tshark calls the frame malformed";
    }
  }
  // And no expert error of any kind (bad checksum, malformed, illegal values).
  const std::string expert =
      run(std::string(tshark) + " -r " + file.string() + tshark_options + " -q -z expert,error 2>/dev/null");
  EXPECT_EQ(expert.find("Errors ("), std::string::npos) << expert;
  fs::remove(file);
}

// A PFC descriptor is an 802.1Qbb MAC control frame: DA 01:80:c2:00:00:01, EtherType 0x8808, opcode 0x0101,
// class-enable vector, eight big-endian pause times, zero padding to 60 bytes (IEEE 802.1Q-2018 36.1.3).
TEST(pcap_writer, pfc_descriptor_is_an_802_1qbb_frame) {
  core::packet p;
  p.kind = core::frame_kind::pfc;
  p.eth.dst_mac = core::pfc_mac_control_da;
  p.eth.src_mac = 0x02'00'00'00'00'07ull;
  p.pfc.class_enable = 0x08;
  p.pfc.quanta[3] = 0xfffe;
  std::vector<uint8_t> f;
  serialize_frame(p, f);
  const std::vector<uint8_t> head = {0x01, 0x80, 0xc2, 0x00, 0x00, 0x01, 0x02, 0x00, 0x00, 0x00, 0x00, 0x07,
                                     0x88, 0x08, 0x01, 0x01, 0x00, 0x08, 0, 0, 0, 0, 0, 0, 0xff, 0xfe};
  ASSERT_EQ(f.size(), 60u);
  EXPECT_TRUE(std::equal(head.begin(), head.end(), f.begin()));
  for (size_t i = head.size(); i < f.size(); ++i) EXPECT_EQ(f[i], 0) << "byte " << i;
}

// nic.retransmission sack: an ACK's SACK extension follows the AETH as a reserved byte and the 24-bit PSN,
// and the UDP length counts it: 8 UDP + 12 BTH + 4 AETH + 4 SACK + 4 ICRC = 32. Offsets: Ethernet 14 +
// IPv4 20 = 34 to the UDP header (length at 38), + 8 + 12 BTH = 54 to the AETH, 58 to the extension.
TEST(pcap_writer, sack_extension_follows_the_aeth) {
  core::packet p;
  p.ip.src = v4(10, 0, 0, 1);
  p.ip.dst = v4(10, 0, 0, 2);
  p.bth.opcode = bth_opcode::rc_acknowledge;
  p.has_aeth = true;
  p.aeth.syndrome = 0x1f;
  p.aeth.msn = 7;
  p.aeth.sack = true;
  p.aeth.sack_psn = 0x123456;
  std::vector<uint8_t> f;
  serialize_frame(p, f);
  ASSERT_EQ(f.size(), 34u + 32u);
  EXPECT_EQ(f[38], 0);
  EXPECT_EQ(f[39], 32);
  EXPECT_EQ(f[54], 0x1f);
  const std::vector<uint8_t> ext = {0x00, 0x12, 0x34, 0x56};
  EXPECT_TRUE(std::equal(ext.begin(), ext.end(), f.begin() + 58));
  p.aeth.sack = false;
  serialize_frame(p, f);
  EXPECT_EQ(f.size(), 34u + 28u);  // without it, 4 bytes shorter
}

TEST(pcap_writer, errors_name_the_file) {
  const sample s;
  try {
    pcap_writer writer("/nonexistent/dir/out.pcap");
    FAIL() << "expected capture_error";
  } catch (const capture_error& e) {
    EXPECT_EQ(std::string(e.what()).rfind("/nonexistent/dir/out.pcap: cannot create", 0), 0u) << e.what();
  }
  // /dev/full accepts the open and fails the write with ENOSPC.
  if (fs::exists("/dev/full")) {
    try {
      pcap_writer writer("/dev/full");
      for (int i = 0; i < 100; ++i) writer.write(s.packets[0], t0_ns);
      writer.close();
      FAIL() << "expected capture_error";
    } catch (const capture_error& e) {
      EXPECT_EQ(std::string(e.what()).rfind("/dev/full: ", 0), 0u) << e.what();
      EXPECT_NE(std::string(e.what()).find("No space left"), std::string::npos) << e.what();
    }
  }
  const fs::path file = scratch("bad.pcap");
  pcap_writer writer(file.string());
  core::packet p = s.packets[0];
  p.has_reth = false;  // a WRITE FIRST must carry its RETH
  try {
    writer.write(p, t0_ns);
    FAIL() << "expected capture_error";
  } catch (const capture_error& e) {
    EXPECT_NE(std::string(e.what()).find(file.string() + ": frame 1: packet id 1: opcode 0x06 (RC RDMA_WRITE_FIRST)"),
              std::string::npos)
        << e.what();
  }
  p = s.packets[0];
  p.ip.src = fd00(1);  // an IPv6 address in an IPv4 packet
  EXPECT_THROW(writer.write(p, t0_ns), capture_error);
  p = s.packets[1];
  p.payload_bytes = 70000;  // over the snaplen (and over an IP datagram)
  EXPECT_THROW(writer.write(p, t0_ns), capture_error);
  std::vector<uint8_t> jumbo(70000);
  try {
    writer.write_frame(jumbo.data(), jumbo.size(), t0_ns);
    FAIL() << "expected capture_error";
  } catch (const capture_error& e) {
    EXPECT_NE(std::string(e.what()).find("over the snaplen 65535"), std::string::npos) << e.what();
  }
  EXPECT_EQ(writer.frames_written(), 0u);
  writer.close();
  fs::remove(file);
}

}  // namespace pcap_writer_test
}  // namespace fabricsim::traces
