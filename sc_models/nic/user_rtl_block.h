// A user's RTL block compiled at run time into a shared object (testbench/user_rtl.h builds it;
// docs/rtl_contract.md says what the block must meet): the object is dlopen()ed and its C entry point
// (sc_models/nic/user_rtl_abi.h) drives the Verilated block as the same cycle-level model the shipped
// adapters implement, so the differential benches, the handshake adapters and a NIC use it unchanged.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "sc_models/nic/cnp_gen.h"
#include "sc_models/nic/dcqcn_rp_rtl.h"
#include "sc_models/nic/reorder_tracker.h"

struct fabricsim_user_rtl_table;

namespace fabricsim::nic {

// One loaded shared object. Objects stay loaded for the life of the process (a Verilated runtime registers
// exit handlers), so the same path opened twice gives the same table.
class user_rtl_library {
 public:
  // Throws core::config_error naming `path` when it cannot be loaded, has no fabricsim_user_rtl_entry, was
  // built for another contract version or port bundle, or holds another block than `block`
  // ("reorder_tracker", "cnp_gen" or "dcqcn_rp").
  static std::shared_ptr<const user_rtl_library> open(const std::string& path, const std::string& block);

  const fabricsim_user_rtl_table& table() const { return *m_table; }
  const std::string& path() const { return m_path; }

  user_rtl_library(std::string path, const fabricsim_user_rtl_table* table) : m_path(std::move(path)), m_table(table) {}

 private:
  std::string m_path;
  const fabricsim_user_rtl_table* m_table;
};

// One instance of the loaded block: fst_path not empty traces every half cycle from the start; traceable
// keeps a closed trace for start_trace().
class user_rtl_instance {
 public:
  user_rtl_instance(std::shared_ptr<const user_rtl_library> library, const std::string& fst_path, bool traceable);
  ~user_rtl_instance();
  user_rtl_instance(const user_rtl_instance&) = delete;
  user_rtl_instance& operator=(const user_rtl_instance&) = delete;

  void step(const void* in, void* out);
  void peek(void* out) const;
  // Every half cycle from now on to this FST file (built traceable only: std::logic_error otherwise).
  void start_trace(const std::string& fst_path);

 private:
  std::shared_ptr<const user_rtl_library> m_library;
  void* m_block;
};

// A user's reorder tracker (kind "user"). window: the Window the block was Verilated with (the reference
// model it is compared with uses the same).
class reorder_tracker_user final : public reorder_tracker_cycle_model {
 public:
  reorder_tracker_user(std::shared_ptr<const user_rtl_library> library, uint32_t window,
                       const std::string& fst_path = "", bool traceable = false)
      : m_block(std::move(library), fst_path, traceable), m_window(window) {}

  reorder_tracker_outputs step(const reorder_tracker_inputs& in) override {
    reorder_tracker_outputs out;
    m_block.step(&in, &out);
    return out;
  }
  reorder_tracker_outputs peek() const override {
    reorder_tracker_outputs out;
    m_block.peek(&out);
    return out;
  }
  uint32_t window() const override { return m_window; }
  const char* kind() const override { return "user"; }
  void start_trace(const std::string& fst_path) { m_block.start_trace(fst_path); }

 private:
  user_rtl_instance m_block;
  uint32_t m_window;
};

// A user's CNP generator (kind "user"). flows: the Flows the block was Verilated with.
class cnp_gen_user final : public cnp_gen_cycle_model {
 public:
  cnp_gen_user(std::shared_ptr<const user_rtl_library> library, uint32_t flows, const std::string& fst_path = "",
               bool traceable = false)
      : m_block(std::move(library), fst_path, traceable), m_flows(flows) {}

  cnp_gen_outputs step(const cnp_gen_inputs& in) override {
    cnp_gen_outputs out;
    m_block.step(&in, &out);
    return out;
  }
  cnp_gen_outputs peek() const override {
    cnp_gen_outputs out;
    m_block.peek(&out);
    return out;
  }
  uint32_t flows() const override { return m_flows; }
  const char* kind() const override { return "user"; }
  void start_trace(const std::string& fst_path) { m_block.start_trace(fst_path); }

 private:
  user_rtl_instance m_block;
  uint32_t m_flows;
};

// A user's DCQCN reaction point (kind "user"): the loaded block behind the shipped adapter's handshake
// (dcqcn_rp_rtl), reset with `params` at `now_cycles`.
std::unique_ptr<dcqcn_rp_rtl> make_dcqcn_rp_user(std::shared_ptr<const user_rtl_library> library,
                                                 const dcqcn_params& params, uint64_t now_cycles = 0,
                                                 const std::string& fst_path = "", bool traceable = false);

// A user's block standing in for the RTL side of one of every NIC's blocks (`fabricsim run --user-rtl`,
// nic.reorder_rtl, nic.cnp_rtl, nic.dcqcn_rtl; docs/rtl_contract.md): the block's kind rtl runs the user's block,
// lockstep runs it beside the reference model. The provider returns the object compiled for a size (reorder_tracker:
// the Window; cnp_gen: the Flows; dcqcn_rp: 0, it has one; the testbench compiles it, once per size); set
// before the fabric is built,
// for the whole process. An empty provider: the shipped RTL.
using user_rtl_provider = std::function<std::shared_ptr<const user_rtl_library>(uint32_t size)>;
// block: one of user_rtl_fabric_blocks() (std::invalid_argument otherwise).
void set_user_block(const std::string& block, user_rtl_provider provider);
const user_rtl_provider& user_block(const std::string& block);
// The blocks a user's RTL can replace in a fabric: reorder_tracker, cnp_gen, dcqcn_rp.
const std::vector<std::string>& user_rtl_fabric_blocks();

inline void set_user_reorder_tracker(user_rtl_provider provider) {
  set_user_block("reorder_tracker", std::move(provider));
}
inline const user_rtl_provider& user_reorder_tracker() { return user_block("reorder_tracker"); }

}  // namespace fabricsim::nic
