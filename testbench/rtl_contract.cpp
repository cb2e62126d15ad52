// The port contract of a user's RTL block and its check against Verilator's elaborated view of the top module.
#include "testbench/rtl_contract.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <regex>

#include "sc_models/core/params.h"

namespace fabricsim::testbench {

namespace {

// rtl/reorder_tracker.sv; docs/rtl_contract.md states the rules behind each port.
const rtl_block_contract reorder_tracker_contract{
    "reorder_tracker",
    {
        {"clk_i", true, 1, "clock, rising edge"},
        {"rst_ni", true, 1, "asynchronous active-low reset"},
        {"init_valid_i", true, 1, "set the head to init_psn_i and clear every mark"},
        {"init_psn_i", true, 24, "the new expected PSN"},
        {"req_valid_i", true, 1, "a PSN is presented"},
        {"req_ready_o", false, 1, "the PSN is taken at this edge if req_valid_i"},
        {"req_psn_i", true, 24, "the arriving PSN"},
        {"rsp_valid_o", false, 1, "the result of the PSN accepted last cycle"},
        {"rsp_verdict_o", false, 2, "its verdict: 0 in order, 1 out of order, 2 duplicate, 3 out of window"},
        {"rsp_psn_o", false, 24, "the PSN of the result"},
        {"head_psn_o", false, 24, "the expected PSN"},
        {"adv_valid_o", false, 1, "the head moved past one PSN"},
        {"adv_psn_o", false, 24, "the PSN the head moved past"},
        {"busy_o", false, 1, "retiring PSNs that arrived earlier"},
    },
    {{"Window", 16, 4096, true}},
};

// rtl/cnp_gen.sv at TimeWidth 32 (the adapter's time port).
const rtl_block_contract cnp_gen_contract{
    "cnp_gen",
    {
        {"clk_i", true, 1, "clock, rising edge"},
        {"rst_ni", true, 1, "asynchronous active-low reset"},
        {"init_valid_i", true, 1, "load the interval and mode, zero the counters, forget every CNP sent"},
        {"init_interval_i", true, 32, "minimum interval between CNPs of one context, cycles"},
        {"init_per_port_i", true, 1, "one context for the whole port"},
        {"req_valid_i", true, 1, "a marked arrival is presented"},
        {"req_ready_o", false, 1, "the arrival is taken at this edge if req_valid_i"},
        {"req_flow_i", true, 24, "its destination QPN"},
        {"req_now_i", true, 32, "its arrival time, cycles"},
        {"rsp_valid_o", false, 1, "the result of the arrival accepted last cycle"},
        {"rsp_emit_o", false, 1, "send a CNP now"},
        {"rsp_flow_o", false, 24, "the QPN of the result"},
        {"cnp_count_o", false, 32, "CNPs emitted since init"},
        {"suppressed_count_o", false, 32, "arrivals suppressed since init"},
        {"busy_o", false, 1, "the table is being cleared"},
    },
    {{"Flows", 2, 65536, true}, {"TimeWidth", 32, 32, false}},
};

// rtl/dcqcn_rp.sv at the widths of sc_models/nic/dcqcn_rp.h (dcqcn_widths), which the adapter's port bundle
// and the reference model have: RateW 32, AlphaW 16, TimeW 64, PeriodW 32, BytesW 16, AccW 32, CountW 8.
const rtl_block_contract dcqcn_rp_contract{
    "dcqcn_rp",
    {
        {"clk_i", true, 1, "clock, rising edge"},
        {"rst_ni", true, 1, "asynchronous active-low reset: all state 0, no timer armed"},
        {"cfg_line_rate_i", true, 32, "line rate, kb/s: the ceiling of rate and target"},
        {"cfg_min_rate_i", true, 32, "floor of the rate after a cut, kb/s"},
        {"cfg_ai_rate_i", true, 32, "additive increase step of the target, kb/s"},
        {"cfg_hai_rate_i", true, 32, "hyper increase step of the target, kb/s"},
        {"cfg_min_dec_i", true, 11, "share of the rate a cut keeps, Q0.10"},
        {"cfg_cut_shift_i", true, 6, "cut = rate * alpha >> cut_shift"},
        {"cfg_alpha_keep_i", true, 10, "1 - g, Q0.10"},
        {"cfg_initial_alpha_i", true, 16, "alpha after an init, Q0.16"},
        {"cfg_threshold_i", true, 8, "fast-recovery stages F"},
        {"cfg_byte_reset_i", true, 32, "bytes per byte-counter event"},
        {"cfg_alpha_period_i", true, 32, "alpha timer period, cycles"},
        {"cfg_increase_period_i", true, 32, "rate-increase timer period, cycles"},
        {"cfg_monitor_period_i", true, 32, "at most one cut per this many cycles"},
        {"req_valid_i", true, 1, "a request is presented"},
        {"req_ready_o", false, 1, "the request is taken at this edge if req_valid_i"},
        {"req_kind_i", true, 2, "0 advance, 1 CNP, 2 sent, 3 init (fabricsim_pkg::dcqcn_req_e)"},
        {"req_now_i", true, 64, "the request's time, cycles"},
        {"req_bytes_i", true, 16, "bytes sent (kind 2)"},
        {"rate_o", false, 32, "current rate, kb/s"},
        {"target_o", false, 32, "target rate, kb/s"},
        {"alpha_o", false, 16, "alpha, Q0.16"},
        {"deadline_valid_o", false, 1, "a timer is armed"},
        {"deadline_o", false, 64, "the earliest armed timer deadline, cycles"},
        {"timer_count_o", false, 8, "rate-timer events since the last cut (saturating)"},
        {"byte_count_o", false, 8, "byte-counter events since the last cut (saturating)"},
        {"events_o", false, 10, "what the last request did (fabricsim_pkg::dcqcn_event_e bits)"},
        {"rsp_valid_o", false, 1, "the request accepted last is done: the outputs are its results"},
        {"busy_o", false, 1, "a request is being processed"},
    },
    {},
};

std::string xml_unescape(std::string s) {
  static const std::pair<const char*, const char*> entities[] = {
      {"&apos;", "'"}, {"&quot;", "\""}, {"&lt;", "<"}, {"&gt;", ">"}, {"&amp;", "&"}};
  for (const auto& [from, to] : entities) {
    for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + 1)) s.replace(at, strlen(from), to);
  }
  return s;
}

