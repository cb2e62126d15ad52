// A memory behind a PCIe port: one channel of a given bandwidth, an access latency, a bounded request queue.
#include "sc_models/pcie/pcie_memory.h"

#include <cmath>
#include <cstring>

#include <sys/mman.h>

namespace fabricsim::pcie {

void pcie_memory_params::visit(core::param_visitor& v) {
  v.field({"bandwidth_gbps", "Gb/s", "channel bandwidth available to PCIe traffic (reads and writes share it)", 1,
           1e6},
          bandwidth_gbps);
  v.field({"latency_ns", "ns", "access latency after the channel has moved the bytes", 0, 1e6}, latency_ns);
  v.field({"queue_bytes", "bytes", "channel backlog accepted before a request waits for END_REQ", 0, 1ull << 32},
          queue_bytes);
}

void pcie_memory::unmap_deleter::operator()(uint8_t* p) const { munmap(p, length); }

namespace {
uint8_t* map_zeroed(uint64_t length) {
  void* p = mmap(nullptr, length, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  return p == MAP_FAILED ? nullptr : static_cast<uint8_t*>(p);
}
}  // namespace

pcie_memory::pcie_memory(sc_core::sc_module_name name, uint64_t size_bytes, const pcie_memory_params& params)
    : pcie_memory(name, nullptr, size_bytes, params) {}

pcie_memory::pcie_memory(sc_core::sc_module_name name, uint8_t* backing, uint64_t size_bytes,
                         const pcie_memory_params& params)
    : sc_core::sc_module(name),
      socket("socket"),
      m_size(size_bytes ? size_bytes : 1),
      m_data(backing ? nullptr : map_zeroed(m_size), unmap_deleter{m_size}),
      m_external(backing),
      m_params(params),
      m_ps_per_byte(0),
      m_end_req(64),
      m_responses(256) {
  core::check_ranges(m_params, this->name());
  core::require(data() != nullptr, this->name(), "cannot map " + std::to_string(m_size) + " bytes");
  m_ps_per_byte = 8e12 / (m_params.bandwidth_gbps * 1e9);
  m_latency = core::picoseconds::from_ns(m_params.latency_ns);
  m_queue_time = core::picoseconds(uint64_t(std::llround(double(m_params.queue_bytes) * m_ps_per_byte)));
  socket.register_nb_transport_fw(this, &pcie_memory::nb_transport_fw);
  SC_METHOD(on_wake);
  sensitive << m_wake;
  dont_initialize();
}

tlm::tlm_sync_enum pcie_memory::nb_transport_fw(tlm::tlm_generic_payload& gp, tlm::tlm_phase& phase,
                                                sc_core::sc_time& delay) {
  if (phase == tlm::END_RESP) return tlm::TLM_COMPLETED;
  if (phase != tlm::BEGIN_REQ) return tlm::TLM_COMPLETED;
  const uint64_t a = gp.get_address();
  const uint64_t n = gp.get_data_length();
  if (a > size() || n > size() - a || gp.get_byte_enable_ptr()) {
    gp.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
    return tlm::TLM_COMPLETED;
  }
  // The bytes move now (functionally); the channel and the latency say when the access is done.
  if (gp.is_write()) {
    std::memcpy(data() + a, gp.get_data_ptr(), n);
    m_written += n;
  } else if (gp.is_read()) {
    std::memcpy(gp.get_data_ptr(), data() + a, n);
    m_read += n;
  }
  gp.set_response_status(tlm::TLM_OK_RESPONSE);
  const core::picoseconds now = core::now() + core::from_sc_time(delay);
  const core::picoseconds start = core::max(now, m_channel_free);
  const core::picoseconds occupy(uint64_t(std::llround(double(n) * m_ps_per_byte)));
  m_channel_free = start + occupy;
  m_busy += occupy;
  if (gp.has_mm()) gp.acquire();
  m_responses.push_back({m_channel_free + m_latency, &gp});
  // Accept at once while the backlog ahead of this request fits the queue; otherwise when it does.
  const core::picoseconds backlog_done = start;  // the channel reaches this request then
  if (backlog_done.value <= now.value + m_queue_time.value) {
    phase = tlm::END_REQ;
    reschedule();
    return tlm::TLM_UPDATED;
  }
  m_end_req.push_back({core::picoseconds(backlog_done.value - m_queue_time.value), &gp});
  reschedule();
  return tlm::TLM_ACCEPTED;
}

void pcie_memory::reschedule() {
  const core::picoseconds now = core::now();
  uint64_t next = UINT64_MAX;
  if (!m_end_req.empty()) next = std::min(next, m_end_req.front().at.value);
  if (!m_responses.empty()) next = std::min(next, m_responses.front().at.value);
  if (next != UINT64_MAX) m_wake.notify(core::to_sc_time(core::picoseconds(next > now.value ? next - now.value : 0)));
}

void pcie_memory::on_wake() {
  const core::picoseconds now = core::now();
  while (!m_end_req.empty() && m_end_req.front().at <= now) {
    tlm::tlm_generic_payload* gp = m_end_req.front().gp;
    m_end_req.pop_front();
    tlm::tlm_phase phase = tlm::END_REQ;
    sc_core::sc_time zero = sc_core::SC_ZERO_TIME;
    socket->nb_transport_bw(*gp, phase, zero);
  }
  while (!m_responses.empty() && m_responses.front().at <= now) {
    tlm::tlm_generic_payload* gp = m_responses.front().gp;
    m_responses.pop_front();
    tlm::tlm_phase phase = tlm::BEGIN_RESP;
    sc_core::sc_time zero = sc_core::SC_ZERO_TIME;
    socket->nb_transport_bw(*gp, phase, zero);
    if (gp->has_mm()) gp->release();
  }
  reschedule();
}

}  // namespace fabricsim::pcie
