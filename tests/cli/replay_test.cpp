// `fabricsim replay` as a user runs it: the sample scapy captures (traces/samples) (expected figures from
// traces/samples/README.md), a round trip through our own --tap captures, the timing modes, every operation
// (READ, SEND, immediates, zero length), and broken captures made here from good ones.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/support/run_cli.h"
#include "tests/support/sample_traces.h"
#include "traces/pcap_writer.h"

namespace {

namespace fs = std::filesystem;
using fabricsim::test::fabricsim;
using fabricsim::test::run_result;
using nlohmann::json;

const fs::path samples = fabricsim::test::sample_traces_dir();

std::string scratch(const std::string& name) {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  return (fs::temp_directory_path() /
          ("fabricsim_replay_" + std::string(info->name()) + "_" + std::to_string(::getpid()) + "_" + name))
      .string();
}

json load(const std::string& path) {
  std::ifstream f(path);
  return json::parse(f);
}

std::vector<char> slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::vector<char>(std::istreambuf_iterator<char>(in), {});
}
void spill(const std::string& p, const std::vector<char>& b, size_t n) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out.write(b.data(), std::streamsize(n));
}

// Offsets of the records of a classic little-endian pcap file, parsed here byte by byte.
std::vector<size_t> record_offsets(const std::vector<char>& b) {
  std::vector<size_t> offsets;
  auto le32 = [&](size_t at) {
    uint32_t v = 0;
    for (int i = 3; i >= 0; --i) v = v << 8 | uint8_t(b[at + size_t(i)]);
    return v;
  };
  for (size_t at = 24; at + 16 <= b.size(); at += 16 + le32(at + 8)) offsets.push_back(at);
  return offsets;
}

const json& flow(const json& flows, const std::string& src, const std::string& dst) {
  for (const json& f : flows)
    if (f["src"] == src && f["dst"] == dst) return f;
  static const json none;
  return none;
}

TEST(replay, sample_captures_trace_objects_match_the_readme_and_every_write_completes) {
  struct expected {
    const char* file;
    uint64_t frames, roce, skipped, flows, messages, bytes;
  };
  // README table: in-order 34 frames, two 64 KiB WRITEs + an ACK per QP (4 flows: 2 directions x 2 QPs);
  // sprayed 66 frames, one 256 KiB WRITE, a CNP and an ACK back (2 flows); mixed 14 frames, 12 RoCEv2, one
  // ARP and one plain UDP frame skipped, an 8 KiB and a 4 KiB WRITE (2 flows, no ACKs).
  for (const expected& e : {expected{"rdma_write_inorder.pcap", 34, 34, 0, 4, 2, 2 * 65536},
                            expected{"rdma_write_sprayed.pcap", 66, 66, 0, 2, 1, 262144},
                            expected{"mixed_vlan_ipv6.pcapng", 14, 12, 2, 2, 2, 8192 + 4096}}) {
    SCOPED_TRACE(e.file);
    const std::string out = scratch(std::string(e.file) + ".json");
    const run_result r = fabricsim("replay " + (samples / e.file).string() + " --quiet --json " + out);
    ASSERT_EQ(r.exit_code, 0) << r.output;
    const json j = load(out);
    const json& t = j["trace"];
    EXPECT_EQ(t["frames"], e.frames);
    EXPECT_EQ(t["roce_packets"], e.roce);
    EXPECT_EQ(t["skipped_frames"]["total"], e.skipped);
    EXPECT_EQ(t["flows"].size(), e.flows);
    EXPECT_EQ(t["messages"]["WRITE"], e.messages);
    EXPECT_EQ(j["replay"]["messages_posted"], e.messages);
    uint64_t completed = 0, bytes = 0;
    for (const json& f : j["replay"]["flows"]) {
      completed += f["completed"].get<uint64_t>();
      bytes += f["completed_bytes"].get<uint64_t>();
      EXPECT_GT(f["throughput_gbps"].get<double>(), 0.0);
      EXPECT_LE(f["mean_latency_ns"].get<double>(), f["max_latency_ns"].get<double>());
    }
    EXPECT_EQ(completed, e.messages);
    EXPECT_EQ(bytes, e.bytes);
    EXPECT_TRUE(j["verified"].get<bool>());
    fs::remove(out);
  }

  // Details: PSN ranges, the reordering and the marks of the sprayed capture, the skip reasons.
  const std::string out = scratch("sprayed.json");
  ASSERT_EQ(fabricsim("replay " + (samples / "rdma_write_sprayed.pcap").string() + " --quiet --json " + out).exit_code,
            0);
  const json s = load(out)["trace"];
  const json& data = flow(s["flows"], "10.0.0.1", "10.0.0.2");
  EXPECT_EQ(data["dest_qp"], 0x33);
  EXPECT_EQ(data["packets"], 64);
  EXPECT_EQ(data["payload_bytes"], 262144);
  EXPECT_EQ(data["psn"]["first"], 200);
  EXPECT_EQ(data["psn"]["last"], 263);
  EXPECT_EQ(data["psn"]["span"], 64);
  EXPECT_GT(data["psn"]["out_of_order"].get<uint64_t>(), 0u);  // shuffled in blocks of 8
  EXPECT_EQ(data["ecn_ce_packets"], 2);
  EXPECT_EQ(data["opcodes"]["RC RDMA_WRITE_FIRST"], 1);
  EXPECT_EQ(data["opcodes"]["RC RDMA_WRITE_MIDDLE"], 62);
  EXPECT_EQ(data["opcodes"]["RC RDMA_WRITE_LAST"], 1);
  const json& back = flow(s["flows"], "10.0.0.2", "10.0.0.1");
  EXPECT_EQ(back["opcodes"]["CNP"], 1);
  EXPECT_EQ(back["opcodes"]["RC ACKNOWLEDGE"], 1);
  EXPECT_EQ(back["acks"], 1);  // the final ACK
  EXPECT_EQ(back["naks"], 0);
  fs::remove(out);

  ASSERT_EQ(fabricsim("replay " + (samples / "mixed_vlan_ipv6.pcapng").string() + " --quiet --json " + out).exit_code,
            0);
  const json m = load(out)["trace"];
  EXPECT_EQ(m["skipped_frames"]["by_reason"]["not_ip"], 1);             // ARP
  EXPECT_EQ(m["skipped_frames"]["by_reason"]["udp_port_not_4791"], 1);  // plain UDP
  EXPECT_EQ(m["path_mtu_bytes"], 1024);
  EXPECT_EQ(flow(m["flows"], "fd00::7", "fd00::8")["packets"], 4);
  // 10.0.0.5, 10.0.0.6 and two IPv6 addresses: not all the fabric's own, so mapped in address order.
  const json mj = load(out);
  EXPECT_EQ(mj["replay"]["mapping"], "address_order");
  EXPECT_EQ(m["endpoints"][0]["ip"], "10.0.0.5");
  EXPECT_EQ(m["endpoints"][0]["host"], "h0");
  EXPECT_EQ(m["endpoints"][3]["ip"], "fd00::8");
  EXPECT_EQ(m["endpoints"][3]["host"], "h3");
  fs::remove(out);
}

