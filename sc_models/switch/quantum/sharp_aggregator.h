// SHARP (Scalable Hierarchical Aggregation and Reduction Protocol) streaming aggregation in the Quantum-X800
// switch: an aggregation tree over the switches for a group of hosts, and the aggregation unit each switch
// of the tree runs. Documentation: docs/quantum_x800.md, section SHARP.
//
// Up: every member host sends its buffer as chunks, one IB packet each (opcode sharp_up, chunk index in the
// PSN field, byte offset and length in a 16-byte aggregation header carried like a RETH). A switch of the
// tree takes SHARP packets out of its forwarding path (quantum_switch::receive hands them here): a chunk's
// first piece claims one of the unit's streaming aggregation slots (or waits, holding its ingress buffer and
// so its link credits, until a slot frees); every piece then passes through the reduction ALU, one at a
// time at `sharp.tflops` (one operation per element), and only then leaves the ingress buffer. When every
// child's piece of a chunk has been reduced, the partial result leaves `sharp.latency_ns` later towards the
// parent through the ordinary egress port (credits, VL arbitration); the slot frees when it is on the wire.
// Down: the root sends the result of each chunk to each child (opcode sharp_down); a switch replicates a
// result arriving from its parent to every child port, holding it in its ingress buffer until the last copy
// has left. Hosts (sharp_host.h) place what arrives. Nothing is dropped: every hop waits for credit.
//
// The reduction is computed on the bytes: fp32 and bf16 in float arithmetic (bf16 rounded to nearest even
// after every addition), int32 wrapping. A switch adds its children's pieces in the order they reach its ALU;
// the result is deterministic for a seed, and its float error is bounded by (n-1) u sum|x| for n members
// whatever the order (docs/quantum_x800.md).
//
// Simplifications, stated: a slot is a timing resource (its storage is one buffer per operation, addressed
// by chunk offset, so that a partial stays readable until its parent has reduced it); one operation at a
// time per tree; the aggregation header's real layout is not public (16 bytes assumed).
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <vector>

#include "sc_models/core/arrival_calendar.h"
#include "sc_models/core/packet.h"
#include "sc_models/core/params.h"
#include "sc_models/core/ring.h"
#include "sc_models/core/sim_context.h"
#include "sc_models/ib/sharp_header.h"

namespace fabricsim::sw {

class quantum_switch;

struct sharp_params {
  double tflops = 14.4;      // reduction throughput of a switch's ALU (Quantum-X800 class, press-grade)
  double latency_ns = 200.0;  // last piece reduced -> partial result ready to leave (estimate)
  uint64_t slots = 64;        // concurrent streaming aggregation slots per switch (estimate)
  void visit(core::param_visitor& v);
};

enum class sharp_dtype : uint8_t { fp32, bf16, int32 };
uint32_t sharp_dtype_bytes(sharp_dtype t);
// bf16 <-> float: the top 16 bits of a float, rounded to nearest even (NaN kept quiet).
uint16_t bf16_from_float(float f);
float float_from_bf16(uint16_t b);
// acc[i] += in[i] for every element of `bytes` (a whole number of elements).
void sharp_reduce(sharp_dtype t, uint8_t* acc, const uint8_t* in, uint64_t bytes);

// The tree over a fabric's switches: member hosts sit on switch ports; the root is the switch from which the
// farthest member switch is nearest (ties: the switch created last, i.e. the top tier); every other switch on
// a shortest path from a member switch to the root joins, with the port towards the root as its parent.
struct sharp_tree_node {
  quantum_switch* sw = nullptr;  // null where this process does not build the switch (a run cut across ranks)
  size_t switch_index = 0;       // in creation order (fabric::switches(), the layout's switches)
  int parent_port = -1;  // -1: the root
  int parent = -1;       // the parent's index in sharp_tree::nodes; -1: the root
  std::vector<unsigned> child_ports;
  unsigned depth = 0;    // hops from the root
};
struct sharp_tree {
  std::vector<sharp_tree_node> nodes;  // the root first
};
// A cable between two switches: switch indices (creation order) and their ports.
struct sharp_cable {
  size_t a;
  unsigned a_port;
  size_t b;
  unsigned b_port;
};
// The tree from the fabric's wiring alone: `switches` switches joined by `cables`; `members` the (switch index,
// port) of every member host. Every node's `sw` is left null for the caller to fill with the switches it built,
// so every process of a run cut across MPI ranks builds the same tree (docs/scale_out.md). Throws
// core::config_error if the members' switches are not connected. `root_choice` k picks, among the switches tied
// for root, the (k + 1)-th from the last created (0: the last), so that trees over different members (one per
// rail) can spread their roots over the spines.
sharp_tree build_sharp_tree(size_t switches, const std::vector<sharp_cable>& cables,
                            const std::vector<std::pair<size_t, unsigned>>& members, size_t root_choice = 0);
// The same over built switches, `switches` in creation order, the cables read from their ports' links; `sw`
// filled.
sharp_tree build_sharp_tree(const std::vector<quantum_switch*>& switches,
                            const std::vector<std::pair<size_t, unsigned>>& members, size_t root_choice = 0);

// The aggregation unit of one switch on one tree.
class sharp_aggregator : public core::calendar_client {
 public:
  sharp_aggregator(quantum_switch& sw, const sharp_params& params, const sharp_tree_node& node, core::sim_context& ctx);
  sharp_aggregator(const sharp_aggregator&) = delete;
  sharp_aggregator& operator=(const sharp_aggregator&) = delete;

