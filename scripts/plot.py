#!/usr/bin/python3
"""Figures of a fabricsim run, from its JSON report (docs/report.md) and optional time-series CSVs, or of a
sweep from its CSV (fabricsim sweep).

Run by `fabricsim plot REPORT.json [--out DIR] [--timeseries CSV ...] [--format png|svg|pdf]`; python only
draws, it never simulates. PNGs are 150 dpi; every text is at least 9 pt (a slide's smallest readable size).
Each figure is written only when the report (or CSV) holds what it needs (names below with .png; --format
svg or pdf writes the same names with that extension):

  flow_rate.png        per-flow sending rate and goodput over time      (time series)
  queue_depth.png      queue depth over time per congested port         (time series)
  flow_goodput.png     goodput per completed flow                       (flows[])
  pfc_pauses.png       PFC frames sent per switch port                  (fabric.pfc_pauses_by_port)
  pfc_timeline.png     PFC pause timeline: XOFF..XON per port, priority (fabric.pfc_pause_intervals)
  ooo_distance.png     out-of-order distance histogram over the NICs    (stats <nic>.ooo_distance)
  busbw.png            nccl-tests busbw against message size            (collective)
  link_utilization.png link utilization heat map, transmitter x receiver (ports[])
  compare.png          effective throughput (an incast: bottleneck utilization) per value of a comparison;
                       a comparison of collectives: busbw against message size, one line per value
  latency_cdf.png      CDF of data packets' one-way latency, p50/p99 marked; a comparison: one line per value
                                                                        (stats fabric.data_packet_latency)
  latency_percentiles.png  a comparison's p50 and p99 of data packet latency, a pair of bars per value
                                                                        (fabric.data_packet_latency_ns)
  fct_slowdown.png     FCT slowdown p50, p95, p99 per flow-size bucket; a comparison: one line per value (fct)
  fct_cdf.png          CDF of every completed flow's FCT slowdown; a comparison: one line per value
                                                                        (flows[].slowdown)
  compare_goodput.png  a comparison's time series overlaid: total goodput over time, one line per value
  compare_queue.png    and the deepest switch queue over time, one line per value (with the RED lines)
  jobs.png             tenants: each job's headline figure alone and shared, one panel per job, a pair of
                       bars per compared value (or one pair)                             (jobs)
  training_timeline.png  a training step's tasks over time: per GPU a compute row and a communication row,
                       bars coloured by kind (compute, "tp allreduce", a trace's "world allreduce", ...)
                                                                        (training.timeline)
  sweep.png            a sweep's metric against its first key, one line per value of the other keys
  sweep_heatmap.png    a two-key sweep's metric as a heat map, each cell labelled

Prints the path of every file written.
"""
import argparse
import csv
import json
import math
import os
import sys
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

DPI = 150
SIZE = (7.0, 4.2)
MIN_PT = 9  # the smallest text on any figure
FORMAT = "png"  # --format
plt.rcParams.update({"font.size": 10, "axes.titlesize": 11, "axes.labelsize": 10, "xtick.labelsize": MIN_PT,
                     "ytick.labelsize": MIN_PT, "legend.fontsize": MIN_PT})


def save(fig, out_dir, name, written):
    name = os.path.splitext(name)[0] + "." + FORMAT
    path = os.path.join(out_dir, name)
    for ax in fig.axes:  # a long title (scenario, value, what) on two lines rather than cut at the edge
        t = ax.get_title()
        if len(t) > 64 and "\n" not in t and ": " in t:
            ax.set_title(t.replace(": ", ":\n", 1), fontsize=11)
    for text in fig.findobj(matplotlib.text.Text):  # nothing below MIN_PT, whatever a figure asked for
        if text.get_fontsize() < MIN_PT:
            text.set_fontsize(MIN_PT)
    fig.tight_layout()
    fig.savefig(path, dpi=DPI, format=FORMAT)
    plt.close(fig)
    written.append(path)


def read_timeseries(path):
    rows = []
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            rows.append(r)
    return rows


