// A scoreboard for direct data placement: every payload write is checked as it lands, against the bytes its
// operation's source holds at the matching offset (memory::payload_pattern: generated, never stored), and
// every operation's byte coverage is tracked, so that bytes need not be kept to be checked and an operation
// still in flight has its placed bytes checked too (docs/report.md, "How `verified` is decided").
//
// An operation is a region: `length` bytes that land at [dest_addr, +length) of `dest_host`'s memory and
// come from [source_addr, +length) of `source_host`'s. A landing is split by where it falls:
//  - inside the region whose range holds its first byte: compared with the source bytes at the same
//    offset; bytes not landed before are `checked` (and covered), bytes landed before are `duplicate`
//    (compared as well: a wrong resend is a mismatch, but a byte counts as checked once);
//  - past that region's end: `past_end` of that region, not compared;
//  - a landing whose first byte is in no region: `stray` bytes of the run.
// Memory grows with the gaps in coverage of operations in flight (a vector of runs each), not with bytes.
#pragma once

#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "sc_models/memory/landing_observer.h"
#include "sc_models/memory/payload_pattern.h"

namespace fabricsim::memory {

struct landing_region {
  uint32_t dest_host = 0;
  uint64_t dest_addr = 0;
  uint32_t source_host = 0;
  uint64_t source_addr = 0;
  uint64_t length = 0;
};

// What the scoreboard saw of one region.
struct region_check {
  uint64_t checked = 0;     // distinct bytes landed and compared
  uint64_t mismatched = 0;  // landed bytes that differed from their source (duplicates included)
  uint64_t duplicate = 0;   // landed bytes that had landed before
  uint64_t past_end = 0;    // bytes of a landing that ran past the region's end
};

class placement_scoreboard {
 public:
  placement_scoreboard(const payload_pattern& pattern, size_t hosts);
  ~placement_scoreboard();
  placement_scoreboard(const placement_scoreboard&) = delete;
  placement_scoreboard& operator=(const placement_scoreboard&) = delete;

  // Before the run: a region's index is its order of adding. Regions of one host must not overlap.
  size_t add_region(const landing_region& r);
  // What `host`'s DMA engine reports its writes to.
  landing_observer& observer(uint32_t host);
  void landed(uint32_t host, uint64_t va, const uint8_t* bytes, uint64_t length);
  // A generated payload, told by its name (landing_observer::landed_generated): when it names the source bytes
  // that belong at va (same pattern seed, host and address) every byte is right without making any; otherwise
  // its bytes are made and compared as landed() does, so both ways count the same.
  void landed_generated(uint32_t host, uint64_t va, const payload_pattern& pattern, uint32_t source_host,
                        uint64_t source_va, uint64_t length);

  size_t regions() const { return m_regions.size(); }
  const landing_region& region(size_t i) const { return m_regions[i].where; }
  const region_check& check(size_t i) const { return m_regions[i].seen; }
  // Every byte of the region landed.
  bool covered(size_t i) const { return m_regions[i].seen.checked == m_regions[i].where.length; }
  uint64_t stray_bytes() const { return m_stray; }
  uint64_t landings() const { return m_landings; }

 private:
  // The offsets of a region that have landed: sorted, disjoint, non-touching runs [first, second), in the
  // region's own entry (one pointer less to follow per landing), freed once the region is covered.
  using runs = std::vector<std::pair<uint64_t, uint64_t>>;
  static uint64_t add_run(runs& done, uint64_t lo, uint64_t hi);  // how many of [lo, hi) had landed
  struct tracked {
    landing_region where;
    region_check seen;
    runs done;
  };
  class host_observer : public landing_observer {
   public:
    host_observer(placement_scoreboard& sb, uint32_t host) : m_sb(sb), m_host(host) {}
    void landed(uint64_t va, const uint8_t* bytes, uint64_t length) override { m_sb.landed(m_host, va, bytes, length); }
    void landed_generated(uint64_t va, const payload_pattern& pattern, uint32_t source_host, uint64_t source_va,
                          uint64_t length) override {
      m_sb.landed_generated(m_host, va, pattern, source_host, source_va, length);
    }

   private:
    placement_scoreboard& m_sb;
    uint32_t m_host;
  };
  size_t find(uint32_t host, uint64_t va);  // the region holding va, or regions()
  // The region a landing of `length` bytes at va falls in (nullptr: stray, counted), with its offset there and
  // how many of its bytes are inside (the rest counted past the end).
  tracked* locate(uint32_t host, uint64_t va, uint64_t length, uint64_t& offset, uint64_t& inside);
  void land_in(tracked& t, uint64_t offset, uint64_t length, uint64_t mismatched);

  payload_pattern m_pattern;
  std::vector<tracked> m_regions;
  std::vector<std::vector<std::pair<uint64_t, size_t>>> m_by_host;  // (dest_addr, region), sorted on use
  std::vector<bool> m_sorted;
  // Per host: the region its last landing fell in (none: look it up). A host's landings mostly fall in one
  // region in a row, so most find only this array and the region's own entry, which the landing reads anyway.
  static constexpr uint32_t no_region = ~0u;
  std::vector<uint32_t> m_last;
  std::vector<std::unique_ptr<host_observer>> m_observers;
  uint64_t m_stray = 0, m_landings = 0;
};

}  // namespace fabricsim::memory
