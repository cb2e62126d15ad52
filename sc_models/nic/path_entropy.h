// Path entropy of the SuperNIC: the UDP source port of each RoCEv2 data packet, which the switches hash to
// pick among equal-cost paths. One policy per NIC, chosen by nic.path_entropy through make_path_entropy.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "sc_models/core/rng.h"
#include "sc_models/core/units.h"

namespace fabricsim::nic {

struct supernic_params;

inline constexpr uint16_t roce_entropy_base = 0xc000;  // UDP source ports 0xC000-0xFFFF carry path entropy
// A port drawn from `rng` in the entropy range.
inline uint16_t random_entropy_port(core::rng_stream& rng) { return uint16_t(roce_entropy_base | (rng() & 0x3fff)); }

class path_entropy {
 public:
  virtual ~path_entropy() = default;
  path_entropy(const path_entropy&) = delete;
  path_entropy& operator=(const path_entropy&) = delete;

  // A new queue pair, index `q` = the number added before it (create_qp order).
  virtual void add_qp() {}
  // QP q is connected; `src_port` is its fixed port (a hash of the connection; its ACKs and CNPs use it too).
  virtual void connect(size_t /*q*/, uint16_t /*src_port*/) {}
  // The source port of q's next data packet, built at `t`; its first bit goes on the wire at `start` (>= t).
  virtual uint16_t data_port(size_t q, uint16_t src_port, core::picoseconds t, core::picoseconds start) = 0;
  virtual const char* name() const = 0;
  // per_flowlet: flowlets started after an idle gap (the NIC's "flowlets" counter; 0 for the others).
  uint64_t* flowlets() { return &m_flowlets; }

 protected:
  path_entropy() = default;
  uint64_t m_flowlets = 0;
};

// The policy named `name` (nic.path_entropy): "fixed" (the QP's port), "per_packet" (a new port per packet
// from `rng`, spraying) or "per_flowlet" (a new port from `rng` when the QP was idle for more than
// params.flowlet_gap_ns). `rng` (the NIC's seeded stream) must outlive the policy. config_error naming
// nic.path_entropy and the choices for an unknown name.
std::unique_ptr<path_entropy> make_path_entropy(const std::string& name, const supernic_params& params,
                                                core::rng_stream& rng, const std::string& instance);
const std::vector<std::string>& path_entropy_names();

}  // namespace fabricsim::nic
