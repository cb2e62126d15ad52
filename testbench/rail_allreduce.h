// The middle phase of the hierarchical allreduce (testbench/cluster_run.h), chosen by collective.inter: an
// allreduce of one shard per GPU across the NVLink domains on its rail. `ring`: rail_ring (RDMA WRITEs
// between the rail's SuperNICs); `sharp`: rail_sharp (the rail's Quantum-X800 switches reduce the shards).
#pragma once

#include <cstdint>
#include <functional>

#include "sc_models/core/units.h"
#include "sc_models/switch/quantum/sharp_aggregator.h"

namespace fabricsim::testbench {

struct rail_shard {
  uint64_t addr = 0;          // the shard in every GPU's HBM (the same address on every domain)
  uint64_t bytes = 0;         // whole elements
  uint64_t staging_addr = 0;  // reduce-scatter slices land here (shard offsets)
  uint64_t slice_bytes = 0;
  sw::sharp_dtype dtype = sw::sharp_dtype::fp32;
  bool data = true;  // add the real bytes (else timing only)
};

class rail_allreduce {
 public:
  virtual ~rail_allreduce() = default;
  // Allreduce `s` across the rail's GPUs, in place; `done` once, when every GPU of the rail has the result.
  virtual void start(const rail_shard& s, std::function<void(core::picoseconds)> done) = 0;
  // The GPUs of this rail that have the result, of those this process simulates (all, in one process), and
  // when the last of them got it (the simulated time then). Under mpirun `done` never runs (no process has
  // every GPU of a rail): the caller sums these over the processes at window ends (testbench/cluster_run.cpp).
  virtual uint32_t finished() const = 0;
  virtual core::picoseconds finished_at() const = 0;
};

}  // namespace fabricsim::testbench
