// Packet captures of a run (--tap): a small PFC-triggering incast with taps on a host uplink, on a switch
// port and on a link by name. Each capture is read back with the project's pcap reader (frame count against
// the link's `packets` counter) and, when tshark is installed, decoded by tshark and compared field by field
// with the model's own record of the frames it put on those links. Runs fork (SystemC elaborates once).
#include <cstdio>
#include <filesystem>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "sc_models/core/packet.h"
#include "testbench/simulation.h"
#include "tests/support/sc_fork.h"
#include "traces/pcap_reader.h"
#include "traces/roce_decoder.h"

namespace fabricsim::testbench {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

const char* const tshark = "/usr/bin/tshark";

// 4:1 incast on priority 3 (lossless) with a low XOFF threshold, so the switch pauses the senders within
// a few microseconds, and DCQCN with a low ECN Kmin, so h0 sends CNPs back; 30 us of simulated time, well
// under a second of wall time.
const char* const k_incast = R"(run: {duration_us: 30}
topology: {kind: single_switch, hosts: 5, link_gbps: 400}
switch: {lossless_priorities: "3", pfc_xoff_bytes: 32768, pfc_xon_bytes: 16384,
         ecn_kmin_bytes: 8192, ecn_kmax_bytes: 65536}
nic: {place_data: false, cc: dcqcn}
workload: {kind: incast, incast_senders: 4, incast_target: h0, message_bytes: 16777216}
)";

std::string ip_text(const core::ip_address& a) {
  const auto& o = a.octets;
  return std::to_string(o[12]) + "." + std::to_string(o[13]) + "." + std::to_string(o[14]) + "." +
         std::to_string(o[15]);
}

std::string time_text(uint64_t ns) {
  char t[40];
  std::snprintf(t, sizeof t, "%llu.%09llu", (unsigned long long)(ns / 1000000000u),
                (unsigned long long)(ns % 1000000000u));
  return t;
}

// The model's own record of a frame, in the columns of the tshark command below.
std::string log_row(const core::packet& p, uint64_t ts_ns) {
  if (p.kind == core::frame_kind::pfc) {
    char enbv[8];
    std::snprintf(enbv, sizeof enbv, "0x%04x", p.pfc.class_enable);
    return time_text(ts_ns) + "\t\t\t\t\t\tpfc\t" + enbv + "\t" + std::to_string(p.pfc.quanta[3]);
  }
  return time_text(ts_ns) + "\t" + ip_text(p.ip.src) + "\t" + ip_text(p.ip.dst) + "\t" +
         std::to_string(p.udp.dst_port) + "\t" + std::to_string(unsigned(p.bth.opcode)) + "\t" +
         std::to_string(p.bth.psn) + "\troce\t\t";
}

// Runs the scenario with `taps` in a child; returns {"report": ..., "log": {link: [rows]}}.
json run(const std::vector<std::string>& taps) {
  const test::child_result r = test::run_in_child([&] {
    json log = json::object();
    run_options opts;
    opts.taps = taps;
    opts.tap_frames = [&](const core::link& l, const core::packet& p, uint64_t ts_ns) {
      log[l.name()].push_back(log_row(p, ts_ns));
    };
    json report = run_scenario(load_scenario_text(k_incast, "taps.yaml"), opts);
    return json{{"report", std::move(report)}, {"log", std::move(log)}}.dump();
  });
  if (!r.ok) {
    ADD_FAILURE() << r.output;
    return json::object();
  }
  return json::parse(r.output);
}

std::string shell(const std::string& command) {
  std::string out;
  if (FILE* pipe = ::popen(command.c_str(), "r")) {
    char buf[4096];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, pipe)) > 0) out.append(buf, n);
    ::pclose(pipe);
  }
  return out;
}

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

// The RoCE payloads are zeros, not an upper-layer protocol: keep tshark's RDMA payload guessers out.
const std::string tshark_options =
    " -o ip.check_checksum:TRUE --disable-heuristic rpcrdma_infiniband --disable-heuristic smcr_infiniband"
    " --disable-heuristic smb_direct_infiniband --disable-heuristic iser_infiniband --disable-heuristic lnet_ib"
    " --disable-heuristic sdp_infiniband --disable-heuristic fc_infiniband --disable-heuristic eth_over_ib"
    " --disable-heuristic nvme_rdma";

