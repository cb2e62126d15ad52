// The fabricsim command line: parses argv and runs the command (testbench/cli.h). main() is in main.cpp, so the
// tests and the CLI fuzz target link the real parser from the library without compiling it again.
#include "testbench/cli.h"

#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <systemc>

#include "sc_models/core/params.h"
#include "sc_models/mpi/mpi_world.h"
#include "sc_models/nic/block_lockstep.h"
#include "testbench/cli_errors.h"
#include "testbench/compare.h"
#include "testbench/explain.h"
#include "testbench/pcie_bench.h"
#include "testbench/plot.h"
#include "testbench/progress.h"
#include "testbench/replay.h"
#include "testbench/report.h"
#include "testbench/report_json.h"
#include "testbench/rtl_coverage.h"
#include "testbench/rtl_mutate.h"
#include "testbench/rtl_replay.h"
#include "testbench/run_summary.h"
#include "testbench/scale_out.h"
#include "testbench/scenario.h"
#include "testbench/simulation.h"
#include "testbench/sweep.h"
#include "testbench/verdict.h"
#include "testbench/verify_rtl.h"

namespace fabricsim::testbench {
extern const char* const default_scenario_yaml;  // testbench/scenarios/spectrum_x_permutation.yaml, embedded
}

namespace {

using namespace fabricsim;

struct run_args {
  std::string scenario;
  std::vector<std::string> sets;
  std::string seed;
  std::string json_out;
  std::string compare;                // --compare KEY=V1,V2,...
  std::string timeseries;             // --timeseries FILE: run.timeseries_csv
  std::vector<std::string> taps;      // --tap NODE:PORT=FILE | LINK=FILE (testbench/taps.h)
  std::string record_rtl;             // --record-rtl DIR: run.record_rtl_dir
  std::string wave;                   // --wave DIR: run.rtl_wave_dir
  std::string rtl_mutant;             // --rtl-mutant BLOCK:N: nic.rtl_mutant
  std::vector<std::string> user_rtl;  // --user-rtl BLOCK=FILE.sv: a user's block in every NIC (testbench/user_rtl.h)
  std::vector<std::string> user_rtl_top;  // --user-rtl-top [BLOCK=]NAME
  unsigned ranks = 0;       // --ranks N: run across N processes (re-launched under mpirun, docs/scale_out.md)
  bool no_compare = false;  // --no-compare: the file's base values, its `compare:` section ignored
  bool quiet = false;
};

// `fabricsim run ... --ranks N`: the same command line again under `mpirun -n N`, without --ranks (each
// rank then finds itself launched by MPI). Returns only when mpirun cannot be started.
int relaunch_under_mpirun(unsigned ranks, int argc, char* argv[]) {
  if (!mpi::available())
    throw core::config_error("--ranks " + std::to_string(ranks) +
                             ": this fabricsim was built without MPI "
                             "(install libopenmpi-dev and configure with -DFABRICSIM_MPI=ON; docs/scale_out.md)");
  char exe[4096];
  const ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  std::vector<std::string> args = {"mpirun", "-n", std::to_string(ranks), "--oversubscribe"};
  if (geteuid() == 0) args.push_back("--allow-run-as-root");  // Open MPI refuses root without it
  args.push_back(n > 0 ? std::string(exe, size_t(n)) : std::string(argv[0]));
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--ranks") {
      ++i;
      continue;
    }
    if (a.rfind("--ranks=", 0) == 0) continue;
    args.push_back(a);
  }
  std::vector<char*> cargs;
  cargs.reserve(args.size() + 1);
  for (std::string& a : args) cargs.push_back(a.data());
  cargs.push_back(nullptr);
  std::cout.flush();
  execvp("mpirun", cargs.data());
  throw core::config_error("--ranks " + std::to_string(ranks) + ": cannot start mpirun (" + std::strerror(errno) +
                           "): install openmpi-bin (scripts/setup), or start fabricsim under your MPI launcher: "
                           "mpirun -n " +
                           std::to_string(ranks) + " fabricsim run ...");
}

// The exit status of one run's report (testbench/verdict.h, docs/report.md "Exit status"), with why on stderr
// after `prefix` when it is not 0.
int run_status(const nlohmann::json& report, const std::string& prefix) {
  const int status = testbench::report_status(report);
  if (status != testbench::exit_verified) std::cerr << prefix << testbench::status_reason(report) << '\n';
  return status;
}

// Ends the process once a run's outputs are all written, without freeing its report on the way out: at 4,096
// NICs the JSON tree is some 2.5 million nodes, whose release one by one cost ~0.35 s of CPU after the last
// byte was out (docs/scale_out.md, "The report on rank 0"). std::exit still runs the atexit handlers
// (MPI_Finalize under mpirun) and the static destructors, and flushes and closes the C and C++ streams; the
// model is already destroyed (its RTL transaction logs and waveforms closed) and the --json file closed
// (write_json). Only the executable gets here: the in-process callers of fabricsim_cli stop after parsing.
[[noreturn]] void exit_after_report(int status) {
  std::cout.flush();
  std::cerr.flush();
  std::exit(status);
}

void write_json(const std::string& path, const nlohmann::json& j) {
  std::ofstream f(path);
  if (!f) throw core::config_error("--json " + path + ": cannot open for writing");
  testbench::write_pretty_json(f, j);  // dump(2)'s bytes, streamed: no copy of a 40 MB report in memory
  f << '\n';
  if (!f) throw core::config_error("--json " + path + ": write failed");
}

