#!/usr/bin/python3
"""PNG figures of a fabricsim run, from its JSON report (docs/report.md) and optional time-series CSVs.

Run by `fabricsim plot REPORT.json [--out DIR] [--timeseries CSV ...]`; python only draws, it never
simulates. Each figure is written only when the report (or CSV) holds what it needs:

  flow_rate.png        per-flow sending rate and goodput over time      (time series)
  queue_depth.png      queue depth over time per congested port         (time series)
  flow_goodput.png     goodput per completed flow                       (flows[])
  pfc_pauses.png       PFC frames sent per switch port                  (fabric.pfc_pauses_by_port)
  pfc_timeline.png     PFC pause timeline: XOFF..XON per port, priority (fabric.pfc_pause_intervals)
  ooo_distance.png     out-of-order distance histogram over the NICs    (stats <nic>.ooo_distance)
  busbw.png            nccl-tests busbw against message size            (collective)
  link_utilization.png link utilization heat map, transmitter x receiver (ports[])
  compare.png          effective throughput (an incast: bottleneck utilization) per value of a comparison

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

DPI = 80
SIZE = (7.0, 4.2)


def save(fig, out_dir, name, written):
    path = os.path.join(out_dir, name)
    for ax in fig.axes:  # a long title (scenario, value, what) on two lines rather than cut at the edge
        t = ax.get_title()
        if len(t) > 64 and "\n" not in t and ": " in t:
            ax.set_title(t.replace(": ", ":\n", 1), fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=DPI)
    plt.close(fig)
    written.append(path)


def read_timeseries(path):
    rows = []
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            rows.append(r)
    return rows


def plot_timeseries(rows, title, out_dir, suffix, written):
    if not rows:
        return
    flows = defaultdict(lambda: ([], [], []))
    for r in rows:
        key = "%s->%s qp%s" % (r["src"], r["dst"], r["qpn"])
        t, rate, good = flows[key]
        t.append(float(r["time_ns"]) / 1e3)
        rate.append(float(r["rate_mbps"]) / 1e3)
        good.append(float(r["goodput_mbps"]) / 1e3)
    fig, ax = plt.subplots(figsize=SIZE)
    many = len(flows) > 8
    for i, (key, (t, rate, good)) in enumerate(sorted(flows.items())):
        if many:  # the paced rates only: sixteen noisy goodput lines hide each other
            ax.plot(t, rate, lw=0.8, label=None if i >= 8 else key + " rate")
            continue
        line, = ax.plot(t, good, lw=1, label=key + " goodput")
        ax.plot(t, rate, lw=1, ls="--", color=line.get_color(), label=key + " rate")
    ax.set_xlabel("simulated time (us)")
    ax.set_ylabel("rate (Gb/s)")
    ax.set_title("%s: per-flow %s over time" % (title, "sending rate" if many else "rate (dashed) and goodput"))
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, ncol=2)
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
    ax.set_xlabel("simulated time (us)")
    ax.set_ylabel("queue depth (KB)")
    ax.set_title("%s: switch queue depth over time" % title)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7)
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
    fig, ax = plt.subplots(figsize=(7.0, max(3.0, 1.2 + 0.22 * len(shown))))
    for i, k in enumerate(shown):
        ax.broken_barh(rows[k], (i - 0.4, 0.8), color="tab:red")
    ax.set_yticks(range(len(shown)))
    ax.set_yticklabels(shown, fontsize=6)
    ax.invert_yaxis()
    ax.set_ylim(len(shown) - 0.5, -0.5)
    ax.set_xlim(0, sim_end_ns / 1e3 if sim_end_ns > 0 else None)
    ax.set_xlabel("simulated time (us)")
    ax.set_ylabel("link the pause went down, priority", fontsize=8)
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


def plot_report(rep, title, out_dir, suffix, written):
    flows = [f for f in rep.get("flows", []) if f.get("completed") and "goodput_gbps" in f]
    if flows:
        fig, ax = plt.subplots(figsize=SIZE)
        ax.bar(range(len(flows)), [f["goodput_gbps"] for f in flows], color="tab:blue")
        ax.set_xlabel("flow (id)")
        ax.set_ylabel("goodput (Gb/s)")
        if len(flows) <= 24:
            ax.set_xticks(range(len(flows)))
            ax.set_xticklabels(["%d\n%s>%s" % (f["id"], f["src"], f["dst"]) for f in flows], fontsize=6)
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
        fig, ax = plt.subplots(figsize=SIZE)
        labels = [p["link"] for p in pauses]
        ax.barh(range(len(pauses)), [p["pause_frames_sent"] for p in pauses], color="tab:red")
        ax.set_yticks(range(len(pauses)))
        ax.set_yticklabels(labels, fontsize=6)
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
        ax.set_xticklabels(labels, fontsize=7, rotation=30)
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
            ax.legend(fontsize=8)
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
            fig, ax = plt.subplots(figsize=(7.0, 5.6))
            im = ax.imshow(grid, aspect="auto", cmap="viridis", vmin=0, vmax=100, interpolation="nearest")
            fig.colorbar(im, ax=ax, label="utilization (% of the link's time serializing)")
            step = max(1, len(senders) // 32)
            ax.set_yticks(range(0, len(senders), step))
            ax.set_yticklabels(senders[::step], fontsize=6)
            step = max(1, len(receivers) // 32)
            ax.set_xticks(range(0, len(receivers), step))
            ax.set_xticklabels(receivers[::step], fontsize=6, rotation=90)
            ax.set_xlabel("receiving end")
            ax.set_ylabel("transmitting end")
            ax.set_title("%s:\n%s utilization over %.1f us simulated" %
                         (title, what, float(rep.get("simulated_time_ns", 0)) / 1e3), fontsize=10)
            save(fig, out_dir, "link_utilization%s.png" % suffix, written)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("report")
    ap.add_argument("--out", default="plots")
    ap.add_argument("--timeseries", action="append", default=[])
    ap.add_argument("--title", default="")
    a = ap.parse_args()
    try:
        with open(a.report) as f:
            rep = json.load(f)
    except (OSError, ValueError) as e:
        sys.stderr.write("plot: %s: cannot read the report: %s\n" % (a.report, e))
        return 2
    os.makedirs(a.out, exist_ok=True)
    written = []
    if "compare" in rep and "runs" in rep:
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
            ax.text(i, v, "%.1f %%" % v, ha="center", va="bottom", fontsize=8)
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
        plot_timeseries(rows, title, a.out, suffix, written)
    if not written:
        sys.stderr.write("plot: %s holds nothing to plot\n" % a.report)
        return 1
    for p in written:
        print(p)
    return 0


if __name__ == "__main__":
    sys.exit(main())
