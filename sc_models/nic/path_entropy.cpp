// Path entropy of the SuperNIC: fixed per QP, per packet (spraying) or per flowlet.
#include "sc_models/nic/path_entropy.h"

#include <algorithm>

#include "sc_models/nic/policy_table.h"
#include "sc_models/nic/supernic.h"

namespace fabricsim::nic {

namespace {

// "fixed": every packet of a QP on one path (the port NICs derive from the QP).
class fixed_entropy final : public path_entropy {
 public:
  uint16_t data_port(size_t, uint16_t src_port, core::picoseconds, core::picoseconds) override { return src_port; }
  const char* name() const override { return "fixed"; }
};

// "per_packet": every packet on a path of its own (packet spraying; the receiver reorders).
class per_packet_entropy final : public path_entropy {
 public:
  explicit per_packet_entropy(core::rng_stream& rng) : m_rng(rng) {}
  uint16_t data_port(size_t, uint16_t, core::picoseconds, core::picoseconds) override {
    return random_entropy_port(m_rng);
  }
  const char* name() const override { return "per_packet"; }

 private:
  core::rng_stream& m_rng;
};

// "per_flowlet": a new path after an idle gap longer than flowlet_gap_ns: packets of the old flowlet have
// drained by then, so the new path cannot reorder them. The gap runs from the last packet's start.
class per_flowlet_entropy final : public path_entropy {
 public:
  per_flowlet_entropy(core::rng_stream& rng, core::picoseconds gap) : m_rng(rng), m_gap(gap) {}
  void add_qp() override { m_qp.push_back({}); }
  void connect(size_t q, uint16_t src_port) override { m_qp[q].port = src_port; }
  uint16_t data_port(size_t q, uint16_t, core::picoseconds t, core::picoseconds start) override {
    flowlet& f = m_qp[q];
    if (f.last_tx != core::picoseconds{} && t > f.last_tx && t - f.last_tx > m_gap) {
      f.port = random_entropy_port(m_rng);
      ++m_flowlets;
    }
    f.last_tx = std::max(t, start);
    return f.port;
  }
  const char* name() const override { return "per_flowlet"; }

 private:
  struct flowlet {
    core::picoseconds last_tx{};  // when the QP's last packet started (0: none yet)
    uint16_t port = 0;            // the current flowlet's port
  };
  core::rng_stream& m_rng;
  const core::picoseconds m_gap;  // nic.flowlet_gap_ns
  std::vector<flowlet> m_qp;
};

using maker = std::unique_ptr<path_entropy> (*)(const supernic_params&, core::rng_stream&);
struct policy {
  const char* name;
  maker make;
};
// One line per policy: its nic.path_entropy name and its maker.
constexpr policy policies[] = {
    {"fixed",
     [](const supernic_params&, core::rng_stream&) -> std::unique_ptr<path_entropy> {
       return std::make_unique<fixed_entropy>();
     }},
    {"per_packet",
     [](const supernic_params&, core::rng_stream& rng) -> std::unique_ptr<path_entropy> {
       return std::make_unique<per_packet_entropy>(rng);
     }},
    {"per_flowlet",
     [](const supernic_params& p, core::rng_stream& rng) -> std::unique_ptr<path_entropy> {
       return std::make_unique<per_flowlet_entropy>(rng, core::picoseconds::from_ns(p.flowlet_gap_ns));
     }},
};

}  // namespace

const std::vector<std::string>& path_entropy_names() {
  static const std::vector<std::string> names = policy_names(policies);
  return names;
}

std::unique_ptr<path_entropy> make_path_entropy(const std::string& name, const supernic_params& params,
                                                core::rng_stream& rng, const std::string& instance) {
  return find_policy(policies, name, instance, "nic.path_entropy").make(params, rng);
}

}  // namespace fabricsim::nic
