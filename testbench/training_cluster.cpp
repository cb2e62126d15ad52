// A training step's collectives on a cluster of NVLink domains: NVLink rings, hierarchical allreduces and
// GPUDirect RDMA sends (testbench/training_cluster.h).
#include "testbench/training_cluster.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <deque>
#include <map>
#include <unordered_map>

#include "sc_models/core/params.h"
#include "sc_models/switch/quantum/sharp_aggregator.h"
#include "sc_models/topology/gpu_cluster.h"
#include "testbench/cluster_alltoall.h"
#include "testbench/cluster_part.h"
#include "testbench/cluster_run.h"
#include "testbench/nvlink_collective.h"
#include "testbench/scenario.h"
#include "testbench/switch_factory.h"
#include "testbench/training_model.h"

namespace fabricsim::testbench {

using core::config_error;
using core::picoseconds;

// Named, not anonymous: cluster_backend's pimpl below holds these types, and in a unity build (FABRICSIM_UNITY) a
// class with linkage holding an anonymous namespace's type draws -Wsubobject-linkage.
namespace training_cluster_detail {

constexpr uint64_t k_page = 4096;
constexpr uint64_t k_elt = 4;  // fp32 elements: the data check's sums are exact (nvlink_collective.h)
constexpr uint64_t k_no_reduce = UINT64_MAX;
constexpr sw::sharp_dtype k_dtype = sw::sharp_dtype::fp32;
uint64_t round_up(uint64_t v) { return (v + k_page - 1) / k_page * k_page; }

// One transfer of a collective's phase: a slice from one GPU's HBM to another's.
struct xfer {
  uint32_t src = 0, dst = 0;  // cluster GPU indices
  uint64_t src_addr = 0, dst_addr = 0, bytes = 0;
  uint64_t reduce_addr = k_no_reduce;  // reduce-scatter: add the landed slice (at dst_addr) into this address
  uint32_t deps = 0;
  std::vector<uint32_t> next;
};

// A member of a ring: its GPU and its buffer there (the staging area follows at `stage` bytes).
struct ring_member {
  uint32_t gpu = 0;
  uint64_t base = 0;
};

// The ring's transfers over `m` on [off, off + bytes) of every member's buffer, steps g0 .. g1 of the
// 2(n-1) (reduce-scatter 0 .. n-2 into staging and added; allgather n-1 .. 2n-3 in place), each slice of a
// step depending on the same slice of the previous step having reached (and been added at) its sender.
void add_ring(std::vector<xfer>& xs, const std::vector<ring_member>& m, uint64_t stage, uint64_t off, uint64_t bytes,
              uint32_t g0, uint32_t g1, uint64_t slice) {
  const uint32_t n = uint32_t(m.size());
  if (n < 2 || g1 < g0) return;
  const uint64_t elements = bytes / k_elt;
  auto chunk_sent = [n](uint32_t r, uint32_t g) {
    return g < n - 1 ? (r + 2 * n - g) % n : (r + 1 + 2 * n - (g - (n - 1))) % n;
  };
  std::vector<std::vector<uint32_t>> first(g1 - g0 + 1, std::vector<uint32_t>(n));  // [step][member] -> index
  for (uint32_t g = g0; g <= g1; ++g)
    for (uint32_t r = 0; r < n; ++r) {
      const uint32_t c = chunk_sent(r, g), to = (r + 1) % n;
      const uint64_t c_off = off + ring_chunk_off(elements, n, c, k_elt), len = ring_chunk_len(elements, n, c, k_elt);
      first[g - g0][r] = uint32_t(xs.size());
      for (uint64_t j = 0; j * slice < len; ++j) {
        xfer x;
        x.src = m[r].gpu;
        x.dst = m[to].gpu;
        x.bytes = std::min(slice, len - j * slice);
        x.src_addr = m[r].base + c_off + j * slice;
        x.dst_addr = m[to].base + c_off + j * slice + (g < n - 1 ? stage : 0);
        if (g < n - 1) x.reduce_addr = m[to].base + c_off + j * slice;
        if (g > g0) {
          xs[first[g - g0 - 1][(r + n - 1) % n] + j].next.push_back(uint32_t(xs.size()));
          x.deps = 1;
        }
        xs.push_back(std::move(x));
      }
    }
}

}  // namespace training_cluster_detail
using namespace training_cluster_detail;

struct cluster_backend::impl {
  struct pending {
    uint64_t bytes;
    uint32_t task;
    std::function<void()> on_done;
  };
  // One communicator: its members' GPUs and buffers, how it runs, and the collective in progress.
  struct comm {
    std::string op, algo;
    std::vector<ring_member> members;                 // in rank order
    std::vector<std::vector<ring_member>> by_domain;  // hierarchical: the members of each domain
    uint64_t max_bytes = 0, stage = 0;
    std::deque<pending> queue;
    bool busy = false;
    std::vector<std::vector<xfer>> phases;
    // The running phase (or NVLS allreduce): its units (transfers; NVLS: members), those that ended on this
    // process and the latest of them; `open` until its end is known (under mpirun: at a window's end).
    size_t phase = 0, target = 0, count = 0;
    picoseconds last{};
    bool open = false;
    uint64_t bytes = 0, seq = 0;
    uint32_t nvls_group = 0, nvls_tag = 0;  // nvls: its multicast group in the domain's switch chips, its tag
  };
  struct flight {
    uint32_t comm = 0, xfer = 0;
  };

