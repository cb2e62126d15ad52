// Allreduce inside one NVLink domain: ring over NVLink and NVLS.
#include "testbench/nvlink_collective.h"

#include <cmath>
#include <cstring>
#include <queue>

#include "sc_models/core/params.h"
#include "sc_models/memory/payload_pattern.h"

namespace fabricsim::testbench {

using core::picoseconds;

namespace {

uint64_t element_bytes(sw::sharp_dtype t) { return sw::sharp_dtype_bytes(t); }

class ring_allreduce : public domain_allreduce, public core::calendar_client {
 public:
  ring_allreduce(topology::nvlink_domains& dom, unsigned domain, core::arrival_calendar& calendar)
      : m_dom(dom), m_domain(domain), m_calendar(calendar), m_n(dom.gpus_per_domain()) {
    for (uint32_t r = 0; r < m_n; ++r) gpu(r).on_arrival([this, r](const nvlink::gpu_arrival& a) { arrived(r, a); });
    const double rate = dom.params().reduce_gbytes_per_s;
    m_ps_per_byte = rate > 0 ? 1000.0 / rate : 0.0;
  }

  void start(const domain_allreduce_config& c, std::function<void(picoseconds)> done) override {
    const uint64_t e = element_bytes(c.dtype);
    core::require(c.bytes % e == 0 && c.bytes / e >= m_n, "collective",
                  "nvlink_ring: " + std::to_string(c.bytes) +
                      " bytes is not a whole number of elements, at least one "
                      "per GPU (" +
                      std::to_string(m_n) + " GPUs)");
    core::require(c.slice_bytes >= e, "collective", "nvlink_ring: chunk_bytes below one element");
    m_c = c;
    m_done = std::move(done);
    m_elements = c.bytes / e;
    m_slice = c.slice_bytes / e * e;
    core::require((chunk_len(0) + m_slice - 1) / m_slice < 65536, "collective",
                  "nvlink_ring: more than 65535 slices per chunk; raise collective.chunk_bytes");
    m_reduce_free.assign(m_n, picoseconds{});
    m_finished = 0;
    m_last = picoseconds{};
    // What each GPU must receive (and reduce) before it is done: its own chunk after the reduce-scatter,
    // the others' after the allgather.
    m_left.assign(m_n, 0);
    for (uint32_t r = 0; r < m_n; ++r) {
      const uint64_t own = chunk_len((r + 1) % m_n);
      m_left[r] = c.phase == domain_phase::allreduce        ? c.bytes
                  : c.phase == domain_phase::reduce_scatter ? own
                                                            : c.bytes - own;
    }
    const uint32_t first = c.phase == domain_phase::allgather ? m_n - 1 : 0;
    for (uint32_t r = 0; r < m_n; ++r) {
      const uint32_t c0 = chunk_sent(r, first);
      for (uint32_t j = 0; j < slices(c0); ++j) send(r, first, j);
    }
    if (m_n == 1 && m_done) m_done(core::now());
  }

  uint64_t bytes_sent_per_gpu(uint64_t bytes) const override { return 2 * (m_n - 1) * bytes / m_n; }

  // After the reduce-scatter GPU r holds chunk (r + 1) mod n.
  std::pair<uint64_t, uint64_t> owned_chunk(const domain_allreduce_config& c, uint32_t r) const override {
    const uint64_t e = element_bytes(c.dtype), elements = c.bytes / e;
    const uint32_t chunk = (r + 1) % m_n;
    return {ring_chunk_off(elements, m_n, chunk, e), ring_chunk_len(elements, m_n, chunk, e)};
  }

  void on_due(picoseconds t) override {
    while (!m_due.empty() && m_due.top().at <= t) {
      const due d = m_due.top();
      m_due.pop();
      reduced(d.rank, d.step, d.slice, d.at);
    }
    if (!m_due.empty()) m_calendar.schedule(this, m_due.top().at);
  }