// --user-rtl BLOCK=FILE is nic.reorder_rtl, nic.cnp_rtl or nic.dcqcn_rtl (the file made absolute: a --set path is the
// scenario's); --user-rtl-top BLOCK=NAME their top (plain NAME: the one --user-rtl's block).
void user_rtl_overrides(const run_args& a, std::vector<std::string>& overrides) {
  const std::map<std::string, std::string> keys{
      {"reorder_tracker", "reorder_rtl"}, {"cnp_gen", "cnp_rtl"}, {"dcqcn_rp", "dcqcn_rtl"}};
  std::map<std::string, std::string> files;
  for (const std::string& u : a.user_rtl) {
    const size_t eq = u.find('=');
    if (eq == std::string::npos || eq + 1 == u.size())
      throw core::config_error("--user-rtl " + u + ": expected BLOCK=FILE.sv (e.g. reorder_tracker=my_tracker.sv)");
    const std::string block = u.substr(0, eq);
    if (!keys.count(block))
      throw core::config_error("--user-rtl " + u + ": block " + block +
                               " cannot run in a fabric; blocks that can: reorder_tracker, cnp_gen, dcqcn_rp");
    if (files.count(block)) throw core::config_error("--user-rtl " + u + ": block " + block + " given twice");
    files[block] = u.substr(eq + 1);
    overrides.push_back("nic." + keys.at(block) + "=" + std::filesystem::absolute(files[block]).string());
  }
  for (const std::string& t : a.user_rtl_top) {
    const size_t eq = t.find('=');
    std::string block = eq == std::string::npos ? "" : t.substr(0, eq);
    if (block.empty() && files.size() != 1)
      throw core::config_error("--user-rtl-top " + t + ": with " + std::to_string(files.size()) +
                               " --user-rtl blocks, name the block: --user-rtl-top BLOCK=NAME");
    if (block.empty()) block = files.begin()->first;
    if (!files.count(block))
      throw core::config_error("--user-rtl-top " + t + ": no --user-rtl " + block + "=FILE.sv to go with it");
    overrides.push_back("nic." + keys.at(block) + "_top=" + t.substr(eq == std::string::npos ? 0 : eq + 1));
  }
}

int run(const run_args& a) {
  std::vector<std::string> overrides = a.sets;
  if (!a.seed.empty()) overrides.push_back("seed=" + a.seed);
  if (!a.timeseries.empty()) overrides.push_back("run.timeseries_csv=" + a.timeseries);
  if (!a.record_rtl.empty()) overrides.push_back("run.record_rtl_dir=" + a.record_rtl);
  if (!a.wave.empty()) overrides.push_back("run.rtl_wave_dir=" + a.wave);
  // Checked here, so that a bad value is named as the flag; it goes last, over the file's nic.rtl_mutant and
  // any --set of it (a nic_overrides entry that sets its own keeps it).
  if (!a.rtl_mutant.empty()) {
    nic::parse_rtl_mutant(a.rtl_mutant, "--rtl-mutant");
    overrides.push_back("nic.rtl_mutant=" + a.rtl_mutant);
  }
  user_rtl_overrides(a, overrides);
  auto load = [&](const std::vector<std::string>& extra) {
    std::vector<std::string> all = overrides;
    all.insert(all.end(), extra.begin(), extra.end());
    return a.scenario.empty()
               ? testbench::load_scenario_text(testbench::default_scenario_yaml, "<default scenario>", all)
               : testbench::load_scenario_by_name(a.scenario, all);  // a file, or a shipped scenario's name
  };
  const testbench::scenario s = load({});
  testbench::run_options opts;
  opts.scenario_file = a.scenario.empty() ? "<default scenario>" : a.scenario;
  opts.taps = a.taps;
  // A progress line on a terminal's stderr for runs longer than about two seconds (never in pipes or logs).
  if (testbench::progress_wanted(a.quiet, isatty(STDERR_FILENO) != 0)) opts.progress = &std::cerr;

  const testbench::compare_params compare = testbench::effective_compare(s.compare, a.compare, a.sets, a.no_compare);
  // Under mpirun every rank runs its part and ends with the same merged report; rank 0 writes it.
  mpi::world& world = mpi::world::get();
  if (compare.empty()) {
    if (!a.quiet && world.rank() == 0) std::cout << testbench::collective_fabric_header({s}, compare) << std::flush;
    const nlohmann::json report = testbench::run_scenario(s, opts);
    if (world.rank() != 0) {  // the same status as rank 0, without repeating its message
      std::streambuf* err = std::cerr.rdbuf(nullptr);
      const int status = run_status(report, "");
      std::cerr.rdbuf(err);
      return status;
    }
    if (!a.json_out.empty()) write_json(a.json_out, report);
    if (!a.quiet)
      std::cout << testbench::format_table(report) << testbench::tap_lines(report)
                << testbench::scale_out_lines(report);
    exit_after_report(run_status(report, "fabricsim: "));  // `report` is not freed
  }
  const std::string origin = a.compare.empty() ? s.source + ": compare" : "--compare";
  if (world.distributed()) throw core::config_error(testbench::mpi_compare_advice(compare, origin));

  // A comparison: every value loads (and so is checked) before anything runs; the value goes last, after
  // the file and every --set.
  std::vector<testbench::scenario> runs;
  for (const std::string& value : compare.values) {
    const std::string assignment = compare.key + "=" + value;
    try {
      runs.push_back(load({assignment}));
      // Each value writes its own time series: FILE.csv -> FILE.<value>.csv.
      std::string& csv = runs.back().run.timeseries_csv;
      if (!csv.empty()) {
        const size_t dot = csv.rfind('.');
        const size_t slash = csv.rfind('/');
        const bool has_ext = dot != std::string::npos && (slash == std::string::npos || dot > slash);
        csv = has_ext ? csv.substr(0, dot) + "." + value + csv.substr(dot) : csv + "." + value;
      }
      // ... and records its RTL transactions (and lockstep waveforms) in its own directory: DIR/<value>/.
      std::string& record_dir = runs.back().run.record_rtl_dir;
      if (!record_dir.empty()) record_dir += "/" + value;
      std::string& wave_dir = runs.back().run.rtl_wave_dir;
      if (!wave_dir.empty()) wave_dir += "/" + value;
    } catch (const core::config_error& e) {
      // The loader quotes the assignment as a --set; say where it came from instead.
      std::string what = e.what();
      const std::string quoted = "--set " + assignment + ": ";
      if (what.compare(0, quoted.size(), quoted) == 0) what.erase(0, quoted.size());
      throw core::config_error(origin + " " + assignment + ": " + what);
    }
  }
  if (!a.quiet) std::cout << testbench::collective_fabric_header(runs, compare) << std::flush;
  const nlohmann::json result = testbench::run_comparison(compare, runs, opts, origin);
  if (!a.json_out.empty()) write_json(a.json_out, result);
  if (!a.quiet) std::cout << testbench::format_compare_table(result) << testbench::comparison_tap_lines(result);
  int status = 0;
  for (const auto& r : result.at("runs"))
    status = testbench::worse_status(status, run_status(r.at("report"), "fabricsim: " + compare.key + "=" +
                                                                            r.at("value").get<std::string>() + ": "));
  return status;
}

}  // namespace

