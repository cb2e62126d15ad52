// The host end of a SHARP operation (sharp_aggregator.h): beside the HCA's RC engine on the same port
// (nic::port_client), it sends the host's buffer up the tree as chunks of one packet each, through the NIC's
// transmit scheduler and credit check, as fast as the link and its credits allow; it places the results that
// come down into the host's receive buffer, and reports the operation done once every chunk is in (plus the
// NIC's receive latency). Documentation: docs/quantum_x800.md, section SHARP.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "sc_models/core/packet.h"
#include "sc_models/core/sim_context.h"
#include "sc_models/ib/sharp_header.h"
#include "sc_models/nic/supernic.h"

namespace fabricsim::sw {

class sharp_host : public nic::port_client {
 public:
  // `rx_latency`: last bit of the last result in -> the operation complete (the NIC's receive latency);
  // `start_latency`: the operation posted -> its first packet ready (the NIC's work-request latency).
  sharp_host(nic::supernic& nic, uint8_t* memory, core::picoseconds start_latency, core::picoseconds rx_latency,
             core::sim_context& ctx);
  sharp_host(const sharp_host&) = delete;
  sharp_host& operator=(const sharp_host&) = delete;

  // Operation `op`: send `bytes` from memory + send_addr in chunks of `chunk_bytes` from `at`; results land
  // at memory + recv_addr (when `data`). `done` is called once, at the completion time.
  void start(uint32_t op, uint64_t send_addr, uint64_t recv_addr, uint64_t bytes, uint32_t chunk_bytes, bool data,
             core::picoseconds at, std::function<void(core::picoseconds)> done);

  core::packet* next_packet(core::picoseconds t, core::picoseconds* next_ready) override;
  void receive(core::packet* p) override;

  uint64_t sent_bytes() const { return m_sent_bytes; }
  uint64_t received_bytes() const { return m_received_bytes; }
  uint64_t unexpected() const { return m_unexpected; }

 private:
  nic::supernic& m_nic;
  uint8_t* m_mem;
  core::picoseconds m_start_latency, m_rx_latency;
  core::sim_context& m_ctx;
  uint32_t m_op = UINT32_MAX;
  uint64_t m_send = 0, m_recv = 0, m_bytes = 0;
  uint32_t m_chunk = 4096, m_chunks = 0, m_next = 0, m_in = 0;
  bool m_data = false;
  core::picoseconds m_ready{};
  std::vector<bool> m_have;  // by chunk: its result arrived
  std::function<void(core::picoseconds)> m_done;
  uint64_t m_sent_bytes = 0, m_received_bytes = 0, m_unexpected = 0;
};

}  // namespace fabricsim::sw