def plot_timeseries(rows, title, out_dir, suffix, written, red=None, max_flows=0):
    """`red`: (Kmin, Kmax) in bytes, drawn on the queue depth; `max_flows`: draw only the first N flows."""
    if not rows:
        return
    flows = defaultdict(lambda: ([], [], []))
    for r in rows:
        key = "%s->%s qp%s" % (r["src"], r["dst"], r["qpn"])
        t, rate, good = flows[key]
        t.append(float(r["time_ns"]) / 1e3)
        rate.append(float(r["rate_mbps"]) / 1e3)
        good.append(float(r["goodput_mbps"]) / 1e3)
    shown = sorted(flows.items())
    if max_flows and max_flows < len(shown):
        shown = shown[:max_flows]
    selection = ("all %d flows" % len(flows) if len(shown) == len(flows)
                 else "the first %d of %d flows (--flows)" % (len(shown), len(flows)))
    many = len(shown) > 8
    fig, ax = plt.subplots(figsize=(SIZE[0], SIZE[1] + (1.2 if many else 0)))
    for key, (t, rate, good) in shown:
        if many:  # the paced rates only: sixteen noisy goodput lines hide each other
            ax.plot(t, rate, lw=0.8, label=key)
            continue
        line, = ax.plot(t, good, lw=1, label=key + " goodput")
        ax.plot(t, rate, lw=1, ls="--", color=line.get_color(), label=key + " rate")
    ax.set_xlabel("simulated time (us)")
    ax.set_ylabel("rate (Gb/s)")
    ax.set_title("%s: %s over time, %s" % (title, "sending rate" if many else "rate (dashed) and goodput", selection))
    ax.grid(alpha=0.3)
    if len(shown) <= 32:  # beyond, a legend would hide the plot; the title says how many
        ax.legend(ncol=4 if many else 2, loc="upper center", bbox_to_anchor=(0.5, -0.18), frameon=False)
    save(fig, out_dir, "flow_rate%s.png" % suffix, written)

    # Queue depth of the port facing each destination (the congested last hop of an incast), and the
    # deepest port of the fabric.
    ports = defaultdict(dict)
    deepest = {}
    for r in rows:
        t = float(r["time_ns"]) / 1e3
        ports["port facing " + r["dst"]][t] = float(r["dst_port_queue_bytes"]) / 1e3
        deepest[t] = float(r["max_queue_bytes"]) / 1e3
    congested = {k: v for k, v in ports.items() if max(v.values()) > 0}
    fig, ax = plt.subplots(figsize=SIZE)
    for key, series in sorted(congested.items())[:8]:
        ts = sorted(series)
        ax.plot(ts, [series[t] for t in ts], lw=1, label=key)
    ts = sorted(deepest)
    ax.plot(ts, [deepest[t] for t in ts], lw=1, ls=":", color="black", label="deepest port of the fabric")
    if red:  # the RED marking line of switch.ecn_kmin_bytes .. ecn_kmax_bytes
        ax.axhline(red[0] / 1e3, color="tab:orange", ls="--", lw=1, gid="kmin",
                   label="Kmin %g KB (ECN marking starts)" % (red[0] / 1e3))
        ax.axhline(red[1] / 1e3, color="tab:red", ls="--", lw=1, gid="kmax",
                   label="Kmax %g KB (every packet marked)" % (red[1] / 1e3))
    ax.set_xlabel("simulated time (us)")
    ax.set_ylabel("queue depth (KB)")
    ax.set_title("%s: switch queue depth over time" % title)
    ax.grid(alpha=0.3)
    ax.legend()
    save(fig, out_dir, "queue_depth%s.png" % suffix, written)


TIMELINE_ROWS = 32


def plot_pfc_timeline(log, sim_end_ns, title, out_dir, suffix, written):
    """One row per (link the pause frames went down, priority): a bar from XOFF to XON."""
    intervals = log.get("intervals") or []
    if not intervals:
        return
    rows = defaultdict(list)
    for iv in intervals:
        end = iv["end_ns"] if iv.get("end_ns") is not None else sim_end_ns
        rows["%s prio %d" % (iv["link"], iv["priority"])].append((iv["start_ns"] / 1e3, (end - iv["start_ns"]) / 1e3))
    # The most paused rows, in the order their first pause began: back-pressure spreading reads top down.
    total = {k: sum(d for _, d in v) for k, v in rows.items()}
    shown = sorted(total, key=lambda k: -total[k])[:TIMELINE_ROWS]
    shown.sort(key=lambda k: min(s for s, _ in rows[k]))
    fig, ax = plt.subplots(figsize=(7.0, max(3.0, 1.4 + 0.2 * len(shown))))
    for i, k in enumerate(shown):
        ax.broken_barh(rows[k], (i - 0.4, 0.8), color="tab:red")
    ax.set_yticks(range(len(shown)))
    ax.set_yticklabels(shown)
    ax.invert_yaxis()
    ax.set_ylim(len(shown) - 0.5, -0.5)
    ax.set_xlim(0, sim_end_ns / 1e3 if sim_end_ns > 0 else None)
    ax.set_xlabel("simulated time (us)")
    ax.set_ylabel("link the pause went down, priority")
    note = ""
    if len(rows) > len(shown):
        note += ", the %d most paused of %d" % (len(shown), len(rows))
    if log.get("complete_until_ns") is not None:
        cut = log["complete_until_ns"] / 1e3
        ax.axvline(cut, color="black", ls=":", lw=1)
        note += ", log full after %.1f us (first %d XOFFs kept)" % (cut, log.get("limit", 0))
    ax.set_title("%s:\nPFC pause timeline, XOFF to XON%s" % (title, note), fontsize=10)
    ax.grid(axis="x", alpha=0.3)
    save(fig, out_dir, "pfc_timeline%s.png" % suffix, written)


def fine_bucket_top(lo):
    """The largest value in the core::fine_histogram bucket whose lowest value is `lo`: values below 64 have a
    bucket each, above that 32 buckets per power of two (sc_models/core/fine_histogram.h)."""
    if lo < 64:
        return lo
    return lo + (1 << (lo.bit_length() - 1 - 5)) - 1


