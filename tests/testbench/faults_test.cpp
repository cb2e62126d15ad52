// Faults on a small Spectrum-X leaf-spine (2 leaves x 2 hosts, 2 spines, 400G, adaptive routing): under each
// fault kind every RDMA operation completes and every byte placed is right, or, facing a path that stays
// dead, its queue pair ends in retry_exceeded; routing sends nothing into a link known down; same seed,
// same run; bad entries are refused naming the entry and field. Each run forks (SystemC elaborates once per
// process) and takes a fraction of a second.
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "testbench/simulation.h"
#include "tests/support/scenario_child.h"

namespace fabricsim::testbench {
namespace faults_test {

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

namespace {

// leaf0's cable to spine1 down from 5 to 20 us, detected 2 us later at its ends; a fault notification
// `notification_us` after that tells leaf1. RoCE frames leaf1 puts on its cable to spine1 (every one is bound
// for leaf0's hosts: leaf_pairs sends leaf1's data, and the ACKs of leaf0's data, to leaf0), first bit in ns.
json run_remote(const std::string& notification) {
  const test::child_result c = test::run_in_child([notification] {
    std::vector<double> starts;
    run_options o;
    o.taps = {"leaf1_to_spine1=/dev/null"};
    o.tap_frames = [&](const core::link&, const core::packet& p, uint64_t ns) {
      if (p.kind == core::frame_kind::roce) starts.push_back(double(ns));
    };
    std::string y = yaml("{kind: link_down, link: leaf0_to_spine1, at_us: 5, for_us: 15}");
    y.replace(y.find("fault: {detect_us: 2}"), 21, "fault: {detect_us: 2, " + notification + "}");
    json r = run_scenario(load_scenario_text(y, "t.yaml"), o);
    r["tap_starts"] = starts;
    return r.dump();
  });
  EXPECT_TRUE(c.ok) << c.output;
  return c.ok ? json::parse(c.output) : json{};
}

uint64_t frames_between(const json& r, double from_ns, double until_ns) {
  uint64_t n = 0;
  for (const json& t : r["tap_starts"]) n += t.get<double>() >= from_ns && t.get<double>() < until_ns;
  return n;
}

}  // namespace

TEST(faults, after_the_fault_notification_the_far_leaf_sends_nothing_towards_the_spine_that_lost_its_way) {
  const json r = run_remote("notification_us: 1");
  ASSERT_TRUE(r.contains("stats"));
  // leaf1 learns at 5 + 2 + 1 = 8 us that spine1 no longer reaches leaf0's hosts, and routes none of their
  // frames to it; what its port 3 (to spine1) held then, at most its peak depth plus the MAC FIFO's 4 frames
  // of at most 4200 B, still drains at 400 Gb/s. Nothing may start after that until the link is known up at
  // its ends (22 us) and leaf1 is told (23 us).
  const double max_queue = r["stats"]["leaf1.port3"]["max_queue_bytes"]["value"].get<double>();
  const double quiet_from = 8000.0 + (max_queue + 4 * 4200.0) * 8.0 / 400.0, quiet_until = 23000.0;
  ASSERT_LT(quiet_from, quiet_until);
  EXPECT_GT(frames_between(r, 0, 5000.0), 0u);  // leaf1 sprayed to spine1 before the fault
  EXPECT_EQ(frames_between(r, quiet_from, quiet_until), 0u);
  EXPECT_GT(frames_between(r, quiet_until, 1e12), 0u);  // and again once told the link is back
  expect_all_complete_and_exact(r);
  // Without the notification (the ends-only model) leaf1 keeps spraying into spine1 over the same span, and
  // spine1 drops more for want of a live port: the quiet span above is the notification's doing.
  const json off = run_remote("remote_notification: false");
  ASSERT_TRUE(off.contains("stats"));
  EXPECT_GT(frames_between(off, quiet_from, quiet_until), 0u);
  EXPECT_GT(off["stats"]["spine1"]["no_live_port"]["value"].get<uint64_t>(),
            r["stats"]["spine1"]["no_live_port"]["value"].get<uint64_t>());
  expect_all_complete_and_exact(off);
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

// A 4 x 4 leaf-spine (two hosts per leaf): 16 leaf-spine cables, so a fraction of 0.25 is 4 of them.
std::string wide_yaml(const std::string& faults, uint64_t seed = 5) {
  return "seed: " + std::to_string(seed) +
         "\nrun: {limit_us: 3000}\n"
         "topology: {kind: leaf_spine, leaves: 4, hosts_per_leaf: 2, spines: 4, link_gbps: 400}\n"
         "switch: {routing: adaptive}\n"
         "nic: {path_entropy: fixed, reorder: rtl, reorder_window: 1024, rto_us: 10, retry_count: 3}\n"
         "workload: {kind: permutation, pattern: leaf_pairs, message_bytes: 262144}\n"
         "fault: {detect_us: 2}\n"
         "faults: [" +
         faults + "]\n";
}

// The cables (as "leafN-spineM") of a links_down entry: each named by both its directions.
std::set<std::string> cables_of(const json& e) {
  std::set<std::string> one_way, other_way;
  for (const json& l : e["links"]) {
    const std::string name = l.get<std::string>();
    const size_t to = name.find("_to_");
    const std::string from = name.substr(0, to), dst = name.substr(to + 4);
    (from.rfind("leaf", 0) == 0 ? one_way : other_way)
        .insert(from.rfind("leaf", 0) == 0 ? from + "-" + dst : dst + "-" + from);
  }
  EXPECT_EQ(one_way, other_way);  // both directions of every cable
  return one_way;
}

TEST(faults, links_down_leaves_a_seeded_share_of_the_tier_out_and_the_rest_carries_every_operation) {
  const json r = test::run_scenario_yaml(wide_yaml("{kind: links_down, tier: leaf_spine, fraction: 0.25}"));
  const json e = entry0(r);
  EXPECT_EQ(e["target"], "4 of 16 leaf_spine cables");  // round(0.25 x 4 leaves x 4 spines)
  const std::set<std::string> cables = cables_of(e);
  ASSERT_EQ(cables.size(), 4u);
  EXPECT_EQ(e["links"].size(), 8u);
  std::map<std::string, int> down_per_leaf;
  for (const std::string& c : cables) {
    EXPECT_NE(c.find("-spine"), std::string::npos) << c;  // only leaf-spine cables
    ++down_per_leaf[c.substr(0, c.find('-'))];
  }
  for (const auto& [leaf, n] : down_per_leaf) EXPECT_LT(n, 4) << leaf << " lost every uplink and still ran";
  // Not in the fabric: no port reports them, nothing was lost on them, and the routes avoided them.
  std::set<std::string> ports;
  for (const json& p : r["ports"]) ports.insert(p["link"].get<std::string>());
  EXPECT_EQ(ports.size(), 2u * (8 + 16) - 8);  // 8 host cables and 16 leaf-spine cables, both ways, less 8
  for (const json& l : e["links"]) EXPECT_EQ(ports.count(l.get<std::string>()), 0u) << l;
  EXPECT_EQ(e["frames_lost"].get<uint64_t>(), 0u);
  EXPECT_EQ(e["detection_ns"], nullptr);
  EXPECT_EQ(e["end_ns"], nullptr);
  EXPECT_EQ(r["dropped_packets"].get<uint64_t>(), 0u);
  EXPECT_EQ(r["fabric"]["retransmissions"].get<uint64_t>(), 0u);
  expect_all_complete_and_exact(r);
}

TEST(faults, links_down_draws_from_the_run_seed_the_same_choice_for_the_same_seed) {
  std::set<std::set<std::string>> choices;
  // Run twice with each of three seeds: equal within a seed; across the seeds not all the same 4 cables.
  for (uint64_t seed : {1u, 2u, 3u}) {
    const std::string y = wide_yaml("{kind: links_down, tier: leaf_spine, fraction: 0.25}", seed);
    const json a = test::run_scenario_yaml(y), b = test::run_scenario_yaml(y);
    ASSERT_TRUE(a.contains("faults"));
    EXPECT_EQ(entry0(a)["links"], entry0(b)["links"]);
    choices.insert(cables_of(entry0(a)));
  }
  EXPECT_GT(choices.size(), 1u);  // 1820 ways to pick 4 of 16: three seeds agreeing would be a fixed choice
}

TEST(faults, links_down_that_chooses_nothing_is_refused_naming_the_fraction) {
  auto load_error = [](const std::string& y) {
    try {
      load_scenario_text(y, "t.yaml");
    } catch (const core::config_error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  // 0.01 of 16 cables rounds to none; one cable is 1/16, so anything from 1/32 up chooses one.
  std::string err = load_error(wide_yaml("{kind: links_down, tier: leaf_spine, fraction: 0.01}"));
  EXPECT_NE(err.find("faults.0.fraction: 0.01 of the 16 leaf_spine cables of this fabric chooses none (one cable is "
                     "a fraction of at least 0.03125)"),
            std::string::npos)
      << err;
  err = load_error(wide_yaml("{kind: links_down, tier: spine_core, fraction: 0.5}"));  // a leaf-spine has none
  EXPECT_NE(err.find("0.5 of the 0 spine_core cables of this fabric chooses none (it has no such cables"),
            std::string::npos)
      << err;
  err = load_error(wide_yaml("{kind: links_down, fraction: 0}"));
  EXPECT_NE(err.find("t.yaml:8: faults.0.fraction: expected a share"), std::string::npos) << err;
  err = load_error(wide_yaml("{kind: links_down, fraction: 0.5, at_us: 3}"));  // failed before the run
  EXPECT_NE(err.find("faults.0.at_us: does not apply to kind links_down"), std::string::npos) << err;
  // 13 of the 16 leaf-spine cables gone leaves 3 for 4 leaves: whichever 13, some leaf has no uplink.
  err = load_error(wide_yaml("{kind: links_down, tier: leaf_spine, fraction: 0.8125}"));
  EXPECT_NE(err.find("t.yaml:8: faults.0.fraction: the 13 leaf_spine cables drawn with seed 5 cut "), std::string::npos)
      << err;
  EXPECT_NE(err.find("lower fraction or choose another seed"), std::string::npos) << err;
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

}  // namespace faults_test
}  // namespace fabricsim::testbench
