// Tenants: several jobs on one fabric, each against itself alone (testbench/tenants.h).
#include "testbench/tenants.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <stdexcept>

#include "sc_models/core/params.h"
#include "sc_models/core/units.h"
#include "sc_models/mpi/mpi_world.h"
#include "sc_models/topology/fabric.h"
#include "testbench/collective.h"
#include "testbench/collective_engine.h"
#include "testbench/compare.h"
#include "testbench/fabric_setup.h"
#include "testbench/training_run.h"

namespace fabricsim::testbench {

using core::config_error;

namespace {

std::string job_where(const scenario& s, size_t index) { return s.source + ": jobs." + std::to_string(index); }

// A collective job's own scenario: the run's, with the job's collective section on its hosts (rank i on
// its i-th host); the loader's checks of a collective (place_ranks) run on it, naming the job.
scenario collective_scenario(const scenario& s, const job_params& j, size_t index) {
  scenario js = s;
  js.source = job_where(s, index);
  js.collective = j.collective;
  js.collective.ranks = j.hosts.size();
  js.workload.kind = "collective";
  js.jobs.clear();
  place_ranks(js);  // its checks only: the ranks sit on the job's hosts
  return js;
}

// A collective job, run by the collective engine beside the flows (run_options::beside).
class collective_job : public co_workload {
 public:
  collective_job(const scenario& s, const job_params& j, size_t index, bool check)
      : m_s(collective_scenario(s, j, index)), m_hosts(j.hosts), m_check(check), m_eng(m_s, j.hosts, check) {}
  const std::vector<size_t>& hosts() const override { return m_hosts; }
  void add_memory(std::vector<uint64_t>& mem_bytes) override {
    const std::vector<uint64_t> mine = m_eng.memory_bytes(mem_bytes.size());
    for (size_t h : m_hosts) mem_bytes[h] += mine[h];
  }
  void elaborate(fabric_setup& setup, bool placing) override {
    m_eng.on_size_done = [this](const size_result&) { m_last_size_done = core::now(); };
    m_eng.elaborate(setup, m_s.seed, placing);
  }
  void finish(fabric_setup& setup, core::picoseconds) override {
    m_report = collective_job_report(m_s, m_eng, setup.fab(), m_hosts, m_check);
    m_report["end_us"] = m_last_size_done.us();
  }
  const nlohmann::json& report() const { return m_report; }

 private:
  scenario m_s;
  std::vector<size_t> m_hosts;
  bool m_check;
  collective_engine m_eng;
  core::picoseconds m_last_size_done{};
  nlohmann::json m_report;
};

// A training job: one step (testbench/training_run.h) on the job's hosts, GPU rank r on its r-th host, run
// beside the flows; its figure is the step time (from time 0 to the step's last task).
class training_job : public co_workload {
 public:
  training_job(const scenario& s, const job_params& j, size_t index) : m_s(job_scenario(s, j)), m_hosts(j.hosts) {
    m_step = std::make_unique<training_step>(m_s, j.training, j.hosts, job_where(s, index));
    m_timer_name = "training_timers_job" + std::to_string(index);
  }
  const std::vector<size_t>& hosts() const override { return m_hosts; }
  void add_memory(std::vector<uint64_t>& mem_bytes) override { m_step->plan(mem_bytes); }
  void elaborate(fabric_setup& setup, bool) override { m_step->elaborate(setup, m_timer_name); }
  void finish(fabric_setup&, core::picoseconds) override {
    m_report = m_step->report(0.0);
    m_report.erase("wall_time_s");  // the step's wall time is the shared run's (the report's header)
  }
  const nlohmann::json& report() const { return m_report; }

