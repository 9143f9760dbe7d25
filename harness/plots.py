#!/usr/bin/python3
"""plots.py - the plots of a benchmark campaign, made from its records alone.

    /usr/bin/python3 harness/plots.py DIR [--quiet]

Reads DIR/points.jsonl and DIR/raw/ (harness/FORMATS.md) and writes
DIR/plots/*.png; `collgen report DIR` runs it. Only records with status ok
are plotted (the report lists the others). One figure per

  latency_<coll>_<lib>_p<P>.png  median time against size, a band p25..p75,
                                 one line per implementation (log-log); for
                                 barrier (one point of 0 B per implementation)
                                 one bar per implementation, p25..p75 as an
                                 error bar
  busbw_<coll>_<lib>_p<P>.png    bus bandwidth against size (none for barrier,
                                 which moves no data: its records' busbw is null)
  heatmap_<coll>_<lib>.png       best-to-default ratio over size x p, each
                                 cell naming the winner (as the table does)
  box_<coll>_<lib>_p<P>.png      raw repetitions per implementation, one
                                 panel per size (at most 6 sizes)
  phases_<coll>_<lib>_p<P>.png   share of each phase tag in the generated
                                 schedules and baselines, stacked, per size
  scaling_<coll>_<lib>.png       median time against p at fixed sizes
  micro_<bench>_<lib>_p<P>_<shape>.png
                                 a micro-benchmark (kind "micro"; <bench>
                                 lane_pattern, or multi_collective_<coll>):
                                 median time against the lane count k, one
                                 line per size, and the bandwidth over k=1's
                                 against the ideal k (harness/REPORT.md,
                                 "Micro-benchmarks"); never in the others

Implementations are named as in the table: "default", the native algorithm,
"g:<name>" for the generated schedule <collective>_<name>, "b:<name>" for the
baseline <collective>_<name> (baseline:<name>), "bound:<name>" for
a transport bound (bound:sendrecv_reduce: a reference line, never a
winner). A point where the
library ran another algorithm than the one asked for (the record's diff
lists "algorithm") is crossed out in the line plots and named "ring!" in the
heatmap and box plots, as in the table. A collective/library measured with more than
one datatype, op, root or in-place setting gets that setting in its names,
and a campaign that ran one process count under two node shapes
(virtual_ranks_per_node), or any under a virtual one, gets the shape
("real", "vppn2" for CG_PPN=2) in every name, so that the shapes' lines
never mix.

A point measured in several launches (the test's "launches") is the
median of its launch medians, with an error bar from the smallest to the
largest launch median (as PGMPITuneLib plots its nmpiruns). A point whose
median is below its job's one-way latency floor (validity.
below_latency_floor: a timing artefact) is circled in red and never a
winner; the latency plots draw the floor as a dashed grey line.

    /usr/bin/python3 harness/plots.py OUT --compare [--quiet]

reads OUT/compare.json (collgen compare) and writes OUT/plots/ratio_<coll>
_<lib>_p<P>.png: NEW's median over BASE's against size, one line per
implementation, the threshold as a band; significant slowdowns beyond it
filled red, significant speed-ups filled green, the rest hollow.

Why a temporary directory: figures go to DIR/plots.tmp, which replaces
DIR/plots only when every figure is written, so a failure never leaves a
mixture of old and new plots.

Exit status: 0 done; 2 unreadable input; 3 matplotlib or numpy missing.
"""
import json
import math
import os
import re
import shutil
import sys

MAX_BOXES = 6  # sizes per box-plot figure
# The collectives that take an op (the others ignore the record's op), from
# the table of collectives (runtime/cg_colls.h) as `collgen emit` writes it;
# main() reads it.
COLLECTIVES = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "emitted",
                           "collectives.json")
REDUCING = ()


def load_reducing(path=COLLECTIVES):
    with open(path) as f:
        return tuple(c["name"] for c in json.load(f)["collectives"] if c["reduces"])