TEST(replay, timing_captured_asap_and_scaled) {
  const fs::path trace = samples / "rdma_write_inorder.pcap";
  // The second QP's FIRST is frame 2; its gap to frame 1, read from the record headers here.
  const std::vector<char> bytes = slurp(trace);
  const std::vector<size_t> at = record_offsets(bytes);
  ASSERT_GE(at.size(), 2u);
  auto usec = [&](size_t rec) {
    uint32_t s = 0, u = 0;
    std::memcpy(&s, &bytes[rec], 4);
    std::memcpy(&u, &bytes[rec + 4], 4);
    return double(s) * 1e6 + double(u);
  };
  const double gap_ns = (usec(at[1]) - usec(at[0])) * 1e3;
  ASSERT_GT(gap_ns, 0.0);

  for (const auto& [timing, second_post_ns] :
       std::vector<std::pair<std::string, double>>{{"captured", gap_ns}, {"asap", 0.0}, {"scale=10", 10 * gap_ns}}) {
    SCOPED_TRACE(timing);
    const std::string out = scratch("timing.json");
    const run_result r = fabricsim("replay " + trace.string() + " --quiet --timing " + timing + " --json " + out);
    ASSERT_EQ(r.exit_code, 0) << r.output;
    const json j = load(out);
    EXPECT_EQ(j["replay"]["timing"], timing);
    EXPECT_DOUBLE_EQ(flow(j["replay"]["flows"], "10.0.0.1", "10.0.0.2")["first_post_ns"].get<double>(), 0.0);
    EXPECT_DOUBLE_EQ(flow(j["replay"]["flows"], "10.0.0.3", "10.0.0.4")["first_post_ns"].get<double>(),
                     second_post_ns);
    fs::remove(out);
  }
}

