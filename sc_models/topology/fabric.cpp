// Fabric builders: one switch, a two-tier leaf-spine Clos, a three-tier Clos of pods under a core layer,
// a rail-optimized two-tier fabric, and a dragonfly (dragonfly.h). Wiring and naming: docs/topology.md.
#include "sc_models/topology/fabric.h"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <set>
#include <stdexcept>

#include "sc_models/topology/dragonfly.h"
#include "sc_models/topology/multi_site.h"

namespace fabricsim::topology {

void topology_params::visit(core::param_visitor& v) {
  v.field(
      {"kind",
       "",
       "fabric shape (docs/topology.md)",
       0,
       0,
       {"single_switch", "leaf_spine", "three_tier", "rail_optimized", "dragonfly", "multi_site", "graph", "nvl72"}},
      kind);
  v.field({"file", "",
           "graph: the GraphML (.graphml) or Graphviz (.dot, .gv) file of the wiring, relative to the "
           "scenario file (docs/topology.md)"},
          file);
  v.field({"hosts", "hosts", "single_switch: hosts on the switch", 1, 4096}, hosts);
  v.field({"pods", "pods", "three_tier: pods, each a leaf-spine of `leaves` x `spines`", 1, 256}, pods);
  v.field({"leaves", "switches", "leaf_spine: leaf switches; three_tier: leaves per pod", 1, 1024}, leaves);
  v.field({"hosts_per_leaf", "hosts",
           "leaf_spine, three_tier: hosts under each leaf; rail_optimized: servers per group (one NIC each per "
           "rail leaf)",
           1, 1024},
          hosts_per_leaf);
  v.field({"spines", "switches",
           "leaf_spine, rail_optimized: spine switches; three_tier: spines per pod (and core planes)", 1, 1024},
          spines);
  v.field({"links_per_spine", "links", "parallel cables from every leaf to every spine", 1, 64}, links_per_spine);
  v.field({"cores", "switches",
           "three_tier: core (super-spine) switches; a multiple of spines, cores / spines per plane", 1, 4096},
          cores);
  v.field({"rails", "NICs",
           "rail_optimized: NICs per server (a system preset: GPUs per NVLink domain, 72 for NVL72); NIC r of a "
           "server hangs off the group's rail-r leaf",
           1, 576},
          rails);
  v.field({"groups", "groups", "rail_optimized: groups of hosts_per_leaf servers, each group with one leaf per rail",
           1, 1024},
          groups);
  v.field({"routers_per_group", "switches", "dragonfly: routers in a group (a), joined all-to-all by local cables", 1,
           1024},
          routers_per_group);
  v.field({"hosts_per_router", "hosts", "dragonfly: hosts on each router (p)", 1, 1024}, hosts_per_router);
  v.field({"global_links_per_router", "links",
           "dragonfly: global cables from each router to routers of other groups (h)", 1, 1024},
          global_links_per_router);
  v.field({"dragonfly_groups", "groups",
           "dragonfly: groups (g); 0: routers_per_group x global_links_per_router + 1, one global cable between "
           "every pair of groups; fewer: g - 1 must divide a x h (parallel global cables)",
           0, 4096},
          dragonfly_groups);
  v.field(
      {"sites", "sites", "multi_site: sites, each a leaf-spine of `leaves` x `spines` with site_edges edges", 1, 64},
      sites);
  v.field({"site_edges", "switches", "multi_site: site-edge switches per site, each cabled to every spine of its site",
           1, 64},
          site_edges);
  v.field({"inter_site_links", "links",
           "multi_site: parallel long cables from edge e of a site to edge e of every other site", 1, 64},
          inter_site_links);
  v.field(
      {"inter_site_km", "km", "multi_site: length of every cable between sites (metro to regional DCI)", 10.0, 100.0},
      inter_site_km);
  v.field(
      {"inter_site_gbps", "Gb/s", "multi_site: line rate of every cable between sites; 0: uplink_gbps", 0.0, 3200.0},
      inter_site_gbps);
  v.field({"edge_buffer_bytes", "bytes",
           "multi_site: shared packet buffer of each site-edge switch (switch.model spectrum4; deep-buffer DCI class, "
           "estimate)",
           65536, 1e10},
          edge_buffer_bytes);
  v.field({"site_edge_xoff_bytes", "bytes",
           "multi_site: per (ingress port, lossless priority) XOFF of each site-edge switch, sized to its deep buffer; "
           "0: switch.pfc_xoff_bytes (estimate)",
           0, 1e10},
          site_edge_xoff_bytes);
  v.field({"site_edge_xon_bytes", "bytes",
           "multi_site: a site edge's XON; 0: 3/4 of site_edge_xoff_bytes when that is set, else switch.pfc_xon_bytes",
           0, 1e10},
          site_edge_xon_bytes);
  v.field({"site_edge_ecn_kmin_bytes", "bytes",
           "multi_site: a site edge's RED line Kmin (no ECN marks below), sized to the long round trip; 0: "
           "switch.ecn_kmin_bytes (estimate)",
           0, 1e10},
          site_edge_ecn_kmin_bytes);
  v.field({"site_edge_ecn_kmax_bytes", "bytes",
           "multi_site: a site edge's RED line Kmax (every ECT frame marked at or above); 0: switch.ecn_kmax_bytes "
           "(estimate)",
           0, 1e10},
          site_edge_ecn_kmax_bytes);
  v.field({"link_gbps", "Gb/s", "line rate of every host link, and of switch-to-switch links unless uplink_gbps is set",
           1.0, 3200.0},
          link_gbps);
  v.field({"uplink_gbps", "Gb/s", "line rate of every switch-to-switch link; 0: link_gbps", 0.0, 3200.0}, uplink_gbps);
  v.field({"host_cable_m", "m", "cable length from a NIC to its leaf", 0.0, 100000.0}, host_cable_m);
  v.field({"leaf_spine_cable_m", "m", "cable length from a leaf to a spine", 0.0, 100000.0}, leaf_spine_cable_m);
  v.field({"spine_core_cable_m", "m", "three_tier: cable length from a spine to a core switch", 0.0, 100000.0},
          spine_core_cable_m);
  v.field({"local_cable_m", "m", "dragonfly: cable length between two routers of a group", 0.0, 100000.0},
          local_cable_m);
  v.field({"global_cable_m", "m", "dragonfly: cable length between routers of two groups", 0.0, 100000.0},
          global_cable_m);
}

void cable_params::visit(core::param_visitor& v) {
  v.field({"ns_per_metre", "ns/m", "propagation delay per metre of cable", 0.0, 100.0}, ns_per_metre);
  v.field({"fec_latency_ns", "ns", "RS-FEC encode plus decode latency, once per link", 0.0, 1e5}, fec_latency_ns);
  v.field({"drop_probability", "",
           "loss injection: chance that a link loses a RoCE frame (data, ACK or NAK; PFC frames never), drawn per "
           "frame from the link's seeded stream",
           0.0, 1.0},
          drop_probability);
  v.field({"drop_links", "",
           "loss injection only on these links: comma-separated exact names such as h0_to_leaf0 (docs/topology.md); "
           "empty: every link"},
          drop_links);
}

namespace {

// "topology: a leaf would have hosts_per_leaf + spines x links_per_spine = 5000 ports, above the radix limit
// of 4096; lower topology.hosts_per_leaf, topology.spines or topology.links_per_spine".
void check_radix(const char* role, const std::string& formula, uint64_t ports, const std::string& keys) {
  if (ports <= k_max_switch_ports) return;
  throw core::config_error("topology: a " + std::string(role) + " would have " + formula + " = " +
                           std::to_string(ports) + " ports, above the radix limit of " +
                           std::to_string(k_max_switch_ports) + "; lower " + keys);
}

}  // namespace

void topology_params::validate() const {
  core::check_ranges(*this, "topology");
  if (kind == "graph") {  // the file's own checks ran when it was read (graph_file.h)
    if (!graph)
      throw core::config_error(file.empty() ? "topology.file: required with topology.kind graph (a .graphml or .dot "
                                              "file; docs/topology.md)"
                                            : "topology.file: " + file + " was not read (load_graph_file)");
    return;
  }
  if (uplink_gbps > 0.0 && uplink_gbps < 1.0)
    throw core::config_error("topology.uplink_gbps: " + std::to_string(uplink_gbps) +
                             " must be 0 (same as link_gbps) or in [1, 3200] Gb/s");
  if (kind == "dragonfly") return validate_dragonfly(*this);
  if (inter_site_gbps > 0.0 && inter_site_gbps < 1.0)
    throw core::config_error("topology.inter_site_gbps: " + std::to_string(inter_site_gbps) +
                             " must be 0 (same as uplink_gbps) or in [1, 3200] Gb/s");
  if (kind == "multi_site") return validate_multi_site(*this);
  if (kind == "nvl72") return;  // the NVLink domain: the `nvlink` section's keys (nvlink_params::validate)
  const uint64_t uplinks = spines * links_per_spine;
  const std::string leaf_keys = "topology.hosts_per_leaf, topology.spines or topology.links_per_spine";
  if (kind != "single_switch")
    check_radix("leaf", "hosts_per_leaf + spines x links_per_spine", hosts_per_leaf + uplinks, leaf_keys);
  if (kind == "leaf_spine")
    check_radix("spine", "leaves x links_per_spine", leaves * links_per_spine,
                "topology.leaves or topology.links_per_spine");
  if (kind == "rail_optimized")
    check_radix("spine", "groups x rails x links_per_spine", groups * rails * links_per_spine,
                "topology.groups, topology.rails or topology.links_per_spine");
  if (kind == "three_tier") {
    if (cores % spines != 0)
      throw core::config_error("topology.cores: " + std::to_string(cores) + " is not a multiple of topology.spines (" +
                               std::to_string(spines) + "): the cores form one plane per pod spine, " +
                               "cores / spines switches each");
    check_radix("spine", "leaves x links_per_spine + cores / spines", leaves * links_per_spine + cores / spines,
                "topology.leaves, topology.links_per_spine or topology.cores");
    check_radix("core", "pods", pods, "topology.pods");
  }
  if (host_count() > k_max_hosts) {
    const char* formula = kind == "leaf_spine"   ? "leaves x hosts_per_leaf"
                          : kind == "three_tier" ? "pods x leaves x hosts_per_leaf"
                                                 : "groups x hosts_per_leaf x rails";
    throw core::config_error("topology: " + kind + " has " + formula + " = " + std::to_string(host_count()) +
                             " hosts, above the limit of " + std::to_string(k_max_hosts) + "; lower one of them");
  }
  if (switch_count() > k_max_switches) {
    const char* formula = kind == "leaf_spine"   ? "leaves + spines"
                          : kind == "three_tier" ? "pods x (leaves + spines) + cores"
                                                 : "groups x rails + spines";
    throw core::config_error("topology: " + kind + " has " + formula + " = " + std::to_string(switch_count()) +
                             " switches, above the limit of " + std::to_string(k_max_switches) + "; lower one of them");
  }
}

uint64_t topology_params::host_count() const {
  if (kind == "graph") return graph ? graph->hosts : 0;
  if (kind == "leaf_spine") return leaves * hosts_per_leaf;
  if (kind == "three_tier") return pods * leaves * hosts_per_leaf;
  if (kind == "rail_optimized") return groups * hosts_per_leaf * rails;
  if (kind == "dragonfly") return dragonfly_of(*this).hosts();
  if (kind == "multi_site") return sites * leaves * hosts_per_leaf;
  return hosts;
}

uint64_t topology_params::leaf_count() const {
  if (kind == "graph") return graph ? std::set<size_t>(graph->host_leaf.begin(), graph->host_leaf.end()).size() : 0;
  if (kind == "leaf_spine") return leaves;
  if (kind == "three_tier") return pods * leaves;
  if (kind == "rail_optimized") return groups * rails;
  if (kind == "dragonfly") return dragonfly_of(*this).routers();
  if (kind == "multi_site") return sites * leaves;
  return 1;
}

uint64_t topology_params::switch_count() const {
  if (kind == "graph") return graph ? graph->switches.size() : 0;
  if (kind == "leaf_spine" || kind == "rail_optimized") return leaf_count() + spines;
  if (kind == "three_tier") return pods * (leaves + spines) + cores;
  if (kind == "dragonfly") return dragonfly_of(*this).routers();
  if (kind == "multi_site") return sites * (leaves + spines + site_edges);
  return 1;
}

double topology_params::leaf_oversubscription() const {
  if (kind == "graph") {
    if (!graph) return 1.0;
    std::vector<double> down(graph->switches.size(), 0.0), up(graph->switches.size(), 0.0);
    for (const auto& c : graph->cables) {
      if (c.a < graph->hosts) {
        down[c.b - graph->hosts] += c.ab.rate_gbps;
      } else {
        up[c.a - graph->hosts] += c.ab.rate_gbps;
        up[c.b - graph->hosts] += c.ab.rate_gbps;
      }
    }
    double worst = 1.0;
    for (size_t s = 0; s < down.size(); ++s)
      if (down[s] > 0.0 && up[s] > 0.0) worst = std::max(worst, down[s] / up[s]);
    return worst;
  }
  if (kind == "single_switch") return 1.0;
  if (kind == "dragonfly") {
    const dragonfly_shape d = dragonfly_of(*this);
    return double(d.p) * link_gbps / (double(d.a - 1 + d.h) * uplink_rate_gbps());
  }
  return double(hosts_per_leaf) * link_gbps / (double(spines * links_per_spine) * uplink_rate_gbps());
}

core::link_params tier_link(const topology_params& topo, const cable_params& cable, tier t) {
  core::link_params lp;
  lp.fec_latency_ns = cable.fec_latency_ns;
  lp.drop_probability = cable.drop_probability;  // fabric::cable() clears it on links not in link.drop_links
  switch (t) {
    case tier::host:
      lp.rate_gbps = topo.link_gbps;
      lp.propagation_ns = topo.host_cable_m * cable.ns_per_metre;
      break;
    case tier::leaf_spine:
      lp.rate_gbps = topo.uplink_rate_gbps();
      lp.propagation_ns = topo.leaf_spine_cable_m * cable.ns_per_metre;
      break;
    case tier::spine_core:
      lp.rate_gbps = topo.uplink_rate_gbps();
      lp.propagation_ns = topo.spine_core_cable_m * cable.ns_per_metre;
      break;
    case tier::local:
      lp.rate_gbps = topo.uplink_rate_gbps();
      lp.propagation_ns = topo.local_cable_m * cable.ns_per_metre;
      break;
    case tier::global:
      lp.rate_gbps = topo.uplink_rate_gbps();
      lp.propagation_ns = topo.global_cable_m * cable.ns_per_metre;
      break;
    case tier::inter_site:
      lp.rate_gbps = topo.inter_site_gbps > 0.0 ? topo.inter_site_gbps : topo.uplink_rate_gbps();
      lp.propagation_ns = topo.inter_site_km * 1000.0 * cable.ns_per_metre;
      break;
  }
  return lp;
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
  if (topo.kind == "graph") return topo.graph->host_leaf.at(index);
  if (topo.kind == "leaf_spine" || topo.kind == "three_tier" || topo.kind == "multi_site")
    return index / topo.hosts_per_leaf;  // pod-major, site-major
  if (topo.kind == "rail_optimized") {
    const size_t group = index / topo.rails / topo.hosts_per_leaf;
    return group * topo.rails + index % topo.rails;
  }
  if (topo.kind == "dragonfly") return index / topo.hosts_per_router;  // router k / p, group-major
  return 0;
}

core::ip_address host_ip(size_t i) { return core::ip_address::v4(core::fabric_host_ip_base + uint32_t(i)); }

namespace {
uint64_t host_mac(size_t i) { return 0x02'00'00'00'00'00ull | (0x10000 + i); }
std::string num(uint64_t i) { return std::to_string(i); }
constexpr size_t k_unwired = SIZE_MAX - 1;
}  // namespace

namespace {

// Builds a layout the way the builders below describe the wiring.
class layout_builder {
 public:
  explicit layout_builder(fabric_layout& l) : m_l(l) {}
  void add_switch(const std::string& name, uint64_t ports) { m_l.switches.push_back({name, ports}); }
  void connect_host(size_t h, size_t sw, unsigned port, const core::link_params& lp) {
    m_l.host_port[h] = port;
    m_l.cables.push_back({h, m_l.hosts + sw, 0, port, "", lp, lp});
  }
  // `links` parallel cables; switch a's ports a_port, a_port + 1, ... face b's ports b_port, b_port + 1, ...
  void connect_switches(size_t a, unsigned a_port, size_t b, unsigned b_port, uint64_t links,
                        const core::link_params& lp) {
    // Parallel cables are told apart by a suffix: leaf0_to_spine1_0, leaf0_to_spine1_1, ...
    for (unsigned k = 0; k < links; ++k)
      m_l.cables.push_back({m_l.hosts + a, m_l.hosts + b, a_port + k, b_port + k,
                            links > 1 ? "_" + std::to_string(k) : "", lp, lp});
  }

