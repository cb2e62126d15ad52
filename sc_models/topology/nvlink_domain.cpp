// The NVLink scale-up domain builder.
#include "sc_models/topology/nvlink_domain.h"

#include <stdexcept>
#include <string>

namespace fabricsim::topology {

nvlink_domains::nvlink_domains(const nvlink::nvlink_params& params, uint64_t hbm_bytes, core::sim_context& ctx,
                               const std::vector<bool>& built)
    : m_params(params) {
  params.validate("nvlink");
  const unsigned G = gpus_per_domain(), C = chips_per_domain(), L = unsigned(params.links_per_gpu);
  const unsigned lpc = unsigned(params.links_per_chip());
  core::link_params lp;
  lp.rate_gbps = params.link_gbytes_per_s * 8.0;
  lp.propagation_ns = params.link_latency_ns;
  lp.fec_latency_ns = 0.0;
  if (!built.empty() && built.size() != domains())
    throw std::logic_error("nvlink_domains: a mask of " + std::to_string(built.size()) + " domains, not " +
                           std::to_string(domains()));
  // Calendar keys in build order as if every domain were built, so simultaneous events are served in an order
  // the model defines, the same in every partition.
  uint64_t key = 0;
  for (unsigned d = 0; d < domains(); ++d) {
    if (!built.empty() && !built[d]) {
      m_gpus.resize(m_gpus.size() + G);
      m_chips.resize(m_chips.size() + C);
      key += 2 * uint64_t(G) * L;
      continue;
    }
    const std::string dn = "d" + std::to_string(d) + "_";
    for (unsigned i = 0; i < G; ++i)
      m_gpus.push_back(std::make_unique<nvlink::gpu_endpoint>((dn + "gpu" + std::to_string(i)).c_str(), params, i,
                                                              d * G + i, hbm_bytes, ctx));
    for (unsigned c = 0; c < C; ++c) {
      m_chips.push_back(
          std::make_unique<nvlink::nvlink_switch>((dn + "nvsw" + std::to_string(c)).c_str(), params, c, G * lpc, ctx));
      for (unsigned i = 0; i < G; ++i) m_chips.back()->set_route(i, chip_port(i));
    }
    for (unsigned i = 0; i < G; ++i)
      for (unsigned l = 0; l < L; ++l) {
        const unsigned c = l % C, j = l / C, port = chip_port(i) + j;
        nvlink::gpu_endpoint& g = gpu(d, i);
        nvlink::nvlink_switch& s = chip(d, c);
        const std::string suffix = lpc > 1 ? "_" + std::to_string(j) : "";
        const std::string gn = "gpu" + std::to_string(i), sn = "nvsw" + std::to_string(c);
        m_links.push_back(std::make_unique<core::link>((dn + gn + "_to_" + sn + suffix).c_str(), lp, ctx));
        core::link& up = *m_links.back();
        m_links.push_back(std::make_unique<core::link>((dn + sn + "_to_" + gn + suffix).c_str(), lp, ctx));
        core::link& down = *m_links.back();
        g.connect_link(l, up);
        up.bind(s, port);
        s.connect_port(port, down);
        down.bind(g, l);
        up.set_calendar_key(++key);
        down.set_calendar_key(++key);
      }
  }
}

void nvlink_domains::start_nvls(unsigned domain, nvlink::nvls_op op, const std::vector<uint32_t>& members) {
  op.members.clear();
  for (uint32_t g : members) op.members.push_back({g, chip_port(g)});
  for (unsigned c = 0; c < chips_per_domain(); ++c) chip(domain, c).start_nvls(op);
}

uint64_t nvlink_domains::credit_overruns() const {
  uint64_t n = 0;
  for (const auto& g : m_gpus) n += g ? g->credit_overruns() : 0;
  for (const auto& s : m_chips) n += s ? s->credit_overruns() : 0;
  return n;
}

uint64_t nvlink_domains::credit_violations() const {
  uint64_t n = 0;
  for (const auto& g : m_gpus) n += g ? g->credit_violations() : 0;
  for (const auto& s : m_chips) n += s ? s->credit_violations() : 0;
  return n;
}

}  // namespace fabricsim::topology
