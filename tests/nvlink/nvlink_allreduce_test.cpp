// Allreduce inside an NVLink domain (testbench/nvlink_collective, topology.kind nvl72), against hand bounds
// computed here from the parameters: per GPU B = links x link rate x payload / wire bytes of a full packet;
// ring busbw <= B (every GPU sends 2(n-1)/n of the buffer), NVLS busbw <= 2(n-1)/n x B (every GPU sends
// and receives the buffer once). Large buffers reach 90 % of their bound; NVLS beats the ring; no port
// ever holds more than the credits it advertised; every GPU's result equals the reference sum.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "testbench/nvlink_collective.h"
#include "testbench/scenario.h"
#include "testbench/simulation.h"
#include "tests/support/sc_fork.h"

namespace fabricsim::test {
namespace nvlink_allreduce_test {

// 8 GPUs and 18 chips: NVLink 5 GPUs (18 links of 50 GB/s) in a domain small enough to run large buffers.
std::string domain_yaml(const std::string& algo, uint64_t bytes, const std::string& dtype, bool data,
                        unsigned domains = 1) {
  return "topology: {kind: nvl72}\n"
         "nvlink: {gpus_per_domain: 8, switch_chips: 18, links_per_gpu: 18, domains: " +
         std::to_string(domains) +
         "}\n"
         "workload: {kind: collective}\n"
         "nic: {place_data: " +
         std::string(data ? "true" : "false") +
         "}\n"
         "collective: {op: allreduce, algo: " +
         algo + ", min_bytes: " + std::to_string(bytes) + ", max_bytes: " + std::to_string(bytes) +
         ", dtype: " + dtype + ", iterations: 1, warmup_iterations: 0, chunk_bytes: 262144}\n";
}

nlohmann::json run(const std::string& yaml) {
  const child_result c =
      run_in_child([&] { return testbench::run_scenario(testbench::load_scenario_text(yaml, "t.yaml")).dump(); });
  if (!c.ok) throw std::runtime_error(c.output);
  return nlohmann::json::parse(c.output);
}

double per_gpu_bound() {
  nvlink::nvlink_params p;  // the defaults the scenarios use: NVLink 5
  return double(p.links_per_gpu) * p.link_gbytes_per_s * double(p.max_payload_bytes) /
         double((p.header_bytes + p.max_payload_bytes + p.flit_bytes - 1) / p.flit_bytes * p.flit_bytes);
}

void expect_credits_held(const nlohmann::json& r) {
  const auto& nv = r.at("nvlink");
  EXPECT_EQ(nv.at("credit_overruns").get<uint64_t>(), 0u);
  EXPECT_EQ(nv.at("credit_violations").get<uint64_t>(), 0u);
  EXPECT_LE(nv.at("max_ingress_flits").get<uint64_t>(), nv.at("ingress_limit_flits").get<uint64_t>());
}

TEST(nvlink_allreduce, ring_busbw_reaches_the_link_bound_and_not_beyond) {
  const nlohmann::json r = run(domain_yaml("nvlink_ring", 16 << 20, "float", false));
  const double bound = per_gpu_bound();  // 18 x 50 x 256 / 272 = 847.06 GB/s
  EXPECT_NEAR(bound, 847.06, 0.01);
  EXPECT_NEAR(r.at("nvlink").at("ring_busbw_bound_gbps").get<double>(), bound, 1e-9);
  const double busbw = r.at("collective").at("rows").at(0).at("busbw_gbps").get<double>();
  EXPECT_LE(busbw, bound);
  EXPECT_GE(busbw, 0.9 * bound);
  expect_credits_held(r);
}

TEST(nvlink_allreduce, nvls_beats_the_ring_within_its_own_bound) {
  const nlohmann::json nvls = run(domain_yaml("nvls", 16 << 20, "float", false));
  const nlohmann::json ring = run(domain_yaml("nvlink_ring", 16 << 20, "float", false));
  const double n = 8, bound = 2 * (n - 1) / n * per_gpu_bound();  // 1482.4 GB/s
  const double b_nvls = nvls.at("collective").at("rows").at(0).at("busbw_gbps").get<double>();
  const double b_ring = ring.at("collective").at("rows").at(0).at("busbw_gbps").get<double>();
  EXPECT_GT(b_nvls, 1.5 * b_ring);
  EXPECT_LE(b_nvls, bound);
  EXPECT_GE(b_nvls, 0.9 * bound);
  // Every chip multicast every packet of its share to the 8 GPUs: 16 MiB / 256 B packets x 8 copies.
  EXPECT_EQ(nvls.at("nvlink").at("nvls_result_copies").get<uint64_t>(), (16u << 20) / 256 * 8);
  expect_credits_held(nvls);
}

TEST(nvlink_allreduce, every_result_equals_the_reference_sum) {
  for (const char* algo : {"nvlink_ring", "nvls"})
    for (const char* dtype : {"int32", "float"}) {
      // 1 MiB + 3 elements: chunks of unequal size and a short last packet.
      const nlohmann::json r = run(domain_yaml(algo, (1 << 20) + 12, dtype, true));
      const auto& c = r.at("collective");
      EXPECT_TRUE(r.at("verified").get<bool>()) << algo << " " << dtype;
      EXPECT_EQ(c.at("rows").at(0).at("wrong").get<uint64_t>(), 0u) << algo << " " << dtype;
      EXPECT_EQ(c.at("result_checked_bytes").get<uint64_t>(), 8u * ((1 << 20) + 12)) << algo << " " << dtype;
      expect_credits_held(r);
    }
}

// Two domains share no NVLink: each runs its own allreduce in the time one domain alone takes, and both
// domains' results are checked.
TEST(nvlink_allreduce, domains_share_no_nvlink) {
  for (const char* algo : {"nvlink_ring", "nvls"}) {
    const nlohmann::json r1 = run(domain_yaml(algo, 1 << 20, "int32", true));
    const nlohmann::json r2 = run(domain_yaml(algo, 1 << 20, "int32", true, 2));
    EXPECT_TRUE(r2.at("verified").get<bool>()) << algo;
    EXPECT_EQ(r2.at("collective").at("result_checked_bytes").get<uint64_t>(), 2u * 8 * (1 << 20)) << algo;
    EXPECT_EQ(r2.at("collective").at("rows").at(0).at("time_us").get<double>(),
              r1.at("collective").at("rows").at(0).at("time_us").get<double>())
        << algo;
  }
}

TEST(nvlink_allreduce, the_result_check_finds_a_wrong_element) {
  const uint64_t bytes = 4096;
  const auto t = sw::sharp_dtype::int32;
  std::vector<uint8_t> sum(bytes), part(bytes);
  testbench::fill_allreduce_source(sum.data(), bytes, t, 9, 0);
  for (uint32_t g : {1u, 2u}) {
    testbench::fill_allreduce_source(part.data(), bytes, t, 9, g);
    sw::sharp_reduce(t, sum.data(), part.data(), bytes);
  }
  const std::vector<uint8_t> ref = testbench::allreduce_reference(bytes, t, 9, {0, 1, 2});
  EXPECT_EQ(testbench::count_wrong_elements(sum.data(), ref.data(), bytes, t), 0u);
  sum[400] ^= 1;
  EXPECT_EQ(testbench::count_wrong_elements(sum.data(), ref.data(), bytes, t), 1u);
  // A missing member's contribution is wrong wherever it is not zero (1 value in 255 is).
  const std::vector<uint8_t> two = testbench::allreduce_reference(bytes, t, 9, {0, 1});
  EXPECT_GT(testbench::count_wrong_elements(sum.data(), two.data(), bytes, t), 1000u);
}

TEST(nvlink_allreduce, bad_input_is_refused_naming_the_keys) {
  auto message = [](const std::string& yaml) {
    try {
      testbench::run_scenario(testbench::load_scenario_text(yaml, "t.yaml"));
    } catch (const core::config_error& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_NE(message("topology: {kind: nvl72}\nworkload: {kind: collective}\ncollective: {algo: ring}\n")
                .find("collective.algo ring: inside an NVLink domain use nvlink_ring or nvls"),
            std::string::npos);
  EXPECT_NE(message("topology: {kind: nvl72}\nworkload: {kind: permutation}\n")
                .find("topology.kind nvl72 runs workload.kind collective only"),
            std::string::npos);
  EXPECT_NE(message("topology: {kind: nvl72}\nnvlink: {links_per_gpu: 20}\nworkload: {kind: collective}\n"
                    "collective: {algo: nvls}\n")
                .find("t.yaml: nvlink: links_per_gpu 20 is not a multiple of switch_chips 18"),
            std::string::npos);
  EXPECT_NE(message("topology: {kind: single_switch, hosts: 4}\nworkload: {kind: collective}\n"
                    "collective: {algo: nvls}\n")
                .find("collective.algo nvls runs inside an NVLink domain: set topology.kind nvl72"),
            std::string::npos);
}

}  // namespace nvlink_allreduce_test
}  // namespace fabricsim::test