TEST(replay, round_trip_through_our_own_tap) {
  // Three WRITEs h2 -> h1 at MTU 1024, first PSN 2^24 - 2 so the capture wraps: 5000 bytes are 5 packets
  // (FIRST, 3 MIDDLE, LAST), 1024 and 300 bytes one WRITE ONLY each: 7 packets, PSNs 0xfffffe .. 4.
  const std::string scenario = scratch("rt.yaml");
  std::ofstream(scenario) << R"(topology: {kind: single_switch, hosts: 3, link_gbps: 400}
nic: {mtu_bytes: 1024, random_initial_psn: false, initial_psn: 16777214}
writes:
  - {src: h2, dst: h1, bytes: 5000, start_ns: 0}
  - {src: h2, dst: h1, bytes: 1024, start_ns: 2000}
  - {src: h2, dst: h1, bytes: 300, start_ns: 4000}
)";
  const std::string tap = scratch("rt.pcap"), out = scratch("rt.json"), out2 = scratch("rt2.json");
  run_result r = fabricsim("run " + scenario + " --quiet --json " + out + " --tap h2:0=" + tap);
  ASSERT_EQ(r.exit_code, 0) << r.output;

  for (const std::string& fabric : {std::string(" --scenario ") + scenario, std::string()}) {
    SCOPED_TRACE(fabric.empty() ? "default fabric" : "same scenario");
    r = fabricsim("replay " + tap + fabric + " --quiet --json " + out2);
    ASSERT_EQ(r.exit_code, 0) << r.output;
    const json j = load(out2);
    const json& t = j["trace"];
    EXPECT_EQ(t["frames"], 7);
    EXPECT_EQ(t["roce_packets"], 7);
    EXPECT_EQ(t["skipped_frames"]["total"], 0);
    ASSERT_EQ(t["flows"].size(), 1u);  // only h2's transmissions are on its uplink
    const json& f = t["flows"][0];
    EXPECT_EQ(f["payload_bytes"], 5000 + 1024 + 300);
    EXPECT_EQ(f["opcodes"]["RC RDMA_WRITE_FIRST"], 1);
    EXPECT_EQ(f["opcodes"]["RC RDMA_WRITE_MIDDLE"], 3);
    EXPECT_EQ(f["opcodes"]["RC RDMA_WRITE_LAST"], 1);
    EXPECT_EQ(f["opcodes"]["RC RDMA_WRITE_ONLY"], 2);
    EXPECT_EQ(f["psn"]["first"], 16777214);
    EXPECT_EQ(f["psn"]["last"], 4);
    EXPECT_EQ(f["psn"]["span"], 7);
    EXPECT_EQ(f["psn"]["out_of_order"], 0);
    EXPECT_EQ(t["path_mtu_bytes"], 1024);
    EXPECT_EQ(t["messages"]["WRITE"], 3);
    // The endpoints are the fabric's own addresses (host k is 10.0.0.k+1): they keep their hosts, h2 and h1
    // (mapped in address order they would be h1 and h0).
    EXPECT_EQ(j["replay"]["mapping"], "by_address");
    ASSERT_EQ(t["endpoints"].size(), 2u);
    EXPECT_EQ(t["endpoints"][0]["ip"], "10.0.0.2");
    EXPECT_EQ(t["endpoints"][0]["host"], "h1");
    EXPECT_EQ(t["endpoints"][1]["host"], "h2");
    // Replayed, the same three messages complete and make the same 7 packets on h2's uplink.
    EXPECT_EQ(j["completed"], 3);
    EXPECT_TRUE(j["verified"].get<bool>());
    ASSERT_EQ(j["replay"]["flows"].size(), 1u);
    EXPECT_EQ(j["replay"]["flows"][0]["src_host"], "h2");
    EXPECT_EQ(j["replay"]["flows"][0]["dst_host"], "h1");
    EXPECT_EQ(j["replay"]["flows"][0]["completed_bytes"], 5000 + 1024 + 300);
    int uplinks = 0;
    for (const json& p : j["ports"]) {
      if (p["link"] != "h2_to_sw0") continue;
      ++uplinks;
      EXPECT_EQ(p["packets"], 7);
    }
    EXPECT_EQ(uplinks, 1);
  }
  for (const std::string& f : {scenario, tap, out, out2}) fs::remove(f);
}

