// Transaction recording of the RTL blocks inside a full-system run: one text file per block type, one line
// per transaction, each line naming the block instance by a number declared on its `new` line. Written for
// `fabricsim verify-rtl --replay` (testbench/rtl_replay.h); the format is in docs/verification.md.
#pragma once

#include <cstdint>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "sc_models/core/params.h"

namespace fabricsim::core {

// Owns the recording directory of one run. While the run goes, each block type's transactions stream, in
// simulation order, into a part file (`DIR/.<block>.part<K>`, K the scale-out rank), opened when the first
// instance of the type appears, so a run without DCQCN writes no dcqcn_rp.txt. At the end the parts are
// read back (take_records) and written (write_recording) as `DIR/<block>.txt` with each instance's lines
// together, instances in name order and numbered in that order: a canonical form that is the same whether
// one process recorded every instance or several processes each recorded their own (docs/scale_out.md).
// Not thread-safe: one per run.
class transaction_log {
 public:
  // Creates `dir` (and its parents) if needed; core::config_error naming it when it cannot. `part` names
  // this process's part files (its scale-out rank).
  explicit transaction_log(std::string dir, int part = 0);
  transaction_log(const transaction_log&) = delete;
  transaction_log& operator=(const transaction_log&) = delete;

  // Declares an instance: writes "new <id> <instance> <params>" and returns the id its lines carry.
  uint64_t add_instance(const std::string& block, const std::string& instance, const std::string& params);
  // The file of a block type, for the instance adapters' transaction lines.
  std::ostream& stream(const std::string& block);
  // Flushes every file; core::config_error naming the file when a write failed.
  void flush();
  const std::string& dir() const { return m_dir; }
  // Closes and reads back this process's part files, removes them, and returns their instances as records
  // (block, name, parameters, lines without the id) for write_recording; config_error naming a file that
  // cannot be written or read.
  std::vector<uint8_t> take_records();
  // Writes the records of every process (take_records' results, any order) as the canonical files.
  static void write_recording(const std::string& dir, const std::vector<std::vector<uint8_t>>& records);
  // One process: take_records and write_recording.
  void finish() { write_recording(m_dir, {take_records()}); }

 private:
  struct file {
    std::ofstream out;
    std::string path;
  };
  file& open(const std::string& block);

  std::string m_dir;
  int m_part = 0;
  std::map<std::string, file> m_files;
  uint64_t m_next_id = 0;
};

// Writes every field of a params struct as "key=value" tokens, as its visit() lists them (doubles to 17
// significant digits, so they read back bit for bit; strings must not contain blanks).
class param_writer : public param_visitor {
 public:
  void field(const field_info& f, uint64_t& v) override { add(f, std::to_string(v)); }
  void field(const field_info& f, double& v) override;
  void field(const field_info& f, bool& v) override { add(f, v ? "true" : "false"); }
  void field(const field_info& f, std::string& v) override;
  const std::string& text() const { return m_text; }

 private:
  void add(const field_info& f, const std::string& v) { m_text += (m_text.empty() ? "" : " ") + std::string(f.name) + "=" + v; }
  std::string m_text;
};

template <class Params>
std::string format_param_fields(const Params& params) {
  Params copy = params;  // visit() is not const
  param_writer w;
  copy.visit(w);
  return w.text();
}

// Reads "key=value" tokens back into a params struct: every field must be present, no other key may be.
// Throws config_error("<where>: ...") naming the key for a missing, unknown or malformed field.
class param_reader : public param_visitor {
 public:
  param_reader(const std::map<std::string, std::string>& values, std::string where)
      : m_values(values), m_where(std::move(where)) {}
  void field(const field_info& f, uint64_t& v) override;
  void field(const field_info& f, double& v) override;
  void field(const field_info& f, bool& v) override;
  void field(const field_info& f, std::string& v) override { v = get(f); }
  // After visit(): every key was a field.
  void check_all_used() const;

 private:
  const std::string& get(const field_info& f);
  const std::map<std::string, std::string>& m_values;
  std::string m_where;
  size_t m_used = 0;
};

template <class Params>
Params parse_param_fields(const std::map<std::string, std::string>& values, const std::string& where) {
  Params params;
  param_reader r(values, where);
  params.visit(r);
  r.check_all_used();
  return params;
}

}  // namespace fabricsim::core
