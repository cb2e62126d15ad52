// NVLink SHARP in one NVLink switch chip: reduction of the members' packets and multicast of the results.
#include "sc_models/nvlink/nvls_unit.h"

#include <algorithm>
#include <cstring>

#include "sc_models/core/params.h"

namespace fabricsim::nvlink {

using core::picoseconds;

nvls_unit::nvls_unit(nvls_egress& egress, core::sim_context& ctx, unsigned chip, unsigned chips,
                     unsigned links_per_chip, uint64_t header_bytes, uint64_t flit_bytes, picoseconds latency)
    : m_egress(egress),
      m_ctx(ctx),
      m_chip(chip),
      m_chips(chips),
      m_links_per_chip(links_per_chip),
      m_header(header_bytes),
      m_flit(flit_bytes),
      m_latency(latency) {}

void nvls_unit::start(const nvls_op& op) {
  core::require(op.packet_bytes > 0 && !op.members.empty(), "nvls", "an operation needs members and a packet size");
  core::require(op.mode == nvls_mode::allreduce || (op.owner_bytes > 0 && op.owner_bytes % op.packet_bytes == 0 &&
                                                    op.owner_bytes * op.members.size() >= op.bytes),
                "nvls", "reduce_scatter and allgather need each member's share in whole packets, covering the buffer");
  if (op.group >= m_slots.size()) m_slots.resize(op.group + 1);
  slot& sl = m_slots[op.group];
  m_partials -= sl.partials;  // an operation replaced before it ended leaves nothing partly reduced
  sl.partials = 0;
  sl.op = op;
  sl.active = true;
  sl.member_of_gpu.clear();
  for (size_t i = 0; i < op.members.size(); ++i) {
    if (op.members[i].gpu >= sl.member_of_gpu.size()) sl.member_of_gpu.resize(op.members[i].gpu + 1, -1);
    sl.member_of_gpu[op.members[i].gpu] = int32_t(i);
  }
  const uint64_t packets = (op.bytes + op.packet_bytes - 1) / op.packet_bytes;
  const uint64_t local = (packets + m_chips - 1) / m_chips;  // packets k = chip + j x chips
  sl.count.assign(local, 0);
  if (op.data) sl.acc.assign(local * op.packet_bytes, 0);
}

nvls_unit::slot* nvls_unit::slot_of(uint32_t tag) {
  if (m_last < m_slots.size() && m_slots[m_last].active && m_slots[m_last].op.tag == tag) return &m_slots[m_last];
  for (size_t i = 0; i < m_slots.size(); ++i)
    if (m_slots[i].active && m_slots[i].op.tag == tag) {
      m_last = i;
      return &m_slots[i];
    }
  return nullptr;
}

uint64_t nvls_unit::owned_bytes(const nvls_op& op, size_t i) {
  const uint64_t begin = i * op.owner_bytes;
  return begin >= op.bytes ? 0 : std::min(op.owner_bytes, op.bytes - begin);
}

void nvls_unit::contribution(const core::packet& p, unsigned port, picoseconds t) {
  slot* sl = slot_of(p.reth.rkey);
  if (sl == nullptr) {
    ++m_c.unexpected;
    return;
  }
  const nvls_op& op = sl->op;
  const uint64_t k = p.reth.va / op.packet_bytes;
  const bool member = p.lrh.slid < sl->member_of_gpu.size() && sl->member_of_gpu[p.lrh.slid] >= 0;
  const bool gather = op.mode == nvls_mode::allgather;
  if (!member || k % m_chips != m_chip || k / m_chips >= sl->count.size() ||
      (gather && size_t(sl->member_of_gpu[p.lrh.slid]) != owner_of(op, k))) {
    ++m_c.unexpected;
    return;
  }
  const uint64_t j = k / m_chips;
  const uint64_t len = p.payload_bytes;
  if (op.data && p.payload != nullptr) {
    uint8_t* acc = sl->acc.data() + j * op.packet_bytes;
    if (sl->count[j] == 0) {
      std::memcpy(acc, p.payload, len);
    } else {
      sw::sharp_reduce(op.dtype, acc, p.payload, len);
    }
  }
  if (sl->count[j]++ == 0) {
    ++sl->partials;
    m_c.max_partials = std::max(m_c.max_partials, ++m_partials);
  }
  ++m_c.contributions;
  if (!gather) m_c.bytes_reduced += len;
  if (sl->count[j] != (gather ? 1u : op.members.size())) return;
  // Every member's packet k is in (allgather: the owner's): multicast the result.
  --sl->partials;
  --m_partials;
  ++m_c.results;
  const picoseconds ready = t + m_latency;
  if (op.mode == nvls_mode::reduce_scatter) {
    const size_t o = owner_of(op, k);
    emit_result(p, *sl, op.members[o], port, j, owned_bytes(op, o), ready);
    return;
  }
  for (size_t i = 0; i < op.members.size(); ++i) {
    if (gather && i == owner_of(op, k)) continue;  // the owner has it
    emit_result(p, *sl, op.members[i], port, j, gather ? op.bytes - owned_bytes(op, i) : op.bytes, ready);
  }
}

// One copy of packet p's result (partial j of this chip) to member m; `total`: the bytes m receives in all.
void nvls_unit::emit_result(const core::packet& p, const slot& sl, const nvls_member& m, unsigned port, uint64_t j,
                            uint64_t total, picoseconds ready) {
  const uint64_t len = p.payload_bytes;
  const uint64_t wire = (m_header + len + m_flit - 1) / m_flit * m_flit;
  core::packet* r = m_ctx.pool.acquire();
  r->kind = core::frame_kind::nvlink;
  r->bth.opcode = core::bth_opcode::nvls_result;
  r->lrh.dlid = uint16_t(m.gpu);
  r->lrh.slid = uint16_t(0xffff);  // the switch: every chip's results count towards one transfer
  r->reth.va = sl.op.result_addr + p.reth.va;
  r->reth.rkey = sl.op.tag;
  r->reth.dma_length = uint32_t(total);
  r->payload_bytes = uint32_t(len);
  r->payload = sl.op.data ? sl.acc.data() + j * sl.op.packet_bytes : nullptr;
  r->sealed_wire_bytes = uint32_t(wire);
  r->hop_in_port = UINT16_MAX;  // made here: holds no ingress credit
  ++m_c.copies;
  m_egress.emit(m.port + port % m_links_per_chip, r, ready);
}

}  // namespace fabricsim::nvlink
