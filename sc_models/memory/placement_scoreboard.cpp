// The placement scoreboard.
#include "sc_models/memory/placement_scoreboard.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace fabricsim::memory {

// A landing extends or merges runs in place, so once the vector has grown to the most gaps an operation has
// in flight (the reordering the fabric produces), no landing allocates. Most landings come in order, at or past
// the end of the last run: they are added there without a search.
uint64_t placement_scoreboard::add_run(runs& done, uint64_t lo, uint64_t hi) {
  if (done.empty() || done.back().second < lo) {
    done.emplace_back(lo, hi);
    return 0;
  }
  if (done.back().second == lo) {
    done.back().second = hi;
    return 0;
  }
  auto first = std::lower_bound(done.begin(), done.end(), lo,
                                [](const std::pair<uint64_t, uint64_t>& r, uint64_t at) { return r.second < at; });
  uint64_t overlap = 0, merged_lo = lo, merged_hi = hi;
  auto it = first;
  for (; it != done.end() && it->first <= hi; ++it) {  // overlapping or touching: merged
    const uint64_t x = std::max(lo, it->first), y = std::min(hi, it->second);
    overlap += y > x ? y - x : 0;
    merged_lo = std::min(merged_lo, it->first);
    merged_hi = std::max(merged_hi, it->second);
  }
  if (first == it) {
    done.insert(first, {lo, hi});
  } else {
    *first = {merged_lo, merged_hi};
    done.erase(first + 1, it);
  }
  return overlap;
}

placement_scoreboard::placement_scoreboard(const payload_pattern& pattern, size_t hosts)
    : m_pattern(pattern), m_by_host(hosts), m_sorted(hosts, true), m_last(hosts, no_region), m_observers(hosts) {}

placement_scoreboard::~placement_scoreboard() = default;

size_t placement_scoreboard::add_region(const landing_region& r) {
  if (r.dest_host >= m_by_host.size() || r.source_host >= m_by_host.size())
    throw std::logic_error("placement_scoreboard: a region names host " +
                           std::to_string(std::max(r.dest_host, r.source_host)) + " of " +
                           std::to_string(m_by_host.size()));
  m_regions.push_back({r, {}, {}});
  m_by_host[r.dest_host].push_back({r.dest_addr, m_regions.size() - 1});
  m_sorted[r.dest_host] = false;
  m_last[r.dest_host] = no_region;  // the next landing sorts the host's regions and checks them for overlaps
  return m_regions.size() - 1;
}

landing_observer& placement_scoreboard::observer(uint32_t host) {
  if (!m_observers.at(host)) m_observers[host] = std::make_unique<host_observer>(*this, host);
  return *m_observers[host];
}

size_t placement_scoreboard::find(uint32_t host, uint64_t va) {
  if (host < m_last.size() && m_last[host] != no_region) {
    const landing_region& r = m_regions[m_last[host]].where;
    if (va >= r.dest_addr && va < r.dest_addr + r.length) return m_last[host];
  }
  auto& index = m_by_host.at(host);
  if (!m_sorted[host]) {
    std::sort(index.begin(), index.end());
    for (size_t k = 1; k < index.size(); ++k) {
      const landing_region& before = m_regions[index[k - 1].second].where;
      if (before.dest_addr + before.length > index[k].first)
        throw std::logic_error("placement_scoreboard: two regions of host " + std::to_string(host) + " overlap at " +
                               std::to_string(index[k].first));
    }
    m_sorted[host] = true;
  }
  auto it = std::upper_bound(index.begin(), index.end(), std::make_pair(va, m_regions.size()));
  if (it == index.begin()) return m_regions.size();
  --it;
  const landing_region& r = m_regions[it->second].where;
  if (va >= r.dest_addr + r.length) return m_regions.size();
  if (it->second < no_region) m_last[host] = uint32_t(it->second);
  return it->second;
}

placement_scoreboard::tracked* placement_scoreboard::locate(uint32_t host, uint64_t va, uint64_t length,
                                                            uint64_t& offset, uint64_t& inside) {
  ++m_landings;
  if (length == 0) return nullptr;
  const size_t i = find(host, va);
  if (i == m_regions.size()) {
    m_stray += length;
    return nullptr;
  }
  tracked& t = m_regions[i];
  offset = va - t.where.dest_addr;
  inside = std::min(length, t.where.length - offset);
  t.seen.past_end += length - inside;
  return &t;
}

void placement_scoreboard::landed(uint32_t host, uint64_t va, const uint8_t* bytes, uint64_t length) {
  uint64_t offset = 0, inside = 0;
  tracked* t = locate(host, va, length, offset, inside);
  if (t == nullptr) return;
  land_in(*t, offset, inside, m_pattern.mismatches(bytes, t->where.source_host, t->where.source_addr + offset, inside));
}

void placement_scoreboard::landed_generated(uint32_t host, uint64_t va, const payload_pattern& pattern,
                                            uint32_t source_host, uint64_t source_va, uint64_t length) {
  uint64_t offset = 0, inside = 0;
  tracked* t = locate(host, va, length, offset, inside);
  if (t == nullptr) return;
  uint64_t mismatched = 0;
  // The bytes are a function of (seed, host, address): the same name, the same bytes. Any other name (a
  // misplaced write, the wrong source offset or host, another seed) is made and compared byte by byte.
  if (pattern.seed() != m_pattern.seed() || source_host != t->where.source_host ||
      source_va != t->where.source_addr + offset) {
    static thread_local std::vector<uint8_t> scratch;
    if (scratch.size() < inside) scratch.resize(inside);
    pattern.fill(scratch.data(), source_host, source_va, inside);
    mismatched = m_pattern.mismatches(scratch.data(), t->where.source_host, t->where.source_addr + offset, inside);
  }
  land_in(*t, offset, inside, mismatched);
}

void placement_scoreboard::land_in(tracked& t, uint64_t offset, uint64_t length, uint64_t mismatched) {
  t.seen.mismatched += mismatched;
  if (length == 0) return;
  if (covered(size_t(&t - m_regions.data()))) {  // all there already: every byte a duplicate
    t.seen.duplicate += length;
    return;
  }
  const uint64_t before = add_run(t.done, offset, offset + length);
  t.seen.duplicate += before;
  t.seen.checked += length - before;
  if (t.seen.checked == t.where.length) runs().swap(t.done);  // one run, the whole region: no need to keep it
}

}  // namespace fabricsim::memory
