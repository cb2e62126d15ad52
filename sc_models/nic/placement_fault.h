// A planted fault of the SuperNIC's DMA placement, for verification: one received payload written at the
// wrong address, as a buggy address calculation in a NIC's receive path would (the scenario's `faults` kind
// misplace, docs/faults.md). Off unless armed; armed, it moves exactly one payload write and nothing else.
#pragma once

#include <cstdint>

#include "sc_models/core/units.h"

namespace fabricsim::nic {

class placement_fault {
 public:
  // The payload write that follows `after_packets` earlier ones (counted from the start of the run, every
  // payload-carrying packet this NIC places: WRITE and SEND data, READ responses) goes `offset_bytes` further
  // into host memory.
  void arm(uint64_t after_packets, uint64_t offset_bytes);

  // The shift of a payload write of `length` bytes at `va`, in a host memory of `mem_size` bytes; called once
  // per payload write. 0 but for the armed one, whose shift is offset_bytes, or less when that would carry
  // the write past the end of memory (as far as memory allows).
  uint64_t shift(uint64_t va, uint64_t length, uint64_t mem_size) { return m_armed ? fire(va, length, mem_size) : 0; }

  bool armed() const { return m_armed; }
  bool fired() const { return m_fired; }
  // Of the misplaced write, once fired: where it belonged, its length, how far it went, and when.
  uint64_t va() const { return m_va; }
  uint64_t length() const { return m_length; }
  uint64_t applied_offset_bytes() const { return m_applied; }
  core::picoseconds fired_at() const { return m_fired_at; }

 private:
  uint64_t fire(uint64_t va, uint64_t length, uint64_t mem_size);  // shift() once armed

  bool m_armed = false, m_fired = false;
  uint64_t m_after = 0, m_offset = 0;  // the configuration
  uint64_t m_writes = 0;               // payload writes seen so far
  uint64_t m_va = 0, m_length = 0, m_applied = 0;
  core::picoseconds m_fired_at{};
};

}  // namespace fabricsim::nic