def fmt_size(b):
    for unit, f in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if b >= f and b % f == 0:
            return "%d %s" % (b // f, unit)
    return "%d B" % b


def slug(s):
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", str(s))


def get(rec, path, default=None):
    for key in path.split("."):
        if not isinstance(rec, dict) or key not in rec:
            return default
        rec = rec[key]
    return default if rec is None else rec


class Point:
    """One ok record, with what the plots need."""

    def __init__(self, rec, raw):
        self.coll = rec["collective"]
        self.lib = rec["library"]
        self.p = int(get(rec, "requested.ranks"))
        self.size = int(rec["size_B"])
        self.kind = rec["kind"]
        self.name = rec["name"]
        self.variant = (get(rec, "requested.datatype", ""), get(rec, "requested.op", ""),
                        get(rec, "requested.root", 0), bool(get(rec, "requested.in_place", False)))
        self.median = float(get(rec, "timing.median_ns"))
        self.p25 = float(get(rec, "timing.p25_ns", self.median))
        self.p75 = float(get(rec, "timing.p75_ns", self.median))
        self.busbw = get(rec, "bandwidth.busbw_GBps")
        # The node shape asked for: ("real", ranks per node) or ("vppn", k).
        virtual = get(rec, "requested.node_shape", "real") == "virtual (CG_PPN)"
        rpn = get(rec, "requested.ranks_per_node", 0)
        self.shape = ("vppn" if virtual else "real", int(rpn) if rpn else 0)
        self.shape_name = "vppn%d" % self.shape[1] if virtual else "real"
        self.irregular = get(rec, "effective.regular", get(rec, "requested.regular", True)) \
            is False
        # Micro-benchmarks: "lane_pattern(k=2)" -> ("lane_pattern", 2).
        self.micro, self.k = None, 0
        if self.kind == "micro":
            m = re.match(r"^(lane_pattern|multi_collective)\(k=([1-9][0-9]*)\)$", self.name)
            if m is None:
                raise ValueError("micro-benchmark name %r" % self.name)
            self.micro, self.k = m.group(1), int(m.group(2))
        self.tags = [t for t in get(rec, "tags", []) if t.get("kind") == "phase"]
        self.raw = raw
        self.below_floor = get(rec, "validity.below_latency_floor", False) is True
        floor = get(rec, "validity.latency_floor_ns")
        self.floor = float(floor) if isinstance(floor, (int, float)) else None
        # Repeated launches (merge_launches): the launch medians' range.
        self.nlaunch, self.lo, self.hi = 1, self.median, self.median
        prefix = self.coll + "_"
        if self.kind == "generated":
            short = self.name[len(prefix):] if self.name.startswith(prefix) and \
                len(self.name) > len(prefix) else self.name
            self.label = "g:" + short
        elif self.kind == "baseline":
            short = self.name[len(prefix):] if self.name.startswith(prefix) and \
                len(self.name) > len(prefix) else self.name
            self.label = "b:" + short
        elif self.kind == "bound":
            self.label = "bound:" + self.name
        elif self.name == "default":
            self.label = "default"
        else:
            self.label = self.name
        # "unobservable": the library cannot tell what it ran, which is not
        # a fallback (the table's notes say so once per library).
        self.fell_back = self.kind == "native" and \
            "algorithm" in (get(rec, "diff", []) or []) and \
            get(rec, "effective.algorithm_source") != "unobservable"

    def shown(self):
        """The label with "!" where the library ran another algorithm."""
        return self.label + ("!" if self.fell_back else "")

    def rank(self):
        """Sort key of the winner rule: median, natives first, then name."""
        return (self.median, 0 if self.kind == "native" else 1, self.name)


class BadInput(Exception):
    pass


def median(v):
    v = sorted(v)
    n = len(v)
    return v[n // 2] if n % 2 else (v[n // 2 - 1] + v[n // 2]) / 2.0


def merge_launches(launches):
    """One Point for a point's ok launches: the median of their medians,
    lo..hi their range, the repetitions pooled (as the report does)."""
    q = launches[0]
    if len(launches) == 1:
        return q
    meds = [x.median for x in launches]
    q.nlaunch, q.median, q.lo, q.hi = len(meds), median(meds), min(meds), max(meds)
    if q.raw is not None:
        q.raw = [t for x in launches for t in (x.raw or [])]
    floors = [x.floor for x in launches if x.floor is not None]
    if floors:
        q.floor = median(floors)
        q.below_floor = q.p > 1 and q.median < q.floor
    if isinstance(q.busbw, (int, float)) and launches[0].median > 0:
        q.busbw = q.busbw * meds[0] / q.median if q.median > 0 else q.busbw
    return q


def load(d):
    by_point, order, seen = {}, [], set()
    path = os.path.join(d, "points.jsonl")
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                rec = json.loads(line)
            except ValueError as e:
                raise BadInput("%s:%d: error: not valid JSON (%s)" % (path, n, e))
            if rec.get("status") != "ok" or rec.get("point_id") in seen:
                continue
            seen.add(rec.get("point_id"))
            raw = None
            if isinstance(rec.get("raw"), str):
                try:
                    with open(os.path.join(d, rec["raw"]), encoding="utf-8") as r:
                        raw = [float(x.split()[0]) for x in r if x.strip()]
                except FileNotFoundError:
                    raw = None
            base = get(rec, "launch.point_id", rec.get("point_id"))
            if base not in by_point:
                by_point[base] = []
                order.append(base)
            by_point[base].append(Point(rec, raw))
    return [merge_launches(by_point[b]) for b in order]


def label_order(labels):
    """default first, then native algorithms, generated schedules, bounds."""
    return sorted(set(labels), key=lambda s: (s != "default", s.startswith("bound:"),
                                              s.startswith("g:"), s))


class Style:
    """The same colour and line for an implementation in every figure."""

    def __init__(self, plt, labels):
        cmap = plt.get_cmap("tab10")
        others = [s for s in label_order(labels)
                  if s != "default" and not s.startswith("bound:")]
        self.colour = {s: cmap(i % 10) for i, s in enumerate(others)}
        self.colour["default"] = "black"
        for s in labels:
            if s.startswith("bound:"):
                self.colour[s] = "dimgrey"

    def line(self, label):
        if label.startswith("bound:"):  # a reference line: dotted grey
            return dict(color=self.colour[label], linestyle=":", linewidth=2.0,
                        marker="v", markersize=4)
        dashed = label.startswith("g:")
        return dict(color=self.colour[label], linestyle="--" if dashed else "-",
                    linewidth=2.2 if label == "default" else 1.5,
                    marker="s" if dashed else "o", markersize=4)


def size_axis(ax, sizes):
    ax.set_xscale("log", base=2)
    ticks = sorted(set(sizes))
    step = max(1, math.ceil(len(ticks) / 10))
    ax.set_xticks(ticks[::step])
    ax.set_xticklabels([fmt_size(s) for s in ticks[::step]], rotation=30, ha="right")
    ax.minorticks_off()
    ax.set_xlabel("message size (size_B, as nccl-tests)")


def plain_log_y(ax):
    """Log y axis labelled 2, 5, 10, 20 rather than 2x10^0."""
    from matplotlib.ticker import FuncFormatter, LogLocator
    ax.set_yscale("log")
    ax.yaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: "%g" % v))
    ax.yaxis.set_minor_formatter(FuncFormatter(lambda v, _: ""))


