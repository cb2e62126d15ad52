// One host's PCIe tray for the fabric (nic.placement pcie): the ConnectX-8's PCIe switch with the GPU's memory
// on its gpu port, the CPU's root complex with host memory on its cpu port, and the NIC's DMA engine on its
// internal nic port. The SuperNIC posts each received payload here as a memory write (sc_models/nic/supernic.h,
// placement_target):
//   gpudirect: NIC -> switch -> GPU memory, peer to peer (or through the root complex with p2p via_root_complex);
//   bounce:    NIC -> switch -> root complex -> host memory; once a message has landed the host launches a copy
//              (copy_launch_ns later) and the GPU's copy engine reads it back up into GPU memory, one copy at a
//              time, so every byte crosses the root port link twice and host memory twice.
// The NIC's transmit side reads payloads here (post_read): non-posted reads of GPU memory through the switch
// (gpudirect), or of host memory behind the root complex (bounce), where each send's payload has first been
// copied from GPU memory by the GPU's copy engine (stage_send: posted writes up through the root complex, one
// copy at a time, the send posted copy_launch_ns after its copy is done).
// The GPU memory is the host's fabric memory (the workload's buffers): the bytes the test checks at the end are
// the ones the PCIe writes (or the bounce copies) landed.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <systemc>
#include <vector>

#include "sc_models/core/params.h"
#include "sc_models/core/ring.h"
#include "sc_models/core/stats.h"
#include "sc_models/core/units.h"
#include "sc_models/nic/supernic.h"
#include "sc_models/pcie/dma_engine.h"
#include "sc_models/pcie/pcie_memory.h"
#include "sc_models/pcie/pcie_switch.h"
#include "sc_models/pcie/root_complex.h"

namespace fabricsim::pcie {

// The scenario's `pcie` section: one flat list (defaults: a GB300 tray as in connectx8_gb300_ports()).
struct host_tray_params {
  std::string data_path = "gpudirect";  // gpudirect | bounce
  std::string peer_to_peer = "direct";  // direct | via_root_complex (ACS redirect)
  uint64_t gpu_generation = 6, gpu_lanes = 16;
  uint64_t cpu_generation = 5, cpu_lanes = 16;
  uint64_t nic_generation = 6, nic_lanes = 16;
  double propagation_ns = 2.0;
  uint64_t max_payload_bytes = 256;
  uint64_t max_read_request_bytes = 512;
  uint64_t read_completion_boundary_bytes = 64;
  uint64_t posted_header_credits = 256, posted_data_credits = 2048;
  uint64_t non_posted_header_credits = 256, non_posted_data_credits = 256;
  double update_fc_latency_ns = 10.0;
  double cut_through_latency_ns = 100.0;
  double gpu_memory_gbps = 8000.0, gpu_memory_latency_ns = 300.0;
  double root_complex_latency_ns = 150.0;
  double host_memory_gbps = 4000.0, host_memory_latency_ns = 120.0;
  uint64_t memory_queue_bytes = 65536;
  double copy_launch_ns = 2000.0;          // bounce: message landed in host memory to its copy started
  uint64_t copy_read_bytes = 4096;         // bounce: the copy engine's read request size
  uint64_t copy_outstanding_bytes = 262144;  // bounce: copy reads in flight
  void visit(core::param_visitor& v);
};

// A message in GPU memory: when the NIC issued its last write and when its last byte landed in GPU memory
// (bounce: when its copy finished).
struct landed_message {
  uint64_t va = 0, bytes = 0;
  core::picoseconds issued_at{}, landed_at{};
};

class host_tray : public sc_core::sc_module, public nic::placement_target, public dma_engine::handler {
 public:
  SC_HAS_PROCESS(host_tray);
  // `gpu_storage` (`bytes` long) is the host's memory: GPU memory's bytes, at workload addresses 0..bytes.
  host_tray(sc_core::sc_module_name name, const host_tray_params& params, uint8_t* gpu_storage, uint64_t bytes);
  host_tray(const host_tray&) = delete;
  host_tray& operator=(const host_tray&) = delete;