TEST(replay, read_send_immediates_and_zero_length_are_replayed_and_a_missing_first_is_unreplayable) {
  using fabricsim::core::bth_opcode;
  const std::string trace = scratch("ops.pcap"), out = scratch("ops.json");
  {
    fabricsim::traces::pcap_writer w(trace);
    uint64_t t = 0;
    auto add = [&](bth_opcode op, uint32_t psn, uint32_t payload, uint32_t reth, bool imm = false) {
      fabricsim::core::packet p;
      p.ip.src = fabricsim::test::v4(10, 1, 0, 1);
      p.ip.dst = fabricsim::test::v4(10, 1, 0, 2);
      p.bth.opcode = op;
      p.bth.psn = psn;
      p.bth.dest_qp = 9;
      p.payload_bytes = payload;
      // The RETH rides on a WRITE's FIRST or ONLY and on a READ request (IBTA 9.3.2), zero length included.
      p.has_reth = op == bth_opcode::rc_rdma_write_first || op == bth_opcode::rc_rdma_write_only ||
                   op == bth_opcode::rc_rdma_write_only_imm || op == bth_opcode::rc_rdma_read_request;
      p.reth.dma_length = reth;
      p.has_immediate = imm;
      p.immediate = 0xabcd;
      w.write(p, t += 1000);
    };
    add(bth_opcode::rc_send_only, 1, 100, 0);
    add(bth_opcode::rc_rdma_read_request, 2, 0, 8192);          // PSNs 2..9: eight 1 KiB responses
    add(bth_opcode::rc_rdma_write_middle, 11, 1024, 0);         // FIRST (PSN 10) not captured
    add(bth_opcode::rc_rdma_write_last, 12, 10, 0);
    add(bth_opcode::rc_rdma_write_only, 13, 2000, 2000);        // 2000 B ONLY: against IBTA at MTU 1024, but
                                                                 // the RETH length is what is replayed
    add(bth_opcode::rc_send_first, 14, 1024, 0);
    add(bth_opcode::rc_send_middle, 15, 1024, 0);
    add(bth_opcode::rc_send_last_imm, 16, 10, 0, true);         // SEND with immediate of 1024 + 1024 + 10 B
    add(bth_opcode::rc_rdma_write_only_imm, 17, 300, 300, true);
    add(bth_opcode::rc_rdma_write_only, 18, 0, 0);               // zero-length WRITE: no RETH length, no payload
    w.close();
  }
  run_result r = fabricsim("replay " + trace + " --quiet --json " + out);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.output.find("not replayed"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("1 message(s) cannot be replayed, their FIRST packet is not in the capture"),
            std::string::npos)
      << r.output;
  json j = load(out);
  // Seven messages are whole in the capture: SEND 100, READ 8192, WRITE 2000, SEND+imm 2058, WRITE+imm 300,
  // WRITE 0; the WRITE from PSN 11 has no FIRST.
  EXPECT_EQ(j["trace"]["messages"]["total"], 7);
  EXPECT_EQ(j["trace"]["messages"]["READ"], 1);
  EXPECT_EQ(j["trace"]["messages"]["SEND"], 2);
  EXPECT_EQ(j["trace"]["messages"]["WRITE"], 4);
  EXPECT_EQ(j["trace"]["messages"]["with_immediate"], 2);
  EXPECT_EQ(j["trace"]["path_mtu_bytes"], 1024);
  EXPECT_EQ(j["replay"]["messages_posted"], 6);
  EXPECT_EQ(j["completed"], 6);
  EXPECT_EQ(j["failed"], 0);
  EXPECT_TRUE(j["verified"].get<bool>());  // every byte placed where it belongs, READs at the requester
  EXPECT_TRUE(j["replay"]["not_replayed"].empty());
  ASSERT_EQ(j["replay"]["unreplayable"].size(), 1u);
  EXPECT_EQ(j["replay"]["unreplayable"][0]["psn"], 11);
  EXPECT_EQ(j["replay"]["unreplayable"][0]["frame"], 3);
  // One work request per message, in capture order, with the captured operation and length.
  const std::vector<std::pair<std::string, uint64_t>> expected = {
      {"send", 100}, {"read", 8192}, {"write", 2000}, {"send_imm", 2058}, {"write_imm", 300}, {"write", 0}};
  ASSERT_EQ(j["flows"].size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    const json& f = j["flows"][i];
    EXPECT_EQ(f["op"], expected[i].first) << i;
    EXPECT_EQ(f["bytes"], expected[i].second) << i;
    EXPECT_EQ(f["src"], "h0") << i;  // the requester: the READ too (its bytes flow h1 -> h0)
    EXPECT_EQ(f["dst"], "h1") << i;
    EXPECT_TRUE(f["verified"].get<bool>()) << i;
    EXPECT_EQ(f["mismatched_bytes"], 0) << i;
  }
  ASSERT_EQ(j["replay"]["flows"].size(), 1u);  // one captured requester QP
  const json& rf = j["replay"]["flows"][0];
  EXPECT_EQ(rf["posted"], 6);
  EXPECT_EQ(rf["completed"], 6);
  EXPECT_EQ(rf["completed_bytes"], 100 + 8192 + 2000 + 2058 + 300 + 0);
  EXPECT_EQ(rf["ops"], json({{"read", 1}, {"send", 1}, {"send_imm", 1}, {"write", 2}, {"write_imm", 1}}));

  // Nothing postable at all: the trace is still reported, nothing is simulated, exit 0.
  {
    fabricsim::traces::pcap_writer w(trace);
    fabricsim::core::packet p;
    p.ip.src = fabricsim::test::v4(10, 1, 0, 1);
    p.ip.dst = fabricsim::test::v4(10, 1, 0, 2);
    p.bth.opcode = bth_opcode::rc_send_last;  // its FIRST is not in the capture
    p.payload_bytes = 64;
    w.write(p, 5);
    w.close();
  }
  r = fabricsim("replay " + trace + " --json " + out);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("no message of the capture can be posted; nothing was simulated"), std::string::npos)
      << r.output;
  j = load(out);
  EXPECT_EQ(j["trace"]["roce_packets"], 1);
  EXPECT_FALSE(j.contains("completed"));
  fs::remove(trace);
  fs::remove(out);
}

