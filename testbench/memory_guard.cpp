// Refuses a run whose model would not fit in memory, from the memory its first hosts took (memory_guard.h).
#include "testbench/memory_guard.h"

#include <unistd.h>

#include <fstream>

#include "sc_models/core/params.h"
#include "testbench/scenario.h"

namespace fabricsim::testbench {

namespace {

uint64_t physical_bytes() { return uint64_t(sysconf(_SC_PHYS_PAGES)) * uint64_t(sysconf(_SC_PAGESIZE)); }

// The keys that set the host count of each topology kind (topology_params::host_count).
std::string host_keys(const std::string& kind) {
  if (kind == "leaf_spine") return "topology.leaves x topology.hosts_per_leaf";
  if (kind == "three_tier") return "topology.pods x topology.leaves x topology.hosts_per_leaf";
  if (kind == "rail_optimized") return "topology.groups x topology.hosts_per_leaf x topology.rails";
  if (kind == "multi_site") return "topology.sites x topology.leaves x topology.hosts_per_leaf";
  if (kind == "dragonfly") return "topology.dragonfly_groups x topology.routers_per_group x topology.hosts_per_router";
  if (kind == "graph") return "the hosts of topology.graph_file";
  return "topology.hosts";
}

std::string mib(uint64_t bytes) { return std::to_string(bytes >> 20) + " MiB"; }

const char* const advice =
    "simulate fewer hosts, split the fabric across MPI ranks (docs/scale_out.md), or raise run.memory_limit_mib";

}  // namespace

uint64_t resident_bytes() {
  std::ifstream statm("/proc/self/statm");
  uint64_t size = 0, resident = 0;
  if (!(statm >> size >> resident)) return 0;
  return resident * uint64_t(sysconf(_SC_PAGESIZE));
}

uint64_t memory_limit_bytes(const scenario& s) {
  return s.run.memory_limit_mib > 0 ? uint64_t(s.run.memory_limit_mib) << 20 : physical_bytes() / 4 * 3;
}

std::string memory_limit_text(const scenario& s) {
  if (s.run.memory_limit_mib > 0) return "run.memory_limit_mib (" + std::to_string(s.run.memory_limit_mib) + " MiB)";
  return "3/4 of this machine's " + mib(physical_bytes()) + " (run.memory_limit_mib 0)";
}

memory_guard::memory_guard(const scenario& s, size_t to_build)
    : m_s(s), m_to_build(to_build), m_start(resident_bytes()), m_limit(memory_limit_bytes(s)) {}

void memory_guard::host_built(size_t built) {
  if (built < m_next || built >= m_to_build || m_start == 0) return;
  m_next = built * 2;
  const uint64_t now = resident_bytes();
  const uint64_t per_host = now > m_start ? (now - m_start) / built : 0;
  m_projected = m_start + per_host * m_to_build;
  if (m_projected <= m_limit) return;
  const std::string& kind = m_s.topology.kind;
  throw core::config_error(m_s.source + ": building " + std::to_string(m_to_build) + " hosts (" + host_keys(kind) +
                           ") would take at least " + mib(m_projected) + " (" + std::to_string(per_host >> 10) +
                           " KiB per host over the first " + std::to_string(built) +
                           " built; switches, links and queue pairs not counted), more than " + memory_limit_text(m_s) +
                           "; " + advice);
}

void memory_guard::check_set_up(const scenario& s, size_t hosts) {
  const uint64_t now = resident_bytes();
  if (now <= memory_limit_bytes(s)) return;
  throw core::config_error(s.source + ": the set-up of " + std::to_string(hosts) + " hosts (" +
                           host_keys(s.topology.kind) + ") took " + mib(now) + " before the first event, more than " +
                           memory_limit_text(s) + "; " + advice);
}

}  // namespace fabricsim::testbench
