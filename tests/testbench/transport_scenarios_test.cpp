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
