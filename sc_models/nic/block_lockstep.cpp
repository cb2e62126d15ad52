// Lockstep checking of the SuperNIC's RTL blocks: the Verilated block and its reference model, compared on
// every transaction.
#include "sc_models/nic/block_lockstep.h"

#include <algorithm>
#include <cstdio>
#include <functional>
#include <utility>

#include "sc_models/core/params.h"
#include "sc_models/nic/cnp_gen_ref.h"
#include "sc_models/nic/cnp_gen_rtl.h"
#include "sc_models/nic/dcqcn_rp_ref.h"
#include "sc_models/nic/dcqcn_rp_rtl.h"
#include "sc_models/nic/reorder_tracker_ref.h"
#include "sc_models/nic/reorder_tracker_rtl.h"
#include "sc_models/nic/user_rtl_block.h"

namespace fabricsim::nic {

const std::vector<std::string>& rtl_mutant_blocks() {
  static const std::vector<std::string> blocks{"reorder_tracker", "cnp_gen", "dcqcn_rp"};
  return blocks;
}

const std::vector<uint32_t>& rtl_mutants_built(const std::string& block) {
  if (block == "reorder_tracker") return reorder_tracker_rtl::compiled_mutants();
  if (block == "cnp_gen") return cnp_gen_rtl::compiled_mutants();
  if (block == "dcqcn_rp") return dcqcn_rp_rtl::compiled_mutants();
  throw std::invalid_argument("rtl_mutants_built: no block " + block);
}

rtl_mutant_choice parse_rtl_mutant(const std::string& value, const std::string& origin) {
  if (value.empty()) return {};
  std::string blocks;
  for (const std::string& b : rtl_mutant_blocks()) blocks += (blocks.empty() ? "" : ", ") + b;
  const size_t colon = value.find(':');
  const std::string block = value.substr(0, colon);
  const auto& known = rtl_mutant_blocks();
  if (colon == std::string::npos || std::find(known.begin(), known.end(), block) == known.end())
    throw core::config_error(origin + " '" + value + "': expected BLOCK:N with BLOCK one of " + blocks);
  const std::vector<uint32_t>& built = rtl_mutants_built(block);
  const std::string number = value.substr(colon + 1);
  const std::string choices = built.empty() ? "none (configure with -DFABRICSIM_RTL_MUTANTS=ON)" : rtl_list(built);
  if (number.empty() || number.size() > 9 || number.find_first_not_of("0123456789") != std::string::npos)
    throw core::config_error(origin + " '" + value + "': N must be a mutant number; " + block +
                             " mutants in this build: " + choices);
  const auto n = static_cast<uint32_t>(std::stoul(number));
  if (std::find(built.begin(), built.end(), n) == built.end())
    throw core::config_error(origin + " '" + value + "': no " + block + " mutant " + number +
                             " in this build; built: " + choices);
  return {block, n};
}

void rethrow_rtl_divergence(const core::lockstep_sink& sink) {
  if (!sink.divergence.empty()) throw rtl_divergence(sink.divergence);
}

namespace {

// The last `capacity` transaction inputs of one pair; a full ring hands its oldest entry to `evicted` (the
// shadow block) when a new one comes.
template <class T>
class transaction_ring {
 public:
  void enable(size_t capacity) { m_items.resize(capacity); }
  bool enabled() const { return !m_items.empty(); }
  size_t size() const { return m_size; }

  template <class Evicted>
  void push(const T& item, Evicted&& evicted) {
    if (!enabled()) return;
    if (m_size == m_items.size()) {
      evicted(m_items[m_first]);
      m_items[m_first] = item;
      m_first = (m_first + 1) % m_items.size();
      return;
    }
    m_items[(m_first + m_size) % m_items.size()] = item;
    ++m_size;
  }
  template <class F>
  void for_each(F&& f) const {
    for (size_t i = 0; i < m_size; ++i) f(m_items[(m_first + i) % m_items.size()]);
  }

