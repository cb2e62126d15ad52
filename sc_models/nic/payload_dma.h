// The SuperNIC's payload DMA: where payload bytes come from and where they land. Receive: a payload is
// copied into host memory through DMI at once (nic.placement dmi), posted as PCIe writes through the host's
// tray (nic.placement pcie, docs/pcie.md), or, with generated payloads, not stored: told to the landing
// observer by the source bytes it names (made only if they are not the ones that belong there); the landing
// observer and a planted misplacement see every write. Transmit: with DMI (or generated payloads) a packet refers to
// its source bytes where they lie; with PCIe the NIC reads each data packet's payload (WRITE and SEND packets, READ
// responses) with a non-posted read of up to one MTU into a transmit buffer, at most nic.tx_read_ahead_packets buffers
// in use (reads in flight plus data waiting for its packet to leave), shared round-robin by the QPs, each QP reading
// its READ responses and its new packets in the order it sends them; a new packet goes out only once its read is
// complete, and a resend takes the bytes the first read brought. A bounce buffer (GPU memory without GPUDirect) first
// has the payload copied to host memory.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "sc_models/core/packet.h"
#include "sc_models/core/ring.h"
#include "sc_models/core/stats.h"
#include "sc_models/core/units.h"
#include "sc_models/memory/landing_observer.h"
#include "sc_models/memory/payload_pattern.h"
#include "sc_models/nic/placement_fault.h"
#include "sc_models/nic/responder.h"
#include "sc_models/nic/work_request.h"

namespace fabricsim::nic {

// Where the NIC's received payloads land with nic.placement pcie (a host tray, sc_models/pcie/host_tray.h):
// posted writes into the memory system, and what is still in flight.
class placement_target {
 public:
  virtual ~placement_target() = default;
  // A posted write of `length` bytes at the workload address `va`; `data` stays valid (it points into the
  // sender's memory, which a workload does not change while it runs).
  virtual void post_write(uint64_t va, const uint8_t* data, uint64_t length) = 0;
  // Payload bytes issued and not yet landed (the NIC's receive buffer occupancy).
  virtual uint64_t bytes_in_flight() const = 0;
  // A message's last write has been issued (WRITE placed, SEND in its buffer, READ response data in).
  virtual void message_issued(uint64_t va, uint64_t bytes) = 0;
  // Called (by the target) whenever writes have landed and bytes_in_flight() fell.
  void set_on_landed(std::function<void()> f) { m_on_landed = std::move(f); }

  // Transmit: read `length` bytes at the workload address `va` into `dst` with non-posted reads (GPU memory,
  // or host memory for a bounce buffer); the read-done callback gets `cookie` when the last completion is in.
  virtual void post_read(uint64_t va, uint8_t* dst, uint64_t length, uint64_t cookie) = 0;
  // Transmit, bounce buffer: the payload at [va, +bytes) must first be copied from GPU to host memory, no
  // earlier than `at`; the staged callback gets `cookie` once the copy is done and the host has posted the
  // send. Copies finish in the order asked. False: no staging on this path (GPUDirect reads GPU memory).
  virtual bool stage_send(uint64_t va, uint64_t bytes, core::picoseconds at, uint64_t cookie) = 0;
  void set_on_read(std::function<void(uint64_t)> f) { m_on_read = std::move(f); }
  void set_on_staged(std::function<void(uint64_t)> f) { m_on_staged = std::move(f); }

 protected:
  std::function<void()> m_on_landed;
  std::function<void(uint64_t)> m_on_read;
  std::function<void(uint64_t)> m_on_staged;
};

// What the payload DMA reads of its NIC: each QP's work requests and READ responses, in sending order.
class payload_dma_host {
 public:
  virtual ~payload_dma_host() = default;
  virtual bool dma_qp_live(size_t q) const = 0;  // connected and not in the error state
  virtual send_queue& dma_send_queue(size_t q) = 0;
  virtual core::ring<read_job>& dma_responses(size_t q) = 0;
  virtual void dma_wake(core::picoseconds at) = 0;  // the transmitter looks again at `at`
};

class alignas(64) payload_dma {
 public:
  static constexpr core::picoseconds never{UINT64_MAX};
  // `pcie`: nic.placement pcie; `read_ahead`: nic.tx_read_ahead_packets; `wqe_latency`: a staged work request
  // becomes visible to the NIC this long after its copy; `place_data`: nic.place_data.
  payload_dma(payload_dma_host& host, bool pcie, uint64_t read_ahead, core::picoseconds wqe_latency, bool place_data,
              std::string instance);
  payload_dma(const payload_dma&) = delete;
  payload_dma& operator=(const payload_dma&) = delete;

  // Elaboration.
  void set_memory(uint8_t* base, uint64_t size);  // the DMI view of host memory (end of elaboration)
  void set_placement(placement_target& t);        // nic.placement pcie (its landed callback stays the NIC's)
  void set_generated(const memory::payload_pattern& pattern, uint32_t host) {
    m_pattern = &pattern;
    m_pattern_host = host;
  }
  void set_landing_observer(memory::landing_observer* o) { m_landing = o; }
  bool generated() const { return m_pattern != nullptr; }
  bool pcie() const { return m_pcie; }
  placement_target* placement() const { return m_placement; }
  placement_fault& misplace_fault() { return m_misplace; }
  void register_stats(core::stats_registry& s, const std::string& instance);  // nic.placement pcie only

