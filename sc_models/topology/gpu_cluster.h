// GPUs with their scale-out NIC (docs/systems.md): `nvlink.domains` NVLink domains (topology/nvlink_domain.h)
// and a rail-optimized scale-out fabric (topology/fabric.h) whose hosts are the GPUs' SuperNICs. GPU r of
// domain d is host d x gpus_per_domain + r: NIC r of server d, on the rail-r leaf of its group, so that rail r
// joins GPU r of every domain. Each NIC reaches its GPU's HBM only through the ConnectX-8 PCIe switch of its
// tray (pcie::host_tray, nic.placement pcie): a WRITE between domains is read from the source GPU's HBM and
// placed into the destination GPU's HBM over PCIe, peer to peer (GPUDirect RDMA), and the same HBM bytes are
// what the GPU's NVLink copy engine moves inside its domain.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "sc_models/core/sim_context.h"
#include "sc_models/nic/supernic.h"
#include "sc_models/nvlink/nvlink_params.h"
#include "sc_models/pcie/host_tray.h"
#include "sc_models/switch/switch_device.h"
#include "sc_models/topology/fabric.h"
#include "sc_models/topology/nvlink_domain.h"

namespace fabricsim::topology {

// The scale-out fabric of a cluster: `base` with kind rail_optimized and one rail per GPU of a domain
// (rails = gpus_per_domain). Servers (groups x hosts_per_leaf) must be the domains: throws core::config_error
// naming topology.groups, topology.hosts_per_leaf and nvlink.domains otherwise, or naming topology.kind /
// topology.rails when `base` sets another kind or rail count.
topology_params cluster_scale_out(const nvlink::nvlink_params& nv, topology_params base);

class gpu_cluster {
 public:
  // `hbm_bytes`: each GPU's HBM modelled. `nic` must have placement pcie (the tray is the GPU's path);
  // `scale_out` is checked by cluster_scale_out.
  gpu_cluster(const nvlink::nvlink_params& nv, const topology_params& scale_out, const cable_params& cable,
              const sw::switch_factory& make_switch, const nic::supernic_params& nic,
              const pcie::host_tray_params& tray, uint64_t hbm_bytes, core::sim_context& ctx,
              const std::map<std::string, nic::supernic_params>& nic_overrides = {});
  gpu_cluster(const gpu_cluster&) = delete;
  gpu_cluster& operator=(const gpu_cluster&) = delete;

  nvlink_domains& domains() { return m_domains; }
  fabric& scale_out() { return *m_fabric; }
  unsigned gpus_per_domain() const { return m_domains.gpus_per_domain(); }
  nvlink::gpu_endpoint& gpu(unsigned domain, unsigned i) { return m_domains.gpu(domain, i); }
  // The scale-out host (SuperNIC and tray) of GPU i of `domain`.
  size_t host_of(unsigned domain, unsigned i) const { return size_t(domain) * gpus_per_domain() + i; }
  host& nic_host(unsigned domain, unsigned i) { return m_fabric->hosts()[host_of(domain, i)]; }

 private:
  nvlink_domains m_domains;
  std::unique_ptr<fabric> m_fabric;
};

}  // namespace fabricsim::topology
