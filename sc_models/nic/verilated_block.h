// One Verilated fabricsim RTL block stepped by hand, one clock per call (no SystemC clock, no kernel events:
// two eval() per cycle), behind the block's cycle-level port bundle: the adapter every block shares.
//
// Every block speaks the same handshake (rtl/fabricsim_pkg.sv users; docs/verification.md): clk_i, rst_ni,
// a request taken at a rising edge where req_valid_i && req_ready_o, a response qualified by rsp_valid_o.
// The per-block part is a small binding struct:
//
//   struct my_block_binding {
//     using inputs = ...;    // values driven onto the input ports for one cycle
//     using outputs = ...;   // values on the output ports, sampled before the rising edge
//     static constexpr const char* name = "my_block";   // Verilated instance name (waveform scope)
//     template <class V> static void drive(V& top, const inputs& in);
//     template <class V> static outputs sample(const V& top);
//   };
//
// make_verilated_variant() builds the block of one compiled variant (a parameter value, a mutant) from the
// class lists rtl/CMakeLists.txt generates, so no block writes a switch over Verilated class names.
//
// Between steps the request and init pins rest low (their idle values, as the reference models assume), so
// peek() shows the outputs of an idle cycle. Include only from adapter sources compiled with Verilator's
// include paths; users see verilated_port<> (sc_models/nic/verilated_port.h) only.
#pragma once

#include <verilated.h>
#include <verilated_fst_c.h>

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

#include "sc_models/nic/verilated_port.h"

namespace fabricsim::nic {

// The context every untraced model of this process shares (models without scopes or DPI, as ours, keep no
// state in it but the time unit, the same for all). One evaluation thread: a Verilator context otherwise
// starts a worker pool per model, and its teardown deadlocks in a forked process. Never destroyed, so that it
// outlives every model. Before, each model made its own, and a VerilatedContext's construction asks the
// system for the CPU count (std::thread::hardware_concurrency, a read of sysfs) and threads(1) asks again:
// about 10,000 contexts at 4,096 NICs (docs/scale_out.md, "The whole process").
inline VerilatedContext* shared_verilated_context() {
  static VerilatedContext* const context = [] {
    auto* c = new VerilatedContext;  // NOLINT(cppcoreguidelines-owning-memory): lives as long as the process
    c->threads(1);
    return c;
  }();
  return context;
}

// One Verilated model with an optional FST trace. A traced model owns its VerilatedContext (the trace's time
// advances with its context's); the others share one (shared_verilated_context), so any number of models
// (one per NIC or QP) coexist with no simulator state between them. `Traced` is false for models Verilated
// without trace code.
template <class V, bool Traced = true>
class verilated_harness {
 public:
  // fst_path: trace from the start into this file (empty: not now). traceable: keep the trace attached but
  // closed, so that start_trace() can open it later (a lockstep pair's shadow block, docs/verification.md).
  verilated_harness(const char* instance, const std::string& fst_path, bool traceable = false) {
    const bool trace = Traced && (!fst_path.empty() || traceable);
    if (trace) {
      m_own = std::make_unique<VerilatedContext>();
      m_own->threads(1);
      m_own->traceEverOn(true);  // before the model exists, so trace code is kept
    }
    m_context = trace ? m_own.get() : shared_verilated_context();
    m_top = std::make_unique<V>(m_context, instance);
    if constexpr (Traced) {
      if (trace) {
        m_fst = std::make_unique<VerilatedFstC>();
        m_top->trace(m_fst.get(), 99);
        if (!fst_path.empty()) m_fst->open(fst_path.c_str());
      }
    }
  }
  verilated_harness(const verilated_harness&) = delete;
  verilated_harness& operator=(const verilated_harness&) = delete;

  ~verilated_harness() {
    // Verilator 5.006 erases a model's scopes from the thread's *current* context, which is whichever
    // context was made last (possibly one already destroyed): make it this model's own before teardown.
    Verilated::threadContextp(m_context);
    m_top->final();
    if (m_fst) m_fst->close();
    m_fst.reset();
    m_top.reset();
  }

  V& top() { return *m_top; }
  const V& top() const { return *m_top; }

  // Opens the trace of a harness built traceable (std::logic_error otherwise, or when one is open already):
  // every dump() from now on writes to `fst_path`, the first one with every signal's value.
  void start_trace(const std::string& fst_path) {
    if (!m_fst || m_fst->isOpen()) throw std::logic_error("verilated_harness: no closed trace to start");
    m_fst->open(fst_path.c_str());
  }

  // Writes the current signal values to the trace, one time unit per call (callers dump once per clock
  // phase, so the waveform shows both).
  void dump() {
    if (!m_fst || !m_fst->isOpen()) return;
    m_fst->dump(m_context->time());
    m_context->timeInc(1);
  }

