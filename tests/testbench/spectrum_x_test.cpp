// The Spectrum-X headline on fabrics small enough for the test suite: a non-blocking leaf-spine, every NIC
// streaming 4 MiB (four 1 MiB WRITEs posted at once on one queue pair) to a NIC behind another leaf
// (leaf-to-leaf pairs), lossless class with PFC and no NIC congestion control; ECMP against per-packet
// adaptive routing with out-of-order placement.
//
// Expected, from the load-balancing argument rather than from the model: with n uplinks per leaf and n
// elephants hashed onto them, the uplinks carrying at least one flow carry the traffic, on average
// 1 - (1 - 1/n)^n of it (65.6 % at n = 8, the uplinks per leaf of both sizes here); individual draws of the hash spread
// around that, so ECMP must land in 0.55-0.72 (the band). Adaptive routing fills every uplink: at least 0.93.
//
// What the byte check can show in 60 us: a 1 MiB WRITE takes 1048576 x 8 / (0.979 x 400 Gb/s) = 21.4 us at
// adaptive routing's payload rate (4096/4178 of the line), so each NIC's second WRITE completes near 43 us and
// its third not before 64 us: exactly two per NIC complete. Under ECMP a flow alone on its uplink completes two
// as well, one sharing its uplink with another completes one (42.8 us each), so ECMP completes fewer. Either
// way every byte that landed is compared as it lands (a completed WRITE whole, an unfinished one in part):
// checked_bytes = placed_bytes - duplicate_bytes, and each completed WRITE has all 1 MiB checked.
// Each run forks (SystemC elaborates once per process).
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <string>

#include "testbench/simulation.h"
#include "tests/support/scenario_child.h"

namespace fabricsim::testbench {
namespace spectrum_x_test {

using nlohmann::json;

struct fabric_size {
  unsigned leaves, hosts_per_leaf;  // spines = hosts_per_leaf: non-blocking
};

constexpr uint64_t k_write_bytes = 1048576;

json run(const fabric_size& f, const std::string& routing, uint64_t seed) {
  const std::string yaml = "seed: " + std::to_string(seed) +
                           "\nrun: {duration_us: 60, warmup_us: 15}\n"
                           "topology: {kind: leaf_spine, leaves: " +
                           std::to_string(f.leaves) + ", hosts_per_leaf: " + std::to_string(f.hosts_per_leaf) +
                           ", spines: " + std::to_string(f.hosts_per_leaf) +
                           ", link_gbps: 400}\n"
                           "switch: {routing: " +
                           routing +
                           "}\nnic: {path_entropy: fixed, reorder: rtl, reorder_window: 1024}\n"
                           "workload: {kind: permutation, pattern: leaf_pairs, message_bytes: " +
                           std::to_string(k_write_bytes) + ", messages: 4}\n";
  return test::run_scenario_yaml(yaml);
}

class spectrum_x : public ::testing::TestWithParam<std::tuple<fabric_size, uint64_t>> {};

TEST_P(spectrum_x, ecmp_collides_adaptive_routing_fills_the_fabric) {
  const auto [f, seed] = GetParam();
  const json ecmp = run(f, "ecmp", seed);
  const json adaptive = run(f, "adaptive", seed);
  ASSERT_TRUE(ecmp.contains("fabric") && adaptive.contains("fabric"));
  const double n = f.hosts_per_leaf;
  const double hashing = 1 - std::pow(1 - 1 / n, n);
  const double e = ecmp["fabric"]["effective_throughput"].get<double>();
  const double a = adaptive["fabric"]["effective_throughput"].get<double>();
  EXPECT_GE(e, 0.55) << "formula " << hashing;
  EXPECT_LE(e, 0.72) << "formula " << hashing;
  EXPECT_GE(a, 0.93);
  EXPECT_LE(a, 1.0);
  // Lossless: PFC holds the collisions back instead of dropping; adaptive routing needs no pause at all
  // here, and its receivers placed every out-of-order packet (nothing beyond the window, nothing wrong).
  EXPECT_EQ(ecmp["fabric"]["drops"].get<uint64_t>(), 0u);
  EXPECT_GT(ecmp["fabric"]["pfc_pause_frames"].get<uint64_t>(), 0u);
  EXPECT_EQ(adaptive["fabric"]["drops"].get<uint64_t>(), 0u);
  EXPECT_GT(adaptive["stats"]["leaf0"]["ar_rerouted"]["value"].get<uint64_t>(), 0u);
  // Every byte that landed was compared, and every one matched.
  const uint64_t nics = uint64_t(f.leaves) * f.hosts_per_leaf;
  EXPECT_EQ(adaptive["completed"].get<uint64_t>(), 2 * nics);
  EXPECT_GT(ecmp["completed"].get<uint64_t>(), 0u);
  EXPECT_LT(ecmp["completed"].get<uint64_t>(), adaptive["completed"].get<uint64_t>());
  for (const json* r : {&ecmp, &adaptive}) {
    uint64_t completed_bytes = 0;
    for (const json& flow : (*r)["flows"])
      if (flow["completed"].get<bool>()) {
        completed_bytes += flow["bytes"].get<uint64_t>();
        EXPECT_EQ(flow["checked_bytes"], flow["bytes"]);
      }
    EXPECT_EQ(completed_bytes, (*r)["completed"].get<uint64_t>() * k_write_bytes);
    EXPECT_GT((*r)["checked_bytes"].get<uint64_t>(), completed_bytes);  // the third WRITEs, in part
    EXPECT_EQ((*r)["checked_bytes"].get<uint64_t>(),
              (*r)["placed_bytes"].get<uint64_t>() - (*r)["duplicate_bytes"].get<uint64_t>());
    EXPECT_EQ((*r)["mismatched_bytes"].get<uint64_t>(), 0u);
    EXPECT_TRUE((*r)["verified"].get<bool>());
  }
}

INSTANTIATE_TEST_SUITE_P(sizes_and_seeds, spectrum_x,
                         ::testing::Combine(::testing::Values(fabric_size{4, 8}, fabric_size{8, 8}),
                                            ::testing::Values(uint64_t(1), uint64_t(2))),
                         [](const auto& info) {
                           const fabric_size f = std::get<0>(info.param);
                           return std::to_string(f.leaves * f.hosts_per_leaf) + "_nics_seed" +
                                  std::to_string(std::get<1>(info.param));
                         });

}  // namespace spectrum_x_test
}  // namespace fabricsim::testbench