 private:
  struct due {
    picoseconds at;
    uint64_t seq;
    uint32_t rank, step, slice;
    bool operator>(const due& o) const { return at != o.at ? at > o.at : seq > o.seq; }
  };
  nvlink::gpu_endpoint& gpu(uint32_t r) { return m_dom.gpu(m_domain, r); }
  uint64_t elt() const { return element_bytes(m_c.dtype); }
  // Chunk c: elements [c N / n, ...): the first N mod n chunks have one more.
  uint64_t chunk_off(uint32_t c) const { return ring_chunk_off(m_elements, m_n, c, elt()); }
  uint64_t chunk_len(uint32_t c) const { return ring_chunk_len(m_elements, m_n, c, elt()); }
  uint32_t slices(uint32_t c) const { return uint32_t((chunk_len(c) + m_slice - 1) / m_slice); }
  uint64_t slice_len(uint32_t c, uint32_t j) const { return std::min(m_slice, chunk_len(c) - j * m_slice); }
  // The chunk GPU r sends at step g: reduce-scatter r - g, allgather r + 1 - (g - (n - 1)).
  uint32_t chunk_sent(uint32_t r, uint32_t g) const {
    const uint64_t n = m_n;
    return g < n - 1 ? uint32_t((r + n * 2 - g) % n) : uint32_t((r + 1 + n * 2 - (g - (n - 1))) % n);
  }

  void send(uint32_t r, uint32_t g, uint32_t j) {
    const uint32_t c = chunk_sent(r, g);
    const uint64_t off = chunk_off(c) + j * m_slice;
    nvlink::gpu_transfer t;
    t.dst_gpu = (r + 1) % m_n;
    t.src_addr = m_c.buffer_addr + off;
    t.dst_addr = (g < m_n - 1 ? m_c.staging_addr : m_c.buffer_addr) + off;
    t.bytes = slice_len(c, j);
    t.tag = g << 16 | j;
    gpu(r).post(t);
  }

  void arrived(uint32_t q, const nvlink::gpu_arrival& a) {
    const uint32_t g = a.tag >> 16, j = a.tag & 0xffff;
    const uint32_t c = chunk_sent(a.src, g);
    const uint64_t len = slice_len(c, j);
    if (g >= m_n - 1) {  // allgather: placed in the buffer; forward unless the ring is closed
      if (g + 1 <= 2 * m_n - 3) send(q, g + 1, j);
      account(q, len, a.at);
      return;
    }
    // Reduce-scatter: add the arrived partial into the buffer, one slice at a time per GPU.
    if (m_c.data) {
      const uint64_t off = chunk_off(c) + j * m_slice;
      uint8_t* hbm = gpu(q).hbm.data();
      sw::sharp_reduce(m_c.dtype, hbm + m_c.buffer_addr + off, hbm + m_c.staging_addr + off, len);
    }
    const picoseconds begin = std::max(a.at, m_reduce_free[q]);
    const picoseconds end = begin + picoseconds(uint64_t(std::llround(double(len) * m_ps_per_byte)));
    m_reduce_free[q] = end;
    if (end <= a.at) {
      reduced(q, g, j, a.at);
      return;
    }
    if (m_due.empty() || end < m_due.top().at) m_calendar.schedule(this, end);
    m_due.push({end, ++m_seq, q, g, j});
  }

  // GPU q has reduced slice j of step g: forward it; the last reduce-scatter step completes q's own chunk.
  void reduced(uint32_t q, uint32_t g, uint32_t j, picoseconds t) {
    if (m_c.phase != domain_phase::reduce_scatter || g + 1 < m_n - 1) send(q, g + 1, j);
    if (g == m_n - 2) account(q, slice_len(chunk_sent(q, g + 1), j), t);
  }

  void account(uint32_t q, uint64_t len, picoseconds t) {
    m_left[q] -= len;
    if (m_left[q] != 0) return;
    m_last = std::max(m_last, t);
    if (++m_finished == m_n && m_done) m_done(m_last);
  }

