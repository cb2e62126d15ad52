// The SHARP path of a collective (collective.algo sharp, allreduce on quantum_x800 switches): the
// aggregation tree over the ranks' switches, an aggregation unit on each of its switches, a SHARP end on
// each rank's NIC, one reduction per iteration, the results against a software reduction, and the `sharp`
// object of the report. Documentation: docs/collectives.md.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <vector>

#include "sc_models/core/units.h"
#include "sc_models/nic/sharp_host.h"
#include "sc_models/switch/quantum/sharp_aggregator.h"
#include "testbench/collective_params.h"
#include "testbench/collective_schedule.h"

namespace fabricsim::topology {
class fabric;
}

namespace fabricsim::testbench {

class collective_sharp {
 public:
  collective_sharp(const collective_params& p, const sw::sharp_params& sharp, uint64_t mtu_bytes,
                   core::picoseconds start_latency, core::picoseconds rx_latency);
  collective_sharp(const collective_sharp&) = delete;
  collective_sharp& operator=(const collective_sharp&) = delete;

  // The tree over the switches of the ranks, an aggregation unit on each of its switches, a SHARP end on each
  // rank's NIC. Float sources are refilled with finite values in [-1, 1) (the random bytes of the other
  // algorithms would be NaNs and infinities as floats).
  void elaborate(topology::fabric& fab, const std::vector<rank_memory>& ranks, uint64_t max_bytes, uint64_t seed,
                 bool fill);
  // Called as each rank has its result at t; `last` for the last rank of the reduction. Set once.
  std::function<void(core::picoseconds t, bool last)> on_rank_done;
  // One reduction of `bytes` from every rank's send buffer into its receive buffer, starting at `at`.
  void start(const std::vector<rank_memory>& ranks, uint64_t bytes, bool check, core::picoseconds at);

  // SHARP results against a plain software reduction (see check()): wrong elements and bytes compared.
  struct check_counts {
    uint64_t wrong = 0, checked_bytes = 0;
  };
  check_counts check(topology::fabric& fab, const std::vector<rank_memory>& ranks, uint64_t bytes);
  // The tree, its units' counters and the largest float error seen (relative to sum|x_i|).
  nlohmann::json report(topology::fabric& fab, const std::vector<rank_memory>& ranks) const;

 private:
  sw::sharp_dtype dtype() const;
  // gamma_(n-1) for the element type: the float results' tolerance relative to sum|x_i| (see check()).
  double gamma() const;

  collective_params m_p;
  uint32_t m_n = 0;
  uint64_t m_elt = 4;
  sw::sharp_params m_params;
  uint64_t m_mtu;
  core::picoseconds m_start_latency, m_rx_latency;
  sw::sharp_tree m_tree;
  std::vector<std::unique_ptr<sw::sharp_aggregator>> m_aggs;
  std::vector<std::unique_ptr<sw::sharp_host>> m_hosts;
  uint32_t m_op = 0, m_done = 0;
  double m_worst = 0.0;
};

}  // namespace fabricsim::testbench
