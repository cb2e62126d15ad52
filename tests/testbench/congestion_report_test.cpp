// Tests of the congestion figures of the `fabric` report (bottleneck utilization and queue, per-sender goodput,
// Jain's index, pauses, CNPs) and of the per-QP time series (run.sample_us, run.timeseries_csv), against
// hand calculations. Each run forks (SystemC elaborates once per process).
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "sc_models/core/packet.h"
#include "testbench/simulation.h"
#include "tests/support/scenario_child.h"

namespace fabricsim::testbench {
namespace congestion_report_test {

using nlohmann::json;

json run(const std::string& yaml) { return test::run_scenario_yaml(yaml); }

std::vector<std::string> lines_of(const std::string& path) {
  std::ifstream f(path);
  std::vector<std::string> out;
  for (std::string l; std::getline(f, l);) out.push_back(l);
  return out;
}

// Two senders into h0, the second posted long after the run ends: h1 alone at line rate through an idle
// switch. Its goodput in the window is the line rate times payload over wire bytes of a middle packet;
// h2's is 0, so Jain's index over the two is (x + 0)^2 / (2 (x^2 + 0)) = 1/2 exactly; the bottleneck
// (the switch's port to h0) carries one line-rate flow: utilization = that same fraction, (almost) no queue.
TEST(congestion_report, utilization_and_jain_by_hand) {
  const json r = run(R"(run: {duration_us: 30, warmup_us: 10}
topology: {kind: single_switch, hosts: 3, link_gbps: 400}
nic: {mtu_bytes: 4096, place_data: false}
writes:
  - {src: h1, dst: h0, bytes: 16777216}
  - {src: h2, dst: h0, bytes: 16777216, start_ns: 1000000000}
)");
  ASSERT_TRUE(r.contains("fabric")) << r.dump();
  const json& f = r["fabric"];
  namespace h = core::header_bytes;
  const double payload = 4096;
  const double wire = h::preamble_sfd + h::ethernet + h::ipv4 + h::udp + h::bth + payload + h::icrc + h::fcs +
                      h::inter_frame_gap;
  const double window_s = 20e-6, rate_bps = 400e9;
  const double fraction = payload / wire;  // 4096 / 4178
  const json& b = f["bottleneck"];
  ASSERT_TRUE(b.is_object()) << f.dump();
  EXPECT_EQ(b["host"], "h0");
  EXPECT_EQ(b["port"], "sw0.port0");
  // Placement is per packet: the window's edges cut at most one packet's payload.
  const double delivered = b["delivered_payload_bytes"].get<double>();
  EXPECT_NEAR(delivered, rate_bps / 8 * window_s * fraction, payload);
  EXPECT_DOUBLE_EQ(b["utilization"].get<double>(), delivered * 8 / (rate_bps * window_s));
  EXPECT_NEAR(b["utilization"].get<double>(), fraction, payload * 8 / (rate_bps * window_s));
  EXPECT_NEAR(f["sender_goodput_gbps"]["h1"].get<double>(), delivered * 8 / window_s / 1e9, 1e-9);
  EXPECT_DOUBLE_EQ(f["sender_goodput_gbps"]["h2"].get<double>(), 0.0);
  EXPECT_DOUBLE_EQ(f["jain_fairness"].get<double>(), 0.5);
  // One flow at line rate: no standing queue beyond the couple of frames waiting for a MAC FIFO slot.
  EXPECT_LT(b["queue_mean_bytes"].get<double>(), 3 * wire);
  EXPECT_TRUE(f["pfc_pauses_by_port"].empty());
  EXPECT_EQ(f["pfc_pauses_by_switch"]["sw0"].get<uint64_t>(), 0u);
  EXPECT_EQ(f["cnps_sent"].get<uint64_t>(), 0u);
}

// Two equal senders saturating h0's link share it: Jain's index by hand from the two goodputs, and their
// sum is the bottleneck's delivered payload over the window.
// fabric.data_packet_latency_ns: one WRITE through an idle output-queued switch (store-and-forward, 400 ns
// port to port). Every data packet takes: its serialization onto the host link, the host cable (2 m at 5 ns/m
// plus 100 ns FEC), 400 ns, its serialization again, the second cable. The first packet carries the RETH
// (16 bytes more), the other 255 do not, so each of those reaches the switch's egress 0.32 ns (16 bytes at
// 400 Gb/s) before the one ahead of it has left, and waits that long: the first packet's latency is the
// formula's, every other one's is the formula's plus 0.32 ns. min and max are exact, the percentiles lie
// between them.
TEST(congestion_report, data_packet_latency_by_hand) {
  const json r = run(R"(run: {duration_us: 40}
topology: {kind: single_switch, hosts: 2, link_gbps: 400}
switch: {model: oq}
nic: {mtu_bytes: 4096, place_data: false}
writes:
  - {src: h0, dst: h1, bytes: 1048576}
)");
  ASSERT_TRUE(r.contains("fabric")) << r.dump();
  const json& l = r["fabric"]["data_packet_latency_ns"];
  namespace h = core::header_bytes;
  const double frame = h::preamble_sfd + h::ethernet + h::ipv4 + h::udp + h::bth + 4096 + h::icrc + h::fcs +
                       h::inter_frame_gap;                             // 4,178 bytes
  const auto ser_ns = [](double bytes) { return bytes * 8 / 400.0; };  // ns at 400 Gb/s
  const double cable_ns = 2 * 5 + 100, switch_ns = 400;
  const double first = 2 * ser_ns(frame + h::reth) + 2 * cable_ns + switch_ns;           // 787.76 ns
  const double middle = 2 * ser_ns(frame) + 2 * cable_ns + switch_ns + ser_ns(h::reth);  // 787.44 ns
  EXPECT_EQ(l["count"], 256) << l.dump();
  EXPECT_NEAR(l["max"].get<double>(), first, 1e-3);
  EXPECT_NEAR(r["stats"]["fabric"]["data_packet_latency"]["min"].get<double>() / 1e3, middle, 1e-3);
  EXPECT_NEAR(l["mean"].get<double>(), (first + 255 * middle) / 256, 1e-3);
  for (const char* q : {"p50", "p99", "p999"}) {
    EXPECT_GE(l[q].get<double>(), middle - 1e-3) << q;
    EXPECT_LE(l[q].get<double>(), first + 1e-3) << q;
  }
}

TEST(congestion_report, jain_from_two_goodputs) {
  const json r = run(R"(run: {duration_us: 40, warmup_us: 10}
topology: {kind: single_switch, hosts: 3, link_gbps: 400}
nic: {place_data: false}
workload: {kind: incast, incast_senders: 2, incast_target: h0, message_bytes: 16777216}
)");
  const json& f = r["fabric"];
  const double x1 = f["sender_goodput_gbps"]["h1"].get<double>(), x2 = f["sender_goodput_gbps"]["h2"].get<double>();
  EXPECT_NEAR(f["jain_fairness"].get<double>(), (x1 + x2) * (x1 + x2) / (2 * (x1 * x1 + x2 * x2)), 1e-12);
  EXPECT_GT(f["jain_fairness"].get<double>(), 0.95);
  EXPECT_NEAR((x1 + x2) * 1e9 * 30e-6 / 8, f["bottleneck"]["delivered_payload_bytes"].get<double>(), 1.0);
  EXPECT_GT(f["bottleneck"]["utilization"].get<double>(), 0.95);  // two line-rate senders keep it busy
  EXPECT_GT(f["bottleneck"]["queue_mean_bytes"].get<double>(), 0.0);
  EXPECT_GE(double(f["bottleneck"]["queue_max_bytes"].get<uint64_t>()),
            f["bottleneck"]["queue_mean_bytes"].get<double>());
}

const char* const k_incast_dcqcn = R"(run: {duration_us: 200, warmup_us: 50, sample_us: SAMPLE, timeseries_csv: CSV}
topology: {kind: single_switch, hosts: 5, link_gbps: 400}
nic: {place_data: false, cc: dcqcn}
workload: {kind: incast, incast_senders: 4, incast_target: h0, message_bytes: 67108864}
)";

std::string incast(const std::string& sample_us, const std::string& csv) {
  std::string s = k_incast_dcqcn;
  s.replace(s.find("SAMPLE"), 6, sample_us);
  s.replace(s.find("CSV"), 3, csv.empty() ? "\"\"" : csv);
  return s;
}

// Sampling stops and resumes the kernel between samples and adds no model event: the report is the same
// apart from wall time and the sampling figures themselves.
TEST(congestion_report, sampling_does_not_change_results) {
  json a = run(incast("0", ""));
  json b = run(incast("1", ""));
  ASSERT_TRUE(a.contains("fabric") && b.contains("fabric"));
  EXPECT_EQ(b["fabric"]["samples"].get<uint64_t>(), 200u);
  for (json* r : {&a, &b}) {
    r->erase("wall_time_s");
    r->erase("packet_hops_per_s");
    r->erase("peak_rss_mib");
    for (const char* k : {"samples", "rate_convergence_ns", "goodput_convergence_ns", "rate_spread_at_end"})
      (*r)["fabric"].erase(k);
  }
  EXPECT_EQ(a, b) << json::diff(a, b).dump(1);
}

// A 4:1 DCQCN incast: CNPs flow, the CSV has the documented header and one row per sender per sample, and
// the senders' DCQCN rates fall below the 400 Gb/s line rate.
TEST(congestion_report, dcqcn_incast_time_series) {
  const std::string csv = testing::TempDir() + "congestion_report_incast.csv";
  std::remove(csv.c_str());
  const json r = run(incast("10", csv));
  const json& f = r["fabric"];
  EXPECT_GT(f["cnps_sent"].get<uint64_t>(), 0u);
  EXPECT_EQ(f["cnps_sent"], f["cnps_received"]);
  const std::vector<std::string> lines = lines_of(csv);
  ASSERT_FALSE(lines.empty());
  EXPECT_EQ(lines[0],
            "time_ns,src,dst,qpn,active,rate_mbps,target_mbps,alpha,window_bytes,inflight_bytes,hpcc_u,"
            "dst_port_queue_bytes,max_queue_bytes,delivered_bytes,goodput_mbps");
  ASSERT_EQ(lines.size(), 1u + 20u * 4u);  // 200 us / 10 us samples, 4 senders
  double min_rate = 1e18;
  for (size_t i = 1; i < lines.size(); ++i) {
    std::stringstream row(lines[i]);
    std::vector<std::string> cols;
    for (std::string c; std::getline(row, c, ',');) cols.push_back(c);
    ASSERT_EQ(cols.size(), 15u) << lines[i];
    EXPECT_DOUBLE_EQ(std::stod(cols[0]), 10000.0 * double((i - 1) / 4 + 1)) << lines[i];
    EXPECT_EQ(cols[1], "h" + std::to_string((i - 1) % 4 + 1));
    EXPECT_EQ(cols[2], "h0");
    min_rate = std::min(min_rate, std::stod(cols[5]));
  }
  EXPECT_LT(min_rate, 400000.0 * 0.9);
  std::remove(csv.c_str());
}

}  // namespace congestion_report_test
}  // namespace fabricsim::testbench
