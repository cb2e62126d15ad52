// The scenario keys of a collective benchmark (documentation: docs/collectives.md).
#include "testbench/collective_params.h"

namespace fabricsim::testbench {

void collective_params::visit(core::param_visitor& v) {
  v.field({"op", "",
           "the collective (workload.kind collective): allreduce, allgather, reducescatter, alltoall or "
           "broadcast",
           0.0, 0.0, {"allreduce", "allgather", "reducescatter", "alltoall", "broadcast"}},
          op);
  v.field({"algo",
           "",
           "ring (every op); tree: allreduce on NCCL's double binary tree (half the buffer on each tree, reduce "
           "then broadcast, pipelined), broadcast on a binary tree from root; binary_tree: one plain binary "
           "tree (allreduce, broadcast); sharp: in-network reduction, refused until a SHARP-capable switch "
           "model exists; nvlink_ring, nvls: allreduce inside an NVLink domain (topology.kind nvl72: ring over "
           "NVLink, NVLink SHARP); hierarchical: allreduce or alltoall on a system preset as NCCL runs them across "
           "NVLink domains (allreduce: reduce-scatter inside the domains, ring across them on each rail, "
           "allgather inside; alltoall: NVLink copies inside a domain, PXN and one rail hop across)",
           0.0,
           0.0,
           {"ring", "tree", "binary_tree", "sharp", "nvlink_ring", "nvls", "hierarchical"}},
          algo);
  v.field({"min_bytes", "bytes", "first message size, as nccl-tests -b (allgather, reducescatter: the total "
           "over all ranks; alltoall: what each rank sends in all)", 1.0, 1099511627776.0},
          min_bytes);
  v.field({"max_bytes", "bytes", "last message size, as nccl-tests -e (at least min_bytes)", 1.0,
           1099511627776.0},
          max_bytes);
  v.field({"step_factor", "", "sizes grow by this factor from min_bytes to max_bytes, as nccl-tests -f", 2.0,
           1024.0},
          step_factor);
  v.field({"dtype", "", "element type: sets the element count (size / element size) and the alignment of "
           "chunks", 0.0, 0.0, {"float", "half", "bfloat16", "int32"}},
          dtype);
  v.field({"root", "rank", "broadcast: the rank whose buffer is sent", 0.0, 1e6}, root);
  v.field({"ranks", "ranks", "ranks taking part, at most the host count; 0: every host", 0.0, 1e6}, ranks);
  v.field({"placement", "",
           "linear: rank i on host i; spread: rank i on the next leaf in turn (round-robin over leaves)", 0.0,
           0.0, {"linear", "spread"}},
          placement);
  v.field({"iterations", "", "timed runs per size, back to back; the time reported is their mean (nccl-tests -n)",
           1.0, 1e6},
          iterations);
  v.field({"warmup_iterations", "", "untimed runs per size before the timed ones (nccl-tests -w)", 0.0, 1e6},
          warmup_iterations);
  v.field({"chunk_bytes", "bytes",
           "pipelining slice: every step's data moves as RDMA WRITEs of at most this size, and a rank forwards "
           "a slice as soon as it has arrived (NCCL: buffer size 4 MiB / 8 steps)",
           4096.0, 1073741824.0},
          chunk_bytes);
  v.field({"buffer_slots", "slots",
           "receive staging slots of chunk_bytes per connection for data that is reduced on arrival; a sender "
           "waits for a free slot (NCCL_STEPS is 8)",
           1.0, 1024.0},
          buffer_slots);
  v.field({"reduce_gbps", "GB/s",
           "rate at which a rank reduces an arrived slice into its buffer before forwarding it, one slice at a "
           "time per rank (default: H100 SXM HBM3 3.35 TB/s over 3 bytes moved per output byte); 0: free",
           0.0, 1e6},
          reduce_gbps);
  v.field({"barrier_ns", "ns",
           "the barrier between iterations (and sizes): the next iteration's first WRITEs are posted this long "
           "after the last placement or reduction of the previous one (not counted in either's time); in a "
           "training step, the time a collective's ranks take to learn it has ended; under several MPI ranks "
           "at least the lookahead (docs/scale_out.md); 0: at once",
           0.0, 1e9},
          barrier_ns);
  v.field({"credit_ns", "ns",
           "time for a freed staging slot's credit to reach the sender (NCCL returns it with a small RDMA "
           "write, not modelled as a packet); under several MPI ranks at least the lookahead when a reducing "
           "connection crosses ranks (docs/scale_out.md); 0: at once",
           0.0, 1e9},
          credit_ns);
  v.field({"intra",
           "",
           "collective.algo hierarchical: phases 1 and 3 inside each NVLink domain, nvlink_ring (NCCL's ring "
           "over NVLink: reduce-scatter, then allgather) or nvls (NVLink SHARP: the switch chips reduce each "
           "packet and send the result to the GPU owning it, then multicast each GPU's share)",
           0.0,
           0.0,
           {"nvlink_ring", "nvls"}},
          intra);
  v.field({"inter",
           "",
           "collective.algo hierarchical: phase 2 across the domains on each rail, ring (a ring of RDMA WRITEs "
           "per rail) or sharp (each rail's Quantum-X800 switches reduce the shards, NCCL's CollNet path; "
           "refused on Spectrum-X)",
           0.0,
           0.0,
           {"ring", "sharp"}},
          inter);
}

}  // namespace fabricsim::testbench
