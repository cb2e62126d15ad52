// The fabric-wide counter figures of a run's report (a counter summed, or its largest value, over every
// instance that has it), read through an index of the statistics registry built once.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "sc_models/core/stats.h"

namespace fabricsim::testbench {

// stats_registry::counter_total and counter_max scan every instance per figure; at 4,096 NICs (69,761
// instances) the report's fifteen figures were ~10 % of a set-up-and-report run's CPU (docs/scale_out.md,
// "The report on rank 0"). This indexes every counter once and reads the values when asked.
class report_counters {
 public:
  // Indexes the counters `stats` holds now: build it once every counter is registered (under mpirun, after
  // scale_out::merge_statistics, which adds the other ranks' blocks to rank 0's registry).
  explicit report_counters(core::stats_registry& stats);
  // The sum of counter `name` over every instance that has it (0 when none has), read now.
  uint64_t total(const std::string& name) const;
  // Its largest value over every instance that has it (0 when none has), read now.
  uint64_t max(const std::string& name) const;

 private:
  std::unordered_map<std::string, std::vector<const uint64_t*>> m_by_name;
};

}  // namespace fabricsim::testbench
