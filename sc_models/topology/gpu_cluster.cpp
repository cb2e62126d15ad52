// GPUs with their scale-out NIC: NVLink domains and a rail-optimized fabric sharing each GPU's HBM.
#include "sc_models/topology/gpu_cluster.h"

#include <vector>

namespace fabricsim::topology {

using core::config_error;

topology_params cluster_scale_out(const nvlink::nvlink_params& nv, topology_params base) {
  if (base.kind != "rail_optimized")
    throw config_error("topology.kind " + base.kind +
                       ": the scale-out fabric of GPUs with their NICs is rail_optimized (one rail per GPU of a "
                       "domain)");
  if (base.rails != nv.gpus_per_domain)
    throw config_error("topology.rails " + std::to_string(base.rails) +
                       ": one rail per GPU of a domain, "
                       "nvlink.gpus_per_domain = " +
                       std::to_string(nv.gpus_per_domain));
  if (base.groups * base.hosts_per_leaf != nv.domains)
    throw config_error("topology.groups " + std::to_string(base.groups) + " x topology.hosts_per_leaf " +
                       std::to_string(base.hosts_per_leaf) + " servers, but nvlink.domains is " +
                       std::to_string(nv.domains) + ": every server is one NVLink domain");
  return base;
}

namespace {

std::vector<uint8_t*> hbm_of(nvlink_domains& d) {
  std::vector<uint8_t*> v;
  for (const auto& g : d.gpus()) v.push_back(g->hbm.data());
  return v;
}

}  // namespace

gpu_cluster::gpu_cluster(const nvlink::nvlink_params& nv, const topology_params& scale_out, const cable_params& cable,
                         const sw::switch_factory& make_switch, const nic::supernic_params& nic,
                         const pcie::host_tray_params& tray, uint64_t hbm_bytes, core::sim_context& ctx,
                         const std::map<std::string, nic::supernic_params>& nic_overrides)
    : m_domains(nv, hbm_bytes, ctx) {
  const topology_params topo = cluster_scale_out(nv, scale_out);
  if (nic.placement != "pcie")
    throw config_error("nic.placement " + nic.placement +
                       ": a GPU's NIC reaches its HBM through the PCIe switch of its tray (pcie)");
  for (const auto& [name, p] : nic_overrides)
    if (p.placement != "pcie")
      throw config_error("nic_overrides." + name + ".placement " + p.placement +
                         ": a GPU's NIC reaches its HBM through the PCIe switch of its tray (pcie)");
  // Each NIC's own memory map is the GPU's HBM size; its bytes are never used (the tray places into the HBM).
  m_fabric = std::make_unique<fabric>(topo, cable, make_switch, nic, nic_overrides,
                                      std::vector<uint64_t>(topo.host_count(), hbm_bytes), ctx, tray,
                                      std::vector<bool>{}, hbm_of(m_domains));
}

}  // namespace fabricsim::topology
