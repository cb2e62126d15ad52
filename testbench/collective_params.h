// The scenario keys of a collective benchmark (`workload.kind: collective`): the operation, its algorithm,
// the sizes swept nccl-tests style (-b MIN -e MAX -f FACTOR), the ranks and where they sit, and the engine's
// timing figures. The engine that runs them is testbench/collective.h.
#pragma once

#include <cstdint>
#include <string>

#include "sc_models/core/params.h"

namespace fabricsim::testbench {

struct collective_params {
  std::string op = "allreduce";     // allreduce, allgather, reducescatter, alltoall, broadcast
  std::string algo = "ring";        // ring, tree (NCCL double binary), binary_tree, sharp (needs a SHARP switch)
  uint64_t min_bytes = 1048576;     // nccl-tests -b: first size
  uint64_t max_bytes = 67108864;    // nccl-tests -e: last size
  uint64_t step_factor = 2;         // nccl-tests -f: each size is the previous one times this
  std::string dtype = "float";      // element type: float, half, bfloat16, int32 (count = size / element size)
  uint64_t root = 0;                // broadcast: the rank that sends
  uint64_t ranks = 0;               // ranks taking part; 0: every host
  std::string placement = "linear"; // linear: rank i on host i; spread: round-robin over the leaves
  uint64_t iterations = 5;          // nccl-tests -n: timed runs per size (time is their mean)
  uint64_t warmup_iterations = 1;   // nccl-tests -w: untimed runs per size before them
  uint64_t chunk_bytes = 524288;    // pipelining slice: one RDMA WRITE moves at most this much
  uint64_t buffer_slots = 8;        // receive staging slots per connection (NCCL_STEPS): credits
  double reduce_gbps = 1100.0;      // reduction compute rate per rank, GB/s of output; 0: free
  double barrier_ns = 0.0;          // from the end of an iteration (or size) to the next one's first posts
  double credit_ns = 0.0;           // from a staging slot's release at the receiver to the sender's use of it
  std::string intra = "nvlink_ring";  // algo hierarchical: inside each NVLink domain, nvlink_ring or nvls
  std::string inter = "ring";         // algo hierarchical: across the domains on each rail, ring or sharp
  void visit(core::param_visitor& v);
};

}  // namespace fabricsim::testbench
