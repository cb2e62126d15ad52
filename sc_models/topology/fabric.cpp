// Fabric builders: one switch, or a two-tier leaf-spine Clos.
#include "sc_models/topology/fabric.h"

namespace fabricsim::topology {

void topology_params::visit(core::param_visitor& v) {
  v.field({"kind", "", "fabric shape", 0, 0, {"single_switch", "leaf_spine"}}, kind);
  v.field({"hosts", "hosts", "single_switch: hosts on the switch", 1, 4096}, hosts);
  v.field({"leaves", "switches", "leaf_spine: leaf switches", 1, 1024}, leaves);
  v.field({"hosts_per_leaf", "hosts", "leaf_spine: hosts under each leaf", 1, 1024}, hosts_per_leaf);
  v.field({"spines", "switches", "leaf_spine: spine switches (one uplink from every leaf to each)", 1, 1024}, spines);
}

std::string host_name(size_t index) { return "h" + std::to_string(index); }

std::string host_names(size_t hosts) { return hosts == 0 ? "none" : "h0 .. " + host_name(hosts - 1); }

std::optional<size_t> host_index(const std::string& name, size_t hosts) {
  // At most 19 digits fit any size_t; the round trip through host_name() rejects leading zeros.
  if (name.size() < 2 || name.size() > 20 || name[0] != 'h' ||
      name.find_first_not_of("0123456789", 1) != std::string::npos)
    return std::nullopt;
  const size_t index = size_t(std::stoull(name.substr(1)));
  if (index >= hosts || host_name(index) != name) return std::nullopt;
  return index;
}

size_t leaf_of(const topology_params& topo, size_t index) {
  return topo.kind == "leaf_spine" ? index / topo.hosts_per_leaf : 0;
}

namespace {
core::ip_address host_ip(size_t i) { return core::ip_address::v4((10u << 24) + uint32_t(i) + 1); }  // 10.0.0.1 ...
uint64_t host_mac(size_t i) { return 0x02'00'00'00'00'00ull | (0x10000 + i); }
}  // namespace

fabric::fabric(const topology_params& topo, const core::link_params& link, const sw::oq_switch_params& swp,
               const nic::supernic_params& nicp, const std::map<std::string, nic::supernic_params>& nic_overrides,
               const std::vector<uint64_t>& memory_bytes, core::sim_context& ctx)
    : m_link_params(link), m_ctx(ctx) {
  const size_t n = topo.host_count();
  core::require(memory_bytes.size() == n, "fabric", "memory sizes given for " + std::to_string(memory_bytes.size()) +
                                                        " hosts, the topology has " + std::to_string(n));
  for (const auto& override_entry : nic_overrides)
    core::require(host_index(override_entry.first, n).has_value(), "nic_overrides",
                  "no host named '" + override_entry.first + "' (hosts are " + host_names(n) + ")");
  m_hosts.resize(n);
  for (size_t i = 0; i < n; ++i) {
    host& h = m_hosts[i];
    h.name = host_name(i);
    h.ip = host_ip(i);
    auto ov = nic_overrides.find(h.name);
    h.mem = std::make_unique<memory::host_memory>((h.name + "_mem").c_str(), memory_bytes[i]);
    h.nic = std::make_unique<nic::supernic>((h.name + "_nic").c_str(), ov == nic_overrides.end() ? nicp : ov->second,
                                            h.ip, host_mac(i), ctx);
    h.nic->dma.bind(h.mem->socket);
  }

  if (topo.kind == "single_switch") {
    m_switches.push_back(std::make_unique<sw::oq_switch>("sw0", swp, unsigned(n), ctx));
    sw::oq_switch& s = *m_switches[0];
    for (size_t i = 0; i < n; ++i) {
      auto [up, down] = cable(m_hosts[i].name, "sw0");
      m_hosts[i].nic->connect(*up);
      up->bind(s, unsigned(i));
      s.connect_port(unsigned(i), *down);
      down->bind(*m_hosts[i].nic, 0);
    }
    for (size_t i = 0; i < n; ++i) s.add_route(m_hosts[i].ip, {unsigned(i)});
    return;
  }

  // Leaf-spine: leaf l has ports [0, hosts_per_leaf) to its hosts and [hosts_per_leaf, +spines) up.
  const size_t leaves = topo.leaves, hpl = topo.hosts_per_leaf, spines = topo.spines;
  for (size_t l = 0; l < leaves; ++l)
    m_switches.push_back(
        std::make_unique<sw::oq_switch>(("leaf" + std::to_string(l)).c_str(), swp, unsigned(hpl + spines), ctx));
  for (size_t s = 0; s < spines; ++s)
    m_switches.push_back(
        std::make_unique<sw::oq_switch>(("spine" + std::to_string(s)).c_str(), swp, unsigned(leaves), ctx));
  for (size_t i = 0; i < n; ++i) {
    sw::oq_switch& leaf = *m_switches[i / hpl];
    auto [up, down] = cable(m_hosts[i].name, leaf.name());
    m_hosts[i].nic->connect(*up);
    up->bind(leaf, unsigned(i % hpl));
    leaf.connect_port(unsigned(i % hpl), *down);
    down->bind(*m_hosts[i].nic, 0);
  }
  for (size_t l = 0; l < leaves; ++l) {
    for (size_t s = 0; s < spines; ++s) {
      sw::oq_switch& leaf = *m_switches[l];
      sw::oq_switch& spine = *m_switches[leaves + s];
      auto [up, down] = cable(leaf.name(), spine.name());
      leaf.connect_port(unsigned(hpl + s), *up);
      up->bind(spine, unsigned(l));
      spine.connect_port(unsigned(l), *down);
      down->bind(leaf, unsigned(hpl + s));
    }
  }
  std::vector<unsigned> uplinks;
  for (size_t s = 0; s < spines; ++s) uplinks.push_back(unsigned(hpl + s));
  for (size_t i = 0; i < n; ++i) {
    const size_t home = i / hpl;
    for (size_t l = 0; l < leaves; ++l) {
      if (l == home)
        m_switches[l]->add_route(m_hosts[i].ip, {unsigned(i % hpl)});
      else
        m_switches[l]->add_route(m_hosts[i].ip, uplinks);
    }
    for (size_t s = 0; s < spines; ++s) m_switches[leaves + s]->add_route(m_hosts[i].ip, {unsigned(home)});
  }
}

fabric::~fabric() = default;

std::pair<core::link*, core::link*> fabric::cable(const std::string& a, const std::string& b) {
  m_links.push_back(std::make_unique<core::link>((a + "_to_" + b).c_str(), m_link_params, m_ctx));
  core::link* ab = m_links.back().get();
  m_links.push_back(std::make_unique<core::link>((b + "_to_" + a).c_str(), m_link_params, m_ctx));
  return {ab, m_links.back().get()};
}

}  // namespace fabricsim::topology