  // Receive: places `p`'s payload at `va` (after a planted misplacement); the landing observer sees it.
  void write(uint64_t va, const core::packet* p);
  // A message's last write was issued (told to the PCIe tray, which then knows when it has landed).
  void message_issued(uint64_t va, uint64_t bytes);
  uint64_t bytes_in_flight() const { return m_placement ? m_placement->bytes_in_flight() : 0; }

  // Transmit. QPs are numbered as the NIC's: add_qp() for each, connect() with its path MTU and first PSN.
  void add_qp(uint64_t mtu);
  void connect(size_t q, uint32_t sq_psn, uint64_t mtu);
  // At each transmitter run: buffers whose packets have left are free; more reads are issued.
  void tick(core::picoseconds t);
  // When a transmit buffer frees, if all are taken (never otherwise).
  core::picoseconds buffers_free_at() const;
  // May QP q send the new PSN `psn` of `wr` (its payload's read is complete)? Always with DMI.
  bool data_ready(size_t q, uint32_t psn, const work_request& wr) const;
  // May QP q send the next packet of its front READ response `job`?
  bool response_ready(size_t q, const read_job& job) const;
  // Sets a data packet's payload to [va, +bytes) of source memory; `fresh`: its first send (it takes the
  // read's buffer), `response`: a READ response packet.
  void attach(size_t q, core::packet* p, uint64_t va, uint64_t bytes, bool fresh, bool response);
  void response_done(size_t q);  // QP q's front READ response has sent its last packet and left the queue
  // The packet just committed to the wire leaves it at `leaves`: a buffer it holds frees then.
  void committed(core::picoseconds leaves);
  // Bounce buffers: when the NIC may see a WRITE/SEND (never: a copy runs first) or send a READ response.
  core::picoseconds staged_at(size_t q, uint64_t va, uint64_t length, core::picoseconds post_at);
  core::picoseconds response_staged(size_t q, uint64_t va, uint64_t length, core::picoseconds ready);
  // nic.placement pcie: the transmit buffer (each payload at its memory address; nullptr otherwise) and the
  // memory's size, its extent (a scale-out rank names a crossing payload by them: sc_models/mpi).
  const uint8_t* transmit_buffer() const { return m_tx_buf.get(); }
  uint64_t memory_size() const { return m_mem_size; }
  void work_retired(size_t q, const work_request& wr);  // QP q's oldest work request completed
  void qp_failed(size_t q);                             // its reads are dropped

 private:
  struct tx_fetch {
    uint32_t psn;  // the data packet's PSN (READ responses: unused, they go in order)
    uint64_t seq;  // the read's number (its cookie)
    bool done;     // every completion is in
  };
  // One QP's reads ahead of the wire: new data packets (in PSN order from fetch_psn, the work request at
  // fetch_wr) and READ responses (packet fetch_k of responses[fetch_job]).
  struct qp_fetch {
    core::ring<tx_fetch> data{8};
    core::ring<tx_fetch> resp{8};
    uint32_t fetch_psn = 0;
    size_t fetch_wr = 0, fetch_job = 0, stage_index = 0;  // stage_index: the oldest work request not yet staged
    uint32_t fetch_k = 0;
    uint64_t mtu = 0;
  };
  void prefetch();
  bool fetch_one(size_t q);
  void issue(size_t q, bool response, uint32_t psn, uint64_t va, uint64_t length);
  void read_done(uint64_t cookie);
  void staged(uint64_t cookie);
  void refer(core::packet* p, uint64_t va) const;

  // Line 0 (the class is aligned to a line): what every packet reads, at the sender (refer, attach,
  // committed) and at the receiver (write), with DMI placement; m_misplace's first field is its armed flag.
  // A NIC is cold at nearly every packet of a large fabric, so each line is a miss per packet.
  const memory::payload_pattern* m_pattern = nullptr;
  memory::landing_observer* m_landing = nullptr;
  uint8_t* m_mem = nullptr;
  uint64_t m_mem_size = 0;
  uint32_t m_pattern_host = 0;
  const bool m_pcie, m_place_data;
  bool m_took_slot = false;    // the packet just built holds a buffer
  placement_fault m_misplace;  // off unless a scenario's faults arm it

  payload_dma_host& m_host;
  const std::string m_instance;
  const uint64_t m_read_ahead;
  const core::picoseconds m_wqe_latency;
  placement_target* m_placement = nullptr;
  std::vector<qp_fetch> m_qps;
  std::unique_ptr<uint8_t[]> m_tx_buf;  // the transmit buffers, kept at the payload's own address (set_memory)
  uint64_t m_slots = 0;                 // packet buffers read into or waiting for their packet to leave
  uint64_t m_reads_outstanding = 0, m_read_seq = 0;
  size_t m_rr = 0;
  core::ring<core::picoseconds> m_departures{16};  // when each sent packet holding a buffer leaves the wire
  uint64_t m_reads = 0, m_read_bytes = 0, m_peak_reads = 0, m_peak_slots = 0;
};

}  // namespace fabricsim::nic
