// The collective engine: an nccl-tests sweep run as a dependency graph of RDMA WRITEs between SuperNICs.
#include "testbench/collective.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <systemc>

#include "sc_models/core/rng.h"
#include "sc_models/core/sim_context.h"
#include "sc_models/core/transaction_log.h"
#include "sc_models/nic/block_lockstep.h"
#include "sc_models/nic/sharp_host.h"
#include "sc_models/switch/quantum/quantum_switch.h"
#include "sc_models/switch/quantum/sharp_aggregator.h"
#include "sc_models/switch/spectrum/spectrum_switch.h"
#include "sc_models/topology/fabric.h"
#include "testbench/fabric_setup.h"
#include "testbench/progress.h"
#include "testbench/scale_out.h"
#include "testbench/scenario.h"
#include "testbench/simulation.h"
#include "testbench/taps.h"
#include "testbench/verdict.h"

namespace fabricsim::testbench {

using core::config_error;
using core::picoseconds;

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

namespace {

// Ops whose buffer is cut in one equal part per rank (nccl-tests rounds their count to a multiple of n).
bool per_rank_parts(const std::string& op) { return op == "allgather" || op == "reducescatter" || op == "alltoall"; }
bool reduces(const std::string& op) { return op == "allreduce" || op == "reducescatter"; }

// The size nccl-tests runs for a requested one: whole elements, and for the per-rank ops whole elements per rank.
uint64_t effective_bytes(const collective_params& p, uint64_t requested, uint64_t ranks) {
  const uint64_t elt = dtype_bytes(p.dtype);
  const uint64_t unit = per_rank_parts(p.op) ? elt * ranks : elt;
  return requested / unit * unit;
}

}  // namespace

std::vector<size_t> place_ranks(const scenario& s) {
  const collective_params& p = s.collective;
  const std::string& src = s.source;
  const size_t hosts = s.topology.host_count();
  if (p.algo == "sharp") {
    if (s.switch_model.name != "quantum_x800")
      throw config_error(src + ": collective.algo sharp: the fabric has no SHARP-capable switch (switch.model is " +
                         s.switch_model.name +
                         "; in-network reduction needs switch.model quantum_x800); use ring or tree");
    if (p.op != "allreduce")
      throw config_error(src + ": collective.algo sharp: SHARP runs allreduce here, not " + p.op +
                         "; use ring for it");
    if (p.dtype == "half")
      throw config_error(src + ": collective.dtype half: the SHARP model reduces float, bfloat16 and int32; "
                               "use one of those or algo ring");
    for (const auto& [name, params] : s.nic_overrides)
      if (params.mtu_bytes != s.nic.mtu_bytes)
        throw config_error(src + ": nic_overrides." + name + ".mtu_bytes: collective.algo sharp cuts every rank's "
                           "buffer into chunks of one nic.mtu_bytes (" + std::to_string(s.nic.mtu_bytes) +
                           "); give every NIC the same MTU");
  }
  if ((p.algo == "tree" || p.algo == "binary_tree") && p.op != "allreduce" && p.op != "broadcast")
    throw config_error(src + ": collective.algo " + p.algo + ": NCCL runs " + p.op + " on rings only; " + p.algo +
                       " is for allreduce and broadcast");
  // The run's window and sampling follow queue pairs of a planned workload; a collective has its own timing.
  const std::pair<const char*, bool> unsupported[] = {{"run.warmup_us", s.run.warmup_us > 0},
                                                      {"run.sample_us", s.run.sample_us > 0},
                                                      {"run.timeseries_csv", !s.run.timeseries_csv.empty()}};
  for (const auto& [key, set] : unsupported)
    if (set)
      throw config_error(src + ": " + key + " is not supported with workload.kind collective (its rows time "
                         "every iteration; leave it at its default)");

  const uint64_t n = p.ranks == 0 ? hosts : p.ranks;
  if (n > hosts)
    throw config_error(src + ": collective.ranks " + std::to_string(p.ranks) + " is more than the topology's " +
                       std::to_string(hosts) + " hosts");
  if (n < 2) throw config_error(src + ": collective.ranks: a collective needs at least 2 ranks, got " + std::to_string(n));
  if (p.min_bytes > p.max_bytes)
    throw config_error(src + ": collective.min_bytes " + std::to_string(p.min_bytes) + " is above collective.max_bytes " +
                       std::to_string(p.max_bytes));
  if (p.op == "broadcast" && p.root >= n)
    throw config_error(src + ": collective.root " + std::to_string(p.root) + " is not a rank (ranks are 0 .. " +
                       std::to_string(n - 1) + ")");
  if (effective_bytes(p, p.min_bytes, n) == 0)
    throw config_error(src + ": collective.min_bytes " + std::to_string(p.min_bytes) + " holds no whole " + p.dtype +
                       (per_rank_parts(p.op) ? " element per rank" : " element") + " (" + std::to_string(n) +
                       " ranks of " + std::to_string(dtype_bytes(p.dtype)) + "-byte elements)");
  std::vector<size_t> rank_host;
  if (p.placement == "linear") {
    for (size_t i = 0; i < n; ++i) rank_host.push_back(i);
  } else {  // spread: the first host of every leaf, then the second of every leaf, ...
    std::vector<std::vector<size_t>> by_leaf;
    for (size_t h = 0; h < hosts; ++h) {
      const size_t leaf = topology::leaf_of(s.topology, h);
      if (leaf >= by_leaf.size()) by_leaf.resize(leaf + 1);
      by_leaf[leaf].push_back(h);
    }
    for (size_t k = 0; rank_host.size() < n; ++k)
      for (const auto& leaf : by_leaf)
        if (k < leaf.size() && rank_host.size() < n) rank_host.push_back(leaf[k]);
  }
  return rank_host;
}

namespace {

// One RDMA WRITE of the schedule.
struct transfer {
  uint32_t src = 0, dst = 0;  // ranks
  uint32_t conn = 0;          // index of the (src, dst) connection
  uint64_t src_addr = 0;      // in the source rank's memory
  uint64_t bytes = 0;
  uint64_t dst_addr = 0;      // direct transfers: in the destination's receive buffer
  bool staged = false;        // lands in a staging slot and is reduced into reduce_addr on arrival
  uint64_t reduce_addr = 0;   // staged: receive-buffer address of the slice at the destination
  uint64_t base_addr = 0;     // staged: send-buffer address of the slice (the first contribution's partner)
  uint32_t group = 0;         // staged: contributions to one (rank, slice) are counted together
  uint32_t deps = 0;          // transfers whose arrival it waits for
  std::vector<uint32_t> next;  // transfers waiting for it
};

// One queue pair of the schedule, requester at src, responder at dst.
struct connection {
  uint32_t src = 0, dst = 0;
  uint32_t sq = 0, rq = 0;        // QPNs at the source and destination NICs
  uint64_t staging = 0;           // staging slots' base address at dst (connections with staged transfers)
  bool has_staging = false;
  std::deque<std::pair<uint32_t, picoseconds>> free_slots;  // slot, free from
  std::deque<uint32_t> ready;     // transfers ready to post, in order
  struct in_flight {
    uint32_t xfer;
    uint64_t dst_addr;
    uint32_t slot;
  };
  std::deque<in_flight> flight;   // posted, in PSN order: placement retires them in this order
  picoseconds last_post{};
};

struct rank_memory {
  size_t host = 0;
  uint64_t send = 0, recv = 0, staging = 0;  // addresses in the host's memory
  uint32_t rkey = 0;                         // region: receive buffer and staging slots
  uint32_t staging_used = 0;                 // connections with slots here so far
  picoseconds reduce_free{};                 // the rank's reduction unit is busy until then
};

// One size's outcome.
struct size_result {
  uint64_t requested = 0, bytes = 0, count = 0;
  std::vector<picoseconds> times;  // one per timed iteration
  uint64_t wrong = 0;              // elements of the result that differ from the reference
  uint64_t writes = 0;             // WRITEs per iteration
  std::vector<uint64_t> sent_per_rank;  // payload bytes each rank sends per iteration
  bool done = false;
};

class engine {
 public:
  engine(const scenario& s, std::vector<size_t> rank_host, bool check_data)
      : m_p(s.collective), m_n(uint32_t(rank_host.size())), m_check(check_data), m_sharp(s.collective.algo == "sharp"),
        m_sharp_params(s.sharp), m_mtu(s.nic.mtu_bytes),
        m_start_latency(picoseconds::from_ns(s.nic.wqe_latency_ns)),
        m_rx_latency(picoseconds::from_ns(s.nic.rx_latency_ns)), m_barrier(picoseconds::from_ns(s.collective.barrier_ns)),
        m_credit(picoseconds::from_ns(s.collective.credit_ns)), m_scenario(&s) {
    m_elt = dtype_bytes(m_p.dtype);
    m_slice = std::max<uint64_t>(m_elt, m_p.chunk_bytes / m_elt * m_elt);
    m_reduce_ps_per_byte = m_p.reduce_gbps > 0 ? 1000.0 / m_p.reduce_gbps : 0.0;  // 1 GB/s = 1 byte/ns
    for (uint64_t req : collective_sizes(m_p)) {
      size_result r;
      r.requested = req;
      r.bytes = effective_bytes(m_p, req, m_n);
      r.count = r.bytes / m_elt;
      m_results.push_back(r);
    }
    m_max_bytes = 0;
    for (const size_result& r : m_results) m_max_bytes = std::max(m_max_bytes, r.bytes);
    m_ranks.resize(m_n);
    for (uint32_t r = 0; r < m_n; ++r) m_ranks[r].host = rank_host[r];
    m_group_count.assign(size_t(m_n) * (m_max_bytes / m_slice + m_n + 1), 0);
  }