def cross_fallbacks(ax, points, y):
    """Marks points where the library ran another algorithm than asked for."""
    qs = [q for q in points if q.fell_back]
    if qs:
        ax.scatter([q.size for q in qs], [y(q) for q in qs], marker="x", s=60, color="black",
                   zorder=5, label="ran another algorithm")


def mark_below_floor(ax, points):
    """Circles medians below the job's latency floor, and draws the floor."""
    qs = [q for q in points if q.below_floor]
    if qs:
        ax.scatter([q.size for q in qs], [q.median / 1e3 for q in qs], marker="o", s=90,
                   facecolors="none", edgecolors="red", linewidths=1.5, zorder=6,
                   label="below latency floor")
    floors = [q.floor for q in points if q.floor is not None and q.p > 1]
    if floors:
        ax.axhline(median(floors) / 1e3, color="grey", linestyle="--", linewidth=1,
                   label="one-way latency floor")


def legend_outside(ax, **kw):
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8, frameon=False, **kw)


def save(fig, out, name, written):
    fig.savefig(os.path.join(out, name), dpi=110, bbox_inches="tight")
    written.append(name)


def winner(cell):
    """(label, ratio) of one size/p cell: PICO's t_best / t_default."""
    default = [q for q in cell if q.label == "default"]
    # A transport bound is a reference line, never a winner; a median below
    # the latency floor is a timing artefact, never a winner, and a default
    # below it leaves nothing to compare with.
    others = [q for q in cell if q.label != "default" and q.kind != "bound" and
              not q.below_floor]
    if not default or not others or any(q.below_floor for q in default):
        return None
    d = min(default, key=Point.rank)
    b = min(others, key=Point.rank)
    r = b.median / d.median
    return ("default" if r >= 1.0 else b.shown()), r