 private:
  std::vector<T> m_items;
  size_t m_first = 0, m_size = 0;
};

// What every pair shares: its names, the transaction count and the divergence report.
class lockstep_pair {
 protected:
  lockstep_pair(const lockstep_context& ctx, const char* block, std::string rtl_kind)
      : m_ctx(ctx), m_block(block), m_rtl_kind(std::move(rtl_kind)) {}

  bool waves() const { return m_ctx.sink && !m_ctx.sink->wave_dir.empty(); }
  // DIR/<nic>.<context>.<block>.fst, the context without spaces ("qp17"), or DIR/<nic>.<block>.fst.
  std::string wave_path() const {
    std::string context;
    for (char c : m_ctx.context)
      if (c != ' ') context += c;
    return m_ctx.sink->wave_dir + "/" + m_ctx.nic + "." + (context.empty() ? "" : context + ".") + m_block + ".fst";
  }
  std::string wave_note(size_t transactions, const std::string& failure) const {
    const std::string path = wave_path();
    if (!failure.empty()) return "\n  waveform " + path + " (incomplete: " + failure + ")";
    return "\n  waveform " + path + ": transactions " + std::to_string(m_n + 1 - transactions) + " to " +
           std::to_string(m_n) + " (the RTL as it ran, replayed into a traced instance)";
  }

  // The message: "<nic> <context>: <block> RTL (<kind>) and its reference model diverge at transaction N,
  // <what>:" then both results and the fields that differ, then where the waveform went.
  [[noreturn]] void diverge(const std::string& what, const std::string& detail, const std::string& wave) {
    std::string message = m_ctx.nic + (m_ctx.context.empty() ? "" : " " + m_ctx.context) + ": " + m_block + " RTL (" +
                          m_rtl_kind + ") and its reference model diverge at transaction " + std::to_string(m_n) +
                          ", " + what + ":\n  " + detail + wave;
    if (m_ctx.sink && m_ctx.sink->divergence.empty()) m_ctx.sink->divergence = message;
    throw rtl_divergence(message);
  }

  // diverge(), after replaying the ring's transactions into the traced shadow (`start_trace` opens its
  // waveform at the path given; `replay` applies one transaction to it) when there is a waveform directory.
  template <class Transaction, class Shadow, class StartTrace, class Replay>
  [[noreturn]] void diverge_with_wave(const std::string& what, const std::string& detail,
                                      transaction_ring<Transaction>& ring, std::unique_ptr<Shadow>& shadow,
                                      StartTrace start_trace, Replay replay) {
    std::string failure;
    if (waves()) {
      try {
        start_trace(wave_path());
        ring.for_each(replay);
      } catch (const std::exception& e) {
        failure = e.what();
      }
      shadow.reset();  // closes the file
    }
    diverge(what, detail, waves() ? wave_note(ring.size(), failure) : "");
  }

  const lockstep_context m_ctx;
  const char* const m_block;
  const std::string m_rtl_kind;
  uint64_t m_n = 0;  // transactions so far, the current one included
};

// "name: rtl X, ref Y" for each of the fields that differ.
class field_diff {
 public:
  void add(const char* name, uint64_t rtl, uint64_t ref) {
    if (rtl != ref) add(name, std::to_string(rtl), std::to_string(ref));
  }
  void add(const char* name, const std::string& rtl, const std::string& ref) {
    if (rtl == ref) return;
    m_text += std::string(m_text.empty() ? "fields that differ: " : "; ") + name + " rtl " + rtl + ", ref " + ref;
  }
  bool empty() const { return m_text.empty(); }
  const std::string& text() const { return m_text; }

