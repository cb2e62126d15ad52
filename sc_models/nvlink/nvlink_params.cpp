// The parameters of an NVLink scale-up domain.
#include "sc_models/nvlink/nvlink_params.h"

namespace fabricsim::nvlink {

void nvlink_params::visit(core::param_visitor& v) {
  v.field({"gpus_per_domain", "GPUs", "GPUs in one NVLink domain (NVL72: 72; HGX B200: 8)", 2, 576}, gpus_per_domain);
  v.field({"switch_chips", "chips", "NVLink switch chips per domain (NVL72: 18, two per switch tray)", 1, 64},
          switch_chips);
  v.field({"domains", "domains", "NVLink domains (racks) built; GPUs of different domains share no NVLink", 1, 64},
          domains);
  v.field({"links_per_gpu", "links",
           "NVLink links per GPU (Blackwell: 18), spread evenly over the switch "
           "chips (a multiple of switch_chips)",
           1, 72},
          links_per_gpu);
  v.field({"link_gbytes_per_s", "GB/s",
           "one NVLink link, one direction (NVLink 5: 50, i.e. 100 GB/s "
           "bidirectional; 18 links: 900 GB/s per direction per GPU)",
           1, 1000},
          link_gbytes_per_s);
  v.field({"link_latency_ns", "ns", "one way over a link after its last flit left: PHY and cable (estimate)", 0, 1e6},
          link_latency_ns);
  v.field({"flit_bytes", "bytes",
           "flit size: the unit of serialization and of credit (estimate: 16, as "
           "NVLink 1/2's 128-bit flit)",
           4, 1024},
          flit_bytes);
  v.field({"header_bytes", "bytes",
           "header overhead per packet, rounded with the payload to whole flits "
           "(estimate: one 16-byte header flit)",
           0, 1024},
          header_bytes);
  v.field({"max_payload_bytes", "bytes",
           "payload per packet: a transfer is cut into packets of this size "
           "(estimate: 256)",
           16, 65536},
          max_payload_bytes);
  v.field({"switch_latency_ns", "ns",
           "NVLink switch chip port to port, packet in to packet ready to leave "
           "(estimate)",
           0, 1e6},
          switch_latency_ns);
  v.field({"buffer_bytes_per_port", "bytes",
           "ingress buffer per NVLink port, advertised as credits of one "
           "flit (estimate)",
           64, 16777216},
          buffer_bytes_per_port);
  v.field({"credit_update_period_ns", "ns", "least time between two credit returns from one port (estimate)", 0, 1e6},
          credit_update_period_ns);
  v.field({"credit_update_latency_ns", "ns",
           "building and parsing a credit return, beyond the link "
           "(estimate)",
           0, 1e6},
          credit_update_latency_ns);
  v.field({"nvls_latency_ns", "ns",
           "NVLS: a packet's last contribution reduced in the switch chip -> its "
           "result multicast to the GPUs (estimate)",
           0, 1e6},
          nvls_latency_ns);
  v.field({"reduce_gbytes_per_s", "GB/s",
           "ring allreduce: rate at which a GPU reduces an arrived slice "
           "before forwarding it (B200 HBM3e 8 TB/s over 3 bytes moved per output byte); 0: free",
           0, 1e6},
          reduce_gbytes_per_s);
}

void nvlink_params::validate(const std::string& inst) const {
  core::check_ranges(*this, inst);
  core::require(links_per_gpu % switch_chips == 0, inst,
                "links_per_gpu " + std::to_string(links_per_gpu) + " is not a multiple of switch_chips " +
                    std::to_string(switch_chips) + " (every GPU has the same links to every chip)");
  core::require(max_payload_bytes % flit_bytes == 0, inst,
                "max_payload_bytes " + std::to_string(max_payload_bytes) + " is not a multiple of flit_bytes " +
                    std::to_string(flit_bytes));
  core::require(buffer_bytes_per_port >= wire_bytes(max_payload_bytes), inst,
                "buffer_bytes_per_port " + std::to_string(buffer_bytes_per_port) +
                    " is below one full packet on the wire (" + std::to_string(wire_bytes(max_payload_bytes)) +
                    " bytes): no packet could ever be sent");
}

sw::ib::credit_params nvlink_params::credits() const {
  sw::ib::credit_params c;
  c.vl_buffer_bytes = buffer_bytes_per_port;
  c.credit_bytes = flit_bytes;
  c.update_period_ns = credit_update_period_ns;
  c.update_latency_ns = credit_update_latency_ns;
  return c;
}

}  // namespace fabricsim::nvlink