TEST(replay, messages_beyond_the_time_limit_and_a_self_addressed_write) {
  using fabricsim::core::bth_opcode;
  const std::string trace = scratch("far.pcap"), out = scratch("far.json");
  {
    fabricsim::traces::pcap_writer w(trace);
    uint32_t psn = 0;
    auto add = [&](uint8_t src, uint8_t dst, uint64_t t_ns) {
      fabricsim::core::packet p;
      p.bth.psn = psn++;  // one PSN each: the same PSN twice would be a retransmission of one message
      p.ip.src = fabricsim::test::v4(10, 2, 0, src);
      p.ip.dst = fabricsim::test::v4(10, 2, 0, dst);
      p.bth.opcode = bth_opcode::rc_rdma_write_only;
      p.bth.dest_qp = 3;
      p.payload_bytes = 64;
      p.has_reth = true;
      p.reth.dma_length = 64;
      w.write(p, t_ns);
    };
    add(1, 2, 1000);
    add(1, 2, 1000 + 2000000000000ull);  // 2000 s later: beyond the 1000 s a run may last
    add(3, 3, 1500);                     // to itself
    w.close();
  }
  run_result r = fabricsim("replay " + trace + " --quiet");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("fabricsim: error: --timing captured: frame 2 of " + trace +
                          " would be posted at 2000.000 s, beyond the 1000 s a run can simulate"),
            std::string::npos)
      << r.output;
  r = fabricsim("replay " + trace + " --quiet --timing asap --json " + out);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("1 WRITE message(s) not replayed: source and destination are the same endpoint"),
            std::string::npos)
      << r.output;
  const json j = load(out);
  EXPECT_EQ(j["replay"]["messages_posted"], 2);
  EXPECT_EQ(j["completed"], 2);
  EXPECT_EQ(j["trace"]["duration_ns"], 2000000000000ull);
  fs::remove(trace);
  fs::remove(out);
}

TEST(replay, bad_captures_name_the_file_and_frame_and_never_crash) {
  const std::vector<char> good = slurp(samples / "rdma_write_inorder.pcap");
  const std::vector<size_t> at = record_offsets(good);
  ASSERT_EQ(at.size(), 34u);

  // Not a capture at all; a file that does not exist.
  const std::string text = scratch("notes.pcap");
  std::ofstream(text) << "not a capture\n";
  run_result r = fabricsim("replay " + text);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("fabricsim: error: " + text + ": cannot read as a pcap or pcapng capture"), std::string::npos)
      << r.output;
  r = fabricsim("replay /nonexistent/x.pcap");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("fabricsim: error: /nonexistent/x.pcap: cannot read"), std::string::npos) << r.output;

  // The link type patched to 105 (802.11).
  std::vector<char> patched = good;
  patched[20] = 105, patched[21] = patched[22] = patched[23] = 0;
  const std::string wifi = scratch("wifi.pcap");
  spill(wifi, patched, patched.size());
  r = fabricsim("replay " + wifi);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("fabricsim: error: " + wifi + ": link type 105"), std::string::npos) << r.output;

  // Cut 10 bytes into frame 10: frames 1..9 are replayed with a warning naming frame 10. Both WRITEs keep
  // their FIRST (frames 1 and 2), so both are posted with the RETH length, their LAST noted as missing.
  const std::string cut = scratch("cut.pcap"), out = scratch("bad.json");
  spill(cut, good, at[9] + 16 + 10);
  r = fabricsim("replay " + cut + " --quiet --json " + out);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("fabricsim: warning: " + cut + ": frame 10 is cut short"), std::string::npos) << r.output;
  json j = load(out);
  EXPECT_EQ(j["trace"]["frames"], 9);
  EXPECT_NE(j["trace"]["warning"].get<std::string>().find("frame 10"), std::string::npos);
  EXPECT_EQ(j["completed"], 2);
  ASSERT_EQ(j["replay"]["partial_in_capture"].size(), 2u);
  for (const json& p : j["replay"]["partial_in_capture"])
    EXPECT_EQ(p["note"], "its LAST packet is not in the capture") << p.dump();

  // Frame 3 (QP 0x11's first MIDDLE) claims an IPv4 total length of 9000 bytes, more than it holds: skipped
  // as malformed, named in a warning; its message is still posted.
  patched = good;
  const size_t ip = at[2] + 16 + 14;
  patched[ip + 2] = char(9000 >> 8), patched[ip + 3] = char(9000 & 0xff);
  const std::string lying = scratch("lying.pcap");
  spill(lying, patched, patched.size());
  r = fabricsim("replay " + lying + " --quiet --json " + out);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("fabricsim: warning: " + lying + ": frame 3: IPv4 total length 9000 exceeds"),
            std::string::npos)
      << r.output;
  j = load(out);
  EXPECT_EQ(j["trace"]["frames"], 34);
  EXPECT_EQ(j["trace"]["roce_packets"], 33);
  EXPECT_EQ(j["trace"]["skipped_frames"]["by_reason"]["malformed"], 1);
  EXPECT_EQ(flow(j["trace"]["flows"], "10.0.0.1", "10.0.0.2")["packets"], 15);
  EXPECT_EQ(j["completed"], 2);
  ASSERT_EQ(j["replay"]["partial_in_capture"].size(), 1u);
  EXPECT_EQ(j["replay"]["partial_in_capture"][0]["dest_qp"], 0x11);
  EXPECT_EQ(j["replay"]["partial_in_capture"][0]["note"], "1 of its packets are not in the capture");

  // A fabric too small for the capture's four endpoints.
  const std::string two = scratch("two.yaml");
  std::ofstream(two) << "topology: {kind: single_switch, hosts: 2}\n";
  r = fabricsim("replay " + (samples / "rdma_write_inorder.pcap").string() + " --scenario " + two);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("has 4 endpoints (10.0.0.1, 10.0.0.2, 10.0.0.3, 10.0.0.4) but the fabric has 2 hosts"),
            std::string::npos)
      << r.output;
  for (const std::string& f : {text, wifi, cut, out, lying, two}) fs::remove(f);
}

