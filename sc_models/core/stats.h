// The statistics registry: blocks keep their counters as plain members (an increment costs nothing more)
// and register them once, by instance and name, with a unit and a description. The report reads them all.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <nlohmann/json_fwd.hpp>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "sc_models/core/fine_histogram.h"

namespace fabricsim::core {

// A histogram with power-of-two buckets: bucket k counts values in [2^(k-1), 2^k), bucket 0 counts zeros.
class histogram {
 public:
  void add(uint64_t v) {
    unsigned k = v == 0 ? 0 : 64 - unsigned(__builtin_clzll(v));
    ++m_buckets[k];
    ++m_count;
    m_sum += v;
    if (v < m_min) m_min = v;
    if (v > m_max) m_max = v;
  }
  uint64_t count() const { return m_count; }
  uint64_t sum() const { return m_sum; }
  uint64_t min() const { return m_count ? m_min : 0; }
  uint64_t max() const { return m_max; }
  double mean() const { return m_count ? double(m_sum) / double(m_count) : 0.0; }
  uint64_t bucket(unsigned k) const { return m_buckets[k]; }
  // Adds `o`'s values (an empty histogram changes nothing): merging the processes of a scale-out run.
  void merge(const histogram& o) {
    for (unsigned k = 0; k < 65; ++k) m_buckets[k] += o.m_buckets[k];
    m_count += o.m_count;
    m_sum += o.m_sum;
    if (o.m_min < m_min) m_min = o.m_min;
    if (o.m_max > m_max) m_max = o.m_max;
  }

 private:
  uint64_t m_buckets[65] = {};
  uint64_t m_count = 0, m_sum = 0, m_min = UINT64_MAX, m_max = 0;
};

class stats_registry {
 public:
  stats_registry() = default;
  stats_registry(const stats_registry&) = delete;
  stats_registry& operator=(const stats_registry&) = delete;

  // The pointed-to value must outlive the registry's last read (blocks live for the whole run).
  void counter(const std::string& instance, const std::string& name, const char* unit, const char* description,
               const uint64_t* value);
  void gauge(const std::string& instance, const std::string& name, const char* unit, const char* description,
             std::function<double()> read);
  void hist(const std::string& instance, const std::string& name, const char* unit, const char* description,
            const histogram* h);
  // A run-wide distribution fine enough for percentiles (its JSON adds p50, p90, p99 and p999).
  void fine_hist(const std::string& instance, const std::string& name, const char* unit, const char* description,
                 const fine_histogram* h);

  // Reads one counter by instance and name; throws std::out_of_range when it is not registered.
  uint64_t counter_value(const std::string& instance, const std::string& name) const;
  // Sum of one counter over every instance that has it (0 when none has), read now. Answered from an index of
  // the counters by name, built on the first such query and kept up to date by every later registration (a
  // scale-out merge registers the other ranks' blocks after set-up): a query reads only the counters of its
  // name, not every instance (69,761 at 4,096 NICs).
  uint64_t counter_total(const std::string& name) const;
  // Largest value of one counter over every instance that has it (0 when none has), read now, from the index.
  uint64_t counter_max(const std::string& name) const;
  bool has(const std::string& instance, const std::string& name) const;

  // Every entry, by instance then name (the same order in every process that built the same blocks), with
  // write access: a scale-out run (docs/scale_out.md) merges the statistics of its processes into each
  // registry before the report reads it. Exactly one of counter, hist, fine and gauge is set.
  struct merge_entry {
    const std::string& instance;
    const std::string& name;
    uint64_t* counter;
    histogram* hist;
    std::function<double()>* gauge;
    fine_histogram* fine;
    const char* unit;
    const char* description;
  };
  void for_each_entry(const std::function<void(const merge_entry&)>& f);
  // The registered fine histogram; throws std::out_of_range when there is none.
  const fine_histogram& fine_hist_value(const std::string& instance, const std::string& name) const;

  // {"instance": {"name": {"value": v}, ...}, ...}: the values, each statistic's unit and description left to
  // descriptions_json(), which says them once per kind of instance rather than once per instance (at 4,096
  // NICs the repeated text was half the process's peak memory). An entry whose unit or description differs
  // from the one its instance pattern's first entry of that name gave keeps its own "unit" and "description".
  nlohmann::json to_json() const;
  // {"pattern": {"name": {"unit": u, "description": d}, ...}, ...}, where an instance's pattern is its name
  // with every run of decimal digits written as "*" (h12_nic -> h*_nic, sw0.port3.tc1 -> sw*.port*.tc*).
  nlohmann::json descriptions_json() const;
  // An instance's pattern, as above.
  static std::string pattern_of(const std::string& instance);

  // Probes: what the report and the sampling read from a block at the moment they ask (a queue's depth,
  // its integral up to now, a credit stall still open, the pause log), so that they need not know the
  // block's class. Not statistics of their own: never in to_json(), never merged across scale-out ranks
  // (each rank reads the blocks it built). A probe of a value, or of a structured record (a log).
  void probe(const std::string& instance, const std::string& name, const char* unit, const char* description,
             std::function<double()> read);
  void probe_record(const std::string& instance, const std::string& name, const char* description,
                    std::function<nlohmann::json()> read);
  bool has_probe(const std::string& instance, const std::string& name) const;
  // The reader of a value probe (stable for the registry's life, for a loop that reads it often); throws
  // std::out_of_range when there is none.
  const std::function<double()>& probe_reader(const std::string& instance, const std::string& name) const;
  double probe_value(const std::string& instance, const std::string& name) const {
    return probe_reader(instance, name)();
  }
  nlohmann::json probe_record_value(const std::string& instance, const std::string& name) const;

 private:
  enum class kind { counter, gauge, histogram, fine };
  struct entry {
    kind k;
    const char* unit;
    const char* description;
    const uint64_t* counter = nullptr;
    std::function<double()> gauge;
    const histogram* hist = nullptr;
    const fine_histogram* fine = nullptr;
  };
  void add(const std::string& instance, const std::string& name, entry e);
  // The (unit, description) each (pattern, name) is described by: the first instance's, in name order.
  using described = std::map<std::string, std::map<std::string, std::pair<const char*, const char*>>>;
  described descriptions() const;
  std::map<std::string, std::map<std::string, entry>> m_entries;
  // The registered counters of `name` (none when no instance has it), from the index, built if it is not yet.
  const std::vector<const uint64_t*>& counters_named(const std::string& name) const;
  // Every counter by name, once a by-name query has built it (m_counters_indexed); registration adds to it,
  // to_json() frees it.
  mutable std::unordered_map<std::string, std::vector<const uint64_t*>> m_counters_by_name;
  mutable bool m_counters_indexed = false;
  struct probe_entry {
    const char* unit;
    const char* description;
    std::function<double()> value;           // a value probe, or
    std::function<nlohmann::json()> record;  // a record probe
  };
  std::map<std::string, std::map<std::string, probe_entry>> m_probes;
};

}  // namespace fabricsim::core
