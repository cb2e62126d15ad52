// Tests of the scenario-file mapping (testbench/config_yaml): YAML onto a params struct, `--set` overrides,
// and the key listing, on a test-local params struct with one field of each supported type.
#include "testbench/config_yaml.h"
#include "tests/support/error_of.h"

#include <functional>
#include <string>

#include <gtest/gtest.h>

namespace fabricsim::testbench {
namespace {

using core::config_error;

struct sample_params {
  uint64_t size_bytes = 4096;
  uint64_t count = 3;
  double rate_gbps = 400.0;
  double delay_ns = 10.0;
  bool enabled = true;
  std::string mode = "fast";
  std::string label = "x";
  void visit(core::param_visitor& v) {
    v.field({"size_bytes", "bytes", "buffer size", 64.0, 65536.0}, size_bytes);
    v.field({"count", "", "how many"}, count);
    v.field({"rate_gbps", "Gb/s", "line rate", 1.0, 3200.0}, rate_gbps);
    v.field({"delay_ns", "ns", "extra delay", 0.0}, delay_ns);
    v.field({"enabled", "", "switch it on"}, enabled);
    v.field({"mode", "", "how to run", -std::numeric_limits<double>::infinity(),
             std::numeric_limits<double>::infinity(), {"fast", "slow"}},
            mode);
    v.field({"label", "", "free text"}, label);
  }
};

// Loads `text` as sample.yaml and maps its "s" section.
sample_params load(const std::string& text) {
  const YAML::Node root = YAML::Load(text);
  sample_params p;
  apply_yaml(root["s"], visitor_of(p), "sample.yaml", "s");
  return p;
}

// Loads `text`, applies the overrides, then maps the "s" section with the overrides tracked.
sample_params load_with(const std::string& text, const std::vector<std::string>& sets) {
  YAML::Node root = YAML::Load(text);
  yaml_source source{"sample.yaml", {}};
  for (const auto& s : sets) apply_override(root, s, source);
  sample_params p;
  apply_yaml(static_cast<const YAML::Node&>(root)["s"], visitor_of(p), source, "s");
  return p;
}

using test::error_of;

TEST(config_yaml, applies_every_field_type) {
  const sample_params p = load(R"(s:
  size_bytes: 1500
  count: 0
  rate_gbps: 800.5
  delay_ns: 0
  enabled: false
  mode: slow
  label: hello world
)");
  EXPECT_EQ(p.size_bytes, 1500u);
  EXPECT_EQ(p.count, 0u);
  EXPECT_DOUBLE_EQ(p.rate_gbps, 800.5);
  EXPECT_DOUBLE_EQ(p.delay_ns, 0.0);
  EXPECT_FALSE(p.enabled);
  EXPECT_EQ(p.mode, "slow");
  EXPECT_EQ(p.label, "hello world");
}

TEST(config_yaml, absent_keys_keep_their_values) {
  const sample_params p = load("s:\n  count: 7\n");
  EXPECT_EQ(p.count, 7u);
  EXPECT_EQ(p.size_bytes, 4096u);
  EXPECT_DOUBLE_EQ(p.rate_gbps, 400.0);
  EXPECT_TRUE(p.enabled);
  EXPECT_EQ(p.mode, "fast");
}

TEST(config_yaml, empty_or_missing_section_changes_nothing) {
  EXPECT_EQ(load("s:\n").size_bytes, 4096u);
  EXPECT_EQ(load("other: 1\n").size_bytes, 4096u);
}

TEST(config_yaml, accepts_numbers_in_yaml_spellings) {
  const sample_params p = load("s:\n  rate_gbps: 1.6e3\n  delay_ns: +2.5\n  enabled: True\n");
  EXPECT_DOUBLE_EQ(p.rate_gbps, 1600.0);
  EXPECT_DOUBLE_EQ(p.delay_ns, 2.5);
  EXPECT_TRUE(p.enabled);
}

TEST(config_yaml, hex_integers) {
  EXPECT_EQ(load("s:\n  size_bytes: 0x1000\n").size_bytes, 4096u);
  EXPECT_EQ(load("s:\n  count: 0XfF\n").count, 255u);
  EXPECT_EQ(load("s:\n  count: 0xffffffffffffffff\n").count, UINT64_MAX);
  EXPECT_EQ(load("s:\n  count: 18446744073709551615\n").count, UINT64_MAX);
}

TEST(config_yaml, integer_rejects_negative) {
  EXPECT_EQ(error_of([] { load("s:\n  count: -5\n"); }),
            "sample.yaml:2: s.count: expected a non-negative integer, got \"-5\" (negative)");
}

TEST(config_yaml, integer_rejects_fraction) {
  EXPECT_EQ(error_of([] { load("s:\n  size_bytes: 1500.5\n"); }),
            "sample.yaml:2: s.size_bytes: expected a non-negative integer in bytes, got \"1500.5\" (not a whole "
            "number)");
}

TEST(config_yaml, integer_rejects_exponent_notation) {
  EXPECT_EQ(error_of([] { load("s:\n  count: 1e6\n"); }),
            "sample.yaml:2: s.count: expected a non-negative integer, got \"1e6\" (write integers in plain "
            "decimal or 0x hex)");
}

TEST(config_yaml, integer_rejects_overflow) {
  EXPECT_EQ(error_of([] { load("s:\n  count: 18446744073709551616\n"); }),
            "sample.yaml:2: s.count: 18446744073709551616 does not fit in 64 bits (the largest integer is "
            "18446744073709551615)");
  EXPECT_NE(error_of([] { load("s:\n  count: 0x10000000000000000\n"); }).find("does not fit in 64 bits"),
            std::string::npos);
}

TEST(config_yaml, integer_rejects_text_and_bad_hex) {
  EXPECT_EQ(error_of([] { load("s:\n  count: many\n"); }),
            "sample.yaml:2: s.count: expected a non-negative integer, got \"many\"");
  EXPECT_EQ(error_of([] { load("s:\n  count: 0xZZ\n"); }),
            "sample.yaml:2: s.count: expected a non-negative integer, got \"0xZZ\"");
  EXPECT_EQ(error_of([] { load("s:\n  count: 0x\n"); }),
            "sample.yaml:2: s.count: expected a non-negative integer, got \"0x\"");
}

TEST(config_yaml, integer_out_of_range) {
  EXPECT_EQ(error_of([] { load("s:\n  size_bytes: 70000\n"); }),
            "sample.yaml:2: s.size_bytes: 70000 is out of range [64, 65536] bytes");
  EXPECT_EQ(error_of([] { load("s:\n  size_bytes: 0x20\n"); }),
            "sample.yaml:2: s.size_bytes: 0x20 is out of range [64, 65536] bytes");
}

TEST(config_yaml, number_wrong_type) {
  EXPECT_EQ(error_of([] { load("s:\n  count: 1\n  rate_gbps: fast\n"); }),
            "sample.yaml:3: s.rate_gbps: expected a number in Gb/s, got \"fast\"");
  EXPECT_EQ(error_of([] { load("s:\n  rate_gbps: .inf\n"); }),
            "sample.yaml:2: s.rate_gbps: expected a number in Gb/s, got \".inf\"");
}

TEST(config_yaml, number_out_of_range) {
  EXPECT_EQ(error_of([] { load("s:\n\n  rate_gbps: 5000\n"); }),
            "sample.yaml:3: s.rate_gbps: 5000 is out of range [1, 3200] Gb/s");
  EXPECT_EQ(error_of([] { load("s:\n  delay_ns: -1\n"); }),
            "sample.yaml:2: s.delay_ns: -1 is out of range (must be >= 0 ns)");
}

TEST(config_yaml, value_of_the_wrong_shape) {
  EXPECT_EQ(error_of([] { load("s:\n  rate_gbps: [1, 2]\n"); }),
            "sample.yaml:2: s.rate_gbps: expected a number in Gb/s, got a sequence");
  EXPECT_EQ(error_of([] { load("s:\n  label: {a: 1}\n"); }),
            "sample.yaml:2: s.label: expected a string, got a mapping");
  EXPECT_EQ(error_of([] { load("s:\n  count: 1\n  rate_gbps:\n"); }),
            "sample.yaml:3: s.rate_gbps: expected a number in Gb/s, got nothing");
}

TEST(config_yaml, bool_wrong_type) {
  EXPECT_EQ(error_of([] { load("s:\n  enabled: yes\n"); }),
            "sample.yaml:2: s.enabled: expected true or false, got \"yes\"");
  EXPECT_EQ(error_of([] { load("s:\n  enabled: 1\n"); }),
            "sample.yaml:2: s.enabled: expected true or false, got \"1\"");
}

TEST(config_yaml, string_not_among_choices) {
  EXPECT_EQ(error_of([] { load("s:\n  mode: medium\n"); }),
            "sample.yaml:2: s.mode: \"medium\" is not one of: fast, slow");
  EXPECT_EQ(error_of([] { load("s:\n  mode: slw\n"); }),
            "sample.yaml:2: s.mode: \"slw\" is not one of: fast, slow (did you mean slow?)");
}

TEST(config_yaml, unknown_key_near_miss_is_suggested) {
  EXPECT_EQ(error_of([] { load("s:\n  count: 1\n  rate_gbs: 800\n"); }),
            "sample.yaml:3: s.rate_gbs: unknown key; did you mean rate_gbps? Known keys of s: size_bytes, count, "
            "rate_gbps, delay_ns, enabled, mode, label");
}

TEST(config_yaml, unknown_key_without_unit_suffix_is_suggested) {
  EXPECT_NE(error_of([] { load("s:\n  rate: 800\n"); }).find("s.rate: unknown key; did you mean rate_gbps?"),
            std::string::npos);
}

TEST(config_yaml, unknown_key_far_from_any_lists_the_known_ones) {
  EXPECT_EQ(error_of([] { load("s:\n  colour: blue\n"); }),
            "sample.yaml:2: s.colour: unknown key Known keys of s: size_bytes, count, rate_gbps, delay_ns, "
            "enabled, mode, label");
}

TEST(config_yaml, duplicate_key) {
  EXPECT_EQ(error_of([] { load("s:\n  count: 1\n  count: 2\n"); }),
            "sample.yaml:3: s.count: duplicate key (each key may appear once)");
}

TEST(config_yaml, section_that_is_not_a_mapping) {
  EXPECT_EQ(error_of([] { load("\ns: 400\n"); }),
            "sample.yaml:2: s: expected a mapping of s keys (size_bytes, count, rate_gbps, delay_ns, enabled, "
            "mode, label), got \"400\"");
  EXPECT_NE(error_of([] { load("s:\n  - count: 1\n"); }).find("sample.yaml:2: s: expected a mapping of s keys"),
            std::string::npos);
}

TEST(config_yaml, nested_section_path_and_flow_style) {
  const YAML::Node root = YAML::Load("outer:\n  inner: {count: 9,\n    rate_gbps: 0.5}\n");
  sample_params p;
  const std::string msg =
      error_of([&] { apply_yaml(root["outer"]["inner"], visitor_of(p), "f.yaml", "outer.inner"); });
  EXPECT_EQ(msg, "f.yaml:3: outer.inner.rate_gbps: 0.5 is out of range [1, 3200] Gb/s");
}

TEST(config_yaml, top_level_with_subsections) {
  const YAML::Node root = YAML::Load("count: 2\nsub:\n  anything: 1\n");
  sample_params p;
  apply_yaml(root, visitor_of(p), yaml_source{"top.yaml", {}}, "", {"sub"});
  EXPECT_EQ(p.count, 2u);

  const YAML::Node bad = YAML::Load("count: 2\nsubb: 1\n");
  EXPECT_EQ(error_of([&] { apply_yaml(bad, visitor_of(p), yaml_source{"top.yaml", {}}, "", {"sub"}); }),
            "top.yaml:2: subb: unknown key; did you mean sub? Known keys of top-level: size_bytes, count, "
            "rate_gbps, delay_ns, enabled, mode, label, sub");
  const YAML::Node not_map = YAML::Load("- 1\n");
  EXPECT_NE(error_of([&] { apply_yaml(not_map, visitor_of(p), yaml_source{"top.yaml", {}}, "", {}); })
                .find("top.yaml:1: expected a mapping of top-level keys"),
            std::string::npos);
}

TEST(config_yaml, override_replaces_a_file_value) {
  const sample_params p = load_with("s:\n  count: 1\n  rate_gbps: 100\n", {"s.rate_gbps=800", "s.count=0x10"});
  EXPECT_DOUBLE_EQ(p.rate_gbps, 800.0);
  EXPECT_EQ(p.count, 16u);
}

TEST(config_yaml, override_creates_missing_keys) {
  YAML::Node root = YAML::Load("s:\n  count: 1\n");
  apply_override(root, "nic_overrides.h1.reorder=ref");
  apply_override(root, "s.label = spaced out ");
  ASSERT_TRUE(root["nic_overrides"].IsMap());
  EXPECT_EQ(root["nic_overrides"]["h1"]["reorder"].as<std::string>(), "ref");
  EXPECT_EQ(root["s"]["label"].as<std::string>(), "spaced out");
  EXPECT_EQ(root["s"]["count"].as<std::string>(), "1");  // untouched

  YAML::Node empty;
  apply_override(empty, "a.b=1");
  EXPECT_EQ(empty["a"]["b"].as<std::string>(), "1");
}

TEST(config_yaml, override_indexes_sequences) {
  YAML::Node root = YAML::Load("writes:\n  - {src: h0, bytes: 1}\n  - {src: h1, bytes: 2}\n");
  apply_override(root, "writes.1.bytes=5000");
  apply_override(root, "writes.0.dst=h9");
  EXPECT_EQ(root["writes"].size(), 2u);
  EXPECT_EQ(root["writes"][1]["bytes"].as<std::string>(), "5000");
  EXPECT_EQ(root["writes"][0]["bytes"].as<std::string>(), "1");
  EXPECT_EQ(root["writes"][0]["dst"].as<std::string>(), "h9");
}

TEST(config_yaml, override_with_flow_value) {
  YAML::Node root = YAML::Load("writes:\n  - {src: h0}\n");
  apply_override(root, "writes.0={src: h2, bytes: 64}");
  apply_override(root, "list=[1, 2]");
  EXPECT_EQ(root["writes"][0]["src"].as<std::string>(), "h2");
  EXPECT_EQ(root["writes"][0]["bytes"].as<std::string>(), "64");
  EXPECT_EQ(root["list"].size(), 2u);
}

TEST(config_yaml, malformed_overrides) {
  YAML::Node root = YAML::Load("s:\n  count: 1\nwrites:\n  - {src: h0}\n");
  EXPECT_EQ(error_of([&] { apply_override(root, "s.count"); }),
            "--set s.count: no '=' (expected path.to.key=value, e.g. topology.link_gbps=800)");
  EXPECT_EQ(error_of([&] { apply_override(root, "=5"); }),
            "--set =5: empty key path (expected path.to.key=value, e.g. topology.link_gbps=800)");
  EXPECT_EQ(error_of([&] { apply_override(root, "s..count=5"); }),
            "--set s..count=5: empty component in key path \"s..count\" (expected path.to.key=value, e.g. "
            "topology.link_gbps=800)");
  EXPECT_NE(error_of([&] { apply_override(root, ".s=5"); }).find("--set .s=5: empty component"), std::string::npos);
  EXPECT_NE(error_of([&] { apply_override(root, "s.=5"); }).find("--set s.=5: empty component"), std::string::npos);
  EXPECT_EQ(error_of([&] { apply_override(root, "writes.1.bytes=5"); }),
            "--set writes.1.bytes=5: index 1 is beyond the end of writes (it has 1 entry)");
  EXPECT_NE(error_of([&] { apply_override(root, "writes.99999999999999999999999=5"); }).find("beyond the end"),
            std::string::npos);
  EXPECT_NE(error_of([&] { apply_override(root, "writes.first.bytes=5"); })
                .find("--set writes.first.bytes=5: writes is a sequence; \"first\" is not an index"),
            std::string::npos);
  EXPECT_NE(error_of([&] { apply_override(root, "s.count.x=5"); })
                .find("--set s.count.x=5: s.count is a single value, it has no key \"x\""),
            std::string::npos);
  EXPECT_NE(error_of([&] { apply_override(root, "s.count={a: [}"); })
                .find("--set s.count={a: [}: the value is not valid YAML flow syntax"),
            std::string::npos);
  // Failed assignments leave the tree as it was.
  EXPECT_EQ(root["writes"].size(), 1u);
  EXPECT_EQ(root["s"]["count"].as<std::string>(), "1");
}

TEST(config_yaml, override_errors_name_the_assignment) {
  EXPECT_EQ(error_of([] { load_with("s:\n  count: 1\n", {"s.rate_gbps=abc"}); }),
            "--set s.rate_gbps=abc: expected a number in Gb/s, got \"abc\"");
  EXPECT_EQ(error_of([] { load_with("s:\n  rate_gbps: 10\n", {"s.rate_gbps=5000"}); }),
            "--set s.rate_gbps=5000: 5000 is out of range [1, 3200] Gb/s");
  EXPECT_EQ(error_of([] { load_with("s:\n  count: 1\n", {"s.mode=medium"}); }),
            "--set s.mode=medium: \"medium\" is not one of: fast, slow");
  EXPECT_NE(error_of([] { load_with("s:\n  count: 1\n", {"s.rate_gbs=800"}); })
                .find("--set s.rate_gbs=800: unknown key; did you mean rate_gbps?"),
            std::string::npos);
  EXPECT_NE(error_of([] { load_with("", {"s=5"}); }).find("--set s=5: expected a mapping of s keys"),
            std::string::npos);
  // A mapping the override created on its way: the assignment and the key it created.
  EXPECT_NE(error_of([] { load_with("s:\n  count: 1\n", {"s.extra.deep=1"}); })
                .find("--set s.extra.deep=1: s.extra: unknown key"),
            std::string::npos);
  // A key under an overridden flow value: the assignment and the key path inside it.
  EXPECT_EQ(error_of([] { load_with("", {"s={count: -1}"}); }),
            "--set s={count: -1}: s.count: expected a non-negative integer, got \"-1\" (negative)");
}

TEST(config_yaml, file_errors_stay_on_file_lines_next_to_overrides) {
  EXPECT_EQ(error_of([] { load_with("s:\n  count: 1\n  rate_gbps: 9999\n", {"s.count=2"}); }),
            "sample.yaml:3: s.rate_gbps: 9999 is out of range [1, 3200] Gb/s");
}

TEST(config_yaml, describe_lists_every_key_with_its_default) {
  const std::vector<key_doc> docs = describe<sample_params>();
  ASSERT_EQ(docs.size(), 7u);
  EXPECT_EQ(docs[0].name, "size_bytes");
  EXPECT_EQ(docs[0].type, "integer");
  EXPECT_EQ(docs[0].unit, "bytes");
  EXPECT_EQ(docs[0].default_value, "4096");
  EXPECT_EQ(docs[0].range, "[64, 65536]");
  EXPECT_EQ(docs[0].description, "buffer size");
  EXPECT_EQ(docs[1].range, "");  // any non-negative integer
  EXPECT_EQ(docs[2].type, "number");
  EXPECT_EQ(docs[2].default_value, "400");
  EXPECT_EQ(docs[2].range, "[1, 3200]");
  EXPECT_EQ(docs[3].range, ">= 0");
  EXPECT_EQ(docs[4].type, "bool");
  EXPECT_EQ(docs[4].default_value, "true");
  EXPECT_EQ(docs[5].type, "string");
  EXPECT_EQ(docs[5].default_value, "fast");
  EXPECT_EQ(docs[5].range, "fast, slow");
  EXPECT_EQ(docs[6].range, "");
}

TEST(config_yaml, describe_shows_current_values) {
  sample_params p;
  p.rate_gbps = 0.125;
  p.delay_ns = 2e9;
  p.label = "";
  std::vector<key_doc> docs = describe(visitor_of(p));
  EXPECT_EQ(docs[2].default_value, "0.125");
  EXPECT_EQ(docs[3].default_value, "2e9");  // round powers of ten as exponents
  p.delay_ns = 1234567;
  p.rate_gbps = -0.0;
  docs = describe(visitor_of(p));
  EXPECT_EQ(docs[3].default_value, "1234567");
  EXPECT_EQ(docs[2].default_value, "0");
  EXPECT_EQ(docs[6].default_value, "");
}

}  // namespace
}  // namespace fabricsim::testbench
