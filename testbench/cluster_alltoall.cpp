// Alltoall on a cluster of NVLink domains: NVLink copies inside a domain, PXN and one rail hop across.
#include "testbench/cluster_alltoall.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cstring>
#include <limits>
#include <vector>

#include "sc_models/topology/gpu_cluster.h"
#include "testbench/cluster_part.h"
#include "testbench/cluster_run.h"
#include "testbench/collective_ops.h"
#include "testbench/nvlink_collective.h"
#include "testbench/nvlink_run.h"
#include "testbench/scale_out.h"
#include "testbench/scenario.h"
#include "testbench/simulation.h"
#include "testbench/switch_factory.h"

namespace fabricsim::testbench {

using core::picoseconds;

alltoall_bounds hierarchical_alltoall_bounds(const scenario& s) {
  const double g = double(s.nvlink.gpus_per_domain), d = double(s.nvlink.domains), n = g * d;
  alltoall_bounds b;
  const double nv_s_per_byte = (g - 1.0) / g / nvlink_ring_busbw_bound(s.nvlink);
  const double rail_s_per_byte = (n - g) / n / hierarchical_allreduce_bounds(s).rail_gbytes_per_s;
  const double inf = std::numeric_limits<double>::infinity();
  b.nvlink_algbw = nv_s_per_byte > 0 ? 1.0 / nv_s_per_byte : inf;
  b.rail_algbw = rail_s_per_byte > 0 ? 1.0 / rail_s_per_byte : inf;
  b.algbw = std::min(b.nvlink_algbw, b.rail_algbw);
  return b;
}

pxn_route pxn_route_of(uint32_t L, uint32_t from, uint32_t to) {
  const uint32_t d = from / L, r = from % L, e = to / L, q = to % L;
  pxn_route x;
  if (e == d) return x;
  if (q == r) {
    x.kind = pxn_route::rdma;
    return x;
  }
  x.kind = pxn_route::pxn;
  x.proxy = d * L + q;
  x.slot = e * L + r;
  return x;
}

uint64_t alltoall_wrong_elements(const std::vector<const uint8_t*>& recv, const std::vector<uint32_t>& ids,
                                 uint64_t bytes, uint64_t block, sw::sharp_dtype dtype, uint64_t seed,
                                 uint64_t& checked, const std::vector<uint32_t>& recv_member) {
  std::vector<uint8_t> sent(bytes);
  uint64_t wrong = 0;
  for (size_t i = 0; i < ids.size(); ++i) {
    fill_allreduce_source(sent.data(), bytes, dtype, seed, ids[i]);
    for (size_t j = 0; j < recv.size(); ++j) {
      const uint64_t m = recv_member.empty() ? j : recv_member[j];
      wrong += count_wrong_elements(recv[j] + i * block, sent.data() + m * block, block, dtype);
      checked += block;
    }
  }
  return wrong;
}

namespace {

constexpr uint32_t staged_tag = 1u << 31;  // an NVLink copy into a proxy's staging area; low bits: the domain

// The layout in every GPU's HBM: send buffer, receive buffer, PXN staging area, each S rounded up to 4 KiB.
struct alltoall_layout {
  uint64_t bytes = 0, block = 0, send = 0, recv = 0, staging = 0;
};

alltoall_layout layout_of(uint64_t bytes, uint64_t n) {
  const uint64_t span = (bytes + 4095) / 4096 * 4096;
  return {bytes, bytes / n, 0, span, 2 * span};
}

class alltoall_run {
 public:
  alltoall_run(const scenario& s, uint64_t max_bytes)
      : m_G(uint32_t(s.nvlink.gpus_per_domain)),
        m_D(uint32_t(s.nvlink.domains)),
        m_hbm(3 * layout_of(max_bytes, 1).recv + 4096),
        m_part(s, ctx_init(s), m_hbm, cluster_nic(s), s.nic.place_data),
        m_cl(m_part.cl),
        m_data(s.nic.place_data) {
    for (uint32_t d = 0; d < m_D; ++d)
      for (uint32_t r = 0; r < m_G && m_cl.domain_built(d); ++r) {
        nvlink::gpu_endpoint& g = m_cl.gpu(d, r);
        g.set_data(m_data);
        g.on_arrival([this, d, r](const nvlink::gpu_arrival& a) { nvlink_arrived(d, r, a); });
        // Timing only, the NIC places no bytes and the tray sees none: a WRITE is done when the NIC has it.
        if (m_D > 1 && m_data)
          m_cl.nic_host(d, r).tray->set_on_message_landed(
              [this, d, r](const pcie::landed_message& m) { account(d, r, m.bytes, m.landed_at, false); });
        else if (m_D > 1)
          m_cl.nic_host(d, r).nic->set_placed_callback(
              [this, d, r](const nic::placed_message& m) { account(d, r, m.bytes, m.placed_at, false); });
      }
    connect();
  }

  topology::gpu_cluster& cluster() { return m_cl; }
  scale_out& so() { return m_part.so; }
  const core::sim_context& ctx() const { return m_ctx; }
  uint32_t gpus() const { return m_G * m_D; }

