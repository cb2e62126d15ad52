// The mutant generator of `verify-rtl --mutate` (testbench/rtl_mutate_gen.h) on a small fixed module: the
// exact mutant list, worked out by hand from the operator table in the header (comments, part-select bounds
// and the module header are never mutated), the single-mutant text, the schema's selector for every
// mutant, the seeded sample and the parse error's position. And the planted-bug patches of the shipped blocks
// (rtl/mutants/<block>/<N>.patch) are generated mutant N of rtl/<block>.sv, byte for byte, and apply as
// unified diffs: a hand edit, or an RTL change that moved the mutant, fails here.
#include "testbench/rtl_mutate_gen.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "sc_models/core/params.h"

namespace rtl_mutate_gen_test {

using fabricsim::testbench::rtl_mutation_source;
using fabricsim::testbench::sample_rtl_mutants;

const std::string small_module =
    "module m (input logic clk_i, input logic [3:0] a, input logic b, output logic [3:0] y, output logic z);\n"
    "  // a comment with a < b & c, which is not code\n"
    "  assign z = a[1:0] != 2'd3;\n"
    "  always_comb begin\n"
    "    if (b) y = a + 4'd1;\n"
    "    else y = '0;\n"
    "  end\n"
    "endmodule\n";

using row = std::tuple<std::string, uint32_t, uint32_t, std::string, std::string>;

TEST(rtl_mutate_gen, small_module_gives_the_mutants_worked_out_by_hand) {
  const rtl_mutation_source source(small_module, "small.sv", "m");
  EXPECT_EQ(source.module(), "m");
  std::vector<row> got;
  for (const auto& m : source.mutants()) got.emplace_back(m.op, m.line, m.column, m.original, m.replacement);
  const std::vector<row> expected{
      // != against the other five relational operators, the whole comparison replaced in parentheses.
      {"relational", 3, 14, "a[1:0] != 2'd3", "(a[1:0] < 2'd3)"},
      {"relational", 3, 14, "a[1:0] != 2'd3", "(a[1:0] <= 2'd3)"},
      {"relational", 3, 14, "a[1:0] != 2'd3", "(a[1:0] > 2'd3)"},
      {"relational", 3, 14, "a[1:0] != 2'd3", "(a[1:0] >= 2'd3)"},
      {"relational", 3, 14, "a[1:0] != 2'd3", "(a[1:0] == 2'd3)"},
      // 2'd3: 0, 3 + 1 wraps to 0 (already there), 3 - 1 = 2. The bounds 1 and 0 of a[1:0] stay.
      {"constant", 3, 24, "2'd3", "2'd0"},
      {"constant", 3, 24, "2'd3", "2'd2"},
      {"condition", 5, 9, "b", "!(b)"},
      {"condition", 5, 9, "b", "1'b1"},
      {"condition", 5, 9, "b", "1'b0"},
      {"assignment", 5, 12, "y = a + 4'd1;", ";"},
      {"arithmetic", 5, 16, "a + 4'd1", "(a - 4'd1)"},
      // 4'd1: 0, 2, and 1 - 1 = 0 again.
      {"constant", 5, 20, "4'd1", "4'd0"},
      {"constant", 5, 20, "4'd1", "4'd2"},
      {"assignment", 6, 10, "y = '0;", ";"},
      {"constant", 6, 14, "'0", "'1"},
  };
  EXPECT_EQ(got, expected);
  for (size_t i = 0; i < source.mutants().size(); ++i) EXPECT_EQ(source.mutants()[i].id, i + 1);
}

TEST(rtl_mutate_gen, a_mutant_alone_and_its_diff) {
  const rtl_mutation_source source(small_module, "small.sv", "m");
  const std::string one = source.apply(1);
  EXPECT_NE(one.find("  assign z = (a[1:0] < 2'd3);\n"), std::string::npos) << one;
  EXPECT_EQ(one.size(), small_module.size() + 1);  // "!=" -> "<" and two parentheses
  EXPECT_EQ(source.diff(11), "--- small.sv:5\n+++ mutant 11 (assignment)\n-    if (b) y = a + 4'd1;\n+    if (b) ;\n");
}

TEST(rtl_mutate_gen, the_schema_holds_every_mutant_asked_for_behind_the_selector) {
  const rtl_mutation_source source(small_module, "small.sv", "m");
  const std::string schema = source.schema({2, 6, 11, 16});
  EXPECT_EQ(schema.rfind("`define SYNTHESIS\n", 0), 0u);
  EXPECT_NE(schema.find("initial fabricsim_mutant_q = $c32(\"fabricsim_mutant_selected()\");"), std::string::npos);
  EXPECT_NE(schema.find("(fabricsim_mutant_q == 32'd2) ? ((a[1:0] <= 2'd3))"), std::string::npos) << schema;
  EXPECT_NE(schema.find("(fabricsim_mutant_q == 32'd6) ? (2'd0) : (2'd3)"), std::string::npos) << schema;
  EXPECT_NE(schema.find("begin if (fabricsim_mutant_q != 32'd11) y = a + 4'd1; end"), std::string::npos) << schema;
  EXPECT_NE(schema.find("(fabricsim_mutant_q == 32'd16) ? ('1) : ('0)"), std::string::npos) << schema;
  EXPECT_EQ(schema.find("32'd3)"), std::string::npos) << "mutant 3 was not asked for";
  // The selector goes after the module header, before the first item.
  EXPECT_LT(schema.find("logic [31:0] fabricsim_mutant_q;"), schema.find("assign z"));
  EXPECT_GT(schema.find("logic [31:0] fabricsim_mutant_q;"), schema.find("output logic z);"));
}

TEST(rtl_mutate_gen, assertions_and_conditional_code_are_left_alone) {
  const std::string text =
      "module m (input logic a, output logic y);\n"
      "  assign y = ~a;\n"
      "`ifndef SYNTHESIS\n"
      "  assign y2 = a & a;\n"
      "`endif\n"
      "endmodule\n";
  const rtl_mutation_source source(text, "c.sv", "");
  ASSERT_EQ(source.mutants().size(), 1u);
  EXPECT_EQ(source.mutants()[0].description, "~ deleted");
}

TEST(rtl_mutate_gen, what_the_parser_cannot_read_is_named_with_its_position) {
  const std::string text =
      "module m (input logic a, output logic y);\n  always_comb begin\n    #5 y = a;\n  end\nendmodule\n";
  try {
    const rtl_mutation_source source(text, "bad.sv", "m");
    FAIL() << "accepted a delay";
  } catch (const fabricsim::core::config_error& e) {
    EXPECT_NE(std::string(e.what()).find("bad.sv:3:5: cannot read a statement starting with '#'"), std::string::npos)
        << e.what();
  }
  EXPECT_THROW(rtl_mutation_source(text, "bad.sv", "other"), fabricsim::core::config_error);
}

TEST(rtl_mutate_gen, the_sample_is_seeded_sorted_and_without_repeats) {
  const auto a = sample_rtl_mutants(109, 10, 5), b = sample_rtl_mutants(109, 10, 5);
  EXPECT_EQ(a, b);
  ASSERT_EQ(a.size(), 10u);
  EXPECT_TRUE(std::is_sorted(a.begin(), a.end()));
  EXPECT_EQ(std::adjacent_find(a.begin(), a.end()), a.end());
  EXPECT_GE(a.front(), 1u);
  EXPECT_LE(a.back(), 109u);
  EXPECT_NE(a, sample_rtl_mutants(109, 10, 6));
  EXPECT_EQ(sample_rtl_mutants(4, 0, 1), (std::vector<uint32_t>{1, 2, 3, 4}));
  EXPECT_EQ(sample_rtl_mutants(4, 9, 1), (std::vector<uint32_t>{1, 2, 3, 4}));
}

std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

TEST(rtl_mutate_gen, planted_bug_patches_are_generated_mutants) {
  namespace fs = std::filesystem;
  const fs::path root = FABRICSIM_SOURCE_DIR;
  size_t patches = 0;
  for (const char* block : {"reorder_tracker", "cnp_gen", "dcqcn_rp"}) {
    const std::string sv = "rtl/" + std::string(block) + ".sv";
    const std::string text = read_file((root / sv).string());
    const rtl_mutation_source source(text, sv, block);
    size_t of_block = 0;
    for (const auto& e : fs::directory_iterator(root / "rtl/mutants" / block)) {
      const std::string name = e.path().filename().string();
      std::smatch m;
      ASSERT_TRUE(std::regex_match(name, m, std::regex("([1-9][0-9]*)\\.patch"))) << e.path();
      const uint32_t id = static_cast<uint32_t>(std::stoul(m[1]));
      ASSERT_LE(id, source.mutants().size()) << e.path() << ": " << sv << " has no mutant " << id;
      EXPECT_EQ(read_file(e.path().string()), source.patch(id, sv, block))
          << e.path() << " is not generated mutant " << id << " of " << sv
          << ": regenerate it with `fabricsim verify-rtl --block " << block << " --mutant-patch " << id
          << "`, or pick the id again if the RTL moved (tests/cli/lockstep_test.cpp and docs/verification.md name "
             "the ids)";
      // The diff's - and + lines are the mutant's text, once each: the source line and the line with the
      // replacement in place of the original.
      const std::string patch = source.patch(id, sv, block);
      const auto& mutant = source.mutants()[id - 1];
      EXPECT_NE(patch.find("\n-"), std::string::npos);
      EXPECT_NE(patch.find("\n+"), std::string::npos);
      EXPECT_NE(patch.find(mutant.description), std::string::npos);
      ++of_block;
    }
    EXPECT_GE(of_block, 3u) << block;
    patches += of_block;
  }
  EXPECT_GE(patches, 9u);
}

TEST(rtl_mutate_gen, a_patch_is_a_unified_diff_with_context) {
  const rtl_mutation_source source(small_module, "small.sv", "m");
  // Mutant 11 deletes the assignment of line 5: three lines of context before (lines 2-4) and after (6-8).
  const std::string p = source.patch(11, "rtl/m.sv", "m");
  const size_t diff = p.find("--- a/rtl/m.sv\n+++ b/rtl/m.sv\n");
  ASSERT_NE(diff, std::string::npos) << p;
  EXPECT_EQ(p.substr(diff),
            "--- a/rtl/m.sv\n+++ b/rtl/m.sv\n@@ -2,7 +2,7 @@\n"
            "   // a comment with a < b & c, which is not code\n"
            "   assign z = a[1:0] != 2'd3;\n"
            "   always_comb begin\n"
            "-    if (b) y = a + 4'd1;\n"
            "+    if (b) ;\n"
            "     else y = '0;\n"
            "   end\n"
            " endmodule\n");
  EXPECT_EQ(p.rfind("Mutant 11 of rtl/m.sv (generated: mutant 11 of verify-rtl --block m --mutate", 0), 0u) << p;
  // The first line's mutant: no context before it is clipped to the file's start.
  const std::string first = source.patch(1, "rtl/m.sv", "m");
  EXPECT_NE(first.find("@@ -1,6 +1,6 @@\n"), std::string::npos) << first;
}

}  // namespace rtl_mutate_gen_test
