// The SHARP path of a collective: the aggregation tree, the hosts' SHARP ends, the results' check.
#include "testbench/collective_sharp.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>

#include "sc_models/core/rng.h"
#include "sc_models/switch/quantum/quantum_switch.h"
#include "sc_models/topology/fabric.h"
#include "testbench/collective_ops.h"
#include "testbench/scale_out.h"

namespace fabricsim::testbench {

using core::picoseconds;

collective_sharp::collective_sharp(const collective_params& p, const sw::sharp_params& sharp, uint64_t mtu_bytes,
                                   picoseconds start_latency, picoseconds rx_latency)
    : m_p(p),
      m_elt(dtype_bytes(p.dtype)),
      m_params(sharp),
      m_mtu(mtu_bytes),
      m_start_latency(start_latency),
      m_rx_latency(rx_latency) {}

sw::sharp_dtype collective_sharp::dtype() const {
  return m_p.dtype == "int32"      ? sw::sharp_dtype::int32
         : m_p.dtype == "bfloat16" ? sw::sharp_dtype::bf16
                                   : sw::sharp_dtype::fp32;
}

double collective_sharp::gamma() const {
  const double u = m_p.dtype == "bfloat16" ? std::ldexp(1.0, -8) : std::ldexp(1.0, -24);
  const double k = double(m_n - 1);
  return k * u / (1.0 - k * u);
}

namespace {

// Member r's float source element i (elaborate fills it, send_block regenerates it): finite, in [-1, 1).
float source_value(uint64_t stream, uint64_t i) {
  return float(double(core::splitmix64(stream + i) >> 40) / double(1ull << 24) * 2.0 - 1.0);
}

uint64_t float_stream(uint64_t seed, uint32_t r) {
  return core::stream_seed(seed, "collective", "sharp_rank" + std::to_string(r));
}

}  // namespace

sw::sharp_tree collective_sharp::tree_over(topology::fabric& fab, const std::vector<size_t>& hosts,
                                           size_t root_choice) {
  // From the layout alone, so that every process has the same tree whichever switches it builds.
  const topology::fabric_layout& lay = fab.layout();
  std::vector<sw::sharp_cable> cables;
  for (const auto& c : lay.cables)
    if (c.a >= lay.hosts && c.b >= lay.hosts) cables.push_back({c.a - lay.hosts, c.a_port, c.b - lay.hosts, c.b_port});
  std::vector<std::pair<size_t, unsigned>> members;
  members.reserve(hosts.size());
  for (size_t h : hosts) members.push_back({lay.host_leaf.at(h), lay.host_port.at(h)});
  sw::sharp_tree tree = sw::build_sharp_tree(lay.switches.size(), cables, members, root_choice);
  for (sw::sharp_tree_node& node : tree.nodes) {
    auto& d = fab.switches().at(node.switch_index);
    if (!d) continue;  // another process builds it
    node.sw = d->sharp_switch();
    if (node.sw == nullptr) throw std::logic_error("collective.algo sharp on a fabric that is not all quantum_x800");
  }
  return tree;
}

void collective_sharp::build(sw::sharp_tree tree, topology::fabric& fab, const std::vector<size_t>& hosts,
                             const std::vector<uint8_t*>& memory, const std::vector<uint64_t>& slots) {
  m_n = uint32_t(hosts.size());
  m_members = hosts;
  m_memory = memory;
  m_tree = std::move(tree);
  core::sim_context* ctx = nullptr;
  for (size_t i = 0; i < m_tree.nodes.size(); ++i) {
    const sw::sharp_tree_node& node = m_tree.nodes[i];
    if (node.sw == nullptr) {  // another process simulates this switch and its unit
      m_aggs.push_back(nullptr);
      continue;
    }
    sw::sharp_params p = m_params;
    if (!slots.empty()) p.slots = slots[i];
    m_aggs.push_back(std::make_unique<sw::sharp_aggregator>(*node.sw, p, node, node.sw->ctx()));
    node.sw->add_sharp(m_aggs.back().get());
    ctx = &node.sw->ctx();
  }
  for (uint32_t r = 0; r < m_n; ++r) {
    topology::host& h = fab.hosts()[hosts[r]];
    if (!h.built()) {
      m_hosts.push_back(nullptr);
      continue;
    }
    // A member's leaf is on its process (a host stays with its leaf under InfiniBand): a unit was made here.
    if (ctx == nullptr) throw std::logic_error("SHARP: a member host without its leaf switch in this process");
    m_hosts.push_back(std::make_unique<sw::sharp_host>(*h.nic, memory[r], m_start_latency, m_rx_latency, *ctx));
  }
}

void collective_sharp::elaborate(topology::fabric& fab, const std::vector<rank_memory>& ranks, uint64_t max_bytes,
                                 uint64_t seed, bool fill, scale_out* so) {
  std::vector<size_t> hosts;
  std::vector<uint8_t*> memory;
  for (const rank_memory& m : ranks) {
    hosts.push_back(m.host);
    topology::host& h = fab.hosts()[m.host];
    memory.push_back(h.built() ? h.mem->data() : nullptr);
  }
  m_seed = seed;
  build(tree_over(fab, hosts), fab, hosts, memory, {});
  if (so != nullptr && fill) share_buffers(*so, max_bytes);
  for (uint32_t r = 0; r < m_n; ++r) {
    if (!fill || m_p.dtype == "int32" || memory[r] == nullptr) continue;
    const uint64_t stream = float_stream(seed, r);
    uint8_t* p = memory[r] + ranks[r].send;
    for (uint64_t b = 0; b + m_elt <= max_bytes; b += m_elt) {
      const float v = source_value(stream, b / m_elt);
      if (m_elt == 4) {
        std::memcpy(p + b, &v, 4);
      } else {
        const uint16_t h16 = sw::bf16_from_float(v);
        std::memcpy(p + b, &h16, 2);
      }
    }
  }
}

void collective_sharp::share_buffers(scale_out& so, uint64_t max_bytes, uint32_t first_space) {
  // A unit's partial results leave from its buffer (up to the parent, down from the root): where the parent or
  // a child is in another process the bytes travel, named by the unit's switch, and land there in a mirror.
  const auto built = [&](int i) { return m_tree.nodes[size_t(i)].sw != nullptr; };
  for (size_t i = 0; i < m_tree.nodes.size(); ++i)
    if (m_aggs[i]) {
      m_aggs[i]->reserve(max_bytes);
      so.add_payload_space(first_space + uint32_t(m_tree.nodes[i].switch_index), m_aggs[i]->buffer(),
                           m_aggs[i]->buffer_bytes());
    }
  std::vector<bool> mirrored(m_tree.nodes.size(), false);
  for (size_t c = 1; c < m_tree.nodes.size(); ++c) {
    const int p = m_tree.nodes[c].parent;
    if (built(int(c)) != built(p)) mirrored[built(p) ? c : size_t(p)] = true;
  }
  for (size_t i = 0; i < m_tree.nodes.size(); ++i)
    if (mirrored[i]) {
      m_mirrors.emplace_back(new uint8_t[std::max<uint64_t>(max_bytes, 1)]);  // untouched until bytes land
      so.add_payload_mirror(first_space + uint32_t(m_tree.nodes[i].switch_index), m_mirrors.back().get(), max_bytes);
    }
}

uint32_t collective_sharp::next_op() {
  m_op += m_op_stride;
  m_done = 0;
  return m_op;
}

void collective_sharp::start(const std::vector<rank_memory>& ranks, uint64_t bytes, bool check, picoseconds at) {
  const uint32_t chunk = uint32_t(m_mtu);  // one chunk per packet: the MTU
  const uint32_t op = next_op();
  for (auto& a : m_aggs)
    if (a) a->start_op(op, bytes, chunk, dtype(), check);
  for (uint32_t r = 0; r < m_n; ++r)
    if (m_hosts[r])
      m_hosts[r]->start(op, ranks[r].send, ranks[r].recv, bytes, chunk, check, at,
                        [this](picoseconds t) { on_rank_done(t, ++m_done == m_n); });
}

void collective_sharp::start(uint64_t send_addr, uint64_t recv_addr, uint64_t bytes, bool data, picoseconds at) {
  std::vector<rank_memory> same(m_n);
  for (rank_memory& m : same) {
    m.send = send_addr;
    m.recv = recv_addr;
  }
  start(same, bytes, data, at);
}

const uint8_t* collective_sharp::send_block(uint32_t r, uint64_t send_addr, uint64_t off, uint64_t len,
                                            std::vector<uint8_t>& scratch) const {
  if (m_memory[r] != nullptr) return m_memory[r] + send_addr + off;
  scratch.resize(len);
  if (m_p.dtype == "int32") {  // the engine's fill: 8-byte words of the rank's stream (collective_engine)
    const uint64_t stream = core::stream_seed(m_seed, "collective", "rank" + std::to_string(r));
    for (uint64_t i = 0; i < len; ++i) {
      const uint64_t b = off + i, v = core::splitmix64(stream + b / 8);
      scratch[i] = uint8_t(v >> (8 * (b % 8)));
    }
    return scratch.data();
  }
  const uint64_t stream = float_stream(m_seed, r);
  for (uint64_t i = 0; i < len; i += m_elt) {
    const float v = source_value(stream, (off + i) / m_elt);
    if (m_elt == 4) {
      std::memcpy(&scratch[i], &v, 4);
    } else {
      const uint16_t h16 = sw::bf16_from_float(v);
      std::memcpy(&scratch[i], &h16, 2);
    }
  }
  return scratch.data();
}

// Each element summed over the ranks in rank order in double precision (exact for these n and inputs).
// int32: equal bit for bit (wrapping sum). fp32 and bf16: within gamma_(n-1) sum|x_i|, gamma_k = k u / (1 -
// k u), u = 2^-24 (fp32) or 2^-8 (bf16): the bound on the rounding error of any order of n-1 rounded
// additions (Higham, Accuracy and Stability of Numerical Algorithms, 2nd ed., sec. 4.2), whatever order the
// switches added in. Under mpirun each process checks the results of the members it builds, against the
// sources of all of them (those of other processes regenerated from their streams, a block at a time).
collective_sharp::check_counts collective_sharp::check(topology::fabric& /*fab*/, const std::vector<rank_memory>& ranks,
                                                       uint64_t bytes) {
  check_counts out;
  const uint64_t count = bytes / m_elt;
  const double g = gamma();
  double worst = 0.0;
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
  constexpr uint64_t block_elements = 16384;
  std::vector<std::vector<uint8_t>> scratch(m_n);
  std::vector<const uint8_t*> src(m_n);
  for (uint64_t i0 = 0; i0 < count; i0 += block_elements) {
    const uint64_t n_el = std::min(block_elements, count - i0);
    for (uint32_t r = 0; r < m_n; ++r) src[r] = send_block(r, ranks[r].send, i0 * m_elt, n_el * m_elt, scratch[r]);
    for (uint64_t k = 0; k < n_el; ++k) {
      const uint64_t off = (i0 + k) * m_elt, in = k * m_elt;
      if (m_p.dtype == "int32") {
        uint32_t sum = 0, x;
        for (uint32_t r = 0; r < m_n; ++r) {
          std::memcpy(&x, src[r] + in, 4);
          sum += x;
        }
        for (uint32_t r = 0; r < m_n; ++r) {
          if (m_memory[r] == nullptr) continue;
          std::memcpy(&x, m_memory[r] + ranks[r].recv + off, 4);
          out.wrong += x != sum;
        }
        continue;
      }
      double sum = 0.0, abs_sum = 0.0;
      for (uint32_t r = 0; r < m_n; ++r) {
        const double x = load(src[r] + in);
        sum += x;
        abs_sum += std::fabs(x);
      }
      const double tol = g * abs_sum;
      for (uint32_t r = 0; r < m_n; ++r) {
        if (m_memory[r] == nullptr) continue;
        const double err = std::fabs(load(m_memory[r] + ranks[r].recv + off) - sum);
        out.wrong += !(err <= tol);  // NaN counts as wrong
        if (abs_sum > 0) worst = std::max(worst, err / abs_sum);
      }
    }
  }
  m_worst = std::max(m_worst, worst);
  uint64_t here = 0;
  for (uint8_t* m : m_memory) here += m != nullptr;
  out.checked_bytes = count * m_elt * here;  // every result of this process's members, element by element
  return out;
}

nlohmann::json collective_sharp::report(topology::fabric& fab, scale_out* so) const {
  const bool cut = so != nullptr && so->distributed();
  nlohmann::json j;
  j["root"] = m_tree.nodes.empty() ? std::string() : fab.switch_name(m_tree.nodes[0].switch_index);
  j["chunk_bytes"] = m_mtu;
  j["tflops"] = m_params.tflops;
  j["latency_ns"] = m_params.latency_ns;
  j["slots"] = m_params.slots;
  j["float_tolerance"] = m_p.dtype == "int32" ? 0.0 : gamma();
  // The largest over the processes: a non-negative double's bits order as the double does.
  double worst = m_worst;
  if (cut) {
    uint64_t bits;
    std::memcpy(&bits, &worst, 8);
    bits = so->max(bits);
    std::memcpy(&worst, &bits, 8);
  }
  j["max_relative_error"] = worst;
  // Each unit's entry from the process that simulates its switch.
  nlohmann::json mine = nlohmann::json::object();
  for (size_t i = 0; i < m_aggs.size(); ++i) {
    if (!m_aggs[i]) continue;
    const auto& c = m_aggs[i]->counters();
    mine[std::to_string(i)] = {{"switch", m_aggs[i]->name()},
                               {"depth", m_tree.nodes[i].depth},
                               {"children", m_aggs[i]->children()},
                               {"ops", c.ops},
                               {"pieces", c.pieces},
                               {"bytes_reduced", c.bytes_reduced},
                               {"slot_waits", c.slot_waits},
                               {"slot_wait_us", double(c.slot_wait_ps) * 1e-6},
                               {"max_slots_used", c.max_slots_used},
                               {"results_sent_down", c.replicated},
                               {"unexpected", c.unexpected}};
  }
  if (cut)
    for (const nlohmann::json& other : so->gather(mine)) mine.update(other);
  nlohmann::json sws = nlohmann::json::array();
  for (size_t i = 0; i < m_tree.nodes.size(); ++i) sws.push_back(mine.at(std::to_string(i)));
  j["switches"] = std::move(sws);
  // Credit accounting on every hop of the tree: sends without credit (switch ports and HCAs) and packets
  // that arrived beyond a receive buffer. Both 0 when credits are honoured.
  std::vector<uint64_t> sums{0, 0, 0};  // host_unexpected, violations, overruns
  for (const auto& h : m_hosts)
    if (h) sums[0] += h->unexpected();
  for (const sw::sharp_tree_node& node : m_tree.nodes)
    for (unsigned i = 0; node.sw != nullptr && i < node.sw->ports(); ++i)
      if (node.sw->connected(i)) {
        sums[1] += node.sw->port(i).sender().violations();
        sums[2] += node.sw->receiver(i).overruns();
      }
  for (size_t h : m_members)
    if (fab.hosts()[h].built()) sums[1] += fab.hosts()[h].nic->ib_sender().violations();
  if (cut) so->sum(sums);
  j["host_unexpected"] = sums[0];
  j["credit_violations"] = sums[1];
  j["credit_overruns"] = sums[2];
  return j;
}

}  // namespace fabricsim::testbench
