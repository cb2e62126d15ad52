// One Verilated model with its own context and an optional FST trace: the part every RTL adapter shares.
// Each instance owns its VerilatedContext, so any number of models (one per NIC or QP) coexist with no
// global simulator state between them. `Traced` is false for models Verilated without trace code (the
// mutants). Include only from adapter sources compiled with Verilator's include paths.
#pragma once

#include <verilated.h>
#include <verilated_fst_c.h>

#include <memory>
#include <string>

namespace fabricsim::nic {

template <class V, bool Traced = true>
class verilated_harness {
 public:
  verilated_harness(const char* instance, const std::string& fst_path) {
    // One evaluation thread: a Verilator context otherwise starts a worker pool per model, and its teardown
    // deadlocks in a forked process.
    m_context->threads(1);
    if (!fst_path.empty()) m_context->traceEverOn(true);  // before the model exists, so trace code is kept
    m_top = std::make_unique<V>(m_context.get(), instance);
    if constexpr (Traced) {
      if (!fst_path.empty()) {
        m_fst = std::make_unique<VerilatedFstC>();
        m_top->trace(m_fst.get(), 99);
        m_fst->open(fst_path.c_str());
      }
    }
  }
  verilated_harness(const verilated_harness&) = delete;
  verilated_harness& operator=(const verilated_harness&) = delete;

  ~verilated_harness() {
    // Verilator 5.006 erases a model's scopes from the thread's *current* context, which is whichever
    // context was made last (possibly one already destroyed): make it this model's own before teardown.
    Verilated::threadContextp(m_context.get());
    m_top->final();
    if (m_fst) m_fst->close();
    m_fst.reset();
    m_top.reset();
  }

  V& top() { return *m_top; }
  const V& top() const { return *m_top; }

  // Writes the current signal values to the trace, one time unit per call (callers dump once per clock
  // phase, so the waveform shows both).
  void dump() {
    if (!m_fst) return;
    m_fst->dump(m_context->time());
    m_context->timeInc(1);
  }

 private:
  std::unique_ptr<VerilatedContext> m_context = std::make_unique<VerilatedContext>();
  std::unique_ptr<V> m_top;
  std::unique_ptr<VerilatedFstC> m_fst;
};

}  // namespace fabricsim::nic
