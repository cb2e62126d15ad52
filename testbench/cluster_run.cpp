// The hierarchical allreduce on a cluster of NVLink domains with their scale-out NICs.
#include "testbench/cluster_run.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "sc_models/topology/gpu_cluster.h"
#include "testbench/cluster_alltoall.h"
#include "testbench/cluster_part.h"
#include "testbench/collective_ops.h"
#include "testbench/nvlink_collective.h"
#include "testbench/nvlink_run.h"
#include "testbench/rail_ring.h"
#include "testbench/rail_sharp.h"
#include "testbench/scale_out.h"
#include "testbench/scenario.h"
#include "testbench/simulation.h"
#include "testbench/switch_factory.h"

namespace fabricsim::testbench {

using core::config_error;
using core::picoseconds;

void check_hierarchical(const scenario& s) {
  const std::string& src = s.source;
  if (s.system.preset == "none")
    throw config_error(src +
                       ": collective.algo hierarchical runs on a cluster of NVLink domains: set "
                       "system.preset (gb200_nvl72, gb300_nvl72, hgx_b200 or hgx_b300)");
  const std::string& op = s.collective.op;
  if (op != "allreduce" && op != "alltoall")
    throw config_error(src + ": collective.op " + op + ": collective.algo hierarchical runs allreduce or alltoall");
  if (s.collective.ranks != 0)
    throw config_error(src + ": collective.ranks " + std::to_string(s.collective.ranks) + ": the hierarchical " + op +
                       " runs on every GPU (leave it 0)");
  if (op == "alltoall" && (s.collective.intra != "nvlink_ring" || s.collective.inter != "ring"))
    throw config_error(src + ": collective.intra " + s.collective.intra + ", collective.inter " + s.collective.inter +
                       ": an alltoall reduces nothing; its blocks move by NVLink copies and RDMA WRITEs (leave "
                       "collective.intra nvlink_ring and collective.inter ring)");
  if (!s.faults.empty()) throw config_error(src + ": faults: not supported with collective.algo hierarchical");
  if (s.collective.inter == "sharp" && !s.switch_model.infiniband())
    throw config_error(src +
                       ": collective.inter sharp: SHARP aggregation needs Quantum-X800 switches; system.scale_out "
                       "is " +
                       s.system.scale_out + " (use collective.inter ring, or system.scale_out quantum_x800)");
}

namespace {

// Ethernet RoCEv2 per packet: Ethernet 14, IPv4 20, UDP 8, BTH 12, ICRC 4, FCS 4, preamble 8, gap 12;
// InfiniBand: LRH 8, BTH 12, ICRC 4, VCRC 2 (sc_models/core/packet.cpp). SHARP (collective.inter sharp): one
// chunk of nic.mtu_bytes per packet with its 16-byte aggregation header (sc_models/ib/sharp_header.h).
double rail_payload_gbytes(const scenario& s) {
  const bool sharp = s.collective.inter == "sharp";
  const double mtu = double(s.nic.path_mtu_bytes && !sharp ? s.nic.path_mtu_bytes : s.nic.mtu_bytes);
  const double overhead = s.switch_model.infiniband() ? (sharp ? 42.0 : 26.0) : 82.0;
  return s.topology.link_gbps / 8.0 * mtu / (mtu + overhead);
}

}  // namespace

hierarchical_bounds hierarchical_allreduce_bounds(const scenario& s) {
  const double g = double(s.nvlink.gpus_per_domain), d = double(s.nvlink.domains), n = g * d;
  const double bf = 2.0 * (n - 1.0) / n;
  hierarchical_bounds b;
  b.rail_gbytes_per_s = rail_payload_gbytes(s);
  // Per GPU and direction: the ring sends 2(G-1)/G of the buffer; NVLS sends the buffer once (reduce-scatter:
  // every packet as a contribution) and receives (G-1)/G of it (allgather: the other GPUs' shares).
  const double nv_share = s.collective.intra == "nvls" ? (2.0 * g - 1.0) / g : 2.0 * (g - 1.0) / g;
  const double nv_s_per_byte = nv_share / nvlink_ring_busbw_bound(s.nvlink);
  // Per NIC and direction: the ring sends 2(D-1)/D of its 1/G shard; SHARP sends the shard once up the tree and
  // receives the result once.
  const double rail_share = s.collective.inter == "sharp" ? 1.0 / g : 2.0 * (d - 1.0) / (d * g);
  const double rail_s_per_byte = d > 1 ? rail_share / b.rail_gbytes_per_s : 0.0;
  b.nvlink_busbw = bf / nv_s_per_byte;
  b.rail_busbw = rail_s_per_byte > 0 ? bf / rail_s_per_byte : std::numeric_limits<double>::infinity();
  b.serial_busbw = bf / (nv_s_per_byte + rail_s_per_byte);
  return b;
}

std::pair<uint64_t, uint64_t> cluster_writes(topology::gpu_cluster& cl) {
  static const std::vector<nic::completion> k_none;  // a host another process simulates (its own count there)
  uint64_t n = 0, failed = 0;
  for (const topology::host& h : cl.scale_out().hosts())
    for (const auto& comp : h.built() ? h.nic->completions() : k_none) {
      ++n;
      failed += comp.status != nic::completion_status::success;
    }
  return {n, failed};
}

void complete_cluster_report(nlohmann::json& r, const scenario& s, std::pair<uint64_t, uint64_t> writes) {
  r["collective"]["placement"] = "hierarchical";
  r["collective"]["link_gbps"] = s.topology.link_gbps;
  r["failed"] = writes.second;
  r["verified"] = r["verified"].get<bool>() && writes.second == 0;
}

nic::supernic_params cluster_nic(const scenario& s) {
  nic::supernic_params n = s.nic;
  if (s.switch_model.infiniband()) n.link_layer = "infiniband";  // as fabric_setup does
  return n;
}

std::vector<uint64_t> cluster_sweep_sizes(const scenario& s, sw::sharp_dtype dtype, uint64_t n) {
  const collective_params& p = s.collective;
  const uint64_t elt = sw::sharp_dtype_bytes(dtype);
  std::vector<uint64_t> sizes;
  for (uint64_t b : collective_sizes(p)) sizes.push_back(effective_bytes(p, b, n));
  for (uint64_t b : sizes)
    if (b / elt < n)
      throw config_error(s.source + ": collective.min_bytes: " + std::to_string(b) + " bytes is fewer than one " +
                         p.dtype + " element per GPU (" + std::to_string(n) + " GPUs)");
  return sizes;
}

cluster_sweep::cluster_sweep(const scenario& s) {
  check_hierarchical(s);
  dtype = nvlink_dtype(s);
  gpus = s.nvlink.gpus_per_domain * s.nvlink.domains;
  sizes = cluster_sweep_sizes(s, dtype, gpus);
  data = s.nic.place_data;
  limit = picoseconds::from_ns(s.run.limit_us * 1000.0);
  wall0 = std::chrono::steady_clock::now();
}

double cluster_sweep::wall_s() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
}

