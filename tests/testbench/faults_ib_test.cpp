// Faults on a small InfiniBand fat tree (switch.model quantum_x800: 2 leaves x 2 HCAs, 2 spines, 800G,
// adaptive routing; the SuperNICs as HCAs): under each fault kind every RDMA operation completes and every
// byte placed is right, or, facing a path that stays dead, its queue pair ends in retry_exceeded; no credit
// leaks (a leaked credit would leave a port unable to send and the run would not complete, and the
// end-of-run credit state is checked in tests/switch/quantum_credit_test.cpp); after detection the leaf
// routes nothing into a down uplink and the far leaf routes nothing towards it (the subnet manager's
// reroute); static LFT routing reroutes too; same seed, same run. Each run forks and takes a fraction of a
// second.
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "testbench/simulation.h"
#include "tests/support/scenario_child.h"

namespace fabricsim::testbench {
namespace faults_ib_test {

using nlohmann::json;

// Every HCA writes 1 MiB to an HCA behind the other leaf (about 11 us at 800G alone).
std::string yaml(const std::string& faults, const std::string& routing = "adaptive") {
  return "seed: 5\nrun: {limit_us: 3000}\n"
         "topology: {kind: leaf_spine, leaves: 2, hosts_per_leaf: 2, spines: 2, link_gbps: 800}\n"
         "switch: {model: quantum_x800}\n"
         "quantum: {routing: " + routing + "}\n"
         "nic: {reorder: rtl, reorder_window: 1024, rto_us: 10, retry_count: 3, cc: none}\n"
         "workload: {kind: permutation, pattern: leaf_pairs, message_bytes: 1048576}\n"
         "fault: {detect_us: 2}\n"
         "faults: [" + faults + "]\n";
}

json entry0(const json& r) { return r.at("faults").at("entries").at(0); }

void expect_all_complete_and_exact(const json& r) {
  ASSERT_TRUE(r.contains("flows"));
  EXPECT_EQ(r["completed"].get<uint64_t>(), r["operations"].get<uint64_t>());
  EXPECT_EQ(r["failed"].get<uint64_t>(), 0u);
  EXPECT_TRUE(r["verified"].get<bool>());
  EXPECT_EQ(r["mismatched_bytes"].get<uint64_t>(), 0u);
  EXPECT_EQ(r["packets_in_use_at_end"].get<uint64_t>(), 0u);
  EXPECT_EQ(r["dropped_packets"].get<uint64_t>(), 0u);  // no buffer drop: credits, whatever the fault
}

TEST(faults_ib, link_down_for_an_interval_loses_frames_then_every_operation_completes_exactly) {
  const json r = test::run_scenario_yaml(yaml("{kind: link_down, link: leaf0_to_spine1, at_us: 3, for_us: 15}"));
  expect_all_complete_and_exact(r);
  const json e = entry0(r);
  EXPECT_GT(e["frames_lost"].get<uint64_t>(), 0u);
  EXPECT_EQ(e["time_down_ns"].get<double>(), 15000.0);
  EXPECT_EQ(e["detection_ns"].get<double>(), 2000.0);
  EXPECT_EQ(e["links"], json::array({"leaf0_to_spine1", "spine1_to_leaf0"}));
  EXPECT_GT(r["fabric"]["retransmissions"].get<uint64_t>(), 0u);
}

TEST(faults_ib, link_down_with_static_lft_routing_reroutes_and_completes_exactly) {
  const json r =
      test::run_scenario_yaml(yaml("{kind: link_down, link: leaf0_to_spine1, at_us: 3, for_us: 15}", "static"));
  expect_all_complete_and_exact(r);
  EXPECT_GT(entry0(r)["frames_lost"].get<uint64_t>(), 0u);
}

TEST(faults_ib, flapping_link_loses_frames_in_each_down_window_and_every_operation_completes_exactly) {
  const json r = test::run_scenario_yaml(
      yaml("{kind: flap, link: leaf0_to_spine1, period_us: 4, down_us: 1, from_us: 2, until_us: 14}"));
  expect_all_complete_and_exact(r);
  const json e = entry0(r);
  EXPECT_GT(e["frames_lost"].get<uint64_t>(), 0u);
  EXPECT_EQ(e["time_down_ns"].get<double>(), 3000.0);  // three windows of 1 us in [2, 14) us
}

TEST(faults_ib, random_loss_and_bit_errors_are_recovered_and_every_operation_completes_exactly) {
  const json r = test::run_scenario_yaml(yaml("{kind: loss, link: leaf0_to_spine1, probability: 0.01}, "
                                              "{kind: bit_errors, link: spine0_to_leaf1, ber: 1e-6}"));
  expect_all_complete_and_exact(r);
  const json loss = r["faults"]["entries"][0], ber = r["faults"]["entries"][1];
  EXPECT_GT(loss["frames_lost"].get<uint64_t>(), 0u);
  EXPECT_EQ(loss["fcs_errors"].get<uint64_t>(), 0u);
  EXPECT_GT(ber["fcs_errors"].get<uint64_t>(), 0u);
  EXPECT_EQ(ber["frames_lost"].get<uint64_t>(), 0u);
  // The receiver's ICRC/VCRC check dropped what the bit errors hit: the link's counter agrees.
  EXPECT_EQ(r["stats"]["spine0_to_leaf1"]["fcs_errors"]["value"], ber["fcs_errors"]);
  EXPECT_GT(r["fabric"]["retransmissions"].get<uint64_t>(), 0u);
  // A 1 MiB WRITE is 256 packets of 4122-4138 bytes, 33,000 bits: at 1e-6 about 3.2 % are hit. 1 % loss
  // and 3.2 % corruption of the packets exposed, within wide bounds for a few hundred draws.
  const double lost = loss["frames_lost"].get<double>() / loss["frames_exposed"].get<double>();
  const double hit = ber["fcs_errors"].get<double>() / ber["frames_exposed"].get<double>();
  EXPECT_GT(lost, 0.002);
  EXPECT_LT(lost, 0.03);
  EXPECT_GT(hit, 0.015);
  EXPECT_LT(hit, 0.06);
}

TEST(faults_ib, a_failed_switch_port_takes_its_cable_down_and_every_operation_completes_exactly) {
  // leaf0 port 3: hosts on 0 and 1, then spine0 on 2, spine1 on 3 (docs/topology.md).
  const json r = test::run_scenario_yaml(yaml("{kind: port_down, switch: leaf0, port: 3, at_us: 3, for_us: 15}"));
  expect_all_complete_and_exact(r);
  const json e = entry0(r);
  EXPECT_EQ(e["target"], "leaf0.port3");
  EXPECT_EQ(e["links"], json::array({"leaf0_to_spine1", "spine1_to_leaf0"}));
  EXPECT_GT(e["frames_lost"].get<uint64_t>(), 0u);
}

TEST(faults_ib, after_detection_nothing_is_routed_into_or_towards_the_down_uplink) {
  const test::child_result c = test::run_in_child([] {
    std::vector<double> up, across;  // IB data packets put on leaf0_to_spine1 and on leaf1_to_spine1, first bit, ns
    run_options o;
    o.taps = {"leaf0_to_spine1=/dev/null", "leaf1_to_spine1=/dev/null"};
    o.tap_frames = [&](const core::link& l, const core::packet& p, uint64_t ns) {
      if (p.kind != core::frame_kind::infiniband || p.payload_bytes == 0) return;
      (std::string(l.name()) == "leaf0_to_spine1" ? up : across).push_back(double(ns));
    };
    json r = run_scenario(
        load_scenario_text(yaml("{kind: link_down, link: leaf0_to_spine1, at_us: 3, for_us: 15}"), "t.yaml"), o);
    r["up"] = up;
    r["across"] = across;
    return r.dump();
  });
  ASSERT_TRUE(c.ok) << c.output;
  const json r = json::parse(c.output);
  // Known down at 3 + 2 = 5 us, known up at 18 + 2 = 20 us. From 5 us leaf0 routes nothing to port 3 and
  // discards what port 3 held (a packet already on the wire finishes: at most 4138 bytes, 41.4 ns at 800G).
  // leaf1 stops sending to spine1 for leaf0's hosts at the same moment (spine1's only way to them is
  // down): as a subnet manager's reroute, it sends through spine0. In this permutation every packet leaf1
  // sends up goes to leaf0, so leaf1_to_spine1 carries no new data while the link is known down; what
  // leaf1's port 3 had queued by then still leaves (spine1 drops it as no_live_port). That queue holds at
  // most what leaf1's four ingress buffers hold, 4 x 64 KiB, 2.62 us at 800G.
  const double quiet_from = 5000.0 + 41.4, quiet_until = 20000.0;
  const double across_quiet_from = 5000.0 + 4 * 65536 * 8 / 800.0 + 41.4;
  uint64_t before = 0, during = 0, after = 0, across_during = 0;
  for (const json& t : r["up"]) {
    const double ns = t.get<double>();
    before += ns < 3000.0;
    during += ns >= quiet_from && ns < quiet_until;
    after += ns >= quiet_until;
  }
  for (const json& t : r["across"]) {
    const double ns = t.get<double>();
    across_during += ns >= across_quiet_from && ns < quiet_until;
  }
  EXPECT_GT(before, 0u);
  EXPECT_EQ(during, 0u);
  EXPECT_EQ(across_during, 0u);
  EXPECT_GT(after, 0u);  // back in the set once known up
  EXPECT_TRUE(r["verified"].get<bool>());
}

TEST(faults_ib, a_host_cable_that_stays_down_ends_its_queue_pairs_in_retry_exceeded) {
  // h0's cable dies at 3 us for good: the WRITE from h0 and the WRITE to h0 run out of retries (rto 10 us,
  // retry_count 3) and complete in error (IBV_WC_RETRY_EXC_ERR). Once the down port is known, leaf0
  // discards what it held for h0 and drops later packets for h0 (no live port); the others complete exactly.
  const json r = test::run_scenario_yaml(yaml("{kind: link_down, link: h0_to_leaf0, at_us: 3}"));
  test::expect_only_flows_of_dead_host_fail(r, "h0");
  EXPECT_EQ(entry0(r)["end_ns"], nullptr);
  EXPECT_EQ(r["packets_in_use_at_end"].get<uint64_t>(), 0u);
}

TEST(faults_ib, same_seed_same_run) {
  const std::string y = yaml("{kind: flap, link: leaf0_to_spine1, period_us: 5, down_us: 1}, "
                             "{kind: loss, link: spine1_to_leaf1, probability: 0.02}");
  const json a = test::run_scenario_yaml(y), b = test::run_scenario_yaml(y);
  ASSERT_TRUE(a.contains("faults"));
  EXPECT_EQ(a["faults"], b["faults"]);
  EXPECT_EQ(a["flows"], b["flows"]);
  EXPECT_EQ(a["stats"], b["stats"]);
}

// A link failing during a collective: an 8-rank alltoall of 8 MiB (1 MiB to each peer) on 2 leaves x 4 HCAs
// under 4 spines at 400G; the leaf0-spine1 cable fails in the second iteration. Before it, each iteration is
// the hosts' own 7 MiB at line rate; after the reroute, leaf0's traffic to leaf1's 4 HCAs crosses 3 uplinks
// and IB forwards by destination, so one uplink carries two destinations' 2 x 4 MiB (pigeonhole): each later
// iteration takes 8 MiB at line rate. IB wire efficiency 4096/4122 (LRH, BTH, RETH-less data, ICRC, VCRC).
TEST(faults_ib, a_link_failing_during_an_alltoall_is_rerouted_and_every_byte_checked) {
  const json r = test::run_scenario_yaml(
      "seed: 1\n"
      "topology: {kind: leaf_spine, leaves: 2, hosts_per_leaf: 4, spines: 4, link_gbps: 400}\n"
      "switch: {model: quantum_x800}\n"
      "workload: {kind: collective}\n"
      "collective: {op: alltoall, algo: ring, min_bytes: 8388608, max_bytes: 8388608, iterations: 4,"
      " warmup_iterations: 0}\n"
      "faults: [{kind: link_down, link: leaf0_to_spine1, at_us: 200}]\n");
  ASSERT_TRUE(r.contains("collective")) << r.dump().substr(0, 2000);
  EXPECT_TRUE(r["verified"].get<bool>());
  EXPECT_GT(r["checked_bytes"].get<uint64_t>(), 0u);
  ASSERT_TRUE(r.contains("faults"));
  EXPECT_GT(r["faults"]["entries"][0]["frames_lost"].get<uint64_t>(), 0u);
  const json& t = r["collective"]["rows"][0]["iteration_times_us"];
  ASSERT_EQ(t.size(), 4u);
  const double wire = 4096.0 / 4122.0, mib_us = 1048576.0 * 8 / (400e9 * wire) * 1e6;
  EXPECT_GE(t[0].get<double>(), 7 * mib_us);  // before the fault: the hosts' own bytes
  EXPECT_LE(t[0].get<double>(), 7 * mib_us * 1.03);
  EXPECT_GT(t[1].get<double>(), t[0].get<double>());  // the one the fault hit
  for (size_t i = 2; i < 4; ++i) {
    EXPECT_GE(t[i].get<double>(), 8 * mib_us) << i;  // two destinations on one uplink
    EXPECT_LE(t[i].get<double>(), 8 * mib_us * 1.03) << i;
  }
}

}  // namespace faults_ib_test
}  // namespace fabricsim::testbench
