// The collective engine: a collective's schedule run as RDMA WRITEs between the ranks' SuperNICs.
#include "testbench/collective_engine.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>

#include "sc_models/core/rng.h"
#include "sc_models/core/sim_context.h"
#include "sc_models/nic/supernic.h"
#include "sc_models/topology/fabric.h"
#include "testbench/collective_ops.h"
#include "testbench/collective_sharp.h"
#include "testbench/fabric_setup.h"
#include "testbench/scale_out.h"
#include "testbench/scenario.h"

namespace fabricsim::testbench {

using core::picoseconds;

collective_engine::collective_engine(const scenario& s, std::vector<size_t> rank_host, bool check_data)
    : m_p(s.collective),
      m_n(uint32_t(rank_host.size())),
      m_check(check_data),
      m_sharp(s.collective.algo == "sharp"),
      m_barrier(picoseconds::from_ns(s.collective.barrier_ns)),
      m_credit(picoseconds::from_ns(s.collective.credit_ns)),
      m_sched(s.collective, uint32_t(rank_host.size())) {
  if (m_sharp)
    m_sharp_path =
        std::make_unique<collective_sharp>(m_p, s.sharp, s.nic.mtu_bytes, picoseconds::from_ns(s.nic.wqe_latency_ns),
                                           picoseconds::from_ns(s.nic.rx_latency_ns));
  m_elt = dtype_bytes(m_p.dtype);
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
  m_group_count.assign(size_t(m_n) * (m_max_bytes / m_sched.slice_bytes() + m_n + 1), 0);
}

collective_engine::~collective_engine() = default;

std::vector<uint64_t> collective_engine::memory_bytes(size_t hosts) {
  m_sched.plan_connections();
  std::vector<uint64_t> out(hosts, 4096);
  for (uint32_t r = 0; r < m_n; ++r)
    out[m_ranks[r].host] = 3 * page + 2 * round_up(m_max_bytes) + m_sched.staged_in(r) * slots_bytes();
  return out;
}

void collective_engine::elaborate(fabric_setup& setup, uint64_t seed, bool fill) {
  scale_out& so = setup.so;
  m_fab_ptr = &setup.fab();
  m_so = so.distributed() ? &so : nullptr;
  if (m_so) m_out.assign(size_t(so.ranks()), {});
  m_seed = seed;
  for (uint32_t r = 0; r < m_n; ++r) {
    rank_memory& m = m_ranks[r];
    topology::host& h = fab().hosts()[m.host];
    const uint64_t staging = m_sched.staged_in(r) * slots_bytes();
    m.send = h.buffer().allocate(std::max<uint64_t>(m_max_bytes, 1));
    m.recv = h.buffer().allocate(round_up(std::max<uint64_t>(m_max_bytes, 1)) + staging);
    m.staging = m.recv + round_up(m_max_bytes);
    m.rkey = setup.register_region(m.host, m.recv, round_up(m_max_bytes) + staging);
    // Only this process's hosts: the result check regenerates other ranks' bytes (send_range).
    uint8_t* p = h.built() ? h.mem->data() + m.send : nullptr;
    uint64_t state = core::stream_seed(seed, "collective", "rank" + std::to_string(r));
    for (uint64_t b = 0; p && fill && b < m_max_bytes; b += 8) {
      const uint64_t v = core::splitmix64(state++);
      std::memcpy(p + b, &v, std::min<uint64_t>(8, m_max_bytes - b));
    }
  }
  elaborate_connections(setup);
  for (uint32_t r = 0; r < m_n; ++r) {
    const size_t host = m_ranks[r].host;
    if (!fab().hosts()[host].built()) continue;
    fab().hosts()[host].nic->set_placed_callback([this, host](const nic::placed_message& m) { on_placed(host, m); });
  }
  if (m_sharp) {
    m_sharp_path->on_rank_done = [this](picoseconds t, bool last) {
      m_iter_end = core::max(m_iter_end, t);
      ++m_sharp_done;
      // The iteration ends when the last rank has its result (at m_iter_end); under mpirun the ranks' counts
      // are summed at window ends (window_end), as a ring's placements are.
      if (last && !m_so) end_iteration();
    };
    m_sharp_path->elaborate(fab(), m_ranks, m_max_bytes, seed, fill, m_so);
  }
  start_size(0, picoseconds{});
}

void collective_engine::elaborate_connections(fabric_setup& setup) {
  std::vector<connection>& conns = m_sched.connections();
  for (uint32_t c = 0; c < conns.size(); ++c) {
    connection& k = conns[c];
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
}

void collective_engine::window_end() {
  std::vector<std::vector<uint8_t>> in = m_so->all_to_all(m_out);
  for (auto& o : m_out) o.clear();
  std::vector<connection>& conns = m_sched.connections();
  std::vector<uint32_t> credited;
  for (const auto& buf : in)
    for (size_t at = 0; at + sizeof(record) <= buf.size(); at += sizeof(record)) {
      record rec;
      std::memcpy(&rec, buf.data() + at, sizeof(record));
      connection& k = conns.at(rec.conn);
      if (rec.kind == record::flight) {
        k.flight.push_back({rec.xfer, rec.value, rec.slot});
      } else {
        k.free_slots.push_back({rec.slot, picoseconds{rec.value}});
        credited.push_back(rec.conn);
      }
    }
  for (uint32_t c : credited) try_post(conns[c]);
  if (finished()) return;
  // The iteration's WRITEs placed, or with SHARP its ranks that have their result.
  const uint64_t placed = m_so->sum(m_sharp ? m_sharp_done : m_placed);
  const uint64_t end = m_so->max(m_iter_end.value);
  const uint64_t needed = m_sharp ? m_n : m_sched.transfers().size();
  if (placed != needed || needed == 0) return;
  m_iter_end = picoseconds{end};
  end_iteration();
}

std::vector<std::pair<size_t, size_t>> collective_engine::staged_host_pairs() const {
  std::vector<std::pair<size_t, size_t>> out;
  for (const connection& k : m_sched.connections())
    if (k.has_staging) out.push_back({m_ranks[k.src].host, m_ranks[k.dst].host});
  return out;
}

void collective_engine::merge_counts(scale_out& so) {
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

nlohmann::json collective_engine::sharp_report() const {
  if (!m_sharp) return nlohmann::json();
  return m_sharp_path->report(*m_fab_ptr, m_so);
}

void collective_engine::start_size(size_t index, picoseconds at) {
  m_size = index;
  if (finished()) return;
  size_result& res = m_results[m_size];
  m_sched.build(res.bytes, m_ranks);
  const std::vector<transfer>& xs = m_sched.transfers();
  res.writes = xs.size();
  res.sent_per_rank.assign(m_n, 0);
  for (const transfer& t : xs) res.sent_per_rank[t.src] += t.bytes;
  if (m_sharp) res.sent_per_rank.assign(m_n, res.bytes);  // each rank sends its buffer once, up the tree
  m_deps.resize(xs.size());
  m_ready_at.resize(xs.size());
  m_iter = 0;
  start_iteration(at);
}

void collective_engine::start_iteration(picoseconds at) {
  if (m_iter + 1 == total_iterations()) prepare_check();
  const std::vector<transfer>& xs = m_sched.transfers();
  std::vector<connection>& conns = m_sched.connections();
  m_iter_start = at;
  m_iter_end = at;
  m_placed = 0;
  m_sharp_done = 0;
  std::fill(m_group_count.begin(), m_group_count.end(), 0);
  for (size_t i = 0; i < xs.size(); ++i) {
    m_deps[i] = xs[i].deps;
    m_ready_at[i] = at;
  }
  for (uint32_t i = 0; i < xs.size(); ++i)
    if (m_deps[i] == 0) conns[xs[i].conn].ready.push_back(i);
  for (connection& k : conns)
    if (here(k.src)) try_post(k);
  if (m_sharp) m_sharp_path->start(m_ranks, m_results[m_size].bytes, m_check, at);
}

void collective_engine::try_post(connection& k) {
  const std::vector<transfer>& xs = m_sched.transfers();
  while (!k.ready.empty()) {
    const uint32_t i = k.ready.front();
    const transfer& t = xs[i];
    picoseconds at = core::max(core::max(m_ready_at[i], k.last_post), core::now());
    uint64_t dst = t.dst_addr;
    uint32_t slot = UINT32_MAX;
    if (t.staged) {
      if (k.free_slots.empty()) return;  // credit: wait for the receiver to consume a slot
      slot = k.free_slots.front().first;
      at = core::max(at, k.free_slots.front().second);
      k.free_slots.pop_front();
      dst = k.staging + uint64_t(slot) * round_up(m_sched.slice_bytes());
    }
    k.ready.pop_front();
    topology::host& h = fab().hosts()[m_ranks[t.src].host];
    h.nic->post_write(k.sq, m_wr_id++, t.src_addr, dst, m_ranks[t.dst].rkey, t.bytes, at);
    k.last_post = at;
    // The receiver matches placements against this record; on another rank it gets it at the window's end,
    // before the WRITE's first packet can arrive there (that takes more than a lookahead).
    if (here(t.dst))
      k.flight.push_back({i, dst, slot});
    else
      send_record(t.dst, record{record::flight, uint32_t(&k - m_sched.connections().data()), i, slot, dst});
  }
}

void collective_engine::on_placed(size_t host, const nic::placed_message& m) {
  auto it = m_conn_by_rq.find({host, m.qpn});
  if (it == m_conn_by_rq.end()) {
    ++m_unexpected;
    return;
  }
  const std::vector<transfer>& xs = m_sched.transfers();
  std::vector<connection>& conns = m_sched.connections();
  // Find the WRITE by its address: the NIC retires messages in the order it learnt them (their FIRST
  // packets' arrival), which sprayed packets can make differ from the post order.
  connection& k = conns[it->second];
  auto fit = std::find_if(k.flight.begin(), k.flight.end(),
                          [&](const connection::in_flight& x) { return x.dst_addr == m.va; });
  if (fit == k.flight.end() || m.bytes != xs[fit->xfer].bytes) {
    ++m_unexpected;
    return;
  }
  const connection::in_flight f = *fit;
  k.flight.erase(fit);
  const transfer& t = xs[f.xfer];
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
    if (m_check)
      reduce(dst_mem + t.reduce_addr, dst_mem + (first ? t.base_addr : t.reduce_addr), dst_mem + f.dst_addr, t.bytes);
    const picoseconds start = core::max(ready, me.reduce_free);
    me.reduce_free = start + picoseconds(uint64_t(std::llround(double(t.bytes) * m_reduce_ps_per_byte)));
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
      connection& c = conns[xs[nx].conn];
      c.ready.push_back(nx);
      try_post(c);
    }
  }
  // Under mpirun the iteration's end is a global condition, found at a window's end (window_end).
  if (++m_placed == xs.size() && !m_so) end_iteration();
}

void collective_engine::reduce(uint8_t* out, const uint8_t* a, const uint8_t* b, uint64_t bytes) const {
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

void collective_engine::end_iteration() {
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

uint8_t* collective_engine::mem(uint32_t r) { return fab().hosts()[m_ranks[r].host].mem->data(); }

const uint8_t* collective_engine::send_range(uint32_t r, uint64_t off, uint64_t len) {
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

bool collective_engine::here(uint32_t r) const { return !m_so || m_so->owns_host(m_ranks[r].host); }

void collective_engine::send_record(uint32_t to_rank, const record& rec) {
  std::vector<uint8_t>& out = m_out.at(size_t(m_so->host_rank(m_ranks[to_rank].host)));
  const size_t at = out.size();
  out.resize(at + sizeof(record));
  std::memcpy(out.data() + at, &rec, sizeof(record));
}

void collective_engine::prepare_check() {
  if (!m_check) return;
  const uint64_t bytes = m_results[m_size].bytes;
  const uint32_t root = m_sched.root();
  for (uint32_t r = 0; r < m_n; ++r)
    if (here(r)) std::memset(mem(r) + m_ranks[r].recv, 0, bytes);
  for (uint32_t r = 0; r < m_n; ++r) {
    if (!here(r)) continue;
    const uint64_t off = m_sched.part_off(r, bytes), len = m_sched.part_len(r, bytes);
    if (m_p.op == "allgather") std::memcpy(mem(r) + m_ranks[r].recv + off, mem(r) + m_ranks[r].send, len);
    if (m_p.op == "alltoall") std::memcpy(mem(r) + m_ranks[r].recv + off, mem(r) + m_ranks[r].send + off, len);
  }
  if (m_p.op == "broadcast" && here(root))
    std::memcpy(mem(root) + m_ranks[root].recv, mem(root) + m_ranks[root].send, bytes);
}

uint64_t collective_engine::check_result(uint64_t bytes) {
  if (m_sharp) {
    const collective_sharp::check_counts c = m_sharp_path->check(fab(), m_ranks, bytes);
    m_result_checked += c.checked_bytes;
    return c.wrong;
  }
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
  auto off = [&](uint32_t c) { return m_sched.part_off(c, bytes); };
  auto len = [&](uint32_t c) { return m_sched.part_len(c, bytes); };
  const std::string& op = m_p.op;
  if (reduces(op)) {
    std::memcpy(ref.data(), send_range(0, 0, bytes), bytes);
    for (uint32_t r = 1; r < m_n; ++r) reduce(ref.data(), ref.data(), send_range(r, 0, bytes), bytes);
    for (uint32_t r = 0; r < m_n; ++r) {
      if (op == "allreduce")
        compare(r, 0, ref.data(), bytes);
      else
        compare(r, off(r), ref.data() + off(r), len(r));
    }
  } else if (op == "allgather") {
    for (uint32_t r = 0; r < m_n; ++r)
      for (uint32_t c = 0; c < m_n && here(r); ++c) compare(r, off(c), send_range(c, 0, len(c)), len(c));
  } else if (op == "alltoall") {
    for (uint32_t r = 0; r < m_n; ++r)
      for (uint32_t c = 0; c < m_n && here(r); ++c) compare(r, off(c), send_range(c, off(r), len(r)), len(r));
  } else {  // broadcast
    const uint8_t* root = send_range(m_sched.root(), 0, bytes);
    for (uint32_t r = 0; r < m_n; ++r) compare(r, 0, root, bytes);
  }
  return wrong;
}

}  // namespace fabricsim::testbench