  const scenario& s;
  core::sim_context ctx;
  std::unique_ptr<cluster_part> part;  // this process's NVLink domains (all in one process) and the rails
  topology::gpu_cluster* cl = nullptr;
  scale_out* so = nullptr;  // under mpirun
  timer_service* timers = nullptr;
  picoseconds barrier;
  uint32_t G = 0;
  uint64_t slice = 0;
  double reduce_ps_per_byte = 0.0;
  bool data = false;
  std::vector<comm> comms;
  std::vector<uint64_t> hbm_used;  // by GPU
  std::vector<picoseconds> reduce_free;
  std::vector<flight> flights;
  std::vector<uint32_t> free_flights;
  std::vector<std::unordered_map<uint64_t, flight>> landing;  // by GPU: RDMA destination address -> transfer
  std::map<std::pair<uint32_t, uint32_t>, uint32_t> qp;       // (source GPU, destination GPU) -> its send QP
  std::vector<uint32_t> rkey;                                 // by GPU
  std::unordered_map<uint32_t, uint32_t> nvls_comm;           // NVLS tag -> communicator
  std::map<uint32_t, uint32_t> nvls_groups;                   // domain -> NVLS communicators planned in it
  uint32_t nvls_tags = 0;
  uint64_t wr = 0, nvlink = 0;
  check_result check;

  explicit impl(const scenario& sc)
      : s(sc),
        barrier(picoseconds::from_ns(sc.collective.barrier_ns)),
        G(uint32_t(sc.nvlink.gpus_per_domain)),
        slice(std::max<uint64_t>(sc.collective.chunk_bytes / k_elt, 1) * k_elt),
        reduce_ps_per_byte(sc.nvlink.reduce_gbytes_per_s > 0 ? 1000.0 / sc.nvlink.reduce_gbytes_per_s : 0.0),
        data(sc.nic.place_data) {
    ctx.seed = sc.seed;
  }

  uint32_t domain(uint32_t gpu) const { return gpu / G; }
  // Whether this process simulates the GPU (its NVLink domain; one process: all).
  bool here(uint32_t gpu) const { return cl->domains().gpus()[gpu] != nullptr; }

