// SHARP aggregation trees and the switch's aggregation unit.
#include "sc_models/switch/quantum/sharp_aggregator.h"

#include <algorithm>
#include <cstring>
#include <limits>

#include "sc_models/switch/quantum/quantum_switch.h"

namespace fabricsim::sw {

using core::packet;
using core::picoseconds;

namespace {
// Tags in the `immediate` field of a packet this unit made (model state: has_immediate stays false, so it
// is not on the wire): which bookkeeping its departure closes.
constexpr uint32_t tag_up = 0u << 30;       // a partial going to the parent: frees slot (low bits)
constexpr uint32_t tag_root = 1u << 30;     // a root result going down: one copy of slot (low bits) left
constexpr uint32_t tag_replica = 2u << 30;  // a copy of a result from the parent: replica entry (low bits)
constexpr uint32_t tag_mask = 3u << 30;
constexpr uint16_t internal_port = 0xffff;  // hop_in_port of a packet made in the switch (no ingress buffer)
}  // namespace

void sharp_params::visit(core::param_visitor& v) {
  v.field({"tflops", "TFLOPS", "reduction throughput of each switch's aggregation ALU, one operation per element "
                               "reduced (Quantum-X800 class figure 14.4, press-grade)",
           1e-6, 1e6},
          tflops);
  v.field({"latency_ns", "ns", "from a chunk's last piece reduced to its partial result ready to leave (estimate)",
           0, 1e6},
          latency_ns);
  v.field({"slots", "slots", "concurrent streaming aggregation slots per switch: chunks in aggregation at once; "
                             "a chunk that finds none waits in the ingress buffer (estimate)",
           1, 1 << 20},
          slots);
}

uint32_t sharp_dtype_bytes(sharp_dtype t) { return t == sharp_dtype::bf16 ? 2 : 4; }

uint16_t bf16_from_float(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  if ((x & 0x7f800000u) == 0x7f800000u && (x & 0x007fffffu) != 0) return uint16_t((x >> 16) | 0x40u);  // quiet NaN
  const uint32_t lsb = (x >> 16) & 1u;
  x += 0x7fffu + lsb;  // round to nearest, ties to even
  return uint16_t(x >> 16);
}

float float_from_bf16(uint16_t b) {
  const uint32_t x = uint32_t(b) << 16;
  float f;
  std::memcpy(&f, &x, 4);
  return f;
}

void sharp_reduce(sharp_dtype t, uint8_t* acc, const uint8_t* in, uint64_t bytes) {
  switch (t) {
    case sharp_dtype::fp32:
      for (uint64_t i = 0; i + 4 <= bytes; i += 4) {
        float a, b;
        std::memcpy(&a, acc + i, 4);
        std::memcpy(&b, in + i, 4);
        a += b;
        std::memcpy(acc + i, &a, 4);
      }
      break;
    case sharp_dtype::bf16:
      for (uint64_t i = 0; i + 2 <= bytes; i += 2) {
        uint16_t a, b;
        std::memcpy(&a, acc + i, 2);
        std::memcpy(&b, in + i, 2);
        a = bf16_from_float(float_from_bf16(a) + float_from_bf16(b));
        std::memcpy(acc + i, &a, 2);
      }
      break;
    case sharp_dtype::int32:
      for (uint64_t i = 0; i + 4 <= bytes; i += 4) {
        uint32_t a, b;  // two's complement wrap, as the ALU's int32 adder
        std::memcpy(&a, acc + i, 4);
        std::memcpy(&b, in + i, 4);
        a += b;
        std::memcpy(acc + i, &a, 4);
      }
      break;
  }
}

// ---- tree ----

namespace {

// Switch-to-switch cables by switch: (port, neighbour switch, neighbour port), in port order.
struct tree_edge {
  unsigned port;
  size_t peer;
  unsigned peer_port;
};

sharp_tree tree_from_adjacency(const std::vector<std::vector<tree_edge>>& adj,
                               const std::vector<std::pair<size_t, unsigned>>& members, size_t root_choice) {
  const size_t n = adj.size();
  std::vector<bool> member_switch(n, false);
  for (const auto& m : members) member_switch.at(m.first) = true;
  // Breadth-first from root r: distances, parents, the port at the node towards its parent and the port at the
  // parent towards the node.
  constexpr size_t unreached = std::numeric_limits<size_t>::max();
  std::vector<size_t> best_dist, best_parent;
  std::vector<unsigned> best_parent_port, best_child_port;
  auto search = [&](size_t r) {
    best_dist.assign(n, unreached);
    best_parent.assign(n, unreached);
    best_parent_port.assign(n, 0);
    best_child_port.assign(n, 0);
    std::vector<size_t> queue{r};
    best_dist[r] = 0;
    for (size_t q = 0; q < queue.size(); ++q)
      for (const tree_edge& e : adj[queue[q]])
        if (best_dist[e.peer] == unreached) {
          best_dist[e.peer] = best_dist[queue[q]] + 1;
          best_parent[e.peer] = queue[q];
          best_parent_port[e.peer] = e.peer_port;
          best_child_port[e.peer] = e.port;
          queue.push_back(e.peer);
        }
    size_t cost = 0;
    for (size_t i = 0; i < n; ++i)
      if (member_switch[i]) cost = std::max(cost, best_dist[i]);
    return cost;
  };
  // Every candidate root; keep those whose farthest member switch is nearest.
  size_t best_cost = unreached;
  std::vector<size_t> tied;
  for (size_t r = 0; r < n; ++r) {
    const size_t cost = search(r);
    if (cost == unreached || cost > best_cost) continue;
    if (cost < best_cost) tied.clear();
    best_cost = cost;
    tied.push_back(r);
  }
  const size_t best_root = tied.empty() ? unreached : tied[tied.size() - 1 - root_choice % tied.size()];
  if (best_root == unreached)
    throw core::config_error("SHARP: the member hosts' switches are not connected to one another; no tree spans them");
  search(best_root);
  // The switches on the paths from member switches to the root.
  std::vector<int> index(n, -1);
  sharp_tree tree;
  auto join = [&](size_t s) {
    if (index[s] >= 0) return;
    index[s] = int(tree.nodes.size());
    sharp_tree_node node;
    node.switch_index = s;
    node.depth = unsigned(best_dist[s]);
    node.parent_port = s == best_root ? -1 : int(best_parent_port[s]);
    tree.nodes.push_back(node);
  };
  join(best_root);
  for (size_t s = 0; s < n; ++s)
    if (member_switch[s])
      for (size_t k = s; k != best_root; k = best_parent[k]) join(k);
  for (size_t s = 0; s < n; ++s)
    if (index[s] > 0) {
      tree.nodes[size_t(index[s])].parent = index[best_parent[s]];
      tree.nodes[size_t(index[best_parent[s]])].child_ports.push_back(best_child_port[s]);
    }
  for (const auto& m : members) tree.nodes[size_t(index[m.first])].child_ports.push_back(m.second);
  for (sharp_tree_node& node : tree.nodes) std::sort(node.child_ports.begin(), node.child_ports.end());
  return tree;
}

}  // namespace

sharp_tree build_sharp_tree(size_t switches, const std::vector<sharp_cable>& cables,
                            const std::vector<std::pair<size_t, unsigned>>& members, size_t root_choice) {
  std::vector<std::vector<tree_edge>> adj(switches);
  for (const sharp_cable& c : cables) {
    adj.at(c.a).push_back({c.a_port, c.b, c.b_port});
    adj.at(c.b).push_back({c.b_port, c.a, c.a_port});
  }
  for (auto& edges : adj)
    std::sort(edges.begin(), edges.end(), [](const tree_edge& x, const tree_edge& y) { return x.port < y.port; });
  return tree_from_adjacency(adj, members, root_choice);
}

sharp_tree build_sharp_tree(const std::vector<quantum_switch*>& switches,
                            const std::vector<std::pair<size_t, unsigned>>& members, size_t root_choice) {
  std::vector<std::vector<tree_edge>> adj(switches.size());
  for (size_t i = 0; i < switches.size(); ++i)
    for (unsigned port = 0; port < switches[i]->ports(); ++port) {
      if (!switches[i]->connected(port)) continue;
      core::link& out = switches[i]->port(port).out();
      const auto it = std::find(switches.begin(), switches.end(), dynamic_cast<quantum_switch*>(out.sink()));
      if (it != switches.end()) adj[i].push_back({port, size_t(it - switches.begin()), out.sink_port()});
    }
  sharp_tree tree = tree_from_adjacency(adj, members, root_choice);
  for (sharp_tree_node& node : tree.nodes) node.sw = switches[node.switch_index];
  return tree;
}

// ---- aggregation unit ----

sharp_aggregator::sharp_aggregator(quantum_switch& sw, const sharp_params& params, const sharp_tree_node& node,
                                   core::sim_context& ctx)
    : m_sw(sw),
      m_ctx(ctx),
      m_params(params),
      // The second and later units of a switch (trees sharing it) register their statistics apart.
      m_name(sw.sharp_units() == 0 ? std::string(sw.device_name())
                                   : std::string(sw.device_name()) + ".sharp" + std::to_string(sw.sharp_units())),
      m_parent(node.parent_port),
      m_children(node.child_ports),
      m_is_child(sw.ports(), false),
      m_ps_per_element(1.0 / (params.tflops * 1e12) * 1e12),
      m_latency(picoseconds::from_ns(params.latency_ns)),
      m_port_waiting(sw.ports(), 0) {
  core::require(!m_children.empty(), m_name, "a SHARP tree node needs at least one child");
  for (unsigned c : m_children) m_is_child.at(c) = true;
  m_slots.resize(params.slots);
  for (uint32_t s = uint32_t(params.slots); s-- > 0;) m_free.push_back(s);
  auto& st = ctx.stats;
  st.counter(m_name, "sharp.ops", "chunks", "SHARP chunks aggregated (every child's piece reduced)", &m_c.ops);
  st.counter(m_name, "sharp.bytes_reduced", "bytes", "SHARP payload bytes through the aggregation ALU",
             &m_c.bytes_reduced);
  st.counter(m_name, "sharp.slot_waits", "pieces", "SHARP pieces that waited for an aggregation slot",
             &m_c.slot_waits);
  st.counter(m_name, "sharp.slot_wait_ps", "ps", "time SHARP pieces waited for an aggregation slot",
             &m_c.slot_wait_ps);
}

void sharp_aggregator::start_op(uint32_t op, uint64_t bytes, uint32_t chunk_bytes, sharp_dtype dtype, bool data) {
  core::require(m_wait.empty() && m_alu.empty() && m_free.size() == m_slots.size(), m_name,
                "SHARP: a new operation while the previous one is still in the tree");
  m_op = op;
  m_bytes = bytes;
  m_chunk_bytes = chunk_bytes;
  m_dtype = dtype;
  m_data = data;
  if (data && m_acc.size() < bytes) m_acc.resize(bytes);
  m_slot_of.assign((bytes + chunk_bytes - 1) / chunk_bytes, -1);
}

void sharp_aggregator::reserve(uint64_t bytes) {
  if (m_acc.size() < bytes) m_acc.resize(bytes);
}

bool sharp_aggregator::can_admit(uint32_t chunk) const { return m_slot_of[chunk] >= 0 || !m_free.empty(); }

void sharp_aggregator::receive(packet* p, unsigned in_port, unsigned vl, uint32_t blocks) {
  const picoseconds t = core::now();
  const bool up = p->bth.opcode == core::bth_opcode::sharp_up;
  const bool ok = p->bth.dest_qp == m_op && p->bth.psn < m_slot_of.size() &&
                  (up ? bool(m_is_child[in_port]) : int(in_port) == m_parent);
  if (!ok) {
    ++m_c.unexpected;
    m_sw.receiver(in_port).released(vl, blocks, t);
    m_ctx.pool.release(p);
    return;
  }
  if (!up) {
    // A result from the parent: a copy to every child, after the forwarding pipeline; the ingress buffer
    // is held until the last copy has left.
    uint32_t e;
    if (m_free_replicas.empty()) {
      e = uint32_t(m_replicas.size());
      m_replicas.push_back({});
    } else {
      e = m_free_replicas.back();
      m_free_replicas.pop_back();
    }
    m_replicas[e] = {in_port, vl, blocks, uint32_t(m_children.size())};
    for (unsigned c : m_children) {
      packet* copy = m_ctx.pool.acquire();
      const uint64_t id = copy->id;
      *copy = *p;
      copy->id = id;
      copy->telemetry_slot = 0;
      send(copy, c, t + m_sw.latency(), tag_replica | e);
    }
    m_ctx.pool.release(p);
    return;
  }
  const piece pc{p, in_port, vl, blocks, t, {}};
  if (m_port_waiting[in_port] > 0 || !can_admit(p->bth.psn)) {
    ++m_c.slot_waits;
    ++m_port_waiting[in_port];
    m_wait.push_back(pc);
    return;
  }
  admit(pc, t);
}

void sharp_aggregator::admit(const piece& in, picoseconds t) {
  const uint32_t chunk = in.p->bth.psn;
  if (m_slot_of[chunk] < 0) {
    const uint32_t s = m_free.back();
    m_free.pop_back();
    m_slots[s] = slot{chunk, 0, 0};
    m_slot_of[chunk] = int32_t(s);
    m_c.max_slots_used = std::max<uint64_t>(m_c.max_slots_used, m_slots.size() - m_free.size());
  }
  // The ALU: one piece at a time, one operation per element.
  piece pc = in;
  const uint64_t elements = in.p->payload_bytes / sharp_dtype_bytes(m_dtype);
  const picoseconds start = core::max(t, m_alu_free);
  m_alu_free = start + picoseconds(uint64_t(double(elements) * m_ps_per_element + 0.5));
  pc.done = m_alu_free;
  m_alu.push_back(pc);
  if (pc.done < m_wake) {
    m_wake = pc.done;
    m_ctx.calendar.schedule(this, pc.done);
  }
}

void sharp_aggregator::on_due(picoseconds t) {
  if (t < m_wake) return;  // stale
  m_wake = picoseconds(UINT64_MAX);
  while (!m_alu.empty() && m_alu.front().done <= t) {
    const piece pc = m_alu.front();
    m_alu.pop_front();
    const uint32_t chunk = pc.p->bth.psn;
    const uint32_t s = uint32_t(m_slot_of[chunk]);
    slot& sl = m_slots[s];
    const uint64_t off = pc.p->reth.va;
    const uint32_t len = pc.p->payload_bytes;
    if (m_data && pc.p->payload != nullptr && off + len <= m_acc.size()) {
      if (sl.reduced == 0) std::memcpy(m_acc.data() + off, pc.p->payload, len);
      else sharp_reduce(m_dtype, m_acc.data() + off, pc.p->payload, len);
    }
    ++m_c.pieces;
    m_c.bytes_reduced += len;
    m_sw.receiver(pc.port).released(pc.vl, pc.blocks, t);  // consumed: its credits go back
    m_ctx.pool.release(pc.p);
    if (++sl.reduced == m_children.size()) {
      ++m_c.ops;
      complete(s, t + m_latency);
    }
  }
  if (!m_alu.empty() && m_alu.front().done < m_wake) {
    m_wake = m_alu.front().done;
    m_ctx.calendar.schedule(this, m_wake);
  }
}

packet* sharp_aggregator::result_packet(uint32_t chunk, core::bth_opcode o) {
  const uint64_t off = uint64_t(chunk) * m_chunk_bytes;
  const uint32_t len = uint32_t(std::min<uint64_t>(m_chunk_bytes, m_bytes - off));
  return make_sharp_packet(m_ctx.pool, o, m_op, chunk, off, len, m_data ? m_acc.data() + off : nullptr);
}

void sharp_aggregator::complete(uint32_t s, picoseconds ready) {
  const uint32_t chunk = m_slots[s].chunk;
  if (!root()) {
    send(result_packet(chunk, core::bth_opcode::sharp_up), unsigned(m_parent), ready, tag_up | s);
    return;
  }
  m_slots[s].down_left = uint32_t(m_children.size());
  for (unsigned c : m_children) send(result_packet(chunk, core::bth_opcode::sharp_down), c, ready, tag_root | s);
}

void sharp_aggregator::send(packet* p, unsigned port, picoseconds ready, uint32_t tag) {
  p->hop_in_port = internal_port;
  p->immediate = tag;
  quantum_port& out = m_sw.port(port);
  if (p->bth.opcode == core::bth_opcode::sharp_down) ++m_c.replicated;
  out.enqueue(p, out.sl_to_vl()[p->lrh.sl & 15u], uint32_t(ib::blocks_of(p->wire().value)), ready);
}

void sharp_aggregator::departed(packet* p, picoseconds t) {
  const uint32_t tag = p->immediate & tag_mask, index = p->immediate & ~tag_mask;
  if (tag == tag_up) {
    free_slot(index, t);
  } else if (tag == tag_root) {
    if (--m_slots[index].down_left == 0) free_slot(index, t);
  } else {
    replica_entry& e = m_replicas[index];
    if (--e.left == 0) {
      m_sw.receiver(e.port).released(e.vl, e.blocks, t);
      m_free_replicas.push_back(index);
    }
  }
}

void sharp_aggregator::free_slot(uint32_t s, picoseconds t) {
  m_slot_of[m_slots[s].chunk] = -1;
  m_free.push_back(s);
  grant_waiting(t);
}

void sharp_aggregator::grant_waiting(picoseconds t) {
  // In arrival order; a piece behind a still-waiting piece of its own port keeps waiting (its port is a FIFO).
  if (m_wait.empty()) return;
  std::vector<bool> blocked(m_port_waiting.size(), false);
  for (auto it = m_wait.begin(); it != m_wait.end();) {
    if (!blocked[it->port] && can_admit(it->p->bth.psn)) {
      const piece pc = *it;
      it = m_wait.erase(it);
      --m_port_waiting[pc.port];
      m_c.slot_wait_ps += (t - pc.since).value;
      admit(pc, t);
    } else {
      blocked[it->port] = true;
      ++it;
    }
  }
}

}  // namespace fabricsim::sw
