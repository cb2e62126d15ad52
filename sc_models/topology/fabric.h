// Builds a fabric at elaboration: hosts (memory + SuperNIC), switches and the links between them, with
// addresses and shortest-path ECMP routes. Devices meet only through links. Kinds, wiring and naming:
// docs/topology.md.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sc_models/core/link.h"
#include "sc_models/core/params.h"
#include "sc_models/core/sim_context.h"
#include "sc_models/memory/host_memory.h"
#include "sc_models/nic/supernic.h"
#include "sc_models/pcie/host_tray.h"
#include "sc_models/switch/switch_device.h"

namespace fabricsim::topology {

struct fabric_layout;

// The fabric's shape, the line rates of its tiers and the cable lengths. Which keys a kind reads:
// docs/topology.md.
struct topology_params {
  // single_switch, leaf_spine, three_tier, rail_optimized, dragonfly, multi_site, graph; nvl72: the NVLink domain
  // (topology/nvlink_domain.h), built from the `nvlink` section, for workload.kind collective only
  std::string kind = "single_switch";
  std::string file;  // graph: the GraphML / DOT file (relative to the scenario file)
  // graph: the layout read from `file` when the scenario was loaded (load_graph_file, graph_file.h), kept so
  // that host_count() and leaf_of() answer before the fabric exists. Not a key.
  std::shared_ptr<const fabric_layout> graph;
  // Cables (indices into the layout the keys give) that failed before the run and are left out of the
  // fabric, routes included: faults of kind links_down (testbench/failed_cables.h). Sorted. Not a key.
  std::vector<size_t> absent_cables;
  uint64_t hosts = 2;             // single_switch: hosts on the switch
  uint64_t pods = 2;              // three_tier: pods (each a leaf-spine of `leaves` x `spines`)
  uint64_t leaves = 4;            // leaf_spine: leaf switches; three_tier: leaves per pod
  uint64_t hosts_per_leaf = 4;    // leaf_spine, three_tier: hosts under each leaf; rail_optimized: servers per group
  uint64_t spines = 4;            // leaf_spine, rail_optimized: spine switches; three_tier: spines per pod
  uint64_t links_per_spine = 1;   // parallel cables from every leaf to every spine
  uint64_t cores = 4;             // three_tier: core (super-spine) switches, cores / spines per plane
  uint64_t rails = 8;             // rail_optimized: NICs per server, one leaf per rail and group
  uint64_t groups = 2;            // rail_optimized: groups of hosts_per_leaf servers sharing rail leaves
  // dragonfly (Kim, Dally, Scott, Abts, ISCA 2008; sc_models/topology/dragonfly.h): a routers per group,
  // p hosts per router, h global cables per router, g groups. The defaults are the balanced a = 2p = 2h.
  uint64_t routers_per_group = 4;        // a: routers in a group, all-to-all by local cables
  uint64_t hosts_per_router = 2;         // p
  uint64_t global_links_per_router = 2;  // h: cables from a router to routers of other groups
  uint64_t dragonfly_groups = 0;         // g; 0: a x h + 1, one global cable between every pair of groups
  // multi_site (sc_models/topology/multi_site.h): `sites` leaf-spines of leaves x hosts_per_leaf and spines,
  // each with site_edges edge switches (every spine to every edge), edge e of each site joined to edge e of
  // every other site by inter_site_links cables of inter_site_km.
  uint64_t sites = 2;
  uint64_t site_edges = 1;
  uint64_t inter_site_links = 1;
  double inter_site_km = 10.0;              // 10 .. 100 km (metro to regional data-centre interconnect)
  double inter_site_gbps = 0.0;             // 0: uplink_gbps
  uint64_t edge_buffer_bytes = 8589934592;  // a site edge's shared buffer (deep-buffer DCI class; estimate)
  // A site edge's lossless and marking thresholds (docs/topology.md): 0 keeps the switch's (switch.pfc_xoff_bytes,
  // ecn_kmin_bytes, ...). site_edge_xon_bytes 0 with site_edge_xoff_bytes set: 3/4 of it (the switch's ratio).
  uint64_t site_edge_xoff_bytes = 0;
  uint64_t site_edge_xon_bytes = 0;
  uint64_t site_edge_ecn_kmin_bytes = 0;
  uint64_t site_edge_ecn_kmax_bytes = 0;
  double link_gbps = 400.0;       // every host link, and every switch-to-switch link unless uplink_gbps is set
  double uplink_gbps = 0.0;       // switch-to-switch links; 0: link_gbps
  double host_cable_m = 2.0;      // NIC to leaf
  double leaf_spine_cable_m = 10.0;  // leaf to spine
  double spine_core_cable_m = 30.0;  // three_tier: spine to core
  double local_cable_m = 5.0;        // dragonfly: router to router inside a group (one cabinet)
  double global_cable_m = 30.0;      // dragonfly: router to a router of another group
  void visit(core::param_visitor& v);

