// Tests of a training step on a system preset's cluster (testbench/training_cluster): HGX B200 nodes (8 GPUs
// per NVLink domain, ConnectX-7 400 Gb/s on Quantum-X800 InfiniBand rails), small enough for seconds.
//   - a tensor-parallel step on one node: every TP allreduce is a ring over NVLink, between its link bound
//     and 1.1 times it and within 1 % of the nvlink_ring collective's time on the same GPUs; the step is the
//     compute-only step (computed here from the model) plus the TP allreduces, which nothing hides;
//   - a data-parallel step on two nodes: the gradient bucket's hierarchical allreduce lies above the serial
//     hand bound of cluster_run.h (NVLink phases, then the rail phase) and within 1.3 times it;
//   - data-checked: tensor, pipeline (sends between nodes) and hierarchical data parallelism on 4 nodes with
//     real bytes, every GPU's result equal to the reference;
//   - the same step with training.tp_algo nvls: every TP allreduce runs NVLink SHARP between its link bound
//     (S / B: each GPU sends its buffer once and receives the result once) and 1.1 times it, and faster than
//     the ring by the ratio of the two bounds, 2(n-1)/n; data-checked with two TP groups reducing at once in
//     one domain's switch chips;
//   - an expert step on two nodes: the expert alltoall runs the hierarchical alltoall with PXN, above the
//     hand bound of cluster_alltoall.h and within 1.3 times it; data-checked for a group on both nodes (PXN
//     proxies) and one inside a node (NVLink copies);
//   - a rail spread over two leaves (topology.groups 2 on 4 nodes): the pipeline sends between the groups
//     cross the spines, whose links carry exactly those bytes; with the preset's one leaf per rail, none;
//   - collective.barrier_ns: the hierarchical allreduce's three phase ends each that much later;
//   - refusals.
// Each run forks (tests/support).
#include <gtest/gtest.h>

#include <iostream>
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

