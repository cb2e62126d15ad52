// Writing a run's JSON report in large pieces.
#include "testbench/report_json.h"

#include <memory>
#include <string>

namespace fabricsim::testbench {

namespace {
// The serializer's output: characters gathered in a buffer, written to the stream a piece at a time.
class piecewise_output : public nlohmann::detail::output_adapter_protocol<char> {
 public:
  explicit piecewise_output(std::ostream& out) : m_out(out) { m_buffer.reserve(k_piece); }
  void write_character(char c) override {
    m_buffer.push_back(c);
    if (m_buffer.size() >= k_piece) flush();
  }
  void write_characters(const char* s, std::size_t length) override {
    m_buffer.append(s, length);
    if (m_buffer.size() >= k_piece) flush();
  }
  void flush() {
    m_out.write(m_buffer.data(), std::streamsize(m_buffer.size()));
    m_buffer.clear();
  }

 private:
  static constexpr std::size_t k_piece = std::size_t(1) << 20;
  std::ostream& m_out;
  std::string m_buffer;
};
}  // namespace

void write_pretty_json(std::ostream& out, const nlohmann::json& j) {
  auto output = std::make_shared<piecewise_output>(out);
  // What operator<< does with std::setw(2): pretty, indented by two of the stream's fill character, UTF-8
  // kept as it is (ensure_ascii false), invalid UTF-8 an error.
  nlohmann::detail::serializer<nlohmann::json> s(output, out.fill());
  s.dump(j, true, false, 2);
  output->flush();
}

}  // namespace fabricsim::testbench
