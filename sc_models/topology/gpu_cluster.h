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
#include <vector>

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
  // `scale_out` is checked by cluster_scale_out. `built` (the scale-out fabric's device mask, fabric's
  // constructor; empty: everything) says what this process builds in a scale-out run (docs/scale_out.md): an
  // NVLink domain is built where its GPUs' NICs are, which must all be on one process (std::logic_error
  // otherwise); the other domains' GPUs and chips are nullptr (nvlink_domains).
  gpu_cluster(const nvlink::nvlink_params& nv, const topology_params& scale_out, const cable_params& cable,
              const sw::switch_factory& make_switch, const nic::supernic_params& nic,
              const pcie::host_tray_params& tray, uint64_t hbm_bytes, core::sim_context& ctx,
              const std::map<std::string, nic::supernic_params>& nic_overrides = {},
              const std::vector<bool>& built = {});
  gpu_cluster(const gpu_cluster&) = delete;
  gpu_cluster& operator=(const gpu_cluster&) = delete;

  nvlink_domains& domains() { return m_domains; }
  fabric& scale_out() { return *m_fabric; }
  unsigned gpus_per_domain() const { return m_domains.gpus_per_domain(); }
  nvlink::gpu_endpoint& gpu(unsigned domain, unsigned i) { return m_domains.gpu(domain, i); }
  // The scale-out host (SuperNIC and tray) of GPU i of `domain`.
  size_t host_of(unsigned domain, unsigned i) const { return size_t(domain) * gpus_per_domain() + i; }
  host& nic_host(unsigned domain, unsigned i) { return m_fabric->hosts()[host_of(domain, i)]; }
  bool domain_built(unsigned domain) const { return m_domains.built(domain); }

  // What a GPU's NIC hands out at set-up: by the NIC where it is built here, else by the NIC's own rules
  // (supernic::qpn_of, rkey_of), so that every process numbers a queue pair or region alike.
  uint32_t create_qp(size_t host);
  uint32_t register_region(size_t host, uint64_t va, uint64_t bytes);

 private:
  nvlink_domains m_domains;
  std::unique_ptr<fabric> m_fabric;
  std::vector<size_t> m_remote_qps, m_remote_regions;  // [host]: handed out for a NIC built elsewhere
};

// The NVLink domain of each host of a cluster's scale-out fabric (GPU r of domain d is host d x G + r), and
// the mask of domains built from the fabric's device mask (empty: all).
std::vector<bool> built_domains(const nvlink::nvlink_params& nv, const std::vector<bool>& built);

}  // namespace fabricsim::topology
