// The middle phase of the hierarchical allreduce (testbench/cluster_run.h): an allreduce of one shard per GPU
// across the NVLink domains on its rail, as NCCL's inter-node ring runs it. GPU q of domain d writes to GPU q
// of domain d + 1 (mod D) with RDMA WRITEs that its SuperNIC reads from HBM and the peer's SuperNIC places
// into HBM through the trays (GPUDirect RDMA, topology/gpu_cluster.h). The shard is cut into D chunks and
// each chunk into slices (collective.chunk_bytes). Reduce-scatter steps 0 .. D-2 land in a staging area and,
// once landed in HBM, are added into the shard (at the GPU's reduction rate, one slice at a time per GPU) and
// forwarded; allgather steps D-1 .. 2D-3 land in place and are forwarded. A slice moves on as soon as it has
// landed (and been added): the ring is pipelined by slices.
#pragma once

#include <cstdint>
#include <functional>
#include <queue>
#include <vector>

#include "sc_models/core/arrival_calendar.h"
#include "sc_models/core/units.h"
#include "sc_models/pcie/host_tray.h"
#include "sc_models/switch/quantum/sharp_aggregator.h"
#include "sc_models/topology/gpu_cluster.h"
#include "testbench/rail_allreduce.h"

namespace fabricsim::testbench {

class rail_ring : public rail_allreduce, public core::calendar_client {
 public:
  // `reduce_gbytes_per_s`: a GPU adding a landed slice into its shard (nvlink.reduce_gbytes_per_s).
  rail_ring(topology::gpu_cluster& cl, unsigned rail, core::arrival_calendar& calendar, double reduce_gbytes_per_s);
  // Queue pairs between consecutive domains and a region over each GPU's HBM [0, hbm_bytes): at elaboration.
  void connect(uint64_t hbm_bytes);
  void start(const rail_shard& s, std::function<void(core::picoseconds)> done) override;
  // Payload bytes one NIC sends per allreduce of a `bytes` shard.
  uint64_t bytes_sent_per_gpu(uint64_t bytes) const { return m_n > 1 ? 2 * (m_n - 1) * bytes / m_n : 0; }
  void on_due(core::picoseconds t) override;
  uint32_t finished() const override { return m_finished; }
  core::picoseconds finished_at() const override { return m_finished_at; }

 private:
  struct due {
    core::picoseconds at;
    uint64_t seq;
    uint32_t rank, step, slice;
    bool operator>(const due& o) const { return at != o.at ? at > o.at : seq > o.seq; }
  };
  uint64_t elt() const { return sw::sharp_dtype_bytes(m_s.dtype); }
  uint64_t chunk_off(uint32_t c) const;
  uint64_t chunk_len(uint32_t c) const;
  uint32_t slices(uint32_t c) const { return uint32_t((chunk_len(c) + m_slice - 1) / m_slice); }
  uint64_t slice_len(uint32_t c, uint32_t j) const { return std::min(m_slice, chunk_len(c) - j * m_slice); }
  uint32_t chunk_sent(uint32_t r, uint32_t g) const;
  void send(uint32_t r, uint32_t g, uint32_t j);
  void landed(uint32_t q, const pcie::landed_message& m);
  void reduced(uint32_t q, uint32_t g, uint32_t j, core::picoseconds t);
  void account(uint32_t q, uint64_t len, core::picoseconds t);

  topology::gpu_cluster& m_cl;
  unsigned m_rail;
  core::arrival_calendar& m_calendar;
  uint32_t m_n;
  double m_ps_per_byte;
  std::vector<uint32_t> m_sq;    // by domain: its QP to domain + 1
  std::vector<uint32_t> m_rkey;  // by domain: its HBM region
  rail_shard m_s;
  uint64_t m_elements = 0, m_slice = 0, m_wr = 0;
  std::function<void(core::picoseconds)> m_done;
  std::vector<uint64_t> m_left;
  std::vector<core::picoseconds> m_reduce_free;
  std::priority_queue<due, std::vector<due>, std::greater<due>> m_due;
  uint64_t m_seq = 0;
  uint32_t m_finished = 0;
  core::picoseconds m_last{}, m_finished_at{};
};

}  // namespace fabricsim::testbench
