// Tests of one run's measurement window and `fabric` report object (testbench/simulation), against figures
// computed here from the header sizes and the line rate. Each run forks (SystemC elaborates once per process).
#include "testbench/simulation.h"

#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "sc_models/core/packet.h"
#include "tests/support/scenario_child.h"

namespace fabricsim::testbench {
namespace simulation_test {

using nlohmann::json;

json run(const std::string& yaml) { return test::run_scenario_yaml(yaml); }

// One long WRITE from h0 to h1 through one switch, stopped at 20 us, measured from 5 us: by then h0's link
// carries back-to-back middle packets of a full MTU, so the payload delivered per line-rate byte is the
// payload over the wire bytes of one such packet. The ACKs run on the reverse link and cost h0 nothing.
TEST(simulation, effective_throughput_matches_the_wire_format) {
  const json r = run(R"(run: {duration_us: 20, warmup_us: 5}
topology: {kind: single_switch, hosts: 2, link_gbps: 400}
nic: {mtu_bytes: 4096, place_data: false}
writes: [{src: h0, dst: h1, bytes: 16777216}]
)");
  ASSERT_TRUE(r.contains("fabric")) << r.dump();
  const json& f = r["fabric"];
  namespace h = core::header_bytes;
  const double payload = 4096;
  const double wire = h::preamble_sfd + h::ethernet + h::ipv4 + h::udp + h::bth + payload + h::icrc + h::fcs +
                      h::inter_frame_gap;  // 4178: a middle packet has no RETH
  const double window_s = 15e-6, rate_bps = 400e9;
  const double expected_fraction = payload / wire;
  const double expected_bytes = rate_bps / 8 * window_s * expected_fraction;
  EXPECT_DOUBLE_EQ(f["window_start_ns"].get<double>(), 5000.0);
  EXPECT_DOUBLE_EQ(f["window_end_ns"].get<double>(), 20000.0);
  EXPECT_EQ(f["senders"].get<uint64_t>(), 1u);
  // Placement is per packet: the window's edges cut at most one packet's payload.
  const double delivered = f["delivered_payload_bytes"].get<double>();
  EXPECT_NEAR(delivered, expected_bytes, payload);
  EXPECT_DOUBLE_EQ(f["effective_throughput"].get<double>(), delivered * 8 / (rate_bps * window_s));
  EXPECT_NEAR(f["effective_throughput"].get<double>(), expected_fraction, payload / (rate_bps / 8 * window_s));
  // The write has not finished: no flow throughput, one incomplete flow.
  EXPECT_EQ(f["incomplete_flows"].get<uint64_t>(), 1u);
  EXPECT_EQ(f["completed_flows"].get<uint64_t>(), 0u);
  EXPECT_TRUE(f["mean_flow_throughput"].is_null());
  EXPECT_TRUE(f["min_flow_throughput"].is_null());
  EXPECT_EQ(f["drops"].get<uint64_t>(), 0u);
  EXPECT_EQ(f["ecn_marked"].get<uint64_t>(), 0u);
  EXPECT_EQ(f["pfc_pause_frames"].get<uint64_t>(), 0u);
  EXPECT_GT(f["max_queue_bytes"].get<uint64_t>(), 0u);
}

const char* const k_two_flows = R"(run: {warmup_us: WARMUP}
topology: {kind: single_switch, hosts: 3}
nic: {place_data: false}
writes:
  - {src: h0, dst: h2, bytes: 262144}
  - {src: h1, dst: h2, bytes: 65536, start_ns: 1000}
)";

std::string with_warmup(const std::string& warmup) {
  std::string s = k_two_flows;
  s.replace(s.find("WARMUP"), 6, warmup);
  return s;
}

TEST(simulation, flow_throughput_is_a_fraction_of_line_rate) {
  const json r = run(with_warmup("0"));
  ASSERT_TRUE(r.contains("flows")) << r.dump();
  double sum = 0, min = 1e9;
  for (const json& flow : r["flows"]) {
    ASSERT_TRUE(flow["completed"].get<bool>());
    const double expected = flow["bytes"].get<double>() * 8 / (flow["fct_ns"].get<double>() * 1e-9) / 400e9;
    EXPECT_DOUBLE_EQ(flow["throughput"].get<double>(), expected);
    EXPECT_GT(expected, 0.0);
    EXPECT_LT(expected, 1.0);
    sum += expected;
    min = std::min(min, expected);
  }
  const json& f = r["fabric"];
  EXPECT_DOUBLE_EQ(f["mean_flow_throughput"].get<double>(), sum / 2);
  EXPECT_DOUBLE_EQ(f["min_flow_throughput"].get<double>(), min);
  EXPECT_EQ(f["senders"].get<uint64_t>(), 2u);
  EXPECT_EQ(f["incomplete_flows"].get<uint64_t>(), 0u);
  // Without a warm-up and run to completion, the window is the whole run and every payload byte counts.
  EXPECT_EQ(f["delivered_payload_bytes"].get<uint64_t>(), 262144u + 65536u);
  EXPECT_DOUBLE_EQ(f["window_start_ns"].get<double>(), 0.0);
  EXPECT_DOUBLE_EQ(f["window_end_ns"].get<double>(), r["simulated_time_ns"].get<double>());
  EXPECT_DOUBLE_EQ(f["effective_throughput"].get<double>(),
                   (262144.0 + 65536.0) * 8 / (2 * 400e9 * r["simulated_time_ns"].get<double>() * 1e-9));
}

TEST(simulation, warm_up_splits_the_run_without_changing_it) {
  const json whole = run(with_warmup("0"));
  const json split = run(with_warmup("2"));
  ASSERT_TRUE(whole.contains("fabric") && split.contains("fabric"));
  // Same events, same end: reading a counter between two sc_start calls adds nothing to the models.
  EXPECT_EQ(whole["simulated_time_ns"], split["simulated_time_ns"]);
  EXPECT_EQ(whole["events"], split["events"]);
  EXPECT_EQ(whole["flows"], split["flows"]);
  EXPECT_DOUBLE_EQ(split["fabric"]["window_start_ns"].get<double>(), 2000.0);
  EXPECT_LT(split["fabric"]["delivered_payload_bytes"].get<uint64_t>(),
            whole["fabric"]["delivered_payload_bytes"].get<uint64_t>());
  EXPECT_GT(split["fabric"]["delivered_payload_bytes"].get<uint64_t>(), 0u);
}

TEST(simulation, warm_up_past_the_end_of_the_work_leaves_an_empty_window) {
  const json r = run(with_warmup("1000"));
  ASSERT_TRUE(r.contains("fabric"));
  EXPECT_EQ(r["fabric"]["delivered_payload_bytes"].get<uint64_t>(), 0u);
  EXPECT_DOUBLE_EQ(r["fabric"]["effective_throughput"].get<double>(), 0.0);
  EXPECT_EQ(r["fabric"]["window_start_ns"], r["fabric"]["window_end_ns"]);
  EXPECT_EQ(r["completed"].get<uint64_t>(), 2u);
}

TEST(simulation, warm_up_must_leave_a_window) {
  const test::child_result r = test::run_in_child([] {
    return run_scenario(load_scenario_text("run: {duration_us: 5, warmup_us: 5}\nwrites: [{src: h0, dst: h1, "
                                           "bytes: 64}]\n",
                                           "t.yaml"))
        .dump();
  });
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.output, "t.yaml: run.warmup_us 5 leaves no measurement window: it must be below run.duration_us 5");
}

