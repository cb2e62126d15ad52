#!/usr/bin/python3
"""Figures for a slide (scripts/plot.py through `fabricsim plot`): each --format writes files with the right
magic bytes, the PNGs are 150 dpi, no text is below 9 pt, the RED lines sit at the scenario's Kmin/Kmax, the
flow-rate figure draws every flow or says which, and a sweep CSV gives lines and a heat map.

Usage: plot_figures_test.py FABRICSIM_BINARY SOURCE_DIR (ctest passes both)."""
import csv
import json
import math
import os
import struct
import subprocess
import sys
import tempfile
import unittest

BINARY, SOURCE = sys.argv[1], sys.argv[2]
sys.path.insert(0, os.path.join(SOURCE, "scripts"))
import plot  # noqa: E402  (scripts/plot.py, to look at the figures before they are saved)

# A 4:1 DCQCN incast whose RED line is set in the file: Kmin 20 KB, Kmax 200 KB.
SCENARIO = """name: red_lines
run: {duration_us: 20, sample_us: 1}
topology: {kind: single_switch, hosts: 5, link_gbps: 400}
switch: {lossless_priorities: "3", ecn_classes: "3", ecn_kmin_bytes: 20000, ecn_kmax_bytes: 200000}
nic: {place_data: false, cc: dcqcn}
workload: {kind: incast, incast_senders: 4, incast_target: h0, message_bytes: 4194304}
"""
MAGIC = {"png": b"\x89PNG\r\n\x1a\n", "svg": b"<?xml", "pdf": b"%PDF-"}


def fabricsim(*args, env=None):
    r = subprocess.run([BINARY] + list(args), capture_output=True, text=True, env=env)
    return r.returncode, r.stdout + r.stderr


