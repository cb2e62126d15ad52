// GPUs with their scale-out NIC: NVLink domains and a rail-optimized fabric sharing each GPU's HBM.
#include "sc_models/topology/gpu_cluster.h"

#include <stdexcept>
#include <string>
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
  for (const auto& g : d.gpus()) v.push_back(g ? g->hbm.data() : nullptr);
  return v;
}

}  // namespace

std::vector<bool> built_domains(const nvlink::nvlink_params& nv, const std::vector<bool>& built) {
  if (built.empty()) return {};
  std::vector<bool> out(nv.domains);
  for (size_t d = 0; d < nv.domains; ++d) {
    out[d] = built.at(d * nv.gpus_per_domain);
    for (size_t i = 1; i < nv.gpus_per_domain; ++i)
      if (built.at(d * nv.gpus_per_domain + i) != out[d])
        throw std::logic_error("gpu_cluster: the NICs of NVLink domain " + std::to_string(d) +
                               " are not all built by one process");
  }
  return out;
}

uint32_t gpu_cluster::create_qp(size_t h) {
  host& x = m_fabric->hosts().at(h);
  return x.built() ? x.nic->create_qp() : nic::supernic::qpn_of(m_remote_qps[h]++);
}

uint32_t gpu_cluster::register_region(size_t h, uint64_t va, uint64_t bytes) {
  host& x = m_fabric->hosts().at(h);
  return x.built() ? x.nic->register_region(va, bytes) : nic::supernic::rkey_of(m_remote_regions[h]++);
}

gpu_cluster::gpu_cluster(const nvlink::nvlink_params& nv, const topology_params& scale_out, const cable_params& cable,
                         const sw::switch_factory& make_switch, const nic::supernic_params& nic,
                         const pcie::host_tray_params& tray, uint64_t hbm_bytes, core::sim_context& ctx,
                         const std::map<std::string, nic::supernic_params>& nic_overrides,
                         const std::vector<bool>& built)
    : m_domains(nv, hbm_bytes, ctx, built_domains(nv, built)) {
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
                                      std::vector<uint64_t>(topo.host_count(), hbm_bytes), ctx, tray, built,
                                      hbm_of(m_domains));
  m_remote_qps.assign(topo.host_count(), 0);
  m_remote_regions.assign(topo.host_count(), 0);
}

}  // namespace fabricsim::topology