def latency_cdf(rep):
    """(latency in ns, fraction of packets at or below it): 0 at the smallest value, then one point per non-empty
    bucket of the run's data packet latency
    histogram (stats.fabric.data_packet_latency: a bucket's `from` is its lowest value, in ps); x is each
    bucket's top (core::fine_histogram's layout, capped at the largest value), so a point never understates;
    None when the run counted none."""
    h = rep.get("stats", {}).get("fabric", {}).get("data_packet_latency")
    if not h or not h.get("count"):
        return None
    buckets = h["buckets"]
    xs, ys, seen = [int(h["min"]) / 1e3], [0.0], 0  # from 0 at the smallest value, so one bucket shows a rise
    for b in buckets:
        seen += int(b["count"])
        xs.append(min(fine_bucket_top(int(b["from"])), int(h["max"])) / 1e3)
        ys.append(seen / float(h["count"]))
    return xs, ys


def plot_latency_cdf(runs, title, out_dir, written):
    """runs: [(label, report)]; one CDF line each, with its p50 and p99 marked."""
    lines = [(label, latency_cdf(r), r) for label, r in runs]
    lines = [(label, c, r) for label, c, r in lines if c]
    if not lines:
        return
    fig, ax = plt.subplots(figsize=SIZE)
    for label, (xs, ys), r in lines:
        line, = ax.step(xs, ys, where="post", label=label)
        lat = r.get("fabric", {}).get("data_packet_latency_ns", {})
        for q, marker in (("p50", "o"), ("p99", "^")):
            if lat.get(q) is not None:
                ax.plot([lat[q]], [0.5 if q == "p50" else 0.99], marker, color=line.get_color(),
                        label="_%s %s" % (label, q))
    ax.set_xscale("log")
    ax.set_xlabel("one-way latency of data packets (ns, log scale)")
    ax.set_ylabel("fraction of packets")
    ax.set_ylim(0, 1.02)
    ax.set_title("%s: data packet latency (o p50, ^ p99)" % title)
    ax.grid(alpha=0.3)
    if len(lines) > 1:
        ax.legend()
    save(fig, out_dir, "latency_cdf.png", written)


def plot_latency_percentiles(runs, title, out_dir, written):
    """runs: [(label, report)]; for a comparison (two runs or more with a latency), the report's p50 and p99 of
    data packet latency (fabric.data_packet_latency_ns) as a pair of bars per run, on a log axis."""
    got = [(label, r.get("fabric", {}).get("data_packet_latency_ns", {})) for label, r in runs]
    got = [(label, lat) for label, lat in got if lat.get("count") and lat.get("p50") is not None]
    if len(got) < 2:
        return
    fig, ax = plt.subplots(figsize=(max(SIZE[0], 1.1 * len(got) + 1.5), SIZE[1]))
    width = 0.38
    for k, (q, colour) in enumerate((("p50", "tab:blue"), ("p99", "tab:red"))):
        xs = [i + (k - 0.5) * width for i in range(len(got))]
        ys = [lat[q] for _, lat in got]
        ax.bar(xs, ys, width, color=colour, label=q, gid="latency_" + q)
        for x, y in zip(xs, ys):
            ax.text(x, y, "%.0f" % y, ha="center", va="bottom", fontsize=MIN_PT)
    ax.set_xticks(range(len(got)))
    ax.set_xticklabels([label for label, _ in got], rotation=20 if len(got) > 4 else 0, ha="right" if len(got) > 4
                       else "center")
    ax.set_yscale("log")
    ax.set_ylabel("one-way latency of data packets (ns, log scale)")
    ax.set_title("%s: data packet latency, p50 and p99" % title)
    ax.grid(axis="y", alpha=0.3)
    ax.legend()
    save(fig, out_dir, "latency_percentiles.png", written)


FCT_QUANTILES = (("p50_slowdown", "p50"), ("p95_slowdown", "p95"), ("p99_slowdown", "p99"))


def fct_percentiles(rep):
    """(bucket labels, {"p50": [...], "p95": [...], "p99": [...]}) from a report's `fct` buckets (docs/report.md),
    None where a bucket completed no flow; None when the report has no `fct` or no bucket completed a flow."""
    buckets = rep.get("fct", {}).get("buckets", [])
    if not any(b.get("completed") for b in buckets):
        return None
    return [b["bucket"] for b in buckets], {name: [b.get(key) for b in buckets] for key, name in FCT_QUANTILES}


def fct_cdf(rep):
    """(sorted slowdowns, fraction of completed flows at or below each) over the report's completed flows; None
    when no flow has a slowdown."""
    xs = sorted(float(f["slowdown"]) for f in rep.get("flows", []) if f.get("completed") and "slowdown" in f)
    if not xs:
        return None
    return xs, [(i + 1) / float(len(xs)) for i in range(len(xs))]


