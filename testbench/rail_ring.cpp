// The hierarchical allreduce's inter-domain phase: a ring over the SuperNICs of one rail.
#include "testbench/rail_ring.h"

#include <cmath>

#include "testbench/nvlink_collective.h"

namespace fabricsim::testbench {

using core::picoseconds;

rail_ring::rail_ring(topology::gpu_cluster& cl, unsigned rail, core::arrival_calendar& calendar,
                     double reduce_gbytes_per_s)
    : m_cl(cl),
      m_rail(rail),
      m_calendar(calendar),
      m_n(cl.domains().domains()),
      m_ps_per_byte(reduce_gbytes_per_s > 0 ? 1000.0 / reduce_gbytes_per_s : 0.0) {
  // Data: a WRITE has landed when the tray has put its last byte into HBM. Timing only (nic.place_data
  // false): the NIC places no bytes, so the tray sees none; it has landed when the NIC has received it (the
  // PCIe hop into HBM is not timed).
  for (uint32_t d = 0; d < m_n; ++d) {
    topology::host& h = m_cl.nic_host(d, m_rail);
    if (!h.built()) continue;  // another process simulates that domain (docs/scale_out.md)
    h.tray->set_on_message_landed([this, d](const pcie::landed_message& m) {
      if (m_s.data) landed(d, m);
    });
    h.nic->set_placed_callback([this, d](const nic::placed_message& m) {
      if (!m_s.data) landed(d, pcie::landed_message{m.va, m.bytes, m.first_arrival, m.placed_at});
    });
  }
}

void rail_ring::connect(uint64_t hbm_bytes) {
  if (m_n < 2) return;
  std::vector<uint32_t> rq(m_n);
  m_sq.resize(m_n);
  m_rkey.resize(m_n);
  // A NIC another process simulates hands out the same numbers by its own rules (gpu_cluster::create_qp).
  for (uint32_t d = 0; d < m_n; ++d) {
    const size_t h = m_cl.host_of(d, m_rail);
    m_rkey[d] = m_cl.register_region(h, 0, hbm_bytes);
    m_sq[d] = m_cl.create_qp(h);
  }
  // Each domain's NIC: one QP towards the next domain (requester) and one from the previous (responder).
  for (uint32_t d = 0; d < m_n; ++d) rq[(d + 1) % m_n] = m_cl.create_qp(m_cl.host_of((d + 1) % m_n, m_rail));
  for (uint32_t d = 0; d < m_n; ++d) {
    const uint32_t next = (d + 1) % m_n;
    topology::host& a = m_cl.nic_host(d, m_rail);
    topology::host& b = m_cl.nic_host(next, m_rail);
    if (a.built()) a.nic->connect_qp(m_sq[d], b.ip, rq[next], 0, 0);
    if (b.built()) b.nic->connect_qp(rq[next], a.ip, m_sq[d], 0, 0);
  }
}

uint64_t rail_ring::chunk_off(uint32_t c) const { return ring_chunk_off(m_elements, m_n, c, elt()); }
uint64_t rail_ring::chunk_len(uint32_t c) const { return ring_chunk_len(m_elements, m_n, c, elt()); }

// Reduce-scatter step g: GPU r sends chunk r - g; allgather step g: chunk r + 1 - (g - (n - 1)).
uint32_t rail_ring::chunk_sent(uint32_t r, uint32_t g) const {
  const uint64_t n = m_n;
  return g < n - 1 ? uint32_t((r + n * 2 - g) % n) : uint32_t((r + 1 + n * 2 - (g - (n - 1))) % n);
}

void rail_ring::start(const rail_shard& s, std::function<void(picoseconds)> done) {
  m_s = s;
  m_done = std::move(done);
  m_elements = s.bytes / elt();
  m_slice = std::max<uint64_t>(s.slice_bytes / elt(), 1) * elt();
  m_finished = 0;
  m_last = m_finished_at = core::now();
  m_left.assign(m_n, s.bytes);
  m_reduce_free.assign(m_n, picoseconds{});
  if (m_n < 2 || s.bytes == 0) {
    for (uint32_t r = 0; r < m_n; ++r) m_finished += m_cl.nic_host(r, m_rail).built() ? 1 : 0;
    if (m_done) m_done(core::now());
    return;
  }
  for (uint32_t r = 0; r < m_n; ++r)
    for (uint32_t j = 0; m_cl.nic_host(r, m_rail).built() && j < slices(chunk_sent(r, 0)); ++j) send(r, 0, j);
}

void rail_ring::send(uint32_t r, uint32_t g, uint32_t j) {
  const uint32_t c = chunk_sent(r, g);
  const uint64_t off = chunk_off(c) + j * m_slice;
  const uint32_t next = (r + 1) % m_n;
  const uint64_t dst = (g < m_n - 1 ? m_s.staging_addr : m_s.addr) + off;
  m_cl.nic_host(r, m_rail).nic->post_write(m_sq[r], ++m_wr, m_s.addr + off, dst, m_rkey[next], slice_len(c, j),
                                           core::now());
}

// A WRITE from the previous domain has landed in GPU q's HBM: which step and slice its address says.
void rail_ring::landed(uint32_t q, const pcie::landed_message& m) {
  if (m_n < 2 || m_left.empty()) return;
  const uint32_t from = (q + m_n - 1) % m_n;
  const bool staged = m.va >= m_s.staging_addr && m.va < m_s.staging_addr + m_s.bytes;
  const uint64_t off = m.va - (staged ? m_s.staging_addr : m_s.addr);
  uint32_t c = 0;
  while (c + 1 < m_n && chunk_off(c + 1) <= off) ++c;
  const uint32_t j = uint32_t((off - chunk_off(c)) / m_slice);
  const uint64_t len = slice_len(c, j);
  if (!staged) {  // allgather: in place; forward unless the ring is closed
    const uint32_t g = m_n - 1 + (from + 1 + 2 * m_n - c) % m_n;
    if (g + 1 <= 2 * m_n - 3) send(q, g + 1, j);
    account(q, len, m.landed_at);
    return;
  }
  const uint32_t g = (from + 2 * m_n - c) % m_n;
  if (m_s.data) {
    uint8_t* hbm = m_cl.gpu(q, m_rail).hbm.data();
    sw::sharp_reduce(m_s.dtype, hbm + m_s.addr + off, hbm + m_s.staging_addr + off, len);
  }
  const picoseconds begin = std::max(m.landed_at, m_reduce_free[q]);
  const picoseconds end = begin + picoseconds(uint64_t(std::llround(double(len) * m_ps_per_byte)));
  m_reduce_free[q] = end;
  if (end <= m.landed_at) {
    reduced(q, g, j, m.landed_at);
    return;
  }
  if (m_due.empty() || end < m_due.top().at) m_calendar.schedule(this, end);
  m_due.push({end, ++m_seq, q, g, j});
}

void rail_ring::on_due(picoseconds t) {
  while (!m_due.empty() && m_due.top().at <= t) {
    const due d = m_due.top();
    m_due.pop();
    reduced(d.rank, d.step, d.slice, d.at);
  }
  if (!m_due.empty()) m_calendar.schedule(this, m_due.top().at);
}

// GPU q has added slice j of step g: forward it; the last reduce-scatter step completes q's own chunk.
void rail_ring::reduced(uint32_t q, uint32_t g, uint32_t j, picoseconds t) {
  send(q, g + 1, j);
  if (g == m_n - 2) account(q, slice_len(chunk_sent(q, g + 1), j), t);
}

void rail_ring::account(uint32_t q, uint64_t len, picoseconds t) {
  m_left[q] -= len;
  if (m_left[q] != 0) return;
  m_last = std::max(m_last, t);
  m_finished_at = core::now();
  if (++m_finished == m_n && m_done) m_done(m_last);
}

}  // namespace fabricsim::testbench