def plot_group(plt, np, pts, title, stem, out, written):
    """Latency, busbw, box and phase figures of one collective/library/p."""
    labels = label_order(q.label for q in pts)
    style = Style(plt, labels)
    by_label = {s: sorted((q for q in pts if q.label == s), key=lambda q: q.size) for s in labels}
    sizes = sorted({q.size for q in pts})

    if sizes == [0]:
        # Barrier: no data, one point per implementation: bars, not lines
        # on a log size axis (log 0 does not exist).
        fig, ax = plt.subplots(figsize=(max(5, 1.1 * len(labels) + 2), 4.5))
        x = range(len(labels))
        best = [min(by_label[s], key=Point.rank) for s in labels]
        med = [q.median / 1e3 for q in best]
        # Why clamped, and the launch range where there are several: the
        # median of launch medians need not lie within one launch's
        # p25..p75 (matplotlib refuses a negative error bar).
        lo = [max(0.0, m - (q.lo if q.nlaunch > 1 else q.p25) / 1e3) for m, q in zip(med, best)]
        hi = [max(0.0, (q.hi if q.nlaunch > 1 else q.p75) / 1e3 - m) for m, q in zip(med, best)]
        ax.bar(x, med, yerr=[lo, hi], capsize=4, color=[style.colour[s] for s in labels],
               alpha=0.8, edgecolor="black", linewidth=0.5)
        for xi, m in zip(x, med):
            ax.annotate("%.3g" % m, (xi, m), ha="center", va="bottom", fontsize=7,
                        xytext=(0, 2), textcoords="offset points")
        ax.set_xticks(list(x))
        ax.set_xticklabels([min(by_label[s], key=Point.rank).shown() for s in labels],
                           rotation=30, ha="right")
        ax.set_ylabel("time per call (us, median of the slowest rank)")
        ax.set_title("%s: latency (error bar: p25..p75, or the launch medians' range)" % title)
        ax.grid(True, axis="y", alpha=0.3)
        save(fig, out, "latency_%s.png" % stem, written)
        plt.close(fig)
    else:
        fig, ax = plt.subplots(figsize=(8, 5))
        for s in labels:
            qs = by_label[s]
            x = [q.size for q in qs]
            ax.plot(x, [q.median / 1e3 for q in qs], label=s, **style.line(s))
            ax.fill_between(x, [q.p25 / 1e3 for q in qs], [q.p75 / 1e3 for q in qs],
                            color=style.colour[s], alpha=0.15, linewidth=0)
            multi = [q for q in qs if q.nlaunch > 1]
            if multi:  # the launch medians' range, PGMPITuneLib's error bars
                ax.errorbar([q.size for q in multi], [q.median / 1e3 for q in multi],
                            yerr=[[(q.median - q.lo) / 1e3 for q in multi],
                                  [(q.hi - q.median) / 1e3 for q in multi]],
                            fmt="none", ecolor=style.colour[s], capsize=3, linewidth=1)
        cross_fallbacks(ax, pts, lambda q: q.median / 1e3)
        mark_below_floor(ax, pts)
        size_axis(ax, sizes)
        plain_log_y(ax)
        ax.set_ylabel("time per call (us, median of the slowest rank)")
        launches = max(q.nlaunch for q in pts)
        ax.set_title("%s: latency (band: p25..p75%s)" %
                     (title, "; bars: range of %d launch medians" % launches
                      if launches > 1 else ""))
        ax.grid(True, which="major", alpha=0.3)
        legend_outside(ax, title="implementation")
        save(fig, out, "latency_%s.png" % stem, written)
        plt.close(fig)

    with_bw = [q for q in pts if isinstance(q.busbw, (int, float)) and q.busbw > 0]
    if with_bw:  # none for barrier, whose busbw is null
        fig, ax = plt.subplots(figsize=(8, 5))
        for s in labels:
            qs = [q for q in by_label[s] if isinstance(q.busbw, (int, float)) and q.busbw > 0]
            if qs:
                ax.plot([q.size for q in qs], [q.busbw for q in qs], label=s, **style.line(s))
        cross_fallbacks(ax, with_bw, lambda q: q.busbw)
        size_axis(ax, sorted({q.size for q in with_bw}))
        plain_log_y(ax)
        ax.set_ylabel("bus bandwidth (GB/s, nccl-tests busbw)")
        ax.set_title("%s: bus bandwidth" % title)
        ax.grid(True, which="major", alpha=0.3)
        legend_outside(ax, title="implementation")
        save(fig, out, "busbw_%s.png" % stem, written)
        plt.close(fig)

    with_raw = [q for q in pts if q.raw]
    raw_sizes = sorted({q.size for q in with_raw})
    if raw_sizes:
        if len(raw_sizes) > MAX_BOXES:
            idx = np.unique(np.round(np.linspace(0, len(raw_sizes) - 1, MAX_BOXES)).astype(int))
            raw_sizes = [raw_sizes[i] for i in idx]
        ncols = min(3, len(raw_sizes))
        nrows = math.ceil(len(raw_sizes) / ncols)
        fig, axes = plt.subplots(nrows, ncols, figsize=(4.2 * ncols, 3.6 * nrows), squeeze=False)
        for ax, size in zip(axes.flat, raw_sizes):
            qs = sorted((q for q in with_raw if q.size == size),
                        key=lambda q: labels.index(q.label))
            bp = ax.boxplot([np.array(q.raw) / 1e3 for q in qs], whis=(5, 95), patch_artist=True,
                            flierprops=dict(markersize=3, alpha=0.5),
                            medianprops=dict(color="black"))
            for patch, q in zip(bp["boxes"], qs):
                patch.set_facecolor(style.colour[q.label])
                patch.set_alpha(0.55)
            ax.set_xticks(range(1, len(qs) + 1))
            ax.set_xticklabels([q.shown() for q in qs], rotation=40, ha="right", fontsize=8)
            ax.set_title(fmt_size(size) if sizes != [0] else "no data (barrier)", fontsize=10)
            ax.set_ylabel("us per call")
            ax.grid(True, axis="y", alpha=0.3)
        for ax in list(axes.flat)[len(raw_sizes):]:
            ax.set_visible(False)
        fig.suptitle("%s: repetitions (box p25..p75, whiskers p5..p95)" % title)
        fig.tight_layout()
        save(fig, out, "box_%s.png" % stem, written)
        plt.close(fig)

    gens = [s for s in labels if s[:2] in ("g:", "b:") and any(q.tags for q in by_label[s])]
    if gens:
        fig, axes = plt.subplots(len(gens), 1, figsize=(8, 2.8 * len(gens)), squeeze=False)
        for ax, s in zip(axes[:, 0], gens):
            qs = by_label[s]
            phases = []
            for q in qs:
                for t in q.tags:
                    if t["name"] not in phases:
                        phases.append(t["name"])
            x = np.arange(len(qs))
            bottom = np.zeros(len(qs))
            cmap = plt.get_cmap("Set2")
            for i, ph in enumerate(phases):
                share = np.array([next((phase_share(t, q) for t in q.tags if t["name"] == ph), 0.0)
                                  for q in qs])
                ax.bar(x, share, bottom=bottom, color=cmap(i % 8), label=ph.split("/", 1)[-1])
                bottom += share
            rest = np.clip(1.0 - bottom, 0.0, None)
            ax.bar(x, rest, bottom=bottom, color="lightgrey", label="outside phases")
            for xi, q in zip(x, qs):
                ax.annotate("%.3g us" % (q.median / 1e3), (xi, 1.0), ha="center", va="bottom",
                            fontsize=7, xytext=(0, 2), textcoords="offset points")
            ax.set_xticks(x)
            ax.set_xticklabels([fmt_size(q.size) for q in qs])
            ax.set_ylim(0, 1.15)
            ax.set_ylabel("share of median time")
            ax.set_title("%s (%s)" % (s, qs[0].name), fontsize=10)
            legend_outside(ax, title="phase")
        fig.suptitle("%s: per-phase tags of the generated schedules and baselines" % title)
        fig.tight_layout()
        save(fig, out, "phases_%s.png" % stem, written)
        plt.close(fig)


