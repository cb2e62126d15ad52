"""What scripts/validate and its section modules share: the section registry, the Validation object a section
works with (runs, plots, rows), helpers that read captures with tshark, and the page writer."""
import importlib.machinery
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCEN = os.path.join(ROOT, "testbench", "scenarios")
FIG = os.path.join(ROOT, "docs", "figures")
PAGE = os.path.join(ROOT, "docs", "validation.md")
# Wire efficiency of a full-MTU RoCEv2 packet: 4096 payload bytes in 4178 wire bytes (docs/report.md, `fabric`).
WIRE = 4096.0 / 4178.0
# The same for InfiniBand: LRH 8 + BTH 12 + 4096 + ICRC 4 + VCRC 2 = 4122 bytes (docs/quantum_x800.md).
IB_WIRE = 4096.0 / 4122.0

SECTIONS = []


def section(fn=None, quick=False):
    """Registers a section of the page; sections appear in the order they are defined. `quick=True`: part of
    `--quick` (and so of ctest validate_quick)."""
    def register(f):
        f.quick = quick
        SECTIONS.append(f)
        return f
    return register(fn) if fn is not None else register


def sh(args, **kw):
    t0 = time.time()
    r = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=ROOT, **kw)
    dt = time.time() - t0
    print("  [%5.1f s] %s" % (dt, " ".join(os.path.relpath(a, ROOT) if a.startswith(ROOT) else a for a in args)),
          file=sys.stderr)
    return r


class Validation:
    """What a section works with: the binary, a scratch directory, and the page being written."""

    def __init__(self, build, work, fig_dir):
        self.bin = os.path.join(build, "testbench", "fabricsim")
        self.build = build
        self.work = work
        self.fig_dir = fig_dir  # docs/figures for the page; the work folder when the page is not rewritten
        self.failures = []
        self.rows = []      # dicts: result, expected, source, measured, tolerance, verdict, ...
        self.sections = []  # Markdown, one string per section
        self.sh = sh

    def row(self, result, expected, source, measured, tolerance, ok, scenario, figure=None, reason=None):
        """One line of the summary table, a test verdict. `ok`: the outcome of the section's predicate on the
        measured figures (True: PASS); a row whose measured value is None (the run failed) is a FAIL whatever
        `ok` says. `reason`: for a row expected to fail, why (the page prints it under the table).
        `figure`: a path relative to docs/ (figures/...), or None."""
        passed = bool(ok) and measured is not None
        self.rows.append({"result": result, "expected": expected, "source": source,
                          "measured": "failed" if measured is None else measured, "tolerance": tolerance,
                          "verdict": "PASS" if passed else "FAIL", "scenario": scenario,
                          "figure": "[%s](%s)" % (os.path.basename(figure), figure) if figure else "-",
                          "reason": reason if not passed else None})

    def text(self, markdown):
        self.sections.append(markdown.strip("\n") + "\n")

    def fail(self, what):
        self.failures.append(what)

    def run(self, name, scenario, extra=(), timeseries=False):
        """`fabricsim run` of a shipped scenario into WORK/<name>.json; returns (report or None, csv path)."""
        out = os.path.join(self.work, name + ".json")
        args = [self.bin, "run", os.path.join(SCEN, scenario), "--json", out, "--quiet"] + list(extra)
        csv = None
        if timeseries:
            csv = os.path.join(self.work, name + ".csv")
            args += ["--timeseries", csv]
        r = sh(args)
        if r.returncode != 0 or not os.path.exists(out):
            self.fail("%s: exit %d: %s" % (name, r.returncode, r.stdout[-2000:]))
            return None, csv
        with open(out) as f:
            return json.load(f), csv

    def plot(self, name, report_name, keep, timeseries=(), title=None):
        """Draws the figures of a report into a scratch directory and keeps `keep` as <fig_dir>/<name>_<fig>
        (docs/figures when the page is rewritten, else WORK/figures).
        Returns {fig: "figures/<name>_<fig>"} for those written."""
        tmp = os.path.join(self.work, "plots_" + name)
        args = [self.bin, "plot", os.path.join(self.work, report_name + ".json"), "--out", tmp]
        for t in timeseries:
            args += ["--timeseries", t]
        if title:
            args += ["--title", title]
        r = sh(args)
        if r.returncode != 0:
            self.fail("plot %s: %s" % (name, r.stdout[-2000:]))
        kept = {}
        for src in keep:
            path = os.path.join(tmp, src)
            if os.path.exists(path):
                dst = "%s_%s" % (name, src)
                shutil.copy(path, os.path.join(self.fig_dir, dst))
                kept[src] = "figures/" + dst
            else:
                self.fail("plot %s: %s was not drawn" % (name, src))
        return kept


def pct(x):
    return "%.1f %%" % (100.0 * x)


def compare_runs(rep):
    return {str(r["value"]): r["report"] for r in rep["runs"]} if rep else {}


