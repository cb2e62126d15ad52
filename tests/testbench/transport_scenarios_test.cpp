// The transport scenarios in small versions: packet spraying over slow uplinks (testbench/scenarios/
// spraying.yaml) and loss recovery for WRITEs and READs (loss_recovery.yaml). Bounds from hand figures.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <tuple>

#include "sc_models/core/packet.h"
#include "tests/support/scenario_child.h"

namespace fabricsim::testbench {
namespace transport_scenarios_test {

using nlohmann::json;

// testbench/scenarios/spraying.yaml: one QP from h0 (leaf 0) to h1 (leaf 1), 400 Gb/s host links, 8 spines
// behind 100 Gb/s uplinks, 8 x 1 MiB WRITEs, measured from 20 us (once the pipeline is full) to the last
// completion (with 4 WRITEs the tail after the last packet weighs more: adaptive routing measured 94.7 %).
// Adaptive routing as in the scenario: the hashed uplink up to 16 KiB queued, then the least-loaded one.
std::string spraying(const std::string& routing, const std::string& entropy) {
  std::string writes;
  for (int i = 0; i < 8; ++i) writes += "  - {src: h0, dst: h1, bytes: 1048576}\n";
  return R"(run: {warmup_us: 20}
topology: {kind: leaf_spine, leaves: 2, hosts_per_leaf: 1, spines: 8, link_gbps: 400, uplink_gbps: 100}
switch: {routing: )" + routing + R"(, ar_threshold_bytes: 16384}
nic: {path_entropy: )" + entropy + R"(, reorder_window: 1024}
writes:
)" + writes;
}

// A full-MTU middle packet on the wire: preamble 8 + Ethernet 14 + IPv4 20 + UDP 8 + BTH 12 + 4096 + ICRC 4
// + FCS 4 + gap 12 = 4178 bytes for 4096 of payload.
double payload_fraction() {
  namespace h = core::header_bytes;
  const double wire = h::preamble_sfd + h::ethernet + h::ipv4 + h::udp + h::bth + 4096 + h::icrc + h::fcs +
                      h::inter_frame_gap;
  return 4096.0 / wire;
}

TEST(transport_scenarios, adaptive_routing_sprays_one_qp_to_line_rate_and_ecmp_holds_it_to_one_uplink) {
  const json ar = test::run_scenario_yaml(spraying("adaptive", "fixed"));
  const json ecmp = test::run_scenario_yaml(spraying("ecmp", "fixed"));
  const json nic_sprayed = test::run_scenario_yaml(spraying("ecmp", "per_packet"));
  ASSERT_TRUE(ar.contains("fabric") && ecmp.contains("fabric") && nic_sprayed.contains("fabric"));
  for (const json* r : {&ar, &ecmp, &nic_sprayed}) {
    EXPECT_TRUE((*r)["verified"].get<bool>());
    EXPECT_EQ((*r)["completed"], 8u);
    // Completions in posting order: one QP completes its work requests in order.
    for (size_t i = 1; i < 8; ++i)
      EXPECT_LT((*r)["flows"][i - 1]["completed_ns"].get<double>(), (*r)["flows"][i]["completed_ns"].get<double>());
  }
  // Adaptive routing spreads the one QP over the 8 x 100 Gb/s uplinks, which carry the 400 Gb/s host link: the
  // payload delivered over the window is bounded only by the host link's wire format (4096/4178 = 98 %); the
  // issue asks for 95 %. The same holds when the NIC sprays (per-packet entropy) over ECMP.
  for (const json* r : {&ar, &nic_sprayed}) {
    EXPECT_GE((*r)["fabric"]["effective_throughput"].get<double>(), 0.95);
    EXPECT_LE((*r)["fabric"]["effective_throughput"].get<double>(), payload_fraction() + 1e-9);
    // Reordered on the way, put back at the responder: out-of-order arrivals with their distance histogram,
    // a reorder peak within the 1024-PSN window, and no NAK or resend.
    EXPECT_GT((*r)["fabric"]["out_of_order_packets"].get<uint64_t>(), 0u);
    const json& h = (*r)["stats"]["h1_nic"]["ooo_distance"];
    EXPECT_EQ(h["count"], (*r)["fabric"]["out_of_order_packets"]);  // only h1 receives data
    EXPECT_FALSE(h["buckets"].empty());
    EXPECT_GE(h["min"].get<uint64_t>(), 1u);  // out of order: at least one PSN ahead of the expected one
    EXPECT_GT((*r)["fabric"]["reorder_peak_packets"].get<uint64_t>(), 0u);
    EXPECT_LE((*r)["fabric"]["reorder_peak_packets"].get<uint64_t>(), 1024u);
    EXPECT_EQ((*r)["fabric"]["retransmissions"], 0u);
  }
  // ECMP with a fixed port: the hash sends every packet up one 100 Gb/s uplink: at most 100/400 of the line
  // rate, times the payload fraction (24.5 %); in order, so nothing is held.
  const double fixed_bound = 100.0 / 400.0 * payload_fraction();
  EXPECT_LE(ecmp["fabric"]["effective_throughput"].get<double>(), fixed_bound + 1e-9);
  EXPECT_GT(ecmp["fabric"]["effective_throughput"].get<double>(), 0.9 * fixed_bound);
  EXPECT_EQ(ecmp["fabric"]["out_of_order_packets"], 0u);
  EXPECT_EQ(ecmp["fabric"]["reorder_peak_packets"], 0u);
}

// WRITEs h0 -> h1 and READs h2 <- h3 over links losing 1 % of frames, both retransmission modes: every
// operation completes, memory is byte-exact, and the losses were recovered by retransmissions.
class loss_recovery : public ::testing::TestWithParam<const char*> {};

TEST_P(loss_recovery, writes_and_reads_complete_byte_exact_under_one_percent_loss) {
  const json r = test::run_scenario_yaml(std::string(R"(seed: 3
topology: {kind: single_switch, hosts: 4, link_gbps: 400}
link: {drop_probability: 0.01}
nic: {rto_us: 16.384, retransmission: )") + GetParam() + R"(}
writes:
  - {src: h0, dst: h1, bytes: 262144}
  - {src: h0, dst: h1, bytes: 262147}
  - {src: h2, dst: h3, bytes: 262144, op: read}
  - {src: h2, dst: h3, bytes: 262147, op: read}
)");
  ASSERT_TRUE(r.contains("fabric"));
  EXPECT_TRUE(r["verified"].get<bool>());
  EXPECT_EQ(r["completed"], 4u);
  EXPECT_EQ(r["mismatched_bytes"], 0u);
  EXPECT_EQ(r["op_counts"]["write"], 2u);
  EXPECT_EQ(r["op_counts"]["read"], 2u);
  // About 4 x 65 data packets (WRITE packets and READ responses) plus their ACKs cross two lossy links each
  // at 1 %: some are lost (seed 3 loses some), and each loss must have been made good by a resend or a
  // re-issued READ.
  ASSERT_GT(r["fabric"]["injected_drops"].get<uint64_t>(), 0u);
  EXPECT_GT(r["fabric"]["retransmissions"].get<uint64_t>(), 0u);
}

INSTANTIATE_TEST_SUITE_P(modes, loss_recovery, ::testing::Values("selective", "go_back_n"));

// Issue 20, item 1: a READ stands for one PSN per response, and a READ with more responses than
// nic.reorder_window used to be dropped as out of window until the requester ran out of retries (257 KiB at MTU
// 1024 with the 256-PSN window failed, 256 KiB passed). In order, the responder's head now moves past every
// response PSN (IBTA 9.7.4), so READs of any size complete with any window.
TEST(transport_scenarios, reads_larger_than_the_reorder_window_complete_in_order) {
  const json r = test::run_scenario_yaml(R"(seed: 3
topology: {kind: single_switch, hosts: 4, link_gbps: 400}
nic: {mtu_bytes: 1024, reorder_window: 256}
writes:
  - {src: h0, dst: h1, bytes: 263168, op: read}
  - {src: h2, dst: h3, bytes: 1048576, op: read}
  - {src: h2, dst: h3, bytes: 4096}
)");
  ASSERT_TRUE(r.contains("flows"));
  EXPECT_EQ(r["completed"], 3u);
  EXPECT_TRUE(r["verified"].get<bool>());
  EXPECT_EQ(r["mismatched_bytes"], 0u);
  EXPECT_EQ(r["stats"]["h1_nic"]["rx_out_of_window"]["value"], 0u);
  EXPECT_EQ(r["stats"]["h3_nic"]["rx_out_of_window"]["value"], 0u);
  // The 1 MiB READ's 1,024 responses cross one 400 Gb/s link: at least its payload's serialization,
  // 1,048,576 x 8 / 400 = 20,971.52 ns; headers, the request and the switch add a few percent, not double.
  const double fct = r["flows"][1]["fct_ns"].get<double>();
  EXPECT_GT(fct, 20971.52);
  EXPECT_LT(fct, 2 * 20971.52);
}

// The smallest window the RTL is built for (64 PSNs) and a 4 MiB READ at MTU 256: 16,384 response PSNs, 256
// windows' worth.
TEST(transport_scenarios, a_read_of_256_windows_completes_at_the_smallest_window) {
  const json r = test::run_scenario_yaml(R"(topology: {kind: single_switch, hosts: 2, link_gbps: 400}
nic: {mtu_bytes: 256, reorder_window: 64}
writes:
  - {src: h0, dst: h1, bytes: 4194304, op: read}
)");
  ASSERT_TRUE(r.contains("flows"));
  EXPECT_EQ(r["completed"], 1u);
  EXPECT_TRUE(r["verified"].get<bool>());
  EXPECT_EQ(r["stats"]["h0_nic"]["rx_read_responses"]["value"], 16384u);  // 4 MiB / 256 B, each once
}

// Out of order: adaptive routing sprays one QP over 8 spines, so a READ request can overtake the WRITE
// before it. A READ ahead of a gap whose responses do not fit the 64-PSN window waits at the responder until
// the head reaches it (rx_read_deferred), instead of being dropped; with and without loss, in both
// retransmission modes, every operation completes byte for byte.
class big_reads_out_of_order : public ::testing::TestWithParam<std::tuple<const char*, const char*>> {};

TEST_P(big_reads_out_of_order, complete_byte_exact) {
  const auto [mode, loss] = GetParam();
  const json r = test::run_scenario_yaml(std::string(R"(seed: 5
topology: {kind: leaf_spine, leaves: 2, hosts_per_leaf: 1, spines: 8, link_gbps: 400, uplink_gbps: 100}
switch: {routing: adaptive, ar_threshold_bytes: 4096}
link: {drop_probability: )") + loss + R"(}
nic: {mtu_bytes: 1024, reorder_window: 64, rto_us: 16.384, retransmission: )" +
                                         mode + R"(}
writes:
  - {src: h0, dst: h1, bytes: 262144}
  - {src: h0, dst: h1, bytes: 1048576, op: read}
  - {src: h0, dst: h1, bytes: 131072}
  - {src: h0, dst: h1, bytes: 2000003, op: read}
  - {src: h1, dst: h0, bytes: 65536, op: read}
)");
  ASSERT_TRUE(r.contains("flows"));
  EXPECT_EQ(r["completed"], 5u);
  EXPECT_TRUE(r["verified"].get<bool>());
  EXPECT_EQ(r["mismatched_bytes"], 0u);
  EXPECT_GT(r["fabric"]["out_of_order_packets"].get<uint64_t>(), 0u);
  if (std::string(loss) == "0") {
    // Without loss the run shows the deferral itself (seed 5: both big READs overtake a WRITE packet).
    EXPECT_GT(r["stats"]["h1_nic"]["rx_read_deferred"]["value"].get<uint64_t>(), 0u);
    EXPECT_EQ(r["fabric"]["retransmissions"], 0u);
  } else {
    ASSERT_GT(r["fabric"]["injected_drops"].get<uint64_t>(), 0u);
  }
}

INSTANTIATE_TEST_SUITE_P(modes, big_reads_out_of_order,
                         ::testing::Combine(::testing::Values("selective", "go_back_n"),
                                            ::testing::Values("0", "0.01")),
                         [](const auto& info) {
                           return std::string(std::get<0>(info.param)) +
                                  (std::string(std::get<1>(info.param)) == "0" ? "_lossless" : "_1pct_loss");
                         });

// Issue 20, item 2: h0 at MTU 4096 writing to h1 at MTU 1024 used to complete "successfully" with 64,256
// wrong bytes (each end cut the message at its own MTU). A queue pair now has one path MTU, the smaller end's:
// h0 sends the 1 MiB WRITE as 1,048,576 / 1,024 = 1,024 packets and the 70,000-byte SEND as
// ceil(70,000 / 1,024) = 69; h1's 100,003-byte READ of h0 is answered in ceil(100,003 / 1,024) = 98.
const char* mismatched_mtus = R"(topology: {kind: single_switch, hosts: 2, link_gbps: 400}
nic: {mtu_bytes: 4096}
nic_overrides:
  h1: {mtu_bytes: 1024}
writes:
  - {src: h0, dst: h1, bytes: 1048576}
  - {src: h1, dst: h0, bytes: 100003, op: read}
  - {src: h0, dst: h1, bytes: 70000, op: send}
)";

TEST(transport_scenarios, a_queue_pair_uses_the_smaller_ends_mtu_and_places_every_byte) {
  const json r = test::run_scenario_yaml(mismatched_mtus);
  ASSERT_TRUE(r.contains("flows"));
  EXPECT_EQ(r["completed"], 3u);
  EXPECT_TRUE(r["verified"].get<bool>());
  EXPECT_EQ(r["mismatched_bytes"], 0u);
  EXPECT_EQ(r["stats"]["h0_nic"]["tx_data_packets"]["value"], 1024u + 69u);
  EXPECT_EQ(r["stats"]["h1_nic"]["rx_read_responses"]["value"], 98u);
}

// nic.path_mtu_bytes sets it below both ends: 512 B gives 2,048 + ceil(70,000 / 512) = 137 packets.
TEST(transport_scenarios, nic_path_mtu_bytes_sets_the_queue_pairs_mtu) {
  std::string yaml = mismatched_mtus;
  yaml.replace(yaml.find("h1: {mtu_bytes: 1024}"), 21, "h1: {mtu_bytes: 1024}\n  h0: {path_mtu_bytes: 512}");
  const json r = test::run_scenario_yaml(yaml);
  ASSERT_TRUE(r.contains("flows"));
  EXPECT_TRUE(r["verified"].get<bool>());
  EXPECT_EQ(r["stats"]["h0_nic"]["tx_data_packets"]["value"], 2048u + 137u);
}

// A path MTU that does not fit both ends, or two ends asking for different ones, is refused naming the
// hosts and the keys.
TEST(transport_scenarios, an_impossible_path_mtu_is_refused_naming_hosts_and_keys) {
  using testbench::load_scenario_text;
  using testbench::run_scenario;
  const auto error_of = [](const std::string& yaml) {
    const test::child_result r = test::run_in_child([&] {
      try {
        run_scenario(load_scenario_text(yaml, "t.yaml"));
      } catch (const std::exception& e) {
        return std::string(e.what());
      }
      return std::string("no error");
    });
    return r.output;
  };
  const std::string base = R"(topology: {kind: single_switch, hosts: 2, link_gbps: 400}
writes:
  - {src: h0, dst: h1, bytes: 4096}
)";
  const std::string big = error_of(base + "nic: {path_mtu_bytes: 2048}\nnic_overrides: {h1: {mtu_bytes: 1024}}\n");
  EXPECT_NE(big.find("t.yaml"), std::string::npos) << big;
  EXPECT_NE(big.find("nic.path_mtu_bytes 2048"), std::string::npos) << big;
  EXPECT_NE(big.find("h0 <-> h1"), std::string::npos) << big;
  EXPECT_NE(big.find("nic_overrides.h1.mtu_bytes 1024"), std::string::npos) << big;
  const std::string two = error_of(base + "nic_overrides: {h0: {path_mtu_bytes: 512}, h1: {path_mtu_bytes: 1024}}\n");
  EXPECT_NE(two.find("nic_overrides.h0.path_mtu_bytes is 512"), std::string::npos) << two;
  EXPECT_NE(two.find("nic_overrides.h1.path_mtu_bytes is 1024"), std::string::npos) << two;
}

// SENDs and WRITEs with immediate through a fabric: the testbench posts a receive buffer per SEND.
TEST(transport_scenarios, sends_and_writes_with_immediate_are_posted_and_verified) {
  const json r = test::run_scenario_yaml(R"(topology: {kind: single_switch, hosts: 2, link_gbps: 400}
nic: {path_entropy: per_flowlet}
writes:
  - {src: h0, dst: h1, bytes: 100000, op: send}
  - {src: h0, dst: h1, bytes: 5000, op: write_imm}
  - {src: h1, dst: h0, bytes: 7, op: send_imm}
  - {src: h0, dst: h1, bytes: 0, op: read}
)");
  ASSERT_TRUE(r.contains("fabric"));
  EXPECT_TRUE(r["verified"].get<bool>());
  EXPECT_EQ(r["completed"], 4u);
  EXPECT_EQ(r["op_counts"]["send"], 1u);
  EXPECT_EQ(r["op_counts"]["write_imm"], 1u);
  EXPECT_EQ(r["op_counts"]["send_imm"], 1u);
  EXPECT_EQ(r["op_counts"]["read"], 1u);
  EXPECT_EQ(r["flows"][0]["op"], "send");
}

}  // namespace transport_scenarios_test
}  // namespace fabricsim::testbench