namespace {

// The largest shard phase 2 reduces in a sweep up to `max_bytes`, whichever collective.intra chose it: a ring
// chunk is at most ceil(elements / G) elements, an NVLS share ceil(bytes / (G x P)) packets of P =
// nvlink.max_payload_bytes; both are at most ceil(bytes / (G U)) U with U = P x the element size. Under mpirun
// the SHARP units' buffers are sized by it before the run (they may not move while partial results point in).
uint64_t rail_shard_bound(const scenario& s, uint64_t max_bytes) {
  const uint64_t unit = s.nvlink.max_payload_bytes * sw::sharp_dtype_bytes(nvlink_dtype(s));
  const uint64_t per = s.nvlink.gpus_per_domain * unit;
  return std::min(max_bytes, (max_bytes + per - 1) / per * unit);
}

// The cluster, its per-domain rings and per-rail rings, and one iteration's three phases. Under mpirun
// (cluster_part: this rank's NVLink domains) a phase's end is a global condition: each rank counts the units
// it simulates that have finished (domains in phases 1 and 3, a rail's GPUs in phase 2), and at every window's
// end the ranks sum the counts; the phase has ended at the latest finish of any rank, and the next one starts
// collective.barrier_ns after it on every rank (at least the lookahead, so no earlier than the window's end).
// A positive barrier_ns does the same in one process (the next phase starts barrier_ns after the last unit).
class hierarchical_run : public core::calendar_client {
 public:
  hierarchical_run(const scenario& s, uint64_t max_bytes)
      : m_G(s.nvlink.gpus_per_domain),
        m_D(s.nvlink.domains),
        m_hbm(domain_allreduce_hbm_bytes(max_bytes)),
        m_barrier(picoseconds::from_ns(s.collective.barrier_ns)),
        m_part(s, ctx_init(s), m_hbm, cluster_nic(s), s.nic.place_data),
        m_cl(m_part.cl) {
    for (const auto& g : m_cl.domains().gpus())
      if (g) g->set_data(s.nic.place_data);
    for (unsigned d = 0; d < m_D; ++d)
      m_intra.push_back(m_cl.domain_built(d)
                            ? make_domain_allreduce(s.collective.intra, m_cl.domains(), d, m_ctx.calendar)
                            : nullptr);
    if (s.collective.inter == "sharp") {
      m_sharp = make_rail_sharps(m_cl, s, &so(), rail_shard_bound(s, max_bytes));
      for (auto& r : m_sharp) m_rails.push_back(r.get());
    }
    for (unsigned r = 0; r < m_G && s.collective.inter == "ring"; ++r) {
      m_rings.push_back(std::make_unique<rail_ring>(m_cl, r, m_ctx.calendar, s.nvlink.reduce_gbytes_per_s));
      m_rings.back()->connect(m_hbm);
      m_rails.push_back(m_rings.back().get());
    }
    set_calendar_key(UINT64_MAX);  // a phase starts after that picosecond's arrivals, in every partition
    if (so().distributed()) {
      check_collective_lookahead(s, so(), {},
                                 "a phase of the hierarchical allreduce ends when its last GPU "
                                 "finishes on any process");
      so().on_window_end([this] { phase_check(); });
    }
  }