 private:
  std::unique_ptr<VerilatedContext> m_own;  // a traced model's context
  VerilatedContext* m_context = nullptr;    // m_own's, or the shared one
  std::unique_ptr<V> m_top;
  std::unique_ptr<VerilatedFstC> m_fst;
};

template <class Binding, class V, bool Traced = true>
class verilated_block final : public verilated_port<typename Binding::inputs, typename Binding::outputs> {
 public:
  using inputs = typename Binding::inputs;
  using outputs = typename Binding::outputs;

  explicit verilated_block(const std::string& fst_path, bool traceable = false)
      : m_rtl(Binding::name, fst_path, traceable), m_top(&m_rtl.top()), m_pins(&pins_of(m_rtl.top())) {
    // Settle with the reset released, so a first step() with rst_n low is seen as a falling edge.
    m_pins->clk_i = 0;
    m_pins->rst_ni = 1;
    rest();
    m_top->eval();
  }

  // Low phase with `in` on the pins (sampled there), then the rising edge, then the pins back at rest.
  outputs step(const inputs& in) override {
    Binding::drive(*m_pins, in);
    m_pins->clk_i = 0;
    m_top->eval();
    m_rtl.dump();
    const outputs out = Binding::sample(*m_pins);
    m_pins->clk_i = 1;
    m_top->eval();
    m_rtl.dump();
    // Between steps the pins rest. Only the init pin reaches an output combinationally (ready is low during an
    // init): after an init, settle again so peek() shows the idle cycle; a request pin feeds no output, so
    // resting it needs no third eval().
    const bool settle = init_pending();
    rest();
    if (settle) m_top->eval();
    return out;
  }

  // After the rising edge the registered outputs are settled and the request pins rest.
  outputs peek() const override { return Binding::sample(*m_pins); }

  void start_trace(const std::string& fst_path) override { m_rtl.start_trace(fst_path); }

 private:
  bool init_pending() const {
    if constexpr (has_init_valid<V>(0)) return m_pins->init_valid_i != 0;
    return false;
  }
  void rest() {
    m_pins->req_valid_i = 0;
    if constexpr (has_init_valid<V>(0)) m_pins->init_valid_i = 0;
  }

  // Blocks whose init is a side port (reorder_tracker, cnp_gen) have init_valid_i; dcqcn_rp's init is a
  // request kind.
  template <class T>
  static constexpr auto has_init_valid(int) -> decltype(std::declval<T&>().init_valid_i, bool()) {
    return true;
  }
  template <class T>
  static constexpr bool has_init_valid(long) {
    return false;
  }

  // The pins the binding drives and samples: the model's root module, whose ports are plain members of the
  // one object the evaluation reads anyway, rather than the model, whose port members are references to those
  // in two more cache lines that a transaction at a cold NIC misses on (docs/performance.md, session 12). A
  // unit instantiating a block includes the model's <prefix>___024root.h beside <prefix>.h (rtl/CMakeLists.txt's
  // generated headers, sc_models/nic/dcqcn_rp_rtl.cpp, rtl/user_rtl_shim.cpp).
  using pins = std::remove_pointer_t<decltype(std::declval<V&>().rootp)>;
  static pins& pins_of(V& top) { return *top.rootp; }

  verilated_harness<V, Traced> m_rtl;
  V* m_top;      // m_rtl's model: eval()
  pins* m_pins;  // its root module: the pins
};

// The Verilated classes of a block's compiled variants, each under its key (a parameter value such as a
// window, or a mutant number); rtl/CMakeLists.txt writes the lists (FABRICSIM_<BLOCK>_..._VARIANTS).
template <uint32_t Key, class V>
struct rtl_variant {};
template <class... Variants>
struct rtl_variants {};

// The verilated_block of the variant whose key is `key`, or null when none has it.
template <class Binding, bool Traced, uint32_t... Keys, class... Vs>
std::unique_ptr<verilated_port<typename Binding::inputs, typename Binding::outputs>> make_verilated_variant(
    rtl_variants<rtl_variant<Keys, Vs>...>, uint32_t key, const std::string& fst_path, bool traceable = false) {
  std::unique_ptr<verilated_port<typename Binding::inputs, typename Binding::outputs>> block;
  ((key == Keys && !block ? void(block = std::make_unique<verilated_block<Binding, Vs, Traced>>(fst_path, traceable))
                          : void()),
   ...);
  static_cast<void>(key);  // unused when the list is empty (mutants not built)
  static_cast<void>(fst_path);
  static_cast<void>(traceable);
  return block;
}

}  // namespace fabricsim::nic
