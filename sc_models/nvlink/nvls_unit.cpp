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
  m_op = op;
  m_active = true;
  m_member_of_gpu.clear();
  for (size_t i = 0; i < op.members.size(); ++i) {
    if (op.members[i].gpu >= m_member_of_gpu.size()) m_member_of_gpu.resize(op.members[i].gpu + 1, -1);
    m_member_of_gpu[op.members[i].gpu] = int32_t(i);
  }
  const uint64_t packets = (op.bytes + op.packet_bytes - 1) / op.packet_bytes;
  const uint64_t local = (packets + m_chips - 1) / m_chips;  // packets k = chip + j x chips
  m_count.assign(local, 0);
  if (op.data) m_acc.assign(local * op.packet_bytes, 0);
  m_partials = 0;
}

uint64_t nvls_unit::owned_bytes(size_t i) const {
  const uint64_t begin = i * m_op.owner_bytes;
  return begin >= m_op.bytes ? 0 : std::min(m_op.owner_bytes, m_op.bytes - begin);
}

void nvls_unit::contribution(const core::packet& p, unsigned port, picoseconds t) {
  const uint64_t k = p.reth.va / m_op.packet_bytes;
  const bool member = p.lrh.slid < m_member_of_gpu.size() && m_member_of_gpu[p.lrh.slid] >= 0;
  const bool gather = m_op.mode == nvls_mode::allgather;
  if (!m_active || p.reth.rkey != m_op.tag || !member || k % m_chips != m_chip || k / m_chips >= m_count.size() ||
      (gather && size_t(m_member_of_gpu[p.lrh.slid]) != owner_of(k))) {
    ++m_c.unexpected;
    return;
  }
  const uint64_t j = k / m_chips;
  const uint64_t len = p.payload_bytes;
  if (m_op.data && p.payload != nullptr) {
    uint8_t* acc = m_acc.data() + j * m_op.packet_bytes;
    if (m_count[j] == 0) {
      std::memcpy(acc, p.payload, len);
    } else {
      sw::sharp_reduce(m_op.dtype, acc, p.payload, len);
    }
  }
  if (m_count[j]++ == 0) m_c.max_partials = std::max(m_c.max_partials, ++m_partials);
  ++m_c.contributions;
  if (!gather) m_c.bytes_reduced += len;
  if (m_count[j] != (gather ? 1u : m_op.members.size())) return;
  // Every member's packet k is in (allgather: the owner's): multicast the result.
  --m_partials;
  ++m_c.results;
  const picoseconds ready = t + m_latency;
  if (m_op.mode == nvls_mode::reduce_scatter) {
    const size_t o = owner_of(k);
    emit_result(p, m_op.members[o], port, j, owned_bytes(o), ready);
    return;
  }
  for (size_t i = 0; i < m_op.members.size(); ++i) {
    if (gather && i == owner_of(k)) continue;  // the owner has it
    emit_result(p, m_op.members[i], port, j, gather ? m_op.bytes - owned_bytes(i) : m_op.bytes, ready);
  }
}

// One copy of packet p's result (partial j of this chip) to member m; `total`: the bytes m receives in all.
void nvls_unit::emit_result(const core::packet& p, const nvls_member& m, unsigned port, uint64_t j, uint64_t total,
                            picoseconds ready) {
  const uint64_t len = p.payload_bytes;
  const uint64_t wire = (m_header + len + m_flit - 1) / m_flit * m_flit;
  core::packet* r = m_ctx.pool.acquire();
  r->kind = core::frame_kind::nvlink;
  r->bth.opcode = core::bth_opcode::nvls_result;
  r->lrh.dlid = uint16_t(m.gpu);
  r->lrh.slid = uint16_t(0xffff);  // the switch: every chip's results count towards one transfer
  r->reth.va = m_op.result_addr + p.reth.va;
  r->reth.rkey = m_op.tag;
  r->reth.dma_length = uint32_t(total);
  r->payload_bytes = uint32_t(len);
  r->payload = m_op.data ? m_acc.data() + j * m_op.packet_bytes : nullptr;
  r->sealed_wire_bytes = uint32_t(wire);
  r->hop_in_port = UINT16_MAX;  // made here: holds no ingress credit
  ++m_c.copies;
  m_egress.emit(m.port + port % m_links_per_chip, r, ready);
}

}  // namespace fabricsim::nvlink
