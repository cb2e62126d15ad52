// `fabricsim pcie-bench`: RDMA WRITE streams arriving at a ConnectX-8 at 800 Gb/s, placed into GPU memory
// through the PCIe switch either directly (GPUDirect RDMA: NIC -> switch -> GPU, peer to peer) or through a
// bounce buffer in host memory (NIC -> root complex -> host memory, then a GPU copy engine reads it back).
// For message sizes 64 B .. 4 MiB it measures the sustained placement rate against the rate the wire offers,
// and the latency of an isolated small message.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sc_models/core/params.h"
#include "sc_models/pcie/pcie_memory.h"
#include "sc_models/pcie/pcie_switch.h"
#include "sc_models/pcie/root_complex.h"

namespace fabricsim::testbench {

struct pcie_bench_params {
  std::string config = "both";          // gpudirect | bounce | both
  std::string direction = "receive";    // receive: WRITEs placed into GPU memory; send: the NIC reads GPU memory
  uint64_t nic_prefetch_packets = 32;   // send: MTU buffers the NIC reads packets into ahead of the wire
  double line_rate_gbps = 800.0;        // the NIC's Ethernet port
  uint64_t mtu_bytes = 4096;            // RoCE path MTU: payload per packet
  // Per-packet wire bytes besides the payload: Ethernet 14 + IPv4 20 + UDP 8 + BTH 12 + ICRC 4 + FCS 4 +
  // preamble/SFD 8 + inter-frame gap 12 = 82; the first packet of a WRITE also carries a RETH (16).
  uint64_t packet_overhead_bytes = 82;
  uint64_t reth_bytes = 16;
  double nic_receive_latency_ns = 0.0;  // last bit in to the placement write issued (0: PCIe side only)
  uint64_t point_bytes = 16u << 20;     // bytes streamed per message size (16 to 4096 messages)
  uint64_t min_size_bytes = 64;         // curve: powers of two from here ...
  uint64_t max_size_bytes = 4u << 20;   // ... to here
  // Bounce buffer: the host sees the WRITE land (completion polled), launches a copy to the GPU; copies run
  // one after another on one stream, each read in copy_read_bytes requests with copy_outstanding_bytes in flight.
  double copy_launch_ns = 2000.0;       // completion seen to copy started (estimate: CQ poll + memcpy launch)
  uint64_t copy_read_bytes = 4096;
  uint64_t copy_outstanding_bytes = 262144;
  pcie::pcie_switch_params pcie_switch;
  pcie::root_complex_params root_complex{150.0, 0, 256u << 20, {4000.0, 120.0, 65536}};
  pcie::pcie_memory_params gpu_memory;  // HBM behind the GPU's port
  void visit(core::param_visitor& v);
};

struct pcie_bench_point {
  uint64_t size_bytes = 0, messages = 0;
  double offered_gbps = 0;      // payload rate the 800G wire delivers for this size
  double achieved_gbps = 0;     // sustained placement rate into GPU memory over the middle half of the stream
  double stream_gbps = 0;       // whole stream: N sizes / (last message placed - first message's first bit in)
  double latency_ns = 0;        // first message: receive: its last bit in to its last byte in GPU memory;
                                // send: posted to its last bit out
  bool verified = false;        // the last message's bytes in GPU memory equal its source
};

struct pcie_bench_run {
  std::string config;
  double line_rate_gbps = 0;
  std::string direction;
  double small_latency_ns = 0;  // an isolated 64-byte WRITE (receive: last bit in to placed; send: posted to out)
  std::vector<pcie_bench_point> points;
  uint64_t knee_bytes = 0;      // smallest size sustaining >= 98 % of the offered rate from there on (0: none)
  double cpu_link_down_gbps = 0, cpu_link_up_gbps = 0;  // largest size: root port link payload rates
  double host_memory_gbps = 0, host_memory_busy = 0;      // largest size: bytes moved, fraction of time busy
};

// Runs the bench in this process (elaborates SystemC: once per process). Throws core::config_error for bad
// parameters.
std::vector<pcie_bench_run> run_pcie_bench(const pcie_bench_params& params);

nlohmann::json pcie_bench_json(const pcie_bench_params& params, const std::vector<pcie_bench_run>& runs);
std::string format_pcie_bench(const std::vector<pcie_bench_run>& runs);

}  // namespace fabricsim::testbench
