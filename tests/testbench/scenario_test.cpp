// Tests of the scenario loader (testbench/scenario): the default scenario file, the real sections' error
// messages with their lines, nic_overrides, writes, `--set`, and that docs/scenario.md is current.
#include "testbench/scenario.h"
#include "tests/support/error_of.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#ifndef FABRICSIM_SOURCE_DIR
#error "FABRICSIM_SOURCE_DIR must name the source tree (set by tests/testbench/CMakeLists.txt)"
#endif

namespace fabricsim::testbench {
namespace {

using core::config_error;

const std::string k_source_dir = FABRICSIM_SOURCE_DIR;

scenario load(const std::string& text, const std::vector<std::string>& sets = {}) {
  return load_scenario_text(text, "t.yaml", sets);
}

using test::error_of;

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

TEST(scenario, default_file_values) {
  const scenario s = load_scenario_file(k_source_dir + "/testbench/scenarios/default.yaml");
  EXPECT_EQ(s.source, k_source_dir + "/testbench/scenarios/default.yaml");
  EXPECT_EQ(s.name, "default");
  EXPECT_EQ(s.description,
            "One 1 MiB RDMA WRITE plus an odd-sized one (1,000,003 bytes) through one switch, RTL reorder tracker "
            "on h1");
  EXPECT_EQ(s.seed, 1u);
  EXPECT_DOUBLE_EQ(s.run.duration_us, 0.0);
  EXPECT_DOUBLE_EQ(s.run.limit_us, 100000.0);
  EXPECT_EQ(s.topology.kind, "single_switch");
  EXPECT_EQ(s.topology.hosts, 2u);
  EXPECT_DOUBLE_EQ(s.topology.link_gbps, 400.0);
  EXPECT_DOUBLE_EQ(s.topology.host_cable_m, 2.0);
  EXPECT_DOUBLE_EQ(s.link.ns_per_metre, 5.0);
  EXPECT_DOUBLE_EQ(s.link.fec_latency_ns, 100.0);
  EXPECT_DOUBLE_EQ(s.switch_.lookup_ns, 120.0);
  EXPECT_EQ(s.switch_.buffer_bytes, 134217728u);
  EXPECT_EQ(s.switch_.routing, "ecmp");
  EXPECT_EQ(s.nic.mtu_bytes, 4096u);
  EXPECT_EQ(s.nic.reorder, "rtl");
  ASSERT_EQ(s.nic_overrides.size(), 1u);
  ASSERT_EQ(s.nic_overrides.count("h0"), 1u);
  EXPECT_EQ(s.nic_overrides.at("h0").reorder, "ref");
  EXPECT_EQ(s.nic_overrides.at("h0").mtu_bytes, 4096u);
  EXPECT_EQ(s.workload.kind, "writes");
  ASSERT_EQ(s.writes.size(), 3u);
  EXPECT_EQ(s.writes[0].src, "h0");
  EXPECT_EQ(s.writes[0].dst, "h1");
  EXPECT_EQ(s.writes[0].bytes, 1048576u);
  EXPECT_DOUBLE_EQ(s.writes[0].start_ns, 0.0);
  EXPECT_EQ(s.writes[1].src, "h0");
  EXPECT_EQ(s.writes[1].dst, "h1");
  EXPECT_EQ(s.writes[1].bytes, 1000003u);
  EXPECT_EQ(s.writes[2].src, "h1");
  EXPECT_EQ(s.writes[2].dst, "h0");
  EXPECT_EQ(s.writes[2].bytes, 65536u);
}

TEST(scenario, empty_text_gives_the_struct_defaults) {
  const scenario s = load("");
  const scenario d;
  EXPECT_EQ(s.source, "t.yaml");
  EXPECT_EQ(s.name, d.name);
  EXPECT_EQ(s.seed, d.seed);
  EXPECT_DOUBLE_EQ(s.topology.link_gbps, d.topology.link_gbps);
  EXPECT_DOUBLE_EQ(s.link.ns_per_metre, d.link.ns_per_metre);
  EXPECT_EQ(s.nic.reorder, d.nic.reorder);
  EXPECT_TRUE(s.nic_overrides.empty());
  EXPECT_TRUE(s.writes.empty());
}

TEST(scenario, every_section_is_read) {
  const scenario s = load(R"(name: t
seed: 0x2a
run: {duration_us: 12.5, limit_us: 50}
topology: {kind: leaf_spine, leaves: 2, hosts_per_leaf: 3, spines: 2, links_per_spine: 2, link_gbps: 800,
           uplink_gbps: 400, host_cable_m: 3, leaf_spine_cable_m: 20}
link: {ns_per_metre: 4.5, fec_latency_ns: 0}
switch: {lookup_ns: 300, buffer_bytes: 1048576, routing: adaptive}
nic: {mtu_bytes: 1024, reorder: ref, path_entropy: per_packet, random_initial_psn: false, initial_psn: 7}
workload: {kind: permutation, message_bytes: 4096, offset: 2, messages: 3}
)");
  EXPECT_EQ(s.name, "t");
  EXPECT_EQ(s.seed, 42u);
  EXPECT_DOUBLE_EQ(s.run.duration_us, 12.5);
  EXPECT_DOUBLE_EQ(s.run.limit_us, 50.0);
  EXPECT_EQ(s.topology.kind, "leaf_spine");
  EXPECT_EQ(s.topology.leaves, 2u);
  EXPECT_EQ(s.topology.hosts_per_leaf, 3u);
  EXPECT_EQ(s.topology.spines, 2u);
  EXPECT_EQ(s.topology.links_per_spine, 2u);
  EXPECT_DOUBLE_EQ(s.topology.link_gbps, 800.0);
  EXPECT_DOUBLE_EQ(s.topology.uplink_gbps, 400.0);
  EXPECT_DOUBLE_EQ(s.topology.host_cable_m, 3.0);
  EXPECT_DOUBLE_EQ(s.topology.leaf_spine_cable_m, 20.0);
  EXPECT_DOUBLE_EQ(s.link.ns_per_metre, 4.5);
  EXPECT_DOUBLE_EQ(s.link.fec_latency_ns, 0.0);
  EXPECT_DOUBLE_EQ(s.switch_.lookup_ns, 300.0);
  EXPECT_EQ(s.switch_.buffer_bytes, 1048576u);
  EXPECT_EQ(s.switch_.routing, "adaptive");
  EXPECT_EQ(s.nic.mtu_bytes, 1024u);
  EXPECT_EQ(s.nic.reorder, "ref");
  EXPECT_EQ(s.nic.path_entropy, "per_packet");
  EXPECT_FALSE(s.nic.random_initial_psn);
  EXPECT_EQ(s.nic.initial_psn, 7u);
  EXPECT_EQ(s.workload.kind, "permutation");
  EXPECT_EQ(s.workload.message_bytes, 4096u);
  EXPECT_EQ(s.workload.offset, 2u);
  EXPECT_EQ(s.workload.messages, 3u);
}

TEST(scenario, unknown_top_level_key_lists_the_known_ones) {
  EXPECT_EQ(error_of([] { load("name: x\nlinks:\n  fec_latency_ns: 80\n"); }),
            "t.yaml:2: links: unknown key; did you mean link? Known keys of top-level: name, description, seed, "
            "run, topology, link, switch, quantum, oq, sharp, nic, pcie, nic_overrides, workload, collective, "
            "training, writes, compare, fault, faults, partition, nvlink, jobs, system");
}

// The scale-out partition (docs/scale_out.md): a list per rank of names the topology has, each once.
TEST(scenario, partition_is_checked_against_the_topology) {
  const std::string topo = "topology: {kind: leaf_spine, leaves: 2, spines: 2, hosts_per_leaf: 2}\n";
  const scenario s = load(topo + "partition:\n  - [leaf0, spine0, h3]\n  - [leaf1]\n");
  ASSERT_EQ(s.partition.size(), 2u);
  EXPECT_EQ(s.partition[0], (std::vector<std::string>{"leaf0", "spine0", "h3"}));
  EXPECT_EQ(error_of([&] { load(topo + "partition: leaf0\n"); }),
            "t.yaml:2: partition: expected a sequence of device lists, e.g. [[leaf0, leaf1, spine0], [leaf2, leaf3, "
            "spine1]], one list per rank, got \"leaf0\"");
  EXPECT_EQ(error_of([&] { load(topo + "partition:\n  - [leaf0]\n  - [spine7]\n"); }),
            "t.yaml:4: partition.1.0: no switch or host named 'spine7' in this topology (switches leaf0 .. spine1, "
            "hosts h0 .. h3)");
  EXPECT_EQ(error_of([&] { load(topo + "partition:\n  - [leaf0, h1]\n  - [h1]\n"); }),
            "t.yaml:4: partition.1.0: 'h1' is already in partition.0 (a device is simulated by one rank)");
  EXPECT_TRUE(contains(error_of([&] { load(topo + "partition:\n  - [[leaf0]]\n"); }),
                       "partition.0.0: expected a switch or host name"));
}

TEST(scenario, unknown_key_in_each_section) {
  EXPECT_EQ(error_of([] { load("name: x\nlink:\n  fec_latency_ns: 80\n  ns_per_meter: 1\n"); }),
            "t.yaml:4: link.ns_per_meter: unknown key; did you mean ns_per_metre? Known keys of link: ns_per_metre, "
            "fec_latency_ns, drop_probability, drop_links");
  EXPECT_TRUE(contains(error_of([] { load("run:\n  duraton_us: 1\n"); }),
                       "t.yaml:2: run.duraton_us: unknown key; did you mean duration_us? Known keys of run: "
                       "duration_us, limit_us"));
  EXPECT_TRUE(contains(error_of([] { load("topology:\n  kind: single_switch\n  host: 4\n"); }),
                       "t.yaml:3: topology.host: unknown key; did you mean hosts?"));
  EXPECT_TRUE(contains(error_of([] { load("switch:\n  lookup: 1\n"); }),
                       "t.yaml:2: switch.lookup: unknown key; did you mean lookup_ns?"));
  EXPECT_TRUE(contains(error_of([] { load("\nnic:\n  mtu: 1024\n"); }),
                       "t.yaml:3: nic.mtu: unknown key; did you mean mtu_bytes?"));
  EXPECT_TRUE(contains(error_of([] { load("workload:\n  knd: writes\n"); }),
                       "t.yaml:2: workload.knd: unknown key; did you mean kind? Known keys of workload: kind, message_bytes, "
                       "pattern, offset, messages, incast_senders, incast_target, flow_file"));
  EXPECT_TRUE(contains(error_of([] { load("writes:\n  - {src: h0, dst: h1, bytes: 1, start: 5}\n"); }),
                       "t.yaml:2: writes.0.start: unknown key; did you mean start_ns? Known keys of writes.0: src, "
                       "dst, bytes, start_ns"));
}

TEST(scenario, nic_clock_mhz_must_be_positive) {
  // The block clock's period is 1 / clock_mhz: zero or a negative clock has none (sc_models/nic/block_clock.h).
  EXPECT_EQ(error_of([] { load("nic:\n  clock_mhz: 0\n"); }),
            "t.yaml:2: nic.clock_mhz: 0 is out of range [0.001, 100000] MHz");
  EXPECT_EQ(error_of([] { load("nic:\n  mtu_bytes: 1024\n  clock_mhz: -250\n"); }),
            "t.yaml:3: nic.clock_mhz: -250 is out of range [0.001, 100000] MHz");
  EXPECT_EQ(error_of([] { load("nic_overrides:\n  h1:\n    clock_mhz: 0\n"); }),
            "t.yaml:3: nic_overrides.h1.clock_mhz: 0 is out of range [0.001, 100000] MHz");
}

TEST(scenario, out_of_range_in_each_section) {
  EXPECT_EQ(error_of([] { load("name: x\n\ntopology:\n  link_gbps: 5000\n"); }),
            "t.yaml:4: topology.link_gbps: 5000 is out of range [1, 3200] Gb/s");
  EXPECT_EQ(error_of([] { load("topology:\n  kind: rail_optimized\n  rails: 0\n"); }),
            "t.yaml:3: topology.rails: 0 is out of range [1, 576] NICs");
  EXPECT_EQ(error_of([] { load("run:\n  duration_us: -1\n"); }),
            "t.yaml:2: run.duration_us: -1 is out of range [0, 1e9] us");
  EXPECT_EQ(error_of([] { load("workload:\n  kind: permutation\n  messages: 0\n"); }),
            "t.yaml:3: workload.messages: 0 is out of range [1, 1000000] messages");
  EXPECT_EQ(error_of([] { load("workload:\n  message_bytes: 1099511627777\n"); }),
            "t.yaml:2: workload.message_bytes: 1099511627777 is out of range [0, 1099511627776] bytes");
  EXPECT_EQ(error_of([] { load("workload:\n  offset: 0\n"); }),
            "t.yaml:2: workload.offset: 0 is out of range (must be >= 1 hosts)");
  EXPECT_EQ(error_of([] { load("writes:\n  - {src: h0, dst: h1, bytes: 1, start_ns: -5}\n"); }),
            "t.yaml:2: writes.0.start_ns: -5 is out of range [0, 1e12] ns");
  // Sections whose ranges their blocks declare: the line, the key and the verdict.
  EXPECT_TRUE(
      contains(error_of([] { load("topology:\n  hosts: 0\n"); }), "t.yaml:2: topology.hosts: 0 is out of range"));
  EXPECT_TRUE(contains(error_of([] { load("switch:\n  parse_ns: -1\n"); }),
                       "t.yaml:2: switch.parse_ns: -1 is out of range"));
  EXPECT_TRUE(contains(error_of([] { load("nic:\n  mtu_bytes: 9000\n"); }),
                       "t.yaml:2: nic.mtu_bytes: 9000 is out of range"));
}

TEST(scenario, wrong_type_and_choices) {
  EXPECT_EQ(error_of([] { load("topology:\n  link_gbps: fast\n"); }),
            "t.yaml:2: topology.link_gbps: expected a number in Gb/s, got \"fast\"");
  EXPECT_EQ(error_of([] { load("seed: -1\n"); }),
            "t.yaml:1: seed: expected a non-negative integer, got \"-1\" (negative)");
  EXPECT_EQ(error_of([] { load("nic:\n  random_initial_psn: maybe\n"); }),
            "t.yaml:2: nic.random_initial_psn: expected true or false, got \"maybe\"");
  EXPECT_EQ(error_of([] { load("nic:\n  reorder: fast\n"); }),
            "t.yaml:2: nic.reorder: \"fast\" is not one of: rtl, ref, lockstep");
  EXPECT_EQ(error_of([] { load("workload:\n  kind: permutaton\n"); }),
            "t.yaml:2: workload.kind: \"permutaton\" is not one of: writes, permutation, all_to_all, incast, flows, "
            "generated, collective, training (did you mean permutation?)");
  EXPECT_EQ(error_of([] { load("topology:\n  kind: fat_tree\n"); }),
            "t.yaml:2: topology.kind: \"fat_tree\" is not one of: single_switch, leaf_spine, three_tier, "
            "rail_optimized, dragonfly, multi_site, graph, nvl72");
}

TEST(scenario, keys_that_moved_to_topology_say_where) {
  EXPECT_EQ(error_of([] { load("link:\n  rate_gbps: 800\n"); }),
            "t.yaml:2: link.rate_gbps: moved to topology.link_gbps (host links) and topology.uplink_gbps "
            "(switch-to-switch links)");
  EXPECT_TRUE(contains(error_of([] { load("link:\n  fec_latency_ns: 80\n", {"link.propagation_ns=5"}); }),
                       "--set link.propagation_ns=5: moved to cable lengths per tier"));
}

TEST(scenario, section_that_is_not_a_mapping) {
  EXPECT_EQ(error_of([] { load("name: x\nlink: 400\n"); }),
            "t.yaml:2: link: expected a mapping of link keys (ns_per_metre, fec_latency_ns, drop_probability, "
            "drop_links), got \"400\"");
  EXPECT_TRUE(contains(error_of([] { load("- link\n"); }), "t.yaml:1: expected a mapping of top-level keys"));
  EXPECT_TRUE(contains(error_of([] { load("nic_overrides: [h1]\n"); }),
                       "t.yaml:1: nic_overrides: expected a mapping of host name to NIC keys"));
  EXPECT_TRUE(contains(error_of([] { load("nic_overrides:\n  h1: ref\n"); }),
                       "t.yaml:2: nic_overrides.h1: expected a mapping of nic_overrides.h1 keys (mtu_bytes"));
}

TEST(scenario, nic_overrides_inherit_from_nic) {
  const scenario s = load(R"(nic:
  mtu_bytes: 1024
  reorder: rtl
  dscp: 10
nic_overrides:
  h1:
    reorder: ref
    dscp: 20
  h2:
)");
  ASSERT_EQ(s.nic_overrides.size(), 2u);
  const nic::supernic_params& h1 = s.nic_overrides.at("h1");
  EXPECT_EQ(h1.reorder, "ref");
  EXPECT_EQ(h1.dscp, 20u);
  EXPECT_EQ(h1.mtu_bytes, 1024u);  // from nic
  const nic::supernic_params& h2 = s.nic_overrides.at("h2");
  EXPECT_EQ(h2.reorder, "rtl");
  EXPECT_EQ(h2.dscp, 10u);
  EXPECT_EQ(h2.mtu_bytes, 1024u);
  EXPECT_EQ(s.nic.reorder, "rtl");  // the shared section is untouched
}

TEST(scenario, nic_overrides_errors) {
  EXPECT_EQ(
      error_of([] { load("nic_overrides:\n  h1:\n    reorder: ref\n    reordr: rtl\n"); }),
      "t.yaml:4: nic_overrides.h1.reordr: unknown key; did you mean reorder? Known keys of nic_overrides.h1: "
      "mtu_bytes, path_mtu_bytes, reorder, reorder_window, reorder_rtl, reorder_rtl_top, clock_mhz, wqe_latency_ns, "
      "rx_latency_ns, link_layer, "
      "ack_every_packets, "
      "path_entropy, "
      "flowlet_gap_ns, random_initial_psn, initial_psn, dscp, place_data, placement, rx_buffer_bytes, "
      "tx_read_ahead_packets, "
      "rx_overflow, rx_pfc_xoff_bytes, rx_pfc_xon_bytes, rx_pfc_quanta, tx_fifo_frames, cc, dcqcn_preset, "
      "dcqcn_model, dcqcn_rtl, dcqcn_rtl_top, cnp_model, cnp_rtl, cnp_rtl_top, rtl_mutant, cnp_interval_ns, "
      "cnp_time_origin_cycles, cnp_mode, "
      "cnp_dscp, "
      "dcqcn_rpg_time_reset_us, dcqcn_rpg_byte_reset, "
      "dcqcn_rpg_threshold, dcqcn_rpg_ai_rate_mbps, dcqcn_rpg_hai_rate_mbps, dcqcn_rpg_min_rate_mbps, "
      "dcqcn_rpg_gd, dcqcn_rpg_min_dec_fac, dcqcn_dce_tcp_g, dcqcn_dce_tcp_rtt_us, dcqcn_initial_alpha, "
      "dcqcn_rate_reduce_monitor_period_us, hpcc_eta, hpcc_max_stage, hpcc_w_ai_bytes, hpcc_base_rtt_us, "
      "ecn_only_cut_factor, ecn_only_ai_mbps, dcqcn_distance_ref_rtt_us, dcqcn_distance_max_scale, "
      "dcqcn_distance_window_bdp, "
      "retransmission, sack_reorder_packets, rto_us, retry_count, nak_threshold_packets, sq_depth, max_rd_atomic, "
      "send_window_packets, "
      "rnr_timer_us, rnr_retry_count");
  EXPECT_EQ(error_of([] { load("nic_overrides:\n  h1: {reorder: ref}\n  h1: {reorder: rtl}\n"); }),
            "t.yaml:3: nic_overrides.h1: duplicate host (each host may appear once)");
  EXPECT_EQ(error_of([] { load("nic_overrides:\n  h0:\n    reorder: slow\n"); }),
            "t.yaml:3: nic_overrides.h0.reorder: \"slow\" is not one of: rtl, ref, lockstep");
}

TEST(scenario, new_workload_and_run_keys) {
  const scenario s = load("run: {warmup_us: 2.5}\nworkload: {kind: incast, incast_senders: 3, incast_target: h2, "
                          "pattern: shift, flow_file: a.csv}\n");
  EXPECT_DOUBLE_EQ(s.run.warmup_us, 2.5);
  EXPECT_EQ(s.workload.kind, "incast");
  EXPECT_EQ(s.workload.incast_senders, 3u);
  EXPECT_EQ(s.workload.incast_target, "h2");
  EXPECT_EQ(s.workload.pattern, "shift");
  EXPECT_EQ(s.workload.flow_file, "a.csv");
  const scenario d = load("");
  EXPECT_EQ(d.workload.pattern, "random");
  EXPECT_DOUBLE_EQ(d.run.warmup_us, 0.0);
  EXPECT_EQ(error_of([] { load("workload:\n  pattern: spiral\n"); }),
            "t.yaml:2: workload.pattern: \"spiral\" is not one of: random, shift, leaf_pairs");
  EXPECT_EQ(error_of([] { load("workload:\n  incast_senders: 0\n"); }),
            "t.yaml:2: workload.incast_senders: 0 is out of range (must be >= 1 hosts)");
}

TEST(scenario, compare_section) {
  const scenario s = load("compare:\n  key: nic.path_entropy\n  values: [fixed, per_packet]\n");
  EXPECT_EQ(s.compare.key, "nic.path_entropy");
  EXPECT_EQ(s.compare.values, (std::vector<std::string>{"fixed", "per_packet"}));
  EXPECT_TRUE(load("").compare.empty());
  EXPECT_EQ(load("compare: {key: topology.link_gbps, values: [400, 800]}\n").compare.values,
            (std::vector<std::string>{"400", "800"}));
}

TEST(scenario, compare_section_errors) {
  EXPECT_EQ(error_of([] { load("compare: nic.path_entropy\n"); }),
            "t.yaml:1: compare: expected a mapping with key and values, e.g. {key: nic.path_entropy, values: "
            "[fixed, per_packet]}, got \"nic.path_entropy\"");
  EXPECT_EQ(error_of([] { load("compare:\n  key: nic.mtu_bytes\n  value: [1, 2]\n"); }),
            "t.yaml:3: compare.value: unknown key. Known keys of compare: key, values");
  EXPECT_EQ(error_of([] { load("compare:\n  key: nic.mtu_bytes\n"); }),
            "t.yaml:2: compare: missing required key values (e.g. {key: nic.path_entropy, values: [fixed, "
            "per_packet]})");
  EXPECT_EQ(error_of([] { load("compare:\n  key: nic.mtu_bytes\n  values: 1024\n"); }),
            "t.yaml:3: compare.values: expected a non-empty sequence of values, e.g. [fixed, per_packet], got "
            "\"1024\"");
  EXPECT_EQ(error_of([] { load("compare:\n  key: nic.mtu_bytes\n  values: []\n"); }),
            "t.yaml:3: compare.values: expected a non-empty sequence of values, e.g. [fixed, per_packet], got a "
            "sequence");
  EXPECT_EQ(error_of([] { load("compare:\n  key: [a]\n  values: [1]\n"); }),
            "t.yaml:2: compare.key: expected a scenario key such as nic.path_entropy, got a sequence");
  EXPECT_EQ(error_of([] { load("compare:\n  key: a\n  values: [1, {x: 2}]\n"); }),
            "t.yaml:3: compare.values.1: expected a single value, got a mapping");
}

TEST(scenario, writes_missing_dst) {
  EXPECT_EQ(error_of([] { load("writes:\n  - {src: h0, dst: h1, bytes: 64}\n  - {src: h0, bytes: 64}\n"); }),
            "t.yaml:3: writes.1: missing required key dst (every write needs src, dst and bytes)");
  EXPECT_EQ(error_of([] { load("writes:\n  - src: h0\n    dst: h1\n  - src: h1\n"); }),
            "t.yaml:2: writes.0: missing required key bytes (every write needs src, dst and bytes)");
}

TEST(scenario, writes_shape_errors) {
  EXPECT_EQ(error_of([] { load("writes: {src: h0}\n"); }),
            "t.yaml:1: writes: expected a sequence of writes, e.g. [{src: h0, dst: h1, bytes: 4096}], got a mapping");
  EXPECT_EQ(error_of([] { load("writes:\n  - h0\n"); }),
            "t.yaml:2: writes.0: expected a mapping with src, dst and bytes, got \"h0\"");
  EXPECT_EQ(error_of([] { load("writes:\n  - {src: h0, dst: h1, bytes: 2.5}\n"); }),
            "t.yaml:2: writes.0.bytes: expected a non-negative integer in bytes, got \"2.5\" (not a whole number)");
}

TEST(scenario, set_overrides_real_keys) {
  const std::string text = "topology:\n  link_gbps: 400\nwrites:\n  - {src: h0, dst: h1, bytes: 64}\n";
  const scenario s = load(text, {"topology.link_gbps=800", "nic_overrides.h1.reorder=ref", "writes.0.bytes=5000",
                                 "seed=7", "nic.mtu_bytes=2048", "name=from the command line"});
  EXPECT_DOUBLE_EQ(s.topology.link_gbps, 800.0);
  EXPECT_EQ(s.seed, 7u);
  EXPECT_EQ(s.name, "from the command line");
  ASSERT_EQ(s.writes.size(), 1u);
  EXPECT_EQ(s.writes[0].bytes, 5000u);
  EXPECT_EQ(s.writes[0].src, "h0");
  ASSERT_EQ(s.nic_overrides.count("h1"), 1u);
  EXPECT_EQ(s.nic_overrides.at("h1").reorder, "ref");
  EXPECT_EQ(s.nic_overrides.at("h1").mtu_bytes, 2048u);  // inherits the overridden nic section
}

TEST(scenario, set_on_the_default_file) {
  const scenario s = load_scenario_file(k_source_dir + "/testbench/scenarios/default.yaml",
                                        {"writes.2.bytes=0x100", "nic_overrides.h0.reorder=rtl"});
  EXPECT_EQ(s.writes[2].bytes, 256u);
  EXPECT_EQ(s.writes[1].bytes, 1000003u);
  EXPECT_EQ(s.nic_overrides.at("h0").reorder, "rtl");
}

TEST(scenario, set_errors_name_the_assignment) {
  const std::string text = "topology:\n  link_gbps: 400\nwrites:\n  - {src: h0, dst: h1, bytes: 64}\n";
  EXPECT_EQ(error_of([&] { load(text, {"topology.link_gbps=abc"}); }),
            "--set topology.link_gbps=abc: expected a number in Gb/s, got \"abc\"");
  EXPECT_EQ(error_of([&] { load(text, {"topology.link_gbps=5000"}); }),
            "--set topology.link_gbps=5000: 5000 is out of range [1, 3200] Gb/s");
  EXPECT_EQ(error_of([&] { load(text, {"nic.reorder=fast"}); }),
            "--set nic.reorder=fast: \"fast\" is not one of: rtl, ref, lockstep");
  EXPECT_TRUE(contains(error_of([&] { load(text, {"lnk.fec_latency_ns=80"}); }),
                       "--set lnk.fec_latency_ns=80: lnk: unknown key; did you mean link?"));
  EXPECT_TRUE(contains(error_of([&] { load(text, {"writes.1.bytes=5"}); }),
                       "--set writes.1.bytes=5: index 1 is beyond the end of writes (it has 1 entry)"));
  EXPECT_TRUE(contains(error_of([&] { load(text, {"topology.link_gbps"}); }), "--set topology.link_gbps: no '='"));
  EXPECT_EQ(error_of([&] { load(text, {"writes.0={src: h0, bytes: 1}"}); }),
            "--set writes.0={src: h0, bytes: 1}: missing required key dst (every write needs src, dst and bytes)");
  // A file error next to a valid override still points at the file line.
  EXPECT_EQ(error_of([&] { load("topology:\n  link_gbps: 0\n", {"seed=3"}); }),
            "t.yaml:2: topology.link_gbps: 0 is out of range [1, 3200] Gb/s");
}

TEST(scenario, missing_file_and_syntax_errors) {
  const std::string missing = k_source_dir + "/testbench/scenarios/no_such_scenario.yaml";
  EXPECT_EQ(error_of([&] { load_scenario_file(missing); }),
            missing + ": cannot open the scenario file (No such file or directory)");
  EXPECT_TRUE(contains(error_of([] { load("name: x\ntopology:\n  link_gbps: [800\n"); }), "t.yaml:4: YAML syntax error: "));
  EXPECT_TRUE(contains(error_of([] { load("name: x\n  bad: indent\n"); }), "t.yaml:2: YAML syntax error: "));
}

// docs/scenario.md holds a hand-written introduction, a marker line, then exactly the generated reference.
// FABRICSIM_UPDATE_DOCS=1 rewrites the generated part instead of failing.
TEST(scenario, docs_reference_is_current) {
  const std::string path = k_source_dir + "/docs/scenario.md";
  const std::string marker = "<!-- generated: everything below is scenario_keys_markdown() (`fabricsim keys`) -->\n";
  std::ifstream in(path);
  ASSERT_TRUE(in) << "cannot open " << path;
  std::stringstream buf;
  buf << in.rdbuf();
  const std::string doc = buf.str();
  const size_t at = doc.find(marker);
  ASSERT_NE(at, std::string::npos) << path << " lacks the marker line: " << marker;
  const std::string committed = doc.substr(at + marker.size());
  const std::string generated = scenario_keys_markdown();
  if (committed != generated && std::getenv("FABRICSIM_UPDATE_DOCS") != nullptr) {
    std::ofstream out(path, std::ios::trunc);
    out << doc.substr(0, at + marker.size()) << generated;
    ASSERT_TRUE(out.good()) << "cannot write " << path;
    return;
  }
  EXPECT_EQ(committed, generated) << path << " is out of date; regenerate its reference with "
                                  << "FABRICSIM_UPDATE_DOCS=1 ctest -R scenario.docs_reference_is_current";
}

TEST(scenario, markdown_lists_every_section_and_key) {
  const std::string md = scenario_keys_markdown();
  for (const char* s : {"### Top level", "### `run`", "### `topology`", "### `link`", "### `switch`", "### `nic`",
                        "### `pcie`", "### `nic_overrides`", "### `workload`", "### `writes`", "### `compare`"})
    EXPECT_TRUE(contains(md, s)) << s;
  EXPECT_TRUE(contains(md, "| `link_gbps` | number | Gb/s | `400` | [1, 3200] |"));
  EXPECT_TRUE(contains(md, "| `ns_per_metre` | number | ns/m | `5` | [0, 100] |"));
  EXPECT_FALSE(contains(md, "rate_gbps"));
  EXPECT_FALSE(contains(md, "propagation_ns"));
  EXPECT_TRUE(contains(md,
                       "| `kind` | string |  | `writes` | one of `writes`, `permutation`, `all_to_all`, `incast`, "
                       "`flows`, `generated`, `collective`, `training` |"));
  EXPECT_TRUE(contains(md, "| `dst` | string |  | required |"));
}

}  // namespace
}  // namespace fabricsim::testbench

// The SystemC library (linked through the models) calls sc_main from its own main; gtest_main provides
// main() here and this test never starts a simulation, so sc_main is never called.
int sc_main(int, char*[]) { return 1; }

namespace fabricsim::testbench {
namespace {

// Every shipped scenario loads: a key renamed in the loader must be renamed in the scenarios too (two once
// kept a `workload.bytes` the loader no longer knew, and failed for anyone who ran them).
TEST(scenario, every_shipped_scenario_loads) {
  const std::string dir = k_source_dir + "/testbench/scenarios";
  size_t loaded = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    if (e.path().extension() != ".yaml") continue;
    SCOPED_TRACE(e.path().string());
    EXPECT_NO_THROW(load_scenario_file(e.path().string()));
    ++loaded;
  }
  EXPECT_GE(loaded, 20u);
}

}  // namespace
}  // namespace fabricsim::testbench