// Issue 20 item 6: UD and CM, atomics, header-only frames and PSNs per direction on the samples (README
// table), each replayed with what it can be and counted with its own reason.
TEST(replay, ud_atomics_header_only_and_read_samples_replay_with_their_own_reasons) {
  const std::string out = scratch("samples.json");
  auto replay = [&](const char* file) {
    const run_result r = fabricsim("replay " + (samples / file).string() + " --quiet --json " + out);
    EXPECT_EQ(r.exit_code, 0) << file << "\n" << r.output;
    return load(out);
  };
  auto reasons = [](const json& j, const std::string& op) {
    uint64_t n = 0;
    for (const json& m : j["replay"]["not_replayed"]) n += m["op"] == op;
    return n;
  };
  // ud_cm: 7 RoCEv2 packets (tshark's count), none malformed; REQ/REP/RTU are connection management; the UD
  // datagram is not replayed; the 8 KiB WRITE completes.
  json j = replay("ud_cm.pcap");
  EXPECT_EQ(j["trace"]["roce_packets"], 7);
  EXPECT_EQ(j["trace"]["skipped_frames"]["total"], 0);
  EXPECT_EQ(j["trace"]["connection_management"]["packets"], 3);
  EXPECT_EQ(j["trace"]["connection_management"]["by_message"]["REQ"], 1);
  EXPECT_EQ(j["trace"]["messages"]["UD_SEND"], 1);
  EXPECT_EQ(reasons(j, "UD_SEND"), 1u);
  EXPECT_EQ(j["completed"], 1);
  EXPECT_TRUE(j["verified"].get<bool>());
  // atomics: both atomics skipped with their reason, the WRITE replayed.
  j = replay("atomics.pcap");
  EXPECT_EQ(j["trace"]["roce_packets"], 6);
  EXPECT_EQ(j["trace"]["skipped_frames"]["total"], 0);
  EXPECT_EQ(j["trace"]["messages"]["CMP_SWAP"], 1);
  EXPECT_EQ(j["trace"]["messages"]["FETCH_ADD"], 1);
  EXPECT_EQ(j["trace"]["atomic_acks"], 2);
  EXPECT_EQ(reasons(j, "CMP_SWAP"), 1u);
  EXPECT_EQ(reasons(j, "FETCH_ADD"), 1u);
  EXPECT_NE(j["replay"]["not_replayed"][0]["reason"].get<std::string>().find("atomics are decoded and counted"),
            std::string::npos);
  EXPECT_EQ(j["completed"], 1);
  // header_only: every one of the 34 frames decodes, 32 of them header-only; both 64 KiB WRITEs complete.
  j = replay("header_only.pcap");
  EXPECT_EQ(j["trace"]["roce_packets"], 34);
  EXPECT_EQ(j["trace"]["header_only_frames"], 32);
  EXPECT_EQ(j["trace"]["skipped_frames"]["total"], 0);
  EXPECT_EQ(j["replay"]["messages_posted"], 2);
  EXPECT_EQ(j["completed"], 2);
  uint64_t bytes = 0;
  for (const json& f : j["replay"]["flows"]) bytes += f["completed_bytes"].get<uint64_t>();
  EXPECT_EQ(bytes, 2u * 65536);
  // rdma_read: request PSNs and response PSNs apart in each direction; both READs and the WRITE complete.
  j = replay("rdma_read.pcap");
  const json& up = flow(j["trace"]["flows"], "10.0.0.1", "10.0.0.2");
  EXPECT_EQ(up["psn"]["first"], 300);
  EXPECT_EQ(up["psn"]["last"], 316);
  EXPECT_EQ(up["psn"]["distinct"], 2);
  EXPECT_EQ(up["response_psn"]["first"], 7003);
  const json& down = flow(j["trace"]["flows"], "10.0.0.2", "10.0.0.1");
  EXPECT_EQ(down["psn"]["span"], 4);
  EXPECT_EQ(down["psn"]["duplicates"], 0);
  EXPECT_EQ(down["response_psn"]["span"], 17);
  EXPECT_EQ(down["path_mtu_bytes"], 1024);
  EXPECT_EQ(j["trace"]["messages"]["READ"], 2);
  EXPECT_EQ(j["completed"], 3);
  EXPECT_TRUE(j["verified"].get<bool>());
  // send_imm: three SENDs (two with immediate) and a WRITE with immediate, all complete.
  j = replay("send_imm.pcap");
  EXPECT_EQ(j["trace"]["messages"]["SEND"], 3);
  EXPECT_EQ(j["trace"]["messages"]["with_immediate"], 3);
  EXPECT_EQ(j["completed"], 4);
  fs::remove(out);
}