 private:
  std::string m_text;
};

std::string hex(uint32_t v) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%03x", v);
  return buf;
}

std::string to_string(const psn_result& r) {
  return std::string("{verdict ") + to_string(r.verdict) + ", head_psn " + std::to_string(r.head_psn) + ", advanced " +
         std::to_string(r.advanced) + ", cycles " + std::to_string(r.cycles) + "}";
}

// ---- reorder tracker

struct reorder_transaction {
  bool reset = false;
  uint32_t psn = 0;
};

// For the message only: nothing is formatted unless a pair diverges.
std::string describe(const reorder_transaction& t) {
  return (t.reset ? "reset to psn " : "arrive psn ") + std::to_string(t.psn);
}

// The RTL side of a reorder tracker: the shipped block (mutant `mutant`), or the user's block when one is
// registered (user_reorder_tracker()). traceable: a shadow whose trace start_trace() opens later.
struct reorder_rtl_side {
  std::unique_ptr<reorder_tracker_cycle_model> model;
  std::function<void(const std::string&)> start_trace;
};

reorder_rtl_side make_reorder_rtl_side(uint32_t window, uint32_t mutant, bool traceable) {
  reorder_rtl_side side;
  if (const user_rtl_provider& user = user_reorder_tracker()) {
    auto block = std::make_unique<reorder_tracker_user>(user(window), window, "", traceable);
    reorder_tracker_user* raw = block.get();
    side.start_trace = [raw](const std::string& path) { raw->start_trace(path); };
    side.model = std::move(block);
  } else {
    auto block = std::make_unique<reorder_tracker_rtl>(window, "", mutant, traceable);
    reorder_tracker_rtl* raw = block.get();
    side.start_trace = [raw](const std::string& path) { raw->start_trace(path); };
    side.model = std::move(block);
  }
  return side;
}

class lockstep_reorder_tracker final : public reorder_tracker, lockstep_pair {
 public:
  lockstep_reorder_tracker(uint32_t window, uint32_t mutant, const lockstep_context& ctx)
      : lockstep_pair(ctx, "reorder_tracker", user_reorder_tracker() ? "user" : rtl_kind_of_mutant(mutant)),
        m_rtl(make_reorder_rtl_side(window, mutant, false).model),
        m_ref(std::make_unique<reorder_tracker_ref>(window)) {
    if (!waves()) return;
    reorder_rtl_side shadow = make_reorder_rtl_side(window, mutant, true);
    m_start_shadow_trace = std::move(shadow.start_trace);
    m_shadow = std::make_unique<reorder_tracker_handshake>(std::move(shadow.model));
    m_ring.enable(lockstep_wave_transactions);
  }

  void reset(uint32_t expected_psn) override {
    const reorder_transaction t{true, expected_psn};
    ++m_n;
    record(t);
    rtl_call([&] { m_rtl.reset(expected_psn); }, t);
    m_ref.reset(expected_psn);
    check_ports(t, nullptr);
  }

  psn_result arrive(uint32_t psn) override {
    const reorder_transaction t{false, psn};
    ++m_n;
    record(t);
    psn_result rtl{};
    rtl_call([&] { rtl = m_rtl.arrive(psn); }, t);
    const psn_result ref = m_ref.arrive(psn);
    if (rtl.verdict != ref.verdict || rtl.head_psn != ref.head_psn || rtl.advanced != ref.advanced ||
        rtl.cycles != ref.cycles) {
      field_diff d;
      d.add("verdict", std::string(to_string(rtl.verdict)), std::string(to_string(ref.verdict)));
      d.add("head_psn", rtl.head_psn, ref.head_psn);
      d.add("advanced", rtl.advanced, ref.advanced);
      d.add("cycles", rtl.cycles, ref.cycles);
      fail(t, results(rtl, ref) + "\n  " + d.text());
    }
    const psn_result both[2] = {rtl, ref};
    check_ports(t, both);
    return rtl;
  }

  uint32_t window() const override { return m_rtl.window(); }
  const char* kind() const override { return "lockstep"; }

