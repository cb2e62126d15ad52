// `fabricsim verify-rtl --replay`: a recorded transaction stream through the RTL and the reference model.
#include "testbench/rtl_replay.h"

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <memory>
#include <sstream>
#include <vector>

#include "sc_models/core/params.h"
#include "sc_models/core/transaction_log.h"
#include "sc_models/nic/block_recording.h"
#include "sc_models/nic/cnp_gen.h"
#include "sc_models/nic/cnp_gen_ref.h"
#include "sc_models/nic/cnp_gen_rtl.h"
#include "sc_models/nic/dcqcn_rp.h"
#include "sc_models/nic/reorder_tracker.h"
#include "sc_models/nic/reorder_tracker_ref.h"
#include "sc_models/nic/reorder_tracker_rtl.h"
#include "sc_models/nic/user_rtl_block.h"

namespace fabricsim::testbench {
namespace {

using namespace fabricsim::nic;

// A malformed line; the caller adds file and line.
struct line_error {
  std::string what;
};

uint64_t number(const std::vector<std::string>& tok, size_t i, const char* what, uint64_t max) {
  if (i >= tok.size()) throw line_error{std::string("missing ") + what};
  const std::string& t = tok[i];
  char* end = nullptr;
  errno = 0;
  const uint64_t v = std::strtoull(t.c_str(), &end, 10);
  if (t.empty() || t[0] == '-' || *end != '\0' || errno != 0)
    throw line_error{std::string(what) + " '" + t + "' is not an unsigned integer"};
  if (v > max) throw line_error{std::string(what) + " " + t + " exceeds " + std::to_string(max)};
  return v;
}

void expect_tokens(const std::vector<std::string>& tok, size_t n) {
  if (tok.size() != n)
    throw line_error{"'" + tok[0] + "' takes " + std::to_string(n - 1) + " fields, found " +
                     std::to_string(tok.size() - 1)};
}

// key=value tokens from index `from` on.
std::map<std::string, std::string> fields(const std::vector<std::string>& tok, size_t from) {
  std::map<std::string, std::string> m;
  for (size_t i = from; i < tok.size(); ++i) {
    const size_t eq = tok[i].find('=');
    if (eq == std::string::npos || eq == 0) throw line_error{"parameter '" + tok[i] + "' is not key=value"};
    m[tok[i].substr(0, eq)] = tok[i].substr(eq + 1);
  }
  return m;
}

template <class Params>
Params params_of(const std::vector<std::string>& tok, size_t from) {
  try {
    return core::parse_param_fields<Params>(fields(tok, from), "parameters");
  } catch (const core::config_error& e) {
    throw line_error{e.what()};
  }
}

// Compares one signal, recording the first difference.
struct checker {
  rtl_replay_result& r;
  template <class T>
  void operator()(const char* signal, const T& expected, const T& got) {
    if (!r.matched || expected == got) return;
    r.matched = false;
    r.mismatch_signal = signal;
    std::ostringstream e, g;
    e << expected;
    g << got;
    r.expected = e.str();
    r.got = g.str();
  }
};

// One instance: the two implementations side by side. The reorder tracker and the CNP generator are held
// as their handshakes, so the replay reaches their cycle-level ports (peek) without a cast.
struct reorder_pair {
  std::unique_ptr<reorder_tracker_handshake> ref, rtl;
};
struct dcqcn_pair {
  std::unique_ptr<dcqcn_rate_engine> ref, rtl;
};
struct cnp_pair {
  std::unique_ptr<cnp_gen_handshake> ref, rtl;
};

// The RTL first: its constructor checks the window (or flows) against the compiled ones and the mutant
// against the built ones, with the factories' messages; the reference model then takes the same value.
// A user's block (`user` not empty) is compiled for the instance's window or flows instead.
reorder_pair make_reorder_pair(uint32_t window, uint32_t mutant, const user_rtl_provider& user) {
  std::unique_ptr<reorder_tracker_cycle_model> model;
  if (user) {
    make_reorder_tracker("ref", window);  // the window's checks and messages, before anything is compiled
    model = std::make_unique<reorder_tracker_user>(user(window), window);
  } else {
    model = std::make_unique<reorder_tracker_rtl>(window, "", mutant);
  }
  auto rtl = std::make_unique<reorder_tracker_handshake>(std::move(model));
  return {std::make_unique<reorder_tracker_handshake>(std::make_unique<reorder_tracker_ref>(window)), std::move(rtl)};
}

cnp_pair make_cnp_pair(const cnp_gen_params& p, uint32_t mutant, const user_rtl_provider& user) {
  check_cnp_gen_params(p, "cnp_gen");  // first, as make_cnp_gen() checks
  std::unique_ptr<cnp_gen_cycle_model> model;
  if (user) {
    model = std::make_unique<cnp_gen_user>(user(uint32_t(p.flows)), uint32_t(p.flows));
  } else {
    model = std::make_unique<cnp_gen_rtl>(uint32_t(p.flows), "", mutant);
  }
  auto rtl = std::make_unique<cnp_gen_handshake>(std::move(model), p);
  return {std::make_unique<cnp_gen_handshake>(std::make_unique<cnp_gen_ref>(uint32_t(p.flows)), p), std::move(rtl)};
}

struct instance_info {
  std::string name;
  uint64_t transactions = 0;
};

std::string rtl_kind(uint32_t mutant) { return mutant == 0 ? "rtl" : "rtl_mutant_" + std::to_string(mutant); }

}  // namespace

namespace {

// The replay's state: the instances each 'new' line declared, as pairs of implementations, and the checker.
class replayer {
 public:
  replayer(const std::string& block, uint32_t mutant, const user_rtl_provider& user, rtl_replay_result& r)
      : m_block(block), m_mutant(mutant), m_user(user), m_rtl(rtl_kind(mutant)), m_r(r), m_check{r} {}

