// Which process (rank) simulates which device of a fabric, cut at links (docs/scale_out.md). Pure
// bookkeeping, no MPI: every rank computes the same partition from the same fabric.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "sc_models/core/units.h"
#include "sc_models/topology/fabric.h"

namespace fabricsim::mpi {

class partition {
 public:
  // Leaves (switches with hosts) in contiguous blocks of about leaves / ranks, each with its hosts, so that
  // traffic within a leaf group (three_tier: within a pod) stays in one process. Every other switch goes
  // where at least 3/4 of its cables to switches placed before it go (a pod's spines with their pod), or,
  // when no rank holds that many (a spine or core that every leaf group reaches), to the rank with the fewest
  // switches so far (lowest rank on a tie), which spreads the spines.
  // `placed` (the scenario's `partition`): placed[r] names devices (switches, hosts) rank r simulates; the
  // rest are placed as above (an unnamed host goes with its leaf). Ignored in one rank; else it must list
  // `ranks` entries and name only devices of the layout (testbench checks both with clear errors).
  partition(const topology::fabric_layout& layout, int ranks,
            const std::vector<std::vector<std::string>>& placed = {});

  int ranks() const { return m_ranks; }
  int host_rank(size_t h) const { return m_host_rank.at(h); }
  int switch_rank(size_t s) const { return m_switch_rank.at(s); }

  // Device index: hosts 0 .. H-1, then switches H .. H+S-1.
  struct link_ends {
    size_t from, to;
  };
  // [link index in fabric::links()]: the devices at its two ends.
  const std::vector<link_ends>& ends() const { return m_ends; }
  // Whether this rank (`rank`) builds each device: the mask fabric's constructor takes.
  std::vector<bool> built_by(int rank) const;
  int device_rank(size_t device) const {
    return device < m_hosts ? host_rank(device) : switch_rank(device - m_hosts);
  }
  // The rank a link's transmitter is on (the link's ring and counters live there) and its receiver's.
  int tx_rank(size_t link) const { return device_rank(m_ends[link].from); }
  int rx_rank(size_t link) const { return device_rank(m_ends[link].to); }
  bool crosses(size_t link) const { return tx_rank(link) != rx_rank(link); }
  // The rank that owns a statistics instance (a device or one of its blocks: "h3_nic", "leaf0.port2"), or -1
  // for a link's instance or anything not tied to one device.
  int instance_rank(const std::string& instance) const;

  // The smallest latency (propagation + FEC) of a link that crosses ranks: the lookahead. UINT64_MAX ps
  // when none crosses.
  core::picoseconds lookahead() const { return m_lookahead; }
  size_t cross_links() const { return m_cross_links; }
  // Devices per rank (hosts, switches), for the report.
  std::vector<uint64_t> hosts_per_rank() const;
  std::vector<uint64_t> switches_per_rank() const;

 private:
  int m_ranks;
  size_t m_hosts;
  std::vector<size_t> m_host_leaf;
  std::vector<int> m_switch_rank;
  std::vector<int> m_host_rank;
  std::vector<link_ends> m_ends;
  std::map<std::string, size_t> m_switch_by_name;
  core::picoseconds m_lookahead{UINT64_MAX};
  size_t m_cross_links = 0;
};

}  // namespace fabricsim::mpi
