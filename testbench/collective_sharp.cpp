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

sw::sharp_tree collective_sharp::tree_over(topology::fabric& fab, const std::vector<size_t>& hosts,
                                           size_t root_choice) {
  std::vector<sw::quantum_switch*> switches;
  for (auto& d : fab.switches()) {
    sw::quantum_switch* q = d ? d->sharp_switch() : nullptr;
    if (q == nullptr) throw std::logic_error("collective.algo sharp on a fabric that is not all quantum_x800");
    switches.push_back(q);
  }
  std::vector<std::pair<size_t, unsigned>> members;
  members.reserve(hosts.size());
  for (size_t h : hosts) members.push_back({fab.hosts()[h].leaf, fab.host_port(h)});
  return sw::build_sharp_tree(switches, members, root_choice);
}

void collective_sharp::build(sw::sharp_tree tree, topology::fabric& fab, const std::vector<size_t>& hosts,
                             const std::vector<uint8_t*>& memory, const std::vector<uint64_t>& slots) {
  m_n = uint32_t(hosts.size());
  m_members = hosts;
  m_tree = std::move(tree);
  for (size_t i = 0; i < m_tree.nodes.size(); ++i) {
    const sw::sharp_tree_node& node = m_tree.nodes[i];
    sw::sharp_params p = m_params;
    if (!slots.empty()) p.slots = slots[i];
    m_aggs.push_back(std::make_unique<sw::sharp_aggregator>(*node.sw, p, node, node.sw->ctx()));
    node.sw->add_sharp(m_aggs.back().get());
  }
  for (uint32_t r = 0; r < m_n; ++r)
    m_hosts.push_back(std::make_unique<sw::sharp_host>(*fab.hosts()[hosts[r]].nic, memory[r], m_start_latency,
                                                       m_rx_latency, m_tree.nodes.front().sw->ctx()));
}

void collective_sharp::elaborate(topology::fabric& fab, const std::vector<rank_memory>& ranks, uint64_t max_bytes,
                                 uint64_t seed, bool fill) {
  std::vector<size_t> hosts;
  std::vector<uint8_t*> memory;
  for (const rank_memory& m : ranks) {
    hosts.push_back(m.host);
    memory.push_back(fab.hosts()[m.host].mem->data());
  }
  build(tree_over(fab, hosts), fab, hosts, memory, {});
  for (uint32_t r = 0; r < m_n; ++r) {
    if (!fill || m_p.dtype == "int32") continue;
    uint64_t state = core::stream_seed(seed, "collective", "sharp_rank" + std::to_string(r));
    uint8_t* p = memory[r] + ranks[r].send;
    for (uint64_t b = 0; b + m_elt <= max_bytes; b += m_elt) {
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

uint32_t collective_sharp::next_op() {
  m_op += m_op_stride;
  m_done = 0;
  return m_op;
}

void collective_sharp::start(const std::vector<rank_memory>& ranks, uint64_t bytes, bool check, picoseconds at) {
  const uint32_t chunk = uint32_t(m_mtu);  // one chunk per packet: the MTU
  const uint32_t op = next_op();
  for (auto& a : m_aggs) a->start_op(op, bytes, chunk, dtype(), check);
  for (uint32_t r = 0; r < m_n; ++r)
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

// Each element summed over the ranks in rank order in double precision (exact for these n and inputs).
// int32: equal bit for bit (wrapping sum). fp32 and bf16: within gamma_(n-1) sum|x_i|, gamma_k = k u / (1 -
// k u), u = 2^-24 (fp32) or 2^-8 (bf16): the bound on the rounding error of any order of n-1 rounded
// additions (Higham, Accuracy and Stability of Numerical Algorithms, 2nd ed., sec. 4.2), whatever order the
// switches added in.
collective_sharp::check_counts collective_sharp::check(topology::fabric& fab, const std::vector<rank_memory>& ranks,
                                                       uint64_t bytes) {
  auto mem = [&](uint32_t r) { return fab.hosts()[ranks[r].host].mem->data(); };
  check_counts out;
  const uint64_t count = bytes / m_elt;
  const double g = gamma();
  double worst = 0.0;
  for (uint64_t i = 0; i < count; ++i) {
    const uint64_t off = i * m_elt;
    if (m_p.dtype == "int32") {
      uint32_t sum = 0, x;
      for (uint32_t r = 0; r < m_n; ++r) {
        std::memcpy(&x, mem(r) + ranks[r].send + off, 4);
        sum += x;
      }
      for (uint32_t r = 0; r < m_n; ++r) {
        std::memcpy(&x, mem(r) + ranks[r].recv + off, 4);
        out.wrong += x != sum;
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
      const double x = load(mem(r) + ranks[r].send + off);
      sum += x;
      abs_sum += std::fabs(x);
    }
    const double tol = g * abs_sum;
    for (uint32_t r = 0; r < m_n; ++r) {
      const double err = std::fabs(load(mem(r) + ranks[r].recv + off) - sum);
      out.wrong += !(err <= tol);  // NaN counts as wrong
      if (abs_sum > 0) worst = std::max(worst, err / abs_sum);
    }
  }
  m_worst = std::max(m_worst, worst);
  out.checked_bytes = count * m_elt * m_n;  // every rank's result, element by element
  return out;
}

nlohmann::json collective_sharp::report(topology::fabric& fab) const {
  nlohmann::json j;
  j["root"] = m_tree.nodes.empty() ? std::string() : std::string(m_tree.nodes[0].sw->device_name());
  j["chunk_bytes"] = m_mtu;
  j["tflops"] = m_params.tflops;
  j["latency_ns"] = m_params.latency_ns;
  j["slots"] = m_params.slots;
  j["float_tolerance"] = m_p.dtype == "int32" ? 0.0 : gamma();
  j["max_relative_error"] = m_worst;
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
  for (const auto& h : m_hosts) unexpected += h->unexpected();
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
  for (size_t h : m_members) violations += fab.hosts()[h].nic->ib_sender().violations();
  j["credit_violations"] = violations;
  j["credit_overruns"] = overruns;
  return j;
}

}  // namespace fabricsim::testbench