  topology::nvlink_domains& m_dom;
  unsigned m_domain;
  core::arrival_calendar& m_calendar;
  uint32_t m_n;
  double m_ps_per_byte = 0.0;
  domain_allreduce_config m_c;
  std::function<void(picoseconds)> m_done;
  uint64_t m_elements = 0, m_slice = 0;
  std::vector<uint64_t> m_left;  // by GPU: result bytes not yet final
  std::vector<picoseconds> m_reduce_free;
  std::priority_queue<due, std::vector<due>, std::greater<due>> m_due;
  uint64_t m_seq = 0;
  uint32_t m_finished = 0;
  picoseconds m_last{};
};

class nvls_allreduce : public domain_allreduce {
 public:
  nvls_allreduce(topology::nvlink_domains& dom, unsigned domain)
      : m_dom(dom), m_domain(domain), m_n(dom.gpus_per_domain()) {
    for (uint32_t r = 0; r < m_n; ++r)
      m_dom.gpu(m_domain, r).on_arrival([this](const nvlink::gpu_arrival& a) {
        if (a.src != nvlink::gpu_endpoint::nvls_source || a.tag != m_tag) return;
        m_last = std::max(m_last, a.at);
        finished_one();
      });
  }

  void start(const domain_allreduce_config& c, std::function<void(picoseconds)> done) override {
    core::require(c.bytes % element_bytes(c.dtype) == 0, "collective",
                  "nvls: " + std::to_string(c.bytes) + " bytes is not a whole number of elements");
    m_done = std::move(done);
    m_finished = 0;
    m_last = core::now();
    ++m_tag;
    nvlink::nvls_op op;
    op.tag = m_tag;
    op.bytes = c.bytes;
    op.packet_bytes = m_dom.params().max_payload_bytes;
    op.result_addr = c.buffer_addr;
    op.dtype = c.dtype;
    op.data = c.data;
    op.mode = c.phase == domain_phase::allreduce        ? nvlink::nvls_mode::allreduce
              : c.phase == domain_phase::reduce_scatter ? nvlink::nvls_mode::reduce_scatter
                                                        : nvlink::nvls_mode::allgather;
    op.owner_bytes = share_bytes(c.bytes);
    std::vector<uint32_t> members;
    for (uint32_t r = 0; r < m_n; ++r) members.push_back(r);
    m_dom.start_nvls(m_domain, op, members);
    uint32_t idle = 0;  // GPUs that receive nothing: done at once
    for (uint32_t r = 0; r < m_n; ++r) {
      const auto [off, len] = owned_chunk(c, r);
      const uint64_t receives = op.mode == nvlink::nvls_mode::allreduce        ? c.bytes
                                : op.mode == nvlink::nvls_mode::reduce_scatter ? len
                                                                               : c.bytes - len;
      idle += receives == 0;
      // Allreduce, reduce-scatter: the whole buffer as contributions; allgather: the GPU's own share.
      const bool gather = op.mode == nvlink::nvls_mode::allgather;
      if (gather && len == 0) continue;
      nvlink::gpu_transfer t;
      t.src_addr = c.buffer_addr + (gather ? off : 0);
      t.dst_addr = gather ? off : 0;  // contributions carry the offset in the buffer
      t.bytes = gather ? len : c.bytes;
      t.tag = m_tag;
      t.opcode = core::bth_opcode::nvls_contribution;
      t.fixed_first_link = true;  // packet k on link k mod links: chip k mod chips gets every GPU's packet k
      t.first_link = unsigned(t.dst_addr / op.packet_bytes % m_dom.params().links_per_gpu);
      m_dom.gpu(m_domain, r).post(t);
    }
    for (uint32_t i = 0; i < idle; ++i) finished_one();
  }

  uint64_t bytes_sent_per_gpu(uint64_t bytes) const override { return bytes; }

  // NVLS shares are whole packets: GPU r owns [r x share, (r + 1) x share) of the buffer.
  std::pair<uint64_t, uint64_t> owned_chunk(const domain_allreduce_config& c, uint32_t r) const override {
    const uint64_t share = share_bytes(c.bytes), off = std::min<uint64_t>(r * share, c.bytes);
    return {off, std::min(share, c.bytes - off)};
  }

 private:
  uint64_t share_bytes(uint64_t bytes) const {
    const uint64_t p = m_dom.params().max_payload_bytes;
    return std::max<uint64_t>((bytes + m_n * p - 1) / (m_n * p), 1) * p;
  }
  void finished_one() {
    if (++m_finished == m_n && m_done) m_done(m_last);
  }