  // Memory each host needs: send and receive buffers of the largest size, and staging slots per incoming
  // connection that is reduced on arrival.
  std::vector<uint64_t> memory_bytes(size_t hosts) {
    plan_connections();
    std::vector<uint64_t> out(hosts, 4096);
    for (uint32_t r = 0; r < m_n; ++r) out[m_ranks[r].host] = 3 * page + 2 * round_up(m_max_bytes) + staged_in(r) * slots_bytes();
    return out;
  }

  // After the fabric exists: buffers, regions, queue pairs, source data, then iteration 0 of the first size.
  // Under mpirun (setup.so) this rank sets up and drives only the ranks (hosts) it simulates; the others' queue
  // pair numbers, R_Keys and PSNs come from their NICs' rules, their buffers are laid out in the mirrors.
  void elaborate(fabric_setup& setup, uint64_t seed, bool fill) {
    scale_out& so = setup.so;
    m_fab_ptr = &setup.fab();
    m_so = so.distributed() ? &so : nullptr;
    if (m_so) m_out.assign(size_t(so.ranks()), {});
    m_seed = seed;
    for (uint32_t r = 0; r < m_n; ++r) {
      rank_memory& m = m_ranks[r];
      topology::host& h = fab().hosts()[m.host];
      m.send = h.buffer().allocate(std::max<uint64_t>(m_max_bytes, 1));
      m.recv = h.buffer().allocate(round_up(std::max<uint64_t>(m_max_bytes, 1)) + staged_in(r) * slots_bytes());
      m.staging = m.recv + round_up(m_max_bytes);
      m.rkey = setup.register_region(m.host, m.recv, round_up(m_max_bytes) + staged_in(r) * slots_bytes());
      // Only this process's hosts: the result check regenerates other ranks' bytes (send_range).
      uint8_t* p = h.built() ? h.mem->data() + m.send : nullptr;
      uint64_t state = core::stream_seed(seed, "collective", "rank" + std::to_string(r));
      for (uint64_t b = 0; p && fill && b < m_max_bytes; b += 8) {
        const uint64_t v = core::splitmix64(state++);
        std::memcpy(p + b, &v, std::min<uint64_t>(8, m_max_bytes - b));
      }
    }
    for (uint32_t c = 0; c < m_conns.size(); ++c) {
      connection& k = m_conns[c];
      const size_t ha = m_ranks[k.src].host, hb = m_ranks[k.dst].host;
      topology::host& a = fab().hosts()[ha];
      topology::host& b = fab().hosts()[hb];
      k.sq = setup.create_qp(ha);
      k.rq = setup.create_qp(hb);
      const uint32_t psn_a = setup.initial_psn(ha), psn_b = setup.initial_psn(hb);
      const uint64_t mtu = setup.path_mtu(ha, hb);
      if (a.built()) a.nic->connect_qp(k.sq, b.ip, k.rq, psn_a, psn_b, mtu);
      if (b.built()) b.nic->connect_qp(k.rq, a.ip, k.sq, psn_b, psn_a, mtu);
      if (k.has_staging) {
        rank_memory& d = m_ranks[k.dst];
        k.staging = d.staging + uint64_t(d.staging_used++) * slots_bytes();
        for (uint32_t s = 0; s < m_p.buffer_slots; ++s) k.free_slots.push_back({s, picoseconds{}});
      }
      m_conn_by_rq[{m_ranks[k.dst].host, k.rq}] = c;
    }
    for (uint32_t r = 0; r < m_n; ++r) {
      const size_t host = m_ranks[r].host;
      if (!fab().hosts()[host].built()) continue;
      fab().hosts()[host].nic->set_placed_callback([this, host](const nic::placed_message& m) { on_placed(host, m); });
    }
    if (m_sharp) elaborate_sharp(seed, fill);
    start_size(0, picoseconds{});
  }

  std::function<void(const size_result&)> on_size_done;  // called as each size's last iteration ends

  bool finished() const { return m_size >= m_results.size(); }
  uint64_t writes_posted() const { return m_wr_id; }
  uint64_t mismatched_bytes() const { return m_mismatched; }
  // Bytes compared: placed WRITEs against their source at placement; the ranks' results against the
  // reference built from the send buffers (check_result).
  uint64_t placement_checked_bytes() const { return m_placement_checked; }
  uint64_t result_checked_bytes() const { return m_result_checked; }
  uint64_t unexpected() const { return m_unexpected; }
  const std::vector<size_result>& results() const { return m_results; }
  uint32_t ranks() const { return m_n; }
  const std::vector<rank_memory>& rank_memories() const { return m_ranks; }
  size_t current_size() const { return m_size; }
  uint64_t current_iteration() const { return m_iter; }
  uint64_t placed_in_iteration() const { return m_placed; }
  size_t transfers_in_iteration() const { return m_x.size(); }

  // Under mpirun, at every window's end on every rank (scale_out::on_window_end): the records the other
  // ranks sent (their posts to our hosts, the slots our hosts freed for theirs), then the barrier: when
  // every rank's placements add up to the iteration's WRITEs, the iteration ended at the latest ready time
  // of any rank, and the next one starts barrier_ns after it. That is no earlier than this window's end when
  // barrier_ns is at least the lookahead (the last placement came after the window's start), so the posts
  // are at the times one process makes them.
  void window_end() {
    std::vector<std::vector<uint8_t>> in = m_so->all_to_all(m_out);
    for (auto& o : m_out) o.clear();
    std::vector<uint32_t> credited;
    for (const auto& buf : in)
      for (size_t at = 0; at + sizeof(record) <= buf.size(); at += sizeof(record)) {
        record rec;
        std::memcpy(&rec, buf.data() + at, sizeof(record));
        connection& k = m_conns.at(rec.conn);
        if (rec.kind == record::flight) {
          k.flight.push_back({rec.xfer, rec.value, rec.slot});
        } else {
          k.free_slots.push_back({rec.slot, picoseconds{rec.value}});
          credited.push_back(rec.conn);
        }
      }
    for (uint32_t c : credited) try_post(m_conns[c]);
    if (finished()) return;
    const uint64_t placed = m_so->sum(m_placed);
    const uint64_t end = m_so->max(m_iter_end.value);
    if (placed != m_x.size() || m_x.empty()) return;
    m_iter_end = picoseconds{end};
    end_iteration();
  }
  // (source host, destination host) of every connection whose data is reduced on arrival (slot credits).
  std::vector<std::pair<size_t, size_t>> staged_host_pairs() const {
    std::vector<std::pair<size_t, size_t>> out;
    for (const connection& k : m_conns)
      if (k.has_staging) out.push_back({m_ranks[k.src].host, m_ranks[k.dst].host});
    return out;
  }
  // Sums over the ranks of what each counted for its own hosts (after the run).
  void merge_counts(scale_out& so) {
    if (!m_so) return;
    std::vector<uint64_t> v{m_wr_id, m_mismatched, m_unexpected, m_placed, m_placement_checked, m_result_checked};
    for (const size_result& r : m_results) v.push_back(r.wrong);
    so.sum(v);
    m_wr_id = v[0];
    m_mismatched = v[1];
    m_unexpected = v[2];
    m_placed = v[3];
    m_placement_checked = v[4];
    m_result_checked = v[5];
    for (size_t i = 0; i < m_results.size(); ++i) m_results[i].wrong = v[6 + i];
  }

 private:
  static constexpr uint64_t page = 4096;
  static uint64_t round_up(uint64_t v) { return (v + page - 1) / page * page; }
  uint64_t slots_bytes() const { return m_p.buffer_slots * round_up(m_slice); }

  // ---- the schedule --------------------------------------------------------------------------------------

  uint32_t conn(uint32_t src, uint32_t dst, bool staged) {
    auto it = m_conn_index.find({src, dst});
    if (it == m_conn_index.end()) {
      connection k;
      k.src = src;
      k.dst = dst;
      it = m_conn_index.emplace(std::make_pair(src, dst), uint32_t(m_conns.size())).first;
      m_conns.push_back(std::move(k));
    }
    m_conns[it->second].has_staging = m_conns[it->second].has_staging || staged;
    return it->second;
  }
  uint32_t staged_in(uint32_t r) const {
    uint32_t n = 0;
    for (const connection& k : m_conns) n += k.dst == r && k.has_staging;
    return n;
  }
  uint32_t ring_next(uint32_t r) const { return (r + 1) % m_n; }
  uint32_t chunk_of(int64_t c) const { return uint32_t(((c % m_n) + m_n) % m_n); }
  uint32_t tree_rank(uint32_t pos) const { return (pos + m_root) % m_n; }

