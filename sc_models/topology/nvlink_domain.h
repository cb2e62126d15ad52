// The NVLink scale-up domain (topology.kind nvl72): `nvlink.domains` domains of `gpus_per_domain` GPUs and
// `switch_chips` NVLink switch chips, every GPU with links_per_gpu / switch_chips links to every chip of its
// domain, so that any two GPUs of a domain are one switch hop apart. Domains share no NVLink.
//
// Names: GPU i of domain d is `d<d>_gpu<i>`, chip c `d<d>_nvsw<c>`; links `d<d>_gpu<i>_to_nvsw<c>` and
// `d<d>_nvsw<c>_to_gpu<i>` (with `_<j>` appended when there are several links to one chip). GPU link l goes to
// chip l mod switch_chips; on chip c, GPU i's j-th link is port i x links_per_chip + j.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "sc_models/core/link.h"
#include "sc_models/core/sim_context.h"
#include "sc_models/nvlink/gpu_endpoint.h"
#include "sc_models/nvlink/nvlink_params.h"
#include "sc_models/nvlink/nvlink_switch.h"

namespace fabricsim::topology {

class nvlink_domains {
 public:
  // `hbm_bytes`: the HBM modelled per GPU (what the workload allocates). GPU host ids (payload pattern) run
  // 0 .. domains x gpus_per_domain - 1 across domains. `built[d]` (empty: all) says which domains this
  // process builds (a scale-out rank, docs/scale_out.md): the GPUs and chips of the others are nullptr in
  // gpus() and chips(), and their links are not built; every link keeps the calendar key it has when all are.
  nvlink_domains(const nvlink::nvlink_params& params, uint64_t hbm_bytes, core::sim_context& ctx,
                 const std::vector<bool>& built = {});
  nvlink_domains(const nvlink_domains&) = delete;
  nvlink_domains& operator=(const nvlink_domains&) = delete;

  const nvlink::nvlink_params& params() const { return m_params; }
  unsigned domains() const { return unsigned(m_params.domains); }
  unsigned gpus_per_domain() const { return unsigned(m_params.gpus_per_domain); }
  unsigned chips_per_domain() const { return unsigned(m_params.switch_chips); }
  // Whether this process builds domain `d` (always, outside a scale-out run).
  bool built(unsigned d) const { return m_gpus[size_t(d) * gpus_per_domain()] != nullptr; }
  nvlink::gpu_endpoint& gpu(unsigned domain, unsigned i) { return *m_gpus[domain * gpus_per_domain() + i]; }
  nvlink::nvlink_switch& chip(unsigned domain, unsigned c) { return *m_chips[domain * chips_per_domain() + c]; }
  const std::vector<std::unique_ptr<nvlink::gpu_endpoint>>& gpus() const { return m_gpus; }
  const std::vector<std::unique_ptr<nvlink::nvlink_switch>>& chips() const { return m_chips; }
  const std::vector<std::unique_ptr<core::link>>& links() const { return m_links; }
  // The first port of chip c towards GPU i (any chip: the layout is the same).
  unsigned chip_port(unsigned gpu) const { return unsigned(gpu * m_params.links_per_chip()); }

  // Starts an NVLS operation on every chip of `domain` over the GPUs `members` (indices in the domain).
  void start_nvls(unsigned domain, nvlink::nvls_op op, const std::vector<uint32_t>& members);

  // Credits: overruns of any receiver and sends beyond the advertised limit, over every GPU and chip built here.
  uint64_t credit_overruns() const;
  uint64_t credit_violations() const;

 private:
  nvlink::nvlink_params m_params;
  std::vector<std::unique_ptr<nvlink::gpu_endpoint>> m_gpus;
  std::vector<std::unique_ptr<nvlink::nvlink_switch>> m_chips;
  std::vector<std::unique_ptr<core::link>> m_links;
};

}  // namespace fabricsim::topology
