// The C entry point of a user's RTL block (sc_models/nic/user_rtl_abi.h), compiled at run time by
// `fabricsim verify-rtl --rtl FILE.sv` (testbench/user_rtl.cpp) together with the Verilated block, never part
// of the fabricsim build. The build defines FABRICSIM_USER_RTL_BLOCK_<BLOCK> and Verilates the user's top as
// class Vuser (--prefix Vuser); the block is stepped by the same verilated_block template as the shipped RTL.
#include <cstdio>
#include <exception>
#include <string>

#include "Vuser.h"
#include "Vuser___024root.h"  // the root module's pins (verilated_block)
#include "sc_models/nic/user_rtl_abi.h"
#include "sc_models/nic/verilated_block.h"

#if defined(FABRICSIM_USER_RTL_BLOCK_REORDER_TRACKER)
#include "sc_models/nic/reorder_tracker_binding.h"
using binding = fabricsim::nic::reorder_tracker_binding;
#define FABRICSIM_USER_RTL_BLOCK_NAME "reorder_tracker"
#elif defined(FABRICSIM_USER_RTL_BLOCK_CNP_GEN)
#include "sc_models/nic/cnp_gen_binding.h"
using binding = fabricsim::nic::cnp_gen_binding;
#define FABRICSIM_USER_RTL_BLOCK_NAME "cnp_gen"
#elif defined(FABRICSIM_USER_RTL_BLOCK_DCQCN_RP)
#include "sc_models/nic/dcqcn_rp_binding.h"
using binding = fabricsim::nic::dcqcn_rp_binding;
#define FABRICSIM_USER_RTL_BLOCK_NAME "dcqcn_rp"
#else
#error "define FABRICSIM_USER_RTL_BLOCK_<BLOCK>"
#endif

namespace {

using block_type = fabricsim::nic::verilated_block<binding, Vuser, true>;

void set_error(char* error, uint32_t size, const char* what) {
  if (error != nullptr && size > 0) std::snprintf(error, size, "%s", what);
}

void* create(const char* fst_path, int traceable, char* error, uint32_t error_size) {
  try {
    return new block_type(fst_path == nullptr ? std::string() : std::string(fst_path), traceable != 0);
  } catch (const std::exception& e) {
    set_error(error, error_size, e.what());
    return nullptr;
  }
}

void destroy(void* block) { delete static_cast<block_type*>(block); }

void step(void* block, const void* in, void* out) {
  *static_cast<binding::outputs*>(out) =
      static_cast<block_type*>(block)->step(*static_cast<const binding::inputs*>(in));
}

void peek(const void* block, void* out) {
  *static_cast<binding::outputs*>(out) = static_cast<const block_type*>(block)->peek();
}

int start_trace(void* block, const char* fst_path, char* error, uint32_t error_size) {
  try {
    static_cast<block_type*>(block)->start_trace(fst_path);
    return 0;
  } catch (const std::exception& e) {
    set_error(error, error_size, e.what());
    return 1;
  }
}

const fabricsim_user_rtl_table table{FABRICSIM_USER_RTL_ABI_VERSION,
                                     FABRICSIM_USER_RTL_BLOCK_NAME,
                                     sizeof(binding::inputs),
                                     sizeof(binding::outputs),
                                     create,
                                     destroy,
                                     step,
                                     peek,
                                     start_trace};

}  // namespace

extern "C" __attribute__((visibility("default"))) const fabricsim_user_rtl_table* fabricsim_user_rtl_entry() {
  return &table;
}