  // The queue pairs the algorithm uses (the same for every size).
  void plan_connections() {
    m_root = m_p.op == "broadcast" ? uint32_t(m_p.root) : 0;
    const bool red = reduces(m_p.op);
    if (m_sharp) return;  // no queue pairs: the hosts' SHARP ends use the NICs' ports directly
    if (m_p.op == "alltoall") {
      for (uint32_t r = 0; r < m_n; ++r)
        for (uint32_t k = 1; k < m_n; ++k) conn(r, (r + k) % m_n, false);
    } else if (m_p.algo != "ring") {
      for (const tree& t : trees())
        for (uint32_t r = 0; r < m_n; ++r)
          if (r != t.root) {
            if (red) conn(r, t.parent[r], true);
            conn(t.parent[r], r, false);
          }
    } else if (m_p.op == "broadcast") {
      for (uint32_t p = 0; p + 1 < m_n; ++p) conn(tree_rank(p), tree_rank(p + 1), false);
    } else {
      for (uint32_t r = 0; r < m_n; ++r) conn(r, ring_next(r), red);
    }
  }

  // Part c of n of the buffer (whole elements; the per-rank ops divide evenly).
  uint64_t part_off(uint32_t c, uint64_t bytes) const { return (bytes / m_elt) * c / m_n * m_elt; }
  uint64_t part_len(uint32_t c, uint64_t bytes) const { return part_off(c + 1, bytes) - part_off(c, bytes); }

  struct slice {
    uint64_t off, len;
    uint32_t id;  // global index, for reduction groups
  };
  std::vector<slice> slices(uint64_t off, uint64_t len) {
    std::vector<slice> out;
    for (uint64_t o = 0; o < len; o += m_slice) out.push_back({off + o, std::min(m_slice, len - o), m_slice_ids++});
    return out;
  }

  uint32_t add(transfer t) {
    t.conn = m_conn_index.at({t.src, t.dst});
    m_x.push_back(std::move(t));
    return uint32_t(m_x.size() - 1);
  }
  void depend(uint32_t before, uint32_t after) {
    m_x[before].next.push_back(after);
    ++m_x[after].deps;
  }
  transfer direct(uint32_t src, uint64_t src_addr, uint32_t dst, uint64_t dst_addr, uint64_t bytes) const {
    transfer t;
    t.src = src;
    t.dst = dst;
    t.src_addr = src_addr;
    t.dst_addr = dst_addr;
    t.bytes = bytes;
    return t;
  }
  transfer reduced(uint32_t src, uint64_t src_addr, uint32_t dst, uint64_t off, uint64_t bytes, uint32_t slice_id) const {
    transfer t = direct(src, src_addr, dst, 0, bytes);
    t.staged = true;
    t.reduce_addr = m_ranks[dst].recv + off;
    t.base_addr = m_ranks[dst].send + off;
    t.group = dst * m_slices_per_rank + slice_id;
    return t;
  }

  struct tree {
    uint32_t root = 0;
    std::vector<uint32_t> parent;                 // by rank; the root's is UINT32_MAX
    std::vector<std::vector<uint32_t>> children;  // by rank
    std::vector<uint32_t> order;                  // ranks, every parent before its children
  };
  tree make_tree(uint32_t root, const std::vector<uint32_t>& parent) const {
    tree t;
    t.root = root;
    t.parent = parent;
    t.children.resize(m_n);
    for (uint32_t r = 0; r < m_n; ++r)
      if (r != root) t.children[parent[r]].push_back(r);
    t.order.push_back(root);
    for (size_t i = 0; i < t.order.size(); ++i)
      for (uint32_t c : t.children[t.order[i]]) t.order.push_back(c);
    return t;
  }
  // NCCL's binary tree over ranks 0 .. n-1 rooted at 0, in which ranks alternate between leaves and inner
  // nodes: the parent of r is r with its lowest set bit cleared and the next bit set, or only cleared when
  // that is past the last rank (nccl src/graph/trees.cc describes it).
  std::vector<uint32_t> nccl_btree_parents(uint32_t n) const {
    std::vector<uint32_t> parent(n, UINT32_MAX);
    for (uint32_t r = 1; r < n; ++r) {
      const uint32_t low = r & (~r + 1);
      const uint32_t up = (r ^ low) | (low << 1);
      parent[r] = up < n ? up : (r ^ low);
    }
    return parent;
  }
  // The trees the algorithm runs on. tree, allreduce: NCCL's double binary tree, the second tree the first
  // mirrored (r -> n-1-r) for an even rank count or shifted by one rank for an odd one, so that a leaf of
  // one tree is an inner node of the other. Otherwise one binary heap (parent of position i at (i-1)/2)
  // rooted at the root rank.
  std::vector<tree> trees() const {
    if (m_p.algo == "tree" && m_p.op == "allreduce") {
      const std::vector<uint32_t> a = nccl_btree_parents(m_n);
      std::vector<uint32_t> b(m_n, UINT32_MAX);
      const bool mirror = m_n % 2 == 0;
      auto map = [&](uint32_t r) { return mirror ? m_n - 1 - r : (r + 1) % m_n; };
      for (uint32_t r = 0; r < m_n; ++r)
        if (a[r] != UINT32_MAX) b[map(r)] = map(a[r]);
      return {make_tree(0, a), make_tree(map(0), b)};
    }
    std::vector<uint32_t> heap(m_n, UINT32_MAX);
    for (uint32_t pos = 1; pos < m_n; ++pos) heap[tree_rank(pos)] = tree_rank((pos - 1) / 2);
    return {make_tree(m_root, heap)};
  }
  // One slice through one tree. Reduction (allreduce): a rank sends the slice up once every child's has
  // arrived and been reduced (a leaf at once); the root then sends it down, and every rank forwards it to
  // its children as soon as it has it. Broadcast: the down half, from the root's send buffer.
  void build_tree(const tree& t, const slice& sl) {
    const bool red = m_p.op == "allreduce";
    std::vector<uint32_t> up(m_n, UINT32_MAX), down(m_n, UINT32_MAX);  // by rank: the WRITE out of it / into it
    if (red)
      for (size_t i = t.order.size(); i-- > 1;) {
        const uint32_t r = t.order[i];
        const uint64_t src = (t.children[r].empty() ? m_ranks[r].send : m_ranks[r].recv) + sl.off;
        up[r] = add(reduced(r, src, t.parent[r], sl.off, sl.len, sl.id));
        for (uint32_t c : t.children[r]) depend(up[c], up[r]);
      }
    for (uint32_t r : t.order)
      for (uint32_t c : t.children[r]) {
        const uint64_t src = (r == t.root && !red ? m_ranks[r].send : m_ranks[r].recv) + sl.off;
        down[c] = add(direct(r, src, c, m_ranks[c].recv + sl.off, sl.len));
        if (r != t.root) depend(down[r], down[c]);
        else if (red)
          for (uint32_t k : t.children[r]) depend(up[k], down[c]);
      }
  }

  // The dependency graph of one iteration of `bytes`.
  void build(uint64_t bytes) {
    m_x.clear();
    m_slice_ids = 0;
    m_slices_per_rank = uint32_t(bytes / m_slice + m_n + 1);
    const std::string& op = m_p.op;
    const uint32_t n = m_n;
    if (m_sharp) return;  // no WRITEs: the switches reduce (start_iteration starts the hosts' SHARP ends)
    auto S = [&](uint32_t r) { return m_ranks[r].send; };
    auto R = [&](uint32_t r) { return m_ranks[r].recv; };
    if (op == "alltoall") {
      for (uint32_t r = 0; r < n; ++r)
        for (uint32_t k = 1; k < n; ++k) {
          const uint32_t p = (r + k) % n;
          const uint64_t base_src = part_off(p, bytes), base_dst = part_off(r, bytes);
          for (const slice& sl : slices(0, part_len(p, bytes)))
            add(direct(r, S(r) + base_src + sl.off, p, R(p) + base_dst + sl.off, sl.len));
        }
      return;
    }
    if (m_p.algo != "ring") {
      // NCCL's double binary tree carries half the buffer on each tree; one tree carries it all otherwise.
      const std::vector<tree> ts = trees();
      const uint64_t half = ts.size() == 2 ? bytes / m_elt / 2 * m_elt : bytes;
      for (size_t k = 0; k < ts.size(); ++k)
        for (const slice& sl : slices(k == 0 ? 0 : half, k == 0 ? half : bytes - half)) build_tree(ts[k], sl);
      return;
    }
    if (op == "broadcast") {  // ring: a chain from the root, pipelined per slice
      for (const slice& sl : slices(0, bytes)) {
        uint32_t prev = UINT32_MAX;
        for (uint32_t p = 0; p + 1 < n; ++p) {
          const uint32_t me = tree_rank(p), to = tree_rank(p + 1);
          const uint32_t x = add(direct(me, (p == 0 ? S(me) : R(me)) + sl.off, to, R(to) + sl.off, sl.len));
          if (prev != UINT32_MAX) depend(prev, x);
          prev = x;
        }
      }
      return;
    }
    // Rings. Reduce-scatter: at step s rank r sends part r-1-s (its own data at s = 0, else what it reduced
    // at step s-1) to r+1, which reduces it into its receive buffer; after n-1 steps rank r holds part r
    // reduced. All-gather: at step t rank r sends part r-t to r+1, straight into its receive buffer.
    std::vector<std::vector<slice>> part_slices(n);
    for (uint32_t c = 0; c < n; ++c) part_slices[c] = slices(part_off(c, bytes), part_len(c, bytes));
    // into[r][k]: the WRITE that brought slice k of its current part into rank r at the previous step.
    std::vector<std::vector<uint32_t>> into(n), next_into(n);
    if (reduces(op)) {
      for (uint32_t s = 0; s + 1 < n; ++s) {
        for (uint32_t r = 0; r < n; ++r) {
          const uint32_t c = chunk_of(int64_t(r) - 1 - s), to = ring_next(r);
          next_into[to].clear();
          for (size_t k = 0; k < part_slices[c].size(); ++k) {
            const slice& sl = part_slices[c][k];
            const uint32_t x = add(reduced(r, (s == 0 ? S(r) : R(r)) + sl.off, to, sl.off, sl.len, sl.id));
            if (s > 0) depend(into[r][k], x);
            next_into[to].push_back(x);
          }
        }
        std::swap(into, next_into);
      }
      if (op == "reducescatter") return;
    }
    for (uint32_t t = 0; t + 1 < n; ++t) {
      for (uint32_t r = 0; r < n; ++r) {
        const uint32_t c = chunk_of(int64_t(r) - t), to = ring_next(r);
        next_into[to].clear();
        for (size_t k = 0; k < part_slices[c].size(); ++k) {
          const slice& sl = part_slices[c][k];
          // allgather's own part comes from the front of its send buffer (its input is one part).
          const uint64_t src = op == "allgather" && t == 0 ? S(r) + (sl.off - part_off(c, bytes)) : R(r) + sl.off;
          const uint32_t x = add(direct(r, src, to, R(to) + sl.off, sl.len));
          if (t > 0 || op == "allreduce") depend(into[r][k], x);
          next_into[to].push_back(x);
        }
      }
      std::swap(into, next_into);
    }
  }