 private:
  void record(const reorder_transaction& t) {
    m_ring.push(t, [this](const reorder_transaction& old) { apply(*m_shadow, old); });
  }
  static void apply(reorder_tracker& block, const reorder_transaction& t) {
    if (t.reset) {
      block.reset(t.psn);
    } else {
      block.arrive(t.psn);
    }
  }
  static std::string results(const psn_result& rtl, const psn_result& ref) {
    return "rtl " + to_string(rtl) + ", ref " + to_string(ref);
  }
  // The RTL side breaking its handshake (an adapter logic_error) is a divergence too.
  template <class F>
  void rtl_call(F&& f, const reorder_transaction& t) {
    try {
      f();
    } catch (const std::invalid_argument&) {
      throw;
    } catch (const std::logic_error& e) {
      fail(t, std::string("the RTL broke its handshake: ") + e.what());
    }
  }
  // Every output port of the idle block after the transaction; `both`: the arrival's results, if one.
  void check_ports(const reorder_transaction& t, const psn_result* both) {
    const reorder_tracker_outputs rtl = m_rtl.model().peek(), ref = m_ref.model().peek();
    if (rtl == ref) return;
    fail(t, (both ? results(both[0], both[1]) + "\n  " : "") + "idle output ports after it: rtl " +
                nic::to_string(rtl) + "; ref " + nic::to_string(ref));
  }
  [[noreturn]] void fail(const reorder_transaction& t, const std::string& detail) {
    diverge_with_wave(
        describe(t), detail, m_ring, m_shadow, [this](const std::string& path) { m_start_shadow_trace(path); },
        [this](const reorder_transaction& r) { apply(*m_shadow, r); });
  }

  reorder_tracker_handshake m_rtl, m_ref;
  std::unique_ptr<reorder_tracker_handshake> m_shadow;           // with a waveform directory: lags the ring
  std::function<void(const std::string&)> m_start_shadow_trace;  // opens m_shadow's model's trace
  transaction_ring<reorder_transaction> m_ring;
};

// ---- CNP generator

struct cnp_transaction {
  bool reset = false;
  uint32_t flow = 0;
  uint64_t now = 0;
};

std::string describe(const cnp_transaction& t) {
  if (t.reset) return "reset";
  return "marked arrival of flow (QPN) " + std::to_string(t.flow & qpn_mask) + " at cycle " + std::to_string(t.now);
}

std::string cnp_results(bool emit, const cnp_gen_counters& c, uint64_t cycles) {
  return "{emit " + std::to_string(emit) + ", emitted " + std::to_string(c.emitted) + ", suppressed " +
         std::to_string(c.suppressed) + ", cycles " + std::to_string(cycles) + "}";
}

// The RTL side of a CNP generator: the shipped block (mutant `mutant`), or the user's block when one is
// registered (user_block("cnp_gen")). traceable: a shadow whose trace start_trace() opens later.
struct cnp_rtl_side {
  std::unique_ptr<cnp_gen_cycle_model> model;
  std::function<void(const std::string&)> start_trace;
};

cnp_rtl_side make_cnp_rtl_side(uint32_t flows, uint32_t mutant, bool traceable) {
  cnp_rtl_side side;
  if (const user_rtl_provider& user = user_block("cnp_gen")) {
    auto block = std::make_unique<cnp_gen_user>(user(flows), flows, "", traceable);
    cnp_gen_user* raw = block.get();
    side.start_trace = [raw](const std::string& path) { raw->start_trace(path); };
    side.model = std::move(block);
  } else {
    auto block = std::make_unique<cnp_gen_rtl>(flows, "", mutant, traceable);
    cnp_gen_rtl* raw = block.get();
    side.start_trace = [raw](const std::string& path) { raw->start_trace(path); };
    side.model = std::move(block);
  }
  return side;
}

class lockstep_cnp_gen final : public cnp_gen, lockstep_pair {
 public:
  lockstep_cnp_gen(const cnp_gen_params& params, uint32_t mutant, const lockstep_context& ctx)
      : lockstep_pair(ctx, "cnp_gen", user_block("cnp_gen") ? "user" : rtl_kind_of_mutant(mutant)),
        m_rtl(make_cnp_rtl_side(uint32_t(params.flows), mutant, false).model, params),
        m_ref(std::make_unique<cnp_gen_ref>(uint32_t(params.flows)), params),
        m_params(params) {
    if (!waves()) return;
    cnp_rtl_side shadow = make_cnp_rtl_side(uint32_t(params.flows), mutant, true);
    m_start_shadow_trace = std::move(shadow.start_trace);
    m_shadow = std::make_unique<cnp_gen_handshake>(std::move(shadow.model), params);
    m_ring.enable(lockstep_wave_transactions);
  }

