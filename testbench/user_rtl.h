// A user's RTL block compiled at run time (`fabricsim verify-rtl --rtl FILE.sv`, docs/rtl_contract.md): the
// top module's ports checked against the block's contract (Verilator's --xml-only view), then the file
// Verilated and compiled with rtl/user_rtl_shim.cpp into a shared object that sc_models/nic/user_rtl_block.h
// loads. Objects are cached by the hash of everything that goes into them (the file, the top, the
// parameters, the contract and shim versions, Verilator's version, the compiler), so each file and parameter
// set is compiled once.
#pragma once

#include <cstdint>
#include <map>
#include <ostream>
#include <string>
#include <vector>

#include "sc_models/nic/user_rtl_block.h"

namespace fabricsim::testbench {

struct user_rtl_request {
  std::string block;                // a block with a contract (rtl_contract_blocks())
  std::string rtl_file;             // the user's SystemVerilog source (the package fabricsim_pkg is provided)
  std::string top;                  // top module; empty: the block's name
  std::vector<std::string> params;  // NAME=VALUE parameter overrides (Verilator -G)
  std::string cache_dir;            // empty: default_user_rtl_cache()
};

struct user_rtl_build {
  std::string shared_object;                   // load with nic::user_rtl_library::open
  std::string entry_dir;                       // the cache entry (build.log, the Verilated sources)
  std::string top;                             // the top module
  bool reused = false;                         // found in the cache: nothing was compiled
  bool runtime_built = false;                  // the Verilator runtime was compiled too (first use of a cache)
  double verilate_seconds = 0;                 // contract check and Verilator
  double compile_seconds = 0;                  // C++ compile and link (the runtime's, when built, included)
  std::map<std::string, uint64_t> parameters;  // the top module's parameters as elaborated
  std::vector<std::string> notes;              // allowed deviations from the contract (extra outputs)
};

// $FABRICSIM_RTL_CACHE, else $XDG_CACHE_HOME/fabricsim/rtl, else $HOME/.cache/fabricsim/rtl.
std::string default_user_rtl_cache();

// Checks the contract and compiles (or finds in the cache) the user's block. Throws core::config_error for
// an unreadable file, a malformed --param, Verilator missing from PATH ($FABRICSIM_VERILATOR overrides), a
// contract violation (naming the port, expected and found), or a Verilator or compiler failure (with the
// log's end and its path).
user_rtl_build build_user_rtl(const user_rtl_request& request);

// The parameter a block's size is given by: Window (reorder_tracker), Flows (cnp_gen), none ("", dcqcn_rp: its
// widths are fixed); core::config_error for another block.
const char* user_rtl_size_parameter(const std::string& block);

// Compiles `file` (module `top`, empty: the block's name; cache_dir empty: default_user_rtl_cache()) for each
// size it is asked for, once each (cached across processes), checks the module took the size, writes one line
// per compile or reuse to `log` and returns the loaded object. `origin` names where it was asked for in errors.
nic::user_rtl_provider user_rtl_provider_for(const std::string& block, const std::string& file, const std::string& top,
                                             const std::string& cache_dir, const std::string& origin,
                                             std::ostream& log);

// A user's block in every NIC (`fabricsim run --user-rtl BLOCK=FILE.sv`, nic.reorder_rtl, nic.cnp_rtl,
// nic.dcqcn_rtl): BLOCK (one of nic::user_rtl_fabric_blocks()) runs the user's RTL where the block's kind
// (nic.reorder, nic.cnp_model, nic.dcqcn_model) is rtl, and beside the reference model where it is lockstep, compiled
// as user_rtl_provider_for. `origin` names where it was asked for in errors ("run.yaml: nic.reorder_rtl my.sv"). Throws
// core::config_error for a missing file or a block without fabric support.
void use_user_rtl_block(const std::string& block, const std::string& file, const std::string& top,
                        const std::string& origin, std::ostream& log);
// Every NIC's own blocks again (no user block): what a run without any of those keys sets.
void clear_user_rtl();

}  // namespace fabricsim::testbench
