// What a DMA engine tells about each payload write as it lands: the address it wrote (after every fault and
// translation) and the bytes. A verification component (memory::placement_scoreboard) checks them there and
// then, so that data need not be kept in memory to be checked.
#pragma once

#include <cstdint>

namespace fabricsim::memory {

class landing_observer {
 public:
  virtual ~landing_observer() = default;
  // `length` bytes at `bytes` were written at [va, va + length) of this host's memory.
  virtual void landed(uint64_t va, const uint8_t* bytes, uint64_t length) = 0;
};

}  // namespace fabricsim::memory
