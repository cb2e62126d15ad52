// The `fabricsim` Python module: run a scenario (a file, a shipped name, or a dict) with key overrides and
// get its JSON report back as a dict. Each run is a child process of the module, the fabricsim binary built
// next to it: SystemC elaborates one design per process, so a script can run as many scenarios as it likes,
// and a fault in a model cannot take the interpreter down. docs/python.md.
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <pybind11/pybind11.h>

namespace py = pybind11;

#ifndef FABRICSIM_BINARY
#define FABRICSIM_BINARY "fabricsim"
#endif

namespace {

// $FABRICSIM_BINARY when set, else the binary this module was built with.
std::string binary() {
  const char* env = std::getenv("FABRICSIM_BINARY");
  return env && *env ? env : FABRICSIM_BINARY;
}

std::string read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// A --set value as the scenario loader reads it: Python's True/False as YAML's true/false, numbers and
// strings as written.
std::string set_value(const py::handle& v) {
  if (py::isinstance<py::bool_>(v)) return v.cast<bool>() ? "true" : "false";
  if (py::isinstance<py::str>(v)) return v.cast<std::string>();
  return py::str(v).cast<std::string>();
}

struct child_result {
  int exit_code = 0;
  int signal = 0;
  std::string output;  // stdout and stderr
};

// Runs the binary with `args` and waits, without the GIL: other Python threads (a thread pool running
// several scenarios) go on meanwhile.
child_result run_binary(const std::vector<std::string>& args, const std::string& log) {
  std::vector<std::string> argv_s = {binary()};
  argv_s.insert(argv_s.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& a : argv_s) argv.push_back(a.data());
  argv.push_back(nullptr);
  child_result r;
  {
    py::gil_scoped_release unlocked;
    const pid_t pid = fork();
    if (pid < 0) throw std::runtime_error(std::string("fabricsim.run: fork failed: ") + std::strerror(errno));
    if (pid == 0) {
      std::FILE* out = std::freopen(log.c_str(), "w", stdout);
      if (out) dup2(fileno(stdout), STDERR_FILENO);
      execv(argv[0], argv.data());
      std::fprintf(stderr, "cannot run %s: %s", argv[0], std::strerror(errno));
      _exit(127);
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (WIFSIGNALED(status)) r.signal = WTERMSIG(status);
    else r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 3;
  }
  r.output = read_all(log);
  return r;
}

// A private directory for one run's files, removed afterwards.
struct scratch_dir {
  std::string path;
  scratch_dir() {
    const char* tmp = std::getenv("TMPDIR");
    std::string templ = std::string(tmp && *tmp ? tmp : "/tmp") + "/fabricsim_py_XXXXXX";
    if (!mkdtemp(templ.data())) throw std::runtime_error(std::string("fabricsim.run: mkdtemp: ") + std::strerror(errno));
    path = templ;
  }
  ~scratch_dir() {
    for (const char* f : {"/scenario.yaml", "/report.json", "/log.txt"}) std::remove((path + f).c_str());
    rmdir(path.c_str());
  }
};

py::dict run(const py::object& scenario, const py::object& set, const py::object& seed) {
  py::module_ json = py::module_::import("json");
  scratch_dir dir;
  std::string file;
  if (py::isinstance<py::dict>(scenario)) {
    // JSON is YAML: the dict goes to the loader as a flow mapping, so every key is checked as in a file.
    file = dir.path + "/scenario.yaml";
    std::ofstream(file) << json.attr("dumps")(scenario).cast<std::string>() << '\n';
  } else if (py::isinstance<py::str>(scenario) || py::hasattr(scenario, "__fspath__")) {
    file = py::str(py::module_::import("os").attr("fspath")(scenario)).cast<std::string>();
  } else {
    throw py::type_error("fabricsim.run: the scenario is a path, a shipped scenario's name or a dict, not " +
                         py::str(py::type::of(scenario)).cast<std::string>());
  }
  std::vector<std::string> args = {"run", file, "--quiet", "--json", dir.path + "/report.json"};
  if (!set.is_none())
    for (const auto& [key, value] : set.cast<py::dict>()) {
      args.push_back("--set");
      args.push_back(py::str(key).cast<std::string>() + "=" + set_value(value));
    }
  if (!seed.is_none()) {
    args.push_back("--seed");
    args.push_back(py::str(seed).cast<std::string>());
  }
  const child_result r = run_binary(args, dir.path + "/log.txt");
  std::string message = r.output;
  const std::string prefix = "fabricsim: error: ";
  if (message.rfind(prefix, 0) == 0) message.erase(0, prefix.size());
  while (!message.empty() && message.back() == '\n') message.pop_back();
  if (py::isinstance<py::dict>(scenario))  // the scratch file is no name the caller knows
    for (size_t at; (at = message.find(file)) != std::string::npos;) message.replace(at, file.size(), "<dict>");
  if (r.signal != 0)
    throw std::runtime_error("fabricsim.run: the run was killed by signal " + std::to_string(r.signal) + ": " + message);
  if (r.exit_code == 2) throw py::value_error(message);  // the scenario or a key: the message names it
  // 1: ran, not verified; 4: ran, no byte checked (no payload landed in time): the report says which.
  if (r.exit_code != 0 && r.exit_code != 1 && r.exit_code != 4)
    throw std::runtime_error("fabricsim.run: exit " + std::to_string(r.exit_code) + ": " + message);
  const std::string report = read_all(dir.path + "/report.json");
  if (report.empty()) throw std::runtime_error("fabricsim.run: the run wrote no report: " + message);
  return json.attr("loads")(report).cast<py::dict>();
}

}  // namespace

PYBIND11_MODULE(fabricsim, m) {
  m.doc() = "fabricsim: run network-device scenarios and get their JSON reports (docs/python.md)";
  m.def("run", &run, py::arg("scenario"), py::kw_only(), py::arg("set") = py::none(), py::arg("seed") = py::none(),
        "Run a scenario and return its report (docs/report.md) as a dict.\n\n"
        "scenario: a YAML file, a shipped scenario's name ('allreduce_ring'), or a dict with the file's layout.\n"
        "set: {'key.path': value} overrides, as `fabricsim run --set` (e.g. {'topology.spines': 2}).\n"
        "seed: the seed of every random stream.\n"
        "Raises ValueError for a bad scenario or key (the message names it), RuntimeError for a failed run.\n"
        "Each call runs in its own child process, the fabricsim binary; it releases the GIL while it waits.");
  m.attr("binary") = binary();
}
