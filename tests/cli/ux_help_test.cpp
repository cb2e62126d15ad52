// Every example the help pages show is a command line the parser accepts: each `fabricsim ...` line of
// `fabricsim --help` and of every subcommand's `--help` goes through the real parser (testbench/cli.cpp's
// fabricsim_cli with parse_only), and every scenario, trace or other input file it names exists in the
// source tree. A renamed flag or a moved scenario breaks the help page's promise and fails here.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sstream>
#include <string>
#include <vector>

#include "testbench/cli.h"
#include "tests/support/run_cli.h"

namespace {

using fabricsim::test::fabricsim;
using fabricsim::test::run_result;

const std::string source_dir = FABRICSIM_SOURCE_DIR;

std::string trim(const std::string& s) {
  const size_t b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t") - b + 1);
}

// The example command lines of a help page: every line (or `&&`-joined part of one) that starts with
// `fabricsim`, after `Example:`; a trailing remark in parentheses and a shell redirection are cut.
std::vector<std::string> examples(const std::string& help) {
  std::vector<std::string> out;
  std::istringstream in(help);
  std::string line;
  while (std::getline(in, line)) {
    std::string rest = line;
    const size_t ex = rest.find("xample:");
    if (ex != std::string::npos) rest = rest.substr(ex + 7);
    rest = trim(rest);
    if (rest.compare(0, 10, "fabricsim ") != 0 && rest != "fabricsim") continue;
    size_t pos = 0;
    while (pos != std::string::npos) {
      const size_t amp = rest.find("&&", pos);
      std::string part = trim(rest.substr(pos, amp == std::string::npos ? std::string::npos : amp - pos));
      pos = amp == std::string::npos ? amp : amp + 2;
      const size_t paren = part.find("  (");
      if (paren != std::string::npos) part = trim(part.substr(0, paren));
      const size_t redirect = part.find(" > ");
      if (redirect != std::string::npos) part = trim(part.substr(0, redirect));
      if (part.compare(0, 9, "fabricsim") == 0) out.push_back(part);
    }
  }
  return out;
}

std::vector<std::string> words(const std::string& cmd) {
  std::istringstream in(cmd);
  std::vector<std::string> w;
  std::string s;
  while (in >> s) w.push_back(s);
  return w;
}

bool exists(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0;
}

TEST(ux_help, every_example_in_the_help_pages_parses_and_names_existing_files) {
  // The examples are written to be run from the checkout (as the README's tour does).
  ASSERT_EQ(chdir(source_dir.c_str()), 0) << source_dir;
  size_t checked = 0;
  for (const char* cmd : {"", "run", "replay", "keys", "verify-rtl", "pcie-bench", "list-scenarios", "explain", "plot",
                          "export-topology"}) {
    const run_result help = fabricsim(std::string(cmd) + " --help");
    ASSERT_EQ(help.exit_code, 0) << cmd << help.output;
    const std::vector<std::string> ex = examples(help.output);
    EXPECT_FALSE(ex.empty()) << "`fabricsim " << cmd << " --help` shows no example:\n" << help.output;
    for (const std::string& line : ex) {
      std::vector<std::string> w = words(line);
      // Inputs the example names: scenarios and traces, relative to the checkout (where the README runs them).
      for (const std::string& arg : w) {
        if (arg.rfind("testbench/", 0) == 0 || arg.rfind("../shared/", 0) == 0 || arg.rfind("tests/", 0) == 0) {
          EXPECT_TRUE(exists(source_dir + "/" + arg))
              << "`" << line << "` (in " << cmd << " --help) names " << arg << ", which does not exist";
        }
      }
      std::vector<char*> argv;
      for (std::string& a : w) argv.push_back(a.data());
      argv.push_back(nullptr);
      testing::internal::CaptureStderr();
      testing::internal::CaptureStdout();
      const int rc = fabricsim_cli(int(w.size()), argv.data(), true);
      const std::string said = testing::internal::GetCapturedStdout() + testing::internal::GetCapturedStderr();
      EXPECT_EQ(rc, 0) << "`" << line << "` (in `fabricsim " << cmd << " --help`) does not parse:\n" << said;
      ++checked;
    }
  }
  // The top-level page alone lists more than a dozen.
  EXPECT_GE(checked, 20u);
}

// The extraction itself: a misspelt flag in an example is caught (the test above can fail).
TEST(ux_help, a_bad_example_fails_to_parse) {
  const std::vector<std::string> ex =
      examples("Example: fabricsim run a.yaml --jsn out.json && fabricsim plot out.json  (a remark)\n");
  ASSERT_EQ(ex.size(), 2u);
  EXPECT_EQ(ex[1], "fabricsim plot out.json");
  std::vector<std::string> w = words(ex[0]);
  std::vector<char*> argv;
  for (std::string& a : w) argv.push_back(a.data());
  argv.push_back(nullptr);
  testing::internal::CaptureStderr();
  testing::internal::CaptureStdout();
  const int rc = fabricsim_cli(int(w.size()), argv.data(), true);
  testing::internal::GetCapturedStdout();
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_NE(rc, 0);
  EXPECT_NE(err.find("--jsn"), std::string::npos) << err;
}

}  // namespace
