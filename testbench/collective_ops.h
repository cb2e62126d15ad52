// The arithmetic of a collective's operation, as nccl-tests does it: the bus bandwidth factor, the element
// size of collective.dtype, the sweep of sizes and the size actually run for a requested one.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "testbench/collective_params.h"

namespace fabricsim::testbench {

// nccl-tests' bus bandwidth factor (doc/PERFORMANCE.md): allreduce 2(n-1)/n; allgather, reducescatter and
// alltoall (n-1)/n; broadcast 1.
double bus_factor(const std::string& op, uint64_t ranks);
// Bytes per element of collective.dtype: float and int32 4, half and bfloat16 2.
uint64_t dtype_bytes(const std::string& dtype);
// The sizes of the sweep: min_bytes, min_bytes * step_factor, ... while at most max_bytes.
std::vector<uint64_t> collective_sizes(const collective_params& p);

// Ops whose buffer is cut in one equal part per rank (nccl-tests rounds their count to a multiple of n).
bool per_rank_parts(const std::string& op);
// Ops that sum the ranks' buffers (redop sum).
bool reduces(const std::string& op);
// The size nccl-tests runs for a requested one: whole elements, and for the per-rank ops whole elements per rank.
uint64_t effective_bytes(const collective_params& p, uint64_t requested, uint64_t ranks);

}  // namespace fabricsim::testbench
