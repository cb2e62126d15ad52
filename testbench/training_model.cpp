// A training step's model and parallelism: the keys, their checks and the per-GPU figures derived from them.
#include "testbench/training_model.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace fabricsim::testbench {

using core::config_error;

void training_params::visit(core::param_visitor& v) {
  v.field({"layers", "", "transformer blocks (a multiple of pipeline)", 1.0, 1e5}, layers);
  v.field({"hidden", "", "model width h (a multiple of heads)", 1.0, 1e7}, hidden);
  v.field({"ffn_hidden", "", "MLP width (a multiple of tensor); 0: ffn_multiplier x hidden", 0.0, 1e8}, ffn_hidden);
  v.field({"ffn_multiplier", "", "MLP width over hidden when ffn_hidden is 0", 0.01, 1e3}, ffn_multiplier);
  v.field({"heads", "", "attention heads (a multiple of tensor)", 1.0, 1e5}, heads);
  v.field({"seq_len", "tokens", "tokens per sequence", 1.0, 1e8}, seq_len);
  v.field(
      {"vocab", "tokens", "vocabulary: the embedding and the (untied) output layer are vocab x hidden each", 1.0, 1e8},
      vocab);
  v.field({"micro_batch", "sequences", "sequences per micro-batch", 1.0, 1e6}, micro_batch);
  v.field({"micro_batches", "", "micro-batches per step per data-parallel rank, when global_batch is 0", 1.0, 1e6},
          micro_batches);
  v.field({"global_batch", "sequences",
           "sequences per step over every data-parallel rank (a multiple of micro_batch x data); 0: "
           "micro_batches decides",
           0.0, 1e9},
          global_batch);
  v.field({"bytes_per_param", "bytes", "bytes of one weight (2: BF16)", 1.0, 16.0}, bytes_per_param);
  v.field({"grad_bytes_per_param", "bytes", "bytes of one gradient, what the data-parallel allreduce moves (2: BF16)",
           1.0, 16.0},
          grad_bytes_per_param);
  v.field(
      {"optimizer_bytes_per_param", "bytes",
       "optimizer state per weight (12: Adam in mixed precision, FP32 master copy, momentum and variance)", 0.0, 64.0},
      optimizer_bytes_per_param);
  v.field({"bytes_per_activation", "bytes", "bytes of one activation element (2: BF16)", 1.0, 16.0},
          bytes_per_activation);
  v.field({"experts", "", "MoE experts per layer (a multiple of expert); 0: a dense MLP", 0.0, 1e5}, experts);
  v.field({"top_k", "", "MoE: experts each token is routed to (at most experts)", 1.0, 1e5}, top_k);
  v.field({"gpus", "GPUs", "GPUs taking part, one per host (tensor x pipeline x data); 0: every host", 0.0, 1e7}, gpus);
  v.field({"tensor", "GPUs", "tensor-parallel degree: consecutive GPUs, inside one NVLink domain", 1.0, 1e5}, tensor);
  v.field({"pipeline", "stages", "pipeline-parallel degree", 1.0, 1e5}, pipeline);
  v.field({"data", "GPUs",
           "data-parallel degree; 0: the GPUs left, GPUs / (tensor x pipeline) (a system's racks or nodes can then "
           "change alone)",
           0.0, 1e7},
          data);
  v.field({"expert", "GPUs", "expert-parallel degree, within the data-parallel group (divides data)", 1.0, 1e5},
          expert);
  v.field({"schedule",
           "",
           "pipeline schedule: 1f1b (PipeDream-Flush, as Megatron-LM) or gpipe (all forwards first)",
           0.0,
           0.0,
           {"1f1b", "gpipe"}},
          schedule);
  v.field({"bucket_mib", "MiB",
           "data-parallel gradient bucket: a bucket's allreduce starts when the backward pass has produced all "
           "of its gradients (PyTorch DDP bucket_cap_mb 25)",
           0.001, 1e6},
          bucket_mib);
  v.field({"gpu_tflops", "TFLOP/s", "dense BF16 tensor-core peak per GPU (2250: HGX B200 and B300)", 0.001, 1e6},
          gpu_tflops);
  v.field({"compute_efficiency", "",
           "share of gpu_tflops a layer's kernels reach (0.5: about Megatron-LM's published 52 % on A100)", 0.001, 1.0},
          compute_efficiency);
  v.field({"hbm_gib", "GiB", "HBM per GPU (167.6 GiB: the B200's 180 GB; B300 288 GB)", 0.001, 1e6}, hbm_gib);
  v.field({"domain_size", "GPUs",
           "GPUs in one NVLink domain (8: HGX, 72: NVL72), consecutive hosts; a tensor-parallel group must sit in "
           "one",
           1.0, 1e6},
          domain_size);
  v.field({"comm_backend",
           "",
           "what carries the step's collectives: fabric (RDMA WRITEs between SuperNICs over the modelled fabric) "
           "or cluster (a system preset's NVLink domains and rails: NVLink rings, hierarchical allreduce, GPUDirect "
           "RDMA; the default with system.preset)",
           0.0,
           0.0,
           {"fabric", "cluster"}},
          comm_backend);
  v.field({"tp_algo",
           "",
           "comm_backend cluster: how a tensor-parallel allreduce runs inside its NVLink domain: nvlink_ring "
           "(NCCL's ring over NVLink) or nvls (NVLink SHARP: the switch chips reduce and multicast)",
           0.0,
           0.0,
           {"nvlink_ring", "nvls"}},
          tp_algo);
  v.field({"chakra", "",
           "MLCommons Chakra execution traces to run instead of the model: a path prefix (files "
           "<prefix>.<rank>.et, one per GPU) or a directory holding one such set, relative to the scenario; the "
           "model's keys are then unused, gpu_tflops x compute_efficiency times nodes that give num_ops only"},
          chakra);
  v.field({"timeline_gpus", "GPUs",
           "the report's timeline records the start and end of every task of the first N GPUs (0: none); "
           "fabricsim plot draws training_timeline.png from it",
           0.0, 1024.0},
          timeline_gpus);
}

