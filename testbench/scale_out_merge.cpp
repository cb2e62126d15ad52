// The statistics merge of a scale-out run.
#include "testbench/scale_out_merge.h"

#include <algorithm>
#include <cstring>
#include <functional>
#include <stdexcept>
#include <string_view>
#include <unordered_map>

namespace fabricsim::testbench {

namespace {

// The records: per instance (its entries in registry order, instances in registry order) the instance's name
// and its entry count, then per entry
//   name, unit, description: text references; kind, mode: a byte each; the value:
//   counter: the value (owned) or the change and the value before (summed); gauge: a double; a histogram's
//   bytes.
// A text reference is a 32-bit id into the rank's table; the id equal to the table's size adds a text, whose
// length and bytes follow.
enum class stat_kind : uint8_t { counter, gauge, hist, fine };
enum class stat_mode : uint8_t { owned, summed };  // the owner's value; a change summed over the ranks

class record_writer {
 public:
  template <class T>
  void put(const T& v) {
    const size_t at = bytes.size();
    bytes.resize(at + sizeof(T));
    std::memcpy(bytes.data() + at, &v, sizeof(T));
  }
  void put_text(std::string_view s) {
    put(uint32_t(s.size()));
    bytes.insert(bytes.end(), s.begin(), s.end());
  }
  // A name, by its text (each instance has its own copy of a name).
  void put_name(std::string_view s) { put_ref(m_names.try_emplace(s, m_next), s); }
  // A unit or description, by its address (the blocks register string literals).
  void put_literal(const char* s) { put_ref(m_literals.try_emplace(s, m_next), s ? s : ""); }
  std::vector<uint8_t> bytes;

 private:
  template <class It>
  void put_ref(const std::pair<It, bool>& slot, std::string_view text) {
    put(slot.first->second);
    if (!slot.second) return;
    put_text(text);
    ++m_next;
  }
  uint32_t m_next = 0;
  std::unordered_map<std::string_view, uint32_t> m_names;
  std::unordered_map<const char*, uint32_t> m_literals;
};

// One rank's records, read an entry at a time (the head).
class record_stream {
 public:
  explicit record_stream(const std::vector<uint8_t>& b) : m_at(b.data()), m_end(b.data() + b.size()) { next(); }
  bool valid() const { return m_valid; }
  std::string_view instance() const { return m_instance; }
  std::string_view name() const { return m_texts[m_name]; }
  stat_kind kind() const { return m_kind; }
  stat_mode mode() const { return m_mode; }
  uint32_t unit() const { return m_unit; }
  uint32_t description() const { return m_description; }
  std::string_view text(uint32_t id) const { return m_texts[id]; }
  template <class T>
  T value(size_t k = 0) const {
    T v;
    std::memcpy(static_cast<void*>(&v), m_value + k * sizeof(T), sizeof(T));
    return v;
  }
  void next() {
    m_valid = m_at < m_end;
    if (!m_valid) return;
    if (m_left == 0) {
      m_instance = get_text();
      m_left = get<uint32_t>();
    }
    --m_left;
    m_name = get_ref();
    m_unit = get_ref();
    m_description = get_ref();
    m_kind = get<stat_kind>();
    m_mode = get<stat_mode>();
    m_value = m_at;
    skip(m_kind == stat_kind::counter ? (m_mode == stat_mode::summed ? 16 : 8)
         : m_kind == stat_kind::gauge ? sizeof(double)
         : m_kind == stat_kind::fine  ? sizeof(core::fine_histogram)
                                      : sizeof(core::histogram));
  }

