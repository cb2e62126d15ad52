// Host memory through its TLM-2.0 socket: blocking reads and writes with latency, DMI, address errors.
#include "sc_models/memory/host_memory.h"

#include <gtest/gtest.h>
#include <tlm_utils/simple_initiator_socket.h>
#include <unistd.h>

#include <fstream>

#include "tests/support/sc_fork.h"

namespace fabricsim::test {
namespace host_memory_test {

struct initiator : sc_core::sc_module {
  tlm_utils::simple_initiator_socket<initiator> socket{"socket"};
  explicit initiator(sc_core::sc_module_name n) : sc_core::sc_module(n) {}
  tlm::tlm_response_status access(tlm::tlm_command cmd, uint64_t addr, uint8_t* data, unsigned len,
                                  sc_core::sc_time& delay) {
    tlm::tlm_generic_payload t;
    t.set_command(cmd);
    t.set_address(addr);
    t.set_data_ptr(data);
    t.set_data_length(len);
    t.set_streaming_width(len);
    socket->b_transport(t, delay);
    return t.get_response_status();
  }
};

TEST(host_memory, tlm_reads_back_what_was_written_and_dmi_sees_the_same_bytes) {
  const child_result c = run_in_child([] {
    memory::host_memory_params mp;
    mp.access_latency_ns = 50;
    memory::host_memory mem("mem", 8192, mp);
    initiator cpu("cpu");
    cpu.socket.bind(mem.socket);
    sc_core::sc_start(sc_core::SC_ZERO_TIME);
    uint8_t w[5] = {1, 2, 3, 4, 5}, rd[5] = {};
    sc_core::sc_time d = sc_core::SC_ZERO_TIME;
    std::string out;
    out += cpu.access(tlm::TLM_WRITE_COMMAND, 4000, w, 5, d) == tlm::TLM_OK_RESPONSE ? "w_ok " : "w_err ";
    out += cpu.access(tlm::TLM_READ_COMMAND, 4000, rd, 5, d) == tlm::TLM_OK_RESPONSE ? "r_ok " : "r_err ";
    out += "delay_ns=" + std::to_string(int(d.to_seconds() * 1e9 + 0.5)) + " ";
    out += "read=" + std::to_string(rd[0]) + std::to_string(rd[4]) + " ";
    tlm::tlm_generic_payload t;
    tlm::tlm_dmi dmi;
    t.set_address(0);
    const bool granted = cpu.socket->get_direct_mem_ptr(t, dmi);
    out += std::string("dmi=") + (granted ? "1" : "0") + " end=" + std::to_string(dmi.get_end_address()) +
           " dmi_byte=" + std::to_string(dmi.get_dmi_ptr()[4002]) + " ";
    out += cpu.access(tlm::TLM_READ_COMMAND, 8190, rd, 5, d) == tlm::TLM_ADDRESS_ERROR_RESPONSE ? "oob=addr_err"
                                                                                             : "oob=other";
    return out;
  });
  ASSERT_TRUE(c.ok) << c.output;
  EXPECT_EQ(c.output, "w_ok r_ok delay_ns=100 read=15 dmi=1 end=8191 dmi_byte=3 oob=addr_err");
}

TEST(host_memory, bump_allocator_aligns_and_refuses_overflow) {
  const child_result c = run_in_child([] {
    memory::host_memory mem("mem", 3 * 4096);
    std::string out = std::to_string(mem.allocate(10)) + " ";
    out += std::to_string(mem.allocate(10)) + " ";
    out += std::to_string(mem.allocate(100, 64));
    try {
      mem.allocate(8192);  // the next 4096-aligned address is 8192: 8192 more bytes do not fit in 12288
      out += " no error";
    } catch (const core::config_error& e) {
      out += std::string(" error: ") + e.what();
    }
    return out;
  });
  ASSERT_TRUE(c.ok) << c.output;
  // 0; then 10 rounded up to the next page: 4096; then 4106 rounded up to 64: 4160.
  EXPECT_EQ(c.output.substr(0, 12), "0 4096 4160 ");
  EXPECT_NE(c.output.find("error: mem: out of memory"), std::string::npos) << c.output;
}

// Resident memory of this process (/proc/self/statm, its second field), in bytes.
uint64_t resident_bytes() {
  std::ifstream f("/proc/self/statm");
  uint64_t size = 0, resident = 0;
  f >> size >> resident;
  return resident * uint64_t(sysconf(_SC_PAGESIZE));
}

TEST(host_buffer, pages_exist_only_where_written_and_read_back) {
  // 16 GiB of addresses; 100 blocks of 4 KiB written 163 MiB apart (at odd offsets): what a dense run's
  // placement does to a large buffer it touches sparsely.
  memory::host_buffer b("h_mem", 16ull << 30);
  const uint64_t before = resident_bytes();
  auto at = [](uint64_t k) { return k * (163ull << 20) + 1; };
  for (uint64_t k = 0; k < 100; ++k)
    for (uint64_t i = 0; i < 4096; ++i) b.data()[at(k) + i] = uint8_t(k * 31 + i);
  uint64_t wrong = 0;
  for (uint64_t k = 0; k < 100; ++k)
    for (uint64_t i = 0; i < 4096; ++i) wrong += b.data()[at(k) + i] != uint8_t(k * 31 + i);
  EXPECT_EQ(wrong, 0u);
  const uint64_t grown = resident_bytes() - before;
  // At least the 100 x 4 KiB written; at most a 2 MiB huge page for each side of each block where the kernel
  // gives huge pages (400 MiB): either way a small part of the 16 GiB.
  EXPECT_GE(grown, 100u * 4096u);
  EXPECT_LT(grown, 400ull << 20);
  EXPECT_EQ(b.data()[(8ull << 30) + 12345], 0);  // never written: zero
}

}  // namespace host_memory_test
}  // namespace fabricsim::test