namespace {

std::string gib(uint64_t bytes) { return fmt::format("{:.2f} GiB", double(bytes) / double(1ull << 30)); }

void check_divides(const std::string& src, const char* num_key, uint64_t num, const char* den_key, uint64_t den) {
  if (den != 0 && num % den == 0) return;
  throw config_error(
      fmt::format("{}: training.{} {} is not a multiple of training.{} {}", src, num_key, num, den_key, den));
}

// The parallelism against the GPUs and the NVLink domain.
void check_parallelism(const training_params& p, uint64_t hosts, uint64_t gpus, const std::string& src) {
  if (p.gpus > hosts)
    throw config_error(fmt::format("{}: training.gpus {} is more than the topology's {} hosts (one GPU per host)", src,
                                   p.gpus, hosts));
  const uint64_t product = p.tensor * p.pipeline * p.data;
  if (product != gpus)
    throw config_error(fmt::format(
        "{}: training.tensor {} x training.pipeline {} x training.data {} = {} GPUs does not match the {} GPUs of "
        "the run ({}): the product of the parallelism degrees must be the GPU count",
        src, p.tensor, p.pipeline, p.data, product, gpus,
        p.gpus ? "training.gpus" : "training.gpus 0: every host of the topology"));
  if (p.tensor > p.domain_size || p.domain_size % p.tensor != 0)
    throw config_error(fmt::format(
        "{}: training.tensor {} {} a domain of training.domain_size {} GPUs: a tensor-parallel group must sit "
        "inside one NVLink domain (tensor at most, and dividing, domain_size)",
        src, p.tensor, p.tensor > p.domain_size ? "is larger than" : "does not divide", p.domain_size));
  if (p.expert > 1 && p.experts == 0)
    throw config_error(fmt::format("{}: training.expert {} needs MoE layers: set training.experts", src, p.expert));
  check_divides(src, "data", p.data, "expert", p.expert);
}

void check_shapes(const training_params& p, uint64_t ffn, const std::string& src) {
  check_divides(src, "layers", p.layers, "pipeline", p.pipeline);
  check_divides(src, "heads", p.heads, "tensor", p.tensor);
  check_divides(src, "hidden", p.hidden, "heads", p.heads);
  if (ffn == 0 || ffn % p.tensor != 0)
    throw config_error(
        fmt::format("{}: the MLP width {} (training.ffn_hidden, or ffn_multiplier x hidden) is not a "
                    "positive multiple of training.tensor {}",
                    src, ffn, p.tensor));
  if (p.experts > 0) {
    check_divides(src, "experts", p.experts, "expert", p.expert);
    if (p.top_k > p.experts)
      throw config_error(
          fmt::format("{}: training.top_k {} is more than training.experts {}", src, p.top_k, p.experts));
  }
  if (p.global_batch > 0 && p.global_batch % (p.micro_batch * p.data) != 0)
    throw config_error(
        fmt::format("{}: training.global_batch {} is not a multiple of training.micro_batch {} x "
                    "training.data {} = {}",
                    src, p.global_batch, p.micro_batch, p.data, p.micro_batch * p.data));
}

}  // namespace