TEST(taps, captures_match_the_links_and_tshark) {
  const std::string dir = testing::TempDir();
  const std::string up = dir + "taps_h1_up.pcap", port = dir + "taps_sw0_p1.pcap", named = dir + "taps_to_h0.pcap";
  const json r = run({"h1:0=" + up, "sw0:1=" + port, "sw0_to_h0=" + named});
  ASSERT_TRUE(r.contains("report")) << r.dump();
  const json& report = r["report"];
  const std::map<std::string, std::string> file_of = {
      {"h1_to_sw0", up}, {"sw0_to_h1", port}, {"sw0_to_h0", named}};

  ASSERT_EQ(report["taps"].size(), 3u) << report["taps"].dump();
  for (const json& t : report["taps"]) {
    const std::string link = t["link"];
    SCOPED_TRACE(link);
    ASSERT_TRUE(file_of.count(link));
    EXPECT_EQ(t["file"], file_of.at(link));
    const uint64_t packets = report["stats"][link]["packets"]["value"].get<uint64_t>();
    EXPECT_GT(packets, 0u);
    EXPECT_EQ(t["frames"].get<uint64_t>(), packets);
    EXPECT_EQ(t["int_frames_without_telemetry"].get<uint64_t>(), 0u);

    // The project's reader: every frame whole, as many as the link carried, timestamps in order; every
    // RoCE frame decodes with its ICRC checked, every other one is a PFC frame (EtherType 0x8808).
    traces::pcap_reader reader(file_of.at(link));
    traces::roce_decoder_params checked;
    checked.check_icrc = true;
    traces::roce_decoder decoder(checked);
    traces::capture_frame f;
    core::packet decoded;
    uint64_t frames = 0, last_ns = 0;
    while (reader.next(f)) {
      ++frames;
      EXPECT_EQ(f.captured_bytes, f.original_bytes);
      EXPECT_GE(f.timestamp_ns, last_ns);
      last_ns = f.timestamp_ns;
      const traces::decode_verdict v = decoder.decode(f.data, f.captured_bytes, f.number, decoded);
      if (v != traces::decode_verdict::roce) {
        EXPECT_EQ(v, traces::decode_verdict::not_roce) << decoder.message();
        ASSERT_GE(f.captured_bytes, 14u);
        EXPECT_EQ(f.data[12] << 8 | f.data[13], 0x8808) << "frame " << f.number;
      }
    }
    EXPECT_EQ(reader.warning(), "");
    EXPECT_EQ(frames, packets);
    EXPECT_EQ(r["log"][link].size(), packets);
  }

  if (!fs::exists(tshark)) GTEST_SKIP() << tshark << " not installed: no independent decoder to compare with";
  uint64_t pfc_frames = 0, cnp_frames = 0;
  for (const auto& [link, file] : file_of) {
    SCOPED_TRACE(link);
    const std::vector<std::string> dump = lines(shell(
        std::string(tshark) + " -r " + file + tshark_options +
        " -T fields -e frame.time_epoch -e ip.src -e ip.dst -e udp.dstport -e infiniband.bth.opcode"
        " -e infiniband.bth.psn -e macc.opcode -e macc.cbfc.enbv -e macc.cbfc.pause_time.c3 -e _ws.malformed"
        " -e ip.checksum.status 2>/dev/null"));
    const json& log = r["log"][link];
    ASSERT_EQ(dump.size(), log.size());
    for (size_t i = 0; i < dump.size(); ++i) {
      // tshark's columns -> the log's: kind from the presence of the MAC control opcode.
      std::vector<std::string> c;
      std::istringstream in(dump[i]);
      for (std::string field; std::getline(in, field, '\t');) c.push_back(field);
      c.resize(11);
      ASSERT_EQ(c[9], "") << "frame " << i + 1 << " malformed: " << dump[i];
      const bool pfc = !c[6].empty();
      if (pfc) {
        ++pfc_frames;
        EXPECT_EQ(c[6], "0x0101") << "802.1Qbb opcode";
      } else {
        EXPECT_EQ(c[10], "1") << "frame " << i + 1 << ": IPv4 header checksum status (1 = good)";
        if (c[4] == "129") ++cnp_frames;  // BTH opcode 0x81
      }
      const std::string row = c[0] + "\t" + c[1] + "\t" + c[2] + "\t" + c[3] + "\t" + c[4] + "\t" + c[5] + "\t" +
                              (pfc ? "pfc" : "roce") + "\t" + c[7] + "\t" + c[8];
      ASSERT_EQ(row, log[i].get<std::string>()) << "frame " << i + 1 << " of " << file;
    }
    const std::string expert = shell(std::string(tshark) + " -r " + file + tshark_options +
                                     " -q -z expert,warn 2>/dev/null");
    EXPECT_EQ(expert.find("Errors ("), std::string::npos) << expert;
    EXPECT_EQ(expert.find("Warnings ("), std::string::npos) << expert;
  }
  EXPECT_GT(pfc_frames, 0u) << "the incast should make sw0 pause h1";
  EXPECT_GT(cnp_frames, 0u) << "DCQCN: h0 should send h1 CNPs";
  for (const auto& [link, file] : file_of) fs::remove(file);
}

TEST(taps, bad_taps_name_the_option) {
  struct bad_case {
    std::string tap;
    std::string message;
  };
  const std::string dir = testing::TempDir();
  const std::vector<bad_case> cases = {
      {"sw9:0=" + dir + "x.pcap", "--tap sw9:0=" + dir + "x.pcap: no node named 'sw9'"},
      {"sw0:5=" + dir + "x.pcap", "--tap sw0:5=" + dir + "x.pcap: switch sw0 has ports 0 .. 4; port 5"},
      {"h1:1=" + dir + "x.pcap", "--tap h1:1=" + dir + "x.pcap: host h1 has one port, 0"},
      {"h1_to_h2=" + dir + "x.pcap", "--tap h1_to_h2=" + dir + "x.pcap: no link named 'h1_to_h2'"},
      {"h1:0=/nonexistent/dir/x.pcap", "--tap h1:0=/nonexistent/dir/x.pcap: /nonexistent/dir/x.pcap: cannot create"},
      {"h1:x=" + dir + "x.pcap", "--tap h1:x=" + dir + "x.pcap: port 'x' is not a port number"},
      {"h1:0", "--tap h1:0: no '=FILE'"},
  };
  for (const bad_case& c : cases) {
    const test::child_result r = test::run_in_child([&] {
      run_options opts;
      opts.taps = {c.tap};
      opts.elaborate_only = true;
      try {
        run_scenario(load_scenario_text(k_incast, "taps.yaml"), opts);
      } catch (const core::config_error& e) {
        return std::string("config_error: ") + e.what();
      }
      return std::string("no error");
    });
    EXPECT_EQ(r.output.rfind("config_error: " + c.message, 0), 0u) << c.tap << " -> " << r.output;
  }
}

}  // namespace
}  // namespace fabricsim::testbench