  void plan_comm(const comm_group& g) {
    comm c;
    c.op = g.op;
    c.max_bytes = std::max<uint64_t>(g.max_bytes, k_elt) / k_elt * k_elt;
    c.stage = round_up(c.max_bytes);
    const uint64_t spans = g.op == "alltoall" ? 3 : 2;  // buffer and staging; alltoall: send, receive, PXN staging
    for (uint32_t r : g.ranks) {
      if (r >= hbm_used.size()) hbm_used.resize(r + 1, 0);
      c.members.push_back({r, hbm_used[r]});
      hbm_used[r] += spans * c.stage;
    }
    std::map<uint32_t, std::vector<ring_member>> dom;
    for (const ring_member& m : c.members) dom[domain(m.gpu)].push_back(m);
    const bool nvls = g.kind == group_kind::tp && s.training.tp_algo == "nvls" && dom.size() == 1 &&
                      g.op == "allreduce" && c.members.size() > 1;
    if (nvls) {  // the switch chips place every member's result at one address: align the members' buffers
      uint64_t base = 0;
      for (const ring_member& m : c.members) base = std::max(base, m.base);
      for (ring_member& m : c.members) {
        hbm_used[m.gpu] += base - m.base;
        m.base = base;
      }
      c.nvls_group = nvls_groups[dom.begin()->first]++;
    }
    bool equal = true;
    for (const auto& [d, v] : dom) equal = equal && v.size() == dom.begin()->second.size();
    if (g.op == "send")
      c.algo = "send";
    else if (g.op == "alltoall")
      c.algo = alltoall_algo(g, dom, equal);
    else if (g.op != "allreduce")
      throw config_error(
          fmt::format("{}: training: a {} on a system preset is not modelled yet (cluster backend: "
                      "allreduce, alltoall and pipeline sends)",
                      s.source, g.op));
    else if (nvls)
      c.algo = "nvls";
    else if (dom.size() == 1)
      c.algo = "nvlink_ring";
    else if (equal)
      c.algo = "hierarchical";
    else
      c.algo = "ring";
    if (c.algo == "hierarchical" || c.algo == "hierarchical_alltoall") {
      for (auto& [d, v] : dom) c.by_domain.push_back(std::move(v));
      if (c.algo == "hierarchical_alltoall") {  // members domain-major, as pxn_route_of numbers them
        c.members.clear();
        for (const auto& v : c.by_domain) c.members.insert(c.members.end(), v.begin(), v.end());
      }
    }
    comms.push_back(std::move(c));
  }

  // An expert-parallel alltoall: NVLink copies inside one domain; across domains the hierarchical alltoall
  // with PXN (testbench/cluster_alltoall.h), which needs the same number of members in every domain.
  std::string alltoall_algo(const comm_group& g, const std::map<uint32_t, std::vector<ring_member>>& dom,
                            bool equal) const {
    if (dom.size() == 1) return "nvlink_alltoall";
    if (equal) return "hierarchical_alltoall";
    std::string spread;
    for (const auto& [d, v] : dom) spread += fmt::format("{}{} in domain {}", spread.empty() ? "" : ", ", v.size(), d);
    throw config_error(fmt::format(
        "{}: training.expert {}: an expert-parallel group of {} GPUs spreads unevenly over the NVLink domains of "
        "nvlink.gpus_per_domain {} ({}); the hierarchical alltoall needs the same number of members in every "
        "domain (choose training.expert and training.tensor so that a group fills whole domains or sits in one)",
        s.source, s.training.expert, g.ranks.size(), G, spread));
  }

  // The GPU pairs in different domains that exchange RDMA WRITEs.
  void rdma_pairs(const comm& c, std::vector<std::pair<uint32_t, uint32_t>>& out) const {
    auto ring = [&](const std::vector<ring_member>& m) {
      if (m.size() < 2) return;
      for (size_t r = 0; r < m.size(); ++r) {
        const uint32_t a = m[r].gpu, b = m[(r + 1) % m.size()].gpu;
        if (domain(a) != domain(b)) out.push_back({a, b});
      }
    };
    if (c.algo == "send") {
      if (domain(c.members[0].gpu) != domain(c.members[1].gpu)) out.push_back({c.members[0].gpu, c.members[1].gpu});
    } else if (c.algo == "hierarchical_alltoall") {
      const uint32_t n = uint32_t(c.members.size()), L = uint32_t(c.by_domain[0].size());
      for (uint32_t me = 0; me < n; ++me)
        for (uint32_t to = 0; to < n; ++to) {
          const pxn_route x = pxn_route_of(L, me, to);
          if (x.kind != pxn_route::nvlink)
            out.push_back({c.members[x.kind == pxn_route::pxn ? x.proxy : me].gpu, c.members[to].gpu});
        }
    } else if (c.algo == "hierarchical") {
      for (size_t i = 0; i < c.by_domain[0].size(); ++i) {
        std::vector<ring_member> rail;
        for (const auto& v : c.by_domain) rail.push_back(v[i]);
        ring(rail);
      }
    } else {
      ring(c.members);
    }
  }