  // collective.inter sharp: the rails' trees (rail_sharp_summary); null for the ring.
  nlohmann::json sharp_summary() const { return m_sharp.empty() ? nlohmann::json() : rail_sharp_summary(m_sharp); }

  topology::gpu_cluster& cluster() { return m_cl; }
  scale_out& so() { return m_part.so; }
  core::sim_context& ctx() { return m_ctx; }

  // One iteration of `c` (all phases, one after another); false when it did not end before `limit`.
  bool iterate(const domain_allreduce_config& c, picoseconds limit, std::array<picoseconds, 4>& at) {
    m_c = c;
    m_at = &at;
    at[0] = core::now();
    start_phase(1);
    if (!so().distributed()) {
      if (core::now() < limit) sc_core::sc_start(core::to_sc_time(limit - core::now()), sc_core::SC_EXIT_ON_STARVATION);
      return m_phase == 3 && m_ended;
    }
    // The windows find every phase's end; a phase that ended without any event (nothing to send) is found
    // after them, by the same global count.
    while (!(m_phase == 3 && m_ended) && core::now() < limit) {
      so().start(limit, sc_core::SC_EXIT_ON_STARVATION);
      if (!phase_check()) break;
    }
    return m_phase == 3 && m_ended;
  }

  void on_due(picoseconds) override { start_phase(m_phase + 1); }

 private:
  core::sim_context& ctx_init(const scenario& s) {
    m_ctx.seed = s.seed;
    return m_ctx;
  }