def phase_share(tag, q):
    if isinstance(tag.get("share"), (int, float)):
        return float(tag["share"])
    return float(tag.get("median_ns", 0.0)) / q.median if q.median > 0 else 0.0


def plot_heatmap(plt, np, pts, title, stem, out, written):
    from matplotlib.colors import TwoSlopeNorm
    ps = sorted({q.p for q in pts})
    sizes = sorted({q.size for q in pts})
    ratio = np.full((len(ps), len(sizes)), np.nan)
    names = {}
    for i, p in enumerate(ps):
        for j, size in enumerate(sizes):
            w = winner([q for q in pts if q.p == p and q.size == size])
            if w is not None:
                names[(i, j)], ratio[i, j] = w
    if not names:
        return
    lo = min(np.nanmin(ratio), 0.95)
    hi = max(np.nanmax(ratio), 1.05)
    fig, ax = plt.subplots(figsize=(max(6, 1.3 * len(sizes) + 2), max(3, 0.9 * len(ps) + 1.6)))
    cmap = plt.get_cmap("RdBu").copy()
    cmap.set_bad("whitesmoke")
    im = ax.imshow(np.ma.masked_invalid(ratio), cmap=cmap, aspect="auto", origin="lower",
                   norm=TwoSlopeNorm(vmin=lo, vcenter=1.0, vmax=hi))
    for (i, j), name in names.items():
        shade = abs(ratio[i, j] - 1.0) / max(1.0 - lo, hi - 1.0)
        ax.text(j, i, "%s\n%.2f" % (name, ratio[i, j]), ha="center", va="center", fontsize=7,
                color="white" if shade > 0.6 else "black")
    ax.set_xticks(range(len(sizes)))
    ax.set_xticklabels([fmt_size(s) for s in sizes], rotation=30, ha="right")
    ax.set_yticks(range(len(ps)))
    ax.set_yticklabels([str(p) for p in ps])
    ax.set_xlabel("message size (size_B)")
    ax.set_ylabel("processes (p)")
    ax.set_title("%s: best-to-default ratio t_best / t_default" % title)
    bar = fig.colorbar(im, ax=ax, pad=0.02)
    bar.set_label("< 1: the default leaves speed on the table")
    save(fig, out, "heatmap_%s.png" % stem, written)
    plt.close(fig)


