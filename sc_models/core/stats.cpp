// The statistics registry and its JSON form.
#include "sc_models/core/stats.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string_view>

namespace fabricsim::core {

void stats_registry::add(const std::string& instance, const std::string& name, entry e) {
  auto [it, inserted] = m_entries[instance].emplace(name, std::move(e));
  if (!inserted) throw std::logic_error("statistic registered twice: " + instance + "." + name);
  // Once built, the index sees every counter registered after it (no rebuild of the whole index).
  if (m_counters_indexed && it->second.k == kind::counter) m_counters_by_name[name].push_back(it->second.counter);
}

void stats_registry::counter(const std::string& instance, const std::string& name, const char* unit,
                             const char* description, const uint64_t* value) {
  add(instance, name, entry{kind::counter, unit, description, value, {}, nullptr});
}

void stats_registry::gauge(const std::string& instance, const std::string& name, const char* unit,
                           const char* description, std::function<double()> read) {
  add(instance, name, entry{kind::gauge, unit, description, nullptr, std::move(read), nullptr});
}

void stats_registry::hist(const std::string& instance, const std::string& name, const char* unit,
                          const char* description, const histogram* h) {
  add(instance, name, entry{kind::histogram, unit, description, nullptr, {}, h});
}

void stats_registry::fine_hist(const std::string& instance, const std::string& name, const char* unit,
                               const char* description, const fine_histogram* h) {
  entry e{kind::fine, unit, description, nullptr, {}, nullptr};
  e.fine = h;
  add(instance, name, std::move(e));
}

const fine_histogram& stats_registry::fine_hist_value(const std::string& instance, const std::string& name) const {
  const entry& e = m_entries.at(instance).at(name);
  if (e.k != kind::fine) throw std::out_of_range(instance + "." + name + " is not a fine histogram");
  return *e.fine;
}

uint64_t stats_registry::counter_value(const std::string& instance, const std::string& name) const {
  const entry& e = m_entries.at(instance).at(name);
  if (e.k != kind::counter) throw std::out_of_range(instance + "." + name + " is not a counter");
  return *e.counter;
}

const std::vector<const uint64_t*>& stats_registry::counters_named(const std::string& name) const {
  if (!m_counters_indexed) {
    for (const auto& [instance, entries] : m_entries)
      for (const auto& [counter_name, e] : entries)
        if (e.k == kind::counter) m_counters_by_name[counter_name].push_back(e.counter);
    m_counters_indexed = true;
  }
  static const std::vector<const uint64_t*> none;
  auto it = m_counters_by_name.find(name);
  return it == m_counters_by_name.end() ? none : it->second;
}

uint64_t stats_registry::counter_total(const std::string& name) const {
  uint64_t total = 0;
  for (const uint64_t* v : counters_named(name)) total += *v;
  return total;
}

uint64_t stats_registry::counter_max(const std::string& name) const {
  uint64_t best = 0;
  for (const uint64_t* v : counters_named(name)) best = std::max(best, *v);
  return best;
}

bool stats_registry::has(const std::string& instance, const std::string& name) const {
  auto it = m_entries.find(instance);
  return it != m_entries.end() && it->second.count(name) != 0;
}

namespace {
// `instance`'s pattern (stats_registry::pattern_of) into `out`, reusing its storage: the report asks for the
// pattern of every instance (69,761 at 4,096 NICs) twice.
void pattern_into(const std::string& instance, std::string& out) {
  out.clear();
  for (size_t i = 0; i < instance.size(); ++i) {
    const bool digit = instance[i] >= '0' && instance[i] <= '9';
    if (!digit)
      out += instance[i];
    else if (i == 0 || instance[i - 1] < '0' || instance[i - 1] > '9')
      out += '*';
  }
}

// A power-of-two histogram's buckets, [{"below": b, "count": n}, ...] over its non-empty buckets.
nlohmann::json buckets_json(const histogram& h) {
  nlohmann::json buckets = nlohmann::json::array();
  for (unsigned k = 0; k < 65; ++k)
    if (h.bucket(k)) {
      nlohmann::json b = nlohmann::json::object();
      b["below"] = k == 0 ? 1 : (k >= 64 ? UINT64_MAX : (uint64_t(1) << k));
      b["count"] = h.bucket(k);
      buckets.push_back(std::move(b));
    }
  return buckets;
}

// A fine histogram's summary and buckets, [{"from": v, "count": n}, ...] over its non-empty buckets.
void fine_json(const fine_histogram& h, nlohmann::json& j) {
  j["count"] = h.count();
  j["min"] = h.min();
  j["max"] = h.max();
  j["mean"] = h.mean();
  j["p50"] = h.quantile(0.5);
  j["p90"] = h.quantile(0.9);
  j["p99"] = h.quantile(0.99);
  j["p999"] = h.quantile(0.999);
  nlohmann::json buckets = nlohmann::json::array();
  for (unsigned i = 0; i < fine_histogram::buckets; ++i)
    if (h.bucket(i)) {
      nlohmann::json b = nlohmann::json::object();
      b["from"] = fine_histogram::lower(i);
      b["count"] = h.bucket(i);
      buckets.push_back(std::move(b));
    }
  j["buckets"] = std::move(buckets);
}
}  // namespace

std::string stats_registry::pattern_of(const std::string& instance) {
  std::string out;
  out.reserve(instance.size());
  pattern_into(instance, out);
  return out;
}

stats_registry::described stats_registry::descriptions() const {
  described out;
  std::string pattern, last;
  std::map<std::string, std::pair<const char*, const char*>>* by_name = nullptr;
  for (const auto& [instance, entries] : m_entries) {
    // Instances of one pattern often come in a row (sw0.port1, sw0.port2, ...): look the pattern up once.
    pattern_into(instance, pattern);
    if (!by_name || pattern != last) {
      by_name = &out[pattern];
      last = pattern;
    }
    for (const auto& [name, e] : entries) by_name->emplace(name, std::make_pair(e.unit, e.description));
  }
  return out;
}

nlohmann::json stats_registry::descriptions_json() const {
  nlohmann::json out = nlohmann::json::object();
  for (const auto& [pattern, names] : descriptions()) {
    nlohmann::json& block = out[pattern];
    for (const auto& [name, text] : names) block[name] = {{"unit", text.first}, {"description", text.second}};
  }
  return out;
}

nlohmann::json stats_registry::to_json() const {
  // The by-name index is a cache: freed here, before the report's largest allocation (at 4,096 NICs its 5 MB
  // would add to the peak); a later by-name query builds it again.
  m_counters_by_name.clear();
  m_counters_indexed = false;
  using object_t = nlohmann::json::object_t;
  const described text = descriptions();
  nlohmann::json out = nlohmann::json::object();
  // m_entries and a JSON object are both maps ordered by std::less on the name: every entry is appended at
  // the end of its object (constant time) rather than looked up from the root (a string comparison per level).
  object_t& blocks = out.get_ref<object_t&>();
  std::string pattern;
  for (const auto& [instance, entries] : m_entries) {
    object_t& block =
        blocks.emplace_hint(blocks.end(), instance, nlohmann::json::object())->second.get_ref<object_t&>();
    pattern_into(instance, pattern);
    const auto& by_name = text.at(pattern);
    auto described_it = by_name.begin();  // by_name holds every name of `entries`, in the same order
    for (const auto& [name, e] : entries) {
      nlohmann::json j = nlohmann::json::object();
      switch (e.k) {
        case kind::counter:
          j.get_ref<object_t&>().emplace("value", *e.counter);
          break;
        case kind::gauge:
          j.get_ref<object_t&>().emplace("value", e.gauge());
          break;
        case kind::histogram:
          j["count"] = e.hist->count();
          j["min"] = e.hist->min();
          j["max"] = e.hist->max();
          j["mean"] = e.hist->mean();
          j["buckets"] = buckets_json(*e.hist);
          break;
        case kind::fine:
          fine_json(*e.fine, j);
          break;
      }
      while (described_it->first != name) ++described_it;
      const auto& [unit, description] = described_it->second;
      if ((unit != e.unit && std::string_view(unit) != e.unit) ||
          (description != e.description && std::string_view(description) != e.description)) {
        j["unit"] = e.unit;  // not what its pattern says: said here
        j["description"] = e.description;
      }
      block.emplace_hint(block.end(), name, std::move(j));
    }
  }
  return out;
}

void stats_registry::for_each_entry(const std::function<void(const merge_entry&)>& f) {
  // The registry keeps const pointers because blocks never expect it to write; the merge is the one writer,
  // and every registered value is a non-const member of a live block.
  for (auto& [instance, names] : m_entries)
    for (auto& [name, e] : names)
      f({instance, name, e.k == kind::counter ? const_cast<uint64_t*>(e.counter) : nullptr,
         e.k == kind::histogram ? const_cast<histogram*>(e.hist) : nullptr, e.k == kind::gauge ? &e.gauge : nullptr,
         e.k == kind::fine ? const_cast<fine_histogram*>(e.fine) : nullptr, e.unit, e.description});
}

void stats_registry::probe(const std::string& instance, const std::string& name, const char* unit,
                           const char* description, std::function<double()> read) {
  if (!m_probes[instance].emplace(name, probe_entry{unit, description, std::move(read), {}}).second)
    throw std::logic_error("probe registered twice: " + instance + "." + name);
}

void stats_registry::probe_record(const std::string& instance, const std::string& name, const char* description,
                                  std::function<nlohmann::json()> read) {
  if (!m_probes[instance].emplace(name, probe_entry{"", description, {}, std::move(read)}).second)
    throw std::logic_error("probe registered twice: " + instance + "." + name);
}

bool stats_registry::has_probe(const std::string& instance, const std::string& name) const {
  auto it = m_probes.find(instance);
  return it != m_probes.end() && it->second.count(name) != 0;
}

const std::function<double()>& stats_registry::probe_reader(const std::string& instance,
                                                            const std::string& name) const {
  const probe_entry& p = m_probes.at(instance).at(name);
  if (!p.value) throw std::out_of_range(instance + "." + name + " is not a value probe");
  return p.value;
}

nlohmann::json stats_registry::probe_record_value(const std::string& instance, const std::string& name) const {
  const probe_entry& p = m_probes.at(instance).at(name);
  if (!p.record) throw std::out_of_range(instance + "." + name + " is not a record probe");
  return p.record();
}

}  // namespace fabricsim::core
