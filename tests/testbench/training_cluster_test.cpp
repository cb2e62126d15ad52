// Tests of a training step on a system preset's cluster (testbench/training_cluster): HGX B200 nodes (8 GPUs
// per NVLink domain, ConnectX-7 400 Gb/s on Quantum-X800 InfiniBand rails), small enough for seconds.
//   - a tensor-parallel step on one node: every TP allreduce is a ring over NVLink, between its link bound
//     and 1.1 times it and within 1 % of the nvlink_ring collective's time on the same GPUs; the step is the
//     compute-only step (computed here from the model) plus the TP allreduces, which nothing hides;
//   - a data-parallel step on two nodes: the gradient bucket's hierarchical allreduce lies above the serial
//     hand bound of cluster_run.h (NVLink phases, then the rail phase) and within 1.3 times it;
//   - data-checked: tensor, pipeline (sends between nodes) and hierarchical data parallelism on 4 nodes with
//     real bytes, every GPU's result equal to the reference;
//   - refusals.
// Each run forks (tests/support).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "testbench/scenario.h"
#include "testbench/simulation.h"
#include "testbench/training_graph.h"
#include "testbench/training_model.h"
#include "tests/support/scenario_child.h"

namespace fabricsim::testbench {
namespace {

using nlohmann::json;

// NVLink 5 per GPU: 18 links x 50 GB/s x 256 / (256 + 16) payload per wire byte (docs/systems.md).
constexpr double k_nvlink_gbytes = 18 * 50.0 * 256 / 272;
// ConnectX-7 on InfiniBand: 400 Gb/s x 4096 / (4096 + LRH 8 + BTH 12 + ICRC 4 + VCRC 2).
constexpr double k_rail_gbytes = 400 / 8.0 * 4096 / (4096 + 26);

std::string yaml(unsigned nodes, const std::string& training, bool data = false) {
  return "system: {preset: hgx_b200, nodes: " + std::to_string(nodes) +
         "}\nrun: {limit_us: 1000000}\n"
         "nic: {place_data: " +
         (data ? "true" : "false") +
         "}\n"
         "collective: {chunk_bytes: 262144}\n"
         "workload: {kind: training}\n"
         "training: {" +
         training + "}\n";
}

const json* row(const json& t, const std::string& group) {
  for (const json& c : t["collectives"])
    if (c["group"] == group) return &c;
  return nullptr;
}

TEST(training_cluster, tensor_parallel_allreduce_over_nvlink_within_its_link_bound) {
  // One layer, h 2048, s 2048: every TP allreduce is b s h x 2 B = 8 MiB over the node's 8 GPUs.
  const std::string t =
      "layers: 1, hidden: 2048, ffn_hidden: 8192, heads: 16, seq_len: 2048, vocab: 1024, "
      "micro_batches: 1, tensor: 8, pipeline: 1, data: 1";
  const json r = test::run_scenario_yaml(yaml(1, t));
  ASSERT_TRUE(r.contains("training")) << r.dump();
  const json& tr = r["training"];
  ASSERT_TRUE(tr["completed"].get<bool>());
  const json* tp = row(tr, "tp");
  ASSERT_NE(tp, nullptr) << tr.dump(1);
  EXPECT_EQ((*tp)["bytes"].get<uint64_t>(), 8u << 20);
  EXPECT_EQ((*tp)["count"].get<uint64_t>(), 4u);  // two forward, two backward (Megatron-LM)
  const double bound_us = 2.0 * 7 / 8 * double(8u << 20) / k_nvlink_gbytes * 1e-3;  // 17.33 us
  const double each_us = (*tp)["total_us"].get<double>() / 4;
  EXPECT_GE(each_us, bound_us);
  EXPECT_LE(each_us, 1.1 * bound_us);
  EXPECT_EQ(r["training"]["rdma_writes"].get<uint64_t>(), 0u);  // nothing leaves the NVLink domain
  // A second implementation: the nvlink_ring collective (testbench/nvlink_collective) on the same 8 GPUs.
  const json ring = test::run_scenario_yaml(
      "topology: {kind: nvl72}\nnvlink: {gpus_per_domain: 8, switch_chips: 2, links_per_gpu: 18}\n"
      "nic: {place_data: false}\nworkload: {kind: collective}\n"
      "collective: {op: allreduce, algo: nvlink_ring, min_bytes: 8388608, max_bytes: 8388608, dtype: float, "
      "chunk_bytes: 262144, iterations: 1, warmup_iterations: 0}\n");
  ASSERT_TRUE(ring.contains("collective")) << ring.dump();
  const double ring_us = ring["collective"]["rows"][0]["time_us"].get<double>();
  EXPECT_NEAR(each_us, ring_us, 0.01 * ring_us);
  // The compute-only step from the model, not the report; every TP allreduce blocks the next compute.
  training_params p;
  p.layers = 1;
  p.hidden = 2048;
  p.ffn_hidden = 8192;
  p.heads = 16;
  p.seq_len = 2048;
  p.vocab = 1024;
  p.micro_batches = 1;
  p.tensor = 8;
  p.data = 1;
  p.domain_size = 8;
  const training_model m = make_training_model(p, 8, "t.yaml");
  const double compute_us = compute_only(build_training_graph(m), m.flops_per_s).step_s * 1e6;
  EXPECT_NEAR(tr["compute_time_us"].get<double>(), compute_us, 1e-6 * compute_us);
  const double step_us = tr["step_time_us"].get<double>();
  EXPECT_NEAR(step_us - compute_us, (*tp)["total_us"].get<double>(), 0.01 * step_us);
  EXPECT_NEAR(tr["exposed_communication_us"].get<double>(), step_us - compute_us, 1e-6 * step_us);
}

TEST(training_cluster, data_parallel_bucket_runs_the_hierarchical_allreduce_above_the_serial_bound) {
  // 16 GPUs on 2 nodes, data 16: one bucket of every gradient, 8 members per node (L = 8, D = 2).
  const std::string t =
      "layers: 1, hidden: 512, ffn_hidden: 2048, heads: 8, seq_len: 512, vocab: 1024, "
      "micro_batches: 1, tensor: 1, pipeline: 1, data: 16, bucket_mib: 1000";
  const json r = test::run_scenario_yaml(yaml(2, t));
  ASSERT_TRUE(r.contains("training")) << r.dump();
  const json& tr = r["training"];
  ASSERT_TRUE(tr["completed"].get<bool>());
  EXPECT_EQ(tr["communicators_by_algorithm"]["hierarchical"].get<uint64_t>(), 1u) << tr.dump(1);
  const json* dp = row(tr, "dp");
  ASSERT_NE(dp, nullptr) << tr.dump(1);
  ASSERT_EQ((*dp)["count"].get<uint64_t>(), 1u);
  // Gradients of one GPU: 4 h^2 + 2 h ffn, the embedding and the output layer (V h each), 2 B each.
  const double S = 2.0 * (4.0 * 512 * 512 + 2.0 * 512 * 2048 + 2.0 * 1024 * 512);
  EXPECT_NEAR(double((*dp)["bytes"].get<uint64_t>()), S, 8.0);
  const double G = 8, D = 2;
  const double serial_us = (2 * (G - 1) / G / k_nvlink_gbytes + 2 * (D - 1) / (D * G) / k_rail_gbytes) * S * 1e-3;
  const double got_us = (*dp)["total_us"].get<double>();
  EXPECT_GE(got_us, serial_us);
  EXPECT_LE(got_us, 1.3 * serial_us);
  EXPECT_GT(tr["rdma_writes"].get<uint64_t>(), 0u);
  EXPECT_EQ(r["failed"].get<uint64_t>(), 0u);
}

TEST(training_cluster, data_checked_step_matches_the_reference_on_every_gpu) {
  // 32 GPUs on 4 nodes: tensor 2 inside a node, pipeline 2 (stage 1 on nodes 2 and 3: RDMA sends), data 8
  // (each group on two nodes: hierarchical).
  const std::string t =
      "layers: 2, hidden: 256, ffn_hidden: 1024, heads: 4, seq_len: 256, vocab: 512, "
      "micro_batches: 2, tensor: 2, pipeline: 2, data: 8, bucket_mib: 0.25";
  const json r = test::run_scenario_yaml(yaml(4, t, true));
  ASSERT_TRUE(r.contains("training")) << r.dump();
  const json& tr = r["training"];
  ASSERT_TRUE(tr["completed"].get<bool>());
  const json& algo = tr["communicators_by_algorithm"];
  EXPECT_GT(algo["hierarchical"].get<uint64_t>(), 0u) << tr.dump(1);
  EXPECT_GT(algo["nvlink_ring"].get<uint64_t>(), 0u);
  EXPECT_GT(algo["send"].get<uint64_t>(), 0u);
  const json& chk = tr["data_check"];
  EXPECT_GT(chk["collectives"].get<uint64_t>(), 0u);
  EXPECT_GT(chk["result_bytes"].get<uint64_t>(), 0u);
  EXPECT_EQ(chk["wrong_elements"].get<uint64_t>(), 0u);
  EXPECT_TRUE(r["data_checked"].get<bool>());
  EXPECT_TRUE(r["verified"].get<bool>());
  EXPECT_GT(tr["rdma_writes"].get<uint64_t>(), 0u);
}

std::string refusal(const std::string& y) {
  const test::child_result c = test::run_in_child([&] { return run_scenario(load_scenario_text(y, "t.yaml")).dump(); });
  EXPECT_FALSE(c.ok) << c.output;
  return c.output;
}

TEST(training_cluster, refusals_name_the_keys) {
  const std::string base = "layers: 2, hidden: 256, heads: 4, seq_len: 256, vocab: 512, tensor: 2";
  std::string e = refusal(yaml(2, base + ", pipeline: 1, data: 8, expert: 2, experts: 4"));
  EXPECT_NE(e.find("training.expert 2"), std::string::npos) << e;
  e = refusal(yaml(2, base + ", pipeline: 1, data: 8, comm_backend: fabric"));
  EXPECT_NE(e.find("training.comm_backend fabric"), std::string::npos) << e;
  e = refusal(yaml(2, base + ", pipeline: 1, data: 8, domain_size: 4"));
  EXPECT_NE(e.find("training.domain_size 4"), std::string::npos) << e;
  e = refusal(
      "topology: {kind: single_switch, hosts: 4}\nworkload: {kind: training}\n"
      "training: {layers: 2, hidden: 256, heads: 4, seq_len: 256, tensor: 2, data: 2, comm_backend: cluster}\n");
  EXPECT_NE(e.find("system.preset"), std::string::npos) << e;
  e = refusal(yaml(2, base + ", data: 0, pipeline: 3"));
  EXPECT_NE(e.find("training.data 0"), std::string::npos) << e;
}

}  // namespace
}  // namespace fabricsim::testbench
