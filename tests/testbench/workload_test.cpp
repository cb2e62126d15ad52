// Tests of workload planning (testbench/workload): the random permutation's guarantees over several
// fabrics and seeds, the shift pattern, all-to-all, incast, flow files and their errors. No simulation.
#include "testbench/workload.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <set>
#include <string>
#include <tuple>

#include <gtest/gtest.h>

#include "sc_models/topology/fabric.h"
#include "tests/support/error_of.h"

namespace fabricsim::testbench {
namespace workload_test {

namespace fs = std::filesystem;
using core::config_error;

scenario load(const std::string& text, const std::string& source = "w.yaml") {
  return load_scenario_text(text, source);
}

using test::error_of;

topology::topology_params leaf_spine(uint64_t leaves, uint64_t hosts_per_leaf) {
  topology::topology_params t;
  t.kind = "leaf_spine";
  t.leaves = leaves;
  t.hosts_per_leaf = hosts_per_leaf;
  return t;
}

topology::topology_params single_switch(uint64_t hosts) {
  topology::topology_params t;
  t.hosts = hosts;
  return t;
}

// The three guarantees: a permutation, nobody to itself, and off-leaf whenever there are several leaves.
void expect_valid(const topology::topology_params& t, const std::vector<size_t>& dst) {
  const size_t n = t.host_count();
  ASSERT_EQ(dst.size(), n);
  std::set<size_t> seen(dst.begin(), dst.end());
  EXPECT_EQ(seen.size(), n) << "not a permutation";
  const bool several_leaves = topology::leaf_of(t, n - 1) != topology::leaf_of(t, 0);
  for (size_t i = 0; i < n; ++i) {
    ASSERT_LT(dst[i], n);
    EXPECT_NE(dst[i], i) << "host " << i << " sends to itself";
    if (several_leaves) {
      EXPECT_NE(topology::leaf_of(t, dst[i]), topology::leaf_of(t, i)) << "host " << i;
    }
  }
}

TEST(workload, random_permutation_is_valid_on_many_fabrics_and_seeds) {
  const std::vector<topology::topology_params> fabrics = {leaf_spine(4, 4),  leaf_spine(16, 16), leaf_spine(2, 5),
                                                          leaf_spine(3, 1),  leaf_spine(2, 1),   leaf_spine(1, 6),
                                                          single_switch(2), single_switch(3),  single_switch(64)};
  for (const auto& t : fabrics)
    for (uint64_t seed = 0; seed < 50; ++seed) {
      SCOPED_TRACE(t.kind + " " + std::to_string(t.host_count()) + " hosts, seed " + std::to_string(seed));
      expect_valid(t, random_permutation(t, seed, "w"));
    }
}

TEST(workload, random_permutation_is_deterministic_per_seed_and_differs_across_seeds) {
  const auto t = leaf_spine(4, 4);
  EXPECT_EQ(random_permutation(t, 7, "w"), random_permutation(t, 7, "w"));
  EXPECT_NE(random_permutation(t, 7, "w"), random_permutation(t, 8, "w"));
  std::set<std::vector<size_t>> distinct;
  for (uint64_t seed = 0; seed < 20; ++seed) distinct.insert(random_permutation(t, seed, "w"));
  EXPECT_GE(distinct.size(), 19u);
}

TEST(workload, random_permutation_reaches_many_leaf_pairs) {
  // Not a leaf-to-leaf shift in disguise: over seeds, leaf 0 sends to every other leaf.
  const auto t = leaf_spine(4, 4);
  std::set<size_t> leaves_reached;
  for (uint64_t seed = 0; seed < 20; ++seed) {
    const auto dst = random_permutation(t, seed, "w");
    for (size_t i = 0; i < 4; ++i) leaves_reached.insert(topology::leaf_of(t, dst[i]));
  }
  EXPECT_EQ(leaves_reached, (std::set<size_t>{1, 2, 3}));
}

TEST(workload, random_permutation_needs_two_hosts) {
  EXPECT_EQ(error_of([] { random_permutation(single_switch(1), 1, "w.yaml: workload.kind permutation"); }),
            "w.yaml: workload.kind permutation: a permutation needs at least 2 hosts, the topology has 1");
  EXPECT_EQ(error_of([] {
              plan_workload(load("topology: {kind: leaf_spine, leaves: 1, hosts_per_leaf: 1}\n"
                                 "workload: {kind: permutation}\n"));
            }),
            "w.yaml: workload.kind permutation: a permutation needs at least 2 hosts, the topology has 1");
}

TEST(workload, permutation_plan_uses_the_seed_messages_and_size) {
  const scenario s = load("seed: 3\ntopology: {kind: leaf_spine, leaves: 2, hosts_per_leaf: 2}\n"
                          "workload: {kind: permutation, message_bytes: 4096, messages: 2}\n");
  const auto flows = plan_workload(s);
  ASSERT_EQ(flows.size(), 8u);
  const auto dst = random_permutation(s.topology, 3, "w");
  for (size_t m = 0; m < 2; ++m)
    for (size_t i = 0; i < 4; ++i) {
      const planned_flow& f = flows[m * 4 + i];
      EXPECT_EQ(f.src, i);
      EXPECT_EQ(f.dst, dst[i]);
      EXPECT_EQ(f.bytes, 4096u);
      EXPECT_EQ(f.post_at.value, 0u);
    }
}

TEST(workload, shift_pattern_keeps_the_offset) {
  const auto flows = plan_workload(load("topology: {hosts: 5}\nworkload: {kind: permutation, pattern: shift, "
                                        "offset: 2, message_bytes: 64}\n"));
  ASSERT_EQ(flows.size(), 5u);
  for (size_t i = 0; i < 5; ++i) EXPECT_EQ(flows[i].dst, (i + 2) % 5);
  EXPECT_EQ(error_of([] { plan_workload(load("topology: {hosts: 4}\nworkload: {kind: permutation, pattern: shift, "
                                             "offset: 8}\n")); }),
            "w.yaml: workload.offset 8 sends every host to itself with 4 hosts");
}

TEST(workload, leaf_pairs_send_every_leaf_to_exactly_one_other_leaf) {
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    const scenario s = load("seed: " + std::to_string(seed) +
                            "\ntopology: {kind: leaf_spine, leaves: 5, hosts_per_leaf: 3, spines: 3}\n"
                            "workload: {kind: permutation, pattern: leaf_pairs}\n");
    const auto flows = plan_workload(s);
    ASSERT_EQ(flows.size(), 15u);
    std::set<size_t> dsts;
    std::map<size_t, std::set<size_t>> leaf_to;    // source leaf -> destination leaves
    std::map<size_t, std::set<size_t>> leaf_from;  // destination leaf -> source leaves
    for (const auto& f : flows) {
      dsts.insert(f.dst);
      EXPECT_NE(f.src / 3, f.dst / 3) << "seed " << seed;
      leaf_to[f.src / 3].insert(f.dst / 3);
      leaf_from[f.dst / 3].insert(f.src / 3);
    }
    EXPECT_EQ(dsts.size(), 15u) << "seed " << seed;  // a permutation
    for (const auto& [leaf, to] : leaf_to) EXPECT_EQ(to.size(), 1u) << "seed " << seed << " leaf " << leaf;
    for (const auto& [leaf, from] : leaf_from) EXPECT_EQ(from.size(), 1u) << "seed " << seed << " leaf " << leaf;
  }
  EXPECT_NE(error_of([] { plan_workload(load("topology: {hosts: 4}\nworkload: {kind: permutation, pattern: leaf_pairs}\n")); })
                .find("leaf_pairs needs at least two leaves"),
            std::string::npos);
}

TEST(workload, all_to_all_writes_every_ordered_pair_once) {
  const auto flows = plan_workload(load("topology: {hosts: 5}\nworkload: {kind: all_to_all, message_bytes: 100}\n"));
  ASSERT_EQ(flows.size(), 5u * 4u);
  std::set<std::pair<size_t, size_t>> pairs;
  for (const auto& f : flows) {
    EXPECT_NE(f.src, f.dst);
    EXPECT_EQ(f.bytes, 100u);
    pairs.insert({f.src, f.dst});
  }
  EXPECT_EQ(pairs.size(), 20u);
  EXPECT_EQ(plan_workload(load("topology: {kind: leaf_spine, leaves: 2, hosts_per_leaf: 3}\n"
                               "workload: {kind: all_to_all, messages: 3}\n"))
                .size(),
            3u * 6u * 5u);
}

TEST(workload, incast_senders_follow_the_target) {
  const auto flows =
      plan_workload(load("topology: {hosts: 6}\nworkload: {kind: incast, incast_target: h4, incast_senders: 3, "
                         "message_bytes: 512}\n"));
  ASSERT_EQ(flows.size(), 3u);
  EXPECT_EQ(flows[0].src, 5u);
  EXPECT_EQ(flows[1].src, 0u);
  EXPECT_EQ(flows[2].src, 1u);
  for (const auto& f : flows) {
    EXPECT_EQ(f.dst, 4u);
    EXPECT_EQ(f.bytes, 512u);
  }
}

TEST(workload, incast_errors_name_the_key) {
  EXPECT_EQ(error_of([] { plan_workload(load("topology: {hosts: 4}\nworkload: {kind: incast, incast_target: h4}\n")); }),
            "w.yaml: workload.incast_target: no host 'h4' (hosts are h0 .. h3)");
  EXPECT_EQ(error_of([] {
              plan_workload(load("topology: {hosts: 4}\nworkload: {kind: incast, incast_senders: 4}\n"));
            }),
            "w.yaml: workload.incast_senders: 4 senders need as many hosts besides the target; the topology has 4 "
            "hosts in all");
}

// A scratch directory per test and process.
fs::path scratch_dir() {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  const fs::path d = fs::temp_directory_path() /
                     ("fabricsim_workload_" + std::string(info->name()) + "_" + std::to_string(::getpid()));
  fs::create_directories(d / "flows");
  return d;
}

TEST(workload, flow_file_resolves_against_the_scenario_directory) {
  const fs::path dir = scratch_dir();
  std::ofstream(dir / "flows" / "f.csv") << "src,dst,bytes,start_ns\n2,0,1000,50\n0,3,64,0\n";
  const scenario s = load("topology: {hosts: 4}\nworkload: {kind: flows, flow_file: flows/f.csv}\n",
                          (dir / "s.yaml").string());
  const auto flows = plan_workload(s);
  ASSERT_EQ(flows.size(), 2u);
  EXPECT_EQ(flows[0].src, 2u);
  EXPECT_EQ(flows[0].dst, 0u);
  EXPECT_EQ(flows[0].bytes, 1000u);
  EXPECT_EQ(flows[0].post_at.value, 50000u);
  EXPECT_EQ(flows[1].dst, 3u);
  // An absolute path is taken as is; a row naming a host the topology lacks is an error with its line.
  const scenario small = load("topology: {hosts: 3}\nworkload: {kind: flows, flow_file: " +
                              (dir / "flows" / "f.csv").string() + "}\n");
  EXPECT_EQ(error_of([&] { plan_workload(small); }),
            (dir / "flows" / "f.csv").string() + ":3: dst: host 3 is out of range (hosts are 0 .. 2)");
  fs::remove_all(dir);
}

TEST(workload, flow_file_errors) {
  EXPECT_EQ(error_of([] { plan_workload(load("workload: {kind: flows}\n")); }),
            "w.yaml: workload.flow_file: required with workload.kind flows (a CSV file with header "
            "src,dst,bytes,start_ns)");
  EXPECT_EQ(error_of([] { plan_workload(load("workload: {kind: flows, flow_file: none.csv}\n", "/x/y/s.yaml")); }),
            "/x/y/none.csv: cannot open the flow list (No such file or directory)");
  const fs::path dir = scratch_dir();
  std::ofstream(dir / "empty.csv") << "src,dst,bytes,start_ns\n";
  EXPECT_EQ(error_of([&] {
              plan_workload(load("workload: {kind: flows, flow_file: empty.csv}\n", (dir / "s.yaml").string()));
            }),
            (dir / "s.yaml").string() + ": the workload posts no RDMA operation");
  fs::remove_all(dir);
}

TEST(workload, writes_list_errors_are_unchanged) {
  EXPECT_EQ(error_of([] { plan_workload(load("writes: [{src: h0, dst: h7, bytes: 1}]\n")); }),
            "w.yaml: writes.0.dst: no host 'h7' (hosts are h0 .. h1)");
  EXPECT_EQ(error_of([] { plan_workload(load("writes: [{src: h1, dst: h1, bytes: 1}]\n")); }),
            "w.yaml: writes.0: src and dst are both h1");
  EXPECT_EQ(error_of([] { plan_workload(load("")); }), "w.yaml: the workload posts no RDMA operation");
}

TEST(workload, resolve_scenario_path) {
  EXPECT_EQ(resolve_scenario_path("a/b/s.yaml", "f.csv"), "a/b/f.csv");
  EXPECT_EQ(resolve_scenario_path("s.yaml", "f.csv"), "f.csv");
  EXPECT_EQ(resolve_scenario_path("<default scenario>", "f.csv"), "f.csv");
  EXPECT_EQ(resolve_scenario_path("a/s.yaml", "/abs/f.csv"), "/abs/f.csv");
}

// ---- workload.kind generated (traces/flow_generator.h; the sampler's statistics are tested there) ------

TEST(workload_generated, plans_the_flow_count_from_the_seeded_generator) {
  const std::string yaml = "topology: {kind: leaf_spine, leaves: 2, hosts_per_leaf: 3}\n"
                           "workload: {kind: generated, distribution: hadoop, load: 0.3, flow_count: 200}\n";
  const auto a = plan_workload(load(yaml));
  ASSERT_EQ(a.size(), 200u);
  for (size_t i = 1; i < a.size(); ++i) EXPECT_LE(a[i - 1].post_at, a[i].post_at);
  for (const planned_flow& f : a) {
    EXPECT_NE(f.src, f.dst);
    EXPECT_LT(f.dst, 6u);
    EXPECT_GE(f.bytes, 1u);
    EXPECT_LE(f.bytes, 10000000u);
  }
  const auto b = plan_workload(load(yaml));
  const auto c = plan_workload(load("seed: 2\n" + yaml));
  auto key = [](const std::vector<planned_flow>& v) {
    std::vector<std::tuple<size_t, size_t, uint64_t, uint64_t>> k;
    for (const auto& f : v) k.emplace_back(f.src, f.dst, f.bytes, f.post_at.value);
    return k;
  };
  EXPECT_EQ(key(a), key(b));
  EXPECT_NE(key(a), key(c));
  // off_leaf: every destination behind the other leaf.
  for (const planned_flow& f : plan_workload(load("topology: {kind: leaf_spine, leaves: 2, hosts_per_leaf: 3}\n"
                                                  "workload: {kind: generated, load: 0.3, flow_count: 50, "
                                                  "destinations: off_leaf}\n")))
    EXPECT_NE(f.src / 3, f.dst / 3);
}

TEST(workload_generated, arrival_window_and_cap) {
  const auto flows = plan_workload(load("topology: {hosts: 4}\nworkload: {kind: generated, distribution: websearch, "
                                        "load: 0.5, arrival_window_us: 2000, max_flow_bytes: 100000}\n"));
  // 4 hosts at 400 Gb/s, load 0.5, web search capped at 100 KB. Mean by hand: the 53 % up to 80 KB as in
  // the table, the 7 % uniform on 80-200 KB cut at 100 KB (a sixth below it, mean 90 KB; the rest at
  // 100 KB), and the 40 % above 200 KB at 100 KB:
  const double below = 0.15 * 5000 + 0.05 * 15000 + 0.10 * 25000 + 0.10 * 40000 + 0.13 * 65000;
  const double seg = 0.07 * (20000.0 / 120000 * 90000 + 100000.0 / 120000 * 100000);
  const double mean = below + seg + 0.40 * 100000;
  const double expected = 4 * 0.5 * 50e9 / mean * 2e-3;  // flows in 2 ms, about 4,900
  EXPECT_NEAR(double(flows.size()) / expected, 1.0, 0.06);  // Poisson: 1.4 % standard error
  for (const planned_flow& f : flows) {
    EXPECT_LE(f.bytes, 100000u);
    EXPECT_LT(f.post_at.ns(), 2000e3);
  }
}

TEST(workload_generated, cdf_file_resolves_against_the_scenario_and_bad_keys_are_named) {
  const fs::path dir = fs::temp_directory_path() / ("fabricsim_gen_" + std::to_string(getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "my.cdf") << "# bytes percent\n1000 0\n3000 100\n";
  std::ofstream(dir / "bad.cdf") << "1000 0\n2000 x\n";
  const auto flows = plan_workload(load("topology: {hosts: 3}\nworkload: {kind: generated, distribution: my.cdf, "
                                        "load: 0.2, flow_count: 100}\n",
                                        (dir / "s.yaml").string()));
  ASSERT_EQ(flows.size(), 100u);
  for (const planned_flow& f : flows) {
    EXPECT_GE(f.bytes, 1000u);
    EXPECT_LE(f.bytes, 3000u);
  }
  EXPECT_EQ(error_of([&] {
              plan_workload(load("topology: {hosts: 3}\nworkload: {kind: generated, distribution: bad.cdf, "
                                 "flow_count: 5}\n",
                                 (dir / "s.yaml").string()));
            }),
            (dir / "bad.cdf").string() + ":2: fraction: expected a number >= 0 (0..1 or a percentage 0..100), got 'x'");
  EXPECT_EQ(error_of([] { plan_workload(load("workload: {kind: generated, distribution: pareto, flow_count: 5}\n")); }),
            "w.yaml: workload.distribution: 'pareto' is neither websearch, hadoop nor a CDF file (pareto does not "
            "exist)");
  EXPECT_EQ(error_of([] { plan_workload(load("workload: {kind: generated, load: 0, flow_count: 5}\n")); }),
            "w.yaml: workload.load: 0 must be above 0 and at most 1 (a fraction of each host's link rate)");
  EXPECT_NE(error_of([] { load("workload: {kind: generated, load: 1.5, flow_count: 5}\n"); }).find("workload.load"),
            std::string::npos);
  EXPECT_EQ(error_of([] { plan_workload(load("workload: {kind: generated}\n")); }),
            "w.yaml: workload: set exactly one of flow_count and arrival_window_us (how many flows, or for how long "
            "they arrive)");
  fs::remove_all(dir);
}

TEST(workload_generated, write_flow_file_replays_as_kind_flows) {
  const fs::path dir = fs::temp_directory_path() / ("fabricsim_wf_" + std::to_string(getpid()));
  fs::create_directories(dir);
  const std::string csv = (dir / "gen.csv").string();
  const auto generated = plan_workload(load("topology: {hosts: 5}\nworkload: {kind: generated, load: 0.4, "
                                            "flow_count: 150, write_flow_file: " + csv + "}\n"));
  const auto replayed = plan_workload(load("topology: {hosts: 5}\nworkload: {kind: flows, flow_file: " + csv + "}\n"));
  ASSERT_EQ(replayed.size(), generated.size());
  for (size_t i = 0; i < generated.size(); ++i) {
    EXPECT_EQ(replayed[i].src, generated[i].src);
    EXPECT_EQ(replayed[i].dst, generated[i].dst);
    EXPECT_EQ(replayed[i].bytes, generated[i].bytes);
    EXPECT_EQ(replayed[i].post_at, generated[i].post_at);  // to the picosecond
  }
  fs::remove_all(dir);
}

}  // namespace workload_test
}  // namespace fabricsim::testbench

