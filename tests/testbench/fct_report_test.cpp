// Tests of the FCT slowdown report (testbench/fct_report): the ideal FCT against hand calculations, against
// single WRITEs run alone on idle fabrics of several shapes, and the `fct` object of a generated workload.
#include "testbench/fct_report.h"

#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/support/scenario_child.h"

namespace fabricsim::testbench {
namespace fct_report_test {

using nlohmann::json;

// Defaults the hand calculations rely on: 400 Gb/s everywhere, host cables 2 m and leaf-spine cables 10 m
// at 5 ns/m plus 100 ns of FEC (110 ns and 150 ns per link), a 400 ns switch pipeline (80 + 40 + 120 + 80 +
// 80), cut-through after 128 bytes, work-request and receive latencies of 200 ns, 4096-byte MTU.
// Wire bytes: a WRITE packet is 14 + 20 + 8 + 12 (+ 16 RETH on the first) + payload + 4 + 4 + 8 + 12, so
// 98 + payload first and 82 + payload after; an ACK is 86. At 400 Gb/s a byte takes 0.02 ns.
// The responder's reorder block (nic.clock_mhz 1000: an edge every ns from time 0) takes the last packet at
// the first edge at or after its arrival and processes it (queues the ACK) one cycle later.
double block(double arrival_ns) { return std::ceil(arrival_ns - 1e-9) + 1; }

TEST(ideal_fct, one_packet_across_a_leaf_spine_by_hand) {
  const scenario s = load_scenario_text("topology: {kind: leaf_spine, leaves: 2, hosts_per_leaf: 2, spines: 2}\n", "t");
  // h0 -> h3: host link, leaf-spine, spine-leaf, host link; three switches.
  const double data = 4 * (1098 * 0.02)    // 1000-byte WRITE ONLY serialized on each of four links
                      + 110 + 150 + 150 + 110  // cables
                      + 3 * 400                // pipelines
                      - 3 * (1098 - 128) * 0.02;  // cut-through: each switch starts after 128 bytes
  const double ack = 4 * (86 * 0.02) + 520 + 3 * 400;  // 86 bytes: shorter than 128, stored and forwarded
  const double expected = block(200 + data) + 200 + ack;
  EXPECT_NEAR(expected, 3877.88, 1e-9);  // the packet arrives at 1949.64 ns and is processed at 1951 ns
  EXPECT_NEAR(ideal_fct_ns(s, 0, 3, 1000), expected, 1e-6);
  // Same leaf: two links, one switch.
  const double same_leaf = block(200 + (2 * 21.96 + 220 + 400 - 19.4)) + 200 + (2 * 1.72 + 220 + 400);
  EXPECT_NEAR(ideal_fct_ns(s, 0, 1, 1000), same_leaf, 1e-6);
}

TEST(ideal_fct, a_packet_train_through_one_switch_by_hand) {
  const scenario s = load_scenario_text("topology: {hosts: 2}\n", "t");
  // 1 MiB: 256 packets of 4096 bytes, the first 4194 on the wire, the other 255 4178. The NIC's link
  // carries them back to back; the switch takes the first cut-through and holds each later one for its
  // whole length, so the last adds its 4178 bytes once more on the second link.
  const double train = (4194 + 255 * 4178) * 0.02;
  const double data = train + 4178 * 0.02 + 110 + 110 + 400;
  const double ack = 2 * 86 * 0.02 + 220 + 400;
  EXPECT_NEAR(ideal_fct_ns(s, 0, 1, 1048576), block(200 + data) + 200 + ack, 1e-6);
  EXPECT_NEAR(block(200 + data) + 200 + ack, 23120.44, 1e-6);  // arrives at 22295.24 ns, processed at 22297
  // Posted 0.5 ns later, the last packet arrives at 22295.74 ns and is still processed at 22297 ns.
  EXPECT_NEAR(ideal_fct_ns(s, 0, 1, 1048576, 0.5), block(200.5 + data) + 200 + ack - 0.5, 1e-6);
  // Two packets, 4096 + 4 bytes: the first leaves the switch cut-through, its end 128 bytes' time after
  // its last bit came in (plus the pipeline); the second (82 + 4 bytes) came in 86 bytes' time after the
  // first and waits for it, so it ends 128 bytes' time after its own last bit.
  const double two = (4194 + 86) * 0.02 + 128 * 0.02 + 220 + 400;
  EXPECT_NEAR(ideal_fct_ns(s, 0, 1, 4100), block(200 + two) + 200 + ack, 1e-6);
  // Store-and-forward: every packet held for its length, the largest being the first (4194 bytes).
  const scenario saf = load_scenario_text("topology: {hosts: 2}\nswitch: {forwarding: store_and_forward}\n", "t");
  EXPECT_NEAR(ideal_fct_ns(saf, 0, 1, 1048576), block(200 + (train + 4194 * 0.02 + 620)) + 200 + ack, 1e-6);
}

// InfiniBand (switch.model quantum_x800): 800 Gb/s, so a byte takes 0.01 ns; the same cables (110 ns and
// 150 ns); a 200 ns pipeline per switch (quantum.pipeline_ns), cut-through after the LRH and BTH (20 bytes).
// Wire bytes as an HCA frames them (IBTA 5.2, 9.2): LRH 8 + BTH 12 (+ RETH 16 on the first) + payload padded
// to 4 + ICRC 4 + VCRC 2, nothing between packets: a 1000-byte WRITE ONLY is 1042 bytes, an ACK (BTH + AETH 4)
// 30 bytes.
TEST(ideal_fct, infiniband_packets_through_quantum_switches_by_hand) {
  const scenario s = load_scenario_text("topology: {kind: leaf_spine, leaves: 2, hosts_per_leaf: 2, spines: 2, "
                                        "link_gbps: 800}\nswitch: {model: quantum_x800}\n", "t");
  const double data = 4 * (1042 * 0.01)           // serialized on each of four links
                      + 110 + 150 + 150 + 110     // cables
                      + 3 * 200                   // pipelines
                      - 3 * (1042 - 20) * 0.01;   // cut-through after 20 bytes at each switch
  const double ack = 4 * (30 * 0.01) + 520 + 3 * 200 - 3 * (30 - 20) * 0.01;
  EXPECT_NEAR(block(200 + data) + 200 + ack, 2653.9, 1e-9);  // arrives at 1331.02 ns, processed at 1333
  EXPECT_NEAR(ideal_fct_ns(s, 0, 3, 1000), block(200 + data) + 200 + ack, 1e-6);
  // A train through one switch: 1 MiB is 256 packets, the first 4138 bytes and the others 4122; the first
  // cuts through, each later one finds the egress busy and is held for its whole length, so the last adds
  // its 41.22 ns once more after the pipeline.
  const scenario one = load_scenario_text("topology: {hosts: 2, link_gbps: 800}\nswitch: {model: quantum_x800}\n", "t");
  const double train = (4138 + 255 * 4122) * 0.01 + 4122 * 0.01 + 110 + 200 + 110;
  const double ack1 = 2 * 30 * 0.01 + 220 + 200 - 10 * 0.01;
  EXPECT_NEAR(block(200 + train) + 200 + ack1, 11835.5, 1e-6);  // arrives at 11213.7 ns, processed at 11215
  EXPECT_NEAR(ideal_fct_ns(one, 0, 1, 1048576), block(200 + train) + 200 + ack1, 1e-6);
  // Store-and-forward (quantum.cut_through false): the first packet is held for its 4138 bytes too.
  const scenario saf = load_scenario_text(
      "topology: {hosts: 2, link_gbps: 800}\nswitch: {model: quantum_x800}\nquantum: {cut_through: false}\n", "t");
  EXPECT_NEAR(ideal_fct_ns(saf, 0, 1, 1048576),
              block(200 + ((4138 + 255 * 4122) * 0.01 + 4138 * 0.01 + 420)) + 200 + (2 * 0.30 + 420), 1e-6);
}

TEST(ideal_fct, path_tiers_follow_the_topology) {
  using topology::tier;
  topology::topology_params t;
  t.kind = "three_tier";
  t.pods = 2;
  t.leaves = 2;
  t.spines = 2;
  t.cores = 2;
  t.hosts_per_leaf = 2;
  EXPECT_EQ(path_tiers(t, 0, 1).size(), 2u);  // same leaf
  EXPECT_EQ(path_tiers(t, 0, 2).size(), 4u);  // same pod
  EXPECT_EQ(path_tiers(t, 0, 4), (std::vector<tier>{tier::host, tier::leaf_spine, tier::spine_core, tier::spine_core,
                                                    tier::leaf_spine, tier::host}));
  // multi_site, 2 leaves x 2 hosts per site: h4 is in site 1, so leaf, spine, edge, long cable, edge, spine, leaf.
  t.kind = "multi_site";
  EXPECT_EQ(path_tiers(t, 0, 2).size(), 4u);  // same site
  EXPECT_EQ(path_tiers(t, 0, 4), (std::vector<tier>{tier::host, tier::leaf_spine, tier::spine_core, tier::inter_site,
                                                    tier::spine_core, tier::leaf_spine, tier::host}));
}

// Single WRITEs far apart in time (each alone on the idle fabric): the model's FCT against the ideal.
struct alone_case {
  const char* label;
  std::string topology_and_switch;  // YAML
  std::string src, dst;
};

void PrintTo(const alone_case& c, std::ostream* os) { *os << c.label; }

class alone : public ::testing::TestWithParam<alone_case> {};

TEST_P(alone, a_flow_alone_on_the_idle_fabric_takes_its_ideal_fct) {
  const alone_case& k = GetParam();
  const std::vector<uint64_t> sizes = {1, 1000, 4096, 4100, 5000, 8192, 12289, 65536, 1000003, 1048576};
  std::string yaml = k.topology_and_switch + "writes:\n";
  for (size_t i = 0; i < sizes.size(); ++i)  // 100 us apart: the longest takes about 23 us
    yaml += "  - {src: " + k.src + ", dst: " + k.dst + ", bytes: " + std::to_string(sizes[i]) +
            ", start_ns: " + std::to_string(i * 100000) + "}\n";
  const json r = test::run_scenario_yaml(yaml);
  ASSERT_TRUE(r.contains("flows"));
  const scenario s = load_scenario_text(yaml, "t.yaml");
  for (const json& f : r["flows"]) {
    SCOPED_TRACE(f.dump());
    ASSERT_TRUE(f["completed"].get<bool>());
    const double ideal = ideal_fct_ns(s, *topology::host_index(k.src, 64), *topology::host_index(k.dst, 64),
                                      f["bytes"].get<uint64_t>());
    EXPECT_DOUBLE_EQ(f["ideal_fct_ns"].get<double>(), ideal);
    // To the picosecond (the report's ns are doubles: 0.001 ns of slack for their rounding).
    EXPECT_NEAR(f["fct_ns"].get<double>(), ideal, 0.001);
    EXPECT_NEAR(f["slowdown"].get<double>(), 1.0, 1e-6);
  }
}

INSTANTIATE_TEST_SUITE_P(
    fabrics, alone,
    ::testing::Values(
        alone_case{"single_switch", "topology: {hosts: 2}\n", "h0", "h1"},
        alone_case{"single_switch_store_and_forward",
                   "topology: {hosts: 2}\nswitch: {forwarding: store_and_forward}\n", "h0", "h1"},
        alone_case{"leaf_spine_cross_leaf", "topology: {kind: leaf_spine, leaves: 2, hosts_per_leaf: 2, spines: 2}\n",
                   "h0", "h3"},
        alone_case{"leaf_spine_same_leaf", "topology: {kind: leaf_spine, leaves: 2, hosts_per_leaf: 2, spines: 2}\n",
                   "h1", "h0"},
        alone_case{"three_tier_cross_pod",
                   "topology: {kind: three_tier, pods: 2, leaves: 2, spines: 2, cores: 2, hosts_per_leaf: 2}\n", "h0",
                   "h7"},
        alone_case{"leaf_spine_800G_mtu_1024",
                   "topology: {kind: leaf_spine, leaves: 2, hosts_per_leaf: 2, spines: 2, link_gbps: 800}\n"
                   "switch: {port_config: 64x800}\nnic: {mtu_bytes: 1024}\n",
                   "h2", "h1"},
        alone_case{"leaf_spine_200G_uplinks",  // slower uplinks: the train queues at the leaf, no cut-through there
                   "topology: {kind: leaf_spine, leaves: 2, hosts_per_leaf: 2, spines: 2, uplink_gbps: 200}\n", "h0",
                   "h3"},
        alone_case{"single_switch_ack_every_packet", "topology: {hosts: 2}\nnic: {ack_every_packets: 1}\n", "h0",
                   "h1"},
        alone_case{"quantum_single_switch", "topology: {hosts: 2, link_gbps: 800}\nswitch: {model: quantum_x800}\n",
                   "h0", "h1"},
        alone_case{"quantum_leaf_spine_cross_leaf",
                   "topology: {kind: leaf_spine, leaves: 2, hosts_per_leaf: 2, spines: 2, link_gbps: 800}\n"
                   "switch: {model: quantum_x800}\n",
                   "h0", "h3"},
        alone_case{"quantum_store_and_forward_mtu_1024",
                   "topology: {kind: leaf_spine, leaves: 2, hosts_per_leaf: 2, spines: 2, link_gbps: 800}\n"
                   "switch: {model: quantum_x800}\nquantum: {cut_through: false}\nnic: {mtu_bytes: 1024}\n",
                   "h2", "h1"}),
    [](const ::testing::TestParamInfo<alone_case>& i) { return std::string(i.param.label); });

TEST(fct_report, generated_workload_has_a_consistent_fct_object) {
  const std::string csv =
      (std::filesystem::temp_directory_path() / ("fabricsim_fct_" + std::to_string(getpid()) + ".csv")).string();
  const std::string fabric = "topology: {kind: leaf_spine, leaves: 2, hosts_per_leaf: 4, spines: 2}\n"
                             "nic: {place_data: false}\n";
  const json r = test::run_scenario_yaml("seed: 3\n" + fabric +
                                         "workload: {kind: generated, distribution: hadoop, load: 0.6, "
                                         "flow_count: 400, write_flow_file: " + csv + "}\n");
  // The same seed gives the same run; the flow list it wrote replays it exactly.
  EXPECT_EQ(test::run_scenario_yaml("seed: 3\n" + fabric +
                                    "workload: {kind: generated, distribution: hadoop, load: 0.6, flow_count: 400}\n")
                .value("fct", json()),
            r["fct"]);
  EXPECT_EQ(test::run_scenario_yaml("seed: 3\n" + fabric + "workload: {kind: flows, flow_file: " + csv + "}\n")
                .value("fct", json()),
            r["fct"]);
  std::filesystem::remove(csv);
  ASSERT_TRUE(r.contains("fct"));
  const json& fct = r["fct"];
  ASSERT_EQ(fct["buckets"].size(), 5u);
  EXPECT_EQ(fct["buckets"][0]["bucket"], "<=10KB");
  EXPECT_EQ(fct["buckets"][4]["bucket"], ">10MB");
  EXPECT_EQ(r["operations"], 400);
  uint64_t flows = 0, completed = 0;
  for (const json& b : fct["buckets"]) {
    flows += b["flows"].get<uint64_t>();
    completed += b["completed"].get<uint64_t>();
    if (b["completed"] == 0) {
      EXPECT_TRUE(b["p50_slowdown"].is_null());
      continue;
    }
    const double p50 = b["p50_slowdown"], p95 = b["p95_slowdown"], p99 = b["p99_slowdown"];
    EXPECT_LE(b["min_slowdown"].get<double>(), p50);
    EXPECT_LE(p50, p95);
    EXPECT_LE(p95, p99);
    EXPECT_LE(p99, b["max_slowdown"].get<double>());
  }
  EXPECT_EQ(flows, 400u);
  EXPECT_EQ(completed, r["completed"].get<uint64_t>());
  EXPECT_EQ(fct["overall"]["completed"], completed);
  // Hadoop at these sizes: most flows are below 10 KB (60 % below 1 KB).
  EXPECT_GT(fct["buckets"][0]["flows"].get<uint64_t>(), 200u);
  // Every completed flow: slowdown = FCT / ideal, and no flow faster than alone: load only delays frames,
  // and the ACK that completes a WRITE covers its last packet only once it is placed, nic.rx_latency_ns after
  // it came in, as alone (docs/report.md).
  std::vector<double> all;
  double fct_sum = 0;
  for (const json& f : r["flows"]) {
    if (!f["completed"].get<bool>()) continue;
    const double sd = f["slowdown"];
    const double fct_ns = f["fct_ns"], ideal = f["ideal_fct_ns"];
    EXPECT_NEAR(sd, fct_ns / ideal, 1e-12);
    EXPECT_GE(fct_ns, ideal - 0.001) << f.dump();  // 0.001 ns: the report's doubles
    EXPECT_GE(sd, 1.0 - 1e-9) << f.dump();
    all.push_back(sd);
    fct_sum += fct_ns;
  }
  std::sort(all.begin(), all.end());
  ASSERT_FALSE(all.empty());
  // Nearest rank by hand: the p-th percentile of n values is the ceil(p n)-th smallest.
  EXPECT_DOUBLE_EQ(fct["overall"]["p50_slowdown"].get<double>(), all[size_t(std::ceil(0.5 * all.size())) - 1]);
  EXPECT_DOUBLE_EQ(fct["overall"]["p99_slowdown"].get<double>(), all[size_t(std::ceil(0.99 * all.size())) - 1]);
  EXPECT_NEAR(fct["overall"]["mean_fct_ns"].get<double>(), fct_sum / double(all.size()), 1e-6);
  // A loaded fabric: some flow waited behind another.
  EXPECT_GT(fct["overall"]["max_slowdown"].get<double>(), 1.05);
}

TEST(fct_report, queue_pairs_per_flow_lets_a_short_write_pass_a_long_one) {
  // h0 posts 1 MiB to h1, then 1000 bytes 100 ns later. On one queue pair the short WRITE waits for the
  // long one: the 1 MiB alone takes about 21 us on the wire (1,069,584 wire bytes at 400 Gb/s). On its own
  // queue pair it is sent between the long one's packets (the NIC round-robins), behind at most the frames
  // already in the NIC's MAC FIFO (nic.tx_fifo_frames, 4) and one at the switch egress: about five packets
  // of the long WRITE (84 ns each), plus the cut-through it no longer gets, below six packets' time.
  const std::string yaml = "topology: {hosts: 2}\n"
                           "writes: [{src: h0, dst: h1, bytes: 1048576}, {src: h0, dst: h1, bytes: 1000, start_ns: 100}]\n";
  const json shared = test::run_scenario_yaml(yaml);
  const json own = test::run_scenario_yaml(yaml + "workload: {queue_pairs: per_flow}\n");
  ASSERT_TRUE(shared.contains("flows") && own.contains("flows"));
  const double ideal = own["flows"][1]["ideal_fct_ns"];
  EXPECT_GT(shared["flows"][1]["fct_ns"].get<double>(), 20000.0);
  EXPECT_LT(own["flows"][1]["fct_ns"].get<double>(), ideal + 6 * 84.0);
  EXPECT_GE(own["flows"][1]["fct_ns"].get<double>(), ideal - 0.01);
}

}  // namespace fct_report_test
}  // namespace fabricsim::testbench