  void start_phase(unsigned ph) {
    m_phase = ph;
    m_done = 0;
    m_ended = false;
    m_done_at = core::now();
    // Under mpirun no rank sees a whole phase: its units are counted (phase_check), not the callbacks' end.
    auto done = [this](picoseconds) { unit_done(); };
    if (ph != 2) {
      domain_allreduce_config pc = m_c;
      pc.phase = ph == 1 ? domain_phase::reduce_scatter : domain_phase::allgather;
      for (auto& a : m_intra)
        if (a) a->start(pc, done);
      return;
    }
    const domain_allreduce* any = nullptr;
    for (const auto& a : m_intra) any = any ? any : a.get();
    for (unsigned r = 0; r < m_G && any; ++r) {
      const auto [off, len] = any->owned_chunk(m_c, r);  // what GPU r holds after the reduce-scatter
      rail_shard sh;
      sh.addr = m_c.buffer_addr + off;
      sh.bytes = len;
      sh.staging_addr = m_c.staging_addr + off;
      sh.slice_bytes = m_c.slice_bytes;
      sh.dtype = m_c.dtype;
      sh.data = m_c.data;
      m_rails[r]->start(sh, so().distributed() ? std::function<void(picoseconds)>() : done);
    }
  }

  // A domain (phases 1, 3) or a rail (phase 2) has finished: in one process the phase ends with the last of
  // them.
  void unit_done() {
    ++m_done;
    m_done_at = core::now();
    if (so().distributed() || m_done < (m_phase == 2 ? m_G : m_D)) return;
    end_phase(core::now());
  }

  // Under mpirun, at a window's end (and after the run's last window) on every rank: whether the running phase
  // has ended on every rank; if so, it ends at the latest finish. Returns whether a phase ended.
  bool phase_check() {
    if (m_phase == 0 || m_ended) return false;
    uint64_t finished = m_done;
    picoseconds at = m_done_at;
    if (m_phase == 2) {  // a rail's GPUs (ring or SHARP), each counted by the process that simulates it
      finished = 0;
      for (const rail_allreduce* r : m_rails) {
        finished += r->finished();
        at = std::max(at, r->finished_at());
      }
    }
    const uint64_t expected = m_phase != 2 ? m_D : m_G * m_D;
    if (so().sum(finished) < expected) return false;
    end_phase(picoseconds{so().max(at.value)});
    return true;
  }

  void end_phase(picoseconds at) {
    m_ended = true;
    (*m_at)[m_phase] = at;
    if (m_phase == 3) return;
    if (m_barrier.value == 0) {
      start_phase(m_phase + 1);
      return;
    }
    if (at + m_barrier < core::now())
      throw std::logic_error("hierarchical allreduce: phase " + std::to_string(m_phase + 1) + " would start at " +
                             std::to_string(at.value + m_barrier.value) + " ps, before now");
    m_ctx.calendar.schedule(this, at + m_barrier);
  }

  core::sim_context m_ctx;
  uint64_t m_G, m_D, m_hbm;
  picoseconds m_barrier;
  cluster_part m_part;
  topology::gpu_cluster& m_cl;
  std::vector<std::unique_ptr<domain_allreduce>> m_intra;  // by domain; null where another rank has it
  std::vector<std::unique_ptr<rail_ring>> m_rings;         // collective.inter ring
  std::vector<std::unique_ptr<rail_sharp>> m_sharp;        // collective.inter sharp
  std::vector<rail_allreduce*> m_rails;                    // phase 2, by rail
  domain_allreduce_config m_c;
  std::array<picoseconds, 4>* m_at = nullptr;
  unsigned m_phase = 0;
  uint64_t m_done = 0;
  picoseconds m_done_at{};
  bool m_ended = false;
};

nlohmann::json hierarchical_object(const scenario& s, std::pair<uint64_t, uint64_t> writes) {
  const hierarchical_bounds b = hierarchical_allreduce_bounds(s);
  return {{"domains", s.nvlink.domains},
          {"gpus_per_domain", s.nvlink.gpus_per_domain},
          {"intra", s.collective.intra},
          {"inter", s.collective.inter},
          {"nvlink_busbw_bound_gbps", b.nvlink_busbw},
          {"rail_busbw_bound_gbps", b.rail_busbw},
          {"serial_busbw_bound_gbps", b.serial_busbw},
          {"rail_payload_gbytes_per_s", b.rail_gbytes_per_s},
          {"rail_writes", writes.first},
          {"rail_writes_failed", writes.second}};
}

}  // namespace