 private:
  void skip(size_t n) {
    if (size_t(m_end - m_at) < n) throw std::logic_error("scale_out: a rank's statistics records are truncated");
    m_at += n;
  }
  template <class T>
  T get() {
    T v;
    const uint8_t* at = m_at;
    skip(sizeof(T));
    std::memcpy(static_cast<void*>(&v), at, sizeof(T));
    return v;
  }
  std::string_view get_text() {
    const uint32_t n = get<uint32_t>();
    const uint8_t* at = m_at;
    skip(n);
    return {reinterpret_cast<const char*>(at), n};
  }
  uint32_t get_ref() {
    const uint32_t id = get<uint32_t>();
    if (id == m_texts.size()) m_texts.push_back(get_text());
    if (id >= m_texts.size()) throw std::logic_error("scale_out: a statistics record names an unknown text");
    return id;
  }
  const uint8_t* m_at;
  const uint8_t* m_end;
  std::vector<std::string_view> m_texts;
  std::string_view m_instance;
  uint32_t m_left = 0;
  bool m_valid = false;
  uint32_t m_name = 0, m_unit = 0, m_description = 0;
  stat_kind m_kind = stat_kind::counter;
  stat_mode m_mode = stat_mode::owned;
  const uint8_t* m_value = nullptr;
};

// Registry order: instance, then name.
bool key_less(std::string_view ai, std::string_view an, std::string_view bi, std::string_view bn) {
  const int c = ai.compare(bi);
  return c < 0 || (c == 0 && an < bn);
}

// One entry merged from the ranks' records.
struct merged {
  stat_kind kind = stat_kind::counter;
  size_t rank = 0;  // the last contributing rank: its unit and description
  uint32_t unit = 0, description = 0;
  uint64_t counter = 0;
  bool have_base = false, have_gauge = false;
  double gauge = 0.0;
  bool hist_used = false;  // the merged histogram (one of each kind, reused: 15 KiB for a fine one)
};

stat_kind kind_of(const core::stats_registry::merge_entry& e) {
  return e.counter ? stat_kind::counter : e.gauge ? stat_kind::gauge : e.fine ? stat_kind::fine : stat_kind::hist;
}

}  // namespace

void stats_merge::take_bases(core::stats_registry& stats, const mpi::partition& part) {
  m_base.clear();
  const std::string* instance = nullptr;
  bool device = false;
  stats.for_each_entry([&](const core::stats_registry::merge_entry& e) {
    if (&e.instance != instance) {
      instance = &e.instance;
      device = part.instance_rank(e.instance) >= 0;
    }
    if (e.counter && !device) m_base.emplace_back(e.counter, *e.counter);
  });
  std::sort(m_base.begin(), m_base.end());
}

std::vector<uint8_t> stats_merge::pack(core::stats_registry& stats, const mpi::partition& part, int rank) const {
  record_writer out;
  const std::string* instance = nullptr;
  int owner = -1;
  size_t count_at = 0;
  uint32_t count = 0;
  auto close = [&] {
    if (count) std::memcpy(out.bytes.data() + count_at, &count, sizeof count);
    count = 0;
  };
  stats.for_each_entry([&](const core::stats_registry::merge_entry& e) {
    if (&e.instance != instance) {
      close();
      instance = &e.instance;
      owner = part.instance_rank(e.instance);
    }
    if (owner >= 0 && owner != rank) return;  // another rank's device: its owner sends it
    if (count == 0) {
      out.put_text(e.instance);
      count_at = out.bytes.size();
      out.put(uint32_t(0));
    }
    ++count;
    const stat_kind k = kind_of(e);
    const bool summed = owner < 0 && k == stat_kind::counter;
    out.put_name(e.name);
    out.put_literal(e.unit);
    out.put_literal(e.description);
    out.put(k);
    out.put(summed ? stat_mode::summed : stat_mode::owned);
    if (k == stat_kind::counter && summed) {
      const uint64_t* key = e.counter;
      const auto it = std::lower_bound(m_base.begin(), m_base.end(), key,
                                       [](const std::pair<const uint64_t*, uint64_t>& b, const uint64_t* k) {
                                         return std::less<const uint64_t*>()(b.first, k);
                                       });
      // An entry registered after the bases were taken (an NVLink GPU's or chip's, at the end of elaboration,
      // on the rank of its domain only) started at 0.
      const uint64_t base = (it == m_base.end() || it->first != e.counter) ? 0 : it->second;
      out.put(*e.counter - base);
      out.put(base);
    } else if (k == stat_kind::counter) {
      out.put(*e.counter);
    } else if (k == stat_kind::gauge) {
      out.put((*e.gauge)());
    } else if (k == stat_kind::fine) {
      out.put(*e.fine);
    } else {
      out.put(*e.hist);
    }
  });
  close();
  return std::move(out.bytes);
}

size_t stats_merge::merge(core::stats_registry& stats, const std::vector<std::vector<uint8_t>>& records) {
  std::vector<core::stats_registry::merge_entry> here;  // rank 0's own entries, in registry order
  stats.for_each_entry([&](const core::stats_registry::merge_entry& e) { here.push_back(e); });
  std::vector<record_stream> in;
  in.reserve(records.size());
  for (const auto& b : records) in.emplace_back(b);
  // The kept copies of the ranks' units and descriptions, by rank and text id (made when first needed).
  std::vector<std::vector<const char*>> kept(in.size());
  auto keep = [&](size_t r, uint32_t id) {
    if (kept[r].size() <= id) kept[r].resize(id + 1, nullptr);
    if (!kept[r][id]) kept[r][id] = m_texts.emplace_back(in[r].text(id)).c_str();
    return kept[r][id];
  };
  size_t mine = 0, adopted = 0;
  std::string instance_text;
  core::histogram hist;
  core::fine_histogram fine;
  for (;;) {
    // The smallest key among the ranks' heads: every rank that has it contributes, in rank order.
    const record_stream* least = nullptr;
    for (const record_stream& s : in)
      if (s.valid() && (!least || key_less(s.instance(), s.name(), least->instance(), least->name()))) least = &s;
    if (!least) break;
    const std::string_view instance = least->instance(), name = least->name();
    merged m;
    for (size_t r = 0; r < in.size(); ++r) {
      record_stream& s = in[r];
      if (!s.valid() || s.instance() != instance || s.name() != name) continue;
      m.kind = s.kind();
      m.rank = r;
      m.unit = s.unit();
      m.description = s.description();
      if (m.kind == stat_kind::counter) {
        const uint64_t v = s.value<uint64_t>();
        if (s.mode() == stat_mode::owned) {
          m.counter = v;
        } else {
          m.counter += v + (m.have_base ? 0 : s.value<uint64_t>(1));
          m.have_base = true;
        }
      } else if (m.kind == stat_kind::gauge) {
        if (!m.have_gauge) m.gauge = s.value<double>();
        m.have_gauge = true;
      } else if (m.kind == stat_kind::fine) {
        if (!m.hist_used) fine = core::fine_histogram{};
        m.hist_used = true;
        fine.merge(s.value<core::fine_histogram>());
      } else {
        if (!m.hist_used) hist = core::histogram{};
        m.hist_used = true;
        hist.merge(s.value<core::histogram>());
      }
      s.next();  // the streams' texts stay valid: `instance` and `name` still refer to them
    }
    // Rank 0's entries before this key got no record (none of their owners has them): they keep their values.
    while (mine < here.size() && key_less(here[mine].instance, here[mine].name, instance, name)) ++mine;
    if (mine < here.size() && here[mine].instance == instance && here[mine].name == name) {
      const core::stats_registry::merge_entry& e = here[mine++];
      if (kind_of(e) != m.kind)
        throw std::logic_error("scale_out: statistic " + e.instance + "." + e.name +
                               " is of another kind on this rank than in the gathered records");
      if (e.counter) {
        *e.counter = m.counter;
      } else if (e.gauge) {
        const double v = m.gauge;
        *e.gauge = [v] { return v; };
      } else if (e.fine) {
        *e.fine = fine;
      } else {
        *e.hist = hist;
      }
      continue;
    }
    // A block this rank did not build: registered with the merged value.
    if (instance_text != instance) instance_text.assign(instance);
    const std::string name_text(name);
    const char* unit = keep(m.rank, m.unit);
    const char* description = keep(m.rank, m.description);
    ++adopted;
    if (m.kind == stat_kind::counter) {
      stats.counter(instance_text, name_text, unit, description, &m_counters.emplace_back(m.counter));
    } else if (m.kind == stat_kind::gauge) {
      const double v = m.gauge;
      stats.gauge(instance_text, name_text, unit, description, [v] { return v; });
    } else if (m.kind == stat_kind::fine) {
      stats.fine_hist(instance_text, name_text, unit, description, &m_fine.emplace_back(fine));
    } else {
      stats.hist(instance_text, name_text, unit, description, &m_hists.emplace_back(hist));
    }
  }
  return adopted;
}

}  // namespace fabricsim::testbench