  // A new operation of `bytes` in chunks of `chunk_bytes`; `data`: reduce the bytes (else timing only).
  void start_op(uint32_t op, uint64_t bytes, uint32_t chunk_bytes, sharp_dtype dtype, bool data);
  // The partial results' buffer sized for operations of up to `bytes` before the run, so that it never moves:
  // the packets this unit sends point into it (a run cut across ranks ships those bytes by their offset in it).
  void reserve(uint64_t bytes);
  const uint8_t* buffer() const { return m_acc.data(); }
  uint64_t buffer_bytes() const { return m_acc.size(); }

  // From quantum_switch: a SHARP packet arrived (its ingress blocks are counted, not yet released), and a
  // packet this unit made has been committed to an egress wire.
  void receive(core::packet* p, unsigned in_port, unsigned vl, uint32_t blocks);
  void departed(core::packet* p, core::picoseconds t);
  void on_due(core::picoseconds t) override;

  bool root() const { return m_parent < 0; }
  uint32_t op() const { return m_op; }  // the operation in progress (its packets' dest_qp)
  const std::string& name() const { return m_name; }
  size_t children() const { return m_children.size(); }
  struct counters_t {
    uint64_t ops = 0;             // chunks aggregated (every child's piece reduced)
    uint64_t pieces = 0;          // pieces through the ALU
    uint64_t bytes_reduced = 0;   // payload bytes through the ALU
    uint64_t slot_waits = 0;      // pieces that found no slot (or a piece ahead of them on their port waiting)
    uint64_t slot_wait_ps = 0;    // time those pieces waited
    uint64_t max_slots_used = 0;
    uint64_t replicated = 0;      // result packets sent down (root) or copied down
    uint64_t unexpected = 0;      // SHARP packets of another operation or from a port off the tree
  };
  const counters_t& counters() const { return m_c; }

 private:
  struct piece {
    core::packet* p;
    unsigned port, vl;
    uint32_t blocks;
    core::picoseconds since;  // arrival (for the slot wait)
    core::picoseconds done;   // ALU finished with it
  };
  struct slot {
    uint32_t chunk = 0;
    uint32_t reduced = 0;    // pieces through the ALU
    uint32_t down_left = 0;  // root: result copies still to leave
  };
  struct replica_entry {   // a result from the parent, held in the ingress buffer until every copy left
    unsigned port, vl;
    uint32_t blocks, left;
  };
  bool can_admit(uint32_t chunk) const;
  void admit(const piece& pc, core::picoseconds t);
  void grant_waiting(core::picoseconds t);
  void complete(uint32_t s, core::picoseconds ready);
  void free_slot(uint32_t s, core::picoseconds t);
  void send(core::packet* p, unsigned port, core::picoseconds ready, uint32_t tag);
  core::packet* result_packet(uint32_t chunk, core::bth_opcode o);

  quantum_switch& m_sw;
  core::sim_context& m_ctx;
  sharp_params m_params;
  std::string m_name;
  int m_parent;
  std::vector<unsigned> m_children;
  std::vector<bool> m_is_child;  // by port
  double m_ps_per_element;
  core::picoseconds m_latency;
  // The operation.
  uint32_t m_op = UINT32_MAX;
  uint64_t m_bytes = 0;
  uint32_t m_chunk_bytes = 4096;
  sharp_dtype m_dtype = sharp_dtype::fp32;
  bool m_data = false;
  std::vector<uint8_t> m_acc;           // partial results by offset (data runs)
  std::vector<int32_t> m_slot_of;       // by chunk: its slot, -1 none
  std::vector<slot> m_slots;
  std::vector<uint32_t> m_free;         // free slots
  std::deque<piece> m_wait;             // pieces waiting for a slot, in arrival order
  std::vector<uint32_t> m_port_waiting;  // by port: pieces of it in m_wait
  core::ring<piece> m_alu;              // pieces in the ALU's queue, in service order (done times rise)
  core::picoseconds m_alu_free{};
  core::picoseconds m_wake{UINT64_MAX};
  std::vector<replica_entry> m_replicas;
  std::vector<uint32_t> m_free_replicas;
  counters_t m_c;
};

}  // namespace fabricsim::sw