class Figures(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="plot_figures_")
        cls.yaml = os.path.join(cls.dir, "red.yaml")
        with open(cls.yaml, "w") as f:
            f.write(SCENARIO)
        cls.report, cls.csv = os.path.join(cls.dir, "r.json"), os.path.join(cls.dir, "ts.csv")
        code, out = fabricsim("run", cls.yaml, "--quiet", "--json", cls.report, "--timeseries", cls.csv)
        assert code == 0, out

    def test_each_format_writes_files_with_its_magic(self):
        for fmt, magic in MAGIC.items():
            out_dir = os.path.join(self.dir, fmt)
            code, out = fabricsim("plot", self.report, "--timeseries", self.csv, "--out", out_dir, "--format", fmt)
            self.assertEqual(code, 0, out)
            path = os.path.join(out_dir, "queue_depth." + fmt)
            with open(path, "rb") as f:
                self.assertEqual(f.read(len(magic)), magic, path)
            self.assertIn(path, out)
        # PNG at 150 dpi: the pHYs chunk holds pixels per metre, 150 / 0.0254 = 5905.5 -> 5906.
        with open(os.path.join(self.dir, "png", "queue_depth.png"), "rb") as f:
            data = f.read()
        i = data.find(b"pHYs")
        self.assertGreater(i, 0)
        x, y, unit = struct.unpack(">IIB", data[i + 4:i + 13])
        self.assertEqual((x, y, unit), (5906, 5906, 1))

    def test_red_lines_come_from_the_scenario_file(self):
        # What fabricsim passes to the script: a stand-in script records its arguments.
        stub, seen = os.path.join(self.dir, "stub.py"), os.path.join(self.dir, "args.json")
        with open(stub, "w") as f:
            f.write("import json, sys\njson.dump(sys.argv[1:], open(%r, 'w'))\nprint('x.png')\n" % seen)
        env = dict(os.environ, FABRICSIM_PLOT_SCRIPT=stub)
        code, out = fabricsim("plot", self.report, "--out", self.dir, env=env)
        self.assertEqual(code, 0, out)
        args = json.load(open(seen))
        self.assertEqual(args[args.index("--red") + 1], "20000,200000")
        code, out = fabricsim("plot", self.report, "--out", self.dir, "--red", "1,2", env=env)
        args = json.load(open(seen))
        self.assertEqual(args[args.index("--red") + 1], "1,2")

    def figures(self, argv):
        """Runs plot.main() on argv, keeping every figure instead of only saving it: name -> Figure."""
        kept, save = {}, plot.save

        def keep(fig, out_dir, name, written):
            kept[os.path.splitext(name)[0]] = fig
            fig.canvas.draw()  # the text sizes as save() leaves them
            save(fig, out_dir, name, written)
        plot.save = keep
        old_argv = sys.argv
        sys.argv = ["plot.py"] + argv
        try:
            self.assertEqual(plot.main(), 0)
        finally:
            plot.save, sys.argv = save, old_argv
        return kept

    def test_queue_depth_draws_kmin_and_kmax_and_no_text_is_small(self):
        figs = self.figures([self.report, "--timeseries", self.csv, "--out", os.path.join(self.dir, "py"),
                             "--red", "20000,200000"])
        ax = figs["queue_depth"].axes[0]
        red = {line.get_gid(): line.get_ydata() for line in ax.get_lines() if line.get_gid() in ("kmin", "kmax")}
        self.assertEqual(list(red["kmin"]), [20.0, 20.0])  # KB on the y axis
        self.assertEqual(list(red["kmax"]), [200.0, 200.0])
        import matplotlib.text
        for name, fig in figs.items():
            for t in fig.findobj(matplotlib.text.Text):
                if t.get_text():
                    self.assertGreaterEqual(t.get_fontsize(), 9, "%s: %r" % (name, t.get_text()))

    def test_flow_rate_draws_every_flow_or_says_which(self):
        flows = 4  # the four senders, one QP each
        figs = self.figures([self.report, "--timeseries", self.csv, "--out", os.path.join(self.dir, "py")])
        ax = figs["flow_rate"].axes[0]
        self.assertEqual(len(ax.get_lines()), 2 * flows)  # rate and goodput of each
        self.assertIn("all %d flows" % flows, ax.get_title())
        figs = self.figures([self.report, "--timeseries", self.csv, "--out", os.path.join(self.dir, "py"),
                             "--flows", "3"])
        ax = figs["flow_rate"].axes[0]
        self.assertEqual(len(ax.get_lines()), 2 * 3)
        self.assertIn("the first 3 of %d flows" % flows, ax.get_title())

    def test_a_collective_comparison_plots_busbw_per_value(self):
        report = os.path.join(self.dir, "coll.json")
        code, out = fabricsim("run", "allreduce_ring", "--quiet", "--set", "collective.max_bytes=2097152",
                              "--compare", "collective.algo=ring,tree", "--json", report)
        self.assertEqual(code, 0, out)
        figs = self.figures([report, "--out", os.path.join(self.dir, "coll")])
        ax = figs["compare"].axes[0]
        self.assertEqual(ax.get_ylabel(), "busbw (GB/s)")
        runs = json.load(open(report))["runs"]
        lines = {l.get_label(): l for l in ax.get_lines()}
        self.assertEqual(sorted(lines), ["collective.algo=ring", "collective.algo=tree"])
        for r in runs:
            line = lines["collective.algo=" + r["value"]]
            rows = r["report"]["collective"]["rows"]
            self.assertEqual(list(line.get_xdata()), [1048576, 2097152])  # 1 MiB .. 2 MiB by a factor of 2
            self.assertEqual(list(line.get_ydata()), [x["busbw_gbps"] for x in rows])

    def test_a_comparisons_time_series_are_overlaid_on_one_axis(self):
        report, ts = os.path.join(self.dir, "cmp.json"), os.path.join(self.dir, "cmp.csv")
        code, out = fabricsim("run", self.yaml, "--quiet", "--compare", "nic.cc=none,dcqcn", "--json", report,
                              "--timeseries", ts)
        self.assertEqual(code, 0, out)
        # The files the comparison wrote, one per value, as `fabricsim plot --timeseries cmp.csv` expands them.
        files = [os.path.join(self.dir, "cmp.%s.csv" % v) for v in ("none", "dcqcn")]
        figs = self.figures([report, "--timeseries", files[0], "--timeseries", files[1], "--red", "20000,200000",
                             "--out", os.path.join(self.dir, "ovl")])
        self.assertIn("compare_goodput", figs)
        self.assertIn("compare_queue", figs)
        for value in ("none", "dcqcn"):  # the sums, from the CSV each run wrote
            with open(os.path.join(self.dir, "cmp.%s.csv" % value)) as f:
                rows = list(csv.DictReader(f))
            want = {}
            for r in rows:
                t = float(r["time_ns"]) / 1e3
                want[t] = want.get(t, 0.0) + float(r["goodput_mbps"]) / 1e3
            line = {l.get_label(): l for l in figs["compare_goodput"].axes[0].get_lines()}["nic.cc=" + value]
            self.assertEqual(list(line.get_xdata()), sorted(want))
            for got, expect in zip(line.get_ydata(), [want[t] for t in sorted(want)]):
                self.assertAlmostEqual(got, expect, places=9)
            queue = {l.get_label(): l for l in figs["compare_queue"].axes[0].get_lines()}["nic.cc=" + value]
            self.assertEqual(max(queue.get_ydata()), max(float(r["max_queue_bytes"]) / 1e3 for r in rows))
        labels = [l.get_label() for l in figs["compare_queue"].axes[0].get_lines()]
        self.assertEqual(labels[:2], ["nic.cc=none", "nic.cc=dcqcn"])
        self.assertIn("Kmin 20 KB", labels)  # the RED lines
        code, out = fabricsim("plot", report, "--timeseries", ts, "--out", os.path.join(self.dir, "ovc"))
        self.assertEqual(code, 0, out)  # through the binary: the per-value files found from cmp.csv
        self.assertIn(os.path.join(self.dir, "ovc", "compare_goodput.png"), out)

    def test_the_latency_cdf_counts_every_data_packet_once(self):
        report = os.path.join(self.dir, "lat.json")
        code, out = fabricsim("run", self.yaml, "--quiet", "--compare", "nic.cc=none,dcqcn", "--json", report)
        self.assertEqual(code, 0, out)
        figs = self.figures([report, "--out", os.path.join(self.dir, "lat")])
        self.assertIn("latency_cdf", figs)
        lines = {l.get_label(): l for l in figs["latency_cdf"].axes[0].get_lines()}
        for r in json.load(open(report))["runs"]:
            h = r["report"]["stats"]["fabric"]["data_packet_latency"]
            self.assertGreater(h["count"], 0)
            self.assertEqual(sum(b["count"] for b in h["buckets"]), h["count"])
            line = lines["nic.cc=" + r["value"]]
            ys = list(line.get_ydata())
            self.assertEqual(ys[0], 0.0)
            self.assertEqual(len(ys), len(h["buckets"]) + 1)
            self.assertAlmostEqual(ys[-1], 1.0, places=12)
            self.assertEqual(ys, sorted(ys))
            self.assertAlmostEqual(line.get_xdata()[-1], h["max"] / 1e3)
            self.assertAlmostEqual(line.get_xdata()[0], h["min"] / 1e3)
            # Each point sits at its own bucket's top: at or above its lowest value, within the bucket's width
            # (at most 1/32 of the lowest value above 64 ps), never at the next non-empty bucket's edge.
            for x, b in zip(line.get_xdata()[1:], h["buckets"]):
                self.assertGreaterEqual(x * 1e3, b["from"] - 1e-6)
                self.assertLessEqual(x * 1e3, max(b["from"], b["from"] * (1 + 1 / 32.0)) + 1e-6)
            # The p99 marker sits at the report's p99.
            p99 = lines["_nic.cc=%s p99" % r["value"]]
            self.assertEqual(list(p99.get_xdata()), [r["report"]["fabric"]["data_packet_latency_ns"]["p99"]])

    def test_latency_percentile_bars_recompute_from_the_histogram(self):
        # A comparison's p50 and p99 bars per value (the failed-links figure of docs/validation.md is one): each
        # bar's height is recomputed here from the run's latency histogram, a second implementation of
        # core::fine_histogram::quantile: the top of the bucket holding the ceil(q x count)-th smallest value
        # (below 64 ps a bucket per value, above 32 per power of two), capped at the largest value.
        report = os.path.join(self.dir, "pct.json")
        code, out = fabricsim("run", self.yaml, "--quiet", "--compare", "nic.cc=none,dcqcn", "--json", report)
        self.assertEqual(code, 0, out)
        figs = self.figures([report, "--out", os.path.join(self.dir, "pct")])
        self.assertIn("latency_percentiles", figs)
        ax = figs["latency_percentiles"].axes[0]
        bars = {q: [p.get_height() for p in ax.patches if p.get_gid() == "latency_" + q] for q in ("p50", "p99")}
        runs = json.load(open(report))["runs"]
        self.assertEqual([t.get_text() for t in ax.get_xticklabels()], ["nic.cc=" + r["value"] for r in runs])

        def quantile_ns(h, q):
            rank = max(1, min(int(math.ceil(q * h["count"])), h["count"]))
            seen = 0
            for b in h["buckets"]:
                seen += b["count"]
                if seen >= rank:
                    lo = b["from"]
                    top = lo if lo < 64 else lo + 2 ** (lo.bit_length() - 1 - 5) - 1
                    return min(top, h["max"]) / 1e3
            return h["max"] / 1e3
        for q, frac in (("p50", 0.5), ("p99", 0.99)):
            self.assertEqual(len(bars[q]), len(runs))
            for height, r in zip(bars[q], runs):
                h = r["report"]["stats"]["fabric"]["data_packet_latency"]
                self.assertGreater(h["count"], 0)
                self.assertAlmostEqual(height, quantile_ns(h, frac), places=6)
        self.assertTrue(all(p99 >= p50 for p50, p99 in zip(bars["p50"], bars["p99"])))
        # A single run has nothing to set side by side: no such figure.
        self.assertNotIn("latency_percentiles", self.figures([self.report, "--out", os.path.join(self.dir, "pct1")]))

    def test_fct_figures_recompute_from_the_flows(self):
        # Generated Hadoop flows on one switch, without and with DCQCN: the plotted percentiles per size bucket
        # are recomputed here from flows[] (nearest rank over each bucket's slowdowns, buckets by bytes), and
        # the CDF holds every completed flow's slowdown once.
        yaml = os.path.join(self.dir, "fct.yaml")
        with open(yaml, "w") as f:
            f.write("name: fct_plot\ntopology: {kind: single_switch, hosts: 4, link_gbps: 100}\n"
                    "nic: {place_data: false}\nworkload: {kind: generated, distribution: hadoop, load: 0.5, "
                    "flow_count: 300, queue_pairs: per_flow}\n")
        report = os.path.join(self.dir, "fct.json")
        code, out = fabricsim("run", yaml, "--quiet", "--compare", "nic.cc=none,dcqcn", "--json", report)
        self.assertEqual(code, 0, out)
        figs = self.figures([report, "--out", os.path.join(self.dir, "fct")])
        self.assertIn("fct_slowdown", figs)
        self.assertIn("fct_cdf", figs)
        bounds = [10000, 100000, 1000000, 10000000, float("inf")]
        for r in json.load(open(report))["runs"]:
            flows = [f for f in r["report"]["flows"] if f.get("completed")]
            self.assertGreater(len(flows), 100)
            per_bucket = [[] for _ in bounds]
            for f in flows:
                per_bucket[next(i for i, b in enumerate(bounds) if f["bytes"] <= b)].append(f["slowdown"])
            label = "nic.cc=" + r["value"]
            for ax, q in zip(figs["fct_slowdown"].axes, (0.50, 0.95, 0.99)):
                line = {l.get_label(): l for l in ax.get_lines()}[label]
                want = [(i, sorted(v)[max(0, math.ceil(q * len(v)) - 1)]) for i, v in enumerate(per_bucket) if v]
                self.assertEqual(list(line.get_xdata()), [i for i, _ in want])
                for got, (_, w) in zip(line.get_ydata(), want):
                    self.assertAlmostEqual(got, w, places=9)
            cdf = {l.get_label(): l for l in figs["fct_cdf"].axes[0].get_lines()}[label]
            self.assertEqual(list(cdf.get_xdata()), sorted(f["slowdown"] for f in flows))
            self.assertEqual(list(cdf.get_ydata()), [(i + 1) / len(flows) for i in range(len(flows))])

    def test_tenants_get_alone_and_shared_bars_per_job_and_value(self):
        # Two jobs sharing a leaf-spine's one uplink, run with two routing choices; jobs.png has a panel per
        # job and, per value, a bar alone and a bar shared whose heights are the report's figures.
        yaml = os.path.join(self.dir, "tenants.yaml")
        with open(yaml, "w") as f:
            f.write("name: tenants_plot\ntopology: {kind: leaf_spine, leaves: 2, hosts_per_leaf: 2, spines: 1}\n"
                    "jobs:\n  - {name: ring, hosts: [h0, h2], workload: {kind: collective}, collective: "
                    "{min_bytes: 262144, max_bytes: 262144, iterations: 1}}\n"
                    "  - {name: noisy, hosts: [h1, h3], workload: {kind: all_to_all, message_bytes: 1048576}}\n")
        report = os.path.join(self.dir, "tenants.json")
        code, out = fabricsim("run", yaml, "--quiet", "--compare", "switch.routing=ecmp,adaptive", "--json", report)
        self.assertEqual(code, 0, out)
        figs = self.figures([report, "--out", os.path.join(self.dir, "jobs")])
        self.assertIn("jobs", figs)
        runs = json.load(open(report))["runs"]
        axes = figs["jobs"].axes
        self.assertEqual([ax.get_title() for ax in axes], ["noisy (all_to_all)", "ring (collective)"])
        for ax in axes:
            name = ax.get_title().split(" ")[0]
            for series in ("alone", "shared"):
                bars = [p for p in ax.patches if p.get_gid() == "%s:%s" % (name, series)]
                self.assertEqual([b.get_height() for b in bars],
                                 [r["report"]["jobs"][name][series] for r in runs])
            labels = [t.get_text() for t in ax.texts]
            self.assertEqual(labels, ["x%.2f" % r["report"]["jobs"][name]["slowdown"] for r in runs])
        self.assertEqual(axes[1].get_ylabel(), "job time, first post to last completion (us)")

    def test_the_training_timeline_draws_every_task_of_the_report_where_it_ran(self):
        report = os.path.join(self.dir, "chakra.json")
        code, out = fabricsim("run", os.path.join(SOURCE, "testbench/scenarios/chakra_dp_step.yaml"), "--quiet",
                              "--json", report)
        self.assertEqual(code, 0, out)
        figs = self.figures([report, "--out", os.path.join(self.dir, "tl")])
        self.assertIn("training_timeline", figs)
        with open(report) as f:
            tl = json.load(f)["training"]["timeline"]
        ax = figs["training_timeline"].axes[0]
        # Every bar of the report, recomputed here: GPU g's compute on row 2g, its communication on row 2g + 1,
        # from start to end, coloured by its kind (one legend entry per kind).
        want = sorted((round(2 * g + (1 if k else 0) - 0.4, 6), round(s, 6), round(e - s, 6))
                      for g, k, s, e in tl["bars"])
        got = sorted((round(p.get_y(), 6), round(p.get_x(), 6), round(p.get_width(), 6)) for p in ax.patches)
        self.assertEqual(got, want)
        self.assertEqual([t.get_text() for t in ax.get_legend().get_texts()], tl["kinds"])
        colour = {}
        for c in ax.containers:  # one bar container per kind: a single colour each, different between kinds
            faces = {tuple(p.get_facecolor()) for p in c.patches}
            self.assertEqual(len(faces), 1)
            colour[c.get_label()] = faces.pop()
        self.assertEqual(len(set(colour.values())), len(tl["kinds"]))
        self.assertEqual([t.get_text() for t in ax.get_yticklabels()][:2], ["GPU 0 compute", "GPU 0 comm"])

    def test_a_sweep_csv_gives_lines_and_a_heat_map(self):
        sweep = os.path.join(self.dir, "sw")
        code, out = fabricsim("sweep", "default", "--grid", "nic.mtu_bytes=1024,4096", "--grid",
                              "topology.link_gbps=100,400", "--jobs", "2", "--out", sweep, "--quiet")
        self.assertEqual(code, 0, out)
        figs = self.figures([os.path.join(sweep, "sweep.csv"), "--out", os.path.join(self.dir, "swp")])
        self.assertEqual(sorted(figs), ["sweep", "sweep_heatmap"])
        lines = figs["sweep"].axes[0].get_lines()
        self.assertEqual(len(lines), 2)  # one per link rate, over the two MTUs
        rows = {(r["nic.mtu_bytes"], r["topology.link_gbps"]): r["effective_throughput"]
                for r in json.load(open(os.path.join(sweep, "sweep.json")))["rows"]}
        by_label = {l.get_label(): list(l.get_ydata()) for l in lines}
        want = [100 * rows[("1024", "400")], 100 * rows[("4096", "400")]]
        for got, expect in zip(by_label["topology.link_gbps=400"], want):  # the CSV keeps 6 digits
            self.assertAlmostEqual(got, expect, delta=1e-4 * expect)
        code, out = fabricsim("plot", os.path.join(sweep, "sweep.csv"), "--out", os.path.join(self.dir, "swc"))
        self.assertEqual(code, 0, out)
        self.assertTrue(os.path.exists(os.path.join(self.dir, "swc", "sweep_heatmap.png")))


if __name__ == "__main__":
    unittest.main(argv=[sys.argv[0]] + sys.argv[3:])