  void build(timer_service& t) {
    timers = &t;
    uint64_t hbm = k_page;
    for (uint64_t u : hbm_used) hbm = std::max(hbm, u + k_page);
    part = std::make_unique<cluster_part>(s, ctx, hbm, cluster_nic_params(s), data);
    cl = &part->cl;
    if (part->so.distributed()) so = &part->so;
    const uint32_t gpus = uint32_t(cl->domains().gpus().size());
    reduce_free.assign(gpus, picoseconds{});
    landing.resize(gpus);
    rkey.resize(gpus);
    for (uint32_t g = 0; g < gpus; ++g) {
      rkey[g] = cl->register_region(g, 0, hbm);  // a NIC built elsewhere: numbered by the NIC's rules
      if (!here(g)) continue;                    // another process simulates its domain
      nvlink::gpu_endpoint& e = *cl->domains().gpus()[g];
      e.set_data(data);
      e.on_arrival([this, g](const nvlink::gpu_arrival& a) {
        if (a.src == nvlink::gpu_endpoint::nvls_source)
          nvls_landed(a.tag);
        else
          nvlink_landed(g, a.tag, a.at);
      });
      topology::host& h = cl->scale_out().hosts()[g];
      // Data: a WRITE is done when the tray has put its last byte into HBM. Timing only: the NIC places no
      // bytes, so the tray sees none; it is done when the NIC has received it (the PCIe hop is not timed).
      if (data)
        h.tray->set_on_message_landed([this, g](const pcie::landed_message& m) { rdma_landed(g, m.va, m.landed_at); });
      else
        h.nic->set_placed_callback([this, g](const nic::placed_message& m) { rdma_landed(g, m.va, m.placed_at); });
    }
    std::vector<std::pair<uint32_t, uint32_t>> pairs;
    for (const comm& c : comms) rdma_pairs(c, pairs);
    for (const auto& [a, b] : pairs) {
      if (qp.count({a, b})) continue;
      topology::host& ha = cl->scale_out().hosts()[a];
      topology::host& hb = cl->scale_out().hosts()[b];
      const uint32_t sq = cl->create_qp(a), rq = cl->create_qp(b);
      if (ha.built()) ha.nic->connect_qp(sq, hb.ip, rq, 0, 0);
      if (hb.built()) hb.nic->connect_qp(rq, ha.ip, sq, 0, 0);
      qp[{a, b}] = sq;
    }
    if (!so) return;
    check_collective_lookahead(s, *so, {},
                               "a training step's collective phase ends when its last transfer lands on any "
                               "process");
    if (!so->windowed())
      throw config_error(s.source + ": training: no link crosses between the " + std::to_string(so->ranks()) +
                         " MPI ranks of this partition, so they cannot keep in step: run it in one process");
    so->on_window_end([this] { window_end(); });
  }

  // The phases of one collective of `bytes` on `c`.
  void build_phases(comm& c, uint64_t bytes) {
    c.phases.clear();
    const uint32_t n = uint32_t(c.members.size());
    if (c.algo == "send") {
      xfer x;
      x.src = c.members[0].gpu;
      x.dst = c.members[1].gpu;
      x.src_addr = c.members[0].base;
      x.dst_addr = c.members[1].base;
      x.bytes = bytes;
      c.phases.push_back({std::move(x)});
      return;
    }
    if (c.algo == "nvlink_alltoall" || c.algo == "hierarchical_alltoall") {
      c.phases.emplace_back();
      add_alltoall(c, bytes, c.phases.back());
      return;
    }
    if (c.algo != "hierarchical") {
      c.phases.emplace_back();
      add_ring(c.phases.back(), c.members, c.stage, 0, bytes, 0, 2 * n - 3, slice);
      return;
    }
    const uint32_t L = uint32_t(c.by_domain[0].size()), D = uint32_t(c.by_domain.size());
    c.phases.resize(3);
    for (const auto& v : c.by_domain) add_ring(c.phases[0], v, c.stage, 0, bytes, 0, L - 2, slice);
    const uint64_t elements = bytes / k_elt;
    for (uint32_t i = 0; i < L; ++i) {
      std::vector<ring_member> rail;
      for (const auto& v : c.by_domain) rail.push_back(v[i]);
      const uint32_t chunk = (i + 1) % L;  // what member i holds after the reduce-scatter
      add_ring(c.phases[1], rail, c.stage, ring_chunk_off(elements, L, chunk, k_elt),
               ring_chunk_len(elements, L, chunk, k_elt), 0, 2 * D - 3, slice);
    }
    for (const auto& v : c.by_domain) add_ring(c.phases[2], v, c.stage, 0, bytes, L - 1, 2 * L - 3, slice);
  }