  // ---- running -------------------------------------------------------------------------------------------

  void start_size(size_t index, picoseconds at) {
    m_size = index;
    if (finished()) return;
    size_result& res = m_results[m_size];
    build(res.bytes);
    res.writes = m_x.size();
    res.sent_per_rank.assign(m_n, 0);
    for (const transfer& t : m_x) res.sent_per_rank[t.src] += t.bytes;
    if (m_sharp) res.sent_per_rank.assign(m_n, res.bytes);  // each rank sends its buffer once, up the tree
    m_deps.resize(m_x.size());
    m_ready_at.resize(m_x.size());
    m_iter = 0;
    start_iteration(at);
  }

  uint64_t total_iterations() const { return m_p.warmup_iterations + m_p.iterations; }

  void start_iteration(picoseconds at) {
    if (m_iter + 1 == total_iterations()) prepare_check();
    m_iter_start = at;
    m_iter_end = at;
    m_placed = 0;
    std::fill(m_group_count.begin(), m_group_count.end(), 0);
    for (size_t i = 0; i < m_x.size(); ++i) {
      m_deps[i] = m_x[i].deps;
      m_ready_at[i] = at;
    }
    for (uint32_t i = 0; i < m_x.size(); ++i)
      if (m_deps[i] == 0) m_conns[m_x[i].conn].ready.push_back(i);
    for (connection& k : m_conns)
      if (here(k.src)) try_post(k);
    if (m_sharp) start_sharp(at);
  }

  // ---- SHARP ---------------------------------------------------------------------------------------------

  sw::sharp_dtype sharp_type() const {
    return m_p.dtype == "int32" ? sw::sharp_dtype::int32 : m_p.dtype == "bfloat16" ? sw::sharp_dtype::bf16
                                                                                    : sw::sharp_dtype::fp32;
  }

  // The tree over the switches of the ranks, an aggregation unit on each of its switches, a SHARP end on each
  // rank's NIC. Float sources are refilled with finite values in [-1, 1) (the random bytes of the other
  // algorithms would be NaNs and infinities as floats).
  void elaborate_sharp(uint64_t seed, bool fill) {
    std::vector<sw::quantum_switch*> switches;
    for (auto& d : fab().switches()) {
      auto* q = dynamic_cast<sw::quantum_switch*>(d.get());
      if (q == nullptr) throw std::logic_error("collective.algo sharp on a fabric that is not all quantum_x800");
      switches.push_back(q);
    }
    std::vector<std::pair<size_t, unsigned>> members;
    for (const rank_memory& m : m_ranks) members.push_back({fab().hosts()[m.host].leaf, fab().host_port(m.host)});
    m_tree = sw::build_sharp_tree(switches, members);
    for (const sw::sharp_tree_node& node : m_tree.nodes) {
      m_aggs.push_back(std::make_unique<sw::sharp_aggregator>(*node.sw, m_sharp_params, node, node.sw->ctx()));
      node.sw->set_sharp(m_aggs.back().get());
    }
    for (uint32_t r = 0; r < m_n; ++r) {
      topology::host& h = fab().hosts()[m_ranks[r].host];
      m_sharp_hosts.push_back(std::make_unique<sw::sharp_host>(*h.nic, h.mem->data(), m_start_latency, m_rx_latency,
                                                               switches.front()->ctx()));
      if (!fill || m_p.dtype == "int32") continue;
      uint64_t state = core::stream_seed(seed, "collective", "sharp_rank" + std::to_string(r));
      uint8_t* p = h.mem->data() + m_ranks[r].send;
      for (uint64_t b = 0; b + m_elt <= m_max_bytes; b += m_elt) {
        const float v = float(double(core::splitmix64(state++) >> 40) / double(1ull << 24) * 2.0 - 1.0);
        if (m_elt == 4) {
          std::memcpy(p + b, &v, 4);
        } else {
          const uint16_t h16 = sw::bf16_from_float(v);
          std::memcpy(p + b, &h16, 2);
        }
      }
    }
  }

  void start_sharp(picoseconds at) {
    const uint64_t bytes = m_results[m_size].bytes;
    const uint32_t chunk = uint32_t(m_mtu);  // one chunk per packet: the MTU
    ++m_sharp_op;
    for (auto& a : m_aggs) a->start_op(m_sharp_op, bytes, chunk, sharp_type(), m_check);
    m_sharp_done = 0;
    for (uint32_t r = 0; r < m_n; ++r)
      m_sharp_hosts[r]->start(m_sharp_op, m_ranks[r].send, m_ranks[r].recv, bytes, chunk, m_check, at,
                              [this](picoseconds t) {
                                m_iter_end = core::max(m_iter_end, t);
                                if (++m_sharp_done == m_n) {
                                  // The iteration ends when the last rank has its result (at m_iter_end).
                                  end_iteration();
                                }
                              });
  }

  void try_post(connection& k) {
    while (!k.ready.empty()) {
      const uint32_t i = k.ready.front();
      const transfer& t = m_x[i];
      picoseconds at = core::max(core::max(m_ready_at[i], k.last_post), core::now());
      uint64_t dst = t.dst_addr;
      uint32_t slot = UINT32_MAX;
      if (t.staged) {
        if (k.free_slots.empty()) return;  // credit: wait for the receiver to consume a slot
        slot = k.free_slots.front().first;
        at = core::max(at, k.free_slots.front().second);
        k.free_slots.pop_front();
        dst = k.staging + uint64_t(slot) * round_up(m_slice);
      }
      k.ready.pop_front();
      topology::host& h = fab().hosts()[m_ranks[t.src].host];
      h.nic->post_write(k.sq, m_wr_id++, t.src_addr, dst, m_ranks[t.dst].rkey, t.bytes, at);
      k.last_post = at;
      // The receiver matches placements against this record; on another rank it gets it at the window's end,
      // before the WRITE's first packet can arrive there (that takes more than a lookahead).
      if (here(t.dst)) k.flight.push_back({i, dst, slot});
      else send_record(t.dst, record{record::flight, uint32_t(&k - m_conns.data()), i, slot, dst});
    }
  }

  // A WRITE of ours has been placed: check it, reduce it, free its slot, release what waited for it.
  void on_placed(size_t host, const nic::placed_message& m) {
    auto it = m_conn_by_rq.find({host, m.qpn});
    if (it == m_conn_by_rq.end()) {
      ++m_unexpected;
      return;
    }
    // Find the WRITE by its address: the NIC retires messages in the order it learnt them (their FIRST
    // packets' arrival), which sprayed packets can make differ from the post order.
    connection& k = m_conns[it->second];
    auto fit = std::find_if(k.flight.begin(), k.flight.end(),
                            [&](const connection::in_flight& x) { return x.dst_addr == m.va; });
    if (fit == k.flight.end() || m.bytes != m_x[fit->xfer].bytes) {
      ++m_unexpected;
      return;
    }
    const connection::in_flight f = *fit;
    k.flight.erase(fit);
    const transfer& t = m_x[f.xfer];
    uint8_t* dst_mem = fab().hosts()[host].mem->data();
    // The sender's memory, or under mpirun its mirror here, where the bytes it sent were shipped.
    const uint8_t* src_mem = fab().hosts()[m_ranks[t.src].host].buffer().data();
    if (m_check && std::memcmp(dst_mem + f.dst_addr, src_mem + t.src_addr, t.bytes) != 0)
      for (uint64_t b = 0; b < t.bytes; ++b) m_mismatched += dst_mem[f.dst_addr + b] != src_mem[t.src_addr + b];
    if (m_check) m_placement_checked += t.bytes;
    picoseconds ready = core::now();
    if (t.staged) {
      rank_memory& me = m_ranks[t.dst];
      const bool first = m_group_count[t.group]++ == 0;
      if (m_check) reduce(dst_mem + t.reduce_addr, dst_mem + (first ? t.base_addr : t.reduce_addr), dst_mem + f.dst_addr, t.bytes);
      const picoseconds start = core::max(ready, me.reduce_free);
      me.reduce_free = start + picoseconds(uint64_t(double(t.bytes) * m_reduce_ps_per_byte + 0.5));
      ready = me.reduce_free;
      // The credit reaches the sender credit_ns later; on another rank at the end of this window, which is
      // no later than that when credit_ns is at least the lookahead (checked before the run).
      if (here(t.src)) {
        k.free_slots.push_back({f.slot, ready + m_credit});
        try_post(k);
      } else {
        send_record(t.src, record{record::credit, it->second, 0, f.slot, (ready + m_credit).value});
      }
    }
    m_iter_end = core::max(m_iter_end, ready);
    for (uint32_t nx : t.next) {
      m_ready_at[nx] = core::max(m_ready_at[nx], ready);
      if (--m_deps[nx] == 0) {
        connection& c = m_conns[m_x[nx].conn];
        c.ready.push_back(nx);
        try_post(c);
      }
    }
    // Under mpirun the iteration's end is a global condition, found at a window's end (window_end).
    if (++m_placed == m_x.size() && !m_so) end_iteration();
  }

