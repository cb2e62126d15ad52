// A cluster of NVLink domains cut over MPI ranks, the domain as the unit.
#include "testbench/cluster_part.h"

#include "sc_models/mpi/mpi_world.h"
#include "sc_models/mpi/partition.h"
#include "testbench/scenario.h"
#include "testbench/switch_factory.h"

namespace fabricsim::testbench {

std::vector<std::vector<std::string>> cluster_placement(const scenario& s, int ranks) {
  if (ranks < 2) return {};
  const uint64_t D = s.nvlink.domains, G = s.nvlink.gpus_per_domain;
  std::vector<std::vector<std::string>> placed = s.partition;
  placed.resize(size_t(ranks));
  for (size_t r = 0; r < s.partition.size(); ++r)
    for (const std::string& name : s.partition[r])
      if (topology::host_index(name, D * G))
        throw core::config_error(s.source + ": partition." + std::to_string(r) + ": " + name +
                                 " is a GPU's NIC: on a system preset it goes with its NVLink domain (domain d on "
                                 "rank d x ranks / domains); name switches only");
  for (uint64_t d = 0; d < D; ++d)
    for (uint64_t i = 0; i < G; ++i) placed[size_t(d * uint64_t(ranks) / D)].push_back(topology::host_name(d * G + i));
  return placed;
}

namespace {

// The scale-out fabric's layout; under several ranks on InfiniBand, config_error when a GPU's NIC and its
// rail leaf are on different ranks (an HCA takes its initial credits from the switch: docs/scale_out.md).
topology::fabric_layout cluster_layout(const scenario& s) {
  topology::fabric_layout lay = topology::plan_fabric(topology::cluster_scale_out(s.nvlink, s.topology), s.link);
  const int ranks = mpi::world::get().size();
  if (ranks < 2 || !s.switch_model.infiniband()) return lay;
  const mpi::partition part(lay, ranks, cluster_placement(s, ranks));
  for (size_t h = 0; h < lay.hosts; ++h)
    if (part.host_rank(h) != part.switch_rank(lay.host_leaf[h]))
      throw core::config_error(
          s.source + ": system.scale_out " + s.system.scale_out + " under " + std::to_string(ranks) +
          " MPI ranks: " + topology::host_name(h) + " (GPU " + std::to_string(h % s.nvlink.gpus_per_domain) +
          " of NVLink domain " + std::to_string(h / s.nvlink.gpus_per_domain) + ") is on rank " +
          std::to_string(part.host_rank(h)) + " with its domain, its rail leaf " + lay.switches[lay.host_leaf[h]].name +
          " on rank " + std::to_string(part.switch_rank(lay.host_leaf[h])) +
          ", and an InfiniBand HCA's cable to its switch cannot cross processes yet: give every rank whole groups "
          "of rail leaves (topology.groups a multiple of the ranks, topology.hosts_per_leaf = domains / groups), "
          "or use system.scale_out spectrum_x (docs/scale_out.md)");
  return lay;
}

}  // namespace

cluster_part::cluster_part(const scenario& s, core::sim_context& ctx, uint64_t hbm_bytes,
                           const nic::supernic_params& nic, bool ship_payload)
    : so(cluster_layout(s), cluster_placement(s, mpi::world::get().size())),
      cl(s.nvlink, s.topology, s.link, make_switch_factory(s, ctx), nic, s.pcie, hbm_bytes, ctx, {}, so.built()),
      m_attached(so.attach(cl.scale_out(), ctx, ship_payload)) {}

}  // namespace fabricsim::testbench
