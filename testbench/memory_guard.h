// Refuses a run whose model would not fit in this machine's memory, from what building it actually costs
// and from what its traffic and its report can add (issue 19, item 5). With generated payloads
// (workload.memory) no buffer holds bytes, so what grows with the fabric is the model itself: NICs (queue
// pairs, reorder stashes, RTL blocks, statistics), switches and links. fabric_setup::build measures the
// process's resident memory while the NICs are built (core::sim_context::elaboration_probe) and, after 256
// built hosts and again at every doubling, projects the whole build from the memory those hosts took. A
// projection past the limit stops the build there, before the rest of the memory is taken: "<source>:
// building N hosts (<keys>) would take at least P MiB (K KiB per host over the first B built; switches, links
// and queue pairs not counted), more than <limit>; <advice>". Once the set-up is done, before the first event,
// the run checks again (check_run): the memory then held ("the set-up of N hosts took M MiB"), and then that
// plus what can come after it: packet descriptors in flight, the smallest of the bounds that hold (where a
// packet can be: the switches' buffers in bytes, the cables' flight, the NICs' transmit FIFOs, reorder stashes
// and receive buffers; what the hosts can send at their line rates in the run; the queue pairs' send windows
// where no PSN can be sent twice), each term named with its key (in_flight_terms), and the report, from the
// statistics registry's entry count (report_term). The limit is run.memory_limit_mib, or 3/4 of the machine's
// physical memory when it is 0. Dense buffers are checked before the build (check_memory_budget).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace fabricsim::core {
class stats_registry;
}
namespace fabricsim::topology {
class fabric;
}

namespace fabricsim::testbench {

struct scenario;
class scale_out;

// One holder of memory a run adds after its first event: what it is, the key that sets its size, its bytes.
struct memory_term {
  std::string what;  // e.g. "packets in 32 switches' shared buffers of 128 MiB (4158-byte frames)"
  std::string key;   // e.g. "switch.buffer_bytes"
  uint64_t bytes = 0;
};

// What one packet descriptor in flight costs: the descriptor, the pool's free-list pointer to it and the slot
// of the queue, link or stash that holds it, the last two twice over (the vectors and rings holding them
// double and never shrink): sizeof(core::packet) + 2 x 8 + 2 x 24 (24: the larger of a port's queue slot,
// scheduled_port::queued, 24 bytes, and a link's in-flight slot, link::in_flight, 16 bytes since its layout
// change; a packet sits in one of the two at a time).
uint64_t descriptor_bytes(bool telemetry);
// The smallest data frame a buffer holds, in bytes (the divisor that turns a buffer's bytes into descriptors):
// the smallest payload (nic.mtu_bytes, nic.path_mtu_bytes, or workload.message_bytes when smaller) plus the
// fewest header bytes (RoCEv2: Ethernet, IPv4, UDP, BTH, ICRC, FCS; InfiniBand: LRH, BTH, ICRC, VCRC).
uint64_t smallest_data_frame(const scenario& s);
// Packets in flight once the traffic runs, for the part of `fab` built in this process: the smallest of the
// bounds that hold (each a list of terms named with their keys):
// - where a packet can be: the switches' buffers, the cables, the NICs' transmit FIFOs, reorder stashes
//   (reorder_window per queue pair, or send_window_packets when smaller; with the work known, only the peers of
//   the sending queue pairs) and PCIe receive buffers, each in data frames of smallest_data_frame(), plus one
//   control frame (ACK) per nic.ack_every_packets of them;
// - what the hosts can send at their line rates for the whole run (not with SHARP);
// - the send windows: nic.send_window_packets per sending queue pair, with ACKs, CNPs and pause frames, where
//   no PSN can be sent twice in the run (the conditions in memory_guard.cpp, window_bound).
// Zero terms are left out.
std::vector<memory_term> in_flight_terms(const scenario& s, topology::fabric& fab);
// The report built from `entries` statistics (the whole fabric's: rank 0 gathers every rank's), at
// report_bytes_per_entry each: the whole process's peak (wait4) less its peak when the loop ended, over the
// registry's entries, measured 334 to 368 bytes on bench/scale_4096.yaml cut to 256 and 1,024 hosts
// (docs/performance.md), with room for histograms with more buckets filled.
constexpr uint64_t report_bytes_per_entry = 512;
memory_term report_term(uint64_t entries);
// The statistics rank 0's report will hold: `stats`' entries, summed over the ranks under mpirun (a collective
// call: every rank makes it), and 0 on the other ranks, which write no report.
uint64_t report_entries(scale_out& so, core::stats_registry& stats);

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
  // took M MiB, more than <limit>; <advice>"), or when that and `terms` (what the traffic and the report can
  // add) would be ("<source>: the run of N hosts (<keys>) would need up to T MiB: H MiB held once set up, X MiB
  // for <what> (<key>), ...; more than <limit>; the largest term is <key>: lower it, <advice>").
  static void check_run(const scenario& s, size_t hosts, std::vector<memory_term> terms);
  // check_run with in_flight_terms(s, fab) and, when `report_entries` > 0, report_term(report_entries).
  static void check_run(const scenario& s, topology::fabric& fab, uint64_t report_entries,
                        std::vector<memory_term> extra = {});

 private:
  const scenario& m_s;
  size_t m_to_build;
  uint64_t m_start;  // resident bytes before the first host
  uint64_t m_limit;
  size_t m_next = first_checkpoint;
  uint64_t m_projected = 0;
};

}  // namespace fabricsim::testbench