  // The alltoall's transfers: member i's block j (bytes / n, whole elements) from its send buffer (at base) to
  // block i of member j's receive buffer (at base + stage), each moved as pxn_route_of says: NVLink copies
  // inside a domain, an RDMA WRITE on the sender's own rail, or an NVLink copy into the proxy's staging area
  // (at base + 2 stage) followed, once it has landed, by the proxy's RDMA WRITE. Its own block is copied at
  // the start (data-checked mode), not timed. NCCL's order: member i sends to i + 1, i + 2, ...
  void add_alltoall(const comm& c, uint64_t bytes, std::vector<xfer>& xs) const {
    const uint32_t n = uint32_t(c.members.size());
    const uint32_t L = c.by_domain.empty() ? n : uint32_t(c.by_domain[0].size());
    const uint64_t blk = bytes / n / k_elt * k_elt;
    if (blk == 0) return;
    const auto& m = c.members;
    for (uint32_t me = 0; me < n; ++me)
      for (uint32_t i = 1; i < n; ++i) {
        const uint32_t to = (me + i) % n;
        const pxn_route route = pxn_route_of(L, me, to);
        xfer x;
        x.src = m[me].gpu;
        x.src_addr = m[me].base + to * blk;
        x.bytes = blk;
        if (route.kind == pxn_route::pxn) {
          const ring_member& p = m[route.proxy];
          x.dst = p.gpu;
          x.dst_addr = p.base + 2 * c.stage + route.slot * blk;
          x.next.push_back(uint32_t(xs.size() + 1));
          xfer y;
          y.src = p.gpu;
          y.src_addr = x.dst_addr;
          y.bytes = blk;
          y.deps = 1;
          y.dst = m[to].gpu;
          y.dst_addr = m[to].base + c.stage + me * blk;
          xs.push_back(std::move(x));
          xs.push_back(std::move(y));
          continue;
        }
        x.dst = m[to].gpu;
        x.dst_addr = m[to].base + c.stage + me * blk;
        xs.push_back(std::move(x));
      }
  }

  uint64_t op_seed(const comm& c, uint32_t ci) const { return s.seed * 1000003ull + ci * 7919ull + c.seq; }

  void start(uint32_t ci) {
    comm& c = comms[ci];
    c.busy = true;
    c.bytes = c.queue.front().bytes;
    build_phases(c, c.bytes);
    if (data) {
      const size_t fill = c.algo == "send" ? 1 : c.members.size();
      for (size_t r = 0; r < fill; ++r) {
        const ring_member& m = c.members[r];
        if (!here(m.gpu)) continue;  // filled by the process that simulates it
        uint8_t* hbm = cl->domains().gpus()[m.gpu]->hbm.data();
        fill_allreduce_source(hbm + m.base, c.bytes, k_dtype, op_seed(c, ci), m.gpu);
        if (alltoall(c)) {  // its own block, from its send buffer to its receive buffer
          const uint64_t blk = c.bytes / fill / k_elt * k_elt;
          std::memcpy(hbm + m.base + c.stage + r * blk, hbm + m.base + r * blk, blk);
        }
      }
    }
    c.phase = 0;
    if (c.algo == "nvls")
      start_nvls(ci);
    else
      start_phase(ci);
  }