// The exit statuses (testbench/verdict.h), on the help page.
constexpr const char* k_exit_statuses =
    "Exit status of run, replay and sweep (docs/report.md): 0 every checked byte equals its source and some\n"
    "were checked (timing only, nic.place_data false: every operation done, or a run of fixed length); 1 a\n"
    "byte differed, an operation failed, or a run to completion left one unfinished; 2 the scenario, a --set\n"
    "or an option was refused; 3 an internal error of the model; 4 the run was to check bytes and compared\n"
    "none (no payload landed within run.duration_us); 5 a lockstep block's RTL and reference model\n"
    "disagreed and the run stopped there (docs/verification.md).\n";

namespace {

// The help page's description: what fabricsim does, examples, the exit statuses.
std::string app_description() {
  return "fabricsim: a cycle-approximate model of AI-cluster network devices (SystemC + Verilated RTL).\n"
         "With no command it runs the built-in default scenario, the Spectrum-X headline: 128 SuperNICs on a\n"
         "400G leaf-spine streaming RDMA WRITEs in a permutation, once with ECMP and once with adaptive routing,\n"
         "and prints the effective throughput of each (testbench/scenarios/spectrum_x_permutation.yaml).\n\n"
         "Examples:\n"
         "  fabricsim\n"
         "  fabricsim run testbench/scenarios/leaf_spine_permutation.yaml --set topology.link_gbps=800 --set "
         "switch.port_config=64x800 --json out.json\n"
         "  fabricsim run testbench/scenarios/leaf_spine_small.yaml --compare switch.routing=ecmp,adaptive\n"
         "  fabricsim replay traces/samples/rdma_write_sprayed.pcap --timing asap --json replay.json\n"
         "  fabricsim keys > scenario-keys.md\n"
         "  fabricsim verify-rtl --block reorder_tracker --window 256 --seed 3\n"
         "  fabricsim verify-rtl --block cnp_gen --flows 1024 --cycles 200000\n"
         "  fabricsim verify-rtl --block dcqcn_rp --preset nvidia --cycles 200000\n"
         "  fabricsim verify-rtl --block reorder_tracker --window 64 --mutant 39   (a planted bug: exits 1)\n"
         "  fabricsim verify-rtl --block reorder_tracker --rtl tests/rtl/user_blocks/psn_shift_tracker.sv --top "
         "psn_shift_tracker --param Window=64   (your own block, compiled at run time)\n"
         "  fabricsim run tests/cli/lockstep_reorder.yaml --rtl-mutant reorder_tracker:16 --wave waves   (the bug in a "
         "fabric, caught in lockstep: exits 5)\n"
         "  fabricsim run tests/cli/lockstep_reorder.yaml --user-rtl "
         "reorder_tracker=tests/rtl/user_blocks/psn_shift_tracker.sv --user-rtl-top psn_shift_tracker\n"
         "  fabricsim run testbench/scenarios/leaf_spine_small.yaml --record-rtl rec && fabricsim verify-rtl --block "
         "reorder_tracker --replay rec/reorder_tracker.txt\n"
         "  fabricsim pcie-bench --config bounce --json pcie.json\n"
         "  fabricsim list-scenarios\n"
         "  fabricsim explain testbench/scenarios/incast_dcqcn.yaml --set nic.cc=dcqcn\n"
         "  fabricsim run testbench/scenarios/default.yaml --json r.json && fabricsim plot r.json --out plots\n\n" +
         std::string(k_exit_statuses);
}

// `fabricsim run`: its options, into `args`.
void add_run_command(CLI::App& app, run_args& args) {
  CLI::App* run_cmd = app.add_subcommand("run",
                                         "Run one scenario file and print its result table.\n"
                                         "Exits 0 verified, 1 not verified or failed, 2 bad input, 3 "
                                         "internal error, 4 nothing checked (fabricsim --help).\n"
                                         "Example: fabricsim run testbench/scenarios/default.yaml "
                                         "--set nic.mtu_bytes=1024 --seed 7 --json report.json");
  run_cmd->add_option("scenario", args.scenario,
                      "Scenario YAML file (keys: `fabricsim keys`) or a shipped scenario's name (fabricsim "
                      "list-scenarios); the built-in default scenario when left out");
  run_cmd
      ->add_option("--set", args.sets,
                   "Override one scenario key, path as in the YAML: --set topology.link_gbps=800 (repeatable)")
      ->allow_extra_args(false);
  run_cmd->add_option("--seed", args.seed, "Seed of every random stream (overrides the file's `seed`)");
  run_cmd->add_option("--json", args.json_out, "Write the full JSON report here (fields: docs/report.md)");
  run_cmd->add_option("--compare", args.compare,
                      "Run once per value of one key and compare, e.g. --compare nic.path_entropy=fixed,per_packet "
                      "(replaces the file's `compare` section; each value runs in its own process)");
  run_cmd->add_flag("--no-compare", args.no_compare,
                    "Ignore the file's `compare` section: one run with the file's own values (a --set of the "
                    "compare key also runs that one value alone)");
  run_cmd->add_option("--timeseries", args.timeseries,
                      "Write per-QP samples (every run.sample_us) as CSV here (sets run.timeseries_csv; a "
                      "comparison writes FILE.<value>.csv per value; columns: docs/report.md)");
  run_cmd
      ->add_option("--tap", args.taps,
                   "Capture every frame leaving NODE through PORT (a switch's port number; 0 for a host) in a "
                   "nanosecond pcap: --tap h0:0=h0.pcap --tap sw0:1=p1.pcap, or name the link: "
                   "--tap leaf0_to_spine1=up.pcap (repeatable; a comparison writes FILE.<value>.pcap per value; "
                   "docs/report.md, `taps`)")
      ->allow_extra_args(false);
  run_cmd->add_option("--record-rtl", args.record_rtl,
                      "Record every transaction of every RTL block instance (RTL or reference model) into this "
                      "directory, one file per block type, for verify-rtl --replay (sets run.record_rtl_dir; a "
                      "comparison records into DIR/<value>/)");
  run_cmd->add_option("--wave", args.wave,
                      "With a block in lockstep (nic.reorder, nic.cnp_model or nic.dcqcn_model: lockstep), a "
                      "divergence writes an FST waveform of that block's last transactions into this directory, "
                      "named <nic>.<qp>.<block>.fst (sets run.rtl_wave_dir; docs/verification.md)");
  run_cmd
      ->add_option("--user-rtl", args.user_rtl,
                   "BLOCK=FILE.sv: every NIC runs your own BLOCK (reorder_tracker, cnp_gen or dcqcn_rp) where its "
                   "kind (nic.reorder, nic.cnp_model, nic.dcqcn_model) is rtl, and beside the reference model where it "
                   "is lockstep (the "
                   "first divergence stops the run); the file must meet docs/rtl_contract.md and is compiled at run "
                   "time (cached, as verify-rtl --rtl). Repeatable, once per block; sets nic.reorder_rtl, nic.cnp_rtl, "
                   "nic.dcqcn_rtl")
      ->allow_extra_args(false);
  run_cmd
      ->add_option("--user-rtl-top", args.user_rtl_top,
                   "--user-rtl: the top module, [BLOCK=]NAME (default: the block's name; BLOCK= needed with several "
                   "--user-rtl)")
      ->allow_extra_args(false);
  run_cmd->add_option(
      "--rtl-mutant", args.rtl_mutant,
      "BLOCK:N: the RTL of BLOCK (reorder_tracker, cnp_gen or dcqcn_rp) becomes its planted-bug "
      "mutant N (generated mutant N, rtl/mutants/BLOCK/N.patch, already built) in every NIC running it as rtl or "
      "lockstep; with lockstep the reference stays clean and the run stops at the first "
      "difference (sets nic.rtl_mutant; reorder_tracker mutants need nic.reorder_window 64)");
  run_cmd
      ->add_option("--ranks", args.ranks,
                   "Run across N processes: starts `mpirun -n N` on this same command line (docs/scale_out.md); "
                   "under mpirun the ranks are found by themselves")
      ->check(CLI::Range(1u, 4096u));
  run_cmd->add_flag("--quiet", args.quiet,
                    "Do not print the result table, nor the progress line a run longer than about two seconds "
                    "shows on a terminal");
}

// `fabricsim replay`: its options.
struct replay_cli {
  testbench::replay_options opts;
  std::string timing = "captured", json;
  bool quiet = false;
};

CLI::App* add_replay_command(CLI::App& app, replay_cli& c) {
  CLI::App* replay_cmd = app.add_subcommand(
      "replay",
      "Re-inject the RDMA messages of a RoCEv2 capture (pcap or pcapng) into a modelled fabric and report what\n"
      "the capture holds (`trace`) and what the fabric did with it (`replay`, flows, switch counters).\n"
      "Endpoint i of the capture (in address order) becomes host hi; each WRITE, SEND and READ is posted at\n"
      "the time of its first captured packet, immediates kept (docs/replay.md).\n"
      "Example: fabricsim replay traces/samples/rdma_write_inorder.pcap --timing scale=10 --json replay.json");
  replay_cmd->add_option("trace", c.opts.trace, "Capture file (pcap or pcapng, Ethernet)")->required();
  replay_cmd->add_option("--scenario", c.opts.scenario_file,
                         "Fabric to replay on (its workload is ignored); default: one Spectrum switch with a port "
                         "per endpoint, at the capture's path MTU");
  replay_cmd
      ->add_option("--timing", c.timing,
                   "captured (the captured gaps, from the first frame), asap (every message at 0, in "
                   "capture order) or scale=X (the gaps times X)")
      ->capture_default_str();
  replay_cmd->add_option("--set", c.opts.sets, "Override one key of the scenario or default fabric (repeatable)")
      ->allow_extra_args(false);
  replay_cmd->add_option("--seed", c.opts.seed, "Seed of every random stream");
  replay_cmd->add_option("--tap", c.opts.taps, "Capture the replay as for `run --tap`")->allow_extra_args(false);
  replay_cmd->add_option("--json", c.json, "Write the full JSON report here (docs/report.md, `trace`, `replay`)");
  replay_cmd->add_flag("--quiet", c.quiet, "Do not print the result table");
  return replay_cmd;
}

// `fabricsim verify-rtl`: its options.
struct verify_cli {
  testbench::verify_rtl_options verify;
  std::string replay, coverage_json, coverage_html;
  bool mutate = false, no_equiv = false;  // --mutate, --no-equiv
  uint32_t mutant_patch = 0;              // --mutant-patch ID
  testbench::rtl_mutate_options mutate_opts;
  std::vector<const CLI::Option*> mutate_only;  // the options that go with --mutate alone
};

CLI::App* add_verify_command(CLI::App& app, verify_cli& c) {
  CLI::App* verify_cmd = app.add_subcommand(
      "verify-rtl",
      "Drive a Verilated RTL block and its C++ reference model with the same seeded constrained-random\n"
      "stimulus and compare every output port on every cycle (reorder_tracker, cnp_gen) or after every\n"
      "transaction (dcqcn_rp), with named coverage bins. Exit 0 if they agree, 1 on the first mismatch (printed\n"
      "with the cycle, inputs and both output sets). --mutant N runs a deliberately buggy variant instead\n"
      "(docs/verification.md), to show the bench catches it.\n"
      "Example: fabricsim verify-rtl --block reorder_tracker --window 64 --cycles 20000 --seed 3 --wave rt.fst");
  verify_cmd
      ->add_option("--block", c.verify.block, "RTL block to verify (known: " + testbench::verify_rtl_blocks() + ")")
      ->capture_default_str();
  verify_cmd->add_option("--window", c.verify.window, "reorder_tracker Window in PSNs (one of the compiled windows)")
      ->capture_default_str();
  verify_cmd->add_option("--flows", c.verify.flows, "cnp_gen Flows: flow contexts (one of the compiled counts)")
      ->capture_default_str();
  verify_cmd->add_option("--cycles", c.verify.cycles, "RTL clock cycles to run")->capture_default_str();
  verify_cmd->add_option("--seed", c.verify.seed, "Seed of the stimulus generator")->capture_default_str();
  verify_cmd->add_option("--wave", c.verify.wave, "Write the RTL's FST waveform here (up to a mismatch)");
  verify_cmd->add_option("--mutant", c.verify.mutant,
                         "Run mutant N of the block (a planted bug: generated mutant N, rtl/mutants/<block>/<N>.patch; "
                         "built for --window 64 "
                         "and --flows 64 only) to see the bench catch it: exits 1 with the mismatch");
  verify_cmd->add_option("--rtl", c.verify.rtl,
                         "Verify your own block instead: its SystemVerilog file, checked against the block's port "
                         "contract (docs/rtl_contract.md), Verilated and compiled at run time (cached)");
  verify_cmd->add_option("--top", c.verify.top, "--rtl: the top module (default: the block's name)");
  verify_cmd
      ->add_option("--param", c.verify.params,
                   "--rtl: a parameter of the top module, NAME=VALUE (repeatable; Window defaults to --window)")
      ->allow_extra_args(false);
  verify_cmd->add_option("--rtl-cache", c.verify.rtl_cache,
                         "--rtl: compile cache folder (default: $FABRICSIM_RTL_CACHE, else "
                         "$XDG_CACHE_HOME/fabricsim/rtl, else ~/.cache/fabricsim/rtl)");
  verify_cmd->add_option("--replay", c.replay,
                         "Replay a recording of --block (DIR/<block>.txt from fabricsim run --record-rtl DIR) through "
                         "the RTL and the reference model, comparing every output after every transaction");
  verify_cmd->add_option(
      "--preset", c.verify.preset,
      "dcqcn_rp parameter set: paper, nvidia or fabric_400g (default: paper, nvidia and random sets)");
  verify_cmd->add_flag("--mutate", c.mutate,
                       "Mutation testing: generate mutants of the block's RTL (the shipped one, or --rtl FILE), "
                       "compile them once as a mutant schema, run the bench on each and print the mutation score "
                       "with every survivor as a diff; survivors yosys proves equivalent are reported as such. "
                       "Exits 1 when a non-equivalent mutant survives");
  verify_cmd->add_option("--mutant-patch", c.mutant_patch,
                         "Print generated mutant ID of the block (the shipped RTL, or --rtl FILE; the ids of --mutate) "
                         "as a patch file, as rtl/mutants/<block>/<ID>.patch holds it for --mutant and --rtl-mutant");
  c.mutate_only.push_back(verify_cmd->add_option(
      "--mutate-sample", c.mutate_opts.sample, "--mutate: run a sample of N mutants drawn with --seed (default: all)"));
  c.mutate_only.push_back(verify_cmd
                              ->add_option("--mutate-ids", c.mutate_opts.ids,
                                           "--mutate: run only these mutants, comma-separated ids (e.g. an earlier "
                                           "run's survivors)")
                              ->delimiter(','));
  c.mutate_only.push_back(verify_cmd->add_option(
      "--mutate-timeout", c.mutate_opts.timeout_seconds,
      "--mutate: seconds per mutant before it counts as killed by the timeout (default: 10 + 20 x the unmutated "
      "bench's time)"));
  c.mutate_only.push_back(
      verify_cmd->add_option("--mutate-json", c.mutate_opts.json, "--mutate: write the result as JSON here"));
  c.mutate_only.push_back(
      verify_cmd->add_flag("--no-equiv", c.no_equiv, "--mutate: do not check survivors for equivalence with yosys"));
  verify_cmd->add_option("--coverage-json", c.coverage_json,
                         "Write the run's coverage bins (hits, bins hit, closure, the bins not hit) as JSON here");
  verify_cmd->add_option(
      "--coverage-html", c.coverage_html,
      "Write the run's coverage bins as a one-page HTML report here (a bar per bin, NOT HIT marked)");
  return verify_cmd;
}

// `fabricsim pcie-bench`: its options.
struct pcie_cli {
  testbench::pcie_bench_params params;
  std::string json;
};

CLI::App* add_pcie_command(CLI::App& app, pcie_cli& c) {
  CLI::App* pcie_cmd = app.add_subcommand(
      "pcie-bench",
      "800G RDMA WRITE streams placed into GPU memory through the ConnectX-8 PCIe switch, GPUDirect RDMA against\n"
      "a bounce buffer in host memory: sustained rate per message size (64 B .. 4 MiB) and small-message\n"
      "latency (docs/pcie.md).\n"
      "Example: fabricsim pcie-bench --config gpudirect --mps 256 --json pcie.json");
  pcie_cmd->add_option("--config", c.params.config, "gpudirect, bounce or both")->capture_default_str();
  pcie_cmd
      ->add_option("--direction", c.params.direction,
                   "receive (WRITEs placed into GPU memory) or send (the NIC reads GPU memory)")
      ->capture_default_str();
  pcie_cmd->add_option("--mps", c.params.pcie_switch.tlp.max_payload_bytes, "PCIe max payload size, bytes")
      ->capture_default_str();
  pcie_cmd
      ->add_option("--p2p", c.params.pcie_switch.peer_to_peer,
                   "direct, or via_root_complex (ACS redirect of GPU<->NIC traffic)")
      ->capture_default_str();
  pcie_cmd
      ->add_option("--host-memory-gbps", c.params.root_complex.memory.bandwidth_gbps,
                   "host memory bandwidth left to PCIe traffic, Gb/s")
      ->capture_default_str();
  pcie_cmd->add_option("--min-size", c.params.min_size_bytes, "smallest message size, bytes")->capture_default_str();
  pcie_cmd->add_option("--max-size", c.params.max_size_bytes, "largest message size, bytes")->capture_default_str();
  pcie_cmd->add_option("--point-bytes", c.params.point_bytes, "bytes streamed per size (16 to 4096 messages)")
      ->capture_default_str();
  pcie_cmd->add_option("--json", c.json, "Write the results here");
  return pcie_cmd;
}

// `fabricsim plot`: its options.
CLI::App* add_plot_command(CLI::App& app, testbench::plot_options& o) {
  CLI::App* plot_cmd = app.add_subcommand(
      "plot",
      "Draw figures (PNG at 150 dpi, SVG or PDF) of a run from its JSON report (and --timeseries CSVs): per-flow\n"
      "rate and queue depth over time with the RED lines, PFC pauses, out-of-order distances, busbw against message\n"
      "size, link utilization; or of a sweep from its sweep.csv, as lines and a heat map (scripts/plot.py,\n"
      "python3-matplotlib).\n"
      "Example: fabricsim run testbench/scenarios/incast_dcqcn.yaml --json r.json --timeseries ts.csv && "
      "fabricsim plot r.json --timeseries ts.csv --out plots");
  plot_cmd
      ->add_option("report", o.report,
                   "JSON report of fabricsim run --json (or a --compare report), or a sweep's DIR/sweep.csv")
      ->required();
  plot_cmd->add_option("--out", o.out_dir, "Directory for the PNG files")->capture_default_str();
  plot_cmd
      ->add_option("--timeseries", o.timeseries,
                   "Time-series CSV of fabricsim run --timeseries (repeatable; a comparison's FILE.<value>.csv)")
      ->allow_extra_args(false);
  plot_cmd->add_option("--title", o.title, "Start of every figure's title (default: the scenario's name)");
  plot_cmd->add_option("--format", o.format, "png (150 dpi), svg or pdf")
      ->check(CLI::IsMember({"png", "svg", "pdf"}))
      ->capture_default_str();
  plot_cmd->add_option("--flows", o.flows, "flow_rate: draw only the first N flows (default: all)");
  plot_cmd->add_option("--metric", o.metric, "A sweep CSV: the column to draw (default: its headline)");
  plot_cmd->add_option("--red", o.red,
                       "KMIN,KMAX bytes of the RED lines on queue_depth (default: the report's scenario file's "
                       "switch.ecn_kmin_bytes, ecn_kmax_bytes)");
  return plot_cmd;
}

// `fabricsim explain` and `fabricsim export-topology`: a scenario, its --set overrides, and for export the
// file to write.
struct scenario_cli {
  std::string file, out;
  std::vector<std::string> sets;
};

// The scenario argument and its --set overrides, as explain and export-topology take them.
void add_scenario_args(CLI::App& cmd, scenario_cli& c) {
  cmd.add_option("scenario", c.file, "Scenario YAML file, or the name of a shipped one (fabricsim list-scenarios)")
      ->required();
  cmd.add_option("--set", c.sets, "Override one scenario key, as for run (repeatable)")->allow_extra_args(false);
}

CLI::App* add_explain_command(CLI::App& app, scenario_cli& c) {
  CLI::App* explain_cmd = app.add_subcommand(
      "explain",
      "Print every key of a scenario as it resolves, with its unit and where its value came from: the file and\n"
      "line, a --set, or the default.\n"
      "Example: fabricsim explain testbench/scenarios/incast_dcqcn.yaml --set nic.cc=dcqcn");
  add_scenario_args(*explain_cmd, c);
  return explain_cmd;
}

CLI::App* add_export_command(CLI::App& app, scenario_cli& c) {
  CLI::App* export_cmd = app.add_subcommand(
      "export-topology",
      "Write the fabric a scenario builds (any topology.kind) as GraphML, in the schema topology.kind graph\n"
      "reads (docs/topology.md): edit the file (a missing cable, an odd spine) and run it with\n"
      "--set topology.kind=graph --set topology.file=FILE.\n"
      "Example: fabricsim export-topology leaf_spine_small --out leaf_spine_small.graphml");
  add_scenario_args(*export_cmd, c);
  export_cmd->add_option("--out", c.out, "GraphML file to write (- for stdout)")->required();
  return export_cmd;
}

// `fabricsim replay`: the run, its warnings, report and tables; the exit status.
int run_replay_command(replay_cli& replay_c) {
  replay_c.opts.timing = testbench::parse_replay_timing(replay_c.timing);
  // Under mpirun every rank reads the capture and plans the same messages, simulates its part of the fabric
  // and holds the merged report (docs/scale_out.md); rank 0 alone warns, prints and writes it.
  const testbench::replay_result result = testbench::run_replay(replay_c.opts);
  if (mpi::world::get().rank() != 0) {
    std::streambuf* err = std::cerr.rdbuf(nullptr);
    const int status = result.simulated ? run_status(result.report, "") : 0;
    std::cerr.rdbuf(err);
    return status;
  }
  for (const std::string& w : result.warnings) std::cerr << "fabricsim: warning: " << w << '\n';
  if (!replay_c.json.empty()) write_json(replay_c.json, result.report);
  if (!replay_c.quiet) {
    if (result.simulated) std::cout << testbench::format_table(result.report) << '\n';
    std::cout << testbench::format_replay_table(result.report);
  }
  return result.simulated ? run_status(result.report, "fabricsim: ") : 0;
}

// `fabricsim verify-rtl`: a recording replayed, a user's block, or a shipped block's bench; 0 if they agree.
int run_verify_command(verify_cli& verify_c) {
  testbench::verify_rtl_options& verify = verify_c.verify;
  const std::string &replay = verify_c.replay, &coverage_json = verify_c.coverage_json,
                    &coverage_html = verify_c.coverage_html;
  size_t mutate_only = 0;
  for (const CLI::Option* o : verify_c.mutate_only) mutate_only += o->count();
  if (verify_c.mutant_patch != 0) {
    std::cout << testbench::rtl_mutant_patch(verify, verify_c.mutant_patch);
    return 0;
  }
  if (verify_c.mutate || mutate_only > 0) {
    if (!verify_c.mutate)
      throw core::config_error(
          "verify-rtl --mutate-sample, --mutate-ids, --mutate-timeout, --mutate-json and --no-equiv go "
          "with --mutate");
    if (!replay.empty() || !coverage_json.empty() || !coverage_html.empty())
      throw core::config_error(
          "verify-rtl --mutate runs the bench once per mutant: it cannot be combined with "
          "--replay, --coverage-json or --coverage-html");
    verify_c.mutate_opts.equivalence = !verify_c.no_equiv;
    const testbench::rtl_mutate_result result = testbench::run_rtl_mutation(verify, verify_c.mutate_opts);
    std::cout << testbench::format_rtl_mutation(verify, result);
    return result.count("survived") == 0 ? 0 : 1;
  }
  if (!replay.empty()) {
    nic::user_rtl_provider user;  // --rtl: the recording through the user's block (compiled per window or flows)
    if (!verify.rtl.empty()) {
      if (!verify.params.empty())
        throw core::config_error(
            "verify-rtl --replay --rtl: --param cannot be combined with --replay (the "
            "recording gives each instance's window or flows)");
      if (!std::filesystem::is_regular_file(verify.rtl))
        throw core::config_error("verify-rtl --rtl " + verify.rtl + ": no such file");
      user = testbench::user_rtl_provider_for(verify.block, verify.rtl, verify.top, verify.rtl_cache,
                                              "verify-rtl --rtl " + verify.rtl, std::cout);
    }
    const testbench::rtl_replay_result result =
        testbench::replay_rtl_recording(verify.block, replay, verify.mutant, user);
    (result.matched ? std::cout : std::cerr) << testbench::format_rtl_replay(verify.block, replay, result);
    return result.matched ? 0 : 1;
  }
  // A file that cannot be written is refused before the bench runs.
  for (const auto& [flag, path] : {std::pair{"--coverage-json", coverage_json}, {"--coverage-html", coverage_html}})
    if (!path.empty() && !std::ofstream(path))
      throw core::config_error(std::string(flag) + " " + path + ": cannot open for writing");
  if (!verify.rtl.empty()) {
    const testbench::verify_user_rtl_result result = testbench::verify_user_rtl(verify);
    (result.matched ? std::cout : std::cerr) << testbench::format_verify_user_rtl(verify, result);
    testbench::write_coverage(testbench::coverage_of(verify, result), coverage_json, coverage_html);
    return result.matched ? 0 : 1;
  }
  if (verify.block == "cnp_gen") {
    const testbench::verify_rtl_cnp_gen_result result = testbench::verify_rtl_cnp_gen(verify);
    (result.bench.matched ? std::cout : std::cerr) << testbench::format_verify_rtl_cnp_gen(verify, result);
    testbench::write_coverage(testbench::coverage_of(verify, result), coverage_json, coverage_html);
    return result.bench.matched ? 0 : 1;
  }
  const testbench::verify_rtl_result result = testbench::verify_rtl(verify);
  (result.matched ? std::cout : std::cerr) << testbench::format_verify_rtl(verify, result);
  testbench::write_coverage(testbench::coverage_of(verify, result), coverage_json, coverage_html);
  return result.matched ? 0 : 1;
}

}  // namespace

