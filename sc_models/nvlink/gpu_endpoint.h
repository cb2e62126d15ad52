// A GPU as an NVLink endpoint (Blackwell class): its HBM as a memory target (sc_models/memory/host_memory),
// one NVLink port per link (links_per_gpu, link l to switch chip l mod switch_chips), and a copy engine that
// moves a transfer into a peer GPU's HBM across all its links.
//
// Copy engine: a transfer is cut into packets of nvlink.max_payload_bytes; packet k goes on link
// (first_link + k) mod links_per_gpu (round robin per packet; first_link continues from the previous
// transfer, so short transfers spread evenly too). A link's port builds its next packet only when it can
// send one (nvlink_port::pull), so nothing is queued per packet ahead of the wire. Transfers are served in
// posting order on every link.
//
// Receiving: a packet's flits are counted into the port's ingress buffer and released at once (HBM takes
// writes at line rate), the payload is placed at its address (dense: HBM bytes of the sender; generated:
// memory::payload_pattern of the sender, made here, checked by the landing observer and not stored, as the
// SuperNIC does), and when a transfer's last byte has landed the arrival callback runs: completions are at
// the receiver, where the data is.
#pragma once

#include <tlm_utils/simple_initiator_socket.h>

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <systemc>
#include <tlm>
#include <unordered_map>
#include <vector>

#include "sc_models/core/link.h"
#include "sc_models/core/packet.h"
#include "sc_models/core/sim_context.h"
#include "sc_models/ib/credit_link.h"
#include "sc_models/memory/host_memory.h"
#include "sc_models/memory/landing_observer.h"
#include "sc_models/memory/payload_pattern.h"
#include "sc_models/nvlink/nvlink_params.h"
#include "sc_models/nvlink/nvlink_port.h"

namespace fabricsim::nvlink {

struct gpu_transfer {
  uint32_t dst_gpu = 0;   // index in the domain
  uint64_t src_addr = 0;  // in this GPU's HBM
  uint64_t dst_addr = 0;  // in the peer's HBM; NVLS contributions: 0 (offsets are op-relative)
  uint64_t bytes = 0;
  uint32_t tag = 0;                                          // names the transfer at the receiver with this GPU's index
  core::bth_opcode opcode = core::bth_opcode::nvlink_write;  // or nvls_contribution
  bool generated = false;         // payload from memory::payload_pattern (this GPU's host id), not HBM bytes
  bool fixed_first_link = false;  // NVLS: packet k on link k mod links (every member numbers alike)
  unsigned first_link = 0;        // with fixed_first_link: packet k on link (first_link + k) mod links
};

// A whole transfer has landed in this GPU's HBM.
struct gpu_arrival {
  uint32_t src = 0;  // sending GPU; 0xffff: an NVLS result (from the switch chips)
  uint32_t tag = 0;
  uint64_t bytes = 0;
  core::picoseconds at{};
};

class gpu_endpoint : public sc_core::sc_module,
                     public core::packet_sink,
                     public sw::ib::credit_peer,
                     public nvlink_port_owner {
 public:
  static constexpr uint32_t nvls_source = 0xffff;

  // `index`: in the domain (lrh ids); `host`: the payload pattern's host id (unique in the run);
  // `hbm_bytes`: the HBM modelled (what the workload allocates).
  gpu_endpoint(sc_core::sc_module_name name, const nvlink_params& params, uint32_t index, uint32_t host,
               uint64_t hbm_bytes, core::sim_context& ctx);
  ~gpu_endpoint() override;
  gpu_endpoint(const gpu_endpoint&) = delete;
  gpu_endpoint& operator=(const gpu_endpoint&) = delete;

  memory::host_memory hbm;
  // The copy engine's view of HBM: DMI over the whole range, taken at the end of elaboration.
  tlm_utils::simple_initiator_socket<gpu_endpoint> dma;

  void connect_link(unsigned link, core::link& out);
  unsigned links() const { return unsigned(m_ports.size()); }
  uint32_t index() const { return m_index; }
  uint32_t host() const { return m_host; }

  // Generated payloads (made where they land) and their checker; null: dense only, unchecked.
  void set_payload_pattern(const memory::payload_pattern* p) { m_pattern = p; }
  void set_landing_observer(memory::landing_observer* o) { m_landing = o; }
  // Timing only: packets carry no bytes and nothing is placed.
  void set_data(bool on) { m_data = on; }
  void on_arrival(std::function<void(const gpu_arrival&)> f) { m_on_arrival = std::move(f); }

  // Queues a transfer on the copy engine.
  void post(const gpu_transfer& t);

  // packet_sink
  void receive(core::packet* p, unsigned port) override;
  // credit_peer
  void credit_update(unsigned port, unsigned vl, uint64_t fccl_blocks) override;
  sw::ib::credit_receiver* receiver_at(unsigned port) override { return m_rx[port].get(); }
  // nvlink_port_owner
  core::packet* pull(unsigned port) override;
  void departed(core::packet*, unsigned, core::picoseconds) override {}

  const nvlink_port& port(unsigned i) const { return *m_ports[i]; }
  const sw::ib::credit_receiver& receiver(unsigned i) const { return *m_rx[i]; }
  uint64_t landed_bytes() const { return m_landed_bytes; }
  uint64_t credit_overruns() const;
  uint64_t credit_violations() const;

 protected:
  void end_of_elaboration() override;

 private:
  struct active {
    gpu_transfer t;
    uint64_t packets;
    unsigned first_link;
    unsigned links_done = 0;
  };
  struct cursor {
    uint64_t seq = 0;         // the transfer this link is on
    uint64_t k = UINT64_MAX;  // its next packet there; UINT64_MAX: not started
  };
  void place(const core::packet& p);
  void retire_sent();

  nvlink_params m_params;
  uint8_t* m_hbm = nullptr;  // DMI pointer
  uint32_t m_index, m_host;
  core::sim_context& m_ctx;
  std::vector<std::unique_ptr<nvlink_port>> m_ports;
  std::vector<std::unique_ptr<sw::ib::credit_receiver>> m_rx;
  std::deque<active> m_queue;  // transfers not yet fully on the wire; m_queue[0] has sequence m_base
  uint64_t m_base = 0;
  std::vector<cursor> m_cursor;  // by link
  unsigned m_next_link = 0;
  const memory::payload_pattern* m_pattern = nullptr;
  memory::landing_observer* m_landing = nullptr;
  bool m_data = true;
  std::unordered_map<uint64_t, uint64_t> m_arriving;  // (src << 32 | tag) -> bytes landed
  std::function<void(const gpu_arrival&)> m_on_arrival;
  uint64_t m_rx_packets = 0, m_landed_bytes = 0, m_transfers_landed = 0, m_not_nvlink = 0;
};

}  // namespace fabricsim::nvlink
