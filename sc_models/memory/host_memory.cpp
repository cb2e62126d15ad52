// Host memory behind a TLM-2.0 target socket.
#include "sc_models/memory/host_memory.h"

#include <sys/mman.h>

#include <cstring>
#include <utility>

namespace fabricsim::memory {

void host_memory_params::visit(core::param_visitor& v) {
  v.field({"access_latency_ns", "ns", "latency of one blocking TLM access", 0.0, 1e6}, access_latency_ns);
}

void host_buffer::unmap_deleter::operator()(uint8_t* p) const { munmap(p, length); }

namespace {
uint8_t* map_zeroed(uint64_t length) {
  void* p = mmap(nullptr, length, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) return nullptr;
  constexpr uint64_t huge_page = 2u << 20;
  if (length >= huge_page) madvise(p, length, MADV_HUGEPAGE);  // advice only: ignored where unsupported
  return static_cast<uint8_t*>(p);
}
}  // namespace

host_buffer::host_buffer(std::string owner, uint64_t size_bytes)
    : m_owner(std::move(owner)),
      m_size(size_bytes),
      m_data(map_zeroed(size_bytes ? size_bytes : 1), unmap_deleter{size_bytes ? size_bytes : 1}) {
  if (!m_data) throw core::config_error(m_owner + ": cannot allocate " + std::to_string(size_bytes) +
                                        " bytes of host memory");
}

void host_buffer::prefault() {
  madvise(data(), size(), MADV_WILLNEED);
  for (uint64_t off = 0; off < size(); off += 4096) static_cast<volatile uint8_t*>(data())[off] = 0;
}

uint64_t host_buffer::allocate(uint64_t length, uint64_t align) {
  const uint64_t addr = (m_next + align - 1) / align * align;
  core::require(addr + length <= size(), m_owner,
                "out of memory: " + std::to_string(length) + " bytes requested at " + std::to_string(addr) +
                    ", size " + std::to_string(size()));
  m_next = addr + length;
  return addr;
}

host_memory::host_memory(sc_core::sc_module_name name, uint64_t size_bytes, const host_memory_params& params)
    : sc_core::sc_module(name),
      socket("socket"),
      m_buf(this->name(), size_bytes),
      m_latency(sc_core::sc_time::from_value(core::picoseconds::from_ns(params.access_latency_ns).value)) {
  socket.register_b_transport(this, &host_memory::b_transport);
  socket.register_get_direct_mem_ptr(this, &host_memory::get_direct_mem_ptr);
  socket.register_transport_dbg(this, &host_memory::transport_dbg);
}

unsigned host_memory::transport_dbg(tlm::tlm_generic_payload& trans) {
  const uint64_t addr = trans.get_address();
  const unsigned len = trans.get_data_length();
  if (addr > size() || len > size() - addr) {
    trans.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
    return 0;
  }
  if (trans.is_read())
    std::memcpy(trans.get_data_ptr(), data() + addr, len);
  else if (trans.is_write())
    std::memcpy(data() + addr, trans.get_data_ptr(), len);
  trans.set_response_status(tlm::TLM_OK_RESPONSE);
  return len;
}

void host_memory::b_transport(tlm::tlm_generic_payload& trans, sc_core::sc_time& delay) {
  if (trans.get_byte_enable_ptr() != nullptr) {
    trans.set_response_status(tlm::TLM_BYTE_ENABLE_ERROR_RESPONSE);
    return;
  }
  if (trans.get_streaming_width() < trans.get_data_length()) {
    trans.set_response_status(tlm::TLM_BURST_ERROR_RESPONSE);
    return;
  }
  if (trans.get_command() == tlm::TLM_IGNORE_COMMAND) {
    trans.set_response_status(tlm::TLM_OK_RESPONSE);
    return;
  }
  if (transport_dbg(trans) == 0 && trans.get_data_length() != 0) return;  // address error already set
  trans.set_dmi_allowed(true);
  delay += m_latency;
}

bool host_memory::get_direct_mem_ptr(tlm::tlm_generic_payload& /*trans*/, tlm::tlm_dmi& dmi) {
  dmi.allow_read_write();
  dmi.set_dmi_ptr(data());
  dmi.set_start_address(0);
  dmi.set_end_address(size() ? size() - 1 : 0);
  dmi.set_read_latency(m_latency);
  dmi.set_write_latency(m_latency);
  return true;
}

}  // namespace fabricsim::memory
