// `fabricsim verify-rtl --mutate`: the mutant schema compiled once, the bench in a child process per mutant,
// yosys on the survivors, the report.
#include "testbench/rtl_mutate.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iomanip>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "sc_models/core/params.h"
#include "sc_models/nic/cnp_gen_differential.h"
#include "sc_models/nic/dcqcn_rp.h"
#include "sc_models/nic/dcqcn_rp_differential.h"
#include "sc_models/nic/reorder_tracker_differential.h"
#include "sc_models/nic/user_rtl_block.h"
#include "testbench/embedded_files.h"
#include "testbench/rtl_contract.h"

namespace fabricsim::testbench {

// testbench/CMakeLists.txt embeds the shipped blocks (shipped_rtl_sources) and the package
// (user_rtl_sources, for user_rtl.cpp).
extern const embedded_file shipped_rtl_sources[];
extern const size_t shipped_rtl_sources_count;
extern const embedded_file user_rtl_sources[];
extern const size_t user_rtl_sources_count;

namespace {

namespace fs = std::filesystem;
using clock_type = std::chrono::steady_clock;

// The mutants to run: --mutate-ids (ascending, each once), else --mutate-sample's seeded sample, else all.
std::vector<uint32_t> chosen_mutants(size_t generated, const rtl_mutate_options& mutate, uint64_t seed) {
  if (mutate.ids.empty()) return sample_rtl_mutants(generated, mutate.sample, seed);
  if (mutate.sample != 0)
    throw core::config_error("verify-rtl --mutate-ids and --mutate-sample both pick the mutants: give one");
  std::vector<uint32_t> ids = mutate.ids;
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  for (uint32_t id : ids)
    if (id == 0 || id > generated)
      throw core::config_error("verify-rtl --mutate-ids: mutant " + std::to_string(id) +
                               " does not exist; this block has mutants 1.." + std::to_string(generated));
  return ids;
}

double seconds_since(clock_type::time_point start) {
  return std::chrono::duration<double>(clock_type::now() - start).count();
}

std::string embedded(const embedded_file* files, size_t count, const std::string& path) {
  for (size_t i = 0; i < count; ++i)
    if (path == files[i].path) return files[i].text;
  throw core::config_error("verify-rtl --mutate: " + path + " is not carried in this binary");
}

std::string read_text(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw core::config_error("verify-rtl --rtl " + path + ": cannot read the file");
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

void write_text(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream f(path, std::ios::binary);
  f << text;
  if (!f) throw core::config_error("verify-rtl --mutate: cannot write " + path.string());
}

std::string fnv_hex(const std::string& s) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

// What the bench said about one run.
struct bench_outcome {
  bool matched = true;
  uint64_t cycle = 0;
  std::string mismatch;
};

bench_outcome run_bench(const verify_rtl_options& options, const std::shared_ptr<const nic::user_rtl_library>& library,
                        uint32_t size) {
  const std::string& block = options.block;
  const uint64_t cycles = options.cycles, seed = options.seed;
  if (block == "dcqcn_rp") {
    nic::dcqcn_rp_differential_options o;
    o.cycles = cycles;
    o.seed = seed;
    o.preset = options.preset.empty() ? "mixed" : options.preset;
    const auto r =
        nic::run_dcqcn_rp_differential(o, [&](const nic::dcqcn_params& params, uint64_t now, const std::string& wave) {
          return nic::make_dcqcn_rp_user(library, params, now, wave);
        });
    return {r.matched, r.mismatch_cycle,
            r.mismatch_signal + " expected " + r.expected + " got " + r.got + ": " + r.mismatch};
  }
  if (block == "reorder_tracker") {
    nic::reorder_tracker_user dut(library, size);
    const auto r = nic::run_reorder_tracker_differential(dut, cycles, seed);
    return {r.matched, r.mismatch_cycle, r.mismatch};
  }
  nic::cnp_gen_user dut(library, size);
  const auto r = nic::run_cnp_gen_differential(dut, cycles, seed);
  return {r.matched, r.mismatch_cycle, r.mismatch};
}

std::string first_line(const std::string& s) { return s.substr(0, s.find('\n')); }

// Runs `bench` in a child process, killed after `timeout` seconds. The child writes "M" (matched) or
// "K <cycle> <first line of the mismatch>" to a pipe; no answer is a crash.
rtl_mutant_outcome run_in_child(const std::function<bench_outcome()>& bench, double timeout) {
  int fds[2];
  if (pipe(fds) != 0) throw core::config_error(std::string("verify-rtl --mutate: pipe: ") + std::strerror(errno));
  const auto start = clock_type::now();
  const pid_t pid = fork();
  if (pid < 0) throw core::config_error(std::string("verify-rtl --mutate: fork: ") + std::strerror(errno));
  if (pid == 0) {
    close(fds[0]);
    const int null = open("/dev/null", O_WRONLY);
    if (null >= 0) {  // a crashing model's own messages are not the report
      dup2(null, 1);
      dup2(null, 2);
    }
    std::string answer;
    try {
      const bench_outcome o = bench();
      answer = o.matched ? "M" : "K " + std::to_string(o.cycle) + " " + first_line(o.mismatch);
    } catch (const std::exception& e) {
      answer = std::string("E ") + first_line(e.what());
    }
    for (size_t at = 0; at < answer.size();) {
      const ssize_t n = write(fds[1], answer.data() + at, answer.size() - at);
      if (n <= 0) break;
      at += static_cast<size_t>(n);
    }
    _exit(0);  // not exit(): the parent's exit handlers (the Verilator runtime's) are not the child's
  }
  close(fds[1]);
  std::string answer;
  bool timed_out = false;
  for (char buf[4096];;) {
    const double left = timeout - seconds_since(start);
    if (left <= 0) {
      timed_out = true;
      break;
    }
    pollfd p{fds[0], POLLIN, 0};
    const int ready = poll(&p, 1, static_cast<int>(left * 1000) + 1);
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) continue;
    const ssize_t n = read(fds[0], buf, sizeof buf);
    if (n <= 0) break;
    answer.append(buf, static_cast<size_t>(n));
  }
  close(fds[0]);
  if (timed_out) kill(pid, SIGKILL);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  rtl_mutant_outcome o;
  o.seconds = seconds_since(start);
  if (timed_out) {
    o.status = "timeout";
    o.detail = "the bench did not finish in " + std::to_string(static_cast<int>(timeout)) + " s";
  } else if (answer == "M") {
    o.status = "survived";
  } else if (answer.rfind("K ", 0) == 0) {
    o.status = "killed";
    std::istringstream in(answer.substr(2));
    in >> o.cycle;
    std::getline(in >> std::ws, o.detail);
  } else if (answer.rfind("E ", 0) == 0) {
    o.status = "crashed";
    o.detail = "the model threw: " + answer.substr(2);
  } else {
    o.status = "crashed";
    o.detail = WIFSIGNALED(status) ? std::string("the model died of signal ") + strsignal(WTERMSIG(status))
                                   : "the model exited with status " + std::to_string(WEXITSTATUS(status));
  }
  return o;
}

// A program on PATH ($FABRICSIM_YOSYS overrides yosys); empty when not found.
std::string find_yosys() {
  const char* env = std::getenv("FABRICSIM_YOSYS");
  const std::string name = env != nullptr && *env != '\0' ? env : "yosys";
  if (name.find('/') != std::string::npos) return access(name.c_str(), X_OK) == 0 ? name : "";
  std::stringstream path(std::getenv("PATH") == nullptr ? "" : std::getenv("PATH"));
  for (std::string dir; std::getline(path, dir, ':');) {
    std::string candidate = (dir.empty() ? "." : dir) + "/" + name;
    if (access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return "";
}

// Runs yosys on `script` with its output in `log`; the exit status, or -1 when killed after `timeout` s.
int run_yosys(const std::string& yosys, const fs::path& script, const fs::path& log, double timeout) {
  const pid_t pid = fork();
  if (pid < 0) throw core::config_error(std::string("verify-rtl --mutate: fork: ") + std::strerror(errno));
  if (pid == 0) {
    const int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) {
      dup2(fd, 1);
      dup2(fd, 2);
    }
    execl(yosys.c_str(), yosys.c_str(), "-q", "-s", script.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  const auto start = clock_type::now();
  int status = 0;
  for (;;) {
    const pid_t done = waitpid(pid, &status, WNOHANG);
    if (done == pid) return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    if (done < 0 && errno != EINTR) return -1;
    if (seconds_since(start) > timeout) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      return -1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

// The yosys script: both designs elaborated with the bench's parameters, asynchronous resets made
// synchronous in both, the equivalence cells matched by name, proven by simple and inductive SAT.
std::string equivalence_script(const std::string& module, const std::string& chparam, const fs::path& dir,
                               const fs::path& gate) {
  std::ostringstream s;
  for (const auto& [name, file] : {std::pair{"gold", dir / "gold.sv"}, {"gate", gate}}) {
    s << "read_verilog -sv " << (dir / "fabricsim_pkg.sv").string() << ' ' << file.string() << '\n'
      << chparam << "hierarchy -top " << module << "\nproc\nflatten\nmemory\nopt_clean\nrename " << module << ' '
      << name << "\ndesign -stash " << name << '\n';
  }
  s << "design -copy-from gold -as gold gold\ndesign -copy-from gate -as gate gate\nasync2sync\n"
    << "equiv_make gold gate equiv\nhierarchy -top equiv\nequiv_simple -seq 5\nequiv_induct -seq 5\n"
    << "equiv_status -assert\n";
  return s.str();
}

// A survivor yosys has not settled in this time stays a survivor (a reset-value mutant of a block with a
// RAM can keep equiv_induct busy for minutes).
constexpr int equivalence_timeout_seconds = 120;

void check_equivalence(const rtl_mutation_source& source, const std::string& yosys, const std::string& chparam,
                       const fs::path& dir, rtl_mutant_outcome& o) {
  const fs::path gate = dir / ("mutant_" + std::to_string(o.mutant.id) + ".sv");
  write_text(gate, source.apply(o.mutant.id));
  const fs::path script = dir / ("mutant_" + std::to_string(o.mutant.id) + ".ys");
  const fs::path log = dir / ("mutant_" + std::to_string(o.mutant.id) + ".log");
  const std::string script_text = equivalence_script(source.module(), chparam, dir, gate);
  write_text(script, script_text);
  // yosys' verdict is kept beside its inputs, keyed by all of them, so a second run does not check again.
  const fs::path verdict = dir / ("mutant_" + std::to_string(o.mutant.id) + "-" +
                                  fnv_hex(script_text + source.apply(o.mutant.id) + source.source()) + ".verdict");
  int rc = 0;
  std::ifstream cached(verdict);
  if (!(cached >> rc)) {  // else the log of the run that gave the verdict is still there
    rc = run_yosys(yosys, script, log, equivalence_timeout_seconds);
    write_text(verdict, std::to_string(rc) + "\n");  // a timeout too: delete the file to try again
  }
  std::string text;
  {
    std::ifstream f(log);
    std::ostringstream s;
    s << f.rdbuf();
    text = s.str();
  }
  if (rc == 0) {
    o.status = "equivalent";
    o.detail = "proven by yosys equiv_induct";
  } else if (text.find("unproven $equiv cells") != std::string::npos) {
    o.detail = "yosys equiv_induct did not prove it equivalent";
  } else if (rc < 0) {
    o.detail = "yosys did not finish in " + std::to_string(equivalence_timeout_seconds) + " s";
  } else {  // e.g. a latch the mutant made in an always_comb, which yosys refuses
    const size_t error = text.find("ERROR: ");
    const std::string why = error == std::string::npos ? "" : first_line(text.substr(error + 7));
    o.detail = "yosys could not check it: " + (why.empty() ? log.string() : why.substr(0, why.find(" from ")));
  }
}

}  // namespace

size_t rtl_mutate_result::count(const std::string& status) const {
  size_t n = 0;
  for (const rtl_mutant_outcome& o : outcomes) n += o.status == status ? 1 : 0;
  return n;
}

size_t rtl_mutate_result::killed() const { return count("killed") + count("timeout") + count("crashed"); }

double rtl_mutate_result::score() const {
  const size_t relevant = outcomes.size() - count("equivalent");
  return relevant == 0 ? 1.0 : static_cast<double>(killed()) / static_cast<double>(relevant);
}

rtl_mutate_result run_rtl_mutation(const verify_rtl_options& options, const rtl_mutate_options& mutate) {
  const auto start = clock_type::now();
  const rtl_block_contract& contract = rtl_contract(options.block);
  if (options.mutant != 0)
    throw core::config_error("verify-rtl --mutate generates its own mutants; it cannot be combined with --mutant");
  if (!options.wave.empty())
    throw core::config_error(
        "verify-rtl --mutate runs one bench per mutant and writes no waveform; drop --wave "
        "(run a survivor's source with --rtl --wave to see it)");
  check_verify_rtl_preset(options);
  if (mutate.timeout_seconds < 0) throw core::config_error("verify-rtl --mutate-timeout must be positive");
  if (!mutate.json.empty() && !std::ofstream(mutate.json))
    throw core::config_error("verify-rtl --mutate-json " + mutate.json + ": cannot open for writing");
  rtl_mutate_result result;
  result.file = options.rtl.empty() ? "rtl/" + options.block + ".sv" : options.rtl;
  const std::string text = options.rtl.empty() ? embedded(shipped_rtl_sources, shipped_rtl_sources_count, result.file)
                                               : read_text(options.rtl);
  const std::string top = options.top.empty() ? options.block : options.top;
  const rtl_mutation_source source(text, result.file, top);
  result.module = source.module();
  result.generated = source.mutants().size();
  const std::vector<uint32_t> ids = chosen_mutants(result.generated, mutate, options.seed);
  result.chosen = !mutate.ids.empty();

  // The schema, compiled through the user-RTL path (its cache keys on the text, so a second run reuses it).
  const std::string schema = source.schema(ids);
  const fs::path cache = options.rtl_cache.empty() ? default_user_rtl_cache() : options.rtl_cache;
  const fs::path dir = cache / "mutate" / (result.module + "-" + fnv_hex(schema));
  const fs::path schema_file = dir / fs::path(result.file).filename();
  write_text(schema_file, schema);
  user_rtl_request request{options.block, schema_file.string(), top, options.params, cache.string()};
  add_default_size_params(options, request.params);
  result.build = build_user_rtl(request);
  const std::string size_parameter = user_rtl_size_parameter(options.block);
  if (!size_parameter.empty()) result.size = static_cast<uint32_t>(result.build.parameters.at(size_parameter));
  const auto library = nic::user_rtl_library::open(result.build.shared_object, options.block);
  // The schema's selector, exported by the object (the library keeps it loaded for the process).
  void* handle = dlopen(result.build.shared_object.c_str(), RTLD_NOW | RTLD_NOLOAD);
  auto* select =
      handle == nullptr ? nullptr : reinterpret_cast<void (*)(unsigned)>(dlsym(handle, "fabricsim_mutant_select"));
  if (select == nullptr)
    throw core::config_error("verify-rtl --mutate: " + result.build.shared_object +
                             " has no fabricsim_mutant_select: not a mutant schema");

  const uint32_t size = result.size;
  auto bench_of = [&](uint32_t id) {
    return [&, id] {
      select(id);
      return run_bench(options, library, size);
    };
  };
  const rtl_mutant_outcome original = run_in_child(bench_of(0), 600);
  result.original_seconds = original.seconds;
  if (original.status != "survived")
    throw core::config_error("verify-rtl --mutate: the unmutated " + result.file + " does not pass the bench (" +
                             original.status + (original.detail.empty() ? "" : ": " + original.detail) +
                             "): fix that first (verify-rtl --rtl " + result.file + ")");
  result.timeout_seconds = mutate.timeout_seconds > 0 ? mutate.timeout_seconds : 10.0 + 20.0 * result.original_seconds;

  const auto bench_start = clock_type::now();
  for (uint32_t id : ids) {
    rtl_mutant_outcome o = run_in_child(bench_of(id), result.timeout_seconds);
    o.mutant = source.mutants()[id - 1];
    o.diff = source.diff(id);
    result.outcomes.push_back(o);
  }
  result.bench_seconds = seconds_since(bench_start);

  const std::string yosys = mutate.equivalence ? find_yosys() : "";
  result.yosys = !yosys.empty();
  const auto equivalence_start = clock_type::now();
  if (result.yosys && result.count("survived") > 0) {
    const fs::path equiv = dir / "equiv";
    write_text(equiv / "gold.sv", text);
    write_text(equiv / "fabricsim_pkg.sv", embedded(user_rtl_sources, user_rtl_sources_count, "rtl/fabricsim_pkg.sv"));
    std::string chparam;
    for (const rtl_parameter_spec& p : contract.parameters)
      if (result.build.parameters.count(p.name) != 0)
        chparam += "chparam -set " + std::string(p.name) + " " + std::to_string(result.build.parameters.at(p.name)) +
                   " " + result.module + "\n";
    for (rtl_mutant_outcome& o : result.outcomes)
      if (o.status == "survived") check_equivalence(source, yosys, chparam, equiv, o);
  }
  result.equivalence_seconds = seconds_since(equivalence_start);
  result.wall_seconds = seconds_since(start);
  if (!mutate.json.empty()) {
    std::ofstream f(mutate.json);
    f << rtl_mutation_json(options, result);
    if (!f) throw core::config_error("verify-rtl --mutate-json " + mutate.json + ": cannot write the file");
  }
  return result;
}

std::string rtl_mutant_patch(const verify_rtl_options& options, uint32_t id) {
  rtl_contract(options.block);
  const std::string file = options.rtl.empty() ? "rtl/" + options.block + ".sv" : options.rtl;
  const std::string text =
      options.rtl.empty() ? embedded(shipped_rtl_sources, shipped_rtl_sources_count, file) : read_text(options.rtl);
  const rtl_mutation_source source(text, file, options.top.empty() ? options.block : options.top);
  if (id == 0 || id > source.mutants().size())
    throw core::config_error("verify-rtl --mutant-patch " + std::to_string(id) + ": " + file + " has " +
                             std::to_string(source.mutants().size()) + " generated mutants, numbered 1 to " +
                             std::to_string(source.mutants().size()));
  return source.patch(id, file, options.block);
}

namespace {

struct op_counts {
  size_t run = 0, killed = 0, survived = 0, equivalent = 0;
};

std::map<std::string, op_counts> per_op(const rtl_mutate_result& r) {
  std::map<std::string, op_counts> counts;
  for (const rtl_mutant_outcome& o : r.outcomes) {
    op_counts& c = counts[o.mutant.op];
    ++c.run;
    c.killed += o.status == "killed" || o.status == "timeout" || o.status == "crashed" ? 1 : 0;
    c.survived += o.status == "survived" ? 1 : 0;
    c.equivalent += o.status == "equivalent" ? 1 : 0;
  }
  return counts;
}

}  // namespace

std::string format_rtl_mutation(const verify_rtl_options& options, const rtl_mutate_result& r) {
  const char* size = options.block == "reorder_tracker" ? "Window " : options.block == "cnp_gen" ? "Flows " : "";
  std::ostringstream s;
  s << "verify-rtl " << options.block << " --mutate: " << r.file << ", module " << r.module << ", ";
  if (*size != '\0') s << size << r.size << ", ";
  s << options.cycles << " cycles, seed " << options.seed << '\n';
  s << "  " << r.generated << " mutants generated, " << r.outcomes.size() << " run"
    << (r.chosen                          ? " (those of --mutate-ids)"
        : r.outcomes.size() < r.generated ? " (a seeded sample)"
                                          : "")
    << "; schema " << (r.build.reused ? "reused from the cache" : "compiled") << ": " << r.build.entry_dir << '\n';
  s << std::fixed << std::setprecision(1) << "  wall time " << r.wall_seconds << " s (compile "
    << r.build.verilate_seconds + r.build.compile_seconds << " s, benches " << r.bench_seconds << " s, unmutated bench "
    << std::setprecision(2) << r.original_seconds << " s, equivalence checks " << std::setprecision(1)
    << r.equivalence_seconds << " s), timeout per mutant " << r.timeout_seconds << " s\n";
  s << "  " << std::left << std::setw(12) << "operator" << std::right << std::setw(8) << "mutants" << std::setw(8)
    << "killed" << std::setw(10) << "survived" << std::setw(12) << "equivalent" << '\n';
  const auto counts = per_op(r);
  for (const std::string& op : rtl_mutant_ops()) {
    const auto it = counts.find(op);
    const op_counts c = it == counts.end() ? op_counts{} : it->second;
    s << "  " << std::left << std::setw(12) << op << std::right << std::setw(8) << c.run << std::setw(8) << c.killed
      << std::setw(10) << c.survived << std::setw(12) << c.equivalent << '\n';
  }
  s << "  " << std::left << std::setw(12) << "total" << std::right << std::setw(8) << r.outcomes.size() << std::setw(8)
    << r.killed() << std::setw(10) << r.count("survived") << std::setw(12) << r.count("equivalent") << '\n';
  if (r.count("timeout") + r.count("crashed") > 0)
    s << "  of the killed: " << r.count("timeout") << " by the timeout, " << r.count("crashed") << " by a crash\n";
  s << std::setprecision(1) << "mutation score " << 100.0 * r.score() << "% (" << r.killed() << " killed of "
    << r.outcomes.size() - r.count("equivalent") << " non-equivalent)"
    << (r.yosys ? "" : "; survivors not checked for equivalence (yosys not found, or --no-equiv)") << '\n';
  for (const char* status : {"survived", "equivalent"})
    for (const rtl_mutant_outcome& o : r.outcomes)
      if (o.status == status) {
        s << '\n'
          << status << ": mutant " << o.mutant.id << ", " << o.mutant.description
          << (o.detail.empty() ? "" : " (" + o.detail + ")") << '\n';
        s << o.diff;
      }
  return s.str();
}

std::string rtl_mutation_json(const verify_rtl_options& options, const rtl_mutate_result& r) {
  nlohmann::json j;
  j["block"] = options.block;
  j["file"] = r.file;
  j["module"] = r.module;
  j["size"] = r.size;
  j["cycles"] = options.cycles;
  j["seed"] = options.seed;
  j["generated"] = r.generated;
  j["run"] = r.outcomes.size();
  j["killed"] = r.killed();
  j["survived"] = r.count("survived");
  j["equivalent"] = r.count("equivalent");
  j["score"] = r.score();
  j["equivalence_checked"] = r.yosys;
  j["wall_seconds"] = r.wall_seconds;
  j["timeout_seconds"] = r.timeout_seconds;
  nlohmann::json ops = nlohmann::json::object();
  for (const auto& [op, c] : per_op(r))
    ops[op] = {{"mutants", c.run}, {"killed", c.killed}, {"survived", c.survived}, {"equivalent", c.equivalent}};
  j["operators"] = ops;
  nlohmann::json mutants = nlohmann::json::array();
  for (const rtl_mutant_outcome& o : r.outcomes) {
    nlohmann::json m{{"id", o.mutant.id},
                     {"operator", o.mutant.op},
                     {"line", o.mutant.line},
                     {"column", o.mutant.column},
                     {"original", o.mutant.original},
                     {"replacement", o.mutant.replacement},
                     {"description", o.mutant.description},
                     {"status", o.status}};
    if (o.status == "killed") m["cycle"] = o.cycle;
    if (!o.detail.empty()) m["detail"] = o.detail;
    if (o.status == "survived" || o.status == "equivalent") m["diff"] = o.diff;
    mutants.push_back(m);
  }
  j["mutants"] = mutants;
  return j.dump(1) + "\n";
}

}  // namespace fabricsim::testbench
