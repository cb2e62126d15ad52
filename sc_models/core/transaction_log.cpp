// Transaction recording of the RTL blocks: the per-block files and the params codec.
#include "sc_models/core/transaction_log.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <stdexcept>

namespace fabricsim::core {

transaction_log::transaction_log(std::string dir, int part) : m_dir(std::move(dir)), m_part(part) {
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
  f.path = m_dir + "/." + block + ".part" + std::to_string(m_part);
  f.out.open(f.path);
  if (!f.out) throw config_error("run.record_rtl_dir: cannot write " + f.path + ": " + std::strerror(errno));
  return f;
}

namespace {

void put_text(std::vector<uint8_t>& out, const std::string& v) {
  const uint64_t n = v.size();
  const auto* b = reinterpret_cast<const uint8_t*>(&n);
  out.insert(out.end(), b, b + sizeof n);
  out.insert(out.end(), v.begin(), v.end());
}

std::string get_text(const std::vector<uint8_t>& in, size_t& at) {
  uint64_t n = 0;
  if (in.size() - at < sizeof n) throw std::logic_error("transaction recording: truncated record");
  std::memcpy(&n, in.data() + at, sizeof n);
  at += sizeof n;
  if (in.size() - at < n) throw std::logic_error("transaction recording: truncated record");
  std::string v(reinterpret_cast<const char*>(in.data() + at), size_t(n));
  at += size_t(n);
  return v;
}

// One instance's recording: its `new` line's name and what follows the name, and its transaction lines
// without their id ("op" + what followed the id), in order.
struct instance_record {
  std::string block, name, rest, body;
};

}  // namespace

std::vector<uint8_t> transaction_log::take_records() {
  std::vector<uint8_t> out;
  for (auto& [block, f] : m_files) {
    f.out.close();
    if (!f.out) throw config_error("run.record_rtl_dir: write to " + f.path + " failed");
    std::ifstream in(f.path);
    if (!in) throw config_error("run.record_rtl_dir: cannot read back " + f.path + ": " + std::strerror(errno));
    std::map<std::string, instance_record> by_id;  // lines name their instance by the id of its `new` line
    std::vector<std::string> order;
    for (std::string line; std::getline(in, line);) {
      const size_t a = line.find(' ');
      const size_t b = a == std::string::npos ? std::string::npos : line.find(' ', a + 1);
      const std::string op = line.substr(0, a), id = a == std::string::npos ? "" : line.substr(a + 1, b - a - 1);
      const std::string rest = b == std::string::npos ? "" : line.substr(b);
      if (op == "new") {
        const size_t c = rest.find(' ', 1);
        order.push_back(id);
        by_id[id] = {block, rest.substr(1, c == std::string::npos ? std::string::npos : c - 1),
                     c == std::string::npos ? "" : rest.substr(c), ""};
        continue;
      }
      auto it = by_id.find(id);
      if (it == by_id.end()) throw std::logic_error(f.path + ": a line of undeclared instance " + id + ": " + line);
      it->second.body += op + rest + '\n';
    }
    for (const std::string& id : order) {
      const instance_record& r = by_id[id];
      for (const std::string* v : {&r.block, &r.name, &r.rest, &r.body}) put_text(out, *v);
    }
    in.close();
    std::remove(f.path.c_str());
  }
  m_files.clear();
  return out;
}

void transaction_log::write_recording(const std::string& dir, const std::vector<std::vector<uint8_t>>& records) {
  std::vector<instance_record> all;
  for (const std::vector<uint8_t>& part : records)
    for (size_t at = 0; at < part.size();) {
      instance_record r;
      for (std::string* v : {&r.block, &r.name, &r.rest, &r.body}) *v = get_text(part, at);
      all.push_back(std::move(r));
    }
  std::stable_sort(all.begin(), all.end(), [](const instance_record& x, const instance_record& y) {
    return x.block != y.block ? x.block < y.block : x.name < y.name;
  });
  std::ofstream out;
  std::string path;
  uint64_t id = 0;
  for (size_t i = 0; i < all.size(); ++i) {
    const instance_record& r = all[i];
    if (i == 0 || r.block != all[i - 1].block) {
      if (out.is_open()) out.close();
      if (!path.empty() && !out) throw config_error("run.record_rtl_dir: write to " + path + " failed");
      path = dir + "/" + r.block + ".txt";
      out.open(path);
      if (!out) throw config_error("run.record_rtl_dir: cannot write " + path + ": " + std::strerror(errno));
      out << "# fabricsim RTL transaction recording v1, block " << r.block << " (replay: fabricsim verify-rtl --block "
          << r.block << " --replay " << path << ")\n";
      id = 0;
    }
    out << "new " << id << ' ' << r.name << r.rest << '\n';
    for (size_t at = 0; at < r.body.size();) {
      const size_t nl = r.body.find('\n', at);
      const size_t sp = r.body.find(' ', at);
      const size_t op_end = sp < nl ? sp : nl;
      out << r.body.substr(at, op_end - at) << ' ' << id << r.body.substr(op_end, nl + 1 - op_end);
      at = nl + 1;
    }
    ++id;
  }
  if (out.is_open()) out.close();
  if (!path.empty() && !out) throw config_error("run.record_rtl_dir: write to " + path + " failed");
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