  // out = a + b, element by element, as unsigned integers of the element's width (exact, order-free).
  void reduce(uint8_t* out, const uint8_t* a, const uint8_t* b, uint64_t bytes) const {
    if (m_elt == 4) {
      for (uint64_t i = 0; i + 4 <= bytes; i += 4) {
        uint32_t x, y;
        std::memcpy(&x, a + i, 4);
        std::memcpy(&y, b + i, 4);
        x += y;
        std::memcpy(out + i, &x, 4);
      }
    } else {
      for (uint64_t i = 0; i + 2 <= bytes; i += 2) {
        uint16_t x, y;
        std::memcpy(&x, a + i, 2);
        std::memcpy(&y, b + i, 2);
        x = uint16_t(x + y);
        std::memcpy(out + i, &x, 2);
      }
    }
  }

  void end_iteration() {
    size_result& res = m_results[m_size];
    if (m_iter >= m_p.warmup_iterations) res.times.push_back(m_iter_end - m_iter_start);
    ++m_iter;
    if (m_iter < total_iterations()) {
      start_iteration(m_iter_end + m_barrier);
      return;
    }
    if (m_check) res.wrong = check_result(res.bytes);
    res.done = true;
    if (on_size_done) on_size_done(res);
    start_size(m_size + 1, m_iter_end + m_barrier);
  }

  uint8_t* mem(uint32_t r) { return fab().hosts()[m_ranks[r].host].mem->data(); }
  // Bytes [off, off + len) of rank r's send buffer: in its memory, or under mpirun, for a rank another
  // process simulates, regenerated from its seeded stream (byte b is byte b % 8 of the stream's word b / 8,
  // as elaborate fills it) into a scratch buffer that the next call reuses.
  const uint8_t* send_range(uint32_t r, uint64_t off, uint64_t len) {
    if (here(r)) return mem(r) + m_ranks[r].send + off;
    m_scratch.resize(len);
    const uint64_t state = core::stream_seed(m_seed, "collective", "rank" + std::to_string(r));
    for (uint64_t i = 0; i < len;) {
      const uint64_t b = off + i, v = core::splitmix64(state + b / 8);
      const uint64_t n = std::min<uint64_t>(8 - b % 8, len - i);
      std::memcpy(m_scratch.data() + i, reinterpret_cast<const uint8_t*>(&v) + b % 8, n);
      i += n;
    }
    return m_scratch.data();
  }
  // Whether this process simulates rank r's host (always in one process).
  bool here(uint32_t r) const { return !m_so || m_so->owns_host(m_ranks[r].host); }

  // ---- across MPI ranks ----------------------------------------------------------------------------------

  // What one process learns from another at a window's end: a posted WRITE the receiver must match
  // (flight), or a staging slot freed for the sender (credit).
  struct record {
    enum kind_t : uint32_t { flight, credit } kind;
    uint32_t conn, xfer, slot;
    uint64_t value;  // flight: destination address; credit: when the slot is free at the sender (ps)
  };
  void send_record(uint32_t to_rank, const record& rec) {
    std::vector<uint8_t>& out = m_out.at(size_t(m_so->host_rank(m_ranks[to_rank].host)));
    const size_t at = out.size();
    out.resize(at + sizeof(record));
    std::memcpy(out.data() + at, &rec, sizeof(record));
  }

  // Before the last iteration of a size: clear the receive buffers, so that the result check sees only what
  // this iteration wrote, and put each rank's own part where the op leaves it locally (no WRITE carries it).
  void prepare_check() {
    if (!m_check) return;
    const uint64_t bytes = m_results[m_size].bytes;
    for (uint32_t r = 0; r < m_n; ++r)
      if (here(r)) std::memset(mem(r) + m_ranks[r].recv, 0, bytes);
    for (uint32_t r = 0; r < m_n; ++r) {
      if (!here(r)) continue;
      if (m_p.op == "allgather") std::memcpy(mem(r) + m_ranks[r].recv + part_off(r, bytes), mem(r) + m_ranks[r].send, part_len(r, bytes));
      if (m_p.op == "alltoall")
        std::memcpy(mem(r) + m_ranks[r].recv + part_off(r, bytes), mem(r) + m_ranks[r].send + part_off(r, bytes), part_len(r, bytes));
    }
    if (m_p.op == "broadcast" && here(m_root)) std::memcpy(mem(m_root) + m_ranks[m_root].recv, mem(m_root) + m_ranks[m_root].send, bytes);
  }

  // Elements of the ranks' results that differ from a reference built here from the send buffers alone.
  uint64_t check_result(uint64_t bytes) {
    std::vector<uint8_t> ref(bytes);
    uint64_t wrong = 0;
    // Under mpirun each rank checks the results of the ranks it simulates; the run sums the counts.
    auto compare = [&](uint32_t r, uint64_t off, const uint8_t* expect, uint64_t len) {
      if (!here(r)) return;
      m_result_checked += len;
      const uint8_t* got = mem(r) + m_ranks[r].recv + off;
      if (std::memcmp(got, expect, len) == 0) return;
      for (uint64_t i = 0; i < len; i += m_elt) wrong += std::memcmp(got + i, expect + i, m_elt) != 0;
    };
    const std::string& op = m_p.op;
    if (m_sharp) return check_sharp(bytes);
    if (reduces(op)) {
      std::memcpy(ref.data(), send_range(0, 0, bytes), bytes);
      for (uint32_t r = 1; r < m_n; ++r) reduce(ref.data(), ref.data(), send_range(r, 0, bytes), bytes);
      for (uint32_t r = 0; r < m_n; ++r) {
        if (op == "allreduce") compare(r, 0, ref.data(), bytes);
        else compare(r, part_off(r, bytes), ref.data() + part_off(r, bytes), part_len(r, bytes));
      }
    } else if (op == "allgather") {
      for (uint32_t r = 0; r < m_n; ++r)
        for (uint32_t c = 0; c < m_n && here(r); ++c) compare(r, part_off(c, bytes), send_range(c, 0, part_len(c, bytes)), part_len(c, bytes));
    } else if (op == "alltoall") {
      for (uint32_t r = 0; r < m_n; ++r)
        for (uint32_t c = 0; c < m_n && here(r); ++c)
          compare(r, part_off(c, bytes), send_range(c, part_off(r, bytes), part_len(r, bytes)), part_len(r, bytes));
    } else {  // broadcast
      const uint8_t* root = send_range(m_root, 0, bytes);
      for (uint32_t r = 0; r < m_n; ++r) compare(r, 0, root, bytes);
    }
    return wrong;
  }

  // SHARP results against a plain software reduction: each element summed over the ranks in rank order in
  // double precision (exact for these n and inputs). int32: equal bit for bit (wrapping sum). fp32 and bf16:
  // within gamma_(n-1) sum|x_i|, gamma_k = k u / (1 - k u), u = 2^-24 (fp32) or 2^-8 (bf16): the bound on the
  // rounding error of any order of n-1 rounded additions (Higham, Accuracy and Stability of Numerical
  // Algorithms, 2nd ed., sec. 4.2), whatever order the switches added in.
  uint64_t check_sharp(uint64_t bytes) {
    uint64_t wrong = 0;
    const uint64_t count = bytes / m_elt;
    const double u = m_p.dtype == "bfloat16" ? std::ldexp(1.0, -8) : std::ldexp(1.0, -24);
    const double k = double(m_n - 1);
    const double gamma = k * u / (1.0 - k * u);
    double worst = 0.0;
    for (uint64_t i = 0; i < count; ++i) {
      const uint64_t off = i * m_elt;
      if (m_p.dtype == "int32") {
        uint32_t sum = 0, x;
        for (uint32_t r = 0; r < m_n; ++r) {
          std::memcpy(&x, mem(r) + m_ranks[r].send + off, 4);
          sum += x;
        }
        for (uint32_t r = 0; r < m_n; ++r) {
          std::memcpy(&x, mem(r) + m_ranks[r].recv + off, 4);
          wrong += x != sum;
        }
        continue;
      }
      auto load = [&](const uint8_t* p) {
        if (m_elt == 4) {
          float f;
          std::memcpy(&f, p, 4);
          return double(f);
        }
        uint16_t h;
        std::memcpy(&h, p, 2);
        return double(sw::float_from_bf16(h));
      };
      double sum = 0.0, abs_sum = 0.0;
      for (uint32_t r = 0; r < m_n; ++r) {
        const double x = load(mem(r) + m_ranks[r].send + off);
        sum += x;
        abs_sum += std::fabs(x);
      }
      const double tol = gamma * abs_sum;
      for (uint32_t r = 0; r < m_n; ++r) {
        const double err = std::fabs(load(mem(r) + m_ranks[r].recv + off) - sum);
        wrong += !(err <= tol);  // NaN counts as wrong
        if (abs_sum > 0) worst = std::max(worst, err / abs_sum);
      }
    }
    m_sharp_worst = std::max(m_sharp_worst, worst);
    m_result_checked += count * m_elt * m_n;  // every rank's result, element by element
    return wrong;
  }

