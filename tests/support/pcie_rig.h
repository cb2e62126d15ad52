// A small PCIe bench for tests: a switch with a source port (a DMA engine behind it) and a destination port
// (a pcie_memory behind it), optionally a root complex on a root port. Build it inside a forked child.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "sc_models/pcie/dma_engine.h"
#include "sc_models/pcie/pcie_memory.h"
#include "sc_models/pcie/pcie_switch.h"
#include "sc_models/pcie/root_complex.h"

namespace fabricsim::test {

struct pcie_done_log : pcie::dma_engine::handler {
  std::vector<std::pair<uint64_t, double>> done;  // cookie, time in ns
  uint64_t errors = 0;
  void dma_done(uint64_t cookie, bool ok) override {
    done.push_back({cookie, core::now().ns()});
    if (!ok) ++errors;
  }
};

// Two ports with the same link: "src" (window at 1 TiB, unused) and "dst" (window at 2 TiB).
inline std::vector<pcie::pcie_port_config> two_ports(const pcie::pcie_link_params& link,
                                                     const pcie::pcie_link_params& dst_link) {
  std::vector<pcie::pcie_port_config> p(2);
  p[0].name = "src";
  p[0].link = link;
  p[0].windows = {{1ull << 40, 1ull << 30}};
  p[1].name = "dst";
  p[1].link = dst_link;
  p[1].windows = {{2ull << 40, 1ull << 30}};
  return p;
}

struct pcie_two_port_rig {
  pcie::pcie_switch sw;
  pcie::dma_engine dma;
  pcie::pcie_memory mem;
  pcie_done_log log;
  std::vector<uint8_t> src;

  // `dst_link` (the destination port's link, both ways) defaults to `link`.
  pcie_two_port_rig(const pcie::pcie_switch_params& sp, const pcie::pcie_link_params& link,
                    const pcie::pcie_memory_params& mp = {}, uint64_t mem_bytes = 8u << 20,
                    const pcie::pcie_link_params* dst_link = nullptr)
      : sw("sw", sp, two_ports(link, dst_link ? *dst_link : link)), dma("dma"), mem("mem", mem_bytes, mp), src(mem_bytes) {
    dma.socket.bind(sw.port("src").from_device);
    sw.port("dst").to_device.bind(mem.socket);
    dma.set_handler(log);
    for (size_t i = 0; i < src.size(); ++i) src[i] = uint8_t(i * 7 + 3);
  }
  static constexpr uint64_t dst_base = 2ull << 40;
};

}  // namespace fabricsim::test

namespace fabricsim::test {

// The GB300 tray: ConnectX-8 switch, GPU memory and a GPU copy engine on "gpu", the root complex with host
// memory on "cpu", the NIC's DMA engine on "nic"; the SSD port is left empty.
struct pcie_tray_rig {
  static constexpr uint64_t gpu_base = 0x100000000000ull;  // connectx8_gb300_ports(): the GPU's window
  pcie::pcie_switch sw;
  pcie::pcie_memory gpu_mem;
  pcie::root_complex rc;
  pcie::dma_engine nic;
  pcie::dma_engine copy;
  pcie_done_log nic_log, copy_log;

  pcie_tray_rig(const pcie::pcie_switch_params& sp, const pcie::root_complex_params& rp = {},
                const pcie::pcie_memory_params& gp = {}, uint64_t gpu_bytes = 8u << 20)
      : sw("sw", sp), gpu_mem("gpu_mem", gpu_bytes, gp), rc("rc", rp), nic("nic"), copy("copy") {
    sw.port("gpu").to_device.bind(gpu_mem.socket);
    copy.socket.bind(sw.port("gpu").from_device);
    sw.port("cpu").to_device.bind(rc.from_switch);
    rc.to_switch.bind(sw.port("cpu").from_device);
    nic.socket.bind(sw.port("nic").from_device);
    nic.set_handler(nic_log);
    copy.set_handler(copy_log);
  }
};

}  // namespace fabricsim::test