def fig_md(kept, *names):
    return " ".join("![%s](%s)" % (n, kept[n]) for n in names if n in kept)


def device_tier(name):
    """The tier of a device named in a link (testbench/simulation.cpp's device_tier): nic, leaf, spine, core."""
    if re.fullmatch(r"h\d+", name):
        return "nic"
    for tier in ("spine", "core"):
        if name.startswith(tier):
            return tier
    return "leaf"


def tshark_frames(path):
    """[(first bit of the destination MAC in ns, frame length in bytes without FCS)] of a pcap, read by tshark
    (the tap stamps simulated time from the Unix epoch, to the nanosecond)."""
    r = sh(["tshark", "-r", path, "-T", "fields", "-e", "frame.time_epoch", "-e", "frame.len"])
    if r.returncode != 0:
        return None
    out = []
    for line in r.stdout.splitlines():
        parts = line.split()
        if len(parts) == 2:
            sec, _, frac = parts[0].partition(".")
            out.append((int(sec) * 1000000000 + int((frac + "000000000")[:9]), int(parts[1])))
    return out


def tshark_write_messages(path):
    """(RoCE packets, WRITE messages, WRITE bytes) of a capture as tshark decodes it: a message per RC WRITE
    FIRST (6) or ONLY (10, 11), its length the RETH DMA length."""
    r = sh(["tshark", "-r", path, "-Y", "infiniband", "-T", "fields", "-e", "infiniband.bth.opcode",
            "-e", "infiniband.reth.dmalen"])
    if r.returncode != 0:
        return None
    packets, msgs, nbytes = 0, 0, 0
    for line in r.stdout.splitlines():
        parts = line.split("\t")
        if not parts[0].isdigit():
            continue
        packets += 1
        if int(parts[0]) in (6, 10, 11):
            msgs += 1
            nbytes += int(parts[1]) if len(parts) > 1 and parts[1].isdigit() else 0
    return packets, msgs, nbytes


def load_golden_strip():
    """scripts/golden's strip(): the report without its machine-dependent fields (one definition of them)."""
    loader = importlib.machinery.SourceFileLoader("golden", os.path.join(ROOT, "scripts", "golden"))
    spec = importlib.util.spec_from_loader("golden", loader)
    mod = importlib.util.module_from_spec(spec)
    loader.exec_module(mod)
    return mod.strip


def failing_rows(v):
    return [r for r in v.rows if r["verdict"] != "PASS"]


def write_page(v, elapsed, timings):
    cols = ("result", "expected", "source", "measured", "tolerance", "verdict", "scenario", "figure")
    failing = failing_rows(v)
    head = """# Validation

Generated by `scripts/validate` (do not edit by hand): it reruns every scenario below, redraws the figures in
`docs/figures/` with `fabricsim plot`, and rewrites this page. Every row is a test: expected values come from
formulas and sources named in each section, computed by the script, never from the model's output; the
verdict is the section's predicate on the measured figures within the stated tolerance, and any FAIL makes
`scripts/validate` exit 1. `scripts/validate --quick` runs the sections marked quick (ctest `validate_quick`).
The last full run took **%.0f s** of wall time (%s, %d CPUs): %d rows, %d PASS, %d FAIL.

| %s |
|%s
%s
""" % (elapsed, time.strftime("%Y-%m-%d", time.gmtime()), os.cpu_count() or 0, len(v.rows),
       len(v.rows) - len(failing), len(failing), " | ".join(cols), "---|" * len(cols),
       "\n".join("| " + " | ".join(("**FAIL**" if r[c] == "FAIL" else str(r[c])) for c in cols) + " |"
                 for r in v.rows))
    if failing:
        head += "\n**Failing rows, and why:**\n\n" + "\n".join(
            "- %s: %s" % (r["result"], r["reason"] or "not understood yet") for r in failing) + "\n"
    if v.failures:
        head += "\n**Failures in this run:**\n\n" + "\n".join(
            "- " + f.replace("\n", " ")[:300] for f in v.failures) + "\n"
    cost = "\n".join("| `%s` | %s | %.1f | %.1f |" % (n, "yes" if q else "", w, c) for n, q, w, c in timings)
    quick_wall = sum(w for _, q, w, _ in timings if q)
    quick_cpu = sum(c for _, q, _, c in timings if q)
    tail = """
## Cost of each section

Wall and CPU time (this process and the programs it ran) of each section in the last full run; `--quick` runs
the sections marked quick: %.0f s of wall time and %.0f s of CPU time in this run. The runs are single-threaded
(but for the two MPI ranks), so on an idle machine the wall time is about the CPU time; other jobs sharing the
2 cores stretch the wall time.

| section | quick | wall (s) | CPU (s) |
|---|---|---:|---:|
%s
""" % (quick_wall, quick_cpu, cost)
    with open(PAGE, "w") as f:
        f.write(head + "\n" + "\n".join(v.sections) + tail)


def cpu_now():
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system