  topology::nvlink_domains& m_dom;
  unsigned m_domain;
  uint32_t m_n;
  uint32_t m_tag = 0;
  std::function<void(picoseconds)> m_done;
  uint32_t m_finished = 0;
  picoseconds m_last{};
};

// Element i's value on GPU g: a small integer from the payload pattern's word i.
int64_t source_value(const memory::payload_pattern& pat, uint32_t gpu, uint64_t i) {
  return int64_t(pat.word(gpu, i) % 255) - 127;
}

}  // namespace

std::unique_ptr<domain_allreduce> make_domain_allreduce(const std::string& algo, topology::nvlink_domains& dom,
                                                        unsigned domain, core::arrival_calendar& calendar) {
  if (algo == "nvlink_ring") return std::make_unique<ring_allreduce>(dom, domain, calendar);
  if (algo == "nvls") return std::make_unique<nvls_allreduce>(dom, domain);
  throw core::config_error("collective.algo: \"" + algo +
                           "\" does not run inside an NVLink domain; use nvlink_ring or nvls");
}

domain_allreduce_config domain_allreduce_layout(uint64_t bytes) {
  domain_allreduce_config c;
  c.bytes = bytes;
  c.buffer_addr = 0;
  c.staging_addr = (bytes + 4095) / 4096 * 4096;
  return c;
}

uint64_t ring_chunk_off(uint64_t elements, uint32_t n, uint32_t c, uint64_t elt) {
  return (c * (elements / n) + std::min<uint64_t>(c, elements % n)) * elt;
}

uint64_t ring_chunk_len(uint64_t elements, uint32_t n, uint32_t c, uint64_t elt) {
  return (elements / n + (c < elements % n ? 1 : 0)) * elt;
}

uint64_t domain_allreduce_hbm_bytes(uint64_t bytes) { return 2 * ((bytes + 4095) / 4096 * 4096) + 4096; }

void fill_allreduce_source(uint8_t* buf, uint64_t bytes, sw::sharp_dtype t, uint64_t seed, uint32_t gpu) {
  const memory::payload_pattern pat(seed);
  const uint64_t e = element_bytes(t);
  for (uint64_t i = 0; i < bytes / e; ++i) {
    const int64_t v = source_value(pat, gpu, i);
    if (t == sw::sharp_dtype::fp32) {
      const float f = float(v);
      std::memcpy(buf + i * e, &f, 4);
    } else if (t == sw::sharp_dtype::int32) {
      const int32_t x = int32_t(v);
      std::memcpy(buf + i * e, &x, 4);
    } else {
      const uint16_t b = sw::bf16_from_float(float(v));
      std::memcpy(buf + i * e, &b, 2);
    }
  }
}

std::vector<uint8_t> allreduce_reference(uint64_t bytes, sw::sharp_dtype t, uint64_t seed,
                                         const std::vector<uint32_t>& gpus) {
  const memory::payload_pattern pat(seed);
  const uint64_t e = element_bytes(t);
  std::vector<uint8_t> ref(bytes);
  for (uint64_t i = 0; i < bytes / e; ++i) {
    int64_t sum = 0;
    for (uint32_t g : gpus) sum += source_value(pat, g, i);
    if (t == sw::sharp_dtype::fp32) {
      const float f = float(sum);
      std::memcpy(ref.data() + i * e, &f, 4);
    } else if (t == sw::sharp_dtype::int32) {
      const int32_t x = int32_t(sum);
      std::memcpy(ref.data() + i * e, &x, 4);
    } else {
      const uint16_t b = sw::bf16_from_float(float(sum));
      std::memcpy(ref.data() + i * e, &b, 2);
    }
  }
  return ref;
}

uint64_t count_wrong_elements(const uint8_t* got, const uint8_t* ref, uint64_t bytes, sw::sharp_dtype t) {
  if (std::memcmp(got, ref, bytes) == 0) return 0;
  const uint64_t e = element_bytes(t);
  uint64_t wrong = 0;
  for (uint64_t i = 0; i + e <= bytes; i += e) wrong += std::memcmp(got + i, ref + i, e) != 0 ? 1 : 0;
  return wrong;
}

}  // namespace fabricsim::testbench
