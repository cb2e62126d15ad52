// Tests of the training step's model (testbench/training_model): parameter counts, FLOPs, bytes and the
// per-GPU memory of a small transformer against hand calculations, and the refusals of item 7 of issue 21
// (a parallelism that is not the GPU count, a tensor-parallel group larger than a domain, a model that does
// not fit the HBM), each naming the keys and the numbers. Plain GoogleTest: no simulation.
#include "testbench/training_model.h"

#include <gtest/gtest.h>

#include <string>

#include "testbench/scenario.h"

namespace fabricsim::testbench {
namespace training_model_test {

// 4 layers of h 1024, ffn 4096, 16 heads, s 2048, V 32000, b 1; tensor 2 x pipeline 2 x data 2 = 8 GPUs.
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

std::string refusal(const training_params& p, uint64_t hosts) {
  try {
    make_training_model(p, hosts, "t.yaml");
  } catch (const core::config_error& e) {
    return e.what();
  }
  return "";
}

TEST(training_model, counts_of_a_small_transformer_by_hand) {
  const training_model m = make_training_model(small(), 8, "t.yaml");
  EXPECT_EQ(m.gpus, 8u);
  EXPECT_EQ(m.layers_per_stage, 2u);
  EXPECT_EQ(m.tokens, 2048u);
  EXPECT_EQ(m.attention_params, 4194304u);   // 4 x 1024^2
  EXPECT_EQ(m.mlp_params, 8388608u);         // 2 x 1024 x 4096
  EXPECT_EQ(m.embedding_params, 32768000u);  // 32000 x 1024
  // 4 x (4194304 + 8388608) + 2 x 32768000
  EXPECT_EQ(m.total_params, 115867648u);
  // Per tensor-parallel rank: (2 x 2048 x 4 x 1024^2 + 4 x 1 x 2048^2 x 1024) / 2 = 2^34.
  EXPECT_DOUBLE_EQ(m.attention_flops, 17179869184.0);
  EXPECT_DOUBLE_EQ(m.mlp_flops, 17179869184.0);   // 2 x 2048 x 2 x 1024 x 4096 / 2
  EXPECT_DOUBLE_EQ(m.head_flops, 67108864000.0);  // 2 x 2048 x 1024 x 32000 / 2
  EXPECT_EQ(m.tp_allreduce_bytes, 4194304u);      // 2048 x 1024 x 2
  EXPECT_EQ(m.pp_send_bytes, 4194304u);
  EXPECT_DOUBLE_EQ(m.flops_per_s, 2250e12 * 0.5);
}

TEST(training_model, memory_per_gpu_by_hand) {
  const training_model m = make_training_model(small(), 8, "t.yaml");
  // Stage 0 holds 2 layers of (4194304 + 8388608) / 2 and half the embedding: 28966912 parameters.
  EXPECT_EQ(m.memory.weights, 28966912u * 2);
  EXPECT_EQ(m.memory.gradients, 28966912u * 2);
  EXPECT_EQ(m.memory.optimizer, 28966912u * 12);
  // Korthikanti et al.: 2048 x 1 x 1024 x (10 + 24/2 + 5 x 16 x 2048 / (1024 x 2)) = 213909504 bytes a layer;
  // 1F1B keeps min(2 stages, 4 micro-batches) = 2 in flight on 2 layers.
  EXPECT_EQ(m.memory.activations, 213909504u * 2 * 2);
  training_params g = small();
  g.schedule = "gpipe";  // all 4 micro-batches in flight
  EXPECT_EQ(make_training_model(g, 8, "t.yaml").memory.activations, 213909504u * 2 * 4);
}

TEST(training_model, moe_counts_by_hand) {
  training_params p = small();
  p.tensor = 1;
  p.pipeline = 1;
  p.data = 8;
  p.expert = 4;
  p.experts = 8;
  p.top_k = 2;
  const training_model m = make_training_model(p, 8, "t.yaml");
  EXPECT_TRUE(m.moe);
  EXPECT_EQ(m.mlp_params, 8u * 8388608u);
  EXPECT_EQ(m.router_params, 8192u);                        // 1024 x 8
  EXPECT_EQ(m.layer_expert_params_per_gpu, 2u * 8388608u);  // 8 experts over 4 expert ranks
  EXPECT_EQ(m.layer_dense_params_per_gpu, 4194304u + 8192u);
  // 2 x 2048 x (2 experts x 2 x 1024 x 4096) + the router's 2 x 2048 x 8192
  EXPECT_DOUBLE_EQ(m.mlp_flops, 2.0 * 2048 * 2 * 2 * 1024 * 4096 + 2.0 * 2048 * 8192);
  EXPECT_EQ(m.ep_alltoall_bytes, 2048u * 1024u * 2u * 2u);
}

TEST(training_model, global_batch_sets_the_micro_batches) {
  training_params p = small();
  p.global_batch = 16;  // 16 / (1 x 2 data ranks) = 8 micro-batches each
  EXPECT_EQ(make_training_model(p, 8, "t.yaml").micro_batches, 8u);
  p.global_batch = 15;
  EXPECT_NE(refusal(p, 8).find("training.global_batch 15 is not a multiple of training.micro_batch 1 x training.data "
                               "2 = 2"),
            std::string::npos)
      << refusal(p, 8);
}

TEST(training_model, a_parallelism_that_is_not_the_gpu_count_is_refused) {
  training_params p = small();
  p.data = 3;
  const std::string e = refusal(p, 16);
  EXPECT_NE(e.find("t.yaml: training.tensor 2 x training.pipeline 2 x training.data 3 = 12 GPUs does not match the "
                   "16 GPUs"),
            std::string::npos)
      << e;
  p.data = 2;
  p.gpus = 20;
  EXPECT_NE(refusal(p, 16).find("training.gpus 20 is more than the topology's 16 hosts"), std::string::npos);
}

TEST(training_model, a_tensor_group_larger_than_a_domain_is_refused) {
  training_params p = small();
  p.tensor = 16;
  p.pipeline = 1;
  p.data = 1;
  p.heads = 16;
  const std::string e = refusal(p, 16);
  EXPECT_NE(e.find("training.tensor 16 is larger than a domain of training.domain_size 8 GPUs"), std::string::npos)
      << e;
  p.domain_size = 72;
  p.tensor = 16;  // 72 / 16 is not whole: groups would straddle domains
  EXPECT_NE(refusal(p, 16).find("training.tensor 16 does not divide a domain of training.domain_size 72"),
            std::string::npos);
  p.domain_size = 16;
  EXPECT_EQ(refusal(p, 16), "");
}

TEST(training_model, a_model_that_does_not_fit_the_hbm_is_refused) {
  // 32 layers of h 8192 (ffn 4h) on one GPU: 32 x 12 x 8192^2 + 2 x 32000 x 8192 = 26294091776 parameters,
  // 16 bytes each (2 + 2 + 12) = 391.81 GiB before activations, above 167.6 GiB.
  training_params p = small();
  p.layers = 32;
  p.hidden = 8192;
  p.ffn_hidden = 32768;
  p.heads = 64;
  p.tensor = 1;
  p.pipeline = 1;
  p.data = 1;
  const std::string e = refusal(p, 1);
  EXPECT_NE(e.find("t.yaml: the model does not fit the HBM"), std::string::npos) << e;
  EXPECT_NE(e.find("48.98 GiB of weights + 48.98 GiB of gradients + 293.86 GiB of optimizer state"), std::string::npos)
      << e;
  EXPECT_NE(e.find("more than training.hbm_gib 167.6"), std::string::npos) << e;
}

TEST(training_model, shapes_that_do_not_divide_are_refused) {
  training_params p = small();
  p.layers = 5;
  EXPECT_NE(refusal(p, 8).find("training.layers 5 is not a multiple of training.pipeline 2"), std::string::npos);
  p = small();
  p.heads = 15;
  EXPECT_NE(refusal(p, 8).find("training.heads 15 is not a multiple of training.tensor 2"), std::string::npos);
  p = small();
  p.expert = 2;
  EXPECT_NE(refusal(p, 8).find("training.expert 2 needs MoE layers"), std::string::npos);
}

TEST(training_model, the_section_loads_from_a_scenario) {
  const scenario s = load_scenario_text("workload: {kind: training}\ntraining: {layers: 8, tensor: 4}\n", "t.yaml",
                                        {"training.pipeline=2"});
  EXPECT_EQ(s.workload.kind, "training");
  EXPECT_EQ(s.training.layers, 8u);
  EXPECT_EQ(s.training.tensor, 4u);
  EXPECT_EQ(s.training.pipeline, 2u);
  EXPECT_THROW(load_scenario_text("training: {layer: 8}\n", "t.yaml"), core::config_error);
  EXPECT_THROW(load_scenario_text("training: {schedule: zb}\n", "t.yaml"), core::config_error);
}

}  // namespace training_model_test
}  // namespace fabricsim::testbench