  // Throws core::config_error naming the key when a field is out of its range or the sizes are absurd: a
  // switch with more ports than the radix limit, more hosts or switches than the fabric limits, cores that
  // do not split into one plane per spine.
  void validate() const;

  uint64_t host_count() const;    // endpoints h0 .. h(N-1); rail_optimized: servers x rails
  // Switches hosts hang off (single_switch: 1; graph: those with a host; dragonfly: every router).
  uint64_t leaf_count() const;
  uint64_t switch_count() const;  // every switch, in creation order: leaves first (see fabric::switches())
  double uplink_rate_gbps() const { return uplink_gbps > 0.0 ? uplink_gbps : link_gbps; }
  // Host bandwidth under a leaf over its uplink bandwidth (1 for single_switch; graph: the largest over the
  // switches with hosts, 1 when none has an uplink; dragonfly: a router's hosts over its local and global
  // cables): 3 means 3:1.
  double leaf_oversubscription() const;
};

// The `link` section: what every cable has in common. Rates and lengths are per tier, in `topology`.
struct cable_params {
  double ns_per_metre = 5.0;      // propagation in the cable
  double fec_latency_ns = 100.0;  // RS-FEC encode + decode, once per link
  double drop_probability = 0.0;  // loss injection: chance a RoCE frame is lost on a link (PFC never is)
  std::string drop_links;         // comma-separated exact link names that lose frames; empty: every link
  void visit(core::param_visitor& v);
};

// The tiers of cables; each has its own rate and length. local, global: a dragonfly's cables inside a
// group and between groups; inter_site: multi_site's long links between site edges.
enum class tier { host, leaf_spine, spine_core, local, global, inter_site };
// The parameters of every link of `t`.
core::link_params tier_link(const topology_params& topo, const cable_params& cable, tier t);

// Hard limits on sizes, so that a typo cannot ask for a fabric that takes the machine down at elaboration.
constexpr uint64_t k_max_switch_ports = 4096;  // radix limit of any switch
constexpr uint64_t k_max_hosts = 16384;
constexpr uint64_t k_max_switches = 4096;

// Hosts are named h0 .. h(N-1). The index of `name` among `hosts` hosts, or nothing when no host has that
// name (including "h01" and indices too large for any integer); and the range of names, for messages.
std::optional<size_t> host_index(const std::string& name, size_t hosts);
std::string host_name(size_t index);
std::string host_names(size_t hosts);  // "h0 .. h7"
core::ip_address host_ip(size_t index);  // host `index`'s address: 10.0.0.1 + index

// Where host `index` sits, known from the parameters alone (workloads are planned before the fabric is
// built): the global index of the leaf (top-of-rack or rail) switch it hangs off, so that
// `fabric::switches()[leaf_of(topo, index)]` is that leaf.
size_t leaf_of(const topology_params& topo, size_t index);

// The fabric's wiring, from the parameters alone and before any device is built: every switch with its
// name and port count, where each host hangs, and every cable with the devices and ports at its two ends.
// Devices are numbered hosts first (0 .. H-1), then switches (H ..), in fabric::switches() order; cable k
// becomes links 2k (a to b) and 2k + 1 (b to a), in fabric::links() order. A scale-out run partitions this
// (sc_models/mpi/partition.h) and then builds only the devices it simulates.
struct fabric_layout {
  struct switch_entry {
    std::string name;
    uint64_t ports;
  };
  struct cable_entry {
    size_t a, b;              // devices at the two ends
    unsigned a_port, b_port;  // their ports (a host's only port is 0)
    std::string suffix;       // parallel cables: "_0", "_1", ...
    core::link_params ab, ba;  // the two directions (loss injection may differ: link.drop_links)
  };
  size_t hosts = 0;
  std::vector<size_t> host_leaf;    // [host]: the switch it hangs off
  std::vector<unsigned> host_port;  // [host]: its port on that switch
  std::vector<switch_entry> switches;
  std::vector<cable_entry> cables;