TEST(replay, reth_length_the_capture_contradicts_is_refused_naming_the_frame_before_allocating) {
  // The RETH of frame 1 claims 0xffffffff bytes (README); the replay used to allocate 8.4 GB and fail after
  // half a minute without naming the frame.
  const auto start = std::chrono::steady_clock::now();
  const run_result r = fabricsim("replay " + (samples / "bad_reth_length.pcap").string() + " --quiet");
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("bad_reth_length.pcap: frame 1: RC RDMA_WRITE_FIRST RETH DMA length 4294967295 exceeds "
                          "the RC message limit of 2^31 bytes"),
            std::string::npos)
      << r.output;
  EXPECT_LT(seconds, 5.0);

  // A RETH length within the limit that the WRITE's own packets contradict: 4 x 1024 bytes carried, 8192
  // claimed. Frame 1's DMA length field sits after Ethernet (14), IPv4 (20), UDP (8), BTH (12), VA and R_Key.
  std::vector<char> b = slurp(samples / "bad_reth_length.pcap");
  const std::vector<size_t> at = record_offsets(b);
  ASSERT_EQ(at.size(), 5u);
  const size_t dma = at[0] + 16 + 14 + 20 + 8 + 12 + 12;
  b[dma] = 0, b[dma + 1] = 0, b[dma + 2] = char(0x20), b[dma + 3] = 0;  // 8192
  const std::string lying = scratch("lying_reth.pcap");
  spill(lying, b, b.size());
  const run_result r2 = fabricsim("replay " + lying + " --quiet");
  EXPECT_EQ(r2.exit_code, 2) << r2.output;
  EXPECT_NE(
      r2.output.find(": frame 1: RC RDMA_WRITE_FIRST RETH DMA length 8192 differs from the 4096 payload bytes its "
                     "4 packets (PSN 900 on) carry in the capture"),
      std::string::npos)
      << r2.output;
  fs::remove(lying);
}

