// fabricsim: builds a fabric from a scenario file, runs its workload and reports what the models did.
#include <cstdlib>
#include <fstream>
#include <iostream>

#include <CLI/CLI.hpp>
#include <systemc>

#include "sc_models/core/params.h"
#include "testbench/report.h"
#include "testbench/scenario.h"
#include "testbench/simulation.h"
#include "testbench/verify_rtl.h"

namespace fabricsim::testbench {
extern const char* const default_scenario_yaml;  // testbench/scenarios/default.yaml, embedded at build time
}

namespace {

using namespace fabricsim;

struct run_args {
  std::string scenario;
  std::vector<std::string> sets;
  std::string seed;
  std::string json_out;
  bool quiet = false;
};

int run(const run_args& a) {
  std::vector<std::string> overrides = a.sets;
  if (!a.seed.empty()) overrides.push_back("seed=" + a.seed);
  testbench::scenario s = a.scenario.empty()
                              ? testbench::load_scenario_text(testbench::default_scenario_yaml,
                                                              "<default scenario>", overrides)
                              : testbench::load_scenario_file(a.scenario, overrides);
  testbench::run_options opts;
  opts.scenario_file = a.scenario.empty() ? "<default scenario>" : a.scenario;
  const nlohmann::json report = testbench::run_scenario(s, opts);
  if (!a.json_out.empty()) {
    std::ofstream f(a.json_out);
    if (!f) throw core::config_error("--json " + a.json_out + ": cannot open for writing");
    f << report.dump(2) << '\n';
    if (!f) throw core::config_error("--json " + a.json_out + ": write failed");
  }
  if (!a.quiet) std::cout << testbench::format_table(report);
  if (!report.at("data_checked").get<bool>()) {
    if (report.at("completed") != report.at("operations")) {
      std::cerr << "fabricsim: " << report.at("completed") << " of " << report.at("operations")
                << " operations completed\n";
      return 1;
    }
    return 0;
  }
  if (!report.at("verified").get<bool>()) {
    std::cerr << "fabricsim: data placement NOT verified: " << report.at("completed") << " of "
              << report.at("operations") << " operations completed, " << report.at("mismatched_bytes")
              << " bytes differ from their source";
    if (report.at("dropped_packets").get<uint64_t>() > 0)
      std::cerr << "; " << report.at("dropped_packets")
                << " packets were dropped (see the ports' \"dropped\" counters) and this version has no "
                   "retransmission";
    std::cerr << '\n';
    return 1;
  }
  return 0;
}

}  // namespace

// The kernel prints its banner before sc_main() runs; silence it first, then hand over as libsystemc would.
int main(int argc, char* argv[]) {
  setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 1);
  return sc_core::sc_elab_and_sim(argc, argv);
}

int sc_main(int argc, char* argv[]) {
  CLI::App app{
      "fabricsim: a cycle-approximate model of AI-cluster network devices (SystemC + Verilated RTL).\n"
      "With no command it runs the built-in default scenario: one switch, two SuperNICs, RDMA WRITEs\n"
      "placed byte for byte into host memory.\n\n"
      "Examples:\n"
      "  fabricsim\n"
      "  fabricsim run testbench/scenarios/leaf_spine_permutation.yaml --set topology.link_gbps=800 --json out.json\n"
      "  fabricsim keys > scenario-keys.md\n"
      "  fabricsim verify-rtl --block reorder_tracker --window 256 --seed 3\n",
      "fabricsim"};
  app.require_subcommand(0, 1);
  run_args args;

  CLI::App* run_cmd = app.add_subcommand("run", "Run one scenario file and print its result table.\n"
                                                "Example: fabricsim run testbench/scenarios/default.yaml "
                                                "--set nic.mtu_bytes=1024 --seed 7 --json report.json");
  run_cmd->add_option("scenario", args.scenario, "Scenario YAML file (keys: `fabricsim keys`)")->required();
  run_cmd->add_option("--set", args.sets,
                      "Override one scenario key, path as in the YAML: --set topology.link_gbps=800 (repeatable)")
      ->allow_extra_args(false);
  run_cmd->add_option("--seed", args.seed, "Seed of every random stream (overrides the file's `seed`)");
  run_cmd->add_option("--json", args.json_out, "Write the full JSON report here (fields: docs/report.md)");
  run_cmd->add_flag("--quiet", args.quiet, "Do not print the result table");

  CLI::App* keys_cmd = app.add_subcommand("keys", "Print every scenario key with its unit, default and range "
                                                  "(Markdown).\nExample: fabricsim keys");

  testbench::verify_rtl_options verify;
  CLI::App* verify_cmd = app.add_subcommand(
      "verify-rtl",
      "Drive a Verilated RTL block and its C++ reference model with the same seeded constrained-random\n"
      "stimulus and compare every output port on every cycle. Exit 0 if they agree, 1 on the first\n"
      "mismatch (printed with the cycle, inputs and both output sets).\n"
      "Example: fabricsim verify-rtl --block reorder_tracker --window 64 --cycles 20000 --seed 3 --wave rt.fst");
  verify_cmd->add_option("--block", verify.block, "RTL block to verify (known: " + testbench::verify_rtl_blocks() +
                                                      ")")
      ->capture_default_str();
  verify_cmd->add_option("--window", verify.window, "reorder_tracker Window in PSNs (one of the compiled windows)")
      ->capture_default_str();
  verify_cmd->add_option("--cycles", verify.cycles, "Clock cycles to run")->capture_default_str();
  verify_cmd->add_option("--seed", verify.seed, "Seed of the stimulus generator")->capture_default_str();
  verify_cmd->add_option("--wave", verify.wave, "Write the RTL's FST waveform here (up to a mismatch)");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  try {
    if (*keys_cmd) {
      std::cout << testbench::scenario_keys_markdown();
      return 0;
    }
    if (*verify_cmd) {
      const testbench::verify_rtl_result result = testbench::verify_rtl(verify);
      (result.matched ? std::cout : std::cerr) << testbench::format_verify_rtl(verify, result);
      return result.matched ? 0 : 1;
    }
    return run(args);
  } catch (const core::config_error& e) {
    std::cerr << "fabricsim: error: " << e.what() << '\n';
    return 2;
  } catch (const std::exception& e) {
    // Anything else is a fault in the model, not in the input: say so rather than let the kernel abort.
    std::cerr << "fabricsim: internal error (please report it with the scenario): " << e.what() << '\n';
    return 3;
  }
}