  std::string device_name(size_t device) const;
  size_t links() const { return 2 * cables.size(); }
  size_t link_from(size_t link) const { return link % 2 ? cables[link / 2].b : cables[link / 2].a; }
  size_t link_to(size_t link) const { return link % 2 ? cables[link / 2].a : cables[link / 2].b; }
  std::string link_name(size_t link) const;  // <from>_to_<to><suffix>
  const core::link_params& link_params(size_t link) const {
    return link % 2 ? cables[link / 2].ba : cables[link / 2].ab;
  }
};

// The layout of a fabric of `topo` with `cable`'s cables; throws core::config_error as topology_params::
// validate() does, and for a link.drop_links name that no link has.
fabric_layout plan_fabric(const topology_params& topo, const cable_params& cable);

// One endpoint: a NIC with its own memory (one GPU/NIC pair). In a scale-out run a host another process
// simulates has no NIC, memory or tray here, only `mirror`: its memory map, where payloads it sent land.
struct host {
  std::string name;  // "h0", "h1", ...
  core::ip_address ip;
  size_t leaf = 0;    // global index of the switch it hangs off
  size_t server = 0;  // the server it belongs to: its index, or index / rails for rail_optimized
  size_t rail = 0;    // which of the server's NICs: index % rails for rail_optimized, else 0
  std::unique_ptr<memory::host_memory> mem;
  std::unique_ptr<nic::supernic> nic;
  std::unique_ptr<pcie::host_tray> tray;  // nic.placement pcie: the PCIe path from the NIC to memory
  std::unique_ptr<memory::host_buffer> mirror;  // only when not built here
  core::bits_per_second line_rate{};            // its link's rate
  bool built() const { return nic != nullptr; }
  // Its memory's bytes: the real memory when built here, else the mirror.
  memory::host_buffer& buffer() { return mem ? mem->buffer() : *mirror; }
};

class fabric {
 public:
  // `make_switch` builds every switch (the switch model is the caller's choice). `memory_bytes[i]` sizes
  // host i's memory. `nic_overrides` replaces the NIC parameters of named hosts; an unknown host name
  // there is a config_error, as is any topology_params::validate() failure. A host whose NIC has
  // nic.placement pcie gets a PCIe tray built from `tray` (its memory becomes the tray's GPU memory).
  // `built[d]` (device numbering of fabric_layout; empty: all) says which devices this process builds (a
  // scale-out rank): the others are nullptr in hosts() (nic, mem) and switches(), and only links with a built
  // end exist (nullptr in links() otherwise). `tray_memory[i]` (empty: none), when not null, is the GPU
  // memory (memory_bytes[i] long) behind host i's tray in place of the host's own memory: a GPU's HBM that
  // its NVLink copy engine uses too (topology/gpu_cluster.h); the NIC then reaches it only through the tray.
  fabric(const topology_params& topo, const cable_params& cable, const sw::switch_factory& make_switch,
         const nic::supernic_params& nic, const std::map<std::string, nic::supernic_params>& nic_overrides,
         const std::vector<uint64_t>& memory_bytes, core::sim_context& ctx, const pcie::host_tray_params& tray = {},
         const std::vector<bool>& built = {}, const std::vector<uint8_t*>& tray_memory = {});
  fabric(const fabric&) = delete;
  fabric& operator=(const fabric&) = delete;
  ~fabric();

  std::vector<host>& hosts() { return m_hosts; }
  const fabric_layout& layout() const { return m_layout; }
  const std::string& switch_name(size_t s) const { return m_layout.switches.at(s).name; }
  // Leaves first (pod by pod for three_tier; group-major, rail-minor for rail_optimized; group-major for
  // dragonfly, whose routers are all leaves), then spines (pod by pod), then cores.
  std::vector<std::unique_ptr<sw::switch_device>>& switches() { return m_switches; }
  std::vector<std::unique_ptr<core::link>>& links() { return m_links; }
  const std::vector<std::unique_ptr<core::link>>& links() const { return m_links; }
  // Host `h`'s port on its leaf switch (switches()[hosts()[h].leaf]): the last hop towards it.
  unsigned host_port(size_t h) const { return m_host_port.at(h); }
  // The link leaving device `node` through `port` (a switch's port number; 0, the only port, for a host), as
  // packet captures name it. Throws core::config_error naming the node, or the port and the valid range.
  core::link& egress_link(const std::string& node, unsigned port);
  // The same as an index into links() and the layout, valid in every process of a scale-out run (the link
  // itself may be built by another).
  size_t egress_link_index(const std::string& node, unsigned port) const;
  std::optional<size_t> link_index(const std::string& name) const;
  // The equal-cost egress ports of switch `sw`'s route to host `h`, for a switch this process does not build
  // (a scale-out rank's view of another rank's switch: the routes its add_route got there); empty for a
  // switch built here (ask the switch).
  std::vector<unsigned> remote_route(size_t sw, size_t h) const;
  // The link named `name` (<from>_to_<to>[_k]), or nullptr.
  core::link* find_link(const std::string& name);

 private:
  static constexpr size_t k_host_end = SIZE_MAX;  // m_peer entry of a port facing a host

  // Shortest-path routes to every host at every switch, all equal-cost egress ports (ECMP) included.
  void route();

  core::sim_context& m_ctx;
  fabric_layout m_layout;
  std::vector<host> m_hosts;
  std::vector<std::unique_ptr<sw::switch_device>> m_switches;
  std::vector<std::unique_ptr<core::link>> m_links;
  std::vector<std::vector<size_t>> m_peer;   // [switch][port]: the switch at the far end, or k_host_end
  std::vector<unsigned> m_host_port;         // [host]: its port on its leaf
  std::vector<std::vector<std::vector<unsigned>>> m_remote_routes;  // [switch][leaf]: unbuilt switches only
};

}  // namespace fabricsim::topology
