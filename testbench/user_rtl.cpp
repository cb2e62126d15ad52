// A user's RTL block compiled at run time: contract check, Verilator, the C++ compile into a cached shared
// object.
#include "testbench/user_rtl.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <regex>
#include <sstream>
#include <thread>

#include "sc_models/core/params.h"
#include "sc_models/nic/user_rtl_abi.h"
#include "sc_models/nic/user_rtl_block.h"
#include "testbench/embedded_files.h"
#include "testbench/rtl_contract.h"

namespace fabricsim::testbench {

// testbench/CMakeLists.txt embeds the package, the shim and the headers the shim includes.
extern const embedded_file user_rtl_sources[];
extern const size_t user_rtl_sources_count;

namespace {

namespace fs = std::filesystem;

#ifndef FABRICSIM_CXX_COMPILER
#define FABRICSIM_CXX_COMPILER "c++"
#endif

std::string env(const char* name) {
  const char* value = std::getenv(name);
  return value == nullptr ? "" : value;
}

std::string read_text(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

void write_text(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream f(path, std::ios::binary);
  f << text;
  if (!f) throw core::config_error("verify-rtl --rtl: cannot write " + path.string());
}

// FNV-1a, 64 bit: the cache key of a build's inputs.
struct key_hash {
  uint64_t value = 1469598103934665603ull;
  void add(const std::string& s) {
    for (unsigned char c : s) value = (value ^ c) * 1099511628211ull;
    value = (value ^ 0xff) * 1099511628211ull;  // a separator, so ("ab","c") and ("a","bc") differ
  }
  std::string hex() const {
    char buf[17];
    std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(value));
    return buf;
  }
};

// A program by name on PATH (or a path with a slash); empty when not found.
std::string find_program(const std::string& name) {
  if (name.find('/') != std::string::npos) return access(name.c_str(), X_OK) == 0 ? name : "";
  std::stringstream path(env("PATH"));
  for (std::string dir; std::getline(path, dir, ':');) {
    std::string candidate = (dir.empty() ? "." : dir) + "/" + name;
    if (access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return "";
}

// Starts `argv` with stdout and stderr appended to `log`; returns its pid.
pid_t spawn(const std::vector<std::string>& argv, const std::string& log) {
  std::vector<char*> args;
  args.reserve(argv.size() + 1);
  std::vector<std::string> copy = argv;
  for (std::string& a : copy) args.push_back(a.data());
  args.push_back(nullptr);
  const pid_t pid = fork();
  if (pid < 0) throw core::config_error("verify-rtl --rtl: cannot start " + argv[0] + ": " + std::strerror(errno));
  if (pid == 0) {
    const int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (fd >= 0) {
      dup2(fd, 1);
      dup2(fd, 2);
      close(fd);
    }
    execv(args[0], args.data());
    _exit(127);
  }
  return pid;
}

int wait_for(pid_t pid) {
  int status = 0;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::string log_tail(const std::string& log, size_t lines) {
  const std::string text = read_text(log);
  size_t at = text.size();
  for (size_t n = 0; n <= lines && at != std::string::npos && at > 0; ++n) at = text.rfind('\n', at - 1);
  return at == std::string::npos || at == 0 ? text : text.substr(at + 1);
}

// Runs the commands at once (the machine's cores permitting) and fails naming the first that failed.
void run_all(const std::vector<std::vector<std::string>>& commands, const std::string& log, const std::string& what) {
  const size_t parallel = std::max(1u, std::thread::hardware_concurrency());
  std::vector<std::pair<pid_t, size_t>> running;
  std::string failed;
  auto reap = [&] {
    const auto [pid, index] = running.front();
    running.erase(running.begin());
    if (wait_for(pid) != 0 && failed.empty()) failed = commands[index][0] + " (" + commands[index].back() + ")";
  };
  for (size_t i = 0; i < commands.size(); ++i) {
    if (running.size() >= parallel) reap();
    running.emplace_back(spawn(commands[i], log), i);
  }
  while (!running.empty()) reap();
  if (!failed.empty())
    throw core::config_error("verify-rtl --rtl: " + what + " failed: " + failed + "; the end of " + log + ":\n" +
                             log_tail(log, 30));
}

struct toolchain {
  std::string verilator;
  std::string verilator_version;
  std::string include;  // Verilator's include directory
  std::string cxx;
};

std::string capture(const std::vector<std::string>& argv, const fs::path& scratch) {
  const std::string out = (scratch / "capture.txt").string();
  fs::remove(out);
  if (wait_for(spawn(argv, out)) != 0)
    throw core::config_error("verify-rtl --rtl: " + argv[0] + " failed:\n" + read_text(out));
  std::string text = read_text(out);
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
  return text;
}

toolchain find_toolchain(const fs::path& scratch) {
  toolchain t;
  const std::string verilator = env("FABRICSIM_VERILATOR").empty() ? "verilator" : env("FABRICSIM_VERILATOR");
  t.verilator = find_program(verilator);
  if (t.verilator.empty())
    throw core::config_error("verify-rtl --rtl: Verilator (" + verilator +
                             ") is not on PATH: install the Debian package verilator (scripts/setup does) or set "
                             "FABRICSIM_VERILATOR to its path");
  t.verilator_version = capture({t.verilator, "--version"}, scratch);
  t.include = capture({t.verilator, "--getenv", "VERILATOR_ROOT"}, scratch) + "/include";
  const std::string cxx = env("FABRICSIM_RTL_CXX").empty() ? FABRICSIM_CXX_COMPILER : env("FABRICSIM_RTL_CXX");
  t.cxx = find_program(cxx);
  if (t.cxx.empty())
    throw core::config_error("verify-rtl --rtl: the C++ compiler " + cxx +
                             " is not on PATH (set FABRICSIM_RTL_CXX to one)");
  return t;
}

// Flags of every translation unit of the object: Verilator's (verilated.mk) plus position-independent code
// with hidden symbols, so the object's Verilator runtime stays its own.
std::vector<std::string> cxx_flags(const toolchain& t) {
  return {"-std=gnu++17",
          "-O2",
          "-fPIC",
          "-fvisibility=hidden",
          "-fvisibility-inlines-hidden",
          "-faligned-new",
          "-w",
          "-I" + t.include,
          "-I" + t.include + "/vltstd",
          "-DVM_COVERAGE=0",
          "-DVM_SC=0",
          "-DVM_TRACE=1",
          "-DVM_TRACE_FST=1",
          "-DVM_TRACE_VCD=0"};
}

const std::vector<std::string> runtime_units{"verilated", "verilated_fst_c", "verilated_threads"};

// Renames a finished build directory into place; another process may have finished the same one first.
void publish(const fs::path& built, const fs::path& entry) {
  std::error_code ec;
  fs::rename(built, entry, ec);
  if (ec) {
    if (!fs::exists(entry))
      throw core::config_error("verify-rtl --rtl: cannot create " + entry.string() + ": " + ec.message());
    fs::remove_all(built, ec);
  }
}

// The Verilator runtime compiled once per cache, Verilator version, compiler and flags.
fs::path ensure_runtime(const toolchain& t, const fs::path& cache, bool& built) {
  key_hash key;
  key.add(t.verilator_version);
  key.add(t.cxx);
  for (const std::string& f : cxx_flags(t)) key.add(f);
  fs::path dir = cache / ("runtime-" + key.hex());
  built = false;
  if (fs::exists(dir / "complete")) return dir;
  const fs::path scratch = cache / ("tmp-runtime-" + std::to_string(getpid()));
  fs::remove_all(scratch);
  fs::create_directories(scratch);
  std::vector<std::vector<std::string>> commands;
  for (const std::string& unit : runtime_units) {
    std::vector<std::string> c{t.cxx};
    for (const std::string& f : cxx_flags(t)) c.push_back(f);
    for (const std::string& a :
         {std::string("-c"), t.include + "/" + unit + ".cpp", std::string("-o"), (scratch / (unit + ".o")).string()})
      c.push_back(a);
    commands.push_back(c);
  }
  run_all(commands, (scratch / "build.log").string(), "compiling the Verilator runtime");
  write_text(scratch / "complete", t.verilator_version + "\n");
  publish(scratch, dir);
  built = true;
  return dir;
}

// NAME=VALUE, NAME an identifier, VALUE a plain literal (digits, letters, ', _): no shell or Verilator syntax.
std::vector<std::string> parameter_args(const std::vector<std::string>& params) {
  static const std::regex form(R"re(([A-Za-z_][A-Za-z0-9_]*)=([A-Za-z0-9_']+))re");
  std::vector<std::string> args;
  for (const std::string& p : params) {
    if (!std::regex_match(p, form))
      throw core::config_error("verify-rtl --param " + p +
                               ": expected NAME=VALUE (a parameter of the top module "
                               "and a number, e.g. Window=256)");
    args.push_back("-G" + p);
  }
  return args;
}

// Everything the object is made from, so a change to any of it compiles a new one.
std::string cache_key(const user_rtl_request& request, const std::string& top, const std::vector<std::string>& gargs,
                      const std::string& source, const toolchain& t) {
  key_hash key;
  key.add(std::to_string(rtl_contract_version) + "." + std::to_string(FABRICSIM_USER_RTL_ABI_VERSION));
  key.add(request.block);
  key.add(top);
  for (const std::string& g : gargs) key.add(g);
  key.add(source);
  for (size_t i = 0; i < user_rtl_sources_count; ++i) key.add(user_rtl_sources[i].text);
  key.add(t.verilator_version);
  key.add(t.cxx);
  for (const std::string& f : cxx_flags(t)) key.add(f);
  return key.hex();
}

std::vector<std::string> verilator_command(const toolchain& t, const user_rtl_request& request, const std::string& top,
                                           const std::vector<std::string>& gargs, const fs::path& src,
                                           std::vector<std::string> mode) {
  std::vector<std::string> c{t.verilator};
  for (std::string& m : mode) c.push_back(std::move(m));
  for (const std::string& a : {std::string("-Wno-fatal"), std::string("--top-module"), top}) c.push_back(a);
  for (const std::string& g : gargs) c.push_back(g);
  c.push_back((src / "rtl/fabricsim_pkg.sv").string());
  c.push_back(fs::absolute(request.rtl_file).string());
  return c;
}

// The contract check on Verilator's elaborated view of the top module: the parameters as given, before the
// block is Verilated.
void check_ports(const toolchain& t, const user_rtl_request& request, const std::string& top,
                 const std::vector<std::string>& gargs, const fs::path& scratch, user_rtl_build& b) {
  const std::string xml = (scratch / "ports.xml").string(), log = (scratch / "build.log").string();
  const auto c = verilator_command(t, request, top, gargs, scratch / "src", {"--xml-only", "--xml-output", xml});
  if (wait_for(spawn(c, log)) != 0)
    throw core::config_error("verify-rtl --rtl " + request.rtl_file + ": Verilator cannot elaborate module " + top +
                             " (--top names the top module):\n" + log_tail(log, 30));
  const rtl_top_module module = parse_verilator_xml(read_text(xml), request.rtl_file);
  b.notes = check_rtl_contract(rtl_contract(request.block), module, request.rtl_file, top);
  b.parameters = module.parameters;
}

void compile_object(const toolchain& t, const user_rtl_request& request, const fs::path& scratch,
                    const fs::path& runtime) {
  const fs::path obj = scratch / "obj";
  std::string unity = "// Every C++ file Verilator wrote, as one translation unit.\n";
  std::vector<std::string> units;
  for (const auto& e : fs::directory_iterator(obj))
    if (e.path().extension() == ".cpp") units.push_back(e.path().filename().string());
  std::sort(units.begin(), units.end());
  for (const std::string& u : units) unity += "#include \"" + u + "\"\n";
  write_text(scratch / "Vuser__unity.cpp", unity);
  std::string block_define = request.block;
  std::transform(block_define.begin(), block_define.end(), block_define.begin(), ::toupper);
  std::vector<std::string> model{t.cxx}, shim{t.cxx};
  for (const std::string& f : cxx_flags(t)) {
    model.push_back(f);
    shim.push_back(f);
  }
  for (const std::string& a : {"-I" + obj.string(), std::string("-c"), (scratch / "Vuser__unity.cpp").string(),
                               std::string("-o"), (scratch / "model.o").string()})
    model.push_back(a);
  for (const std::string& a :
       {"-I" + obj.string(), "-I" + (scratch / "src").string(), "-DFABRICSIM_USER_RTL_BLOCK_" + block_define,
        std::string("-c"), (scratch / "src/rtl/user_rtl_shim.cpp").string(), std::string("-o"),
        (scratch / "shim.o").string()})
    shim.push_back(a);
  const std::string log = (scratch / "build.log").string();
  run_all({model, shim}, log, "compiling " + request.rtl_file);
  std::vector<std::string> link{t.cxx,
                                "-shared",
                                "-o",
                                (scratch / "model.so").string(),
                                (scratch / "model.o").string(),
                                (scratch / "shim.o").string()};
  for (const std::string& unit : runtime_units) link.push_back((runtime / (unit + ".o")).string());
  for (const char* a : {"-Wl,-Bsymbolic", "-lz", "-pthread", "-latomic"}) link.push_back(a);
  run_all({link}, log, "linking " + request.rtl_file);
}

void save_results(const fs::path& dir, const user_rtl_build& b) {
  std::string params, notes;
  for (const auto& [name, value] : b.parameters) params += name + " " + std::to_string(value) + "\n";
  for (const std::string& n : b.notes) notes += n + "\n";
  write_text(dir / "parameters.txt", params);
  write_text(dir / "notes.txt", notes);
}

void load_results(const fs::path& dir, user_rtl_build& b) {
  std::istringstream params(read_text((dir / "parameters.txt").string()));
  std::string name;
  for (uint64_t value = 0; params >> name >> value;) b.parameters[name] = value;
  std::istringstream notes(read_text((dir / "notes.txt").string()));
  for (std::string line; std::getline(notes, line);)
    if (!line.empty()) b.notes.push_back(line);
}

// One build at a time per cache folder (flock on <cache>/lock): a second process asking for the same block
// waits for the first and then finds it, rather than compiling it again on the same cores.
class cache_lock {
 public:
  explicit cache_lock(const fs::path& cache) : m_fd(open((cache / "lock").c_str(), O_CREAT | O_RDWR, 0644)) {
    if (m_fd >= 0) flock(m_fd, LOCK_EX);
  }
  ~cache_lock() {
    if (m_fd >= 0) close(m_fd);  // releases the lock
  }
  cache_lock(const cache_lock&) = delete;
  cache_lock& operator=(const cache_lock&) = delete;

 private:
  int m_fd;
};

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

std::string default_user_rtl_cache() {
  if (!env("FABRICSIM_RTL_CACHE").empty()) return env("FABRICSIM_RTL_CACHE");
  if (!env("XDG_CACHE_HOME").empty()) return env("XDG_CACHE_HOME") + "/fabricsim/rtl";
  if (!env("HOME").empty()) return env("HOME") + "/.cache/fabricsim/rtl";
  throw core::config_error("verify-rtl --rtl: no cache folder: set --rtl-cache, FABRICSIM_RTL_CACHE or HOME");
}

user_rtl_build build_user_rtl(const user_rtl_request& request) {
  rtl_contract(request.block);  // a block without a contract is refused first
  user_rtl_build b;
  b.top = request.top.empty() ? request.block : request.top;
  if (!std::regex_match(b.top, std::regex("[A-Za-z_][A-Za-z0-9_$]*")))
    throw core::config_error("verify-rtl --top " + b.top + ": not a module name");
  std::error_code ec;
  if (!fs::is_regular_file(request.rtl_file, ec))
    throw core::config_error("verify-rtl --rtl " + request.rtl_file + ": no such file");
  const std::string source = read_text(request.rtl_file);
  const std::vector<std::string> gargs = parameter_args(request.params);
  const fs::path cache = request.cache_dir.empty() ? default_user_rtl_cache() : request.cache_dir;
  fs::create_directories(cache, ec);
  if (ec) throw core::config_error("verify-rtl --rtl-cache " + cache.string() + ": cannot create: " + ec.message());
  const fs::path scratch = cache / ("tmp-" + std::to_string(getpid()));
  fs::remove_all(scratch);
  fs::create_directories(scratch);
  const toolchain t = find_toolchain(scratch);
  const fs::path entry = cache / (request.block + "-" + b.top + "-" + cache_key(request, b.top, gargs, source, t));
  b.entry_dir = entry.string();
  b.shared_object = (entry / "model.so").string();
  std::unique_ptr<cache_lock> lock;
  for (int attempt = 0; attempt < 2; ++attempt) {
    if (fs::exists(entry / "model.so")) {
      fs::remove_all(scratch);
      load_results(entry, b);
      b.reused = true;
      return b;
    }
    if (!lock) lock = std::make_unique<cache_lock>(cache);  // then look again: it may have been built meanwhile
  }
  for (size_t i = 0; i < user_rtl_sources_count; ++i)
    write_text(scratch / "src" / user_rtl_sources[i].path, user_rtl_sources[i].text);
  auto start = std::chrono::steady_clock::now();
  check_ports(t, request, b.top, gargs, scratch, b);
  const std::string log = (scratch / "build.log").string();
  run_all({verilator_command(
              t, request, b.top, gargs, scratch / "src",
              {"--cc", "--trace-fst", "-O3", "--assert", "--Mdir", (scratch / "obj").string(), "--prefix", "Vuser"})},
          log, "Verilating " + request.rtl_file);
  b.verilate_seconds = seconds_since(start);
  start = std::chrono::steady_clock::now();
  const fs::path runtime = ensure_runtime(t, cache, b.runtime_built);
  compile_object(t, request, scratch, runtime);
  b.compile_seconds = seconds_since(start);
  save_results(scratch, b);
  publish(scratch, entry);
  return b;
}

void clear_user_rtl() {
  for (const std::string& block : nic::user_rtl_fabric_blocks()) nic::set_user_block(block, nullptr);
}

const char* user_rtl_size_parameter(const std::string& block) {
  if (block == "reorder_tracker") return "Window";
  if (block == "cnp_gen") return "Flows";
  if (block == "dcqcn_rp") return "";
  throw core::config_error("user RTL: block " + block + " has no size parameter");
}

nic::user_rtl_provider user_rtl_provider_for(const std::string& block, const std::string& file, const std::string& top,
                                             const std::string& cache_dir, const std::string& origin,
                                             std::ostream& log) {
  rtl_contract(block);  // a block without a contract is refused first, naming those with one
  const std::string size_name = user_rtl_size_parameter(block);
  auto built = std::make_shared<std::map<uint32_t, std::shared_ptr<const nic::user_rtl_library>>>();
  std::ostream* out = &log;
  return [block, file, top, cache_dir, origin, size_name, built, out](uint32_t size) {
    auto& library = (*built)[size];
    if (!library) {
      const std::string value = std::to_string(size);
      std::vector<std::string> params;  // the size, for a block that has one
      if (!size_name.empty()) params.push_back(size_name + "=" + value);
      const user_rtl_build b = build_user_rtl({block, file, top, params, cache_dir});
      if (!size_name.empty() && (b.parameters.count(size_name) == 0 || b.parameters.at(size_name) != size))
        throw core::config_error(origin + ": module " + b.top + " did not take " + size_name + " " + value);
      *out << "fabricsim: user RTL " << block << " " << file << " (module " << b.top
           << (size_name.empty() ? "" : ", " + size_name + " " + value)
           << "): " << (b.reused ? "reused from " : "compiled into ") << b.entry_dir << '\n';
      library = nic::user_rtl_library::open(b.shared_object, block);
    }
    return library;
  };
}

void use_user_rtl_block(const std::string& block, const std::string& file, const std::string& top,
                        const std::string& origin, std::ostream& log) {
  const auto& blocks = nic::user_rtl_fabric_blocks();
  if (std::find(blocks.begin(), blocks.end(), block) == blocks.end()) {
    std::string names;
    for (const std::string& b : blocks) names += (names.empty() ? "" : ", ") + b;
    throw core::config_error(origin + ": block " + block + " cannot run in a fabric yet; blocks that can: " + names);
  }
  std::error_code ec;
  if (!fs::is_regular_file(file, ec)) throw core::config_error(origin + ": no such file " + file);
  nic::set_user_block(block, user_rtl_provider_for(block, file, top, "", origin, log));
}

}  // namespace fabricsim::testbench
