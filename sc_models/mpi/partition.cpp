// Which rank simulates which device.
#include "sc_models/mpi/partition.h"

#include <algorithm>
#include <map>
#include <stdexcept>

namespace fabricsim::mpi {

partition::partition(const topology::fabric_layout& lay, int ranks, const std::vector<std::vector<std::string>>& placed)
    : m_ranks(ranks), m_hosts(lay.hosts) {
  if (ranks < 1) throw std::logic_error("partition: at least one rank");
  if (!placed.empty() && ranks > 1 && placed.size() != size_t(ranks))
    throw std::logic_error("partition: the placement lists " + std::to_string(placed.size()) + " ranks, not " +
                           std::to_string(ranks));
  const size_t nsw = lay.switches.size();
  m_host_leaf = lay.host_leaf;
  for (size_t s = 0; s < nsw; ++s) m_switch_by_name[lay.switches[s].name] = s;
  for (size_t k = 0; k < lay.links(); ++k) m_ends.push_back({lay.link_from(k), lay.link_to(k)});

  // Devices placed by hand (one rank: all on it).
  m_switch_rank.assign(nsw, -1);
  std::vector<int> host_rank(m_hosts, -1);
  std::vector<uint64_t> load(size_t(ranks), 0);
  for (size_t r = 0; ranks > 1 && r < placed.size(); ++r)
    for (const std::string& name : placed[r]) {
      if (const auto h = topology::host_index(name, m_hosts)) {
        host_rank[*h] = int(r);
      } else if (const auto it = m_switch_by_name.find(name); it != m_switch_by_name.end()) {
        m_switch_rank[it->second] = int(r);
        ++load[r];
      } else {
        throw std::logic_error("partition: no device named " + name);
      }
    }

  // Leaves: the switches hosts hang off, in index order, in contiguous blocks.
  std::vector<bool> is_leaf(nsw, false);
  for (size_t leaf : m_host_leaf) is_leaf[leaf] = true;
  const size_t leaves = size_t(std::count(is_leaf.begin(), is_leaf.end(), true));
  size_t j = 0;
  for (size_t s = 0; s < nsw; ++s)
    if (is_leaf[s] && m_switch_rank[s] < 0) {
      m_switch_rank[s] = int(j++ * size_t(ranks) / leaves);
      ++load[size_t(m_switch_rank[s])];
    } else if (is_leaf[s]) {
      ++j;
    }
  // Neighbours of every switch, one entry per cable (links come in pairs: count one direction).
  std::vector<std::vector<size_t>> neighbours(nsw);
  for (const link_ends& e : m_ends)
    if (e.from >= m_hosts && e.to >= m_hosts) neighbours[e.from - m_hosts].push_back(e.to - m_hosts);
  // The others in index order (spines before cores), each seeing the ranks of the switches placed so far.
  for (size_t s = 0; s < nsw; ++s) {
    if (m_switch_rank[s] >= 0) continue;
    std::vector<uint64_t> cables(size_t(ranks), 0);
    uint64_t placed = 0;
    for (size_t v : neighbours[s])
      if (m_switch_rank[v] >= 0) {
        ++cables[size_t(m_switch_rank[v])];
        ++placed;
      }
    const size_t best = size_t(std::max_element(cables.begin(), cables.end()) - cables.begin());
    size_t r = best;
    if (placed == 0 || cables[best] * 4 < placed * 3)  // no clear majority (3/4): the least loaded rank
      r = size_t(std::min_element(load.begin(), load.end()) - load.begin());
    m_switch_rank[s] = int(r);
    ++load[r];
  }

  // Hosts with their leaf unless placed by hand.
  for (size_t h = 0; h < m_hosts; ++h)
    m_host_rank.push_back(host_rank[h] >= 0 ? host_rank[h] : m_switch_rank[m_host_leaf[h]]);

  for (size_t i = 0; i < lay.links(); ++i) {
    if (!crosses(i)) continue;
    ++m_cross_links;
    m_lookahead = std::min(m_lookahead, lay.link_params(i).latency());
  }
}

int partition::instance_rank(const std::string& instance) const {
  const std::string head = instance.substr(0, instance.find('.'));
  if (head.find("_to_") != std::string::npos) return -1;  // a link
  // A host's blocks: h<i>_nic, h<i>_mem, h<i>_pcie, ...
  if (head.size() > 1 && head[0] == 'h') {
    const size_t us = head.find('_');
    const std::string h = head.substr(0, us);
    if (h.find_first_not_of("0123456789", 1) == std::string::npos) {
      const size_t i = size_t(std::stoull(h.substr(1)));
      if (i < m_hosts && topology::host_name(i) == h) return host_rank(i);
    }
  }
  const auto it = m_switch_by_name.find(head);
  return it == m_switch_by_name.end() ? -1 : m_switch_rank[it->second];
}

std::vector<bool> partition::built_by(int rank) const {
  std::vector<bool> b(m_hosts + m_switch_rank.size());
  for (size_t d = 0; d < b.size(); ++d) b[d] = device_rank(d) == rank;
  return b;
}

std::vector<uint64_t> partition::hosts_per_rank() const {
  std::vector<uint64_t> n(size_t(m_ranks), 0);
  for (size_t h = 0; h < m_hosts; ++h) ++n[size_t(host_rank(h))];
  return n;
}

std::vector<uint64_t> partition::switches_per_rank() const {
  std::vector<uint64_t> n(size_t(m_ranks), 0);
  for (int r : m_switch_rank) ++n[size_t(r)];
  return n;
}

}  // namespace fabricsim::mpi
