// The report's fabric-wide counter figures, from an index of the statistics registry.
#include "testbench/report_counters.h"

#include <algorithm>

namespace fabricsim::testbench {

report_counters::report_counters(core::stats_registry& stats) {
  // for_each_entry hands out write access (the scale-out merge writes through it); the index only reads.
  stats.for_each_entry([this](const core::stats_registry::merge_entry& e) {
    if (e.counter) m_by_name[e.name].push_back(e.counter);
  });
}

uint64_t report_counters::total(const std::string& name) const {
  auto it = m_by_name.find(name);
  uint64_t sum = 0;
  if (it != m_by_name.end())
    for (const uint64_t* v : it->second) sum += *v;
  return sum;
}

uint64_t report_counters::max(const std::string& name) const {
  auto it = m_by_name.find(name);
  uint64_t best = 0;
  if (it != m_by_name.end())
    for (const uint64_t* v : it->second) best = std::max(best, *v);
  return best;
}

}  // namespace fabricsim::testbench