// Loss injection on every link of a small leaf-spine (data, ACKs and NAKs alike, never PFC): every WRITE
// still completes and verifies, the losses are counted per link and the resends per flow and in `fabric`.
TEST(simulation, one_percent_loss_on_every_link_is_recovered) {
  const json r = run(R"(topology: {kind: leaf_spine, leaves: 2, hosts_per_leaf: 2, spines: 2}
link: {drop_probability: 0.01}
nic: {path_entropy: per_packet}
workload: {kind: permutation, pattern: shift, offset: 2, message_bytes: 1048576}
)");
  ASSERT_TRUE(r.contains("fabric")) << r.dump();
  EXPECT_TRUE(r["verified"].get<bool>());
  EXPECT_EQ(r["completed"], 4u);
  EXPECT_EQ(r["failed"], 0u);
  EXPECT_EQ(r["packets_in_use_at_end"], 0u);
  uint64_t lost = 0, resent = 0;
  for (const auto& p : r["ports"]) lost += p["dropped_injected"].get<uint64_t>();
  for (const auto& f : r["flows"]) {
    EXPECT_EQ(f["status"], "success");
    resent += f["retransmitted_packets"].get<uint64_t>();
  }
  // 4 x 256 packets over 4 links each, plus the ACKs: some 40 losses are expected at 1 %.
  EXPECT_GT(lost, 10u);
  EXPECT_EQ(r["fabric"]["injected_drops"], lost);
  EXPECT_EQ(r["fabric"]["retransmissions"], resent);
  EXPECT_GT(resent, 0u);
}

TEST(simulation, loss_injection_can_be_limited_to_named_links) {
  const json r = run(R"(topology: {kind: single_switch, hosts: 2}
link: {drop_probability: 0.05, drop_links: "sw0_to_h1"}
writes: [{src: h0, dst: h1, bytes: 1048576}]
)");
  ASSERT_TRUE(r.contains("ports")) << r.dump();
  EXPECT_TRUE(r["verified"].get<bool>());
  for (const auto& p : r["ports"]) {
    if (p["link"] == "sw0_to_h1")
      EXPECT_GT(p["dropped_injected"].get<uint64_t>(), 0u);
    else
      EXPECT_EQ(p["dropped_injected"].get<uint64_t>(), 0u) << p["link"];
  }
  const test::child_result bad = test::run_in_child([] {
    return run_scenario(load_scenario_text("link: {drop_probability: 0.1, drop_links: \"h0_to_sw0,h9_to_sw0\"}\n"
                                           "writes: [{src: h0, dst: h1, bytes: 64}]\n",
                                           "t.yaml"))
        .dump();
  });
  EXPECT_FALSE(bad.ok);
  EXPECT_NE(bad.output.find("link.drop_links: no link named 'h9_to_sw0'"), std::string::npos) << bad.output;
}

}  // namespace simulation_test
}  // namespace fabricsim::testbench
