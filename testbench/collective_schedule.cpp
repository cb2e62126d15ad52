// The schedule of a collective: its queue pairs and one iteration's dependency graph of RDMA WRITEs.
#include "testbench/collective_schedule.h"

#include <algorithm>
#include <string>

#include "testbench/collective_ops.h"

namespace fabricsim::testbench {

collective_schedule::collective_schedule(const collective_params& p, uint32_t ranks)
    : m_p(p), m_n(ranks), m_sharp(p.algo == "sharp") {
  m_elt = dtype_bytes(m_p.dtype);
  m_slice = std::max<uint64_t>(m_elt, m_p.chunk_bytes / m_elt * m_elt);
  m_root = m_p.op == "broadcast" ? uint32_t(m_p.root) : 0;
}

uint32_t collective_schedule::conn(uint32_t src, uint32_t dst, bool staged) {
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

uint32_t collective_schedule::staged_in(uint32_t r) const {
  uint32_t n = 0;
  for (const connection& k : m_conns) n += k.dst == r && k.has_staging;
  return n;
}

void collective_schedule::plan_connections() {
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

std::vector<collective_schedule::slice> collective_schedule::slices(uint64_t off, uint64_t len) {
  std::vector<slice> out;
  for (uint64_t o = 0; o < len; o += m_slice) out.push_back({off + o, std::min(m_slice, len - o), m_slice_ids++});
  return out;
}

uint32_t collective_schedule::add(transfer t) {
  t.conn = m_conn_index.at({t.src, t.dst});
  m_x.push_back(std::move(t));
  return uint32_t(m_x.size() - 1);
}

void collective_schedule::depend(uint32_t before, uint32_t after) {
  m_x[before].next.push_back(after);
  ++m_x[after].deps;
}

transfer collective_schedule::direct(uint32_t src, uint64_t src_addr, uint32_t dst, uint64_t dst_addr,
                                     uint64_t bytes) const {
  transfer t;
  t.src = src;
  t.dst = dst;
  t.src_addr = src_addr;
  t.dst_addr = dst_addr;
  t.bytes = bytes;
  return t;
}

transfer collective_schedule::reduced(uint32_t src, uint64_t src_addr, uint32_t dst, uint64_t off, uint64_t bytes,
                                      uint32_t slice_id) const {
  transfer t = direct(src, src_addr, dst, 0, bytes);
  t.staged = true;
  t.reduce_addr = (*m_ranks)[dst].recv + off;
  t.base_addr = (*m_ranks)[dst].send + off;
  t.group = dst * m_slices_per_rank + slice_id;
  return t;
}

collective_schedule::tree collective_schedule::make_tree(uint32_t root, const std::vector<uint32_t>& parent) const {
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
std::vector<uint32_t> collective_schedule::nccl_btree_parents(uint32_t n) const {
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
std::vector<collective_schedule::tree> collective_schedule::trees() const {
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
void collective_schedule::build_tree(const tree& t, const slice& sl) {
  const std::vector<rank_memory>& ranks = *m_ranks;
  const bool red = m_p.op == "allreduce";
  std::vector<uint32_t> up(m_n, UINT32_MAX), down(m_n, UINT32_MAX);  // by rank: the WRITE out of it / into it
  if (red)
    for (size_t i = t.order.size(); i-- > 1;) {
      const uint32_t r = t.order[i];
      const uint64_t src = (t.children[r].empty() ? ranks[r].send : ranks[r].recv) + sl.off;
      up[r] = add(reduced(r, src, t.parent[r], sl.off, sl.len, sl.id));
      for (uint32_t c : t.children[r]) depend(up[c], up[r]);
    }
  for (uint32_t r : t.order)
    for (uint32_t c : t.children[r]) {
      const uint64_t src = (r == t.root && !red ? ranks[r].send : ranks[r].recv) + sl.off;
      down[c] = add(direct(r, src, c, ranks[c].recv + sl.off, sl.len));
      if (r != t.root)
        depend(down[r], down[c]);
      else if (red)
        for (uint32_t k : t.children[r]) depend(up[k], down[c]);
    }
}

void collective_schedule::build(uint64_t bytes, const std::vector<rank_memory>& ranks) {
  m_ranks = &ranks;
  m_x.clear();
  m_slice_ids = 0;
  m_slices_per_rank = uint32_t(bytes / m_slice + m_n + 1);
  const std::string& op = m_p.op;
  const uint32_t n = m_n;
  if (m_sharp) return;  // no WRITEs: the switches reduce (the engine starts the hosts' SHARP ends)
  auto S = [&](uint32_t r) { return ranks[r].send; };
  auto R = [&](uint32_t r) { return ranks[r].recv; };
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
  build_ring(bytes);
}

// Rings. Reduce-scatter: at step s rank r sends part r-1-s (its own data at s = 0, else what it reduced at
// step s-1) to r+1, which reduces it into its receive buffer; after n-1 steps rank r holds part r reduced.
// All-gather: at step t rank r sends part r-t to r+1, straight into its receive buffer.
void collective_schedule::build_ring(uint64_t bytes) {
  const std::vector<rank_memory>& ranks = *m_ranks;
  const std::string& op = m_p.op;
  const uint32_t n = m_n;
  auto S = [&](uint32_t r) { return ranks[r].send; };
  auto R = [&](uint32_t r) { return ranks[r].recv; };
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

}  // namespace fabricsim::testbench