 public:
  // SHARP: the tree, its units' counters and the largest float error seen (relative to sum|x_i|).
  nlohmann::json sharp_report() const {
    nlohmann::json j;
    if (!m_sharp) return j;
    j["root"] = m_tree.nodes.empty() ? std::string() : std::string(m_tree.nodes[0].sw->device_name());
    j["chunk_bytes"] = m_mtu;
    j["tflops"] = m_sharp_params.tflops;
    j["latency_ns"] = m_sharp_params.latency_ns;
    j["slots"] = m_sharp_params.slots;
    const double u = m_p.dtype == "bfloat16" ? std::ldexp(1.0, -8) : std::ldexp(1.0, -24);
    const double k = double(m_n - 1);
    j["float_tolerance"] = m_p.dtype == "int32" ? 0.0 : k * u / (1.0 - k * u);
    j["max_relative_error"] = m_sharp_worst;
    nlohmann::json sws = nlohmann::json::array();
    for (size_t i = 0; i < m_aggs.size(); ++i) {
      const auto& c = m_aggs[i]->counters();
      sws.push_back({{"switch", m_aggs[i]->name()},
                     {"depth", m_tree.nodes[i].depth},
                     {"children", m_aggs[i]->children()},
                     {"ops", c.ops},
                     {"pieces", c.pieces},
                     {"bytes_reduced", c.bytes_reduced},
                     {"slot_waits", c.slot_waits},
                     {"slot_wait_us", double(c.slot_wait_ps) * 1e-6},
                     {"max_slots_used", c.max_slots_used},
                     {"results_sent_down", c.replicated},
                     {"unexpected", c.unexpected}});
    }
    j["switches"] = std::move(sws);
    uint64_t unexpected = 0;
    for (const auto& h : m_sharp_hosts) unexpected += h->unexpected();
    j["host_unexpected"] = unexpected;
    // Credit accounting on every hop of the tree: sends without credit (switch ports and HCAs) and packets
    // that arrived beyond a receive buffer. Both 0 when credits are honoured.
    uint64_t violations = 0, overruns = 0;
    for (const sw::sharp_tree_node& node : m_tree.nodes)
      for (unsigned i = 0; i < node.sw->ports(); ++i)
        if (node.sw->connected(i)) {
          violations += node.sw->port(i).sender().violations();
          overruns += node.sw->receiver(i).overruns();
        }
    for (const rank_memory& m : m_ranks) violations += m_fab_ptr->hosts()[m.host].nic->ib_sender().violations();
    j["credit_violations"] = violations;
    j["credit_overruns"] = overruns;
    return j;
  }