// Each queue pair runs the path MTU its capture shows (FIRST and MIDDLE payloads), not the largest of the
// capture for all: 10.0.0.1 -> .2 writes 4 KiB at MTU 1024 (4 packets), 10.0.0.3 -> .4 8 KiB at 4096 (2).
TEST(replay, each_queue_pair_runs_the_path_mtu_of_its_capture_unless_one_is_set) {
  using fabricsim::core::bth_opcode;
  const std::string trace = scratch("mtus.pcap"), out = scratch("mtus.json");
  {
    struct row {
      uint8_t src;
      uint32_t qp;
      bth_opcode op;
      uint32_t psn, payload, reth;
    };
    const row rows[] = {{1, 0x11, bth_opcode::rc_rdma_write_first, 0, 1024, 4096},
                        {1, 0x11, bth_opcode::rc_rdma_write_middle, 1, 1024, 0},
                        {1, 0x11, bth_opcode::rc_rdma_write_middle, 2, 1024, 0},
                        {1, 0x11, bth_opcode::rc_rdma_write_last, 3, 1024, 0},
                        {3, 0x22, bth_opcode::rc_rdma_write_first, 0, 4096, 8192},
                        {3, 0x22, bth_opcode::rc_rdma_write_last, 1, 4096, 0}};
    fabricsim::traces::pcap_writer w(trace);
    for (size_t i = 0; i < std::size(rows); ++i) {
      fabricsim::core::packet p;
      p.ip.src = fabricsim::test::v4(10, 0, 0, rows[i].src);
      p.ip.dst = fabricsim::test::v4(10, 0, 0, uint8_t(rows[i].src + 1));
      p.bth.opcode = rows[i].op;
      p.bth.psn = rows[i].psn;
      p.bth.dest_qp = rows[i].qp;
      p.payload_bytes = rows[i].payload;
      p.has_reth = rows[i].reth != 0;
      p.reth.dma_length = rows[i].reth;
      w.write(p, 1000 * (i + 1));
    }
    w.close();
  }
  run_result r = fabricsim("replay " + trace + " --quiet --json " + out);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  json j = load(out);
  EXPECT_EQ(j["replay"]["path_mtu"]["source"], "capture");
  EXPECT_EQ(j["replay"]["path_mtu"]["nic_mtu_bytes"], 4096);
  EXPECT_EQ(j["replay"]["path_mtu"]["by_host"], json({{"h0", 1024}, {"h1", 1024}}));
  EXPECT_EQ(j["stats"]["h0_nic"]["tx_data_packets"]["value"], 4);  // 4096 B at 1024
  EXPECT_EQ(j["stats"]["h2_nic"]["tx_data_packets"]["value"], 2);  // 8192 B at 4096
  EXPECT_EQ(j["completed"], 2);
  // A --set of the MTU is the scenario's choice: every NIC at it.
  r = fabricsim("replay " + trace + " --quiet --set nic.mtu_bytes=2048 --json " + out);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  j = load(out);
  EXPECT_EQ(j["replay"]["path_mtu"]["source"], "scenario");
  EXPECT_TRUE(j["replay"]["path_mtu"]["by_host"].empty());
  EXPECT_EQ(j["stats"]["h0_nic"]["tx_data_packets"]["value"], 2);  // 4096 B at 2048
  EXPECT_EQ(j["stats"]["h2_nic"]["tx_data_packets"]["value"], 4);  // 8192 B at 2048
  fs::remove(trace);
  fs::remove(out);
}

TEST(replay, bad_timing_and_missing_trace_are_cli_errors) {
  for (const std::string bad : {"fast", "scale=0", "scale=abc", "scale="}) {
    SCOPED_TRACE(bad);
    const run_result r = fabricsim("replay /nonexistent/x.pcap --timing " + bad);
    EXPECT_EQ(r.exit_code, 2) << r.output;
    EXPECT_NE(r.output.find("fabricsim: error: --timing " + bad +
                            ": expected captured (the capture's own gaps), asap (every message at time 0, in capture "
                            "order) or scale=X"),
              std::string::npos)
        << r.output;
  }
  const run_result r = fabricsim("replay");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.output.find("trace is required"), std::string::npos) << r.output;
}

TEST(replay, help_lists_replay_and_its_example_works) {
  run_result r = fabricsim("--help");
  ASSERT_EQ(r.exit_code, 0);
  EXPECT_NE(r.output.find("replay"), std::string::npos) << r.output;
  r = fabricsim("replay --help");
  ASSERT_EQ(r.exit_code, 0);
  const std::string marker = "Example: fabricsim ";
  const size_t e = r.output.find(marker);
  ASSERT_NE(e, std::string::npos) << r.output;
  std::string example = r.output.substr(e + marker.size());
  example = example.substr(0, example.find('\n'));
  // The example names traces/samples relative to the repository; run it from there, JSON to a scratch file.
  const std::string out = scratch("example.json");
  const size_t json_flag = example.find("--json ");
  ASSERT_NE(json_flag, std::string::npos) << example;
  example = example.substr(0, json_flag) + "--json " + out;
  const std::string cmd =
      std::string("cd ") + FABRICSIM_SOURCE_DIR + " && " + FABRICSIM_BINARY + " " + example + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  ASSERT_NE(p, nullptr);
  char buf[4096];
  std::string output;
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) output.append(buf, n);
  EXPECT_EQ(pclose(p), 0) << cmd << "\n" << output;
  EXPECT_EQ(load(out)["trace"]["frames"], 34);
  fs::remove(out);
}

}  // namespace