  // One alltoall of `l`; false when it did not end before `limit`. at: start, last NVLink block landed in a
  // receive buffer, last rail WRITE landed.
  bool iterate(const alltoall_layout& l, picoseconds limit, std::array<picoseconds, 3>& at) {
    m_l = l;
    m_left.assign(gpus(), (gpus() - 1) * l.block);
    m_finished = 0;
    m_at = &at;
    at = {core::now(), core::now(), core::now()};
    for (uint32_t d = 0; d < m_D; ++d)
      for (uint32_t r = 0; r < m_G && m_cl.domain_built(d); ++r) post_gpu(d, r);
    if (gpus() == 1) return true;
    if (!so().distributed()) {
      if (core::now() < limit) sc_core::sc_start(core::to_sc_time(limit - core::now()), sc_core::SC_EXIT_ON_STARVATION);
      return m_finished == gpus();
    }
    // Under mpirun each rank counts its GPUs; the windows end, as one kernel does, at the last event anywhere
    // (or the limit), and the iteration's figures are the ranks' sum and latest times.
    so().start(limit, sc_core::SC_EXIT_ON_STARVATION);
    std::vector<uint64_t> last{at[1].value, at[2].value};
    so().max(last);
    at[1] = picoseconds{last[0]};
    at[2] = picoseconds{last[1]};
    return so().sum(uint64_t(m_finished)) == gpus();
  }

 private:
  core::sim_context& ctx_init(const scenario& s) {
    m_ctx.seed = s.seed;
    return m_ctx;
  }
  uint32_t rank(uint32_t d, uint32_t r) const { return d * m_G + r; }

  // Every rail: a queue pair from each domain's NIC to each other domain's, and a region over each GPU's HBM.
  void connect() {
    if (m_D < 2) return;
    const size_t n = size_t(m_G) * m_D;
    m_sq.assign(n, std::vector<uint32_t>(m_D, 0));
    m_rkey.assign(n, 0);
    // A NIC another process simulates hands out the same numbers by its own rules (gpu_cluster::create_qp).
    for (uint32_t d = 0; d < m_D; ++d)
      for (uint32_t r = 0; r < m_G; ++r) m_rkey[rank(d, r)] = m_cl.register_region(m_cl.host_of(d, r), 0, m_hbm);
    for (uint32_t r = 0; r < m_G; ++r)
      for (uint32_t d = 0; d < m_D; ++d)
        for (uint32_t e = 0; e < m_D; ++e) {
          if (e == d) continue;
          topology::host& a = m_cl.nic_host(d, r);
          topology::host& b = m_cl.nic_host(e, r);
          const uint32_t sq = m_cl.create_qp(m_cl.host_of(d, r)), rq = m_cl.create_qp(m_cl.host_of(e, r));
          if (a.built()) a.nic->connect_qp(sq, b.ip, rq, 0, 0);
          if (b.built()) b.nic->connect_qp(rq, a.ip, sq, 0, 0);
          m_sq[rank(d, r)][e] = sq;
        }
  }

  // GPU r of domain d: its own block copied, the others on their way.
  void post_gpu(uint32_t d, uint32_t r) {
    const uint64_t blk = m_l.block;
    const uint32_t me = rank(d, r);
    if (m_data) {
      uint8_t* hbm = m_cl.gpu(d, r).hbm.data();
      std::memcpy(hbm + m_l.recv + me * blk, hbm + m_l.send + me * blk, blk);
    }
    // NCCL's order: at step i to GPU me + i, so that no GPU is every sender's first destination.
    for (uint32_t i = 1; i < gpus(); ++i) {
      const uint32_t to = (me + i) % gpus(), e = to / m_G, q = to % m_G;
      const pxn_route route = pxn_route_of(m_G, me, to);
      if (route.kind == pxn_route::rdma) {  // on its own rail: its own NIC
        write(d, r, e, m_l.send + to * blk, me);
        continue;
      }
      nvlink::gpu_transfer t;
      t.dst_gpu = q;
      t.src_addr = m_l.send + to * blk;
      t.bytes = blk;
      // Inside the domain: into the receive buffer; else into proxy q's staging area, at the destination's
      // block with this GPU's rail (one slot per sender rail and destination domain).
      t.dst_addr = e == d ? m_l.recv + me * blk : m_l.staging + route.slot * blk;
      t.tag = e == d ? 0 : staged_tag | e;
      m_cl.gpu(d, r).post(t);
    }
  }

  // NIC of GPU r in domain d writes `src` (in that GPU's HBM) to block `from` of GPU r of domain e.
  void write(uint32_t d, uint32_t r, uint32_t e, uint64_t src, uint32_t from) {
    m_cl.nic_host(d, r).nic->post_write(m_sq[rank(d, r)][e], ++m_wr, src, m_l.recv + from * m_l.block,
                                        m_rkey[rank(e, r)], m_l.block, core::now());
  }

  void nvlink_arrived(uint32_t d, uint32_t q, const nvlink::gpu_arrival& a) {
    if (!(a.tag & staged_tag)) {
      account(d, q, a.bytes, a.at, true);
      return;
    }
    // A proxy copy from GPU a.src of this domain for GPU q of domain e: on over this GPU's rail.
    const uint32_t e = a.tag & ~staged_tag;
    write(d, q, e, m_l.staging + rank(e, a.src) * m_l.block, rank(d, a.src));
  }

