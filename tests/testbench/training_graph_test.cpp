// Tests of the training step's task graph (testbench/training_graph): task counts, FLOPs and bytes of a small
// transformer against hand calculations and the standard 6-FLOPs-per-parameter-per-token formula, the
// gradient buckets, and the compute-only step of a balanced pipeline against (m + p - 1)(t_F + t_B).
// Plain GoogleTest: no simulation.
#include "testbench/training_graph.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

namespace fabricsim::testbench {
namespace training_graph_test {

// 4 layers of h 1024, ffn 4096, 16 heads, s 2048, V 32000, b 1; tensor 2 x pipeline 2 x data 2; 4 micro-batches.
training_params small() {
  training_params p;
  p.layers = 4;
  p.hidden = 1024;
  p.ffn_hidden = 4096;
  p.heads = 16;
  p.seq_len = 2048;
  p.vocab = 32000;
  p.micro_batch = 1;
  p.micro_batches = 4;
  p.tensor = 2;
  p.pipeline = 2;
  p.data = 2;
  return p;
}

struct tally {
  uint64_t compute = 0;
  double flops = 0.0;
  std::map<std::string, uint64_t> count;               // by "kind op"
  std::map<std::string, std::vector<uint64_t>> bytes;  // by "kind op", in task order
};

tally count(const training_graph& g) {
  tally t;
  for (const training_task& k : g.tasks) {
    if (k.compute) {
      ++t.compute;
      t.flops += k.flops;
      continue;
    }
    const comm_group& grp = g.groups[k.group];
    const std::string key = std::string(group_kind_name(grp.kind)) + " " + grp.op;
    ++t.count[key];
    t.bytes[key].push_back(k.bytes);
  }
  return t;
}

TEST(training_graph, tasks_of_a_small_model_by_hand) {
  const training_model m = make_training_model(small(), 8, "t.yaml");
  const training_graph g = build_training_graph(m);
  const tally t = count(g);
  // Every GPU: 2 layers x 2 parts x 4 micro-batches x 2 passes = 32; the 4 GPUs of the last stage also run
  // the output layer forward and backward per micro-batch (8).
  EXPECT_EQ(t.compute, 8u * 32u + 4u * 8u);
  // Per (stage, data rank): 2 layers x 2 parts x 4 micro-batches x 2 passes = 32 allreduces; 4 of them.
  EXPECT_EQ(t.count.at("tp allreduce"), 128u);
  for (uint64_t b : t.bytes.at("tp allreduce")) EXPECT_EQ(b, 4194304u);  // 1 x 2048 x 1024 x 2
  // One stage boundary x 4 micro-batches x 4 (data, tensor) pairs, forward and backward.
  EXPECT_EQ(t.count.at("pp send"), 32u);
  for (uint64_t b : t.bytes.at("pp send")) EXPECT_EQ(b, 4194304u);
  // Buckets of 25 MiB (26214400 B), gradients 2 B each. Stage 0, per GPU: layers 1 and 0 of 6291456
  // parameters (12582912 B each, 25165824 together, below the cap) and half the embedding (32768000 B):
  // one bucket of 57933824 B. Stage 1: the output layer's 32768000 B (a bucket alone), then layers 3 and 2:
  // 25165824 B. Two tensor ranks per stage: 2 + 4 buckets.
  EXPECT_EQ(t.count.at("dp allreduce"), 6u);
  std::map<uint64_t, int> sizes;
  for (uint64_t b : t.bytes.at("dp allreduce")) ++sizes[b];
  EXPECT_EQ(sizes, (std::map<uint64_t, int>{{25165824u, 2}, {32768000u, 2}, {57933824u, 2}}));
  EXPECT_EQ(t.count.count("ep alltoall"), 0u);
  // Communicators: tp per (stage, data rank) 4, pp pairs per direction 8, dp per (stage, tensor rank) 4.
  EXPECT_EQ(g.groups.size(), 16u);
}

TEST(training_graph, flops_follow_the_standard_formula) {
  const training_model m = make_training_model(small(), 8, "t.yaml");
  const tally t = count(build_training_graph(m));
  // Forward of one micro-batch of the whole model: 2 FLOPs per weight per token over the 4 layers' 12 h^2
  // weights and the output layer's h V, plus attention's 4 b s^2 h per layer; backward twice that; 2 data
  // ranks x 4 micro-batches per step. The tasks are tensor-parallel shards: their sum is the whole.
  const double h = 1024, s = 2048, tokens = 2048, V = 32000;
  const double forward = 2 * tokens * (4 * 12 * h * h + h * V) + 4 * 4 * s * s * h;
  EXPECT_DOUBLE_EQ(t.flops, 3 * forward * 2 * 4);
}

TEST(training_graph, smaller_buckets_cut_at_each_layer) {
  training_params p = small();
  p.bucket_mib = 10;  // 10485760 B: each 12582912 B layer closes a bucket
  const tally t = count(build_training_graph(make_training_model(p, 8, "t.yaml")));
  // Stage 0: layer 1, layer 0 with the embedding; stage 1: output layer, layer 3, layer 2; x 2 tensor ranks.
  EXPECT_EQ(t.count.at("dp allreduce"), 10u);
}

TEST(training_graph, moe_alltoalls_and_expert_buckets_by_hand) {
  training_params p = small();
  p.tensor = 1;
  p.pipeline = 1;
  p.data = 8;
  p.expert = 4;
  p.experts = 8;
  p.top_k = 2;
  p.micro_batches = 2;
  const training_model m = make_training_model(p, 8, "t.yaml");
  const tally t = count(build_training_graph(m));
  // 2 blocks of 4 expert ranks x 4 layers x 2 micro-batches x 2 passes x (dispatch, combine).
  EXPECT_EQ(t.count.at("ep alltoall"), 64u);
  for (uint64_t b : t.bytes.at("ep alltoall")) EXPECT_EQ(b, 2048u * 1024u * 2u * 2u);
  // Expert weights: 2 experts x 8388608 parameters x 2 B = 33554432 B a layer (above the cap): a bucket per
  // layer, over each of the 4 expert-data-parallel pairs (data ranks j and j + 4): 16. Dense: the output
  // layer (32768000 B), then layers 3..0 at 2 x (4194304 + 8192) B with the embedding on layer 0: 2.
  EXPECT_EQ(t.count.at("dp allreduce"), 18u);
  EXPECT_EQ(t.count.count("tp allreduce"), 0u);
  EXPECT_EQ(t.count.count("pp send"), 0u);
}

double stage_pass_s(const training_model& m, bool backward) {
  return m.layers_per_stage * (m.attention_flops + m.mlp_flops) * (backward ? 2 : 1) / m.flops_per_s;
}

TEST(training_graph, compute_only_step_of_a_pipeline_by_hand) {
  // Balanced stages (a 1-token vocabulary makes the output layer negligible): a 1F1B or GPipe step of m
  // micro-batches over p stages lasts (m + p - 1)(t_F + t_B) (Narayanan et al. 2021, the bubble (p-1)/m).
  for (const char* schedule : {"1f1b", "gpipe"}) {
    training_params p = small();
    p.vocab = 1;
    p.tensor = 1;
    p.data = 1;
    p.pipeline = 4;
    p.micro_batches = 6;
    p.schedule = schedule;
    const training_model m = make_training_model(p, 4, "t.yaml");
    const compute_only_times c = compute_only(build_training_graph(m), m.flops_per_s);
    const double expect = (6 + 4 - 1) * (stage_pass_s(m, false) + stage_pass_s(m, true));
    EXPECT_NEAR(c.step_s, expect, expect * 1e-4) << schedule;
    EXPECT_NEAR(c.busy_s[0], 6 * (stage_pass_s(m, false) + stage_pass_s(m, true)), expect * 1e-4);
  }
  // One GPU, one micro-batch: the forward and the backward pass, 3 x the forward FLOPs.
  training_params p = small();
  p.tensor = p.pipeline = p.data = 1;
  p.micro_batches = 1;
  const training_model m = make_training_model(p, 1, "t.yaml");
  const double f = 4 * (m.attention_flops + m.mlp_flops) + m.head_flops;
  EXPECT_DOUBLE_EQ(compute_only(build_training_graph(m), m.flops_per_s).step_s, 3 * f / m.flops_per_s);
}

}  // namespace training_graph_test
}  // namespace fabricsim::testbench
