// Refuses a run whose model would not fit in this machine's memory, from what building it actually costs
// (issue 19, item 5). With generated payloads (workload.memory) no buffer holds bytes, so what grows with the
// fabric is the model itself: NICs (queue pairs, reorder stashes, RTL blocks, statistics), switches and links.
// fabric_setup::build measures the process's resident memory while the NICs are built (core::sim_context::
// elaboration_probe) and, after 256 built hosts and again at every doubling, projects the whole build from the
// memory those hosts took. A projection past the limit stops the build there, before the rest of the
// memory is taken: "<source>: building N hosts (<keys>) would take at least P MiB (K KiB per host over the
// first B built; switches, links and queue pairs not counted), more than <limit>; <advice>". The projection is
// a floor (the queue pairs, links and statistics come later), so the run checks again once its set-up is done,
// before the first event: the memory then held is the real need so far (check_set_up). The limit is
// run.memory_limit_mib, or 3/4 of the machine's physical memory when it is 0. Dense buffers are checked before the
// build (check_memory_budget).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace fabricsim::testbench {

struct scenario;

// Resident memory of this process (/proc/self/statm), bytes; 0 where it cannot be read.
uint64_t resident_bytes();
// run.memory_limit_mib in bytes, or 3/4 of physical memory when it is 0.
uint64_t memory_limit_bytes(const scenario& s);
// "run.memory_limit_mib (N MiB)" or "3/4 of this machine's M MiB (run.memory_limit_mib 0)".
std::string memory_limit_text(const scenario& s);

class memory_guard {
 public:
  // `to_build`: hosts this process builds (under mpirun, this rank's).
  memory_guard(const scenario& s, size_t to_build);
  // Called with the count of hosts built so far; throws core::config_error when the projection is past the
  // limit. Reads /proc only at the checkpoints (256, 512, 1024, ... hosts).
  void host_built(size_t built);
  // The projected whole-build bytes at the last checkpoint (0 before the first).
  uint64_t projected_bytes() const { return m_projected; }
  static constexpr size_t first_checkpoint = 256;
  // Once the set-up is done (fabric, queue pairs, buffers), before the first simulated event: throws
  // core::config_error when the process already holds more than the limit ("<source>: the set-up of N hosts
  // took M MiB, more than <limit>; <advice>").
  static void check_set_up(const scenario& s, size_t hosts);

 private:
  const scenario& m_s;
  size_t m_to_build;
  uint64_t m_start;  // resident bytes before the first host
  uint64_t m_limit;
  size_t m_next = first_checkpoint;
  uint64_t m_projected = 0;
};

}  // namespace fabricsim::testbench