  void account(uint32_t d, uint32_t q, uint64_t bytes, picoseconds t, bool nvlink) {
    uint64_t& left = m_left[rank(d, q)];
    left -= std::min(left, bytes);
    (*m_at)[nvlink ? 1 : 2] = std::max((*m_at)[nvlink ? 1 : 2], t);
    if (left == 0) ++m_finished;
  }

  core::sim_context m_ctx;
  uint32_t m_G, m_D;
  uint64_t m_hbm;
  cluster_part m_part;  // this rank's NVLink domains (all in one process)
  topology::gpu_cluster& m_cl;
  bool m_data;
  alltoall_layout m_l;
  std::vector<std::vector<uint32_t>> m_sq;  // by rank, then peer domain: the QP on the rank's rail
  std::vector<uint32_t> m_rkey;             // by rank: its NIC's region over its HBM
  std::vector<uint64_t> m_left;             // by rank: bytes still to land this iteration
  uint32_t m_finished = 0;
  uint64_t m_wr = 0;
  std::array<picoseconds, 3>* m_at = nullptr;
};

// Every GPU's send buffer: the allreduce's source values (distinct per GPU and element).
void fill_send(const scenario& s, alltoall_run& run, const alltoall_layout& l, sw::sharp_dtype dtype) {
  for (const auto& g : run.cluster().domains().gpus()) {
    if (!g) continue;  // another process simulates it
    fill_allreduce_source(g->hbm.data() + l.send, l.bytes, dtype, s.seed, g->host());
    std::memset(g->hbm.data() + l.recv, 0, l.bytes);
  }
}

// Block i of GPU j's receive buffer against block j of what GPU i's send buffer was filled with, regenerated.
uint64_t check_received(const scenario& s, alltoall_run& run, const alltoall_layout& l, sw::sharp_dtype dtype,
                        uint64_t& checked) {
  std::vector<const uint8_t*> recv;
  std::vector<uint32_t> ids, here;  // every GPU sends; the receivers this process simulates are checked here
  for (uint32_t g = 0; g < run.gpus(); ++g) ids.push_back(g);  // GPU i of domain d is host d x G + i
  for (const auto& g : run.cluster().domains().gpus()) {
    if (!g) continue;
    recv.push_back(g->hbm.data() + l.recv);
    here.push_back(g->host());
  }
  return alltoall_wrong_elements(recv, ids, l.bytes, l.block, dtype, s.seed, checked, here);
}

nlohmann::json alltoall_object(const scenario& s, std::pair<uint64_t, uint64_t> writes) {
  const alltoall_bounds b = hierarchical_alltoall_bounds(s);
  const double inf = std::numeric_limits<double>::infinity();
  auto finite = [&](double v) { return v == inf ? nlohmann::json(nullptr) : nlohmann::json(v); };
  return {{"domains", s.nvlink.domains},
          {"gpus_per_domain", s.nvlink.gpus_per_domain},
          {"across_domains", "pxn"},
          {"nvlink_algbw_bound_gbps", finite(b.nvlink_algbw)},
          {"rail_algbw_bound_gbps", finite(b.rail_algbw)},
          {"algbw_bound_gbps", b.algbw},
          {"rail_payload_gbytes_per_s", hierarchical_allreduce_bounds(s).rail_gbytes_per_s},
          {"rail_writes", writes.first},
          {"rail_writes_failed", writes.second}};
}

}  // namespace

nlohmann::json run_hierarchical_alltoall(const scenario& s, const run_options& opts) {
  const cluster_sweep cs(s);
  alltoall_run run(s, cs.sizes.back());
  if (opts.elaborate_only) return nlohmann::json::object();
  sc_core::sc_start(sc_core::SC_ZERO_TIME);
  uint64_t result_checked = 0;
  auto iterate = [&](uint64_t bytes, bool timed, sweep_row& row) {
    const alltoall_layout l = layout_of(bytes, cs.gpus);
    if (cs.data) fill_send(s, run, l, cs.dtype);
    std::array<picoseconds, 3> at{};
    if (!run.iterate(l, cs.limit, at)) return false;
    if (timed) {
      row.times.push_back(std::max(at[1], at[2]) - at[0]);
      row.phases.push_back({at[1] - at[0], at[2] - at[0], picoseconds{}});
    }
    return true;
  };
  auto check = [&](uint64_t bytes, sweep_row& row) {
    if (cs.data) row.wrong = check_received(s, run, layout_of(bytes, cs.gpus), cs.dtype, result_checked);
  };
  sweep_result sw = run_sweep(s.collective, cs.sizes, iterate, check);
  scale_out& so = run.so();
  auto [r, writes] = cluster_sweep_report(s, opts, cs, so, run.ctx(), run.cluster(), sw, result_checked);
  r["alltoall"] = alltoall_object(s, writes);
  if (so.distributed()) r["scale_out"] = so.report();
  return r;
}

}  // namespace fabricsim::testbench
