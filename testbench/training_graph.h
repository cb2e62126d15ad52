// A training step as a dependency graph: per GPU, forward and backward compute tasks per layer and
// micro-batch in the pipeline schedule's order (1F1B or GPipe), and communication tasks per group of GPUs:
// tensor-parallel allreduces of activations (two per layer each way, Megatron-LM's f and g), pipeline sends
// between stages, expert-parallel alltoalls around each MoE layer, and the data-parallel gradient allreduce
// in buckets that start as the backward pass of the last micro-batch produces them. The executor is
// testbench/training_run.h; docs/workloads.md#training-a-step-as-the-workload has the rules and formulas.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "testbench/training_model.h"

namespace fabricsim::testbench {

enum class group_kind { tp, pp, dp, ep, trace };  // trace: a Chakra trace's group (comm_group::name)
const char* group_kind_name(group_kind k);

// A communicator: the GPUs one kind of collective runs over, in ring order, and the largest size it moves.
struct comm_group {
  group_kind kind = group_kind::tp;
  std::string op;               // allreduce, send (ranks[0] to ranks[1]) or alltoall
  std::vector<uint32_t> ranks;  // GPU ranks
  uint64_t max_bytes = 0;
  std::string name;  // a trace's group: its pg_name ("world" without one; "p2p" for send/recv pairs)
};

struct training_task {
  bool compute = true;
  std::string label;           // e.g. "F s0 mb1 L3 mlp", "tp allreduce ...", for the timeline
  uint32_t rank = 0;           // compute: the GPU; communication: the group's first GPU
  double flops = 0.0;          // compute
  double seconds = -1.0;       // compute: a set duration (a Chakra node's duration_micros); < 0: from flops
  uint32_t group = 0;          // communication: index into training_graph::groups
  uint64_t bytes = 0;          // communication: nccl-tests size (allreduce: the buffer; alltoall: what each sends)
  std::vector<uint32_t> deps;  // tasks that end before this one starts
};

struct training_graph {
  uint32_t gpus = 0;
  std::vector<training_task> tasks;  // a GPU's compute tasks run one at a time, in this order
  std::vector<comm_group> groups;
};

// How long compute task `t` runs at `flops_per_s`: its set duration, else its FLOPs at that rate.
inline double task_seconds(const training_task& t, double flops_per_s) {
  return t.seconds >= 0 ? t.seconds : t.flops / flops_per_s;
}

// GPU rank of tensor rank t, data rank d, stage s: t + tp (d + dp s).
uint32_t gpu_rank(const training_model& m, uint64_t t, uint64_t d, uint64_t s);

training_graph build_training_graph(const training_model& m);

// The step with communication taking no time (the compute-only bound, pipeline bubbles included): each
// GPU's compute tasks in order, each when its dependencies end. Seconds.
struct compute_only_times {
  double step_s = 0.0;
  std::vector<double> busy_s;  // per GPU: the sum of its compute tasks
};
compute_only_times compute_only(const training_graph& g, double flops_per_s);

}  // namespace fabricsim::testbench
