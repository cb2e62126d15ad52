// Faults on a small Spectrum-X leaf-spine (2 leaves x 2 hosts, 2 spines, 400G, adaptive routing): under each
// fault kind every RDMA operation completes and every byte placed is right, or, facing a path that stays
// dead, its queue pair ends in retry_exceeded; routing sends nothing into a link known down; same seed,
// same run; bad entries are refused naming the entry and field. Each run forks (SystemC elaborates once per
// process) and takes a fraction of a second.
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "testbench/simulation.h"
#include "tests/support/scenario_child.h"

namespace fabricsim::testbench {
namespace {

using nlohmann::json;

// Every host writes 1 MiB to a host behind the other leaf (about 21 us at 400G alone).
std::string yaml(const std::string& faults, const std::string& extra = "") {
  return "seed: 5\nrun: {limit_us: 3000}\n"
         "topology: {kind: leaf_spine, leaves: 2, hosts_per_leaf: 2, spines: 2, link_gbps: 400}\n"
         "switch: {routing: adaptive}\n"
         "nic: {path_entropy: fixed, reorder: rtl, reorder_window: 1024, rto_us: 10, retry_count: 3}\n"
         "workload: {kind: permutation, pattern: leaf_pairs, message_bytes: 1048576}\n"
         "fault: {detect_us: 2}\n"
         "faults: [" + faults + "]\n" + extra;
}

json entry0(const json& r) { return r.at("faults").at("entries").at(0); }

void expect_all_complete_and_exact(const json& r) {
  ASSERT_TRUE(r.contains("flows"));
  EXPECT_EQ(r["completed"].get<uint64_t>(), r["operations"].get<uint64_t>());
  EXPECT_EQ(r["failed"].get<uint64_t>(), 0u);
  EXPECT_TRUE(r["verified"].get<bool>());
  EXPECT_EQ(r["mismatched_bytes"].get<uint64_t>(), 0u);
  EXPECT_EQ(r["packets_in_use_at_end"].get<uint64_t>(), 0u);
}

TEST(faults, link_down_for_an_interval_loses_frames_then_every_operation_completes_exactly) {
  const json r = test::run_scenario_yaml(yaml("{kind: link_down, link: leaf0_to_spine1, at_us: 5, for_us: 15}"));
  expect_all_complete_and_exact(r);
  const json e = entry0(r);
  EXPECT_GT(e["frames_lost"].get<uint64_t>(), 0u);
  EXPECT_EQ(e["time_down_ns"].get<double>(), 15000.0);
  EXPECT_EQ(e["detection_ns"].get<double>(), 2000.0);
  EXPECT_EQ(e["links"], json::array({"leaf0_to_spine1", "spine1_to_leaf0"}));  // the whole cable
  EXPECT_GT(r["fabric"]["retransmissions"].get<uint64_t>(), 0u);
}

TEST(faults, flapping_link_loses_frames_in_each_down_window_and_every_operation_completes_exactly) {
  const json r = test::run_scenario_yaml(
      yaml("{kind: flap, link: leaf0_to_spine1, period_us: 10, down_us: 2, from_us: 3, until_us: 43}"));
  expect_all_complete_and_exact(r);
  const json e = entry0(r);
  EXPECT_GT(e["frames_lost"].get<uint64_t>(), 0u);
  // Four windows of 2 us in [3, 43) us.
  EXPECT_EQ(e["time_down_ns"].get<double>(), 8000.0);
}

TEST(faults, random_loss_and_bit_errors_are_recovered_and_every_operation_completes_exactly) {
  const json r = test::run_scenario_yaml(yaml("{kind: loss, link: leaf0_to_spine1, probability: 0.01}, "
                                              "{kind: bit_errors, link: spine0_to_leaf1, ber: 1e-6}"));
  expect_all_complete_and_exact(r);
  const json loss = r["faults"]["entries"][0], ber = r["faults"]["entries"][1];
  EXPECT_GT(loss["frames_lost"].get<uint64_t>(), 0u);
  EXPECT_EQ(loss["fcs_errors"].get<uint64_t>(), 0u);
  EXPECT_GT(ber["fcs_errors"].get<uint64_t>(), 0u);
  EXPECT_EQ(ber["frames_lost"].get<uint64_t>(), 0u);
  // The receiver counts what it dropped at its FCS check: the link's counter agrees with the entry's.
  EXPECT_EQ(r["stats"]["spine0_to_leaf1"]["fcs_errors"]["value"], ber["fcs_errors"]);
  EXPECT_GT(r["fabric"]["retransmissions"].get<uint64_t>(), 0u);
}

TEST(faults, a_failed_switch_port_takes_its_cable_down_and_every_operation_completes_exactly) {
  // leaf0 port 3: hosts on 0 and 1, then spine0 on 2, spine1 on 3 (docs/topology.md).
  const json r = test::run_scenario_yaml(yaml("{kind: port_down, switch: leaf0, port: 3, at_us: 5, for_us: 15}"));
  expect_all_complete_and_exact(r);
  const json e = entry0(r);
  EXPECT_EQ(e["target"], "leaf0.port3");
  EXPECT_EQ(e["links"], json::array({"leaf0_to_spine1", "spine1_to_leaf0"}));
  EXPECT_GT(e["frames_lost"].get<uint64_t>(), 0u);
}

TEST(faults, after_detection_no_data_frame_is_routed_into_the_down_uplink) {
  const test::child_result c = test::run_in_child([] {
    std::vector<double> starts;  // RoCE frames put on leaf0_to_spine1, first bit, ns
    run_options o;
    o.taps = {"leaf0_to_spine1=/dev/null"};
    o.tap_frames = [&](const core::link&, const core::packet& p, uint64_t ns) {
      if (p.kind == core::frame_kind::roce) starts.push_back(double(ns));
    };
    json r = run_scenario(
        load_scenario_text(yaml("{kind: link_down, link: leaf0_to_spine1, at_us: 5, for_us: 15}"), "t.yaml"), o);
    r["tap_starts"] = starts;
    return r.dump();
  });
  ASSERT_TRUE(c.ok) << c.output;
  const json r = json::parse(c.output);
  // Known down at 5 + 2 = 7 us. From then on the leaf routes nothing to port 3; what its queue held at that
  // moment (at most its peak depth, plus the MAC FIFO's 4 frames of at most 4200 B) still drains at line
  // rate. No data frame may start after that, until the link is known up again at 20 + 2 us.
  const double max_queue = r["stats"]["leaf0.port3"]["max_queue_bytes"]["value"].get<double>();
  const double drain_ns = (max_queue + 4 * 4200.0) * 8.0 / 400.0;
  const double quiet_from = 7000.0 + drain_ns, quiet_until = 22000.0;
  ASSERT_LT(quiet_from, quiet_until);
  uint64_t before = 0, during = 0, after = 0;
  for (const json& t : r["tap_starts"]) {
    const double ns = t.get<double>();
    before += ns < 5000.0;
    during += ns >= quiet_from && ns < quiet_until;
    after += ns >= quiet_until;
  }
  EXPECT_GT(before, 0u);  // it carried traffic before the fault
  EXPECT_EQ(during, 0u);
  EXPECT_GT(after, 0u);   // and rejoined the set once known up
  EXPECT_TRUE(r["verified"].get<bool>());
}

TEST(faults, a_host_cable_that_stays_down_ends_its_queue_pairs_in_retry_exceeded) {
  // h0's cable dies at 5 us for good. The WRITE from h0 loses every packet, the WRITE to h0 every packet
  // or acknowledgement: both QPs run out of retries (rto 10 us, retry_count 3) and complete in error
  // (IBV_WC_RETRY_EXC_ERR; one WRITE per QP, so nothing behind it to flush). The other WRITEs avoid h0 and
  // complete exactly.
  const json r = test::run_scenario_yaml(yaml("{kind: link_down, link: h0_to_leaf0, at_us: 5}"));
  test::expect_only_flows_of_dead_host_fail(r, "h0");
  EXPECT_EQ(entry0(r)["end_ns"], nullptr);
  EXPECT_EQ(r["packets_in_use_at_end"].get<uint64_t>(), 0u);
}

TEST(faults, same_seed_same_run) {
  const std::string y = yaml("{kind: flap, link: leaf0_to_spine1, period_us: 10, down_us: 2}, "
                             "{kind: loss, link: spine1_to_leaf1, probability: 0.02}");
  const json a = test::run_scenario_yaml(y), b = test::run_scenario_yaml(y);
  ASSERT_TRUE(a.contains("faults"));
  EXPECT_EQ(a["faults"], b["faults"]);
  EXPECT_EQ(a["flows"], b["flows"]);
  EXPECT_EQ(a["stats"], b["stats"]);
}

TEST(faults, bad_entries_name_the_entry_and_the_field) {
  auto error = [](const std::string& faults) {
    try {
      load_scenario_text(yaml(faults), "t.yaml");
    } catch (const core::config_error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(error("{kind: link_down, link: leaf0_to_spine1}").find("faults.0: missing required key at_us"),
            std::string::npos);
  EXPECT_NE(error("{kind: loss, link: x, probability: 0.1, at_us: 3}").find("faults.0.at_us: does not apply to kind loss"),
            std::string::npos);
  EXPECT_NE(error("{kind: flap, link: x, period_us: 2, down_us: 2}").find("0 < down_us < period_us"),
            std::string::npos);
  EXPECT_NE(error("{kind: melt, link: x}").find("faults.0.kind"), std::string::npos);
  // Link names are checked against the fabric: elaboration only.
  const test::child_result c = test::run_in_child([] {
    run_options o;
    o.elaborate_only = true;
    run_scenario(load_scenario_text(yaml("{kind: loss, link: leaf0_to_spine7, probability: 0.1}"), "t.yaml"), o);
    return std::string("no error");
  });
  EXPECT_FALSE(c.ok);
  EXPECT_NE(c.output.find("faults.0.link: no link named 'leaf0_to_spine7'; links are named <from>_to_<to>"),
            std::string::npos)
      << c.output;
}

}  // namespace
}  // namespace fabricsim::testbench
