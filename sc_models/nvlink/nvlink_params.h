// The parameters of an NVLink scale-up domain (scenario section `nvlink`): the links (rate per direction,
// flits, header overhead, latency, credits), the switch chips and the domain's shape. Every figure has a row
// in docs/calibration.md; docs/systems.md describes the model.
#pragma once

#include <cstdint>
#include <string>

#include "sc_models/core/params.h"
#include "sc_models/core/units.h"
#include "sc_models/ib/credit_link.h"

namespace fabricsim::nvlink {

struct nvlink_params {
  // The domain's shape: NVL72 is 72 GPUs, 18 switch chips (two per switch tray), one link from every GPU to
  // every chip (links_per_gpu / switch_chips links to each).
  uint64_t gpus_per_domain = 72;
  uint64_t switch_chips = 18;
  uint64_t domains = 1;
  uint64_t links_per_gpu = 18;
  // One link, one direction.
  double link_gbytes_per_s = 50.0;   // NVLink 5: 100 GB/s bidirectional per link
  double link_latency_ns = 20.0;     // PHY + backplane cable, one way (estimate)
  uint64_t flit_bytes = 16;          // the credit and serialization unit
  uint64_t header_bytes = 16;        // per packet (one header flit)
  uint64_t max_payload_bytes = 256;  // payload per packet
  // Switch chip.
  double switch_latency_ns = 150.0;        // port to port, first flit in to first flit out (estimate)
  uint64_t buffer_bytes_per_port = 16384;  // ingress buffer per port: the credits it advertises (estimate)
  double credit_update_period_ns = 10.0;   // least time between two credit returns from one port (estimate)
  double credit_update_latency_ns = 10.0;  // building and parsing a credit return, beyond the link (estimate)
  double nvls_latency_ns = 100.0;          // last contribution of a packet reduced -> result multicast (estimate)
  // GPU.
  double reduce_gbytes_per_s = 2666.0;  // a GPU reducing an arrived slice: HBM3e 8 TB/s over 3 bytes moved

  void visit(core::param_visitor& v);
  // Cross-field rules; `inst` names the section in errors ("nvlink").
  void validate(const std::string& inst) const;

  // Derived figures, one definition each.
  core::bits_per_second link_rate() const { return core::bits_per_second::from_gbps(link_gbytes_per_s * 8.0); }
  uint64_t links_per_chip() const { return links_per_gpu / switch_chips; }
  // Bytes a packet of `payload` bytes occupies on a link: header and payload rounded up to whole flits.
  uint64_t wire_bytes(uint64_t payload) const {
    return (header_bytes + payload + flit_bytes - 1) / flit_bytes * flit_bytes;
  }
  uint64_t flits(uint64_t wire) const { return (wire + flit_bytes - 1) / flit_bytes; }
  // Payload over wire bytes of a full packet: the link's efficiency for a long transfer.
  double flit_efficiency() const { return double(max_payload_bytes) / double(wire_bytes(max_payload_bytes)); }
  // The credit machinery of sc_models/ib, one credit per flit.
  sw::ib::credit_params credits() const;
};

}  // namespace fabricsim::nvlink
