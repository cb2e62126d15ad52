// The transport scenarios in small versions: packet spraying over slow uplinks (testbench/scenarios/
// spraying.yaml) and loss recovery for WRITEs and READs (loss_recovery.yaml). Bounds from hand figures.
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "sc_models/core/packet.h"
#include "tests/support/scenario_child.h"

namespace fabricsim::testbench {
namespace {

using nlohmann::json;

// One QP from h0 (leaf 0) to h1 (leaf 1): 400 Gb/s host links, 8 spines behind 100 Gb/s uplinks, ECMP,
// 4 x 1 MiB WRITEs, measured from 20 us (once the pipeline is full).
std::string spraying(const std::string& entropy) {
  return R"(run: {warmup_us: 20}
topology: {kind: leaf_spine, leaves: 2, hosts_per_leaf: 1, spines: 8, link_gbps: 400, uplink_gbps: 100}
switch: {routing: ecmp}
nic: {path_entropy: )" + entropy + R"(, reorder_window: 1024}
writes:
  - {src: h0, dst: h1, bytes: 1048576}
  - {src: h0, dst: h1, bytes: 1048576}
  - {src: h0, dst: h1, bytes: 1048576}
  - {src: h0, dst: h1, bytes: 1048576}
)";
}

// A full-MTU middle packet on the wire: preamble 8 + Ethernet 14 + IPv4 20 + UDP 8 + BTH 12 + 4096 + ICRC 4
// + FCS 4 + gap 12 = 4178 bytes for 4096 of payload.
double payload_fraction() {
  namespace h = core::header_bytes;
  const double wire = h::preamble_sfd + h::ethernet + h::ipv4 + h::udp + h::bth + 4096 + h::icrc + h::fcs +
                      h::inter_frame_gap;
  return 4096.0 / wire;
}

TEST(transport_scenarios, spraying_reaches_line_rate_and_a_fixed_port_is_held_to_one_uplink) {
  const json sprayed = test::run_scenario_yaml(spraying("per_packet"));
  const json fixed = test::run_scenario_yaml(spraying("fixed"));
  ASSERT_TRUE(sprayed.contains("fabric") && fixed.contains("fabric"));
  for (const json* r : {&sprayed, &fixed}) {
    EXPECT_TRUE((*r)["verified"].get<bool>());
    EXPECT_EQ((*r)["completed"], 4u);
    // Completions in posting order: one QP completes its work requests in order.
    for (size_t i = 1; i < 4; ++i)
      EXPECT_LT((*r)["flows"][i - 1]["completed_ns"].get<double>(), (*r)["flows"][i]["completed_ns"].get<double>());
  }
  // Sprayed: 8 x 100 Gb/s of uplinks carry the 400 Gb/s host link, so the payload delivered over the window is
  // bounded only by the host link's wire format (4096/4178 = 98 %); the bound required is 95 %.
  EXPECT_GE(sprayed["fabric"]["effective_throughput"].get<double>(), 0.95);
  EXPECT_LE(sprayed["fabric"]["effective_throughput"].get<double>(), payload_fraction() + 1e-9);
  // Reordered on the way, put back at the responder: out-of-order arrivals and a reorder peak, no NAK.
  EXPECT_GT(sprayed["fabric"]["out_of_order_packets"].get<uint64_t>(), 0u);
  EXPECT_GT(sprayed["fabric"]["reorder_peak_packets"].get<uint64_t>(), 0u);
  EXPECT_EQ(sprayed["fabric"]["retransmissions"], 0u);
  // Fixed: the hash sends every packet up one 100 Gb/s uplink: at most 100/400 of the line rate, times the
  // payload fraction (24.5 %); in order, so nothing is held.
  const double fixed_bound = 100.0 / 400.0 * payload_fraction();
  EXPECT_LE(fixed["fabric"]["effective_throughput"].get<double>(), fixed_bound + 1e-9);
  EXPECT_GT(fixed["fabric"]["effective_throughput"].get<double>(), 0.9 * fixed_bound);
  EXPECT_EQ(fixed["fabric"]["out_of_order_packets"], 0u);
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

}  // namespace
}  // namespace fabricsim::testbench
