// Cables that failed before the run (testbench/failed_cables.h).
#include "testbench/failed_cables.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "sc_models/core/params.h"
#include "sc_models/core/rng.h"

namespace fabricsim::testbench {

namespace {

// The cables of `tier` among those still in `lay`: leaf_spine joins a switch with hosts (a leaf; in a graph
// fabric any switch a host hangs off) to one without, spine_core two switches without hosts, switch any two.
std::vector<size_t> tier_cables(const topology::fabric_layout& lay, const std::string& tier,
                                const std::vector<size_t>& absent) {
  std::vector<bool> has_hosts(lay.switches.size(), false);
  for (size_t leaf : lay.host_leaf) has_hosts[leaf] = true;
  std::vector<size_t> out;
  for (size_t c = 0; c < lay.cables.size(); ++c) {
    const size_t a = lay.cables[c].a, b = lay.cables[c].b;
    if (a < lay.hosts || b < lay.hosts) continue;  // a host's cable
    if (std::find(absent.begin(), absent.end(), c) != absent.end()) continue;
    const int leaves = int(has_hosts[a - lay.hosts]) + int(has_hosts[b - lay.hosts]);
    if (tier == "switch" || (tier == "leaf_spine" && leaves == 1) || (tier == "spine_core" && leaves == 0))
      out.push_back(c);
  }
  return out;
}

// The first switch with hosts that the cables left in `lay` (less `absent`) do not join to the first leaf,
// or SIZE_MAX when every one is reached.
size_t first_cut_off_leaf(const topology::fabric_layout& lay, const std::vector<size_t>& absent) {
  const size_t n = lay.switches.size();
  std::vector<std::vector<size_t>> next(n);
  for (size_t c = 0; c < lay.cables.size(); ++c) {
    const size_t a = lay.cables[c].a, b = lay.cables[c].b;
    if (a < lay.hosts || b < lay.hosts || std::find(absent.begin(), absent.end(), c) != absent.end()) continue;
    next[a - lay.hosts].push_back(b - lay.hosts);
    next[b - lay.hosts].push_back(a - lay.hosts);
  }
  std::vector<bool> seen(n, false);
  std::vector<size_t> queue{lay.host_leaf.front()};
  seen[queue.front()] = true;
  for (size_t head = 0; head < queue.size(); ++head)
    for (size_t v : next[queue[head]])
      if (!seen[v]) seen[v] = true, queue.push_back(v);
  for (size_t leaf : lay.host_leaf)
    if (!seen[leaf]) return leaf;
  return SIZE_MAX;
}

}  // namespace

void fail_cables(fault_entry& f, uint64_t seed, size_t index, const std::string& where, topology::topology_params& topo,
                 const topology::cable_params& cable) {
  topology::topology_params whole = topo;
  whole.absent_cables.clear();
  const topology::fabric_layout lay = topology::plan_fabric(whole, cable);
  std::vector<size_t> candidates = tier_cables(lay, f.tier, topo.absent_cables);
  const size_t n = candidates.size();
  const auto chosen = size_t(std::llround(f.fraction * double(n)));
  if (chosen == 0)
    throw core::config_error(where + ".fraction: " + fmt::format("{:g}", f.fraction) + " of the " + std::to_string(n) +
                             " " + f.tier + " cables of this fabric chooses none" +
                             (n == 0 ? " (it has no such cables: tier is leaf_spine, spine_core or switch)"
                                     : fmt::format(" (one cable is a fraction of at least {:g})", 0.5 / double(n))));
  // A partial Fisher-Yates shuffle; `% (n - k)` has a bias below (n - k) / 2^64, far under any draw's weight.
  core::rng_stream rng = core::make_stream(seed, "faults." + std::to_string(index), "links_down");
  for (size_t k = 0; k < chosen; ++k) std::swap(candidates[k], candidates[k + rng() % (n - k)]);
  candidates.resize(chosen);
  std::sort(candidates.begin(), candidates.end());
  std::vector<size_t> absent = topo.absent_cables;
  absent.insert(absent.end(), candidates.begin(), candidates.end());
  if (const size_t cut = first_cut_off_leaf(lay, absent); cut != SIZE_MAX)
    throw core::config_error(where + ".fraction: the " + std::to_string(chosen) + " " + f.tier +
                             " cables drawn with seed " + std::to_string(seed) + " cut " + lay.switches[cut].name +
                             " off from " + lay.switches[lay.host_leaf.front()].name +
                             ": lower fraction or choose another seed");
  topo.absent_cables = std::move(absent);
  std::sort(topo.absent_cables.begin(), topo.absent_cables.end());
  f.target = fmt::format("{} of {} {} cables", chosen, n, f.tier);
  f.absent_links.clear();
  for (size_t c : candidates) f.absent_links.push_back(lay.link_name(2 * c));
  for (size_t c : candidates) f.absent_links.push_back(lay.link_name(2 * c + 1));
}

}  // namespace fabricsim::testbench