int fabricsim_cli(int argc, char* argv[], bool parse_only) {
  CLI::App app{app_description(), "fabricsim"};
  app.require_subcommand(0, 1);
  run_args args;

  add_run_command(app, args);

  replay_cli replay_c;
  CLI::App* replay_cmd = add_replay_command(app, replay_c);

  CLI::App* keys_cmd = app.add_subcommand("keys",
                                          "Print every scenario key with its unit, default and range "
                                          "(Markdown).\nExample: fabricsim keys");

  verify_cli verify_c;
  CLI::App* verify_cmd = add_verify_command(app, verify_c);
  pcie_cli pcie_c;
  CLI::App* pcie_cmd = add_pcie_command(app, pcie_c);

  CLI::App* list_cmd = app.add_subcommand("list-scenarios",
                                          "List the shipped scenarios (testbench/scenarios) with a line each.\n"
                                          "Example: fabricsim list-scenarios");
  scenario_cli explain_c, export_c;
  CLI::App* explain_cmd = add_explain_command(app, explain_c);
  CLI::App* export_cmd = add_export_command(app, export_c);
  testbench::plot_options plot_opts;
  CLI::App* plot_cmd = add_plot_command(app, plot_opts);

  testbench::sweep_options sweep_opts;
  CLI::App* sweep_cmd = testbench::add_sweep_command(app, sweep_opts);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (const int status = testbench::handle_unknown_command(app, e, argc, argv, std::cout, std::cerr); status >= 0)
      return status;
    return app.exit(e);
  }
  if (parse_only) return 0;
  try {
    if (*replay_cmd) return run_replay_command(replay_c);
    if (*list_cmd) {
      std::cout << testbench::format_scenario_list(testbench::shipped_scenarios());
      return 0;
    }
    if (*explain_cmd) {
      std::cout << testbench::explain_scenario(testbench::load_scenario_by_name(explain_c.file, explain_c.sets));
      return 0;
    }
    if (*export_cmd) {
      const std::string line =
          testbench::export_topology(testbench::load_scenario_by_name(export_c.file, export_c.sets), export_c.out);
      (export_c.out == "-" ? std::cerr : std::cout) << line;
      return 0;
    }
    if (*plot_cmd) return testbench::run_plot(plot_opts);
    if (*sweep_cmd) return testbench::run_sweep(sweep_opts);
    if (*keys_cmd) {
      std::cout << testbench::scenario_keys_markdown();
      return 0;
    }
    if (*pcie_cmd) {
      const auto runs = testbench::run_pcie_bench(pcie_c.params);
      if (!pcie_c.json.empty()) write_json(pcie_c.json, testbench::pcie_bench_json(pcie_c.params, runs));
      std::cout << testbench::format_pcie_bench(runs);
      return 0;
    }
    if (*verify_cmd) return run_verify_command(verify_c);
    if (args.ranks > 1 && !mpi::launched_as_rank()) return relaunch_under_mpirun(args.ranks, argc, argv);
    return run(args);
  } catch (const core::config_error& e) {
    // Under mpirun every rank reads the same input and fails the same way: one message is enough.
    if (!mpi::launched_as_rank() || !mpi::available() || mpi::world::get().rank() == 0)
      std::cerr << "fabricsim: error: " << e.what() << '\n';
    return 2;
  } catch (const nic::rtl_divergence& e) {
    // A lockstep block's RTL and reference model disagreed: the run stopped there (docs/verification.md).
    std::cerr << "fabricsim: RTL divergence: " << e.what() << '\n';
    if (mpi::launched_as_rank()) mpi::world::get().abort(testbench::exit_rtl_divergence);
    return testbench::exit_rtl_divergence;
  } catch (const std::exception& e) {
    // Anything else is a fault in the model, not in the input: say so rather than let the kernel abort.
    std::cerr << "fabricsim: internal error (please report it with the scenario): " << e.what() << '\n';
    // The other ranks may be waiting for this one in a collective: stop them all.
    if (mpi::launched_as_rank()) mpi::world::get().abort(3);
    return 3;
  }
}