def plot_fct(runs, title, out_dir, written):
    """runs: [(label, report)]: the slowdown percentiles per size bucket (one panel per percentile) and the CDF
    of the slowdowns, one line per run."""
    per = [(label, fct_percentiles(r), fct_cdf(r)) for label, r in runs]
    per = [x for x in per if x[1]]
    if not per:
        return
    fig, axes = plt.subplots(1, 3, figsize=(SIZE[0] * 1.6, SIZE[1]), sharey=True)
    for ax, (_, q) in zip(axes, FCT_QUANTILES):
        for label, (names, values), _ in per:
            pts = [(i, v) for i, v in enumerate(values[q]) if v is not None]
            ax.plot([i for i, _ in pts], [v for _, v in pts], "o-", label=label)
        names = per[0][1][0]
        ax.set_xticks(range(len(names)))
        ax.set_xticklabels(names, rotation=30, ha="right")
        ax.set_yscale("log")
        ax.set_title("%s slowdown" % q)
        ax.grid(alpha=0.3, which="both")
    axes[0].set_ylabel("FCT / ideal FCT (log scale)")
    axes[0].set_xlabel("flow size")
    if len(per) > 1:
        axes[-1].legend()
    fig.suptitle("%s: FCT slowdown per flow size" % title, fontsize=11)
    fig.tight_layout()
    save(fig, out_dir, "fct_slowdown.png", written)
    cdfs = [(label, c) for label, _, c in per if c]
    if not cdfs:
        return
    fig, ax = plt.subplots(figsize=SIZE)
    for label, (xs, ys) in cdfs:
        ax.step(xs, ys, where="post", label=label)
    ax.set_xscale("log")
    ax.set_xlabel("FCT slowdown (FCT / ideal FCT, log scale)")
    ax.set_ylabel("fraction of completed flows")
    ax.set_ylim(0, 1.02)
    ax.set_title("%s: FCT slowdown of every flow" % title)
    ax.grid(alpha=0.3, which="both")
    if len(cdfs) > 1:
        ax.legend()
    save(fig, out_dir, "fct_cdf.png", written)


def timeline_rows(timeline):
    """The bars of a training report's timeline as (row, kind, start_us, end_us): GPU g's compute stream on row
    2g, its communication on row 2g + 1."""
    return [(2 * int(g) + (1 if int(k) else 0), int(k), float(s), float(e)) for g, k, s, e in timeline["bars"]]