def plot_scaling(plt, np, pts, title, stem, out, written):
    ps = sorted({q.p for q in pts})
    common = sorted(s for s in {q.size for q in pts}
                    if len({q.p for q in pts if q.size == s}) >= 2)
    if len(ps) < 2 or not common:
        return
    picked = sorted({common[0], common[len(common) // 2], common[-1]})
    labels = label_order(q.label for q in pts)
    style = Style(plt, labels)
    fig, axes = plt.subplots(1, len(picked), figsize=(4.6 * len(picked), 4), squeeze=False)
    for ax, size in zip(axes[0], picked):
        for s in labels:
            qs = sorted((q for q in pts if q.size == size and q.label == s), key=lambda q: q.p)
            if qs:
                ax.plot([q.p for q in qs], [q.median / 1e3 for q in qs], label=s, **style.line(s))
        ax.set_xscale("log", base=2)
        ax.set_xticks(ps)
        ax.set_xticklabels([str(p) for p in ps])
        ax.minorticks_off()
        plain_log_y(ax)
        ax.set_xlabel("processes (p)")
        ax.set_ylabel("time per call (us, median)")
        ax.set_title(fmt_size(size), fontsize=10)
        ax.grid(True, alpha=0.3)
    legend_outside(axes[0][-1], title="implementation")
    fig.suptitle("%s: scaling with p at fixed sizes" % title)
    fig.tight_layout()
    save(fig, out, "scaling_%s.png" % stem, written)
    plt.close(fig)


def variant_text(v, coll):
    datatype, op, root, in_place = v
    parts = [datatype] if datatype else []
    if op and coll in REDUCING:
        parts.append(op)
    if root:
        parts.append("root%d" % root)
    if in_place:
        parts.append("inplace")
    return parts


def shape_title(q):
    """As the report's titles: "real: 1 node x 4", "CG_PPN=2: 2 nodes x 2"."""
    kind, k = q.shape
    name = "CG_PPN=%d" % k if kind == "vppn" else "real"
    if not k:
        return name
    if q.irregular or q.p % k:
        return name + ": irregular"
    nodes = q.p // k
    return "%s: %d node%s x %d" % (name, nodes, "" if nodes == 1 else "s", k)


def shapes_vary(points):
    """Whether one process count ran under two node shapes, or any under a
    virtual one (CG_PPN), as the report decides whether to name shapes."""
    seen = {}
    for q in points:
        if seen.setdefault(q.p, q.shape) != q.shape or q.shape[0] == "vppn":
            return True
    return False


def plot_micro(plt, np, pts, title, stem, out, written):
    """Median time against k (one line per size) and the bandwidth over
    k=1's against the ideal k: lane_pattern t1/tk (the same bytes over k
    lanes), multi_collective k t1/tk (k collectives at once)."""
    lane = pts[0].micro == "lane_pattern"
    sizes = sorted({q.size for q in pts})
    ks = sorted({q.k for q in pts})
    cmap = plt.get_cmap("viridis")
    fig, (ax, bx) = plt.subplots(1, 2, figsize=(11, 4.2))
    for i, size in enumerate(sizes):
        colour = cmap(i / max(1, len(sizes) - 1) * 0.9)
        qs = sorted((q for q in pts if q.size == size), key=lambda q: (q.k, q.median))
        by_k = {}
        for q in qs:
            by_k.setdefault(q.k, q)  # the first (fastest) of a k
        qs = [by_k[k] for k in sorted(by_k)]
        ax.plot([q.k for q in qs], [q.median / 1e3 for q in qs], marker="o", color=colour,
                label=fmt_size(size))
        ax.fill_between([q.k for q in qs], [q.p25 / 1e3 for q in qs], [q.p75 / 1e3 for q in qs],
                        color=colour, alpha=0.15, linewidth=0)
        if 1 in by_k and by_k[1].median > 0:
            t1 = by_k[1].median
            gain = [(t1 / q.median) * (1 if lane else q.k) if q.median > 0 else float("nan")
                    for q in qs]
            bx.plot([q.k for q in qs], gain, marker="o", color=colour, label=fmt_size(size))
    bx.plot(ks, ks, linestyle=":", color="grey", label="ideal (k)")
    for a in (ax, bx):
        a.set_xticks(ks)
        a.set_xlabel("lanes k")
        a.grid(True, alpha=0.3)
    plain_log_y(ax)
    ax.set_ylabel("time per call (us, median of the slowest rank)")
    ax.set_title("time (band: p25..p75)", fontsize=10)
    bx.set_ylabel("bandwidth over k=1's" if lane else "total bandwidth of k collectives over one")
    bx.set_title("k t(k=1) / t(k)" if not lane else "t(k=1) / t(k)", fontsize=10)
    legend_outside(bx, title="size")
    fig.suptitle(title)
    fig.tight_layout()
    save(fig, out, "micro_%s.png" % stem, written)
    plt.close(fig)


def make_micro(plt, np, points, out, written):
    groups = {}
    for q in points:
        groups.setdefault((q.micro, q.coll, q.lib), []).append(q)
    for (micro, coll, lib), pts in sorted(groups.items()):
        variants = sorted({q.variant for q in pts})
        bench = micro if micro == "lane_pattern" else "%s_%s" % (micro, coll)
        head = "lane_pattern" if micro == "lane_pattern" else "multi_collective: %s" % coll
        for v in variants:
            vp = [q for q in pts if q.variant == v]
            extra = variant_text(v, coll) if len(variants) > 1 else []
            for p, shape in sorted({(q.p, q.shape) for q in vp}):
                sp = [q for q in vp if q.p == p and q.shape == shape]
                stem = "_".join([slug(bench), slug(lib), "p%d" % p, sp[0].shape_name] +
                                [slug(x) for x in extra])
                title = "%s, %s, p=%d, %s" % (", ".join([head] + extra), lib, p,
                                              shape_title(sp[0]))
                plot_micro(plt, np, sp, title, stem, out, written)


def make_all(plt, np, points, out):
    written = []
    micro = [q for q in points if q.micro is not None]
    points = [q for q in points if q.micro is None]
    vary = shapes_vary(points + micro)
    by_cl = {}
    for q in points:
        by_cl.setdefault((q.coll, q.lib), []).append(q)
    for (coll, lib), pts in sorted(by_cl.items()):
        # Node shapes apart when they vary: ("real" at any p, "vppn2", ...).
        keys = sorted({(q.variant, q.shape_name if vary else "") for q in pts})
        variants = sorted({q.variant for q in pts})
        for v, shape in keys:
            vp = [q for q in pts if q.variant == v and (not vary or q.shape_name == shape)]
            extra = variant_text(v, coll) if len(variants) > 1 else []
            if vary:
                extra = extra + [shape]
            base = "_".join([slug(coll), slug(lib)] + [slug(x) for x in extra])
            title = ", ".join([coll, lib] + extra)
            for p in sorted({q.p for q in vp}):
                pp = [q for q in vp if q.p == p]
                ptitle = "%s, p=%d" % (", ".join([coll, lib] + extra[:-1] + [shape_title(pp[0])])
                                       if vary else title, p)
                plot_group(plt, np, pp, ptitle, "%s_p%d" % (base, p), out, written)
            plot_heatmap(plt, np, vp, title, base, out, written)
            plot_scaling(plt, np, vp, title, base, out, written)
    make_micro(plt, np, micro, out, written)
    return written


def make_compare(plt, np, doc, out):
    """ratio_<coll>_<lib>_p<P>.png from collgen compare's compare.json."""
    written = []
    thr = float(doc.get("threshold", 0.1))
    groups = {}
    for e in doc.get("points", []):
        if not isinstance(e.get("ratio"), (int, float)) or e.get("size_B", 0) <= 0:
            continue
        key = (e["collective"], e["library"], int(e["ranks"]), e.get("datatype", ""),
               e.get("op", ""), e.get("root", 0), bool(e.get("in_place", False)))
        groups.setdefault(key, []).append(e)
    variants = {}
    for key in groups:
        variants.setdefault(key[:3], set()).add(key[3:])
    for key, pts in sorted(groups.items()):
        coll, lib, p = key[:3]
        extra = variant_text(key[3:], coll) if len(variants[key[:3]]) > 1 else []
        stem = "_".join(["ratio", slug(coll), slug(lib), "p%d" % p] + [slug(x) for x in extra])
        fig, ax = plt.subplots(figsize=(8, 5))
        cmap = plt.get_cmap("tab10")
        impls = sorted({e["implementation"] for e in pts})
        for i, impl in enumerate(impls):
            es = sorted((e for e in pts if e["implementation"] == impl), key=lambda e: e["size_B"])
            colour = cmap(i % 10)
            ax.plot([e["size_B"] for e in es], [e["ratio"] for e in es], color=colour,
                    marker="o", markerfacecolor="none", label=impl.replace("generated:", "g:"))
            for e in es:
                if e["verdict"] == "SLOWER":
                    ax.scatter([e["size_B"]], [e["ratio"]], color="red", zorder=5, s=40)
                elif e["verdict"] == "faster":
                    ax.scatter([e["size_B"]], [e["ratio"]], color="green", zorder=5, s=40)
        ax.axhspan(1.0 / (1.0 + thr), 1.0 + thr, color="grey", alpha=0.15, linewidth=0)
        ax.axhline(1.0, color="black", linewidth=0.8)
        size_axis(ax, sorted({e["size_B"] for e in pts}))
        plain_log_y(ax)
        ax.set_ylabel("NEW median / BASE median")
        ax.set_title("%s: NEW against BASE (band: +-%.0f%%; red: significantly slower beyond "
                     "it, green: significantly faster)" %
                     (", ".join([coll, lib, "p=%d" % p] + extra), 100 * thr), fontsize=9)
        ax.grid(True, which="major", alpha=0.3)
        legend_outside(ax, title="implementation")
        save(fig, out, "%s.png" % stem, written)
        plt.close(fig)
    return written


def main(argv):
    quiet = "--quiet" in argv[1:]
    compare = "--compare" in argv[1:]
    args = [a for a in argv[1:] if a not in ("--quiet", "--compare")]
    if len(args) != 1 or args[0].startswith("-"):
        print("usage: /usr/bin/python3 harness/plots.py DIR [--compare] [--quiet]",
              file=sys.stderr)
        return 2
    d = args[0]
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        import numpy as np
    except ImportError as e:
        print("plots.py: %s cannot import matplotlib and numpy (%s); install "
              "python3-matplotlib (harness/setup.sh)" % (sys.executable, e), file=sys.stderr)
        return 3
    global REDUCING
    try:
        REDUCING = load_reducing()
    except (OSError, ValueError, KeyError, TypeError) as e:
        print("plots.py: %s: the table of collectives is unreadable (%s); run ninja "
              "(collgen emit writes it)" % (COLLECTIVES, e), file=sys.stderr)
        return 2
    doc, points = None, None
    try:
        if compare:
            with open(os.path.join(d, "compare.json"), encoding="utf-8") as f:
                doc = json.load(f)
    except (OSError, ValueError) as e:
        print("plots.py: %s/compare.json: %s" % (d, e), file=sys.stderr)
        return 2
    try:
        if not compare:
            points = load(d)
    except (OSError, BadInput) as e:
        print("plots.py: %s" % e, file=sys.stderr)
        return 2
    except (KeyError, TypeError, ValueError) as e:
        print("plots.py: %s/points.jsonl: a record lacks a field or has a wrong type (%r); "
              "collgen report %s says which" % (d, e, d), file=sys.stderr)
        return 2
    tmp = os.path.join(d, "plots.tmp")
    old = os.path.join(d, "plots.old")
    final = os.path.join(d, "plots")
    for stale in (tmp, old):
        shutil.rmtree(stale, ignore_errors=True)
    os.makedirs(tmp)
    plt.rcParams.update({"font.size": 9})
    written = make_compare(plt, np, doc, tmp) if compare else make_all(plt, np, points, tmp)
    if os.path.isdir(final):
        os.rename(final, old)
    os.rename(tmp, final)
    shutil.rmtree(old, ignore_errors=True)
    if not quiet:
        print("plots.py: wrote %d plots in %s" % (len(written), final))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
