// Allreduce inside one NVLink domain (topology.kind nvl72, collective.algo nvlink_ring or nvls), on the GPUs
// and switch chips of sc_models/nvlink: every byte moves as NVLink packets, nothing comes from a bandwidth
// formula. Documentation: docs/systems.md.
//
// nvlink_ring: NCCL's ring over NVLink. The buffer is cut into one chunk per GPU, each chunk into slices of
// collective.chunk_bytes; GPU r sends to GPU r+1 (its copy engine stripes every slice over all its links).
// Reduce-scatter steps 0 .. n-2: at step s GPU r sends chunk r - s; the receiver adds the arrived slice into
// its buffer (at nvlink.reduce_gbytes_per_s, one slice at a time per GPU) and forwards it at step s + 1.
// Allgather steps n-1 .. 2n-3 forward the reduced chunks, placed straight into the buffer. A slice moves on
// as soon as it has arrived (and been reduced): the ring is pipelined by slices, as NCCL's is.
// nvls: NVLink SHARP. Every GPU sends its whole buffer as NVLS contributions, packet k on link k mod
// links_per_gpu; the chips reduce and multicast every packet's result (sc_models/nvlink/nvls_unit.h), which
// lands in place. A GPU is done when its whole buffer has come back. Its halves, as NCCL's NVLS algorithm
// runs them across nodes: reduce-scatter (the same contributions, each packet's result to the GPU owning its
// share only) and allgather (each GPU sends its share once; the chips multicast it to the others).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "sc_models/core/arrival_calendar.h"
#include "sc_models/core/units.h"
#include "sc_models/switch/quantum/sharp_aggregator.h"
#include "sc_models/topology/nvlink_domain.h"

namespace fabricsim::testbench {

// What one start() runs: the whole allreduce, or one half of it: reduce-scatter leaves GPU r with its
// owned_chunk of the domain's sum; allgather starts from there (the hierarchical allreduce's first and last
// phases, testbench/cluster_run.h).
enum class domain_phase { allreduce, reduce_scatter, allgather };

// One allreduce's shape on a domain.
struct domain_allreduce_config {
  domain_phase phase = domain_phase::allreduce;
  uint64_t bytes = 0;        // each GPU's buffer (whole elements)
  uint64_t slice_bytes = 0;  // ring: pipelining slice
  sw::sharp_dtype dtype = sw::sharp_dtype::fp32;
  bool data = true;           // move and reduce real bytes (else timing only)
  uint64_t buffer_addr = 0;   // the buffer in every GPU's HBM
  uint64_t staging_addr = 0;  // ring: where reduce-scatter slices land before they are added
};

// An allreduce algorithm over the GPUs of one domain: started once per iteration, reports when every GPU
// has its result.
class domain_allreduce {
 public:
  virtual ~domain_allreduce() = default;
  virtual void start(const domain_allreduce_config& c, std::function<void(core::picoseconds)> done) = 0;
  // Payload bytes one GPU sends per allreduce of `bytes` (what the link bound divides).
  virtual uint64_t bytes_sent_per_gpu(uint64_t bytes) const = 0;
  // The part [offset, offset + length) of the buffer GPU r holds reduced after the reduce-scatter phase (and
  // gives in the allgather): the ring's chunk (r + 1) mod n; NVLS's share r, in whole packets.
  virtual std::pair<uint64_t, uint64_t> owned_chunk(const domain_allreduce_config& c, uint32_t r) const = 0;
};

// `algo`: nvlink_ring or nvls. Throws core::config_error for another name.
std::unique_ptr<domain_allreduce> make_domain_allreduce(const std::string& algo, topology::nvlink_domains& dom,
                                                        unsigned domain, core::arrival_calendar& calendar);

// The HBM an allreduce of `bytes` needs per GPU (buffer and staging), and where they are.
uint64_t domain_allreduce_hbm_bytes(uint64_t bytes);
domain_allreduce_config domain_allreduce_layout(uint64_t bytes);
// Chunk c of n of a buffer of `elements` elements of `elt` bytes (the ring's split: the first elements mod n
// chunks have one more): its offset and length in bytes.
uint64_t ring_chunk_off(uint64_t elements, uint32_t n, uint32_t c, uint64_t elt);
uint64_t ring_chunk_len(uint64_t elements, uint32_t n, uint32_t c, uint64_t elt);

// Source values: element i of GPU g is a small integer (-127 .. 127) drawn from memory::payload_pattern, so
// that a sum over up to 576 GPUs is exact in fp32 and int32 whatever the order of additions (bf16: while the
// sum fits its 8 significant bits). fill_allreduce_source writes GPU g's buffer; allreduce_reference sums the
// members' values in 64-bit integers (a second implementation: no sw::sharp_reduce) and encodes the sum in the
// dtype; count_wrong_elements compares a result with it.
void fill_allreduce_source(uint8_t* buf, uint64_t bytes, sw::sharp_dtype t, uint64_t seed, uint32_t gpu);
std::vector<uint8_t> allreduce_reference(uint64_t bytes, sw::sharp_dtype t, uint64_t seed,
                                         const std::vector<uint32_t>& gpus);
uint64_t count_wrong_elements(const uint8_t* got, const uint8_t* ref, uint64_t bytes, sw::sharp_dtype t);

}  // namespace fabricsim::testbench