  void reset(const cnp_gen_params& params) override {
    ++m_n;
    m_params = params;  // every reset of the NIC's generator loads the same parameters
    const cnp_transaction t{true, 0, 0};
    record(t);
    rtl_call([&] { m_rtl.reset(params); }, t);
    m_ref.reset(params);
    compare(t, false, false);
  }

  bool marked_arrival(uint32_t flow, uint64_t now_cycles) override {
    ++m_n;
    const cnp_transaction t{false, flow, now_cycles};
    record(t);
    bool rtl = false;
    rtl_call([&] { rtl = m_rtl.marked_arrival(flow, now_cycles); }, t);
    const bool ref = m_ref.marked_arrival(flow, now_cycles);
    compare(t, rtl, ref);
    return rtl;
  }

  cnp_gen_counters counters() const override { return m_rtl.counters(); }
  uint32_t flows() const override { return m_rtl.flows(); }
  const char* kind() const override { return "lockstep"; }

 private:
  void compare(const cnp_transaction& t, bool rtl_emit, bool ref_emit) {
    const cnp_gen_counters rc = m_rtl.counters(), fc = m_ref.counters();
    const cnp_gen_outputs rp = m_rtl.model().peek(), fp = m_ref.model().peek();
    const bool same = rtl_emit == ref_emit && rc.emitted == fc.emitted && rc.suppressed == fc.suppressed &&
                      m_rtl.cycles() == m_ref.cycles();
    if (same && rp == fp) return;
    const std::string results =
        "rtl " + cnp_results(rtl_emit, rc, m_rtl.cycles()) + ", ref " + cnp_results(ref_emit, fc, m_ref.cycles());
    if (same)
      fail(t, results + "\n  idle output ports after it: rtl " + nic::to_string(rp) + "; ref " + nic::to_string(fp));
    field_diff d;
    d.add("emit", rtl_emit, ref_emit);
    d.add("emitted", rc.emitted, fc.emitted);
    d.add("suppressed", rc.suppressed, fc.suppressed);
    d.add("cycles", m_rtl.cycles(), m_ref.cycles());
    fail(t, results + "\n  " + d.text());
  }
  void record(const cnp_transaction& t) {
    m_ring.push(t, [this](const cnp_transaction& old) { apply(*m_shadow, old); });
  }
  void apply(cnp_gen& block, const cnp_transaction& t) const {
    if (t.reset) {
      block.reset(m_params);
    } else {
      block.marked_arrival(t.flow, t.now);
    }
  }
  template <class F>
  void rtl_call(F&& f, const cnp_transaction& t) {
    try {
      f();
    } catch (const std::invalid_argument&) {
      throw;
    } catch (const std::logic_error& e) {
      fail(t, std::string("the RTL broke its handshake: ") + e.what());
    }
  }
  [[noreturn]] void fail(const cnp_transaction& t, const std::string& detail) {
    diverge_with_wave(
        describe(t), detail, m_ring, m_shadow, [this](const std::string& path) { m_start_shadow_trace(path); },
        [this](const cnp_transaction& r) { apply(*m_shadow, r); });
  }