 private:
  fabric_layout& m_l;
};

}  // namespace

std::string fabric_layout::device_name(size_t device) const {
  return device < hosts ? host_name(device) : switches.at(device - hosts).name;
}

std::string fabric_layout::link_name(size_t link) const {
  return device_name(link_from(link)) + "_to_" + device_name(link_to(link)) + cables[link / 2].suffix;
}

namespace {

// The wiring of the built-in kinds (docs/topology.md).
fabric_layout plan_builtin(const topology_params& topo, const cable_params& cable) {
  fabric_layout l;
  const size_t n = topo.host_count();
  l.hosts = n;
  l.host_port.resize(n);
  const bool rail = topo.kind == "rail_optimized";
  for (size_t i = 0; i < n; ++i) l.host_leaf.push_back(leaf_of(topo, i));
  layout_builder b(l);
  const core::link_params host_lp = tier_link(topo, cable, tier::host);
  const core::link_params leaf_spine_lp = tier_link(topo, cable, tier::leaf_spine);
  const uint64_t hpl = topo.hosts_per_leaf, lps = topo.links_per_spine, spines = topo.spines;

  if (topo.kind == "single_switch") {
    b.add_switch("sw0", n);
    for (size_t i = 0; i < n; ++i) b.connect_host(i, 0, unsigned(i), host_lp);
  } else if (topo.kind == "leaf_spine" || rail) {
    // Leaf l: ports [0, hosts_per_leaf) down (host or server slot), then spines x links_per_spine up, spine by
    // spine. Spine s: port l x links_per_spine + k is cable k to leaf l. rail_optimized: leaf g x rails + r
    // is the rail-r leaf of group g.
    const uint64_t leaves = topo.leaf_count();
    for (uint64_t j = 0; j < leaves; ++j) b.add_switch("leaf" + num(j), hpl + spines * lps);
    for (uint64_t sp = 0; sp < spines; ++sp) b.add_switch("spine" + num(sp), leaves * lps);
    for (size_t i = 0; i < n; ++i)
      b.connect_host(i, l.host_leaf[i], unsigned(rail ? (i / topo.rails) % hpl : i % hpl), host_lp);
    for (uint64_t j = 0; j < leaves; ++j)
      for (uint64_t sp = 0; sp < spines; ++sp)
        b.connect_switches(j, unsigned(hpl + sp * lps), leaves + sp, unsigned(j * lps), lps, leaf_spine_lp);
  } else {  // three_tier
    // Pod p is a leaf-spine (leaf ports as above; spine ports [0, leaves x links_per_spine) down). The cores
    // form `spines` planes of cores / spines switches: spine s of every pod has one cable to each core of
    // plane s (its ports after the down ports), and core c's port p faces pod p.
    const uint64_t pods = topo.pods, leaves = topo.leaves, plane = topo.cores / spines;
    const uint64_t first_spine = pods * leaves, first_core = pods * (leaves + spines);
    for (uint64_t p = 0; p < pods; ++p)
      for (uint64_t j = 0; j < leaves; ++j) b.add_switch("pod" + num(p) + "_leaf" + num(j), hpl + spines * lps);
    for (uint64_t p = 0; p < pods; ++p)
      for (uint64_t sp = 0; sp < spines; ++sp)
        b.add_switch("pod" + num(p) + "_spine" + num(sp), leaves * lps + plane);
    for (uint64_t c = 0; c < topo.cores; ++c) b.add_switch("core" + num(c), pods);
    for (size_t i = 0; i < n; ++i) b.connect_host(i, l.host_leaf[i], unsigned(i % hpl), host_lp);
    const core::link_params spine_core_lp = tier_link(topo, cable, tier::spine_core);
    for (uint64_t p = 0; p < pods; ++p) {
      for (uint64_t sp = 0; sp < spines; ++sp) {
        const size_t spine = first_spine + p * spines + sp;
        for (uint64_t j = 0; j < leaves; ++j)
          b.connect_switches(p * leaves + j, unsigned(hpl + sp * lps), spine, unsigned(j * lps), lps, leaf_spine_lp);
        for (uint64_t j = 0; j < plane; ++j)
          b.connect_switches(spine, unsigned(leaves * lps + j), first_core + sp * plane + j, unsigned(p), 1,
                             spine_core_lp);
      }
    }
  }
  return l;
}

}  // namespace

fabric_layout plan_fabric(const topology_params& topo, const cable_params& cable) {
  topo.validate();
  core::check_ranges(cable, "link");
  fabric_layout l = topo.kind == "graph"        ? *topo.graph
                    : topo.kind == "dragonfly"  ? plan_dragonfly(topo, cable)
                    : topo.kind == "multi_site" ? plan_multi_site(topo, cable)
                                                : plan_builtin(topo, cable);
  if (!topo.absent_cables.empty()) {  // failed before the run: not in the fabric at all
    std::vector<fabric_layout::cable_entry> kept;
    for (size_t c = 0; c < l.cables.size(); ++c)
      if (!std::binary_search(topo.absent_cables.begin(), topo.absent_cables.end(), c)) kept.push_back(l.cables[c]);
    l.cables = std::move(kept);
  }

  // Loss injection applies to every link, or only to those named in link.drop_links.
  std::vector<std::string> drop;
  for (size_t start = 0; start <= cable.drop_links.size();) {
    const size_t comma = std::min(cable.drop_links.find(',', start), cable.drop_links.size());
    std::string name = cable.drop_links.substr(start, comma - start);
    name.erase(0, name.find_first_not_of(' '));
    name.erase(name.find_last_not_of(' ') + 1);
    if (!name.empty()) drop.push_back(name);
    start = comma + 1;
  }
  if (!drop.empty()) {
    std::vector<bool> found(drop.size(), false);
    for (size_t k = 0; k < l.links(); ++k) {
      core::link_params& p = k % 2 ? l.cables[k / 2].ba : l.cables[k / 2].ab;
      const auto it = std::find(drop.begin(), drop.end(), l.link_name(k));
      if (it == drop.end())
        p.drop_probability = 0.0;
      else
        found[size_t(it - drop.begin())] = true;
    }
    for (size_t i = 0; i < drop.size(); ++i)
      if (!found[i])
        throw core::config_error("link.drop_links: no link named '" + drop[i] + "' (links are named " +
                                 "<from>_to_<to>, e.g. " + l.link_name(0) + "; docs/topology.md)");
  }
  return l;
}

namespace {

// The per-host inputs of the constructor against the layout's n hosts and nsw switches.
void check_build_inputs(size_t n, size_t nsw, const std::vector<uint64_t>& memory_bytes, const std::vector<bool>& built,
                        const std::vector<uint8_t*>& tray_memory,
                        const std::map<std::string, nic::supernic_params>& nic_overrides) {
  core::require(memory_bytes.size() == n, "fabric", "memory sizes given for " + std::to_string(memory_bytes.size()) +
                                                        " hosts, the topology has " + std::to_string(n));
  core::require(built.empty() || built.size() == n + nsw, "fabric", "the built-device mask has the wrong size");
  core::require(tray_memory.empty() || tray_memory.size() == n, "fabric",
                "tray memories given for " + std::to_string(tray_memory.size()) + " hosts, the topology has " +
                    std::to_string(n));
  for (const auto& override_entry : nic_overrides)
    core::require(host_index(override_entry.first, n).has_value(), "nic_overrides",
                  "no host named '" + override_entry.first + "' (hosts are " + host_names(n) + ")");
}

}  // namespace

fabric::fabric(const topology_params& topo, const cable_params& cable, const sw::switch_factory& make_switch,
               const nic::supernic_params& nicp, const std::map<std::string, nic::supernic_params>& nic_overrides,
               const std::vector<uint64_t>& memory_bytes, core::sim_context& ctx, const pcie::host_tray_params& tray,
               const std::vector<bool>& built, const std::vector<uint8_t*>& tray_memory)
    : m_ctx(ctx), m_layout(plan_fabric(topo, cable)) {
  const fabric_layout& lay = m_layout;
  const size_t n = lay.hosts, nsw = lay.switches.size();
  check_build_inputs(n, nsw, memory_bytes, built, tray_memory, nic_overrides);
  auto is_built = [&](size_t device) { return built.empty() || built[device]; };
  const bool rail = topo.kind == "rail_optimized";
  size_t hosts_built = 0;                           // for ctx.host_built (the run's memory guard)
  std::vector<core::bits_per_second> host_rate(n);  // each host's cable (a host is always end a)
  for (const auto& c : lay.cables)
    if (c.a < n) host_rate[c.a] = c.ab.rate();
  m_hosts.resize(n);
  m_host_port = lay.host_port;
  for (size_t i = 0; i < n; ++i) {
    host& h = m_hosts[i];
    h.name = host_name(i);
    h.ip = host_ip(i);
    h.leaf = lay.host_leaf[i];
    h.server = rail ? i / topo.rails : i;
    h.rail = rail ? i % topo.rails : 0;
    h.line_rate = host_rate[i];
    if (!is_built(i)) {
      h.mirror = std::make_unique<memory::host_buffer>(h.name + "_mem", memory_bytes[i]);
      continue;
    }
    auto ov = nic_overrides.find(h.name);
    h.mem = std::make_unique<memory::host_memory>((h.name + "_mem").c_str(), memory_bytes[i]);
    h.nic = std::make_unique<nic::supernic>((h.name + "_nic").c_str(), ov == nic_overrides.end() ? nicp : ov->second,
                                            h.ip, host_mac(i), ctx);
    h.nic->dma.bind(h.mem->socket);
    if (h.nic->params().placement == "pcie") {
      uint8_t* gpu = tray_memory.empty() || tray_memory[i] == nullptr ? h.mem->data() : tray_memory[i];
      h.tray = std::make_unique<pcie::host_tray>((h.name + "_pcie").c_str(), tray, gpu, h.mem->size());
      h.nic->set_placement(*h.tray);
      h.tray->register_stats(ctx.stats);
    }
    if (ctx.host_built) ctx.host_built(++hosts_built);
  }
  for (size_t sw = 0; sw < nsw; ++sw) {
    const auto& e = lay.switches[sw];
    m_peer.emplace_back(e.ports, k_unwired);
    if (!is_built(n + sw)) {
      m_switches.push_back(nullptr);
      continue;
    }
    m_switches.push_back(make_switch(e.name, unsigned(e.ports)));
    if (!m_switches.back() || m_switches.back()->ports() != e.ports)
      throw std::logic_error(e.name + ": the switch factory did not build a switch with " + std::to_string(e.ports) +
                             " ports");
  }

  // Every cable: two links, one per direction. A link exists here when either of its ends is built: its
  // transmitter sends on it, its receiver takes frames from it (in a scale-out run a link whose far end is
  // elsewhere is served by a proxy, one whose near end is elsewhere by injection).
  for (size_t k = 0; k < lay.links(); ++k) {
    const size_t from = lay.link_from(k), to = lay.link_to(k);
    const auto& c = lay.cables[k / 2];
    const unsigned from_port = k % 2 ? c.b_port : c.a_port, to_port = k % 2 ? c.a_port : c.b_port;
    if (to >= n && from >= n) {
      m_peer[from - n][from_port] = to - n;
    } else if (from >= n) {
      m_peer[from - n][from_port] = k_host_end;
    }
    if (!is_built(from) && !is_built(to)) {
      m_links.push_back(nullptr);
      continue;
    }
    const std::string name = lay.link_name(k);
    m_links.push_back(std::make_unique<core::link>(name.c_str(), lay.link_params(k), m_ctx));
    core::link& l = *m_links.back();
    // Simultaneous arrivals are served in link order, the same however the fabric is cut (docs/scale_out.md).
    l.set_calendar_key(k + 1);
    if (is_built(from)) {
      if (from < n)
        m_hosts[from].nic->connect(l);
      else
        m_switches[from - n]->connect_port(from_port, l);
    }
    if (is_built(to)) {
      if (to < n)
        l.bind(*m_hosts[to].nic, 0);
      else
        l.bind(*m_switches[to - n], to_port);
    }
  }
  // A fabric from a file may leave ports without a cable (a cable pulled, a port kept spare), and so do
  // cables that failed before the run: routing never picks them. Otherwise the builders wire every port.
  for (size_t sw = 0; sw < m_peer.size() && topo.kind != "graph" && topo.absent_cables.empty(); ++sw)
    for (size_t p = 0; p < m_peer[sw].size(); ++p)
      if (m_peer[sw][p] == k_unwired)
        throw std::logic_error(lay.switches[sw].name + ": port " + std::to_string(p) + " left unwired by the " +
                               topo.kind + " builder");
  route();
}

// The teardown's order. SystemC 2.3 keeps each module in two vectors, the module registry and (for a module
// without a parent) the top-level objects; ports and exports in two more. On destruction it searches the first
// two from the front, the other two from the back, and moves the last entry into the hole; a NIC's method
// process, which outlives it, joins the end of the top-level objects. Member by member (links, switches, then
// hosts, oldest first), a fabric of 4,096 hosts cost some 480 million comparisons there (0.15 s). Here: the
// first host built (its memory is the first of the fabric's modules), then the links and switches, each while
// it is the first of them among the top-level objects (found at once; what moves into its hole is next), then
// the hosts newest first (their ports and exports at the back) and last the newest, whose port and export the
// first host's teardown moved to the front. What remains is one search along the hosts' modules each, some 67
// million comparisons. Every destructor still runs.
namespace {

// A host's devices, in the order its destructor would take them.
void release_host(host& h) {
  h.mirror.reset();
  h.tray.reset();
  h.nic.reset();
  h.mem.reset();
}

// The links and switches, each while it is the first of them among the top-level objects; any that is not a
// top-level object (a fabric built inside a module, a switch that is no module) in the plain order at the end.
void destroy_front_first(std::vector<std::unique_ptr<core::link>>& links,
                         std::vector<std::unique_ptr<sw::switch_device>>& switches) {
  constexpr size_t done = SIZE_MAX;
  // Every link and switch that is a SystemC object, by address: its link index, or links.size() + its switch.
  using entry = std::pair<const sc_core::sc_object*, size_t>;
  const auto by_address = [](const entry& a, const entry& b) { return std::less<>()(a.first, b.first); };
  std::vector<entry> left;
  left.reserve(links.size() + switches.size());
  for (size_t k = 0; k < links.size(); ++k)
    if (links[k]) left.emplace_back(links[k].get(), k);
  for (size_t s = 0; s < switches.size(); ++s)
    if (const auto* o = dynamic_cast<const sc_core::sc_object*>(switches[s].get()))
      left.emplace_back(o, links.size() + s);
  std::sort(left.begin(), left.end(), by_address);
  const std::vector<sc_core::sc_object*>& top = sc_core::sc_get_top_level_objects();
  // top[0, from) holds none of them (the calendars, built before the fabric; the hosts), and destroying one at
  // `from` or later leaves those in place.
  size_t from = 0;
  for (size_t remaining = left.size(); remaining > 0; --remaining) {
    size_t d = done;
    for (; from < top.size() && d == done; ++from) {
      const auto it = std::lower_bound(left.begin(), left.end(), entry{top[from], 0}, by_address);
      if (it != left.end() && it->first == top[from] && it->second != done) std::swap(d, it->second);
    }
    if (d == done) break;  // not top-level objects (a fabric built inside a module): the plain order below
    --from;                // the entry moved into its hole is looked at next
    if (d < links.size())
      links[d].reset();
    else
      switches[d - links.size()].reset();
  }
  links.clear();
  switches.clear();
}

}  // namespace

fabric::~fabric() {
  size_t first = 0, end = m_hosts.size();  // the hosts built here: [first, end) from the first to the newest
  while (first < end && !m_hosts[first].built()) ++first;
  while (end > first && !m_hosts[end - 1].built()) --end;
  if (first == end) {
    destroy_front_first(m_links, m_switches);
    return;
  }
  release_host(m_hosts[first]);
  destroy_front_first(m_links, m_switches);
  for (size_t h = end - 1; h-- > first + 1;) release_host(m_hosts[h]);
  release_host(m_hosts[end - 1]);
}

size_t fabric::egress_link_index(const std::string& node, unsigned port) const {
  if (const auto h = host_index(node, m_hosts.size())) {
    if (port != 0)
      throw core::config_error("host " + node + " has one port, 0; port " + std::to_string(port) + " does not exist");
    return *link_index(node + "_to_" + switch_name(m_hosts[*h].leaf));
  }
  for (size_t s = 0; s < m_switches.size(); ++s) {
    if (node != switch_name(s)) continue;
    const size_t ports = m_peer[s].size();
    if (port >= ports)
      throw core::config_error("switch " + node + " has ports 0 .. " + std::to_string(ports - 1) + "; port " +
                               std::to_string(port) + " does not exist");
    for (size_t k = 0; k < m_layout.links(); ++k) {  // the link leaving the switch through that port
      const auto& c = m_layout.cables[k / 2];
      if (m_layout.link_from(k) == m_layout.hosts + s && (k % 2 ? c.b_port : c.a_port) == port) return k;
    }
    throw core::config_error("switch " + node + " port " + std::to_string(port) + " is not cabled");
  }
  const std::string switches = m_switches.size() == 1
                                   ? "switch " + switch_name(0)
                                   : "switches " + switch_name(0) + " .. " + switch_name(m_switches.size() - 1);
  throw core::config_error("no node named '" + node + "' (hosts " + host_names(m_hosts.size()) + ", " + switches + ")");
}

core::link& fabric::egress_link(const std::string& node, unsigned port) {
  const size_t k = egress_link_index(node, port);
  if (!m_links[k])
    throw std::logic_error(m_layout.link_name(k) + " is not built in this process (scale-out: another rank)");
  return *m_links[k];
}

std::optional<size_t> fabric::link_index(const std::string& name) const {
  for (size_t k = 0; k < m_layout.links(); ++k)
    if (m_layout.link_name(k) == name) return k;
  return std::nullopt;
}

core::link* fabric::find_link(const std::string& name) {
  const auto k = link_index(name);
  return k ? m_links[*k].get() : nullptr;
}

void fabric::route() {
  // One breadth-first search over the switch graph per leaf gives every switch its distance to that leaf;
  // a switch's route to a host under the leaf is every port whose neighbour is one step closer. That is
  // every shortest path and nothing else: ECMP over all uplinks at a leaf, down at a spine of the host's
  // pod, up over the plane's cores at a spine of another pod.
  const size_t nsw = m_switches.size();
  std::vector<std::vector<size_t>> hosts_of(nsw);
  for (size_t h = 0; h < m_hosts.size(); ++h) hosts_of[m_hosts[h].leaf].push_back(h);
  std::vector<size_t> dist(nsw), queue;
  queue.reserve(nsw);
  m_remote_routes.assign(nsw, {});
  for (size_t leaf = 0; leaf < nsw; ++leaf) {
    if (hosts_of[leaf].empty()) continue;
    std::fill(dist.begin(), dist.end(), SIZE_MAX);
    dist[leaf] = 0;
    queue.assign(1, leaf);
    for (size_t head = 0; head < queue.size(); ++head) {
      const size_t u = queue[head];
      for (size_t v : m_peer[u]) {
        if (v == k_host_end || v == k_unwired || dist[v] != SIZE_MAX) continue;
        dist[v] = dist[u] + 1;
        queue.push_back(v);
      }
    }
    if (m_switches[leaf])
      for (size_t h : hosts_of[leaf]) m_switches[leaf]->add_route(m_hosts[h].ip, {m_host_port[h]});
    for (size_t u = 0; u < nsw; ++u) {
      if (u == leaf) continue;
      std::vector<unsigned> ports;
      for (size_t p = 0; p < m_peer[u].size(); ++p) {
        const size_t v = m_peer[u][p];
        if (v != k_host_end && v != k_unwired && dist[v] != SIZE_MAX && dist[v] + 1 == dist[u])
          ports.push_back(unsigned(p));
      }
      if (ports.empty())
        throw std::logic_error(switch_name(u) + ": no path to " + switch_name(leaf));
      if (!m_switches[u]) {  // a switch another process simulates routes there; kept for remote_route()
        m_remote_routes[u].resize(nsw);
        m_remote_routes[u][leaf] = std::move(ports);
        continue;
      }
      for (size_t h : hosts_of[leaf]) m_switches[u]->add_route(m_hosts[h].ip, ports);
    }
  }
}

std::vector<unsigned> fabric::remote_route(size_t sw, size_t h) const {
  if (m_switches.at(sw)) return {};
  const size_t leaf = m_hosts.at(h).leaf;
  if (leaf == sw) return {m_host_port[h]};
  return m_remote_routes[sw].empty() ? std::vector<unsigned>{} : m_remote_routes[sw][leaf];
}

}  // namespace fabricsim::topology