training_memory training_memory_per_gpu(const training_model& m) {
  const training_params& p = m.p;
  training_memory out;
  uint64_t params = m.layers_per_stage * (m.layer_dense_params_per_gpu + m.layer_expert_params_per_gpu) +
                    m.embedding_params_per_gpu * (m.pp == 1 ? 2 : 1);  // one stage: embedding and output layer
  out.weights = params * p.bytes_per_param;
  out.gradients = params * p.grad_bytes_per_param;
  out.optimizer = params * p.optimizer_bytes_per_param;
  // Korthikanti et al., "Reducing Activation Recomputation in Large Transformer Models" (2022), 4.2: a layer
  // keeps s b h (10 + 24/t + 5 a s / (h t)) bytes at 16-bit under tensor parallelism without sequence
  // parallelism; scaled by bytes_per_activation / 2. 1F1B keeps min(pp, m) micro-batches in flight on the
  // first stage, GPipe all m.
  const double s = double(p.seq_len), b = double(p.micro_batch), h = double(p.hidden), a = double(p.heads);
  const double t = double(m.tp);
  const double per_layer = s * b * h * (10.0 + 24.0 / t + 5.0 * a * s / (h * t)) * double(p.bytes_per_activation) / 2;
  const uint64_t in_flight = p.schedule == "gpipe" ? m.micro_batches : std::min(m.pp, m.micro_batches);
  out.activations = uint64_t(std::llround(per_layer * double(m.layers_per_stage) * double(in_flight)));
  return out;
}

training_model make_training_model(const training_params& given, uint64_t hosts, const std::string& source) {
  training_model m;
  training_params p = given;
  m.gpus = p.gpus ? p.gpus : hosts;
  if (p.data == 0) {  // the GPUs left over tensor x pipeline
    if (m.gpus % (p.tensor * p.pipeline) != 0)
      throw config_error(
          fmt::format("{}: training.data 0 takes the GPUs left, but training.tensor {} x "
                      "training.pipeline {} = {} does not divide the {} GPUs",
                      source, p.tensor, p.pipeline, p.tensor * p.pipeline, m.gpus));
    p.data = m.gpus / (p.tensor * p.pipeline);
  }
  m.p = p;
  check_parallelism(p, hosts, m.gpus, source);
  m.ffn = p.ffn_hidden ? p.ffn_hidden : uint64_t(std::llround(p.ffn_multiplier * double(p.hidden)));
  check_shapes(p, m.ffn, source);
  m.tp = p.tensor;
  m.pp = p.pipeline;
  m.dp = p.data;
  m.ep = p.expert;
  m.moe = p.experts > 0;
  m.layers_per_stage = p.layers / p.pipeline;
  m.micro_batches = p.global_batch ? p.global_batch / (p.micro_batch * p.data) : p.micro_batches;
  m.tokens = p.micro_batch * p.seq_len;
  const uint64_t h = p.hidden;
  m.attention_params = 4 * h * h;
  m.mlp_params = 2 * h * m.ffn * (m.moe ? p.experts : 1);
  m.router_params = m.moe ? h * p.experts : 0;
  m.embedding_params = p.vocab * h;
  m.total_params = p.layers * (m.attention_params + m.mlp_params + m.router_params) + 2 * m.embedding_params;
  // The router is replicated on every GPU and reduced with the dense weights.
  m.layer_dense_params_per_gpu = m.attention_params / m.tp + (m.moe ? m.router_params : m.mlp_params / m.tp);
  m.layer_expert_params_per_gpu = m.moe ? m.mlp_params / p.experts * (p.experts / m.ep) / m.tp : 0;
  m.embedding_params_per_gpu = m.embedding_params / m.tp;
  // Forward FLOPs: 2 per multiply-add for every weight a token meets, plus attention's QK^T and AV (2 b s^2 h
  // each, causal masking not subtracted, as Narayanan et al. 2021 count it).
  const double tok = double(m.tokens), hd = double(h), s = double(p.seq_len), b = double(p.micro_batch);
  m.attention_flops = (2.0 * tok * double(m.attention_params) + 4.0 * b * s * s * hd) / double(m.tp);
  const double mlp_per_token = 2.0 * hd * double(m.ffn) * (m.moe ? double(p.top_k) : 1.0);
  m.mlp_flops = (2.0 * tok * mlp_per_token) / double(m.tp) + 2.0 * tok * double(m.router_params);
  m.head_flops = 2.0 * tok * hd * double(p.vocab) / double(m.tp);
  m.flops_per_s = p.gpu_tflops * 1e12 * p.compute_efficiency;
  m.tp_allreduce_bytes = m.tokens * h * p.bytes_per_activation;
  m.pp_send_bytes = m.tp_allreduce_bytes;
  m.ep_alltoall_bytes = m.moe ? m.tokens * h * p.top_k * p.bytes_per_activation : 0;
  m.memory = training_memory_per_gpu(m);
  const double hbm = p.hbm_gib * double(1ull << 30);
  if (double(m.memory.total()) > hbm)
    throw config_error(
        fmt::format("{}: the model does not fit the HBM: a GPU of the first pipeline stage needs {} of weights + {} of "
                    "gradients + {} of optimizer state + {} of activations = {}, more than training.hbm_gib {} (raise "
                    "training.tensor or training.pipeline, or lower training.micro_batch or training.seq_len)",
                    source, gib(m.memory.weights), gib(m.memory.gradients), gib(m.memory.optimizer),
                    gib(m.memory.activations), gib(m.memory.total()), p.hbm_gib));
  return m;
}

}  // namespace fabricsim::testbench
