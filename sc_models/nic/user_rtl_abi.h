// The C entry point of a user's RTL block compiled at run time (`fabricsim verify-rtl --rtl FILE.sv`,
// docs/rtl_contract.md): the shared object built from the Verilated block and rtl/user_rtl_shim.cpp exports
// one function, fabricsim_user_rtl_entry, returning this table. fabricsim dlopen()s the object and drives the
// block through the table as the same cycle-level model its own adapters implement.
//
// The port bundles cross the boundary as the C++ structs of the block's header (reorder_tracker_inputs and
// reorder_tracker_outputs, sc_models/nic/reorder_tracker.h): the object is compiled by the compiler fabricsim
// was built with, from the same headers, and the table carries their sizes and the contract version, so a
// stale object is refused rather than misread.
#pragma once

#include <cstdint>

extern "C" {

// Bumped whenever a port bundle, this table or the shim changes; part of the compile cache key.
#define FABRICSIM_USER_RTL_ABI_VERSION 1u

struct fabricsim_user_rtl_table {
  uint32_t abi_version;   // FABRICSIM_USER_RTL_ABI_VERSION of the shim it was built from
  const char* block;      // "reorder_tracker"
  uint32_t inputs_size;   // sizeof the block's inputs bundle
  uint32_t outputs_size;  // sizeof the block's outputs bundle
  // A new instance: fst_path not empty traces from the start; traceable keeps the trace closed for
  // start_trace. Returns null (and writes a message to `error`, `error_size` bytes) on failure.
  void* (*create)(const char* fst_path, int traceable, char* error, uint32_t error_size);
  void (*destroy)(void* block);
  // One clock: drive `in`, write the outputs sampled before the rising edge to `out`, take the edge.
  void (*step)(void* block, const void* in, void* out);
  // The outputs of the cycle the last edge began, pins at rest.
  void (*peek)(const void* block, void* out);
  // Opens the trace of an instance created traceable: 0 on success, else non-zero with `error` set.
  int (*start_trace)(void* block, const char* fst_path, char* error, uint32_t error_size);
};

typedef const fabricsim_user_rtl_table* (*fabricsim_user_rtl_entry_fn)(void);
}
