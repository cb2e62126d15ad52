// The SHARP packet: building one with its aggregation header.
#include "sc_models/ib/sharp_header.h"

namespace fabricsim::sw {

using core::packet;

packet* make_sharp_packet(core::packet_pool& pool, core::bth_opcode op_code, uint32_t op, uint32_t chunk,
                          uint64_t offset, uint32_t bytes, const uint8_t* payload) {
  packet* p = pool.acquire();
  p->kind = core::frame_kind::infiniband;
  p->lrh.dlid = 0;  // addressed to the aggregation node: the first switch of the tree takes it
  p->lrh.sl = 0;
  p->bth.opcode = op_code;
  p->bth.dest_qp = op;
  p->bth.psn = chunk;
  p->bth.pad_count = uint8_t((4 - bytes % 4) % 4);
  p->has_reth = true;  // the 16-byte aggregation header
  p->reth.va = offset;
  p->reth.dma_length = bytes;
  p->payload_bytes = bytes;
  p->payload = payload;
  p->seal();
  return p;
}

}  // namespace fabricsim::sw