  cnp_gen_handshake m_rtl, m_ref;
  cnp_gen_params m_params;                                       // of the last reset, for the shadow's replay
  std::unique_ptr<cnp_gen_handshake> m_shadow;                   // with a waveform directory: lags the ring
  std::function<void(const std::string&)> m_start_shadow_trace;  // opens m_shadow's model's trace
  transaction_ring<cnp_transaction> m_ring;
};

// ---- DCQCN reaction point

enum class dcqcn_call : uint8_t { reset, cnp, sent, advance };

struct dcqcn_transaction {
  dcqcn_call call = dcqcn_call::reset;
  uint32_t bytes = 0;
  uint64_t now = 0;
};

std::string describe(const dcqcn_transaction& t) {
  const std::string at = " at cycle " + std::to_string(t.now);
  switch (t.call) {
    case dcqcn_call::reset:
      return "reset" + at;
    case dcqcn_call::cnp:
      return "CNP" + at;
    case dcqcn_call::sent:
      return "sent " + std::to_string(t.bytes) + " bytes" + at;
    case dcqcn_call::advance:
      return "timers advanced to cycle " + std::to_string(t.now);
  }
  return "?";
}

// The RTL side of a reaction point: the shipped block (mutant `mutant`), or the user's block when one is
// registered (user_block("dcqcn_rp")), behind the same adapter. traceable: a shadow traced later.
std::unique_ptr<dcqcn_rp_rtl> make_dcqcn_rtl_side(const dcqcn_params& params, uint32_t mutant, bool traceable) {
  if (const user_rtl_provider& user = user_block("dcqcn_rp"))
    return make_dcqcn_rp_user(user(0), params, 0, "", traceable);
  return std::make_unique<dcqcn_rp_rtl>(params, 0, "", mutant, traceable);
}

class lockstep_dcqcn_rate_engine final : public dcqcn_rate_engine, lockstep_pair {
 public:
  lockstep_dcqcn_rate_engine(const dcqcn_params& params, uint32_t mutant, const lockstep_context& ctx)
      : lockstep_pair(ctx, "dcqcn_rp", user_block("dcqcn_rp") ? "user" : rtl_kind_of_mutant(mutant)),
        m_rtl_block(make_dcqcn_rtl_side(params, mutant, false)),
        m_rtl(*m_rtl_block),
        m_ref(params),
        m_params(params) {
    if (!waves()) return;
    m_shadow = make_dcqcn_rtl_side(params, mutant, true);
    m_ring.enable(lockstep_wave_transactions);
  }

  void reset(const dcqcn_params& params, uint64_t now_cycles) override {
    m_params = params;  // the NIC resets each engine once, with the parameters it was built with
    run({dcqcn_call::reset, 0, now_cycles});
  }
  void cnp(uint64_t now_cycles) override { run({dcqcn_call::cnp, 0, now_cycles}); }
  void sent(uint32_t bytes, uint64_t now_cycles) override { run({dcqcn_call::sent, bytes, now_cycles}); }
  void advance(uint64_t now_cycles) override { run({dcqcn_call::advance, 0, now_cycles}); }

  const dcqcn_outputs& outputs() const override { return m_rtl.outputs(); }
  const char* kind() const override { return "lockstep"; }
  uint64_t last_cycles() const override { return m_rtl.last_cycles(); }

 private:
  void apply(dcqcn_rate_engine& e, const dcqcn_transaction& t) const {
    switch (t.call) {
      case dcqcn_call::reset:
        e.reset(m_params, t.now);
        break;
      case dcqcn_call::cnp:
        e.cnp(t.now);
        break;
      case dcqcn_call::sent:
        e.sent(t.bytes, t.now);
        break;
      case dcqcn_call::advance:
        e.advance(t.now);
        break;
    }
  }
  // The event on both engines, then every output compared, and the cycles the transaction took (the reference
  // model counts them by the RTL's timing rule: they shape the NIC's timing).
  void run(const dcqcn_transaction& t) {
    ++m_n;
    m_ring.push(t, [this](const dcqcn_transaction& old) { apply(*m_shadow, old); });
    try {
      apply(m_rtl, t);
    } catch (const std::invalid_argument&) {
      throw;
    } catch (const std::logic_error& e) {
      fail(t, std::string("the RTL broke its handshake: ") + e.what());
    }
    apply(m_ref, t);
    const dcqcn_outputs& a = m_rtl.outputs();
    const dcqcn_outputs& b = m_ref.outputs();
    if (a == b && m_rtl.last_cycles() == m_ref.last_cycles()) return;
    field_diff d;
    d.add("cycles", m_rtl.last_cycles(), m_ref.last_cycles());
    d.add("rate_kbps", a.rate_kbps, b.rate_kbps);
    d.add("target_kbps", a.target_kbps, b.target_kbps);
    d.add("alpha_q16", a.alpha_q16, b.alpha_q16);
    d.add("next_deadline", a.next_deadline, b.next_deadline);
    d.add("timer_count", a.timer_count, b.timer_count);
    d.add("byte_count", a.byte_count, b.byte_count);
    d.add("events", hex(a.events), hex(b.events));
    fail(t, "rtl {" + nic::to_string(a) + ", cycles " + std::to_string(m_rtl.last_cycles()) + "}, ref {" +
                nic::to_string(b) + ", cycles " + std::to_string(m_ref.last_cycles()) + "}\n  " + d.text());
  }
  [[noreturn]] void fail(const dcqcn_transaction& t, const std::string& detail) {
    diverge_with_wave(
        describe(t), detail, m_ring, m_shadow, [this](const std::string& path) { m_shadow->start_trace(path); },
        [this](const dcqcn_transaction& r) { apply(*m_shadow, r); });
  }

