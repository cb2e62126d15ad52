// A pool of packet descriptors: allocated in blocks, recycled through a free list, so that the steady
// state of a run does no heap allocation per packet. One pool per simulation kernel (per MPI rank later).
#pragma once

#include <array>
#include <cstdint>
#include <cstring>
#include <deque>
#include <memory>
#include <type_traits>
#include <vector>

#include "sc_models/core/packet.h"

namespace fabricsim::core {

class packet_pool {
 public:
  packet_pool() = default;
  packet_pool(const packet_pool&) = delete;
  packet_pool& operator=(const packet_pool&) = delete;

  // A fresh descriptor with default header fields and a new id.
  packet* acquire() {
    if (m_free.empty()) grow();
    packet* p = m_free.back();
    m_free.pop_back();
    // A copy of one default descriptor (16 wide moves) rather than a value-initialised temporary, which the
    // compiler builds field by field (about 65 instructions a packet).
    static_assert(std::is_trivially_copyable_v<packet>, "a descriptor is reset by copying a blank one");
    static const packet blank{};
    std::memcpy(static_cast<void*>(p), &blank, sizeof(packet));
    p->id = ++m_issued;
    ++m_in_use;
    return p;
  }
  void release(packet* p) {
    if (p->telemetry_slot != 0) {
      m_free_telemetry.push_back(p->telemetry_slot);
      p->telemetry_slot = 0;
    }
    m_free.push_back(p);
    --m_in_use;
  }

  // The in-band telemetry records of `p` (the first p->int_hops are valid), allocated on first use and
  // returned with the packet.
  using telemetry_records = std::array<int_record, max_int_hops>;
  telemetry_records& telemetry(packet* p) {
    if (p->telemetry_slot == 0) {
      if (m_free_telemetry.empty()) {
        m_telemetry.emplace_back();
        p->telemetry_slot = uint32_t(m_telemetry.size());
      } else {
        p->telemetry_slot = m_free_telemetry.back();
        m_free_telemetry.pop_back();
      }
      m_telemetry[p->telemetry_slot - 1] = {};
    }
    return m_telemetry[p->telemetry_slot - 1];
  }

  uint64_t in_use() const { return m_in_use; }
  uint64_t issued() const { return m_issued; }
  uint64_t allocated() const { return m_blocks.size() * block_size; }

 private:
  static constexpr size_t block_size = 1024;
  void grow() {
    m_blocks.emplace_back(new packet[block_size]);
    packet* b = m_blocks.back().get();
    for (size_t i = block_size; i-- > 0;) m_free.push_back(&b[i]);
  }

  std::vector<std::unique_ptr<packet[]>> m_blocks;
  std::vector<packet*> m_free;
  std::deque<telemetry_records> m_telemetry;  // slot k is m_telemetry[k - 1]; a deque keeps references valid
  std::vector<uint32_t> m_free_telemetry;
  uint64_t m_issued = 0;
  uint64_t m_in_use = 0;
};

}  // namespace fabricsim::core
