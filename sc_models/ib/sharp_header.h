// The SHARP packet on an InfiniBand wire: the aggregation header both ends build and parse, shared by the
// switch's aggregation unit (switch/quantum/sharp_aggregator.h) and the host end (nic/sharp_host.h), so
// neither has to include the other. Documentation: docs/quantum_x800.md, section SHARP.
#pragma once

#include <cstdint>

#include "sc_models/core/packet.h"
#include "sc_models/core/packet_pool.h"

namespace fabricsim::sw {

// Aggregation header (16 bytes, carried in the RETH fields): op in dest_qp, chunk in psn, offset in
// reth.va, length in reth.dma_length.
core::packet* make_sharp_packet(core::packet_pool& pool, core::bth_opcode op_code, uint32_t op, uint32_t chunk,
                                uint64_t offset, uint32_t bytes, const uint8_t* payload);
inline bool is_sharp(core::bth_opcode o) {
  return o == core::bth_opcode::sharp_up || o == core::bth_opcode::sharp_down;
}

}  // namespace fabricsim::sw