  std::unique_ptr<dcqcn_rp_rtl> m_rtl_block;
  dcqcn_rp_rtl& m_rtl;
  dcqcn_rp_ref m_ref;
  dcqcn_params m_params;  // of the last reset, for the shadow's replay
  std::unique_ptr<dcqcn_rp_rtl> m_shadow;
  transaction_ring<dcqcn_transaction> m_ring;
};

}  // namespace

std::unique_ptr<reorder_tracker> make_nic_reorder_tracker(const std::string& kind, uint32_t window, uint32_t mutant,
                                                          const lockstep_context& ctx) {
  if (user_reorder_tracker() && kind != "ref") {
    if (mutant != 0)
      throw core::config_error("a user's reorder_tracker (--user-rtl) and a reorder_tracker mutant cannot be combined");
    make_reorder_tracker("ref", window);  // the factory's checks and messages (kind, window)
  }
  if (kind == "lockstep") {
    make_reorder_tracker("ref", window);  // the factory's checks and messages (window)
    return std::make_unique<lockstep_reorder_tracker>(window, mutant, ctx);
  }
  if (kind == "rtl" && user_reorder_tracker())
    return std::make_unique<reorder_tracker_handshake>(make_reorder_rtl_side(window, 0, false).model);
  if (kind == "rtl" && mutant != 0) return make_reorder_tracker(rtl_kind_of_mutant(mutant), window);
  return make_reorder_tracker(kind, window);
}

std::unique_ptr<cnp_gen> make_nic_cnp_gen(const std::string& kind, const cnp_gen_params& params, uint32_t mutant,
                                          const lockstep_context& ctx) {
  if (user_block("cnp_gen") && kind != "ref") {
    if (mutant != 0) throw core::config_error("a user's cnp_gen (--user-rtl) and a cnp_gen mutant cannot be combined");
    make_cnp_gen("ref", params);  // the factory's checks and messages (kind, parameters, flows)
  }
  if (kind == "lockstep") {
    make_cnp_gen("ref", params);  // the factory's checks and messages (parameters, flows)
    return std::make_unique<lockstep_cnp_gen>(params, mutant, ctx);
  }
  if (kind == "rtl" && user_block("cnp_gen"))
    return std::make_unique<cnp_gen_handshake>(make_cnp_rtl_side(uint32_t(params.flows), 0, false).model, params);
  if (kind == "rtl" && mutant != 0) return make_cnp_gen(rtl_kind_of_mutant(mutant), params);
  return make_cnp_gen(kind, params);
}

std::unique_ptr<dcqcn_rate_engine> make_nic_dcqcn_rate_engine(const std::string& kind, const dcqcn_params& params,
                                                              uint32_t mutant, const lockstep_context& ctx) {
  if (user_block("dcqcn_rp") && kind != "ref") {
    if (mutant != 0)
      throw core::config_error("a user's dcqcn_rp (--user-rtl) and a dcqcn_rp mutant cannot be combined");
    make_dcqcn_rate_engine("ref", params);  // the factory's checks and messages (kind, parameters)
  }
  if (kind == "lockstep") {
    dcqcn_encode(params);  // the parameter checks and messages
    return std::make_unique<lockstep_dcqcn_rate_engine>(params, mutant, ctx);
  }
  if (kind == "rtl" && user_block("dcqcn_rp")) return make_dcqcn_rtl_side(params, 0, false);
  if (kind == "rtl" && mutant != 0) return make_dcqcn_rate_engine(rtl_kind_of_mutant(mutant), params);
  return make_dcqcn_rate_engine(kind, params);
}

}  // namespace fabricsim::nic