  // NVLink SHARP: every member sends its whole buffer as contributions, packet k on link k mod links (so that
  // chip k mod chips gets every member's packet k); the chips reduce and multicast each packet's result into
  // every member's buffer (in place); the allreduce ends when the last member has its whole result.
  void start_nvls(uint32_t ci) {
    comm& c = comms[ci];
    nvls_comm.erase(c.nvls_tag);
    c.nvls_tag = ++nvls_tags;
    nvls_comm[c.nvls_tag] = ci;
    open_phase(c, c.members.size());
    if (!here(c.members[0].gpu)) return;  // its domain is simulated by another process
    const nvlink::nvlink_params& np = cl->domains().params();
    nvlink::nvls_op op;
    op.tag = c.nvls_tag;
    op.bytes = c.bytes;
    op.packet_bytes = np.max_payload_bytes;
    op.result_addr = c.members[0].base;
    op.dtype = k_dtype;
    op.data = data;
    op.group = c.nvls_group;
    std::vector<uint32_t> local;
    for (const ring_member& m : c.members) local.push_back(m.gpu % G);
    cl->domains().start_nvls(domain(c.members[0].gpu), op, local);
    for (const ring_member& m : c.members) {
      nvlink::gpu_transfer t;
      t.src_addr = m.base;
      t.dst_addr = 0;  // contributions carry the offset in the buffer
      t.bytes = c.bytes;
      t.tag = c.nvls_tag;
      t.opcode = core::bth_opcode::nvls_contribution;
      t.fixed_first_link = true;
      t.first_link = 0;
      cl->domains().gpus()[m.gpu]->post(t);
      ++nvlink;
    }
  }

  // A member has its whole NVLS result.
  void nvls_landed(uint32_t tag) { unit_done(nvls_comm.at(tag)); }

  static void open_phase(comm& c, size_t units) {
    c.target = units;
    c.count = 0;
    c.last = core::now();
    c.open = true;
  }

  // The next phase with transfers from c.phase on; past the last one, the collective ends now (every process
  // alike: the phases are the same everywhere).
  void start_phase(uint32_t ci) {
    comm& c = comms[ci];
    while (c.phase < c.phases.size() && c.phases[c.phase].empty()) ++c.phase;
    if (c.phase == c.phases.size()) {
      finish(ci, core::now());
      return;
    }
    std::vector<xfer>& xs = c.phases[c.phase];
    open_phase(c, xs.size());
    // A WRITE is matched where it lands by its destination address (unique in a phase: its own slice).
    for (uint32_t i = 0; i < xs.size(); ++i)
      if (domain(xs[i].src) != domain(xs[i].dst) && here(xs[i].dst)) landing[xs[i].dst][xs[i].dst_addr] = {ci, i};
    for (uint32_t i = 0; i < xs.size(); ++i)
      if (xs[i].deps == 0 && here(xs[i].src)) post(ci, i);
  }

  void post(uint32_t ci, uint32_t i) {
    const xfer& x = comms[ci].phases[comms[ci].phase][i];
    if (!here(x.src)) throw std::logic_error("training: a transfer posted on a process without its source GPU");
    if (domain(x.src) != domain(x.dst)) {
      cl->scale_out().hosts()[x.src].nic->post_write(qp.at({x.src, x.dst}), ++wr, x.src_addr, x.dst_addr, rkey[x.dst],
                                                     x.bytes, core::now());
      return;
    }
    uint32_t id = uint32_t(flights.size());
    if (free_flights.empty()) {
      flights.push_back({ci, i});
    } else {
      id = free_flights.back();
      free_flights.pop_back();
      flights[id] = {ci, i};
    }
    nvlink::gpu_transfer t;
    t.dst_gpu = x.dst % G;
    t.src_addr = x.src_addr;
    t.dst_addr = x.dst_addr;
    t.bytes = x.bytes;
    t.tag = id;
    cl->domains().gpus()[x.src]->post(t);
    ++nvlink;
  }

  void nvlink_landed(uint32_t q, uint32_t id, picoseconds at) {
    const flight f = flights.at(id);
    free_flights.push_back(id);
    landed(q, f, at);
  }

  void rdma_landed(uint32_t q, uint64_t va, picoseconds at) {
    auto it = landing[q].find(va);
    if (it == landing[q].end()) return;
    const flight f = it->second;
    landing[q].erase(it);
    landed(q, f, at);
  }

  // A transfer has landed in GPU q's HBM at `at`: reduce it (one slice at a time per GPU), then it is done.
  void landed(uint32_t q, flight f, picoseconds at) {
    const xfer& x = comms[f.comm].phases[comms[f.comm].phase][f.xfer];
    if (x.reduce_addr == k_no_reduce) {
      done(f.comm, f.xfer);
      return;
    }
    if (data) {
      uint8_t* hbm = cl->domains().gpus()[q]->hbm.data();
      sw::sharp_reduce(k_dtype, hbm + x.reduce_addr, hbm + x.dst_addr, x.bytes);
    }
    const picoseconds begin = core::max(at, reduce_free[q]);
    reduce_free[q] = begin + picoseconds(uint64_t(std::llround(double(x.bytes) * reduce_ps_per_byte)));
    if (reduce_free[q] <= core::now()) {
      done(f.comm, f.xfer);
      return;
    }
    timers->at(reduce_free[q], [this, f] { done(f.comm, f.xfer); });
  }

