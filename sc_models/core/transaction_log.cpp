// Transaction recording of the RTL blocks: the per-block files and the params codec.
#include "sc_models/core/transaction_log.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>

namespace fabricsim::core {

transaction_log::transaction_log(std::string dir) : m_dir(std::move(dir)) {
  std::error_code ec;
  std::filesystem::create_directories(m_dir, ec);
  if (ec || !std::filesystem::is_directory(m_dir))
    throw config_error("run.record_rtl_dir " + m_dir + ": cannot create the directory" +
                       (ec ? ": " + ec.message() : std::string()));
}

transaction_log::file& transaction_log::open(const std::string& block) {
  auto it = m_files.find(block);
  if (it != m_files.end()) return it->second;
  file& f = m_files[block];
  f.path = m_dir + "/" + block + ".txt";
  f.out.open(f.path);
  if (!f.out) throw config_error("run.record_rtl_dir: cannot write " + f.path + ": " + std::strerror(errno));
  f.out << "# fabricsim RTL transaction recording v1, block " << block
        << " (replay: fabricsim verify-rtl --block " << block << " --replay " << f.path << ")\n";
  return f;
}

uint64_t transaction_log::add_instance(const std::string& block, const std::string& instance,
                                       const std::string& params) {
  const uint64_t id = m_next_id++;
  open(block).out << "new " << id << ' ' << instance << ' ' << params << '\n';
  return id;
}

std::ostream& transaction_log::stream(const std::string& block) { return open(block).out; }

void transaction_log::flush() {
  for (auto& [block, f] : m_files) {
    f.out.flush();
    if (!f.out) throw config_error("run.record_rtl_dir: write to " + f.path + " failed");
  }
}

void param_writer::field(const field_info& f, double& v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  add(f, buf);
}

void param_writer::field(const field_info& f, std::string& v) {
  if (v.empty() || v.find_first_of(" \t\n=") != std::string::npos)
    throw config_error(std::string("transaction recording: field ") + f.name + " \"" + v +
                       "\" cannot be recorded (empty or contains a blank or '=')");
  add(f, v);
}

const std::string& param_reader::get(const field_info& f) {
  auto it = m_values.find(f.name);
  if (it == m_values.end()) throw config_error(m_where + ": parameter " + f.name + " missing");
  ++m_used;
  return it->second;
}

void param_reader::field(const field_info& f, uint64_t& v) {
  const std::string& text = get(f);
  char* end = nullptr;
  errno = 0;
  v = std::strtoull(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || errno != 0 || text[0] == '-')
    throw config_error(m_where + ": parameter " + f.name + "=" + text + " is not an unsigned integer");
}

void param_reader::field(const field_info& f, double& v) {
  const std::string& text = get(f);
  char* end = nullptr;
  v = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0') throw config_error(m_where + ": parameter " + f.name + "=" + text + " is not a number");
}

void param_reader::field(const field_info& f, bool& v) {
  const std::string& text = get(f);
  if (text != "true" && text != "false")
    throw config_error(m_where + ": parameter " + f.name + "=" + text + " is not true or false");
  v = text == "true";
}

void param_reader::check_all_used() const {
  if (m_used == m_values.size()) return;
  throw config_error(m_where + ": " + std::to_string(m_values.size() - m_used) + " unknown parameter(s)");
}

}  // namespace fabricsim::core
