// Host memory behind a TLM-2.0 target socket: blocking transport with an access latency for any initiator
// (a virtual platform's CPU, a DMA), and DMI over the whole range for bulk access (the NIC's placement).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_target_socket.h>

#include "sc_models/core/params.h"
#include "sc_models/core/units.h"

namespace fabricsim::memory {

struct host_memory_params {
  double access_latency_ns = 100.0;  // b_transport latency added per access (estimate)
  void visit(core::param_visitor& v);
};

// The bytes of one host's memory: a zeroed anonymous mapping and a bump allocator for workload buffers.
// host_memory serves them to initiators; a scale-out run (docs/scale_out.md) keeps one as the mirror of a
// host another process simulates, so that a payload from it is named by (host, offset) on every rank and
// lands at the same offset here. Untouched pages cost address space, not memory.
class host_buffer {
 public:
  // `owner` names the buffer in errors ("h3_mem").
  host_buffer(std::string owner, uint64_t size_bytes);
  host_buffer(const host_buffer&) = delete;
  host_buffer& operator=(const host_buffer&) = delete;

  uint64_t size() const { return m_size; }
  uint8_t* data() { return m_data.get(); }
  const uint8_t* data() const { return m_data.get(); }
  // Faults every page in now (see host_memory::prefault).
  void prefault();
  // Returns the address of `length` fresh bytes, aligned.
  uint64_t allocate(uint64_t length, uint64_t align = 4096);

 private:
  struct unmap_deleter {
    uint64_t length;
    void operator()(uint8_t* p) const;
  };
  std::string m_owner;
  uint64_t m_size;
  // Anonymous mapping: zero pages appear on first touch, in huge pages where the kernel allows, so that
  // placing data into a large memory costs one fault per 2 MB rather than one per 4 KB.
  std::unique_ptr<uint8_t, unmap_deleter> m_data;
  uint64_t m_next = 0;
};

class host_memory : public sc_core::sc_module {
 public:
  tlm_utils::simple_target_socket<host_memory> socket;

  host_memory(sc_core::sc_module_name name, uint64_t size_bytes, const host_memory_params& params = {});
  host_memory(const host_memory&) = delete;
  host_memory& operator=(const host_memory&) = delete;

  uint64_t size() const { return m_buf.size(); }
  // Direct view for elaboration-time set-up (filling source buffers) and end-of-run checks.
  uint8_t* data() { return m_buf.data(); }
  const uint8_t* data() const { return m_buf.data(); }
  host_buffer& buffer() { return m_buf; }

  // Faults every page in now. First touches cost far more than the copies that follow (on a virtual
  // machine especially), and they belong to building the model, not to simulating it: call this at
  // elaboration when the run will place data.
  void prefault() { m_buf.prefault(); }

  // A bump allocator for workload buffers: returns the address of `length` fresh bytes, aligned.
  uint64_t allocate(uint64_t length, uint64_t align = 4096) { return m_buf.allocate(length, align); }

 private:
  void b_transport(tlm::tlm_generic_payload& trans, sc_core::sc_time& delay);
  bool get_direct_mem_ptr(tlm::tlm_generic_payload& trans, tlm::tlm_dmi& dmi);
  unsigned transport_dbg(tlm::tlm_generic_payload& trans);

  host_buffer m_buf;
  sc_core::sc_time m_latency;
};

}  // namespace fabricsim::memory
