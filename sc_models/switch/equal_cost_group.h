// Equal-cost port groups of a switch's routes, shared by the Spectrum and Quantum pipelines: each port set
// stored once (a leaf's routes to every remote host use the same uplinks), the choice of a live port keyed
// by the flow when some of the set's links are down, and the least-loaded search of adaptive routing. What
// "live" and "load" mean is the switch's own (link known down, paused class, free credits), passed in.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <vector>

namespace fabricsim::sw {

// One group: `count` egress ports at `ports` (a view into an equal_cost_groups; valid while no group is
// added).
struct equal_cost_group {
  static constexpr unsigned none = ~0u;

  const unsigned* ports = nullptr;
  uint32_t count = 0;

  const unsigned* begin() const { return ports; }
  const unsigned* end() const { return ports + count; }
  unsigned operator[](uint32_t k) const { return ports[k]; }

  // The (key mod L)-th of the group's ports for which live(port) holds, L being how many do, in group
  // order; `none` when none does. Keyed by the flow (ECMP hash, DLID), so a flow whose port stays live keeps
  // it when another port of the group goes down.
  template <class Live>
  unsigned nth_live(uint32_t key, Live&& live) const {
    unsigned n = 0;
    for (uint32_t k = 0; k < count; ++k) n += live(ports[k]) ? 1u : 0u;
    if (n == 0) return none;
    unsigned pick = key % n;
    for (uint32_t k = 0; k < count; ++k) {
      if (!live(ports[k])) continue;
      if (pick-- == 0) return ports[k];
    }
    return none;
  }

  struct choice {
    unsigned port = none;  // none: no port was eligible
    int64_t cost = 0;
    unsigned eligible = 0;
  };
  // The eligible port of least cost, visiting ports[(start + k) mod count] for k = 0 .. count - 1 with the
  // sum taken in 32 bits (as the Spectrum search always has: a caller wanting every port visited passes a
  // start below count); the first found wins a tie, so a random start spreads equal ports' load.
  // `cost(port, c)` returns false for a port that is not eligible, else sets c.
  template <class Cost>
  choice least_loaded(uint32_t start, Cost&& cost) const {
    choice best;
    if (count == 0) return best;
    auto visit = [&](unsigned port) {
      int64_t c = 0;
      if (!cost(port, c)) return;
      ++best.eligible;
      if (best.port == none || c < best.cost) {
        best.port = port;
        best.cost = c;
      }
    };
    const uint32_t first = start % count;
    if (start <= UINT32_MAX - count) {
      // start + k cannot wrap within the visit (every start but the last few below 2^32): the ports from
      // first to the end, then from the first port, in two plain runs (adaptive routing runs this over every
      // port of the group at every decision, about 20 at a leaf of the headline).
      for (uint32_t i = first; i < count; ++i) visit(ports[i]);
      for (uint32_t i = 0; i < first; ++i) visit(ports[i]);
      return best;
    }
    // The sum wraps past 2^32 within the visit: step the index from (start + k) mod count by one and, where
    // the sum wraps, to 0, without a division per port.
    uint32_t i = first;
    for (uint32_t k = 0; k < count; ++k) {
      if (k > 0) i = uint32_t(start + k) == 0 ? 0 : (i + 1 == count ? 0 : i + 1);
      visit(ports[i]);
    }
    return best;
  }
};

// Where a group sits in the table: what a route stores (8 bytes, no pointer, so routes stay valid while
// the table grows during elaboration).
struct equal_cost_ref {
  uint32_t first = 0;  // index of the first port in the table's port array
  uint32_t count = 0;  // 0: no group
};

// Every distinct port set of a switch, each stored once, in the order first seen.
class equal_cost_groups {
 public:
  // The group of exactly these ports in this order (the order matters: it is the D-mod-K and hash order).
  equal_cost_ref intern(const std::vector<unsigned>& ports) {
    auto it = m_index.find(ports);
    if (it == m_index.end()) {
      it = m_index.emplace(ports, equal_cost_ref{uint32_t(m_ports.size()), uint32_t(ports.size())}).first;
      m_ports.insert(m_ports.end(), ports.begin(), ports.end());
    }
    return it->second;
  }
  equal_cost_group group(equal_cost_ref r) const { return {m_ports.data() + r.first, r.count}; }
  size_t groups() const { return m_index.size(); }
  size_t stored_ports() const { return m_ports.size(); }

 private:
  std::vector<unsigned> m_ports;
  std::map<std::vector<unsigned>, equal_cost_ref> m_index;  // elaboration only
};

}  // namespace fabricsim::sw