 private:
  // The run's scenario with the job's collective section (the engine's keys: chunk_bytes, buffer_slots,
  // reduce_gbps, credit_ns) and training section; training.chakra stays relative to the scenario file.
  static scenario job_scenario(const scenario& s, const job_params& j) {
    scenario js = s;
    js.collective = j.collective;
    js.training = j.training;
    js.jobs.clear();
    return js;
  }
  scenario m_s;
  std::vector<size_t> m_hosts;
  std::unique_ptr<training_step> m_step;
  std::string m_timer_name;
  nlohmann::json m_report;
};

// A training job's figures: its step time and the step's report (the `training` object of a training run).
nlohmann::json training_job_figures(const nlohmann::json& t) {
  const bool done = t.at("completed").get<bool>();
  return {{"kind", "training"},
          {"step_time_us", t.at("step_time_us")},
          {"compute_time_us", t.at("compute_time_us")},
          {"exposed_communication_us", t.at("exposed_communication_us")},
          {"communication_share", t.at("communication_share")},
          {"training", t},
          {"data_checked", false},  // timing only: the step's WRITEs carry no checked data
          {"verified", done},       // so what holds is that the step completed
          {"start_us", 0.0},
          {"end_us", t.at("step_time_us")},
          {"job_time_us", done ? t.at("step_time_us") : nlohmann::json(nullptr)}};
}

// p-th percentile by nearest rank (p in (0, 100]) of a non-empty sorted list.
double nearest_rank(const std::vector<double>& sorted, double p) {
  const size_t rank = size_t(std::ceil(p / 100.0 * double(sorted.size())));
  return sorted[std::max<size_t>(rank, 1) - 1];
}

// A flow job's figures from the report's flows [begin, end).
nlohmann::json flow_job_figures(const nlohmann::json& flows, size_t begin, size_t end) {
  uint64_t bytes = 0, checked = 0, mismatched = 0, completed = 0;
  bool verified = end > begin;
  double first_ns = 1e300, last_ns = 0.0;
  std::vector<double> fct_us;
  for (size_t i = begin; i < end; ++i) {
    const nlohmann::json& f = flows.at(i);
    bytes += f.at("bytes").get<uint64_t>();
    checked += f.at("checked_bytes").get<uint64_t>();
    mismatched += f.at("mismatched_bytes").get<uint64_t>();
    verified = verified && f.at("verified").get<bool>();
    first_ns = std::min(first_ns, f.at("posted_ns").get<double>());
    if (!f.at("completed").get<bool>()) continue;
    ++completed;
    last_ns = std::max(last_ns, f.at("completed_ns").get<double>());
    fct_us.push_back(f.at("fct_ns").get<double>() / 1e3);
  }
  std::sort(fct_us.begin(), fct_us.end());
  nlohmann::json j;
  j["operations"] = end - begin;
  j["completed"] = completed;
  j["bytes"] = bytes;
  j["checked_bytes"] = checked;
  j["mismatched_bytes"] = mismatched;
  j["verified"] = verified;
  const bool any = !fct_us.empty();
  double sum = 0.0;
  for (double v : fct_us) sum += v;
  j["mean_fct_us"] = any ? nlohmann::json(sum / double(fct_us.size())) : nlohmann::json(nullptr);
  j["p99_fct_us"] = any ? nlohmann::json(nearest_rank(fct_us, 99.0)) : nlohmann::json(nullptr);
  j["max_fct_us"] = any ? nlohmann::json(fct_us.back()) : nlohmann::json(nullptr);
  const double span_ns = any ? last_ns - first_ns : 0.0;
  j["start_us"] = end > begin ? first_ns / 1e3 : 0.0;
  j["end_us"] = last_ns / 1e3;
  j["throughput_gbps"] = span_ns > 0 ? double(bytes) * 8.0 / span_ns : 0.0;
  return j;
}

std::vector<std::string> host_names_of(const job_params& j) {
  std::vector<std::string> out;
  for (size_t h : j.hosts) out.push_back("h" + std::to_string(h));
  return out;
}

// "h0-h7" for consecutive hosts, else "h0,h2,h5" (the table's column).
std::string hosts_text(const nlohmann::json& names) {
  std::vector<size_t> idx;
  for (const auto& n : names) idx.push_back(std::stoul(n.get<std::string>().substr(1)));
  bool consecutive = idx.size() > 1;
  for (size_t i = 1; i < idx.size(); ++i) consecutive = consecutive && idx[i] == idx[i - 1] + 1;
  if (consecutive) return fmt::format("h{}-h{}", idx.front(), idx.back());
  std::string out;
  for (size_t i = 0; i < idx.size(); ++i) out += (i ? "," : "") + fmt::format("h{}", idx[i]);
  return out.size() <= 14 ? out : fmt::format("{} hosts", idx.size());  // the list is in the report
}

// Runs `s` (some of the jobs) in a forked child and returns its report; a child's configuration error is
// rethrown as one, anything else as std::runtime_error naming `what`.
nlohmann::json run_child(const scenario& s, const run_options& opts, const std::string& what) {
  const child_outcome c = run_forked([&] { return run_jobs_once(s, opts).dump(); });
  if (c.exit_code == 2) throw config_error(c.output);
  if (c.signal != 0 || c.exit_code != 0)
    throw std::runtime_error(what + " failed" + (c.signal ? fmt::format(" (signal {})", c.signal) : "") + ": " +
                             c.output);
  return nlohmann::json::parse(c.output);
}

bool training_in(const nlohmann::json& r) {
  for (const auto& [name, j] : r.at("jobs").items())
    if (j.at("kind") == "training") return true;
  return false;
}

}  // namespace

double job_slowdown(const std::string& figure, double alone, double shared) {
  if (figure == "busbw_gbps") return shared > 0 ? alone / shared : 0.0;
  return alone > 0 ? shared / alone : 0.0;
}

nlohmann::json run_jobs_once(const scenario& s, const run_options& opts) {
  const bool check = every_nic_places_data(s) && !opts.elaborate_only;
  std::vector<planned_flow> flows;
  std::vector<std::pair<size_t, size_t>> flow_range(s.jobs.size(), {0, 0});
  std::vector<std::unique_ptr<collective_job>> collectives(s.jobs.size());
  std::vector<std::unique_ptr<training_job>> trainings(s.jobs.size());
  run_options o = opts;
  for (size_t i = 0; i < s.jobs.size(); ++i) {
    const job_params& j = s.jobs[i];
    if (j.workload.kind == "collective") {
      collectives[i] = std::make_unique<collective_job>(s, j, i, check);
      o.beside.push_back(collectives[i].get());
      continue;
    }
    if (j.workload.kind == "training") {
      trainings[i] = std::make_unique<training_job>(s, j, i);
      o.beside.push_back(trainings[i].get());
      continue;
    }
    const size_t begin = flows.size();
    for (const planned_flow& f : plan_job_workload(s, j)) flows.push_back(f);
    flow_range[i] = {begin, flows.size()};
  }
  o.workload = &flows;
  nlohmann::json r = run_flows(s, o);
  if (opts.elaborate_only) return r;
  nlohmann::json jobs = nlohmann::json::object();
  bool verified = true;
  for (size_t i = 0; i < s.jobs.size(); ++i) {
    const job_params& j = s.jobs[i];
    nlohmann::json fig;
    if (collectives[i]) {
      const nlohmann::json& c = collectives[i]->report();
      fig = {{"kind", "collective"},
             {"op", c.at("op")},
             {"busbw_gbps", c.at("avg_busbw_gbps")},
             {"rows", c.at("rows")},
             {"checked_bytes", c.at("checked_bytes")},
             {"mismatched_bytes", c.at("mismatched_bytes")},
             {"verified", c.at("verified")},
             {"end_us", c.at("end_us")}};
      double time_us = 0.0;
      for (const auto& row : c.at("rows"))
        if (row.at("time_us").is_number()) time_us += row.at("time_us").get<double>();
      fig["time_us"] = time_us;
      fig["start_us"] = 0.0;  // the engine posts its first WRITEs at time 0
      fig["job_time_us"] = c.at("end_us");
    } else if (trainings[i]) {
      fig = training_job_figures(trainings[i]->report());
    } else {
      fig = flow_job_figures(r.at("flows"), flow_range[i].first, flow_range[i].second);
      fig["kind"] = j.workload.kind;
      fig["job_time_us"] = fig.at("completed") == fig.at("operations")
                               ? nlohmann::json(fig.at("end_us").get<double>() - fig.at("start_us").get<double>())
                               : nlohmann::json(nullptr);
    }
    fig["hosts"] = host_names_of(j);
    verified = verified && fig.at("verified").get<bool>();
    jobs[j.name] = std::move(fig);
  }
  r["jobs"] = std::move(jobs);
  r["verified"] = verified;
  // The top-level byte counts cover the collectives' WRITEs too (run_flows counted the flows' only).
  for (const auto& c : collectives)
    if (c) {
      r["checked_bytes"] = r.at("checked_bytes").get<uint64_t>() + c->report().at("checked_bytes").get<uint64_t>();
      r["mismatched_bytes"] =
          r.at("mismatched_bytes").get<uint64_t>() + c->report().at("mismatched_bytes").get<uint64_t>();
    }
  return r;
}

nlohmann::json run_tenants(const scenario& s, const run_options& opts) {
  if (mpi::launched_as_rank())
    throw config_error(s.source +
                       ": jobs: a tenants run forks one simulation per job and is not cut across MPI "
                       "ranks; run it in one process");
  if (opts.elaborate_only) return run_jobs_once(s, opts);
  nlohmann::json r = run_child(s, opts, "the shared run of every job");
  nlohmann::json jobs = nlohmann::json::object();
  for (size_t i = 0; i < s.jobs.size(); ++i) {
    const job_params& j = s.jobs[i];
    nlohmann::json alone_report;
    if (s.jobs.size() == 1) {
      alone_report = r;  // the one job is alone already
    } else {
      scenario alone = s;
      alone.jobs = {j};
      alone.source = s.source;
      alone_report = run_child(alone, opts, "the run of job '" + j.name + "' alone");
    }
    const nlohmann::json& shared_fig = r.at("jobs").at(j.name);
    const nlohmann::json& alone_fig = alone_report.at("jobs").at(j.name);
    // The job's whole span, a collective's warm-up included: a neighbour that overlaps only part of a job
    // shows in it, where a collective's timed iterations may run after the neighbour has gone.
    const std::string figure = "job_time_us";
    nlohmann::json out;
    out["kind"] = shared_fig.at("kind");
    out["hosts"] = shared_fig.at("hosts");
    out["figure"] = figure;
    const bool both = shared_fig.at(figure).is_number() && alone_fig.at(figure).is_number();
    out["alone"] = alone_fig.at(figure);
    out["shared"] = shared_fig.at(figure);
    out["slowdown"] = both ? nlohmann::json(job_slowdown(figure, alone_fig.at(figure).get<double>(),
                                                         shared_fig.at(figure).get<double>()))
                           : nlohmann::json(nullptr);
    out["alone_run"] = alone_fig;
    out["shared_run"] = shared_fig;
    jobs[j.name] = std::move(out);
  }
  r["jobs"] = std::move(jobs);
  return r;
}

std::string format_jobs_table(const nlohmann::json& r) {
  std::string out = fmt::format("scenario {} (seed {}): {} jobs on one fabric, each against itself alone\n",
                                r.at("scenario").get<std::string>(), r.at("seed").get<uint64_t>(), r.at("jobs").size());
  out += fmt::format("simulated {:.3f} us (shared run); data: {}\n\n", r.at("simulated_time_ns").get<double>() / 1e3,
                     !r.at("verified").get<bool>() ? "NOT verified"
                     : training_in(r) ? "every flow and collective job's bytes checked and right, every training "
                                        "step complete (its WRITEs carry no checked data)"
                                      : "every job's bytes checked and right");
  out += fmt::format("{:<14} {:<12} {:<14} {:<12} {:>12} {:>12} {:>9}\n", "job", "kind", "hosts", "figure", "alone",
                     "shared", "slowdown");
  auto num = [](const nlohmann::json& v) { return v.is_number() ? fmt::format("{:.3f}", v.get<double>()) : "-"; };
  for (const auto& [name, j] : r.at("jobs").items())
    out += fmt::format("{:<14} {:<12} {:<14} {:<12} {:>12} {:>12} {:>9}\n", name, j.at("kind").get<std::string>(),
                       hosts_text(j.at("hosts")), j.at("figure").get<std::string>(), num(j.at("alone")),
                       num(j.at("shared")), num(j.at("slowdown")));
  return out;
}

}  // namespace fabricsim::testbench