  // Transfer i has landed (and been added) at its destination, on the process that simulates it: what waited
  // for it there goes on (a slice moves on from where it landed), and the phase counts it.
  void done(uint32_t ci, uint32_t i) {
    std::vector<xfer>& xs = comms[ci].phases[comms[ci].phase];
    for (uint32_t nx : xs[i].next)
      if (--xs[nx].deps == 0) post(ci, nx);
    unit_done(ci);
  }

  // One process: the phase ends with its last unit. Under mpirun the units are counted (window_end).
  void unit_done(uint32_t ci) {
    comm& c = comms[ci];
    ++c.count;
    c.last = core::now();
    if (!so && c.count == c.target) end_phase(ci, core::now());
  }

  // The running phase's last unit ended at `at` (on some process): the next phase, or the end of the
  // collective, collective.barrier_ns later (the time its GPUs learn it) on every process alike; with no barrier
  // (one process only) at once, as the units' callbacks end it.
  void end_phase(uint32_t ci, picoseconds at) {
    comm& c = comms[ci];
    c.open = false;
    ++c.phase;
    size_t next = c.phase;
    while (next < c.phases.size() && c.phases[next].empty()) ++next;
    if (c.algo == "nvls" || next == c.phases.size()) {
      finish(ci, at + barrier);
      return;
    }
    if (barrier.value == 0) {
      start_phase(ci);
      return;
    }
    timers->at(
        at + barrier, [this, ci] { start_phase(ci); }, c.queue.front().task);
  }

  // Under mpirun, on every process after each window: each open phase's units summed over the processes and
  // its latest end maximized; a phase whose units have all ended ends at that time (barrier_ns later, past this
  // window, the next phase or the collective's end: collective.barrier_ns is at least the lookahead).
  void window_end() {
    std::vector<uint32_t> open;  // the same on every process: the phases start and end alike everywhere
    for (uint32_t ci = 0; ci < comms.size(); ++ci)
      if (comms[ci].open) open.push_back(ci);
    if (open.empty()) return;
    std::vector<uint64_t> count(open.size()), last(open.size());
    for (size_t k = 0; k < open.size(); ++k) {
      count[k] = comms[open[k]].count;
      last[k] = comms[open[k]].last.value;
    }
    so->sum(count);
    so->max(last);
    for (size_t k = 0; k < open.size(); ++k)
      if (count[k] == comms[open[k]].target) end_phase(open[k], picoseconds{last[k]});
  }

  static bool alltoall(const comm& c) { return c.algo == "nvlink_alltoall" || c.algo == "hierarchical_alltoall"; }

  // The results of the members this process simulates (under mpirun the processes' counts are summed).
  void verify(uint32_t ci) {
    comm& c = comms[ci];
    ++check.collectives;
    if (alltoall(c)) {
      std::vector<const uint8_t*> recv;
      std::vector<uint32_t> ids, which;
      for (uint32_t j = 0; j < c.members.size(); ++j) {
        const ring_member& m = c.members[j];
        ids.push_back(m.gpu);
        if (!here(m.gpu)) continue;
        recv.push_back(cl->domains().gpus()[m.gpu]->hbm.data() + m.base + c.stage);
        which.push_back(j);
      }
      const uint64_t blk = c.bytes / c.members.size() / k_elt * k_elt;
      if (!recv.empty())
        check.wrong += alltoall_wrong_elements(recv, ids, c.bytes, blk, k_dtype, op_seed(c, ci), check.bytes, which);
      return;
    }
    std::vector<uint32_t> contributors;
    for (size_t r = 0; r < (c.algo == "send" ? 1 : c.members.size()); ++r) contributors.push_back(c.members[r].gpu);
    std::vector<uint8_t> ref;
    for (size_t r = c.algo == "send" ? 1 : 0; r < c.members.size(); ++r) {
      const ring_member& m = c.members[r];
      if (!here(m.gpu)) continue;
      if (ref.empty()) ref = allreduce_reference(c.bytes, k_dtype, op_seed(c, ci), contributors);
      check.wrong +=
          count_wrong_elements(cl->domains().gpus()[m.gpu]->hbm.data() + m.base, ref.data(), c.bytes, k_dtype);
      check.bytes += c.bytes;
    }
  }