nlohmann::json run_hierarchical_allreduce(const scenario& s, const run_options& opts) {
  if (s.collective.op == "alltoall") return run_hierarchical_alltoall(s, opts);
  const cluster_sweep cs(s);
  hierarchical_run run(s, cs.sizes.back());
  topology::nvlink_domains& dom = run.cluster().domains();
  if (opts.elaborate_only) return nlohmann::json::object();
  sc_core::sc_start(sc_core::SC_ZERO_TIME);
  uint64_t result_checked = 0;
  auto iterate = [&](uint64_t bytes, bool timed, sweep_row& row) {
    const domain_allreduce_config c = sweep_config(s, bytes);
    fill_sources(s, dom, c);
    std::array<picoseconds, 4> at{};
    if (!run.iterate(c, cs.limit, at)) return false;
    if (timed) {
      row.times.push_back(at[3] - at[0]);
      row.phases.push_back({at[1] - at[0], at[2] - at[1], at[3] - at[2]});
    }
    return true;
  };
  auto check = [&](uint64_t bytes, sweep_row& row) {
    if (!cs.data) return;
    std::vector<uint32_t> members;
    for (uint32_t g = 0; g < cs.gpus; ++g) members.push_back(g);  // GPU i of domain d is host d x G + i
    const std::vector<uint8_t> ref = allreduce_reference(bytes, cs.dtype, s.seed, members);
    for (const auto& g : dom.gpus()) {
      if (!g) continue;  // another process checks it
      row.wrong +=
          count_wrong_elements(g->hbm.data() + sweep_config(s, bytes).buffer_addr, ref.data(), bytes, cs.dtype);
      result_checked += bytes;
    }
  };
  sweep_result sw = run_sweep(s.collective, cs.sizes, iterate, check);
  scale_out& so = run.so();
  auto [r, writes] = cluster_sweep_report(s, opts, cs, so, run.ctx(), run.cluster(), sw, result_checked);
  r["hierarchical"] = hierarchical_object(s, writes);
  const nlohmann::json sharp = run.sharp_summary();
  if (!sharp.is_null()) {  // a SHARP packet lost or unexpected, or a credit broken: not verified
    r["hierarchical"]["sharp"] = sharp;
    r["verified"] = r["verified"].get<bool>() && sharp["unexpected"] == 0u && sharp["host_unexpected"] == 0u &&
                    sharp["credit_violations"] == 0u && sharp["credit_overruns"] == 0u;
  }
  if (so.distributed()) r["scale_out"] = so.report();
  return r;
}

std::pair<nlohmann::json, std::pair<uint64_t, uint64_t>> cluster_sweep_report(
    const scenario& s, const run_options& opts, const cluster_sweep& cs, scale_out& so, const core::sim_context& ctx,
    topology::gpu_cluster& cl, sweep_result& sw, uint64_t result_checked) {
  so.merge_statistics();  // under mpirun: every rank's counters, the whole fabric's on rank 0
  std::vector<uint64_t> counts{result_checked};
  for (const sweep_row& row : sw.rows) counts.push_back(row.wrong);
  if (so.distributed()) so.sum(counts);
  for (size_t i = 0; i < sw.rows.size(); ++i) sw.rows[i].wrong = counts[i + 1];
  nlohmann::json r =
      nvlink_report(s, opts, ctx, cl.domains(), sw.rows, counts[0], sw.all_done, cs.wall_s(), cs.gpus, &so);
  auto writes = cluster_writes(cl);
  if (so.distributed()) writes = {so.sum(writes.first), so.sum(writes.second)};
  complete_cluster_report(r, s, writes);
  return {std::move(r), writes};
}

nic::supernic_params cluster_nic_params(const scenario& s) {
  nic::supernic_params n = s.nic;
  if (s.switch_model.infiniband()) n.link_layer = "infiniband";  // as fabric_setup does
  return n;
}

}  // namespace fabricsim::testbench
