// The port contract a user's RTL block must meet to stand in for a shipped block (docs/rtl_contract.md), and
// its check against the block's top module as Verilator elaborated it (`verilator --xml-only`): a missing
// port, a port of the wrong direction or width, an extra input or a missing parameter is refused with a
// message naming the port, what was expected and what was found, before the block is Verilated.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace fabricsim::testbench {

// Bumped whenever a contract (a port, a width, a timing rule the adapters rely on) changes; part of the
// user-RTL compile cache key.
inline constexpr uint32_t rtl_contract_version = 1;

struct rtl_port_spec {
  const char* name;
  bool input;
  uint32_t width;
  const char* role;  // one line, for messages
};

// A parameter the top module must have, because the reference model is built with its value.
struct rtl_parameter_spec {
  const char* name;
  uint64_t min, max;
  bool power_of_two;
};

struct rtl_block_contract {
  std::string block;
  std::vector<rtl_port_spec> ports;
  std::vector<rtl_parameter_spec> parameters;
};

// Blocks with a contract: "reorder_tracker, cnp_gen, dcqcn_rp".
std::string rtl_contract_blocks();
// Throws core::config_error for a block without a contract, naming those that have one.
const rtl_block_contract& rtl_contract(const std::string& block);

struct rtl_found_port {
  std::string name;
  std::string direction;  // "input", "output" or "inout"
  uint32_t width = 0;     // 0: a type the check does not understand (struct, unpacked array)
};

// The top module as elaborated: its ports in declaration order and its parameters' values (decimal).
struct rtl_top_module {
  std::vector<rtl_found_port> ports;
  std::map<std::string, uint64_t> parameters;
};

// Reads the top module (topModule="1") of Verilator's --xml-only output. Throws core::config_error when the
// document has no top module (`what` names the source for the message).
rtl_top_module parse_verilator_xml(const std::string& xml, const std::string& what);

// Throws core::config_error for the first violation, naming `file`, the module, the port and what was
// expected and found. Returns notes for what is allowed but worth saying (extra outputs, left unread).
std::vector<std::string> check_rtl_contract(const rtl_block_contract& contract, const rtl_top_module& top,
                                            const std::string& file, const std::string& module);

}  // namespace fabricsim::testbench
