// `fabricsim verify-rtl`: the Verilated reorder tracker against its reference model, every port every cycle;
// the Verilated DCQCN reaction point against its reference model, every output every transaction.
#include "testbench/verify_rtl.h"

#include <algorithm>
#include <chrono>
#include <fstream>
#include <iomanip>
#include <sstream>

#include "sc_models/core/params.h"
#include "sc_models/nic/cnp_gen_differential.h"
#include "sc_models/nic/cnp_gen_rtl.h"
#include "sc_models/nic/reorder_tracker.h"
#include "sc_models/nic/reorder_tracker_differential.h"
#include "sc_models/nic/reorder_tracker_rtl.h"
#include "sc_models/nic/user_rtl_block.h"
#include "testbench/rtl_contract.h"

namespace fabricsim::testbench {
namespace {

using namespace fabricsim::nic;

// For the header line: a mutant run says which bug it carries, so a mismatch is read as the expected catch.
std::string mutant_note(const verify_rtl_options& options) {
  if (options.mutant == 0) return "";
  return " MUTANT " + std::to_string(options.mutant) + " (a planted bug, rtl/mutants/" + options.block + "/" +
         std::to_string(options.mutant) + ".patch: a mismatch is the expected outcome)";
}

std::string window_list() {
  std::string list;
  for (uint32_t w : reorder_tracker_rtl::compiled_windows()) list += (list.empty() ? "" : ", ") + std::to_string(w);
  return list;
}

// --param NAME=VALUE unless the user gave NAME.
void default_param(std::vector<std::string>& params, const std::string& name, uint64_t value) {
  const std::string prefix = name + "=";
  if (std::none_of(params.begin(), params.end(), [&](const std::string& p) { return p.rfind(prefix, 0) == 0; }))
    params.push_back(prefix + std::to_string(value));
}
}  // namespace

void add_default_size_params(const verify_rtl_options& options, std::vector<std::string>& params) {
  if (options.block == "reorder_tracker") {
    default_param(params, "Window", options.window);
  } else if (options.block == "cnp_gen") {
    default_param(params, "Flows", options.flows);
    default_param(params, "TimeWidth", 32);
  }
}

void check_verify_rtl_preset(const verify_rtl_options& options) {
  if (!options.preset.empty() &&
      (options.block != "dcqcn_rp" ||
       (options.preset != "paper" && options.preset != "nvidia" && options.preset != "fabric_400g")))
    throw core::config_error("verify-rtl --preset " + options.preset +
                             ": only for --block dcqcn_rp, one of: paper, nvidia, fabric_400g");
}

std::string verify_rtl_blocks() { return "reorder_tracker, cnp_gen, dcqcn_rp"; }

verify_rtl_result verify_rtl(const verify_rtl_options& options) {
  if (options.block != "reorder_tracker" && options.block != "dcqcn_rp")
    throw core::config_error("verify-rtl --block " + options.block + ": unknown block; known blocks: " +
                             verify_rtl_blocks());
  if (options.block == "reorder_tracker") {
    const auto& windows = reorder_tracker_rtl::compiled_windows();
    if (std::find(windows.begin(), windows.end(), options.window) == windows.end())
      throw core::config_error("verify-rtl --window " + std::to_string(options.window) +
                               " is not a window the RTL was compiled for; compiled windows: " + window_list());
  }
  check_verify_rtl_preset(options);
  if (!options.wave.empty() && !std::ofstream(options.wave))
    throw core::config_error("verify-rtl --wave " + options.wave + ": cannot open for writing");

  verify_rtl_result r;
  const auto start = std::chrono::steady_clock::now();
  if (options.block == "reorder_tracker") {
    r.reorder_tracker =
        run_reorder_tracker_differential(options.window, options.cycles, options.seed, options.wave, options.mutant);
    r.matched = r.reorder_tracker.matched;
  } else {
    dcqcn_rp_differential_options o;
    o.cycles = options.cycles;
    o.seed = options.seed;
    o.preset = options.preset.empty() ? "mixed" : options.preset;
    o.wave = options.wave;
    o.mutant = options.mutant;
    r.dcqcn_rp = run_dcqcn_rp_differential(o);
    r.matched = r.dcqcn_rp.matched;
  }
  r.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return r;
}

namespace {

std::string format_dcqcn_rp(const verify_rtl_options& options, const dcqcn_rp_differential_result& r,
                            double wall_seconds) {
  std::ostringstream s;
  s << "verify-rtl " << options.block << " preset " << (options.preset.empty() ? "paper+nvidia+random" : options.preset)
    << " seed " << options.seed << mutant_note(options) << '\n';
  if (!r.matched) {
    s << "MISMATCH at cycle " << r.mismatch_cycle << " (transaction " << r.transactions << ", seed " << options.seed
      << "): " << r.mismatch_signal << " expected " << r.expected << " got " << r.got << '\n'
      << "  " << r.mismatch << '\n';
    if (!options.wave.empty()) s << "waveform up to the mismatch: " << options.wave << '\n';
    return s.str();
  }
  s << "  transactions           " << r.transactions << '\n'
    << "  rtl cycles             " << r.rtl_cycles << '\n'
    << "  parameter sets         " << r.parameter_sets << '\n'
    << "  simulated cycles       " << r.simulated_cycles << '\n'
    << "  transactions per s     " << static_cast<uint64_t>(wall_seconds > 0 ? r.transactions / wall_seconds : 0)
    << '\n'
    << "coverage bins (hits):\n";
  size_t missed = 0;
  for (const auto& [name, hits] : r.coverage) {
    s << "  " << std::left << std::setw(36) << name << hits << (hits == 0 ? "   NOT HIT" : "") << '\n';
    missed += hits == 0 ? 1 : 0;
  }
  s << "  " << (r.coverage.size() - missed) << " of " << r.coverage.size() << " bins hit\n";
  if (!options.wave.empty()) s << "  waveform               " << options.wave << '\n';
  s << "RTL matches the reference model after every transaction\n";
  return s.str();
}

}  // namespace

std::string format_verify_rtl(const verify_rtl_options& options, const verify_rtl_result& result) {
  if (options.block == "dcqcn_rp") return format_dcqcn_rp(options, result.dcqcn_rp, result.wall_seconds);
  const reorder_tracker_differential_result& r = result.reorder_tracker;
  std::ostringstream s;
  s << "verify-rtl " << options.block << " window " << options.window << " seed " << options.seed
    << mutant_note(options) << '\n';
  if (!r.matched) {
    s << "MISMATCH at cycle " << r.mismatch_cycle << ": " << r.mismatch << '\n';
    if (!options.wave.empty()) s << "waveform up to the mismatch: " << options.wave << '\n';
    return s.str();
  }
  const uint64_t transactions = r.verdicts[0] + r.verdicts[1] + r.verdicts[2] + r.verdicts[3];
  s << "  cycles                 " << r.cycles << '\n'
    << "  transactions checked   " << transactions << " (accepted PSNs)\n"
    << "  transactions per s     "
    << static_cast<uint64_t>(result.wall_seconds > 0 ? transactions / result.wall_seconds : 0) << '\n'
    << "  cycles per s           "
    << static_cast<uint64_t>(result.wall_seconds > 0 ? r.cycles / result.wall_seconds : 0) << '\n';
  for (uint8_t v = 0; v < 4; ++v)
    s << "  " << std::left << std::setw(23) << to_string(static_cast<psn_verdict>(v)) << r.verdicts[v] << '\n';
  s << "  stalled presentations  " << r.stalled_presentations << '\n'
    << "  head wraps             " << r.head_wraps << '\n'
    << "  inits                  " << r.inits << '\n'
    << "  longest busy run       " << r.longest_busy_cycles << " cycles\n"
    << "coverage bins (hits)\n";
  size_t missed = 0;
  for (size_t b = 0; b < reorder_tracker_bin_count; ++b) {
    s << "  " << std::left << std::setw(32) << to_string(static_cast<reorder_tracker_bin>(b)) << r.coverage[b]
      << (r.coverage[b] == 0 ? "  NOT HIT" : "") << '\n';
    if (r.coverage[b] == 0) ++missed;
  }
  if (missed != 0) s << missed << " of " << reorder_tracker_bin_count << " coverage bins not hit: run more cycles\n";
  if (!options.wave.empty()) s << "  waveform               " << options.wave << '\n';
  s << "RTL matches the reference model on every cycle\n";
  return s.str();
}

verify_rtl_cnp_gen_result verify_rtl_cnp_gen(const verify_rtl_options& options) {
  const auto& flows = cnp_gen_rtl::compiled_flows();
  if (std::find(flows.begin(), flows.end(), options.flows) == flows.end()) {
    std::string list;
    for (uint32_t f : flows) list += (list.empty() ? "" : ", ") + std::to_string(f);
    throw core::config_error("verify-rtl --flows " + std::to_string(options.flows) +
                             " is not a flow count the RTL was compiled for; compiled flows: " + list);
  }
  if (!options.wave.empty() && !std::ofstream(options.wave))
    throw core::config_error("verify-rtl --wave " + options.wave + ": cannot open for writing");
  verify_rtl_cnp_gen_result result;
  const auto start = std::chrono::steady_clock::now();
  result.bench = run_cnp_gen_differential(options.flows, options.cycles, options.seed, options.wave, options.mutant);
  result.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

std::string format_verify_rtl_cnp_gen(const verify_rtl_options& options, const verify_rtl_cnp_gen_result& result) {
  const cnp_gen_differential_result& r = result.bench;
  std::ostringstream s;
  s << "verify-rtl " << options.block << " flows " << options.flows << " seed " << options.seed
    << mutant_note(options) << '\n';
  if (!r.matched) {
    s << "MISMATCH at cycle " << r.mismatch_cycle << ": " << r.mismatch << '\n';
    if (!options.wave.empty()) s << "waveform up to the mismatch: " << options.wave << '\n';
    return s.str();
  }
  s << "  cycles                          " << r.cycles << '\n'
    << "  transactions checked            " << r.transactions << " (" << r.emitted << " CNPs emitted)\n"
    << "  transactions per second         " << std::fixed << std::setprecision(0)
    << (result.wall_seconds > 0 ? r.transactions / result.wall_seconds : 0.0) << '\n'
    << "coverage bins (hits)\n";
  size_t missed = 0;
  for (size_t b = 0; b < cnp_gen_bin_count; ++b) {
    s << "  " << std::left << std::setw(32) << to_string(static_cast<cnp_gen_bin>(b)) << r.coverage[b]
      << (r.coverage[b] == 0 ? "  NOT HIT" : "") << '\n';
    if (r.coverage[b] == 0) ++missed;
  }
  if (missed != 0) s << missed << " of " << cnp_gen_bin_count << " coverage bins not hit: run more cycles\n";
  if (!options.wave.empty()) s << "  waveform                        " << options.wave << '\n';
  s << "RTL matches the reference model on every cycle\n";
  return s.str();
}

namespace {

// Runs the block's bench on `make(wave)`; on a mismatch without --wave, again up to the mismatch, traced.
// `run(dut, cycles, mismatch_cycle)` keeps the first run's result (the one reported) and returns whether it
// matched.
template <class Run, class Make>
void run_user_bench(const verify_rtl_options& options, verify_user_rtl_result& result, Make make, Run run) {
  const auto start = std::chrono::steady_clock::now();
  uint64_t mismatch_cycle = 0;
  {
    auto dut = make(options.wave);  // the waveform closes with the block
    result.matched = run(*dut, options.cycles, mismatch_cycle);
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  result.run.wall_seconds = result.cnp_gen.wall_seconds = seconds;
  result.run.matched = result.matched;
  result.wave = options.wave;
  if (result.matched || !options.wave.empty()) return;
  // The bench is deterministic per seed: the same run up to the mismatch, traced this time.
  result.wave = result.build.top + "_mismatch_seed" + std::to_string(options.seed) + ".fst";
  auto dut = make(result.wave);
  uint64_t again = 0;
  run(*dut, mismatch_cycle + 1, again);
}

// The reaction point's bench builds its block from the first transaction (dcqcn_rp_dut_factory), so the
// traced second run is the same bench again with a waveform; it stops at the same mismatch.
void run_user_dcqcn_rp(const verify_rtl_options& options, const std::shared_ptr<const user_rtl_library>& library,
                       verify_user_rtl_result& result) {
  dcqcn_rp_differential_options o;
  o.cycles = options.cycles;
  o.seed = options.seed;
  o.preset = options.preset.empty() ? "mixed" : options.preset;
  o.wave = options.wave;
  const dcqcn_rp_dut_factory make = [&](const dcqcn_params& params, uint64_t now, const std::string& wave) {
    return make_dcqcn_rp_user(library, params, now, wave);
  };
  const auto start = std::chrono::steady_clock::now();
  result.run.dcqcn_rp = run_dcqcn_rp_differential(o, make);
  result.run.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  result.matched = result.run.matched = result.run.dcqcn_rp.matched;
  result.wave = options.wave;
  if (result.matched || !options.wave.empty()) return;
  result.wave = o.wave = result.build.top + "_mismatch_seed" + std::to_string(options.seed) + ".fst";
  run_dcqcn_rp_differential(o, make);
}

}  // namespace

verify_user_rtl_result verify_user_rtl(const verify_rtl_options& options) {
  rtl_contract(options.block);
  if (options.mutant != 0)
    throw core::config_error("verify-rtl --mutant is for the shipped RTL; it cannot be combined with --rtl");
  check_verify_rtl_preset(options);
  if (!options.wave.empty() && !std::ofstream(options.wave))
    throw core::config_error("verify-rtl --wave " + options.wave + ": cannot open for writing");
  user_rtl_request request{options.block, options.rtl, options.top, options.params, options.rtl_cache};
  const bool reorder = options.block == "reorder_tracker";
  add_default_size_params(options, request.params);
  verify_user_rtl_result result;
  result.build = build_user_rtl(request);
  const std::string size_parameter = user_rtl_size_parameter(options.block);
  if (!size_parameter.empty()) result.size = static_cast<uint32_t>(result.build.parameters.at(size_parameter));
  const auto library = user_rtl_library::open(result.build.shared_object, options.block);
  const uint64_t seed = options.seed;
  if (options.block == "dcqcn_rp") {
    run_user_dcqcn_rp(options, library, result);
  } else if (reorder) {
    run_user_bench(
        options, result,
        [&](const std::string& wave) { return std::make_unique<reorder_tracker_user>(library, result.size, wave); },
        [&](reorder_tracker_user& dut, uint64_t cycles, uint64_t& mismatch) {
          reorder_tracker_differential_result r = run_reorder_tracker_differential(dut, cycles, seed);
          if (result.run.reorder_tracker.cycles == 0) result.run.reorder_tracker = r;
          mismatch = r.mismatch_cycle;
          return r.matched;
        });
  } else {
    run_user_bench(
        options, result,
        [&](const std::string& wave) { return std::make_unique<cnp_gen_user>(library, result.size, wave); },
        [&](cnp_gen_user& dut, uint64_t cycles, uint64_t& mismatch) {
          cnp_gen_differential_result r = run_cnp_gen_differential(dut, cycles, seed);
          if (result.cnp_gen.bench.cycles == 0) result.cnp_gen.bench = r;
          mismatch = r.mismatch_cycle;
          return r.matched;
        });
  }
  return result;
}

std::string format_verify_user_rtl(const verify_rtl_options& options, const verify_user_rtl_result& result) {
  const user_rtl_build& b = result.build;
  const bool reorder = options.block == "reorder_tracker";
  std::ostringstream s;
  s << "user RTL " << options.rtl << ", module " << b.top << ", ";
  if (options.block == "dcqcn_rp") {
    s << "the widths of docs/rtl_contract.md\n";
  } else {
    s << (reorder ? "Window " : "Flows ") << result.size << '\n';
  }
  if (b.reused) {
    s << "  compiled block reused from the cache: " << b.entry_dir << '\n';
  } else {
    s << std::fixed << std::setprecision(1) << "  compiled in " << b.verilate_seconds + b.compile_seconds
      << " s (contract check and Verilator " << b.verilate_seconds << " s, C++ " << b.compile_seconds << " s"
      << (b.runtime_built ? ", including the Verilator runtime, compiled once per cache" : "") << "): " << b.entry_dir
      << '\n';
  }
  for (const std::string& note : b.notes) s << "  note: " << note << '\n';
  verify_rtl_options shown = options;
  shown.window = reorder ? result.size : options.window;
  shown.flows = reorder ? options.flows : result.size;
  shown.wave = result.wave;
  s << (options.block == "cnp_gen" ? format_verify_rtl_cnp_gen(shown, result.cnp_gen)
                                   : format_verify_rtl(shown, result.run));
  return s.str();
}

}  // namespace fabricsim::testbench
