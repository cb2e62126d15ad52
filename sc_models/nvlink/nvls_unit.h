// NVLink SHARP (NVLS) in one NVLink switch chip: in-switch reduction and multicast for an allreduce inside
// the domain. Every member GPU sends its whole buffer as contributions (opcode nvls_contribution, byte offset
// in reth.va), packet k of the buffer on its link k mod links_per_gpu, so that chip k mod switch_chips gets
// packet k from every member. The chip reduces the members' packets k as they arrive (the first is copied,
// the others added, in arrival order, with the reduction of sc_models/switch/quantum/sharp_aggregator: fp32,
// bf16 or int32 on the real bytes), and when the last has arrived it multicasts the result, one copy per
// member on the chip's port towards it (opcode nvls_result), `nvls_latency_ns` later.
//
// Two halves of it for the hierarchical allreduce (testbench/cluster_run.h), as NCCL's NVLS algorithm runs
// them with multimem loads and stores: `reduce_scatter` reduces as above but sends packet k's result only to
// the member that owns it (member i owns bytes [i x owner_bytes, (i + 1) x owner_bytes)); `allgather` takes
// each packet from its owner alone and multicasts it to every other member.
//
// Simplifications, stated: the reduction runs at line rate (no ALU queue); the partial results are held in
// an SRAM of their own, not in the ports' ingress buffers, so a contribution's credits go back as soon as it
// is reduced (the SRAM's high-water mark in packets is counted: `max_partials`). One operation at a time per
// multicast group (nvls_op::group): several groups of GPUs (the tensor-parallel groups of a rack) reduce at
// once, each with its own partial results; a group's next operation replaces its previous one.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sc_models/core/packet.h"
#include "sc_models/core/sim_context.h"
#include "sc_models/core/units.h"
#include "sc_models/switch/quantum/sharp_aggregator.h"

namespace fabricsim::nvlink {

// Where the unit's result packets go: the chip's egress ports.
class nvls_egress {
 public:
  virtual ~nvls_egress() = default;
  virtual void emit(unsigned port, core::packet* p, core::picoseconds ready) = 0;
};

struct nvls_member {
  uint32_t gpu = 0;   // its index in the domain (lrh.dlid of the results)
  unsigned port = 0;  // the chip's first port towards it
};

enum class nvls_mode { allreduce, reduce_scatter, allgather };

struct nvls_op {
  uint32_t tag = 0;             // reth.rkey of contributions and results
  uint64_t bytes = 0;           // the buffer of each member
  uint64_t packet_bytes = 256;  // payload per packet (nvlink.max_payload_bytes)
  uint64_t result_addr = 0;     // where results land in every member's HBM
  sw::sharp_dtype dtype = sw::sharp_dtype::fp32;
  bool data = true;  // reduce the bytes (else timing only)
  std::vector<nvls_member> members;
  nvls_mode mode = nvls_mode::allreduce;
  uint64_t owner_bytes = 0;  // reduce_scatter, allgather: each member's share, a multiple of packet_bytes
  uint32_t group = 0;        // the multicast group: operations of different groups run at once
};

class nvls_unit {
 public:
  // `chip`: this chip's index among `chips`; `links_per_chip`: ports per GPU on it (a result leaves on the
  // member's port with the index its contributions came in on); `header_bytes`, `flit_bytes`: the results'
  // wire size.
  nvls_unit(nvls_egress& egress, core::sim_context& ctx, unsigned chip, unsigned chips, unsigned links_per_chip,
            uint64_t header_bytes, uint64_t flit_bytes, core::picoseconds latency);
  nvls_unit(const nvls_unit&) = delete;
  nvls_unit& operator=(const nvls_unit&) = delete;

  void start(const nvls_op& op);
  // A contribution arrived on `port` at `t`; the caller releases its credits and the descriptor afterwards.
  void contribution(const core::packet& p, unsigned port, core::picoseconds t);

  struct counters_t {
    uint64_t contributions = 0;  // packets reduced
    uint64_t bytes_reduced = 0;  // payload bytes through the reduction
    uint64_t results = 0;        // packets whose result was multicast
    uint64_t copies = 0;         // result packets sent (results x members)
    uint64_t max_partials = 0;   // most packets partly reduced at once
    uint64_t unexpected = 0;     // contributions of no operation, from a non-member or a chunk of another chip
  };
  const counters_t& counters() const { return m_c; }

 private:
  // One multicast group's operation in progress (or done; its partial results stay until the next one,
  // since the result packets in flight point into them).
  struct slot {
    bool active = false;
    nvls_op op;
    std::vector<int32_t> member_of_gpu;  // gpu -> member index, -1: not a member
    std::vector<uint8_t> acc;            // partial results, by local chunk
    std::vector<uint32_t> count;         // contributions reduced, by local chunk
    uint64_t partials = 0;               // packets partly reduced
  };
  // The active operation whose tag a contribution carries, or null.
  slot* slot_of(uint32_t tag);
  // Member i's share of the buffer (reduce_scatter, allgather), and packet k's owner.
  static uint64_t owned_bytes(const nvls_op& op, size_t i);
  static size_t owner_of(const nvls_op& op, uint64_t k) { return size_t(k * op.packet_bytes / op.owner_bytes); }
  void emit_result(const core::packet& p, const slot& sl, const nvls_member& m, unsigned port, uint64_t j,
                   uint64_t total, core::picoseconds ready);

  nvls_egress& m_egress;
  core::sim_context& m_ctx;
  unsigned m_chip, m_chips, m_links_per_chip;
  uint64_t m_header, m_flit;
  core::picoseconds m_latency;
  std::vector<slot> m_slots;  // by group
  size_t m_last = 0;          // the slot the previous contribution belonged to
  uint64_t m_partials = 0;    // packets partly reduced, over every group
  counters_t m_c;
};

}  // namespace fabricsim::nvlink
