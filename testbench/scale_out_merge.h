// The statistics merge of a scale-out run (docs/scale_out.md, "The report"): every rank ships the entries
// it has a say in to rank 0, which merges them into its registry, so that rank 0's report lists the whole
// fabric's statistics as one process's does. A 4,096-NIC fabric has 640,000 entries in 70,000 instances, so
// the records are compact (each entry's name, unit and description are sent once per rank as a table, an
// instance's name once for its entries) and rank 0 merges the ranks' records, which come in registry order,
// in one pass, without building an object per entry.
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <utility>
#include <vector>

#include "sc_models/core/stats.h"
#include "sc_models/mpi/partition.h"

namespace fabricsim::testbench {

class stats_merge {
 public:
  // Before the run: the value of every counter not tied to one device (a link's: its transmitter counts on
  // one rank, its receiver's drops on the other; a run-wide one). Each rank contributes its change.
  void take_bases(core::stats_registry& stats, const mpi::partition& part);
  // This rank's records: every entry of a block it simulates (the owner's value), and every entry not tied to
  // one device (a counter as its change since take_bases, with the value before; a gauge or histogram as
  // it is).
  std::vector<uint8_t> pack(core::stats_registry& stats, const mpi::partition& part, int rank) const;
  // On rank 0: the ranks' records, in rank order, merged into `stats`: an entry of a device is its owner's
  // value, a counter not tied to one device the lowest rank's value before the run plus every rank's change,
  // a gauge not tied to one the lowest rank's, histograms added. Written into the entries `stats` has;
  // registered for the blocks this rank did not build, with their values kept here (so this object must
  // outlive the registry's last read). Returns the number of entries registered.
  size_t merge(core::stats_registry& stats, const std::vector<std::vector<uint8_t>>& records);

 private:
  std::vector<std::pair<const uint64_t*, uint64_t>> m_base;  // by counter address
  // The values, units and descriptions of the entries merge() registered.
  std::deque<uint64_t> m_counters;
  std::deque<core::histogram> m_hists;
  std::deque<core::fine_histogram> m_fine;
  std::deque<std::string> m_texts;
};

}  // namespace fabricsim::testbench
