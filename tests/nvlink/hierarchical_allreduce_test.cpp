// The hierarchical allreduce (testbench/cluster_run.h) and alltoall (testbench/cluster_alltoall.h) on HGX B200
// nodes with Spectrum-X rails: every GPU's result equals the reference summed over all GPUs (alltoall: every
// block what its sender filled it with), and the busbw stays under the hand bounds computed here
// from the link rates and wire formats (not read from the report), within a stated fraction of the bound of
// its phase-after-phase schedule. Runs of a few seconds, each forked.
#include <gtest/gtest.h>

#include <algorithm>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/support/scenario_child.h"

namespace fabricsim::testbench {
namespace hierarchical_allreduce_test {

using nlohmann::json;

std::string cluster(uint64_t nodes, uint64_t bytes, const std::string& extra = "",
                    const std::string& op = "allreduce") {
  return "system: {preset: hgx_b200, nodes: " + std::to_string(nodes) +
         ", scale_out: spectrum_x}\n"
         "workload: {kind: collective}\n"
         "collective: {op: " +
         op +
         ", algo: hierarchical, dtype: float, iterations: 1, warmup_iterations: 0, "
         "chunk_bytes: 65536, min_bytes: " +
         std::to_string(bytes) + ", max_bytes: " + std::to_string(bytes) + "}\n" + extra;
}

// By hand, from the published figures the preset sets (docs/calibration.md): 8 GPUs per node, 18 NVLink 5
// links of 50 GB/s per direction, 256-byte payloads in 272 wire bytes; one 400 Gb/s Ethernet NIC per GPU,
// 4096-byte payloads in 4096 + 82 wire bytes (Ethernet 14, IPv4 20, UDP 8, BTH 12, ICRC 4, FCS 4, preamble
// 8, gap 12).
struct bounds {
  double nvlink, rail, serial;
  double rs_us, inter_us;  // the least time of the reduce-scatter (and of the allgather) and of the rail phase
};

bounds by_hand(double d, double bytes) {
  const double g = 8, n = g * d, bf = 2 * (n - 1) / n;
  const double b_nv = 18 * 50.0 * 256 / 272;                                        // GB/s per GPU: 847.06
  const double b_rail = 400 / 8.0 * 4096 / 4178;                                    // GB/s per NIC: 49.02
  const double nv = 2 * (g - 1) / g / b_nv, rail = 2 * (d - 1) / (d * g) / b_rail;  // s per byte of buffer
  return {bf / nv, bf / rail, bf / (nv + rail), (g - 1) / g * bytes / b_nv / 1e3, rail * bytes / 1e3};
}

void check_run(uint64_t nodes, uint64_t bytes, double fraction) {
  const json r = test::run_scenario_yaml(cluster(nodes, bytes));
  ASSERT_TRUE(r.contains("collective")) << r.dump().substr(0, 2000);
  const json& row = r["collective"]["rows"][0];
  EXPECT_TRUE(r["verified"].get<bool>());
  EXPECT_EQ(row["wrong"], 0u);
  EXPECT_EQ(r["collective"]["result_checked_bytes"], 8 * nodes * bytes);  // every GPU's whole result
  EXPECT_EQ(r["hierarchical"]["rail_writes_failed"], 0u);
  const bounds b = by_hand(double(nodes), double(bytes));
  const double busbw = row["busbw_gbps"].get<double>();
  EXPECT_LE(busbw, std::min(b.nvlink, b.rail)) << "the smaller of the NVLink and rail bounds";
  EXPECT_LE(busbw, b.serial);
  EXPECT_GE(busbw, fraction * b.serial) << "bound " << b.serial;
  const json& ph = row["phases_us"];
  EXPECT_GE(ph["reduce_scatter"].get<double>(), b.rs_us);
  EXPECT_GE(ph["allgather"].get<double>(), b.rs_us);
  EXPECT_GE(ph["inter_domain"].get<double>(), b.inter_us);
  EXPECT_NEAR(ph["reduce_scatter"].get<double>() + ph["inter_domain"].get<double>() + ph["allgather"].get<double>(),
              row["time_us"].get<double>(), 1e-3);
  // The report's bounds are the same formulas.
  EXPECT_NEAR(r["hierarchical"]["serial_busbw_bound_gbps"].get<double>(), b.serial, 1e-6 * b.serial);
  std::cout << nodes << " nodes, " << bytes << " B: busbw " << busbw << " GB/s, bounds nvlink " << b.nvlink << " rail "
            << b.rail << " serial " << b.serial << "; phases " << ph.dump() << "\n";
}

// The buffers are the smallest at which the bound's fraction still holds with a margin (8 MiB on 2 nodes: 94 %
// of the serial bound; 4 MiB on 4 nodes only 81 %, so 4 nodes keep 8 MiB): a smaller buffer, where latency
// weighs more, asks more of the model than a larger one, and the run costs half.
TEST(hierarchical_allreduce, two_nodes_reach_the_serial_bound_and_stay_under_both) { check_run(2, 8u << 20, 0.9); }

TEST(hierarchical_allreduce, four_nodes_reach_the_serial_bound_and_stay_under_both) { check_run(4, 8u << 20, 0.9); }

// collective.intra nvls: phases 1 and 3 by NVLink SHARP. Per GPU and direction NVLink then carries (2G-1)/G
// of the buffer (the whole buffer out as contributions, then the other G-1 shares in), so the NVLink part of
// the serial bound is (2G-1)/G / B_nv in place of 2(G-1)/G / B_nv.
TEST(hierarchical_allreduce, nvls_inside_the_domains_reaches_its_serial_bound) {
  const uint64_t nodes = 2, bytes = 16u << 20;
  std::string yaml = cluster(nodes, bytes);
  yaml.replace(yaml.find("algo: hierarchical"), 18, "algo: hierarchical, intra: nvls");
  const json r = test::run_scenario_yaml(yaml);
  ASSERT_TRUE(r.contains("collective")) << r.dump().substr(0, 2000);
  const json& row = r["collective"]["rows"][0];
  EXPECT_TRUE(r["verified"].get<bool>());
  EXPECT_EQ(row["wrong"], 0u);
  EXPECT_EQ(r["collective"]["result_checked_bytes"], 8 * nodes * bytes);
  EXPECT_EQ(r["hierarchical"]["intra"], "nvls");
  const double g = 8, n = 16, bf = 2 * (n - 1) / n;
  const double b_nv = 18 * 50.0 * 256 / 272, b_rail = 400 / 8.0 * 4096 / 4178;
  const double nv = (2 * g - 1) / g / b_nv, rail = 2 * (nodes - 1.0) / (nodes * g) / b_rail;
  const double serial = bf / (nv + rail), busbw = row["busbw_gbps"].get<double>();
  EXPECT_LE(busbw, serial);
  EXPECT_GE(busbw, 0.85 * serial) << "bound " << serial;
  EXPECT_NEAR(r["hierarchical"]["serial_busbw_bound_gbps"].get<double>(), serial, 1e-6 * serial);
  // Phase 1 sends the whole buffer from every GPU, phase 3 receives (G-1)/G of it: each no shorter.
  const json& ph = row["phases_us"];
  EXPECT_GE(ph["reduce_scatter"].get<double>(), double(bytes) / b_nv / 1e3);
  EXPECT_GE(ph["allgather"].get<double>(), (g - 1) / g * double(bytes) / b_nv / 1e3);
  std::cout << "nvls: busbw " << busbw << " GB/s, serial bound " << serial << "; phases " << ph.dump() << "\n";
}

TEST(hierarchical_allreduce, sharp_across_the_rails_is_refused_on_spectrum_x) {
  std::string yaml = cluster(2, 1u << 20);
  yaml.replace(yaml.find("algo: hierarchical"), 18, "algo: hierarchical, inter: sharp");
  const test::child_result c =
      test::run_in_child([&] { return run_scenario(load_scenario_text(yaml, "t.yaml")).dump(); });
  EXPECT_FALSE(c.ok);
  EXPECT_NE(c.output.find("t.yaml: collective.inter sharp: SHARP aggregation needs Quantum-X800 switches; "
                          "system.scale_out is spectrum_x"),
            std::string::npos)
      << c.output;
}

TEST(hierarchical_allreduce, needs_a_system_preset_and_an_allreduce) {
  auto run = [](const std::string& yaml) {
    return test::run_in_child(
        [&] { return testbench::run_scenario(testbench::load_scenario_text(yaml, "t.yaml")).dump(); });
  };
  const test::child_result flat =
      run("topology: {kind: rail_optimized}\nworkload: {kind: collective}\ncollective: {algo: hierarchical}\n");
  EXPECT_FALSE(flat.ok);
  EXPECT_NE(flat.output.find("t.yaml: collective.algo hierarchical runs on a cluster of NVLink domains: set "
                             "system.preset"),
            std::string::npos)
      << flat.output;
  std::string yaml = cluster(2, 1u << 20);
  yaml.replace(yaml.find("op: allreduce"), 13, "op: allgather");
  const test::child_result gather = run(yaml);
  EXPECT_FALSE(gather.ok);
  EXPECT_NE(gather.output.find("collective.op allgather: collective.algo hierarchical runs allreduce"),
            std::string::npos)
      << gather.output;
}

// Alltoall (testbench/cluster_alltoall.h), by hand from the same figures. Per GPU and direction NVLink carries (G-1)/G
// of the buffer (its G-1 blocks in the domain and, through the proxies, its (G-1)(D-1) blocks for other rails) and the
// NIC (N-G)/N, at the same time: algbw <= min(B_nv G/(G-1), B_rail N/(N-G)).
double alltoall_bound_by_hand(double d) {
  const double g = 8, n = g * d;
  const double b_nv = 18 * 50.0 * 256 / 272, b_rail = 400 / 8.0 * 4096 / 4178;
  const double nv = b_nv * g / (g - 1);
  return d > 1 ? std::min(nv, b_rail * n / (n - g)) : nv;
}

void check_alltoall(uint64_t nodes, uint64_t bytes, double fraction) {
  const json r = test::run_scenario_yaml(cluster(nodes, bytes, "", "alltoall"));
  ASSERT_TRUE(r.contains("collective")) << r.dump().substr(0, 2000);
  const json& row = r["collective"]["rows"][0];
  EXPECT_TRUE(r["verified"].get<bool>());
  EXPECT_EQ(row["wrong"], 0u);
  EXPECT_EQ(r["collective"]["result_checked_bytes"], 8 * nodes * bytes);  // every GPU's whole receive buffer
  EXPECT_EQ(r["alltoall"]["rail_writes_failed"], 0u);
  // Rail WRITEs: one per block between domains, (N - G) per GPU.
  EXPECT_EQ(r["alltoall"]["rail_writes"], 8 * nodes * (8 * nodes - 8));
  const double bound = alltoall_bound_by_hand(double(nodes)), algbw = row["algbw_gbps"].get<double>();
  EXPECT_LE(algbw, bound);
  EXPECT_GE(algbw, fraction * bound) << "bound " << bound;
  EXPECT_NEAR(r["alltoall"]["algbw_bound_gbps"].get<double>(), bound, 1e-6 * bound);
  const json& ph = row["phases_us"];
  EXPECT_NEAR(std::max(ph["nvlink"].get<double>(), ph["rail"].get<double>()), row["time_us"].get<double>(), 1e-3);
  std::cout << nodes << " nodes, " << bytes << " B: algbw " << algbw << " GB/s, bound " << bound << " ("
            << algbw / bound * 100 << " %); phases " << ph.dump() << "\n";
}

TEST(hierarchical_alltoall, one_node_over_nvlink_reaches_its_bound) { check_alltoall(1, 8u << 20, 0.8); }

// 4 MiB on 2 nodes reaches 95 % of the bound, 2 MiB on 4 nodes 94 % (half the buffers they had).
TEST(hierarchical_alltoall, two_nodes_reach_the_rail_bound) { check_alltoall(2, 4u << 20, 0.8); }

TEST(hierarchical_alltoall, four_nodes_reach_the_rail_bound) { check_alltoall(4, 2u << 20, 0.8); }

// Timing only (nic.place_data false): the NICs place no bytes, so no tray reports a landing; a rail WRITE is done
// when its NIC has received it. Both collectives must still finish within the same hand bounds (the PCIe hop
// into HBM is not timed, so they may only come closer to them).
TEST(hierarchical_collectives, timing_only_runs_finish_within_the_hand_bounds) {
  const std::string timing_only = "nic: {place_data: false}\n";
  const json ar = test::run_scenario_yaml(cluster(2, 8u << 20, timing_only));  // 95 % of the bound
  ASSERT_TRUE(ar.contains("collective")) << ar.dump().substr(0, 2000);
  const json& row = ar["collective"]["rows"][0];
  const bounds b = by_hand(2, double(8u << 20));
  EXPECT_LE(row["busbw_gbps"].get<double>(), b.serial);
  EXPECT_GE(row["busbw_gbps"].get<double>(), 0.9 * b.serial);
  EXPECT_EQ(ar["hierarchical"]["rail_writes_failed"], 0u);
  const json a2a = test::run_scenario_yaml(cluster(2, 4u << 20, timing_only, "alltoall"));  // 97 %
  ASSERT_TRUE(a2a.contains("collective")) << a2a.dump().substr(0, 2000);
  const double bound = alltoall_bound_by_hand(2), algbw = a2a["collective"]["rows"][0]["algbw_gbps"].get<double>();
  EXPECT_LE(algbw, bound);
  EXPECT_GE(algbw, 0.8 * bound);
  EXPECT_EQ(a2a["alltoall"]["rail_writes"], 8u * 2 * 8);
}

TEST(hierarchical_alltoall, refuses_a_reduction_key) {
  std::string yaml = cluster(2, 1u << 20, "", "alltoall");
  yaml.replace(yaml.find("algo: hierarchical"), 18, "algo: hierarchical, intra: nvls");
  const test::child_result c =
      test::run_in_child([&] { return run_scenario(load_scenario_text(yaml, "t.yaml")).dump(); });
  EXPECT_FALSE(c.ok);
  EXPECT_NE(c.output.find("t.yaml: collective.intra nvls, collective.inter ring: an alltoall reduces nothing"),
            std::string::npos)
      << c.output;
}

}  // namespace hierarchical_allreduce_test
}  // namespace fabricsim::testbench