  // One transaction line, split into tokens; errors are line_error (or a model's own exceptions).
  void line(const std::vector<std::string>& tok, const std::string& text, uint64_t line_no) {
    if (tok.size() < 2) throw line_error{"expected '<transaction> <instance id> ...'"};
    const std::string& op = tok[0];
    const uint64_t id = number(tok, 1, "instance id", UINT64_MAX);
    if (op == "new") {
      declare(tok, id);
      return;
    }
    auto known = m_names.find(id);
    if (known == m_names.end())
      throw line_error{"instance " + std::to_string(id) + " was not declared by a 'new' line"};
    instance_info& inst = known->second;
    if (m_block == "reorder_tracker")
      step(m_trackers[id], op, tok);
    else if (m_block == "dcqcn_rp")
      step(m_engines[id], op, tok);
    else
      step(m_generators[id], op, tok);
    ++m_r.transactions;
    ++m_r.by_kind[op];
    if (!m_r.matched) {
      m_r.mismatch_line = line_no;
      m_r.mismatch_instance = inst.name;
      m_r.mismatch_index = inst.transactions;
      m_r.mismatch_transaction = text;
    }
    ++inst.transactions;
  }

 private:
  void declare(const std::vector<std::string>& tok, uint64_t id) {
    if (tok.size() < 3) throw line_error{"'new' needs an instance id and a name"};
    if (m_names.count(id)) throw line_error{"instance " + std::to_string(id) + " declared twice"};
    try {
      if (m_block == "reorder_tracker") {
        const auto p = params_of<reorder_tracker_params>(tok, 3);
        m_trackers[id] = make_reorder_pair(uint32_t(p.window), m_mutant, m_user);
      } else if (m_block == "dcqcn_rp") {
        const auto p = params_of<dcqcn_params>(tok, 3);
        auto ref = make_dcqcn_rate_engine("ref", p);  // the parameters' checks, before anything is compiled
        m_engines[id] = {std::move(ref), m_user ? std::unique_ptr<dcqcn_rate_engine>(make_dcqcn_rp_user(m_user(0), p))
                                                : make_dcqcn_rate_engine(m_rtl, p)};
      } else {
        const auto p = params_of<cnp_gen_params>(tok, 3);
        m_generators[id] = make_cnp_pair(p, m_mutant, m_user);
      }
    } catch (const core::config_error& e) {
      throw line_error{std::string("cannot build instance ") + tok[2] + ": " + e.what()};
    }
    m_names[id] = {tok[2], 0};
    ++m_r.instances;
  }

