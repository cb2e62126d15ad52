// A user's RTL block compiled at run time into a shared object (testbench/user_rtl.h builds it;
// docs/rtl_contract.md says what the block must meet): the object is dlopen()ed and its C entry point
// (sc_models/nic/user_rtl_abi.h) drives the Verilated block as the same cycle-level model the shipped
// adapters implement, so the differential bench, the handshake adapter and a NIC use it unchanged.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "sc_models/nic/reorder_tracker.h"

struct fabricsim_user_rtl_table;

namespace fabricsim::nic {

// One loaded shared object. Objects stay loaded for the life of the process (a Verilated runtime registers
// exit handlers), so the same path opened twice gives the same table.
class user_rtl_library {
 public:
  // Throws core::config_error naming `path` when it cannot be loaded, has no fabricsim_user_rtl_entry, was
  // built for another contract version or port bundle, or holds another block than `block`.
  static std::shared_ptr<const user_rtl_library> open(const std::string& path, const std::string& block);

  const fabricsim_user_rtl_table& table() const { return *m_table; }
  const std::string& path() const { return m_path; }

  user_rtl_library(std::string path, const fabricsim_user_rtl_table* table) : m_path(std::move(path)), m_table(table) {}

 private:
  std::string m_path;
  const fabricsim_user_rtl_table* m_table;
};

// A user's reorder tracker (kind "user"). window: the Window the block was Verilated with (the reference
// model it is compared with uses the same). fst_path / traceable as for reorder_tracker_rtl.
class reorder_tracker_user final : public reorder_tracker_cycle_model {
 public:
  reorder_tracker_user(std::shared_ptr<const user_rtl_library> library, uint32_t window,
                       const std::string& fst_path = "", bool traceable = false);
  ~reorder_tracker_user() override;
  reorder_tracker_user(const reorder_tracker_user&) = delete;
  reorder_tracker_user& operator=(const reorder_tracker_user&) = delete;

  reorder_tracker_outputs step(const reorder_tracker_inputs& in) override;
  reorder_tracker_outputs peek() const override;
  uint32_t window() const override { return m_window; }
  const char* kind() const override { return "user"; }
  // Every half cycle from now on to this FST file (built traceable only: std::logic_error otherwise).
  void start_trace(const std::string& fst_path);

 private:
  std::shared_ptr<const user_rtl_library> m_library;
  uint32_t m_window;
  void* m_block;
};

}  // namespace fabricsim::nic