// collective.barrier_ns (the time a collective's GPUs take to learn a phase has ended; under mpirun at least
// the lookahead, docs/scale_out.md) delays each of the hierarchical allreduce's three phase ends by exactly
// that: the bucket takes 3 x barrier longer than with none (each phase then runs on the same idle fabric).
TEST(training_cluster, a_barrier_delays_each_phase_end_of_the_hierarchical_allreduce) {
  const std::string t =
      "layers: 1, hidden: 512, ffn_hidden: 2048, heads: 8, seq_len: 512, vocab: 1024, "
      "micro_batches: 1, tensor: 1, pipeline: 1, data: 16, bucket_mib: 1000";
  const std::string with = "collective: {chunk_bytes: 262144, barrier_ns: 5000}";
  std::string y = yaml(2, t);
  const json r0 = test::run_scenario_yaml(y);
  y.replace(y.find("collective: {chunk_bytes: 262144}"), 33, with);
  const json r1 = test::run_scenario_yaml(y);
  ASSERT_TRUE(r0.contains("training") && r1.contains("training")) << r0.dump() << r1.dump();
  const json *dp0 = row(r0["training"], "dp"), *dp1 = row(r1["training"], "dp");
  ASSERT_TRUE(dp0 && dp1);
  ASSERT_EQ((*dp1)["count"].get<uint64_t>(), 1u);
  EXPECT_EQ(r1["training"]["communicators_by_algorithm"]["hierarchical"].get<uint64_t>(), 1u);
  EXPECT_NEAR((*dp1)["total_us"].get<double>() - (*dp0)["total_us"].get<double>(), 3 * 5.0, 1e-6);
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

// The TP step of the first test: one layer, h 2048, s 2048, tensor 8 on one node (8 MiB allreduces).
const char* k_tp_step =
    "layers: 1, hidden: 2048, ffn_hidden: 8192, heads: 16, seq_len: 2048, vocab: 1024, "
    "micro_batches: 1, tensor: 8, pipeline: 1, data: 1";

TEST(training_cluster, tensor_parallel_nvls_within_its_bound_and_faster_than_the_ring) {
  const json r = test::run_scenario_yaml(yaml(1, std::string(k_tp_step) + ", tp_algo: nvls"));
  ASSERT_TRUE(r.contains("training")) << r.dump();
  const json& tr = r["training"];
  ASSERT_TRUE(tr["completed"].get<bool>());
  EXPECT_EQ(tr["communicators_by_algorithm"]["nvls"].get<uint64_t>(), 1u) << tr.dump(1);
  const json* tp = row(tr, "tp");
  ASSERT_NE(tp, nullptr) << tr.dump(1);
  ASSERT_EQ((*tp)["count"].get<uint64_t>(), 4u);
  // NVLS (docs/systems.md): every GPU sends its 8 MiB once as contributions and receives the result once, so
  // an allreduce takes at least S / B (busbw 2(n-1)/n x B, nvlink_run.h's nvls_busbw_bound).
  const double S = double(8u << 20), n = 8;
  const double bound_us = S / k_nvlink_gbytes * 1e-3;  // 9.90 us
  const double nvls_us = (*tp)["total_us"].get<double>() / 4;
  EXPECT_GE(nvls_us, bound_us);
  EXPECT_LE(nvls_us, 1.1 * bound_us);
  EXPECT_EQ(tr["rdma_writes"].get<uint64_t>(), 0u);
  // The ring on the same step: its bound is 2(n-1)/n S / B, so NVLS is faster by 2(n-1)/n = 1.75 at the
  // bounds; both within 10 % of theirs, the ratio within 10 % of 1.75.
  const json ring = test::run_scenario_yaml(yaml(1, k_tp_step));
  ASSERT_TRUE(ring.contains("training")) << ring.dump();
  const double ring_us = (*row(ring["training"], "tp"))["total_us"].get<double>() / 4;
  const double ratio = 2 * (n - 1) / n;
  EXPECT_GT(ring_us / nvls_us, ratio / 1.1) << ring_us << " us ring, " << nvls_us << " us NVLS";
  EXPECT_LT(ring_us / nvls_us, ratio * 1.1);
  std::cout << "TP allreduce: NVLS " << nvls_us << " us (bound " << bound_us << "), ring " << ring_us << " us\n";
  EXPECT_LT(tr["step_time_us"].get<double>(), ring["training"]["step_time_us"].get<double>());
}

TEST(training_cluster, data_checked_nvls_with_two_groups_reducing_at_once) {
  // Tensor 4 x data 2 on one node: two TP groups in the node's switch chips at once, NVLS; the gradient
  // bucket as the ring over NVLink.
  const std::string t =
      "layers: 2, hidden: 256, ffn_hidden: 1024, heads: 4, seq_len: 256, vocab: 512, "
      "micro_batches: 2, tensor: 4, pipeline: 1, data: 2, tp_algo: nvls";
  const json r = test::run_scenario_yaml(yaml(1, t, true));
  ASSERT_TRUE(r.contains("training")) << r.dump();
  const json& tr = r["training"];
  ASSERT_TRUE(tr["completed"].get<bool>());
  EXPECT_EQ(tr["communicators_by_algorithm"]["nvls"].get<uint64_t>(), 2u) << tr.dump(1);
  // 2 layers x 2 micro-batches x 4 allreduces (2 forward, 2 backward) per group, 2 groups; plus the bucket.
  EXPECT_EQ((*row(tr, "tp"))["count"].get<uint64_t>(), 32u);
  const json& chk = tr["data_check"];
  EXPECT_GE(chk["collectives"].get<uint64_t>(), 33u);
  EXPECT_EQ(chk["wrong_elements"].get<uint64_t>(), 0u);
  EXPECT_TRUE(r["verified"].get<bool>());
}

// An MoE layer (48 experts of width h, top 2) with expert parallelism over the data ranks; one layer, one
// micro-batch.
std::string moe(unsigned tensor, unsigned data, unsigned expert, unsigned h, unsigned seq) {
  return "layers: 1, hidden: " + std::to_string(h) + ", ffn_hidden: " + std::to_string(h) +
         ", heads: 8, seq_len: " + std::to_string(seq) +
         ", vocab: 1024, micro_batches: 1, experts: 48, top_k: 2, tensor: " + std::to_string(tensor) +
         ", pipeline: 1, data: " + std::to_string(data) + ", expert: " + std::to_string(expert);
}

TEST(training_cluster, expert_alltoall_across_two_nodes_above_its_hand_bound) {
  // 16 GPUs on 2 nodes, expert 16: every alltoall on all 16 GPUs (G = 8, D = 2). Each GPU sends S = b s h
  // top_k x 2 B = 2048 x 512 x 2 x 2 = 4 MiB, S / 16 to each GPU.
  const json r = test::run_scenario_yaml(yaml(2, moe(1, 16, 16, 512, 2048)));
  ASSERT_TRUE(r.contains("training")) << r.dump();
  const json& tr = r["training"];
  ASSERT_TRUE(tr["completed"].get<bool>());
  EXPECT_EQ(tr["communicators_by_algorithm"]["hierarchical_alltoall"].get<uint64_t>(), 1u) << tr.dump(1);
  const json* ep = row(tr, "ep");
  ASSERT_NE(ep, nullptr) << tr.dump(1);
  const double S = 2048.0 * 512 * 2 * 2;
  EXPECT_EQ((*ep)["bytes"].get<uint64_t>(), uint64_t(S));
  ASSERT_EQ((*ep)["count"].get<uint64_t>(), 4u);  // dispatch and combine, forward and backward
  // The hand bound (cluster_alltoall.h): NVLink carries (G-1)/G of S per GPU (its own domain's blocks and, by
  // PXN, the blocks for the other domain's GPUs on other rails), the NIC (N-G)/N of S; at the same time.
  const double G = 8, N = 16;
  const double bound_us = std::max((G - 1) / G * S / k_nvlink_gbytes, (N - G) / N * S / k_rail_gbytes) * 1e-3;
  const double each_us = (*ep)["total_us"].get<double>() / 4;
  EXPECT_GE(each_us, bound_us);
  EXPECT_LE(each_us, 1.3 * bound_us);
  std::cout << "expert alltoall " << each_us << " us, hand bound " << bound_us << " us\n";
  // At least one RDMA WRITE per block between the nodes, 8 per GPU per alltoall (the gradient buckets' rail
  // rings add theirs).
  EXPECT_GE(tr["rdma_writes"].get<uint64_t>(), 4u * 16 * 8);
  EXPECT_EQ(r["failed"].get<uint64_t>(), 0u);
}

TEST(training_cluster, data_checked_expert_alltoall_through_proxies_and_inside_a_node) {
  for (unsigned expert : {8u, 4u}) {
    // Tensor 2 x data 8 on 2 nodes: expert 8 puts every second GPU of both nodes in a group (4 per node, the
    // same positions: PXN proxies on the destination's rail); expert 4 keeps a group inside a node.
    const json r = test::run_scenario_yaml(yaml(2, moe(2, 8, expert, 256, 256), true));
    ASSERT_TRUE(r.contains("training")) << r.dump();
    const json& tr = r["training"];
    ASSERT_TRUE(tr["completed"].get<bool>());
    const std::string algo = expert == 8 ? "hierarchical_alltoall" : "nvlink_alltoall";
    EXPECT_EQ(tr["communicators_by_algorithm"][algo].get<uint64_t>(), expert == 8 ? 2u : 4u) << tr.dump(1);
    const json& chk = tr["data_check"];
    EXPECT_GT(chk["collectives"].get<uint64_t>(), 0u);
    EXPECT_EQ(chk["wrong_elements"].get<uint64_t>(), 0u);
    EXPECT_TRUE(r["verified"].get<bool>());
    if (expert == 8) {
      EXPECT_GT(tr["rdma_writes"].get<uint64_t>(), 0u);
    }
  }
}

double spine_wire_bytes(const json& r) {
  double b = 0;
  for (const json& p : r["ports"])
    if (p["link"].get<std::string>().find("spine") != std::string::npos) b += p["wire_bytes"].get<double>();
  return b;
}

TEST(training_cluster, pipeline_sends_cross_the_spines_when_a_rail_spans_two_leaves) {
  // 32 GPUs on 4 nodes: tensor 8 x pipeline 2 x data 2, stage 0 on nodes 0 and 1, stage 1 on nodes 2 and 3.
  // topology.groups 2, hosts_per_leaf 2: nodes 0, 1 under one leaf per rail, nodes 2, 3 under another.
  const std::string t =
      "layers: 2, hidden: 512, ffn_hidden: 2048, heads: 8, seq_len: 512, vocab: 1024, "
      "micro_batches: 2, tensor: 8, pipeline: 2, data: 2";
  std::string spread = yaml(4, t);
  spread.insert(spread.find("run:"), "topology: {groups: 2, hosts_per_leaf: 2}\n");
  const json r = test::run_scenario_yaml(spread);
  ASSERT_TRUE(r.contains("training")) << r.dump();
  ASSERT_TRUE(r["training"]["completed"].get<bool>());
  // Every send (b s h x 2 B = 512 KiB; forward and backward, 2 micro-batches, 16 stage-0 GPUs) crosses two
  // spine links (leaf up, spine down), in 4096-byte packets with 26 bytes of InfiniBand headers each; the
  // data-parallel rings stay under their leaf (both members of a group in one node pair). ACKs add a little.
  const double packets = 512.0 * 1024 / 4096, sends = 2 * 2 * 16;
  const double expected = sends * 2 * packets * (4096 + 26);
  const double got = spine_wire_bytes(r);
  EXPECT_GE(got, expected);
  EXPECT_LE(got, 1.02 * expected);
  std::cout << "spine wire bytes " << got << ", sends by hand " << expected << "\n";
  // The preset's layout (one leaf per rail): nothing on the spines.
  const json one = test::run_scenario_yaml(yaml(4, t));
  ASSERT_TRUE(one.contains("training")) << one.dump();
  EXPECT_EQ(spine_wire_bytes(one), 0.0);
}

std::string refusal(const std::string& y) {
  const test::child_result c = test::run_in_child([&] { return run_scenario(load_scenario_text(y, "t.yaml")).dump(); });
  EXPECT_FALSE(c.ok) << c.output;
  return c.output;
}

TEST(training_cluster, refusals_name_the_keys) {
  const std::string base = "layers: 2, hidden: 256, heads: 4, seq_len: 256, vocab: 512, tensor: 2";
  // 24 GPUs on 3 nodes, expert 12: a group of 8 GPUs on node 0 and 4 on node 1.
  std::string e = refusal(yaml(3, moe(1, 24, 12, 256, 256)));
  EXPECT_NE(e.find("training.expert 12"), std::string::npos) << e;
  EXPECT_NE(e.find("(8 in domain 0, 4 in domain 1)"), std::string::npos) << e;
  e = refusal(
      "topology: {kind: single_switch, hosts: 4}\nworkload: {kind: training}\n"
      "training: {layers: 2, hidden: 256, heads: 4, seq_len: 256, tensor: 2, data: 2, tp_algo: nvls}\n");
  EXPECT_NE(e.find("training.tp_algo nvls"), std::string::npos) << e;
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
