// The transmitting side of one NVLink port (a GPU's or a switch chip's): a FIFO of packets ready to leave,
// the credits of the far end's ingress buffer (sc_models/ib/credit_link, one credit per flit) and the link.
// A packet leaves when it is ready, the wire is free and the far end has advertised room for all its flits;
// otherwise the port sleeps on the arrival calendar (ready time, wire free) or until a credit return comes.
// A port whose FIFO is empty asks its owner for the next packet (`pull`), so a GPU's copy engine builds a
// packet only when a link can take it.
#pragma once

#include <cstdint>

#include "sc_models/core/arrival_calendar.h"
#include "sc_models/core/link.h"
#include "sc_models/core/packet.h"
#include "sc_models/core/ring.h"
#include "sc_models/core/units.h"
#include "sc_models/ib/credit_link.h"

namespace fabricsim::nvlink {

class nvlink_port_owner {
 public:
  virtual ~nvlink_port_owner() = default;
  // The next packet for `port` when its FIFO is empty, or null (then the owner calls kick() when it has one).
  virtual core::packet* pull(unsigned /*port*/) { return nullptr; }
  // `p` was put on the wire of `port` at `t` (now): the owner frees what it held for it.
  virtual void departed(core::packet* p, unsigned port, core::picoseconds t) = 0;
};

class nvlink_port : public core::calendar_client {
 public:
  // `flit_bytes`: the credit unit.
  nvlink_port(nvlink_port_owner& owner, unsigned index, uint64_t flit_bytes, core::arrival_calendar& calendar)
      : m_owner(owner), m_index(index), m_flit(flit_bytes), m_calendar(calendar) {}
  nvlink_port(const nvlink_port&) = delete;
  nvlink_port& operator=(const nvlink_port&) = delete;

  void connect(core::link& out) { m_out = &out; }
  bool connected() const { return m_out != nullptr; }
  core::link& out() const { return *m_out; }

  // `p` may leave once `ready` (>= now) has come, after the packets queued before it.
  void enqueue(core::packet* p, core::picoseconds ready);
  // The owner has a packet to pull, or something else changed: try to send now.
  void kick(core::picoseconds t) { serve(t); }
  // A credit return from the far end: its advertised limit (FCCL) in flits.
  void credit(uint64_t fccl_flits, core::picoseconds t);

  sw::ib::credit_sender& sender() { return m_sender; }
  const sw::ib::credit_sender& sender() const { return m_sender; }
  size_t queued() const { return m_queue.size(); }
  uint64_t* tx_packets_counter() { return &m_tx_packets; }
  uint64_t* tx_bytes_counter() { return &m_tx_bytes; }
  uint64_t tx_packets() const { return m_tx_packets; }
  uint64_t tx_bytes() const { return m_tx_bytes; }
  uint64_t flits_of(const core::packet& p) const { return (p.wire().value + m_flit - 1) / m_flit; }

  void on_due(core::picoseconds t) override;

 private:
  struct entry {
    core::packet* p;
    core::picoseconds ready;
  };
  void serve(core::picoseconds t);
  void wake(core::picoseconds t);

  nvlink_port_owner& m_owner;
  unsigned m_index;
  uint64_t m_flit;
  core::arrival_calendar& m_calendar;
  core::link* m_out = nullptr;
  sw::ib::credit_sender m_sender;
  core::ring<entry> m_queue;
  core::picoseconds m_wake{UINT64_MAX};
  bool m_serving = false;
  uint64_t m_tx_packets = 0, m_tx_bytes = 0;
};

}  // namespace fabricsim::nvlink