// One element's start tag: its name and attributes.
struct xml_tag {
  std::string name;
  bool closing = false;       // </name>
  bool self_closing = false;  // <name ... />
  std::map<std::string, std::string> attributes;
  std::string attr(const std::string& key) const {
    const auto it = attributes.find(key);
    return it == attributes.end() ? "" : it->second;
  }
};

std::vector<xml_tag> xml_tags(const std::string& xml) {
  static const std::regex attribute(R"re(([A-Za-z_:][\w:.-]*)="([^"]*)")re");
  std::vector<xml_tag> tags;
  for (size_t at = xml.find('<'); at != std::string::npos; at = xml.find('<', at + 1)) {
    const size_t end = xml.find('>', at);
    if (end == std::string::npos) break;
    const std::string body = xml.substr(at + 1, end - at - 1);
    if (body.empty() || body[0] == '?' || body[0] == '!') continue;
    xml_tag tag;
    tag.closing = body[0] == '/';
    tag.self_closing = body.back() == '/';
    const size_t name_start = tag.closing ? 1 : 0;
    const size_t name_end = body.find_first_of(" \t\r\n/", name_start);
    tag.name = body.substr(name_start, name_end == std::string::npos ? std::string::npos : name_end - name_start);
    for (std::sregex_iterator it(body.begin(), body.end(), attribute), last; it != last; ++it)
      tag.attributes[(*it)[1]] = xml_unescape((*it)[2]);
    tags.push_back(std::move(tag));
    at = end;
  }
  return tags;
}

// Verilator writes constants as <width>'[s]h<hex> (also 'd, 'b, 'o).
bool parse_constant(const std::string& text, uint64_t& value) {
  static const std::regex constant(R"re(\d*'s?([hdbo])([0-9a-fA-F_]+))re");
  std::smatch m;
  if (!std::regex_match(text, m, constant)) return false;
  const char base = m[1].str()[0];
  std::string digits = m[2];
  digits.erase(std::remove(digits.begin(), digits.end(), '_'), digits.end());
  value = std::stoull(digits, nullptr, base == 'h' ? 16 : base == 'd' ? 10 : base == 'b' ? 2 : 8);
  return true;
}

struct dtype {
  std::string kind;
  std::string sub;  // sub_dtype_id
  int64_t left = -1, right = -1;
};

uint32_t width_of(const std::map<std::string, dtype>& types, const std::string& id, int depth = 0) {
  const auto it = types.find(id);
  if (it == types.end() || depth > 32) return 0;
  const dtype& t = it->second;
  if (t.kind == "basicdtype") return t.left < 0 ? 1 : static_cast<uint32_t>(std::llabs(t.left - t.right) + 1);
  if (t.kind == "refdtype" || t.kind == "enumdtype") return width_of(types, t.sub, depth + 1);
  return 0;
}

std::string describe(bool input, uint32_t width) {
  return std::string(input ? "input" : "output") + " of " + std::to_string(width) + (width == 1 ? " bit" : " bits");
}

}  // namespace

std::string rtl_contract_blocks() { return "reorder_tracker, cnp_gen, dcqcn_rp"; }

const rtl_block_contract& rtl_contract(const std::string& block) {
  if (block == reorder_tracker_contract.block) return reorder_tracker_contract;
  if (block == cnp_gen_contract.block) return cnp_gen_contract;
  if (block == dcqcn_rp_contract.block) return dcqcn_rp_contract;
  throw core::config_error("verify-rtl --rtl: block " + block +
                           " has no user-RTL contract yet; blocks with one: " + rtl_contract_blocks());
}

rtl_top_module parse_verilator_xml(const std::string& xml, const std::string& what) {
  const std::vector<xml_tag> tags = xml_tags(xml);
  std::map<std::string, dtype> types;
  for (const xml_tag& t : tags) {
    if (t.closing || t.attr("id").empty() || t.name.find("dtype") == std::string::npos) continue;
    dtype d;
    d.kind = t.name;
    d.sub = t.attr("sub_dtype_id");
    if (!t.attr("left").empty()) d.left = std::stoll(t.attr("left"));
    if (!t.attr("right").empty()) d.right = std::stoll(t.attr("right"));
    types[t.attr("id")] = d;
  }
  rtl_top_module top;
  bool found = false;
  int depth = 0;  // element depth inside the top module (1: its direct children)
  std::string pending_parameter;
  for (const xml_tag& t : tags) {
    if (!found) {
      found = !t.closing && t.name == "module" && t.attr("topModule") == "1";
      depth = found ? 1 : 0;
      continue;
    }
    if (t.closing) {
      if (--depth == 0) break;
      continue;
    }
    if (t.name == "var" && depth == 1) {
      if (!t.attr("dir").empty())
        top.ports.push_back({t.attr("name"), t.attr("dir"), width_of(types, t.attr("dtype_id"))});
      pending_parameter = t.attr("param") == "true" ? t.attr("name") : "";
    } else if (t.name == "const" && depth == 2 && !pending_parameter.empty()) {
      uint64_t value = 0;  // a parameter's value: the first constant inside its <var>
      if (parse_constant(t.attr("name"), value)) top.parameters[pending_parameter] = value;
      pending_parameter.clear();
    }
    if (!t.self_closing) ++depth;
  }
  if (!found) throw core::config_error(what + ": Verilator's XML has no top module");
  return top;
}

std::vector<std::string> check_rtl_contract(const rtl_block_contract& contract, const rtl_top_module& top,
                                            const std::string& file, const std::string& module) {
  const std::string where = file + ": module " + module + ": ";
  for (const rtl_port_spec& spec : contract.ports) {
    const auto it =
        std::find_if(top.ports.begin(), top.ports.end(), [&](const rtl_found_port& p) { return p.name == spec.name; });
    const std::string expected = describe(spec.input, spec.width) + " (" + spec.role + ")";
    if (it == top.ports.end())
      throw core::config_error(where + "missing port " + spec.name + ": expected " + expected +
                               ", found no such port (docs/rtl_contract.md)");
    if (it->direction != (spec.input ? "input" : "output"))
      throw core::config_error(where + "port " + spec.name + ": expected " + expected + ", found " + it->direction +
                               " (docs/rtl_contract.md)");
    if (it->width != spec.width)
      throw core::config_error(
          where + "port " + spec.name + ": expected " + expected + ", found " +
          (it->width == 0 ? std::string("a type that is not a packed vector") : describe(spec.input, it->width)) +
          " (docs/rtl_contract.md)");
  }
  std::vector<std::string> notes;
  for (const rtl_found_port& p : top.ports) {
    const bool known = std::any_of(contract.ports.begin(), contract.ports.end(),
                                   [&](const rtl_port_spec& s) { return p.name == s.name; });
    if (known) continue;
    if (p.direction != "output")
      throw core::config_error(where + "port " + p.name + ": an " + p.direction + " the " + contract.block +
                               " contract does not have, which nothing would drive (docs/rtl_contract.md)");
    notes.push_back("output " + p.name + " is not in the contract: left unread");
  }
  for (const rtl_parameter_spec& spec : contract.parameters) {
    const auto it = top.parameters.find(spec.name);
    if (it == top.parameters.end())
      throw core::config_error(where + "missing parameter " + spec.name + " (docs/rtl_contract.md)");
    const uint64_t v = it->second;
    if (v < spec.min || v > spec.max || (spec.power_of_two && (v & (v - 1)) != 0))
      throw core::config_error(where + "parameter " + spec.name + " = " + std::to_string(v) + ": expected " +
                               (spec.power_of_two ? "a power of two in " : "") + std::to_string(spec.min) + ".." +
                               std::to_string(spec.max) + " (docs/rtl_contract.md)");
  }
  return notes;
}

}  // namespace fabricsim::testbench