  void post_write(uint64_t va, const uint8_t* data, uint64_t length) override;
  uint64_t bytes_in_flight() const override { return m_in_flight; }
  void message_issued(uint64_t va, uint64_t bytes) override;
  void post_read(uint64_t va, uint8_t* dst, uint64_t length, uint64_t cookie) override;
  bool stage_send(uint64_t va, uint64_t bytes, core::picoseconds at, uint64_t cookie) override;

  const std::vector<landed_message>& landed() const { return m_landed; }
  // Called as each message lands in GPU memory (bounce: when its copy is done), after landed() has it.
  void set_on_message_landed(std::function<void(const landed_message&)> f) { m_on_message = std::move(f); }
  void register_stats(core::stats_registry& stats) const;
  pcie_switch& pcie() { return m_switch; }
  root_complex& root() { return m_rc; }
  pcie_memory& gpu_memory() { return m_gpu; }
  uint64_t peak_in_flight() const { return m_peak_in_flight; }
  uint64_t nic_read_bytes() const { return m_read_bytes; }          // transmit: payload the NIC read
  uint64_t send_copy_bytes() const { return m_bytes_staged; }      // bounce: GPU -> host copies for sends

  static constexpr uint64_t gpu_base = 0x100000000000ull;  // the GPU's window (connectx8_gb300_ports())

 private:
  void dma_done(uint64_t cookie, bool ok) override;  // a NIC write has landed (or a NIC read is in)
  void start_of_simulation() override;
  void on_send_copy();
  void issue_send_copy_writes();
  void send_copy_done(uint64_t length);
  void on_staged();
  // Cookie bits of the shared engines: a NIC read (vs a received payload's write), a send's copy (vs a
  // received message's copy).
  static constexpr uint64_t read_flag = uint64_t(1) << 63;
  static constexpr uint64_t send_copy_flag = uint64_t(1) << 62;
  void copy_done(uint64_t length);
  void check_messages();
  void on_copy();
  void issue_copy_reads();

  struct copy_handler : dma_engine::handler {
    host_tray* owner = nullptr;
    void dma_done(uint64_t cookie, bool) override {
      if (cookie & send_copy_flag)
        owner->send_copy_done(cookie & ~send_copy_flag);
      else
        owner->copy_done(cookie);
    }
  };
  struct issued {
    uint64_t va, bytes, seq;  // seq: NIC writes issued up to and including its last
    core::picoseconds at;
  };
  struct queued_copy {
    core::picoseconds ready;
    landed_message m;
  };
  struct send_copy {  // bounce: a send's payload to copy from GPU to host memory
    core::picoseconds ready;
    uint64_t va, bytes, cookie;
  };
  struct staged {
    core::picoseconds at;
    uint64_t cookie;
  };

  host_tray_params m_params;
  bool m_bounce;
  uint8_t* m_gpu_data;
  pcie_switch m_switch;
  pcie_memory m_gpu;
  root_complex m_rc;
  dma_engine m_nic;
  dma_engine m_copy;
  copy_handler m_copy_handler;
  sc_core::sc_event m_copy_event;
  core::ring<issued> m_waiting{64};
  core::ring<queued_copy> m_copies{64};
  bool m_copying = false;
  landed_message m_copy_msg{};
  uint64_t m_copy_next = 0, m_copy_done = 0;
  uint64_t m_in_flight = 0, m_peak_in_flight = 0;
  uint64_t m_writes_issued = 0, m_writes_landed = 0, m_bytes_written = 0, m_bytes_copied = 0;
  std::vector<landed_message> m_landed;
  std::function<void(const landed_message&)> m_on_message;
  // Transmit.
  sc_core::sc_event m_send_copy_event, m_staged_event;
  core::ring<send_copy> m_send_copies{64};
  core::ring<staged> m_staged{64};
  bool m_send_copying = false, m_started = false;
  send_copy m_send_copy{};
  uint64_t m_send_copy_next = 0, m_send_copy_done = 0;
  uint64_t m_reads = 0, m_read_bytes = 0, m_bytes_staged = 0;
};

}  // namespace fabricsim::pcie
