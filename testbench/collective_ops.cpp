// The arithmetic of a collective's operation, as nccl-tests does it.
#include "testbench/collective_ops.h"

#include <stdexcept>

namespace fabricsim::testbench {

double bus_factor(const std::string& op, uint64_t ranks) {
  const double n = double(ranks);
  if (op == "allreduce") return 2.0 * (n - 1.0) / n;
  if (op == "allgather" || op == "reducescatter" || op == "alltoall") return (n - 1.0) / n;
  if (op == "broadcast") return 1.0;
  throw std::logic_error("bus_factor: unknown op " + op);
}

uint64_t dtype_bytes(const std::string& dtype) {
  if (dtype == "float" || dtype == "int32") return 4;
  if (dtype == "half" || dtype == "bfloat16") return 2;
  throw std::logic_error("dtype_bytes: unknown dtype " + dtype);
}

std::vector<uint64_t> collective_sizes(const collective_params& p) {
  std::vector<uint64_t> out;
  for (uint64_t b = p.min_bytes; b <= p.max_bytes; b *= p.step_factor) {
    out.push_back(b);
    if (b > p.max_bytes / p.step_factor) break;  // the next step would pass max_bytes (or overflow)
  }
  return out;
}

bool per_rank_parts(const std::string& op) { return op == "allgather" || op == "reducescatter" || op == "alltoall"; }
bool reduces(const std::string& op) { return op == "allreduce" || op == "reducescatter"; }

uint64_t effective_bytes(const collective_params& p, uint64_t requested, uint64_t ranks) {
  const uint64_t elt = dtype_bytes(p.dtype);
  const uint64_t unit = per_rank_parts(p.op) ? elt * ranks : elt;
  return requested / unit * unit;
}

}  // namespace fabricsim::testbench
