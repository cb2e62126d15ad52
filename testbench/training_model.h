// A training step's model and its parallelism (`workload.kind: training`): a transformer (layers, hidden
// size, FFN width, heads, sequence length, vocabulary, micro-batches, optional MoE experts), the tensor,
// pipeline, data and expert parallel degrees, and the GPU (dense BF16 peak, efficiency, HBM, NVLink domain).
// make_training_model() checks the combination (docs/workloads.md#training-a-step-as-the-workload) and
// derives what the task graph (testbench/training_graph.h) needs: parameters, FLOPs and memory per GPU.
#pragma once

#include <cstdint>
#include <string>

#include "sc_models/core/params.h"

namespace fabricsim::testbench {

struct training_params {
  // The transformer.
  uint64_t layers = 4;                      // transformer blocks
  uint64_t hidden = 1024;                   // model width h
  uint64_t ffn_hidden = 0;                  // MLP width; 0: ffn_multiplier x hidden
  double ffn_multiplier = 4.0;              // MLP width over hidden when ffn_hidden is 0
  uint64_t heads = 16;                      // attention heads a
  uint64_t seq_len = 2048;                  // tokens per sequence s
  uint64_t vocab = 32000;                   // vocabulary V (embedding and output layer)
  uint64_t micro_batch = 1;                 // sequences per micro-batch b
  uint64_t micro_batches = 4;               // micro-batches per step per data-parallel rank (when global_batch is 0)
  uint64_t global_batch = 0;                // sequences per step over all data-parallel ranks; 0: micro_batches decide
  uint64_t bytes_per_param = 2;             // weights (BF16)
  uint64_t grad_bytes_per_param = 2;        // gradients (BF16), what the data-parallel allreduce moves
  uint64_t optimizer_bytes_per_param = 12;  // Adam in mixed precision: FP32 master copy, momentum, variance
  uint64_t bytes_per_activation = 2;        // activations (BF16), what tensor/pipeline traffic moves
  uint64_t experts = 0;                     // MoE experts per layer; 0: a dense MLP
  uint64_t top_k = 2;                       // MoE: experts each token is routed to
  // The parallelism (GPU rank = tp + tensor x (dp + data x pp): tensor fastest, then data, then pipeline).
  uint64_t gpus = 0;  // GPUs taking part (one per host); 0: every host
  uint64_t tensor = 1, pipeline = 1, data = 1, expert = 1;
  std::string schedule = "1f1b";  // pipeline schedule: 1f1b (PipeDream-Flush) or gpipe
  double bucket_mib = 25.0;       // data-parallel gradient bucket (PyTorch DDP bucket_cap_mb)
  // The GPU.
  double gpu_tflops = 2250.0;           // dense BF16 tensor-core peak per GPU, TFLOP/s (HGX B200)
  double compute_efficiency = 0.5;      // share of the peak a layer's kernels reach
  double hbm_gib = 167.6;               // HBM per GPU, GiB (B200: 180 GB)
  uint64_t domain_size = 8;             // GPUs in one NVLink domain (8: HGX; 72: NVL72); consecutive hosts
  std::string comm_backend = "fabric";  // who carries the collectives (testbench/training_comm.h)
  std::string tp_algo = "nvlink_ring";  // cluster backend: a TP allreduce as a ring over NVLink, or NVLS
  std::string chakra;                   // Chakra traces instead of the model (testbench/training_chakra.h)
  uint64_t timeline_gpus = 8;           // the report's timeline: every task of the first N GPUs
  void visit(core::param_visitor& v);
};

// Bytes each GPU of the first pipeline stage (the fullest: it holds the embedding and the most activations
// in flight) needs in HBM, by kind.
struct training_memory {
  uint64_t weights = 0, gradients = 0, optimizer = 0, activations = 0;
  uint64_t total() const { return weights + gradients + optimizer + activations; }
};

// What the graph is built from, derived and checked once.
struct training_model {
  training_params p;
  uint64_t gpus = 0, tp = 1, pp = 1, dp = 1, ep = 1;
  uint64_t ffn = 0;  // MLP width
  uint64_t layers_per_stage = 0;
  uint64_t micro_batches = 0;  // per data-parallel rank per step
  bool moe = false;
  uint64_t tokens = 0;  // per micro-batch: micro_batch x seq_len
  // Parameters of the whole model, before any sharding.
  uint64_t attention_params = 0;  // per layer: QKV and output projections, 4 h^2
  uint64_t mlp_params = 0;        // per layer: 2 h ffn, times the experts with MoE
  uint64_t router_params = 0;     // per layer, MoE: h x experts
  uint64_t embedding_params = 0;  // V h (the output layer is another V h, untied)
  uint64_t total_params = 0;
  // Per GPU (one tensor-parallel shard, one expert-parallel share): parameters of one layer, dense (reduced
  // over the data-parallel group) and expert (reduced over the expert-data-parallel group).
  uint64_t layer_dense_params_per_gpu = 0, layer_expert_params_per_gpu = 0;
  uint64_t embedding_params_per_gpu = 0;  // the embedding (first stage) or the output layer (last stage)
  // Forward FLOPs of one micro-batch on one GPU (tensor-parallel shard); backward is twice each.
  double attention_flops = 0.0;  // 2 tokens 4h^2 (projections) + 4 b s^2 h (scores and values), / tp
  double mlp_flops = 0.0;        // 2 tokens 2 h ffn (x top_k with MoE, + the router), / tp
  double head_flops = 0.0;       // the output layer on the last stage: 2 tokens h V / tp
  double flops_per_s = 0.0;      // gpu_tflops x compute_efficiency, FLOP/s
  // Bytes each communication moves (nccl-tests sizes: the whole buffer).
  uint64_t tp_allreduce_bytes = 0;  // b s h bytes_per_activation
  uint64_t pp_send_bytes = 0;       // the same tensor, stage to stage
  uint64_t ep_alltoall_bytes = 0;   // what each rank sends in all: b s h top_k bytes_per_activation
  training_memory memory;           // per GPU of the first stage
};

// Checks `p` against the run's host count and derives the model; every refusal is a core::config_error
// naming `source`, the keys and the numbers (a parallelism product that is not the GPU count, a
// tensor-parallel group larger than a domain, a model that does not fit the HBM, shapes that do not divide).
training_model make_training_model(const training_params& p, uint64_t hosts, const std::string& source);

// The per-GPU memory formula (docs/workloads.md): weights, gradients and optimizer state of the first
// stage's parameters, and activations of Korthikanti et al. 2022 (s b h (10 + 24/t + 5 a s / (h t)) bytes
// per layer at 16-bit) for the micro-batches the schedule keeps in flight.
training_memory training_memory_per_gpu(const training_model& m);

}  // namespace fabricsim::testbench