  void step(reorder_pair& m, const std::string& op, const std::vector<std::string>& tok) {
    if (op == "reset") {
      expect_tokens(tok, 3);
      const auto psn = uint32_t(number(tok, 2, "expected PSN", UINT32_MAX));
      m.ref->reset(psn);
      m.rtl->reset(psn);
    } else if (op == "arrive") {
      expect_tokens(tok, 3);
      const auto psn = uint32_t(number(tok, 2, "PSN", UINT32_MAX));
      const psn_result e = m.ref->arrive(psn), g = m.rtl->arrive(psn);
      m_check("verdict", std::string(to_string(e.verdict)), std::string(to_string(g.verdict)));
      m_check("head_psn", e.head_psn, g.head_psn);
      m_check("advanced", e.advanced, g.advanced);
      m_check("cycles", e.cycles, g.cycles);
    } else {
      throw line_error{"unknown transaction '" + op + "' (reorder_tracker: new, reset, arrive)"};
    }
    // Beyond the transaction's result: every output port as the block sits idle after it. After an init
    // too: the RTL adapter used to leave init_valid_i on the pins, and its peek() then showed in_ready low
    // where the reference showed it high (found by this replay).
    m_check("ports", to_string(m.ref->model().peek()), to_string(m.rtl->model().peek()));
  }

  void step(dcqcn_pair& m, const std::string& op, const std::vector<std::string>& tok) {
    if (op == "reset") {
      if (tok.size() < 3) throw line_error{"'reset' needs a time and the parameters"};
      const uint64_t now = number(tok, 2, "time", UINT64_MAX);
      const auto p = params_of<dcqcn_params>(tok, 3);
      m.ref->reset(p, now);
      m.rtl->reset(p, now);
    } else if (op == "cnp" || op == "advance") {
      expect_tokens(tok, 3);
      const uint64_t now = number(tok, 2, "time", UINT64_MAX);
      if (op == "cnp") {
        m.ref->cnp(now);
        m.rtl->cnp(now);
      } else {
        m.ref->advance(now);
        m.rtl->advance(now);
      }
    } else if (op == "sent") {
      expect_tokens(tok, 4);
      const auto bytes = uint32_t(number(tok, 2, "bytes", dcqcn_max_sent_bytes));
      const uint64_t now = number(tok, 3, "time", UINT64_MAX);
      m.ref->sent(bytes, now);
      m.rtl->sent(bytes, now);
    } else {
      throw line_error{"unknown transaction '" + op + "' (dcqcn_rp: new, reset, cnp, sent, advance)"};
    }
    const dcqcn_outputs& e = m.ref->outputs();
    const dcqcn_outputs& g = m.rtl->outputs();
    m_check("rate_kbps", e.rate_kbps, g.rate_kbps);
    m_check("target_kbps", e.target_kbps, g.target_kbps);
    m_check("alpha_q16", e.alpha_q16, g.alpha_q16);
    m_check("next_deadline", e.next_deadline, g.next_deadline);
    m_check("timer_count", e.timer_count, g.timer_count);
    m_check("byte_count", e.byte_count, g.byte_count);
    m_check("events", e.events, g.events);
  }

  void step(cnp_pair& m, const std::string& op, const std::vector<std::string>& tok) {
    if (op == "reset") {
      const auto p = params_of<cnp_gen_params>(tok, 2);
      m.ref->reset(p);
      m.rtl->reset(p);
    } else if (op == "mark") {
      expect_tokens(tok, 4);
      const auto flow = uint32_t(number(tok, 2, "flow", UINT32_MAX));
      const uint64_t now = number(tok, 3, "time", UINT64_MAX);
      const bool e = m.ref->marked_arrival(flow, now), g = m.rtl->marked_arrival(flow, now);
      m_check("emit", e, g);
    } else {
      throw line_error{"unknown transaction '" + op + "' (cnp_gen: new, reset, mark)"};
    }
    m_check("emitted", m.ref->counters().emitted, m.rtl->counters().emitted);
    m_check("suppressed", m.ref->counters().suppressed, m.rtl->counters().suppressed);
    m_check("cycles", m.ref->cycles(), m.rtl->cycles());
    m_check("ports", to_string(m.ref->model().peek()), to_string(m.rtl->model().peek()));
  }