namespace fabricsim::testbench {
namespace workload_test {

TEST(workload, writes_entries_and_flow_rows_carry_their_operation) {
  const auto flows = plan_workload(load_scenario_text(
      "topology: {hosts: 3}\nwrites: [{src: h0, dst: h1, bytes: 8}, {src: h1, dst: h2, bytes: 8, op: read},\n"
      "  {src: h2, dst: h0, bytes: 8, op: send}, {src: h0, dst: h2, bytes: 8, op: write_imm}]\n",
      "w.yaml"));
  ASSERT_EQ(flows.size(), 4u);
  EXPECT_EQ(flows[0].op, nic::rdma_op::write);  // the default
  EXPECT_EQ(flows[1].op, nic::rdma_op::read);
  EXPECT_EQ(flows[2].op, nic::rdma_op::send);
  EXPECT_EQ(flows[3].op, nic::rdma_op::write_imm);
  EXPECT_EQ(test::error_of([] {
              load_scenario_text("topology: {hosts: 2}\nwrites: [{src: h0, dst: h1, bytes: 8, op: cas}]\n", "w.yaml");
            }).find("writes.0.op"),
            0u + std::string("w.yaml:2: ").size());

  const fs::path dir = fs::temp_directory_path() / ("fabricsim_ops_" + std::to_string(getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "f.csv") << "src,dst,bytes,start_ns,op\n0,1,64,0,read\n1,0,64,5,send_imm\n";
  std::ofstream(dir / "s.yaml") << "topology: {hosts: 2}\nworkload: {kind: flows, flow_file: f.csv}\n";
  const auto rows = plan_workload(load_scenario_file((dir / "s.yaml").string()));
  fs::remove_all(dir);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].op, nic::rdma_op::read);
  EXPECT_EQ(rows[1].op, nic::rdma_op::send_imm);
}

}  // namespace workload_test
}  // namespace fabricsim::testbench
