// The Spectrum-X headline on fabrics small enough for the test suite: a non-blocking leaf-spine, every NIC
// streaming one long WRITE to a NIC behind another leaf (leaf-to-leaf pairs), lossless class with PFC and no
// NIC congestion control; ECMP against per-packet adaptive routing with out-of-order placement.
//
// Expected, from the load-balancing argument rather than from the model: with n uplinks per leaf and n
// elephants hashed onto them, the uplinks carrying at least one flow carry the traffic, on average
// 1 - (1 - 1/n)^n of it (65.6 % at n = 8, the uplinks per leaf of both sizes here); individual draws of the hash spread around that,
// so ECMP must land in 0.55-0.72 (the band). Adaptive routing fills every uplink: at least 0.93.
// Each run forks (SystemC elaborates once per process).
#include <cmath>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "testbench/simulation.h"
#include "tests/support/scenario_child.h"

namespace fabricsim::testbench {
namespace {

using nlohmann::json;

struct fabric_size {
  unsigned leaves, hosts_per_leaf;  // spines = hosts_per_leaf: non-blocking
};

json run(const fabric_size& f, const std::string& routing, uint64_t seed, bool place) {
  const std::string yaml = "seed: " + std::to_string(seed) +
                           "\nrun: {duration_us: 60, warmup_us: 15}\n"
                           "topology: {kind: leaf_spine, leaves: " +
                           std::to_string(f.leaves) + ", hosts_per_leaf: " + std::to_string(f.hosts_per_leaf) +
                           ", spines: " + std::to_string(f.hosts_per_leaf) +
                           ", link_gbps: 400}\n"
                           "switch: {routing: " +
                           routing + "}\nnic: {path_entropy: fixed, reorder: rtl, reorder_window: 1024, place_data: " +
                           (place ? "true" : "false") +
                           "}\nworkload: {kind: permutation, pattern: leaf_pairs, message_bytes: 4194304}\n";
  return test::run_scenario_yaml(yaml);
}

class spectrum_x : public ::testing::TestWithParam<std::tuple<fabric_size, uint64_t>> {};

TEST_P(spectrum_x, ecmp_collides_adaptive_routing_fills_the_fabric) {
  const auto [f, seed] = GetParam();
  const json ecmp = run(f, "ecmp", seed, false);
  const json adaptive = run(f, "adaptive", seed, true);
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
  EXPECT_TRUE(adaptive["verified"].get<bool>());
  EXPECT_EQ(adaptive["mismatched_bytes"].get<uint64_t>(), 0u);
  EXPECT_GT(adaptive["stats"]["leaf0"]["ar_rerouted"]["value"].get<uint64_t>(), 0u);
}

INSTANTIATE_TEST_SUITE_P(sizes_and_seeds, spectrum_x,
                         ::testing::Combine(::testing::Values(fabric_size{4, 8}, fabric_size{8, 8}),
                                            ::testing::Values(uint64_t(1), uint64_t(2))),
                         [](const auto& info) {
                           const fabric_size f = std::get<0>(info.param);
                           return std::to_string(f.leaves * f.hosts_per_leaf) + "_nics_seed" +
                                  std::to_string(std::get<1>(info.param));
                         });

}  // namespace
}  // namespace fabricsim::testbench