 private:
  collective_params m_p;
  topology::fabric* m_fab_ptr = nullptr;
  topology::fabric& fab() { return *m_fab_ptr; }
  uint32_t m_n;
  bool m_check;
  bool m_sharp;
  sw::sharp_params m_sharp_params;
  uint64_t m_mtu;
  picoseconds m_start_latency, m_rx_latency;
  picoseconds m_barrier, m_credit;
  const scenario* m_scenario;
  scale_out* m_so = nullptr;                       // under mpirun only
  uint64_t m_seed = 0;
  std::vector<uint8_t> m_scratch;                   // send_range's regenerated bytes
  std::vector<std::vector<uint8_t>> m_out;          // by MPI rank: records for it, this window
  sw::sharp_tree m_tree;
  std::vector<std::unique_ptr<sw::sharp_aggregator>> m_aggs;
  std::vector<std::unique_ptr<sw::sharp_host>> m_sharp_hosts;
  uint32_t m_sharp_op = 0, m_sharp_done = 0;
  double m_sharp_worst = 0.0;
  uint64_t m_elt = 4, m_slice = 0, m_max_bytes = 0;
  double m_reduce_ps_per_byte = 0.0;
  uint32_t m_root = 0;
  std::vector<rank_memory> m_ranks;
  std::vector<connection> m_conns;
  std::map<std::pair<uint32_t, uint32_t>, uint32_t> m_conn_index;          // (src rank, dst rank) -> connection
  std::map<std::pair<size_t, uint32_t>, uint32_t> m_conn_by_rq;            // (dst host, responder QPN) -> connection
  std::vector<transfer> m_x;          // the current size's graph
  std::vector<uint32_t> m_deps;       // per transfer: arrivals still awaited this iteration
  std::vector<picoseconds> m_ready_at;
  std::vector<uint32_t> m_group_count;
  uint32_t m_slice_ids = 0, m_slices_per_rank = 1;
  std::vector<size_result> m_results;
  size_t m_size = 0;
  uint64_t m_iter = 0, m_placed = 0, m_wr_id = 0, m_mismatched = 0, m_unexpected = 0;
  uint64_t m_placement_checked = 0, m_result_checked = 0;
  picoseconds m_iter_start{}, m_iter_end{};
};

}  // namespace

namespace {

// Under mpirun, steps that need every rank's state (the iteration barrier; a staging slot's credit on a
// connection between processes) are taken at window ends, which is exact only if they take at least a
// lookahead.
void check_lookahead(const scenario& s, scale_out& so, const engine& eng) {
  if (!so.distributed()) return;
  const picoseconds look = so.lookahead();
  auto too_short = [&](const char* key, double ns, const std::string& why) {
    throw config_error(s.source + ": collective." + key + " " + fmt::format("{}", ns) + " ns is below the " +
                       fmt::format("{}", look.ns()) + " ns lookahead of this " + std::to_string(so.ranks()) +
                       "-rank partition (" + why + "): set collective." + key + " to at least " +
                       fmt::format("{}", look.ns()) + " (docs/scale_out.md), or run it in one process");
  };
  if (look.value != UINT64_MAX && picoseconds::from_ns(s.collective.barrier_ns) < look)
    too_short("barrier_ns", s.collective.barrier_ns, "every iteration ends with a barrier across processes");
  bool staged_crossing = false;
  for (const auto& [src_host, dst_host] : eng.staged_host_pairs())
    staged_crossing = staged_crossing || so.host_rank(src_host) != so.host_rank(dst_host);
  if (staged_crossing && picoseconds::from_ns(s.collective.credit_ns) < look)
    too_short("credit_ns", s.collective.credit_ns, "a reducing connection's slot credits cross processes");
}

// The rows of the `collective` object, one per size (nccl-tests' columns), with the sum of wrong elements
// and the mean bus bandwidth over the sizes that completed.
struct size_rows {
  nlohmann::json rows = nlohmann::json::array();
  uint64_t wrong_total = 0;
  double busbw_sum = 0.0;
  size_t busbw_rows = 0;
};

size_rows collective_rows(const collective_params& p, const engine& eng, bool checked) {
  size_rows out;
  const bool rooted = p.op == "broadcast";
  for (const size_result& res : eng.results()) {
    nlohmann::json row;
    row["size"] = res.bytes;
    row["requested_bytes"] = res.requested;
    row["count"] = res.count;
    row["type"] = p.dtype;
    row["redop"] = reduces(p.op) ? "sum" : "none";
    row["root"] = rooted ? int64_t(p.root) : int64_t(-1);
    row["completed"] = res.done;
    row["writes_per_iteration"] = res.writes;
    nlohmann::json sent = nlohmann::json::array();
    for (uint64_t b : res.sent_per_rank) sent.push_back(b);
    row["bytes_sent_per_rank"] = std::move(sent);
    if (res.done && !res.times.empty()) {
      double sum = 0.0;
      nlohmann::json iters = nlohmann::json::array();
      for (picoseconds t : res.times) {
        sum += t.us();
        iters.push_back(t.us());
      }
      const double time_us = sum / double(res.times.size());
      const double algbw = time_us > 0 ? double(res.bytes) / (time_us * 1e-6) / 1e9 : 0.0;  // GB/s
      row["time_us"] = time_us;
      row["iteration_times_us"] = std::move(iters);
      row["algbw_gbps"] = algbw;
      row["busbw_gbps"] = algbw * bus_factor(p.op, eng.ranks());
      out.busbw_sum += algbw * bus_factor(p.op, eng.ranks());
      ++out.busbw_rows;
    } else {
      row["time_us"] = nullptr;
      row["iteration_times_us"] = nlohmann::json::array();
      row["algbw_gbps"] = nullptr;
      row["busbw_gbps"] = nullptr;
    }
    row["wrong"] = checked ? nlohmann::json(res.wrong) : nlohmann::json(nullptr);
    out.wrong_total += res.wrong;
    out.rows.push_back(std::move(row));
  }
  return out;
}

// The `collective` object of the report (docs/collectives.md).
nlohmann::json collective_object(const scenario& s, engine& eng, topology::fabric& fab,
                                 const std::vector<size_t>& rank_host, const std::vector<double>& rank_rate,
                                 size_rows rows) {
  const collective_params& p = s.collective;
  const bool finished = eng.finished();
  nlohmann::json c;
  c["op"] = p.op;
  c["algo"] = p.algo;
  c["dtype"] = p.dtype;
  c["ranks"] = eng.ranks();
  c["placement"] = p.placement;
  nlohmann::json placed_on = nlohmann::json::array();
  for (size_t h : rank_host) placed_on.push_back(fab.hosts()[h].name);
  c["rank_hosts"] = std::move(placed_on);
  c["iterations"] = p.iterations;
  c["warmup_iterations"] = p.warmup_iterations;
  c["chunk_bytes"] = p.chunk_bytes;
  c["buffer_slots"] = p.buffer_slots;
  c["reduce_gbps"] = p.reduce_gbps;
  c["bus_factor"] = bus_factor(p.op, eng.ranks());
  c["link_gbps"] = rank_rate[0] / 1e9;
  if (p.algo == "sharp") c["sharp"] = eng.sharp_report();
  c["completed"] = finished;
  c["unexpected_placements"] = eng.unexpected();
  c["placement_checked_bytes"] = eng.placement_checked_bytes();
  c["result_checked_bytes"] = eng.result_checked_bytes();
  c["avg_busbw_gbps"] =
      rows.busbw_rows ? nlohmann::json(rows.busbw_sum / double(rows.busbw_rows)) : nlohmann::json(nullptr);
  c["rows"] = std::move(rows.rows);
  if (!finished)
    c["stopped_at"] = {{"size_index", eng.current_size()},
                       {"iteration", eng.current_iteration()},
                       {"placed", eng.placed_in_iteration()},
                       {"writes", eng.transfers_in_iteration()}};
  return c;
}

// The `fabric` object of a collective run: the whole run is the window; the flow fields are empty.
nlohmann::json collective_fabric(core::sim_context& ctx, picoseconds sim_end, const std::vector<double>& rank_rate,
                                 size_t ranks) {
  nlohmann::json fabric_j;
  const uint64_t delivered = ctx.stats.counter_total("placed_bytes");
  double rate_bps = 0.0;
  for (double rate : rank_rate) rate_bps += rate;
  const double window_s = double(sim_end.value) * 1e-12;
  uint64_t max_queue = ctx.stats.counter_max("max_queue_bytes");
  fabric_j["window_start_ns"] = 0.0;
  fabric_j["window_end_ns"] = sim_end.ns();
  fabric_j["delivered_payload_bytes"] = delivered;
  fabric_j["senders"] = ranks;
  fabric_j["effective_throughput"] = window_s > 0 ? double(delivered) * 8.0 / (rate_bps * window_s) : 0.0;
  fabric_j["drops"] = ctx.stats.counter_total("dropped");
  fabric_j["ecn_marked"] = ctx.stats.counter_total("ecn_marked");
  fabric_j["pfc_pause_frames"] = ctx.stats.counter_total("pause_frames_sent");
  fabric_j["injected_drops"] = ctx.stats.counter_total("dropped_injected");
  fabric_j["retransmissions"] = ctx.stats.counter_total("tx_retransmitted");
  fabric_j["max_queue_bytes"] = max_queue;
  fabric_j["completed_flows"] = 0;
  fabric_j["incomplete_flows"] = 0;
  fabric_j["mean_flow_throughput"] = nullptr;
  fabric_j["min_flow_throughput"] = nullptr;
  fabric_j["cnps_sent"] = ctx.stats.counter_total("tx_cnps");
  return fabric_j;
}

}  // namespace

nlohmann::json run_collective(const scenario& s, const run_options& opts) {
  check_run_basics(s);
  const size_t hosts = s.topology.host_count();
  const std::vector<size_t> rank_host = place_ranks(s);
  // Bytes are checked only where every NIC places them; otherwise the run is timing only.
  const bool checked = every_nic_places_data(s);
  const bool placing = any_nic_places_data(s) && !opts.elaborate_only;
  engine eng(s, rank_host, checked && !opts.elaborate_only);
  const std::vector<uint64_t> mem_bytes = eng.memory_bytes(hosts);
  check_memory_budget(s, mem_bytes, placing, "collective: the ranks' buffers", "",
                      "lower collective.max_bytes or the ranks, or set nic.place_data: false");
  // The switches `switch.model` names, the NICs for it, the RTL log, this rank's part of the fabric
  // (docs/scale_out.md; one process: all of it), as in a workload run (testbench/fabric_setup.h).
  fabric_setup setup(s, opts);
  core::sim_context& ctx = setup.ctx;
  scale_out& so = setup.so;
  check_lookahead(s, so, eng);
  setup.build(mem_bytes, {}, placing);  // no PCIe trays: a collective's buffers are host memory
  topology::fabric& fab = setup.fab();
  tap_set& taps = setup.taps();
  if (so.distributed() && !so.windowed())
    throw config_error(s.source + ": collective: no link crosses between the " + std::to_string(so.ranks()) +
                       " MPI ranks of this partition, so they cannot keep in step: run it in one process");
  eng.elaborate(setup, s.seed, placing);
  if (opts.elaborate_only) return nlohmann::json::object();
  if (so.distributed()) so.on_window_end([&eng] { eng.window_end(); });

  // Until the sweep is over and the fabric idle (the last ACKs), or the time limit.
  const auto wall0 = std::chrono::steady_clock::now();
  size_t sizes_done = 0;  // a line per finished size, as nccl-tests prints its rows (testbench/progress.h)
  if (opts.progress && so.rank() == 0)
    eng.on_size_done = [&](const size_result& res) {
      std::vector<double> us;
      for (picoseconds t : res.times) us.push_back(t.us());
      std::string line = format_collective_size_done(
          res.bytes, us, bus_factor(s.collective.op, eng.ranks()), ++sizes_done, eng.results().size(),
          std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count());
      if (!opts.progress_label.empty()) line.insert(2, opts.progress_label + ": ");  // after "# "
      *opts.progress << line << std::flush;
    };
  const double end_us = s.run.duration_us > 0 ? s.run.duration_us : s.run.limit_us;
  try {
    so.start(picoseconds::from_ns(end_us * 1e3), sc_core::SC_EXIT_ON_STARVATION);
  } catch (...) {
    nic::rethrow_rtl_divergence(ctx.lockstep);  // a lockstep pair stopped the run: say so, by type
    throw;
  }
  setup.flush_rtl_log();
  so.merge_statistics();  // under mpirun: every rank's counters, so that each holds the whole fabric's
  const double wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
  const picoseconds sim_end = core::now();

  uint64_t completed = 0, failed = 0;
  for (topology::host& h : fab.hosts())
    if (h.built())
      for (const nic::completion& c : h.nic->completions()) {
        completed += c.status == nic::completion_status::success;
        failed += c.status != nic::completion_status::success;
      }
  if (so.distributed()) {
    completed = so.sum(completed);
    failed = so.sum(failed);
  }
  eng.merge_counts(so);
  // The ranks' link rates, each from the process that simulates its host.
  std::vector<double> rank_rate(rank_host.size(), 0.0);
  for (size_t i = 0; i < rank_host.size(); ++i)
    if (fab.hosts()[rank_host[i]].built())
      rank_rate[i] = double(fab.hosts()[rank_host[i]].nic->out_link()->rate().value);
  so.from_owner(rank_rate);
  const bool finished = eng.finished();
  size_rows rows = collective_rows(s.collective, eng, checked);
  const uint64_t wrong_total = rows.wrong_total;
  nlohmann::json c = collective_object(s, eng, fab, rank_host, rank_rate, std::move(rows));
  const uint64_t checked_bytes = eng.placement_checked_bytes() + eng.result_checked_bytes();
  const bool verified = checked && checked_bytes > 0 && finished && failed == 0 && eng.mismatched_bytes() == 0 &&
                        wrong_total == 0 && eng.unexpected() == 0;
  nlohmann::json fabric_j = collective_fabric(ctx, sim_end, rank_rate, rank_host.size());
  // The whole fabric's statistics are on rank 0 only (scale_out::merge_statistics), which writes the report.
  const bool writes_report = so.rank() == 0;
  nlohmann::json ports = writes_report ? link_ports_report(fab, ctx, sim_end) : nlohmann::json::array();
  nlohmann::json r;
  add_run_header(r, s, opts, ctx, sim_end, wall_s);
  r["operations"] = eng.writes_posted();
  r["completed"] = completed;
  r["failed"] = failed;
  r["verified"] = verified;
  r["time_limited"] = false;
  r["data_checked"] = checked;
  r["mismatched_bytes"] = eng.mismatched_bytes();
  r["checked_bytes"] = checked_bytes;
  r["placed_bytes"] = ctx.stats.counter_total("placed_bytes");
  r["dropped_packets"] = ctx.stats.counter_total("dropped");
  r["fabric"] = std::move(fabric_j);
  r["collective"] = std::move(c);
  r["flows"] = nlohmann::json::array();
  r["ports"] = std::move(ports);
  r["stats"] = writes_report ? ctx.stats.to_json() : nlohmann::json::object();
  r["packets_in_use_at_end"] = so.distributed() ? so.sum(ctx.pool.in_use()) : ctx.pool.in_use();
  taps.close();
  r["taps"] = taps.to_json();
  if (so.distributed()) r["scale_out"] = so.report();
  return r;
}

namespace {

// The data line of a collective's table: the bytes compared at placement and in the results, and the verdict.
std::string collective_data_verdict(const nlohmann::json& r) {
  const auto& c = r.at("collective");
  const std::string placed = group_digits(r.at("placed_bytes").get<uint64_t>());
  const std::string at_placement = group_digits(c.at("placement_checked_bytes").get<uint64_t>());
  const std::string results = group_digits(c.at("result_checked_bytes").get<uint64_t>());
  if (!r.at("data_checked").get<bool>())
    return fmt::format("not checked (nic.place_data is false): {} bytes placed, none compared", placed);
  if (r.at("verified").get<bool>() && c.contains("sharp"))
    return fmt::format(
        "every result VERIFIED against a software reduction (int32 exact, floats within {:.3g} of "
        "sum|x|; largest relative error seen {:.3g}): {} result bytes checked",
        c.at("sharp").at("float_tolerance").get<double>(), c.at("sharp").at("max_relative_error").get<double>(),
        results);
  if (r.at("verified").get<bool>())
    return fmt::format(
        "VERIFIED: {} of {} placed bytes checked byte for byte at placement, {} result bytes equal "
        "to the reference",
        at_placement, placed, results);
  uint64_t wrong = 0;
  for (const auto& row : c.at("rows"))
    if (!row.at("wrong").is_null()) wrong += row.at("wrong").get<uint64_t>();
  return fmt::format(
      "NOT VERIFIED: {} of {} bytes checked at placement differ from their source ({} placed), {} "
      "result bytes checked with {} wrong elements, {} WRITEs failed, {} unexpected placements",
      group_digits(r.at("mismatched_bytes").get<uint64_t>()), at_placement, placed, results, wrong,
      r.at("failed").get<uint64_t>(), c.at("unexpected_placements").get<uint64_t>());
}

}  // namespace

std::string format_collective_table(const nlohmann::json& r) {
  const auto& c = r.at("collective");
  std::string out = fmt::format("scenario {} (seed {})\n", r.at("scenario").get<std::string>(), r.at("seed").get<uint64_t>());
  if (!r.at("description").get<std::string>().empty()) out += fmt::format("  {}\n", r.at("description").get<std::string>());
  std::string hosts;
  for (const auto& h : c.at("rank_hosts")) hosts += (hosts.empty() ? "" : " ") + h.get<std::string>();
  const bool sharp = c.contains("sharp");  // SHARP chunks are one packet each: the NIC's MTU
  out += fmt::format("# collective {} algo {}: {} ranks ({} placement: {}), {} Gb/s links, chunk {} bytes, "
                     "warmup iters {} iters {}\n",
                     c.at("op").get<std::string>(), c.at("algo").get<std::string>(), c.at("ranks").get<uint64_t>(),
                     c.at("placement").get<std::string>(), hosts, c.at("link_gbps").get<double>(),
                     sharp ? c.at("sharp").at("chunk_bytes").get<uint64_t>() : c.at("chunk_bytes").get<uint64_t>(),
                     c.at("warmup_iterations").get<uint64_t>(), c.at("iterations").get<uint64_t>());
  if (sharp) {
    const auto& sh = c.at("sharp");
    out += fmt::format("# SHARP tree rooted at {}: {} TFLOPS, {} ns, {} slots per switch\n",
                       sh.at("root").get<std::string>(), sh.at("tflops").get<double>(),
                       sh.at("latency_ns").get<double>(), sh.at("slots").get<uint64_t>());
    for (const auto& sw : sh.at("switches"))
      out += fmt::format("#   {:<10} depth {} children {:>3}: {} chunks aggregated, {} bytes reduced, {} slot waits "
                         "({:.3f} us), max {} slots in use\n",
                         sw.at("switch").get<std::string>(), sw.at("depth").get<uint64_t>(),
                         sw.at("children").get<uint64_t>(), sw.at("ops").get<uint64_t>(),
                         sw.at("bytes_reduced").get<uint64_t>(), sw.at("slot_waits").get<uint64_t>(),
                         sw.at("slot_wait_us").get<double>(), sw.at("max_slots_used").get<uint64_t>());
  }
  out += fmt::format("#\n# {:>10} {:>12} {:>8} {:>6} {:>6} {:>10} {:>7} {:>7} {:>6}\n", "size", "count", "type", "redop",
                     "root", "time", "algbw", "busbw", "#wrong");
  out += fmt::format("# {:>10} {:>12} {:>8} {:>6} {:>6} {:>10} {:>7} {:>7} {:>6}\n", "(B)", "(elements)", "", "", "",
                     "(us)", "(GB/s)", "(GB/s)", "");
  for (const auto& row : c.at("rows")) {
    const bool timed = !row.at("time_us").is_null();
    out += fmt::format("  {:>10} {:>12} {:>8} {:>6} {:>6} {:>10} {:>7} {:>7} {:>6}\n", row.at("size").get<uint64_t>(),
                       row.at("count").get<uint64_t>(), row.at("type").get<std::string>(),
                       row.at("redop").get<std::string>(), row.at("root").get<int64_t>(),
                       timed ? fmt::format("{:.2f}", row.at("time_us").get<double>()) : "-",
                       timed ? fmt::format("{:.2f}", row.at("algbw_gbps").get<double>()) : "-",
                       timed ? fmt::format("{:.2f}", row.at("busbw_gbps").get<double>()) : "-",
                       row.at("wrong").is_null() ? std::string("N/A") : std::to_string(row.at("wrong").get<uint64_t>()));
  }
  out += fmt::format("# Avg bus bandwidth    : {}\n",
                     c.at("avg_busbw_gbps").is_null() ? std::string("-")
                                                      : fmt::format("{:.3f}", c.at("avg_busbw_gbps").get<double>()));
  out += fmt::format("#\nsimulated {:.3f} us in {:.3f} s wall: {} packet-hops, {:.2f} M packet-hops/s; {} WRITEs, {} "
                     "completed, {} failed; drops {}, ECN marked {}, PFC pauses {}, max queue {} bytes\n",
                     r.at("simulated_time_ns").get<double>() / 1000.0, r.at("wall_time_s").get<double>(),
                     r.at("packet_hops").get<uint64_t>(), r.at("packet_hops_per_s").get<double>() / 1e6,
                     r.at("operations").get<uint64_t>(), r.at("completed").get<uint64_t>(),
                     r.at("failed").get<uint64_t>(), r.at("fabric").at("drops").get<uint64_t>(),
                     r.at("fabric").at("ecn_marked").get<uint64_t>(), r.at("fabric").at("pfc_pause_frames").get<uint64_t>(),
                     r.at("fabric").at("max_queue_bytes").get<uint64_t>());
  out += "data: " + collective_data_verdict(r) +
         (c.at("completed").get<bool>() ? "" : " (the sweep did not finish: see collective.stopped_at)") + "\n";
  return out;
}

std::string format_collective_compare(const nlohmann::json& comparison) {
  const auto& runs = comparison.at("runs");
  std::string out = "busbw (GB/s) by size and " + comparison.at("compare").get<std::string>() + "\n";
  out += fmt::format("{:>12}", "size (B)");
  for (const auto& run : runs) out += fmt::format(" {:>12}", run.at("value").get<std::string>());
  out += "\n";
  const auto& first = runs.at(0).at("report").at("collective").at("rows");
  for (size_t i = 0; i < first.size(); ++i) {
    out += fmt::format("{:>12}", first[i].at("size").get<uint64_t>());
    for (const auto& run : runs) {
      const auto& rows = run.at("report").at("collective").at("rows");
      const bool has = i < rows.size() && !rows[i].at("busbw_gbps").is_null();
      out += fmt::format(" {:>12}", has ? fmt::format("{:.2f}", rows[i].at("busbw_gbps").get<double>()) : "-");
    }
    out += "\n";
  }
  out += fmt::format("{:>12}", "avg");
  for (const auto& run : runs) {
    const auto& avg = run.at("report").at("collective").at("avg_busbw_gbps");
    out += fmt::format(" {:>12}", avg.is_null() ? std::string("-") : fmt::format("{:.2f}", avg.get<double>()));
  }
  out += "\n";
  out += fmt::format("{:>12}", "verified");
  for (const auto& run : runs)
    out += fmt::format(" {:>12}", !run.at("report").at("data_checked").get<bool>() ? "unchecked"
                                  : run.at("report").at("verified").get<bool>()    ? "yes"
                                                                                   : "NO");
  out += "\n";
  return out;
}

}  // namespace fabricsim::testbench