  // The collective has ended (its results are in place): the tasks that waited for it go on at `at`.
  void finish(uint32_t ci, picoseconds at) {
    comm& c = comms[ci];
    c.open = false;
    if (data) verify(ci);
    ++c.seq;
    std::function<void()> cb = std::move(c.queue.front().on_done);
    const uint32_t task = c.queue.front().task;
    c.queue.pop_front();
    timers->at(
        at,
        [this, ci, cb = std::move(cb)] {
          cb();
          comms[ci].busy = false;
          if (!comms[ci].queue.empty()) start(ci);
        },
        task);
  }
};

cluster_backend::cluster_backend(const scenario& s) : m(std::make_unique<impl>(s)) {}
cluster_backend::~cluster_backend() = default;

void cluster_backend::plan(const std::vector<comm_group>& groups, const std::vector<size_t>& rank_host,
                           std::vector<uint64_t>&) {
  for (size_t r = 0; r < rank_host.size(); ++r)
    if (rank_host[r] != r) throw std::logic_error("cluster_backend: GPU rank r must be GPU r of the cluster");
  for (const comm_group& g : groups) m->plan_comm(g);
}

void cluster_backend::elaborate(fabric_setup&, timer_service&) {
  throw std::logic_error("cluster_backend: the cluster is built by build(), not on a fabric_setup");
}

void cluster_backend::build(timer_service& timers) { m->build(timers); }

void cluster_backend::run(const std::string& op, uint32_t group, uint64_t bytes, uint32_t task,
                          std::function<void()> on_done) {
  impl::comm& c = m->comms.at(group);
  if (op != c.op)
    throw std::logic_error("training: communicator " + std::to_string(group) + " runs " + c.op + ", not " + op);
  const uint64_t b = std::max<uint64_t>(bytes, k_elt) / k_elt * k_elt;
  c.queue.push_back({std::min(b, c.max_bytes), task, std::move(on_done)});
  if (!c.busy) m->start(group);
}

uint64_t cluster_backend::writes_posted() const { return m->wr; }
topology::gpu_cluster& cluster_backend::cluster() { return *m->cl; }
core::sim_context& cluster_backend::ctx() { return m->ctx; }
scale_out& cluster_backend::so() { return m->part->so; }
uint64_t cluster_backend::nvlink_transfers() const { return m->nvlink; }
cluster_backend::check_result cluster_backend::checked() const { return m->check; }

std::vector<std::string> cluster_backend::algorithms() const {
  std::vector<std::string> out;
  for (const impl::comm& c : m->comms) out.push_back(c.algo);
  return out;
}

training_params cluster_training_params(const scenario& s) {
  if (s.system.preset == "none")
    throw config_error(s.source +
                       ": training.comm_backend cluster runs on a cluster of NVLink domains: set system.preset "
                       "(gb200_nvl72, gb300_nvl72, hgx_b200 or hgx_b300)");
  training_params p = s.training;
  if (!s.key_sources.count("training.comm_backend")) p.comm_backend = "cluster";
  if (p.comm_backend != "cluster")
    throw config_error(fmt::format(
        "{}: training.comm_backend {} with system.preset {}: a system's GPUs exchange over NVLink and their "
        "trays' SuperNICs (comm_backend cluster, the default with a preset)",
        s.source, p.comm_backend, s.system.preset));
  const uint64_t G = s.nvlink.gpus_per_domain;
  if (s.key_sources.count("training.domain_size") && p.domain_size != G)
    throw config_error(
        fmt::format("{}: training.domain_size {} but system.preset {} has NVLink domains of "
                    "nvlink.gpus_per_domain {} GPUs (leave training.domain_size out)",
                    s.source, p.domain_size, s.system.preset, G));
  p.domain_size = G;
  return p;
}

}  // namespace fabricsim::testbench