  const std::string& m_block;
  const uint32_t m_mutant;
  const user_rtl_provider& m_user;
  const std::string m_rtl;
  rtl_replay_result& m_r;
  checker m_check;
  std::map<uint64_t, instance_info> m_names;
  std::map<uint64_t, reorder_pair> m_trackers;
  std::map<uint64_t, dcqcn_pair> m_engines;
  std::map<uint64_t, cnp_pair> m_generators;
};

// The header names the block the file recorded: replaying it as another block is an error.
void check_header(const std::string& line, const std::string& block, const std::string& where) {
  const std::string tag = ", block ";
  const size_t at = line.find(tag);
  const std::string recorded =
      at == std::string::npos ? "" : line.substr(at + tag.size(), line.find(' ', at + tag.size()) - at - tag.size());
  if (recorded != block)
    throw core::config_error(where + ": this is a recording of block '" + recorded + "', not " + block);
}

}  // namespace

rtl_replay_result replay_rtl_recording(const std::string& block, const std::string& path, uint32_t mutant,
                                       const user_rtl_provider& user) {
  if (block != "reorder_tracker" && block != "dcqcn_rp" && block != "cnp_gen")
    throw core::config_error("verify-rtl --replay: unknown block " + block +
                             "; known blocks: reorder_tracker, cnp_gen, dcqcn_rp");
  if (user && mutant != 0) throw core::config_error("verify-rtl --replay: --mutant cannot be combined with --rtl");
  std::ifstream in(path);
  if (!in) throw core::config_error("verify-rtl --replay " + path + ": cannot open: " + std::strerror(errno));

  rtl_replay_result r;
  r.rtl = user ? "user RTL" : mutant == 0 ? "RTL" : "RTL mutant " + std::to_string(mutant);
  replayer replay(block, mutant, user, r);
  const auto start = std::chrono::steady_clock::now();
  std::string line;
  uint64_t line_no = 0;
  bool header_seen = false;
  while (r.matched && std::getline(in, line)) {
    ++line_no;
    const std::string where = path + ":" + std::to_string(line_no);
    if (line.empty()) continue;
    if (line[0] == '#') {
      if (line_no == 1) {
        header_seen = true;
        check_header(line, block, where);
      }
      continue;
    }
    if (!header_seen)
      throw core::config_error(where + ": not a fabricsim RTL transaction recording (no header line)");
    std::vector<std::string> tok;
    {
      std::istringstream s(line);
      for (std::string t; s >> t;) tok.push_back(t);
    }
    try {
      replay.line(tok, line, line_no);
    } catch (const line_error& e) {
      throw core::config_error(where + ": " + e.what + " (line: \"" + line + "\")");
    } catch (const core::config_error& e) {
      throw core::config_error(where + ": " + e.what() + " (line: \"" + line + "\")");
    } catch (const std::invalid_argument& e) {
      throw core::config_error(where + ": a model rejected the transaction: " + e.what() + " (line: \"" + line + "\")");
    }
  }
  if (line_no == 0) throw core::config_error("verify-rtl --replay " + path + ": empty file");
  r.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return r;
}

std::string format_rtl_replay(const std::string& block, const std::string& path, const rtl_replay_result& r) {
  std::ostringstream s;
  s << "verify-rtl " << block << " replay " << path << '\n';
  if (!r.matched) {
    s << "MISMATCH at " << path << ":" << r.mismatch_line << ", instance " << r.mismatch_instance << " transaction "
      << r.mismatch_index << " (\"" << r.mismatch_transaction << "\"): " << r.mismatch_signal << " expected "
      << r.expected << " (reference model) got " << r.got << " (" << r.rtl << ")\n";
    return s.str();
  }
  s << "  instances              " << r.instances << '\n' << "  transactions           " << r.transactions << '\n';
  for (const auto& [kind, n] : r.by_kind) s << "    " << kind << std::string(kind.size() < 20 ? 20 - kind.size() : 1, ' ') << n << '\n';
  s << "  transactions per s     "
    << static_cast<uint64_t>(r.wall_seconds > 0 ? double(r.transactions) / r.wall_seconds : 0) << '\n'
    << r.rtl << " matches the reference model after every recorded transaction\n";
  return s.str();
}

}  // namespace fabricsim::testbench
