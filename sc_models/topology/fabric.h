// Builds a fabric at elaboration: hosts (memory + SuperNIC), switches and the links between them, with
// addresses and routes. Devices meet only through links.
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
#include "sc_models/switch/oq_switch.h"

namespace fabricsim::topology {

struct topology_params {
  std::string kind = "single_switch";  // "single_switch": every host on one switch; "leaf_spine": two tiers
  uint64_t hosts = 2;                  // single_switch: number of hosts
  uint64_t leaves = 4;                 // leaf_spine: leaf switches
  uint64_t hosts_per_leaf = 4;         // leaf_spine: hosts under each leaf
  uint64_t spines = 4;                 // leaf_spine: spine switches, one uplink from every leaf to each
  void visit(core::param_visitor& v);
  uint64_t host_count() const { return kind == "leaf_spine" ? leaves * hosts_per_leaf : hosts; }
};

// Hosts are named h0 .. h(N-1). The index of `name` among `hosts` hosts, or nothing when no host has that
// name (including "h01" and indices too large for any integer); and the range of names, for messages.
std::optional<size_t> host_index(const std::string& name, size_t hosts);
std::string host_name(size_t index);
std::string host_names(size_t hosts);  // "h0 .. h7"

// Where host `index` sits, known from the parameters alone (workloads are planned before the fabric is
// built): the leaf (top-of-rack) switch it hangs off, numbered from 0 across the whole fabric.
size_t leaf_of(const topology_params& topo, size_t index);

struct host {
  std::string name;  // "h0", "h1", ...
  core::ip_address ip;
  std::unique_ptr<memory::host_memory> mem;
  std::unique_ptr<nic::supernic> nic;
};

class fabric {
 public:
  // `memory_bytes[i]` sizes host i's memory. `nic_overrides` replaces the NIC parameters of named hosts;
  // an unknown host name there is a config_error.
  fabric(const topology_params& topo, const core::link_params& link, const sw::oq_switch_params& sw,
         const nic::supernic_params& nic, const std::map<std::string, nic::supernic_params>& nic_overrides,
         const std::vector<uint64_t>& memory_bytes, core::sim_context& ctx);
  fabric(const fabric&) = delete;
  fabric& operator=(const fabric&) = delete;
  ~fabric();

  std::vector<host>& hosts() { return m_hosts; }
  std::vector<std::unique_ptr<sw::oq_switch>>& switches() { return m_switches; }
  std::vector<std::unique_ptr<core::link>>& links() { return m_links; }

 private:
  // A cable: two links, one per direction. Returns {a_to_b, b_to_a}.
  std::pair<core::link*, core::link*> cable(const std::string& a, const std::string& b);

  const core::link_params m_link_params;
  core::sim_context& m_ctx;
  std::vector<host> m_hosts;
  std::vector<std::unique_ptr<sw::oq_switch>> m_switches;
  std::vector<std::unique_ptr<core::link>> m_links;
};

}  // namespace fabricsim::topology