def plot_training_timeline(rep, title, out_dir, suffix, written):
    """training_timeline.png: one horizontal bar per task, rows per GPU stream, one colour per kind."""
    tl = rep.get("training", {}).get("timeline")
    if not tl or not tl.get("bars"):
        return
    rows = timeline_rows(tl)
    gpus = int(tl["gpus"])
    fig, ax = plt.subplots(figsize=(SIZE[0] + 1.5, max(SIZE[1], 0.5 * 2 * gpus + 1.5)))
    colors = plt.get_cmap("tab10")
    for k, kind in enumerate(tl["kinds"]):
        bars = [(r, s, e) for r, kk, s, e in rows if kk == k]
        if bars:
            ax.barh([r for r, _, _ in bars], [e - s for _, s, e in bars], left=[s for _, s, _ in bars], height=0.8,
                    color=colors(k % 10), edgecolor="white", linewidth=0.4, label=kind, alpha=1.0 if k == 0 else 0.75)
    ax.set_yticks(range(2 * gpus))
    ax.set_yticklabels(["GPU %d %s" % (r // 2, "comm" if r % 2 else "compute") for r in range(2 * gpus)])
    ax.invert_yaxis()
    ax.set_xlabel("simulated time (us)")
    t = rep["training"]
    ax.set_title("%s: training step timeline (step %.1f us%s)" % (
        title, t.get("step_time_us", 0.0), ", first %d GPUs" % gpus if gpus < int(t.get("gpus", gpus)) else ""))
    ax.grid(axis="x", alpha=0.3)
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.15), ncol=min(4, len(tl["kinds"])))
    save(fig, out_dir, "training_timeline%s.png" % suffix, written)


def plot_report(rep, title, out_dir, suffix, written):
    plot_training_timeline(rep, title, out_dir, suffix, written)
    flows = [f for f in rep.get("flows", []) if f.get("completed") and "goodput_gbps" in f]
    if flows:
        fig, ax = plt.subplots(figsize=SIZE)
        ax.bar(range(len(flows)), [f["goodput_gbps"] for f in flows], color="tab:blue")
        ax.set_xlabel("flow (id)")
        ax.set_ylabel("goodput (Gb/s)")
        if len(flows) <= 24:
            ax.set_xticks(range(len(flows)))
            ax.set_xticklabels(["%d\n%s>%s" % (f["id"], f["src"], f["dst"]) for f in flows])
        ax.set_title("%s: goodput per completed flow" % title)
        ax.grid(axis="y", alpha=0.3)
        save(fig, out_dir, "flow_goodput%s.png" % suffix, written)

    fabric = rep.get("fabric", {})
    stats = rep.get("stats", {})
    pauses = fabric.get("pfc_pauses_by_port") or []
    if pauses:
        paused_us = defaultdict(float)
        for inst, entries in stats.items():
            if ".tc" in inst and "paused_us" in entries:
                paused_us[inst.rsplit(".tc", 1)[0]] += float(entries["paused_us"].get("value", 0))
        pauses = sorted(pauses, key=lambda p: -p["pause_frames_sent"])[:24]
        fig, ax = plt.subplots(figsize=(SIZE[0], max(SIZE[1], 1.5 + 0.2 * len(pauses))))
        labels = [p["link"] for p in pauses]
        ax.barh(range(len(pauses)), [p["pause_frames_sent"] for p in pauses], color="tab:red")
        ax.set_yticks(range(len(pauses)))
        ax.set_yticklabels(labels)
        ax.invert_yaxis()
        ax.set_xlabel("PFC frames sent (frames)")
        ax.set_title("%s: PFC pauses by port (the link they were sent on)" % title)
        ax.grid(axis="x", alpha=0.3)
        save(fig, out_dir, "pfc_pauses%s.png" % suffix, written)

    plot_pfc_timeline(fabric.get("pfc_pause_intervals") or {}, float(rep.get("simulated_time_ns", 0)), title,
                      out_dir, suffix, written)

    # Out-of-order distance: the NICs' power-of-two histograms, summed.
    buckets = defaultdict(int)
    for inst, entries in stats.items():
        h = entries.get("ooo_distance")
        if h and h.get("count", 0) > 0:
            for b in h.get("buckets", []):
                buckets[int(b["below"])] += int(b["count"])
    if buckets:
        keys = sorted(buckets)
        labels = []
        for b in keys:
            lo = 0 if b == 1 else b // 2
            labels.append("0" if b == 1 else ("%d-%d" % (lo, b - 1) if b < 2**63 else ">= %d" % lo))
        fig, ax = plt.subplots(figsize=SIZE)
        ax.bar(range(len(keys)), [buckets[b] for b in keys], color="tab:purple")
        ax.set_xticks(range(len(keys)))
        ax.set_xticklabels(labels, rotation=30)
        ax.set_xlabel("distance ahead of the expected PSN (PSNs, power-of-two buckets)")
        ax.set_ylabel("out-of-order arrivals (packets)")
        ax.set_title("%s: out-of-order distance at the receivers" % title)
        ax.grid(axis="y", alpha=0.3)
        save(fig, out_dir, "ooo_distance%s.png" % suffix, written)

    coll = rep.get("collective")
    if coll and coll.get("rows"):
        rows = [r for r in coll["rows"] if r.get("busbw_gbps") is not None]
        if rows:
            fig, ax = plt.subplots(figsize=SIZE)
            ax.plot([r["size"] for r in rows], [r["busbw_gbps"] for r in rows], "o-", label="busbw")
            ax.plot([r["size"] for r in rows], [r["algbw_gbps"] for r in rows], "s--", label="algbw")
            if coll.get("link_gbps"):
                ax.axhline(coll["link_gbps"] / 8.0, color="gray", ls=":", label="line rate / 8 (GB/s)")
            ax.set_xscale("log", base=2)
            ax.set_xlabel("message size (bytes)")
            ax.set_ylabel("bandwidth (GB/s)")
            ax.set_title("%s: %s %s over %d ranks (nccl-tests busbw)" %
                         (title, coll.get("op", ""), coll.get("algo", ""), coll.get("ranks", 0)))
            ax.grid(alpha=0.3)
            ax.legend()
            save(fig, out_dir, "busbw%s.png" % suffix, written)

    ports = rep.get("ports", [])
    if ports:
        senders, receivers, util = [], [], {}
        for p in ports:
            name = p.get("link", "")
            if "_to_" not in name:
                continue
            a, b = name.split("_to_", 1)
            util[(a, b)] = util.get((a, b), 0.0) + float(p.get("utilization", 0.0))
            if a not in senders:
                senders.append(a)
            if b not in receivers:
                receivers.append(b)
        # In a large fabric with switch-to-switch links, map those (the fabric's core, where ECMP collides):
        # host links would make the map a mostly empty band of hundreds of rows. A small one shows every link.
        def is_host(n):
            return n.startswith("h") and n[1:].isdigit()
        core = {k: v for k, v in util.items() if not is_host(k[0]) and not is_host(k[1])}
        what = "link"
        if core and len(set(senders) | set(receivers)) > 48:
            util, what = core, "switch-to-switch link"
            senders = [n for n in senders if not is_host(n)]
            receivers = [n for n in receivers if not is_host(n)]
        if util:
            def order(n):  # hosts, then leaves, spines, cores, by number
                digits = "".join(c for c in n if c.isdigit())
                return (n.rstrip("0123456789_"), int(digits) if digits else 0)
            senders.sort(key=order)
            receivers.sort(key=order)
            grid = [[util.get((a, b), math.nan) * 100 for b in receivers] for a in senders]
            fig, ax = plt.subplots(figsize=(7.5, max(5.6, 2.0 + 0.18 * min(len(senders), 32))))
            im = ax.imshow(grid, aspect="auto", cmap="viridis", vmin=0, vmax=100, interpolation="nearest")
            fig.colorbar(im, ax=ax, label="utilization (% of the link's time serializing)")
            step = max(1, len(senders) // 32)
            ax.set_yticks(range(0, len(senders), step))
            ax.set_yticklabels(senders[::step])
            step = max(1, len(receivers) // 32)
            ax.set_xticks(range(0, len(receivers), step))
            ax.set_xticklabels(receivers[::step], rotation=90)
            ax.set_xlabel("receiving end")
            ax.set_ylabel("transmitting end")
            ax.set_title("%s:\n%s utilization over %.1f us simulated" %
                         (title, what, float(rep.get("simulated_time_ns", 0)) / 1e3), fontsize=10)
            save(fig, out_dir, "link_utilization%s.png" % suffix, written)


def number(text):
    try:
        return float(text)
    except (TypeError, ValueError):
        return None


# Sweep columns that are fractions, drawn as percentages.
FRACTIONS = {"effective_throughput", "mean_flow_throughput", "min_flow_throughput", "bottleneck_utilization"}


def plot_sweep(path, metric, title, out_dir, written):
    """A sweep's CSV (fabricsim sweep): the keys are the columns between `point` and `status`."""
    with open(path, newline="") as f:
        reader = csv.DictReader(f)
        rows = list(reader)
        columns = reader.fieldnames or []
    if "point" not in columns or "status" not in columns:
        sys.stderr.write("plot: %s is not a sweep CSV (no point and status columns)\n" % path)
        return 2
    keys = columns[1:columns.index("status")]
    if not metric:  # the headline: busbw for collectives, the bottleneck for an incast, else throughput
        for m in ("avg_busbw_gbps", "bottleneck_utilization", "effective_throughput"):
            if any(number(r.get(m)) is not None for r in rows):
                metric = m
                break
    if metric not in columns:
        sys.stderr.write("plot: %s has no column %s (columns: %s)\n" % (path, metric, ", ".join(columns)))
        return 2
    scale = 100.0 if metric in FRACTIONS else 1.0
    label = metric + (" (%)" if scale == 100.0 else "")
    x_key = keys[0]
    x_values = list(dict.fromkeys(r[x_key] for r in rows))
    numeric = all(number(v) is not None for v in x_values)
    lines = defaultdict(dict)  # the other keys' values -> x -> metric
    for r in rows:
        lines[", ".join("%s=%s" % (k, r[k]) for k in keys[1:])][r[x_key]] = number(r.get(metric))
    fig, ax = plt.subplots(figsize=SIZE)
    for name, series in lines.items():
        xs = [v for v in x_values if series.get(v) is not None]
        pos = [float(v) for v in xs] if numeric else [x_values.index(v) for v in xs]
        ax.plot(pos, [series[v] * scale for v in xs], "o-", label=name or metric)
    if not numeric:
        ax.set_xticks(range(len(x_values)))
        ax.set_xticklabels(x_values)
    ax.set_xlabel(x_key)
    ax.set_ylabel(label)
    ax.set_title("%s: %s by %s" % (title, metric, x_key))
    ax.grid(alpha=0.3)
    if len(keys) > 1:
        ax.legend()
    save(fig, out_dir, "sweep.png", written)
    if len(keys) == 2:
        y_key = keys[1]
        y_values = list(dict.fromkeys(r[y_key] for r in rows))
        grid = [[math.nan] * len(x_values) for _ in y_values]
        for r in rows:
            v = number(r.get(metric))
            if v is not None:
                grid[y_values.index(r[y_key])][x_values.index(r[x_key])] = v * scale
        fig, ax = plt.subplots(figsize=SIZE)
        im = ax.imshow(grid, aspect="auto", cmap="viridis", origin="lower", interpolation="nearest")
        fig.colorbar(im, ax=ax, label=label)
        lo, hi = im.get_clim()
        for yi, row in enumerate(grid):
            for xi, v in enumerate(row):
                if not math.isnan(v):  # dark text on the bright end of viridis, light on the dark end
                    ax.text(xi, yi, "%.3g" % v, ha="center", va="center",
                            color="black" if v > (lo + hi) / 2 else "white")
        ax.set_xticks(range(len(x_values)))
        ax.set_xticklabels(x_values)
        ax.set_yticks(range(len(y_values)))
        ax.set_yticklabels(y_values)
        ax.set_xlabel(x_key)
        ax.set_ylabel(y_key)
        ax.set_title("%s: %s" % (title, label))
        save(fig, out_dir, "sweep_heatmap.png", written)
    return 0


def plot_collective_compare(rep, base, out_dir, written):
    """A comparison of collectives: busbw against size, one line per value (nccl-tests' figure)."""
    key = rep["compare"]
    fig, ax = plt.subplots(figsize=SIZE)
    for r in rep["runs"]:
        rows = [x for x in r["report"]["collective"]["rows"] if x.get("busbw_gbps") is not None]
        ax.plot([x["size"] for x in rows], [x["busbw_gbps"] for x in rows], "o-", label="%s=%s" % (key, r["value"]))
    ax.set_xscale("log", base=2)
    ax.set_xlabel("message size (bytes)")
    ax.set_ylabel("busbw (GB/s)")
    ax.set_title("%s: nccl-tests busbw by %s" % (base, key))
    ax.grid(alpha=0.3)
    ax.legend()
    save(fig, out_dir, "compare.png", written)


FIGURE_LABEL = {"job_time_us": "job time, first post to last completion (us)", "busbw_gbps": "busbw (GB/s)",
                "mean_fct_us": "mean FCT (us)"}


def plot_jobs(runs, title, out_dir, written):
    """Tenants: `runs` is [(label, report with `jobs`)]. One panel per job, a pair of bars (alone, shared) per
    run, each labelled with the slowdown."""
    runs = [(label, r) for label, r in runs if r.get("jobs")]
    if not runs:
        return
    names = list(runs[0][1]["jobs"])
    fig, axes = plt.subplots(1, len(names), figsize=(max(SIZE[0], 3.6 * len(names)), SIZE[1]), squeeze=False)
    width = 0.38
    for ax, name in zip(axes[0], names):
        figure = runs[0][1]["jobs"][name]["figure"]
        for k, (series, color) in enumerate((("alone", "tab:gray"), ("shared", "tab:red"))):
            xs = [i + (k - 0.5) * width for i in range(len(runs))]
            ys = [float(r["jobs"][name][series] or 0.0) for _, r in runs]
            ax.bar(xs, ys, width, color=color, label=series, gid="%s:%s" % (name, series))
        for i, (_, r) in enumerate(runs):
            j = r["jobs"][name]
            top = max(float(j["alone"] or 0.0), float(j["shared"] or 0.0))
            if j["slowdown"] is not None:
                ax.text(i, top, "x%.2f" % j["slowdown"], ha="center", va="bottom")
        ax.set_xticks(range(len(runs)))
        ax.set_xticklabels([label for label, _ in runs], rotation=20 if len(runs) > 2 else 0, ha="right"
                           if len(runs) > 2 else "center")
        ax.set_ylim(0, ax.get_ylim()[1] * 1.15)  # room for the slowdown labels
        ax.set_ylabel(FIGURE_LABEL.get(figure, figure))
        ax.set_title("%s (%s)" % (name, runs[0][1]["jobs"][name]["kind"]))
        ax.grid(axis="y", alpha=0.3)
        ax.legend()
    fig.suptitle("%s: each job alone and shared (label: slowdown)" % title)
    save(fig, out_dir, "jobs.png", written)


def run_label(rep, stem):
    """The comparison run a FILE.<value>.csv holds, as KEY=VALUE; the file's stem when none matches."""
    for r in rep.get("runs", []):
        if stem.endswith("." + str(r["value"])):
            return "%s=%s" % (rep["compare"], r["value"])
    return stem


def plot_compare_overlay(series, title, out_dir, written, red=None):
    """`series`: [(label, rows of one run's time-series CSV)]. Two figures with one line per run on one axis:
    the goodput of all its flows summed at each sample, and the deepest switch queue of the fabric."""
    total, deepest = [], []
    for label, rows in series:
        good, queue = defaultdict(float), {}
        for r in rows:
            t = float(r["time_ns"]) / 1e3
            good[t] += float(r["goodput_mbps"]) / 1e3
            queue[t] = float(r["max_queue_bytes"]) / 1e3
        total.append((label, good))
        deepest.append((label, queue))
    for name, data, ylabel, what in (("compare_goodput.png", total, "goodput of all flows (Gb/s)", "total goodput"),
                                     ("compare_queue.png", deepest, "deepest switch queue (KB)", "deepest queue")):
        fig, ax = plt.subplots(figsize=SIZE)
        for label, points in data:
            ts = sorted(points)
            ax.plot(ts, [points[t] for t in ts], lw=1.2, label=label)
        if red and name == "compare_queue.png":
            ax.axhline(red[0] / 1e3, color="tab:orange", ls="--", lw=1, gid="kmin", label="Kmin %g KB" % (red[0] / 1e3))
            ax.axhline(red[1] / 1e3, color="tab:red", ls="--", lw=1, gid="kmax", label="Kmax %g KB" % (red[1] / 1e3))
        ax.set_xlabel("simulated time (us)")
        ax.set_ylabel(ylabel)
        ax.set_title("%s: %s over time, one line per run" % (title, what))
        ax.grid(alpha=0.3)
        ax.legend()
        save(fig, out_dir, name, written)


def main():
    global FORMAT, DPI
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("report", help="JSON report, or a sweep's CSV")
    ap.add_argument("--out", default="plots")
    ap.add_argument("--timeseries", action="append", default=[])
    ap.add_argument("--title", default="")
    ap.add_argument("--format", choices=["png", "svg", "pdf"], default="png")
    ap.add_argument("--dpi", type=int, default=150, help="PNG resolution")
    ap.add_argument("--red", default="", help="KMIN,KMAX bytes: the RED lines on queue_depth")
    ap.add_argument("--flows", type=int, default=0, help="flow_rate: the first N flows only (0: all)")
    ap.add_argument("--metric", default="", help="sweep: the column to draw")
    a = ap.parse_args()
    FORMAT, DPI = a.format, a.dpi
    red = None
    if a.red:
        try:
            red = tuple(float(v) for v in a.red.split(","))
            assert len(red) == 2
        except (ValueError, AssertionError):
            sys.stderr.write("plot: --red %s: expected KMIN,KMAX in bytes\n" % a.red)
            return 2
    if a.report.endswith(".csv"):
        os.makedirs(a.out, exist_ok=True)
        written = []
        status = plot_sweep(a.report, a.metric, a.title or os.path.splitext(os.path.basename(a.report))[0], a.out,
                            written)
        for p in written:
            print(p)
        return status
    try:

        with open(a.report) as f:
            rep = json.load(f)
    except (OSError, ValueError) as e:
        sys.stderr.write("plot: %s: cannot read the report: %s\n" % (a.report, e))
        return 2
    os.makedirs(a.out, exist_ok=True)
    written = []
    if "compare" in rep and "runs" in rep and rep["runs"] and "collective" in rep["runs"][0]["report"]:
        base = a.title or rep["runs"][0]["report"].get("scenario", "")
        plot_collective_compare(rep, base, a.out, written)
        for r in rep["runs"]:
            plot_report(r["report"], "%s (%s=%s)" % (base, rep["compare"], r["value"]), a.out, "." + str(r["value"]),
                        written)
    elif "compare" in rep and "runs" in rep:
        key = rep["compare"]
        base = a.title or (rep["runs"][0]["report"].get("scenario", "") if rep["runs"] else "")
        values = [str(r["value"]) for r in rep["runs"]]
        fabrics = [r["report"].get("fabric", {}) for r in rep["runs"]]
        # Every WRITE into one host (an incast): the senders' share of their own line rate says little; the
        # bottleneck link's utilization is the figure.
        incast = bool(fabrics) and all(f.get("bottleneck") for f in fabrics)
        if incast:
            eff = [float(f["bottleneck"].get("utilization", 0)) * 100 for f in fabrics]
            ylabel = "bottleneck utilization (%% of %s's line rate)" % fabrics[0]["bottleneck"].get("host", "")
            what = "bottleneck utilization"
        else:
            eff = [float(f.get("effective_throughput", 0)) * 100 for f in fabrics]
            ylabel = "effective throughput (% of the senders' line rate)"
            what = "effective throughput"
        fig, ax = plt.subplots(figsize=SIZE)
        ax.bar(values, eff, color="tab:green")
        for i, v in enumerate(eff):
            ax.text(i, v, "%.1f %%" % v, ha="center", va="bottom")
        ax.set_xlabel(key)
        ax.set_ylabel(ylabel)
        ax.set_ylim(0, 105)
        ax.set_title("%s: %s by %s" % (base, what, key))
        ax.grid(axis="y", alpha=0.3)
        save(fig, a.out, "compare.png", written)
        for r in rep["runs"]:
            plot_report(r["report"], "%s (%s=%s)" % (base, key, r["value"]), a.out, "." + str(r["value"]), written)
    else:
        plot_report(rep, a.title or rep.get("scenario", "run"), a.out, "", written)
    if "compare" in rep and "runs" in rep:
        runs = [("%s=%s" % (rep["compare"], r["value"]), r["report"]) for r in rep["runs"]]
        title = a.title or (rep["runs"][0]["report"].get("scenario", "") if rep["runs"] else "")
    else:
        runs, title = [(rep.get("scenario", "run"), rep)], a.title or rep.get("scenario", "run")
    plot_jobs(runs, title, a.out, written)
    plot_latency_cdf(runs, title, a.out, written)
    plot_latency_percentiles(runs, title, a.out, written)
    plot_fct(runs, title, a.out, written)
    overlay = []  # a comparison's runs, for the figures that draw them on one axis
    for i, path in enumerate(a.timeseries):
        try:
            rows = read_timeseries(path)
        except (OSError, KeyError, ValueError) as e:
            sys.stderr.write("plot: --timeseries %s: %s\n" % (path, e))
            return 2
        stem = os.path.splitext(os.path.basename(path))[0]
        suffix = "" if len(a.timeseries) == 1 else "." + stem
        title = a.title or rep.get("scenario", stem)
        if "runs" in rep and not a.title:  # a comparison's FILE.<value>.csv: name the run it holds
            title = stem
            for r in rep["runs"]:
                if stem.endswith("." + str(r["value"])):
                    title = "%s (%s=%s)" % (r["report"].get("scenario", ""), rep["compare"], r["value"])
        plot_timeseries(rows, title, a.out, suffix, written, red, a.flows)
        if rows:
            overlay.append((run_label(rep, stem) if "runs" in rep else stem, rows))
    if len(overlay) > 1:
        base = a.title or (rep["runs"][0]["report"].get("scenario", "") if rep.get("runs") else rep.get("scenario", ""))
        plot_compare_overlay(overlay, base, a.out, written, red)
    if not written:
        sys.stderr.write("plot: %s holds nothing to plot\n" % a.report)
        return 1
    for p in written:
        print(p)
    return 0


if __name__ == "__main__":
    sys.exit(main())
