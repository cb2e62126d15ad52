// System presets: the keys a GB200 / GB300 NVL72 or HGX B200 / B300 cluster sets (docs/systems.md).
#include "testbench/system_preset.h"

#include <fmt/format.h>

#include "testbench/scenario.h"

namespace fabricsim::testbench {

using core::config_error;

void system_params::visit(core::param_visitor& v) {
  v.field({"preset",
           "",
           "a whole cluster: GB200 / GB300 NVL72 racks or HGX B200 / B300 nodes, each GPU with its scale-out NIC "
           "behind the tray's PCIe switch on a rail-optimized fabric; it sets the nvlink, topology, switch, nic "
           "and pcie keys listed in systems.md, which the file and --set override (none: no preset)",
           0.0,
           0.0,
           {"none", "gb200_nvl72", "gb300_nvl72", "hgx_b200", "hgx_b300"}},
          preset);
  v.field({"racks", "racks", "NVL72 presets: racks, one NVLink domain of 72 GPUs each", 0.0, 227.0}, racks);
  v.field({"nodes", "nodes", "HGX presets: nodes, one NVLink domain of 8 GPUs each", 0.0, 2048.0}, nodes);
  v.field({"scale_out",
           "",
           "the scale-out fabric: quantum_x800 (InfiniBand, switch.model quantum_x800) or spectrum_x (Ethernet, "
           "switch.model spectrum4 with adaptive routing)",
           0.0,
           0.0,
           {"quantum_x800", "spectrum_x"}},
          scale_out);
}

namespace {

struct system_shape {
  bool nvl72;      // racks of 72 GPUs, else HGX nodes of 8
  bool connectx8;  // GB300 / B300: ConnectX-8 (800 Gb/s, PCIe Gen6), else ConnectX-7 (400 Gb/s, Gen5)
};

system_shape shape_of(const std::string& preset) {
  return {preset == "gb200_nvl72" || preset == "gb300_nvl72", preset == "gb300_nvl72" || preset == "hgx_b300"};
}

}  // namespace

std::string system_preset_yaml(const system_params& p, const std::string& source) {
  const system_shape sh = shape_of(p.preset);
  const char* count_key = sh.nvl72 ? "racks" : "nodes";
  const char* other_key = sh.nvl72 ? "nodes" : "racks";
  const uint64_t n = sh.nvl72 ? p.racks : p.nodes;
  if ((sh.nvl72 ? p.nodes : p.racks) != 0)
    throw config_error(fmt::format("{}: system.{} {}: system.preset {} counts {} (system.{})", source, other_key,
                                   sh.nvl72 ? p.nodes : p.racks, p.preset, count_key, count_key));
  if (n == 0)
    throw config_error(fmt::format("{}: system.{} 0: system.preset {} needs at least one {} (system.{}: N)", source,
                                   count_key, p.preset, sh.nvl72 ? "rack" : "node", count_key));
  const uint64_t gpus = sh.nvl72 ? 72 : 8, chips = sh.nvl72 ? 18 : 2;
  const bool ib = p.scale_out == "quantum_x800";
  // ConnectX-8: 800 Gb/s as one XDR port on InfiniBand; its Ethernet ports run at up to 400 Gb/s each and
  // one is modelled. ConnectX-7: 400 Gb/s.
  const int nic_gbps = sh.connectx8 && ib ? 800 : 400;
  const int pcie_gen = sh.connectx8 ? 6 : 5;
  std::string y = fmt::format(
      "nvlink: {{gpus_per_domain: {}, switch_chips: {}, links_per_gpu: 18, domains: {}}}\n"
      "topology: {{kind: rail_optimized, rails: {}, groups: 1, hosts_per_leaf: {}, spines: {}, link_gbps: {}}}\n"
      "nic: {{placement: pcie}}\n"
      "pcie: {{gpu_gen: {}, nic_gen: {}}}\n",
      gpus, chips, n, gpus, n, n, nic_gbps, pcie_gen, pcie_gen);
  if (ib)
    y += "switch: {model: quantum_x800}\n";
  else
    y += fmt::format("switch: {{model: spectrum4, routing: adaptive, port_config: {}}}\n",
                     nic_gbps == 800 ? "64x800" : "128x400");
  return y;
}

namespace {

std::string origin(const scenario& s, const std::string& key) {
  const auto it = s.key_sources.find(key);
  return it == s.key_sources.end() ? "default" : it->second;
}

[[noreturn]] void contradiction(const scenario& s, const std::string& key, const std::string& value,
                                const std::string& why) {
  throw config_error(fmt::format("{}: {} {} ({}) contradicts system.preset {} ({}): {}", s.source, key, value,
                                 origin(s, key), s.system.preset, origin(s, "system.preset"), why));
}

}  // namespace

void check_system(const scenario& s) {
  if (s.system.preset == "none") {
    for (const char* k : {"system.racks", "system.nodes", "system.scale_out"})
      if (s.key_sources.count(k))
        throw config_error(
            fmt::format("{}: {} ({}) needs a system.preset (gb200_nvl72, gb300_nvl72, hgx_b200 or "
                        "hgx_b300)",
                        s.source, k, origin(s, k)));
    return;
  }
  const topology::topology_params& t = s.topology;
  if (t.kind != "rail_optimized")
    contradiction(s, "topology.kind", t.kind,
                  "a system's scale-out fabric is rail_optimized (one rail per GPU of a "
                  "domain); leave topology.kind out");
  if (t.rails != s.nvlink.gpus_per_domain)
    contradiction(s, "topology.rails", std::to_string(t.rails),
                  fmt::format("one rail per GPU of a domain, nvlink.gpus_per_domain = {} ({})",
                              s.nvlink.gpus_per_domain, origin(s, "nvlink.gpus_per_domain")));
  if (t.groups * t.hosts_per_leaf != s.nvlink.domains)
    contradiction(s, "topology.hosts_per_leaf", std::to_string(t.hosts_per_leaf),
                  fmt::format("topology.groups {} x hosts_per_leaf {} servers, but nvlink.domains is {} ({}): every "
                              "server is one NVLink domain",
                              t.groups, t.hosts_per_leaf, s.nvlink.domains, origin(s, "nvlink.domains")));
  if (s.nic.placement != "pcie")
    contradiction(s, "nic.placement", s.nic.placement,
                  "a GPU's NIC reaches its HBM through the PCIe switch of its tray (pcie)");
  const bool ib = s.system.scale_out == "quantum_x800";
  if (ib != s.switch_model.infiniband())
    contradiction(s, "switch.model", s.switch_model.name,
                  fmt::format("system.scale_out {} ({}) is built from {} switches", s.system.scale_out,
                              origin(s, "system.scale_out"), ib ? "quantum_x800" : "spectrum4"));
}

}  // namespace fabricsim::testbench
