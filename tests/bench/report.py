#!/usr/bin/env python3
"""Summarise tests/bench/in-vm.sh's measurements (raw.tsv in OUT_DIR):
medians per metric and engine, ratio rvs/IPVS; writes results.md,
results.json and ratios.png into OUT_DIR.

usage: report.py OUT_DIR [ELAPSED_S] [VM_CPUS]
"""
import datetime
import json
import os
import statistics
import struct
import subprocess
import sys
import zlib

# Metrics an engine may not have (NA there is not a failure): rvsadm -R
# exists only once the restore work has landed; a merged slab cache has no
# line of its own in /proc/slabinfo.
NOT_APPLICABLE = {"rvs": ("ctl-restore", "conn-objsize"), "ipvs": ("conn-objsize", "ctl-restore-atomic")}

# metric -> (description, better)
SCENARIOS = {
    "nat-tcp-1": ("NAT TCP throughput, iperf3 1 stream", "higher"),
    "nat-tcp-8": ("NAT TCP throughput, iperf3 8 streams", "higher"),
    "dr-tcp-1": ("DR TCP throughput, iperf3 1 stream", "higher"),
    "tun-tcp-1": ("TUN (IPIP) TCP throughput, iperf3 1 stream, MSS 1400", "higher"),
    "conn-rate": ("NAT new TCP connections/s (8 concurrent, 2 real servers)", "higher"),
    "udp-nat": ("NAT UDP 18-byte datagrams received/s (4 flows)", "higher"),
    "udp-dr": ("DR UDP 18-byte datagrams received/s (4 flows)", "higher"),
    "udp-nat-ns": ("director CPU per 60-byte UDP packet, NAT, 1,000 flows (pktgen; all CPUs' busy time / packets)", "lower"),
    "udp-nat-engine-ns": ("the same minus plain IP forwarding of the same packets (the engine's own cost)", "lower"),
    "udp-dr-ns": ("director CPU per 60-byte UDP packet, DR, 1,000 flows", "lower"),
    "udp-dr-engine-ns": ("the same minus plain IP forwarding", "lower"),
    "udp6-nat-ns": ("director CPU per 80-byte UDP packet over IPv6, NAT, 1,000 flows (pktgen)", "lower"),
    "udp6-nat-engine-ns": ("the same minus plain IPv6 forwarding", "lower"),
    "udp6-dr-ns": ("director CPU per 80-byte UDP packet over IPv6, DR, 1,000 flows", "lower"),
    "udp6-dr-engine-ns": ("the same minus plain IPv6 forwarding", "lower"),
    "conntab-1k-ns": ("NAT UDP CPU per packet with 1,000 entries in the connection table", "lower"),
    "conntab-big-ns": ("the same 1,000 flows with CONNS entries in the table", "lower"),
    "conntab-big-vs-1k": ("conntab-big-ns / conntab-1k-ns (target for rvs: <= 1.10)", "lower"),
    "conntab-big-vs-1k-engine": ("the same ratio after subtracting plain forwarding", "lower"),
    "udp-nat-insn": ("guest instructions per 60-byte UDP packet, NAT, 1,000 flows (pktgen; 1 vCPU under icount)", "lower"),
    "udp-nat-engine-insn": ("the same minus plain IP forwarding of the same packets (the engine's own instructions)", "lower"),
    "udp-dr-insn": ("guest instructions per 60-byte UDP packet, DR, 1,000 flows", "lower"),
    "udp-dr-engine-insn": ("the same minus plain IP forwarding", "lower"),
    "udp6-nat-insn": ("guest instructions per 80-byte UDP packet over IPv6, NAT, 1,000 flows", "lower"),
    "udp6-nat-engine-insn": ("the same minus plain IPv6 forwarding", "lower"),
    "udp6-dr-insn": ("guest instructions per 80-byte UDP packet over IPv6, DR, 1,000 flows", "lower"),
    "udp6-dr-engine-insn": ("the same minus plain IPv6 forwarding", "lower"),
    **{
        "%s-%s%s-%s" % (base, fwd, part, unit): (desc % (label, fam), "lower")
        for base, fam in (("udp", "IPv4"), ("udp6", "IPv6"))
        for fwd, label in (("nat", "NAT"), ("dr", "DR"))
        for unit in ("insn", "ns")
        for part, desc in (
            ("-forward", "%s packets of the same flows, plainly forwarded instead (%s; no engine work)"),
            ("-wire", "%s packets dropped as they arrive (%s; pktgen, veth, receive: what every packet pays before the director decides)"),
            ("-director", "%s: the director's share of a packet (the cost less -wire), %s"),
            ("-forward-director", "%s flows plainly forwarded: the director's share (%s)"),
            ("-fast", "%s with rvs's ingress fast path (%s; IPVS has none: its column is its only path)"),
            ("-fast-director", "%s with rvs's ingress fast path, director's share (%s; IPVS: its only path)"),
        )
    },
    "conntab-1k-insn": ("NAT UDP instructions per packet with 1,000 entries in the connection table", "lower"),
    "conntab-big-insn": ("the same 1,000 flows with CONNS entries in the table", "lower"),
    "conntab-big-vs-1k-insn": ("conntab-big-insn / conntab-1k-insn", "lower"),
    "conntab-big-vs-1k-engine-insn": ("the same ratio after subtracting plain forwarding", "lower"),
    "conntab-fill": ("new UDP connections/s while filling the table to CONNS (pktgen)", "higher"),
    "mem-per-conn": ("slab memory per connection entry (/proc/meminfo Slab growth / entries added)", "lower"),
    "conn-objsize": ("object size of the connection cache (ip_vs_conn / rvs_conn in /proc/slabinfo)", "lower"),
    "ctl-add-svcs": ("control plane: add SVCS services x 10 real servers, one process per op", "lower"),
    "ctl-op": ("control plane: time per admin process (one operation)", "lower"),
    "ctl-percall-est": ("control plane: BATCH services x 10 one process per op, extrapolated from ctl-op", "lower"),
    "ctl-batch": ("control plane: BATCH services x 10 over one netlink socket (tests/bench/nlbatch.py)", "lower"),
    "ctl-load": ("control plane: BATCH services x 10 over one socket, each engine's fastest way (IPVS: ctl-batch's requests; rvs: one RVS_CMD_APPLY, nlbatch.py rvs-apply)", "lower"),
    "ctl-list": ("control plane: list the BATCH services (-L -n), one process", "lower"),
    "ctl-flush": ("control plane: flush the BATCH services (-C), one process", "lower"),
    "ctl-restore": ("control plane: -R of the BATCH services' rules (n/a: the tool has no -R)", "lower"),
    "ctl-restore-atomic": ("control plane: rvsadm -R --atomic of the BATCH services' rules (IPVS has none)", "lower"),
}


def metric_kind(name, unit):
    """Which instrument a scenario's numbers (and so its ratio) come from."""
    if unit == "insn/pkt" or name.endswith("-insn"):
        return "insn (icount)"
    if unit == "ns/pkt" or name.startswith("conntab-big-vs-1k"):
        return "CPU ns (ticks)"
    if unit == "B":
        return "bytes"
    return "wall clock"


def targets(res):
    """The issue's targets, checked against this run's medians."""
    by = {r["scenario"]: r for r in res}
    med = lambda m, e: by.get(m, {}).get(e + "_median")
    out = []

    def add(name, value, ok, how):
        out.append((name, "n/a" if value is None else ("%.2f" % value), "n/a" if value is None else ("yes" if ok else "NO"), how))

    for m in ("nat-tcp-1", "nat-tcp-8", "dr-tcp-1", "tun-tcp-1", "conn-rate", "udp-nat", "udp-dr"):
        r = by.get(m, {}).get("ratio_rvs_ipvs")
        add("%s ratio >= 1.0" % m, r, r is not None and r >= 1.0, "rvs/IPVS, higher is better")
    for m in ("udp-nat-ns", "udp-dr-ns", "udp6-nat-ns", "udp6-dr-ns",
              "udp-nat-insn", "udp-dr-insn", "udp6-nat-insn", "udp6-dr-insn"):
        if m.endswith("-insn") and m not in by:
            continue
        r = by.get(m, {}).get("ratio_rvs_ipvs")
        add("%s IPVS/rvs >= 1.0" % m, 1 / r if r else None, r is not None and r <= 1.0, "per-packet cost, inverted so higher is better")
    # Issue 20's fast path targets, on the director's share of a packet:
    # at most 0.7x IPVS's, and at most plain forwarding's (the cheaper of
    # the two engines' forwarding runs).
    for base in ("udp-nat", "udp-dr", "udp6-nat", "udp6-dr"):
        for unit in ("insn", "ns"):
            m = "%s-fast-director-%s" % (base, unit)
            if m not in by:
                continue
            r = by[m].get("ratio_rvs_ipvs")
            add("%s <= 0.7x IPVS" % m, r, r is not None and r <= 0.7, "rvs fast path / IPVS, director's share per packet")
            fwd = [v for v in (med("%s-forward-director-%s" % (base, unit), e) for e in ("ipvs", "rvs")) if v]
            f = med(m, "rvs")
            v = f / min(fwd) if f and fwd else None
            add("%s <= plain forwarding" % m, v, v is not None and v <= 1.0, "rvs fast path / plain forwarding of the same packets")
    g = med("conntab-big-vs-1k", "rvs")
    add("rvs conntab big/1k <= 1.10", g, g is not None and g <= 1.10, "CPU per packet, big table vs 1k")
    if "conntab-big-vs-1k-insn" in by:
        g = med("conntab-big-vs-1k-insn", "rvs")
        add("rvs conntab big/1k (insn) <= 1.10", g, g is not None and g <= 1.10, "instructions per packet, big table vs 1k")
    per = med("ctl-percall-est", "ipvs")
    for m in ("ctl-batch", "ctl-restore"):
        b = med(m, "rvs")
        v = per / b if per and b else None
        add("ipvsadm per call / rvs %s >= 10" % m, v, v is not None and v >= 10, "speed-up over ipvsadm one process per op")
    r = by.get("ctl-load", {}).get("ratio_rvs_ipvs")
    add("ctl-load ratio <= 0.7", r, r is not None and r <= 0.7, "rvs/IPVS seconds to load BATCH x 10 over one socket")
    a, b = med("mem-per-conn", "ipvs"), med("mem-per-conn", "rvs")
    add("mem-per-conn rvs <= IPVS", b / a if a and b else None, a is not None and b is not None and b <= a, "rvs/IPVS bytes")
    return out


def load(path):
    meta, rows, seen = {}, [], set()
    with open(path) as f:
        for line in f:
            p = line.rstrip("\n").split("\t")
            if p[0] in ("RVSBENCH_META", "RVSBENCH_HOST"):
                meta.update(kv.split("=", 1) for kv in p[1:] if "=" in kv)
            elif p[0] == "RVSBENCH_META_ICOUNT":  # the instruction-counting VM's
                meta.update(("icount_" + k, v) for k, v in (kv.split("=", 1) for kv in p[1:] if "=" in kv))
            elif p[0] == "RVSBENCH" and len(p) >= 5:
                unit = p[5] if len(p) > 5 else ""
                key = (p[1], p[2], int(p[3]))
                if key in seen:  # the console can repeat lines at the end of a run
                    continue
                seen.add(key)
                rows.append((p[1], p[2], int(p[3]), p[4], unit))
    return meta, rows


def summarise(rows):
    order = [m for m in SCENARIOS] + sorted({r[0] for r in rows} - set(SCENARIOS))
    out = []
    for m in order:
        mrows = [r for r in rows if r[0] == m]
        if not mrows:
            continue
        unit = next((r[4] for r in mrows if r[4]), "")
        res = {"scenario": m, "description": SCENARIOS.get(m, (m, "higher"))[0],
               "better": SCENARIOS.get(m, (m, "higher"))[1], "unit": unit,
               "metric": metric_kind(m, unit)}
        for eng in ("ipvs", "rvs"):
            vals = []
            # IPVS has no fast path: a fast path row compares rvs's fast
            # path with IPVS's only path (the same row without "-fast").
            src = mrows
            if eng == "ipvs" and "-fast" in m and not any(r[1] == "ipvs" and r[3] != "NA" for r in mrows):
                src = [r for r in rows if r[0] == m.replace("-fast", "", 1)]
            for r in src:
                if r[1] == eng and r[3] != "NA":
                    try:
                        vals.append(float(r[3]))
                    except ValueError:
                        pass
            res[eng + "_samples"] = vals
            na = m in NOT_APPLICABLE.get(eng, ())
            res[eng + "_failed"] = 0 if na else sum(1 for r in mrows if r[1] == eng and r[3] == "NA")
            res[eng + "_median"] = statistics.median(vals) if vals else None
        a, b = res["ipvs_median"], res["rvs_median"]
        # A ratio of a negative median (an *-engine-ns difference lost in
        # noise) says nothing: n/a, as when one side has no number.
        ok = a is not None and b is not None and a > 0 and b >= 0
        res["ratio_rvs_ipvs"] = (b / a) if ok else None
        res["rounds"] = max(len(res["ipvs_samples"]), len(res["rvs_samples"]))
        out.append(res)
    return out


def fmt(v):
    if v is None:
        return "n/a"
    if abs(v) >= 100:
        return "%.0f" % v
    if abs(v) >= 1:
        return "%.2f" % v
    return "%.3f" % v


def write_md(path, meta, res, elapsed, cpus):
    date = os.environ.get("REPORT_DATE") or datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    commit = os.environ.get("REPORT_COMMIT")
    try:
        commit = commit or subprocess.check_output(["git", "rev-parse", "--short", "HEAD"], text=True,
                                         stderr=subprocess.DEVNULL).strip()
    except (OSError, subprocess.CalledProcessError):
        commit = "?"
    if "icount_rounds" in meta:
        icount = ("The *-insn rows come from a second VM of 1 vCPU under QEMU's instruction "
                  "counting (`-icount shift=0,sleep=off`): %s rounds, %s packets per cost "
                  "sample, %s entries in the big table." % (
                      meta.get("icount_rounds", "?"), meta.get("icount_pkts", "?"), meta.get("icount_conns", "?")))
    else:
        icount = "No instruction-counting VM in this run (no *-insn rows)."
    if "rounds" in meta:
        vm = ("VM: %s vCPUs (qemu/run, TCG emulation, no KVM), kernel %s; %s rounds of "
              "alternating IPVS/rvs samples, %s s per traffic sample, %s services for the "
              "control plane per call, %s in a batch, %s packets per cost sample, %s entries "
              "in the big connection table; whole run %s s. Host load average (1/5/15 min) "
              "at start %s, at end %s (2 host cores shared with other engineers' VMs)."
              % (meta.get("cpus", cpus), meta.get("kernel", "?"), meta.get("rounds", "?"),
                 meta.get("secs", "?"), meta.get("svcs", "?"), meta.get("batch_svcs", "?"),
                 meta.get("pkts", "?"), meta.get("conns", "?"), elapsed,
                 meta.get("host_loadavg_start", "?"), meta.get("host_loadavg_end", "?")))
    else:
        vm = ("No wall-clock VM in this run (`RVS_BENCH_ICOUNT=only`): only the "
              "instruction-counting VM's rows; whole run %s s. Host load average (1/5/15 min) "
              "at start %s, at end %s." % (elapsed, meta.get("host_loadavg_start", "?"),
                                            meta.get("host_loadavg_end", "?")))
    L = ["# rvs vs IPVS benchmark results", "",
         "Generated by `tests/bench/run` on %s (source commit %s)." % (date, commit),
         vm,
         "", icount,
         "",
         "Under TCG absolute numbers mean little (everything, including the",
         "client and servers, runs in one emulated machine); compare the ratio",
         "within one run. Ratio = rvs median / IPVS median: above 1 is better",
         "for rvs when higher is better, below 1 when lower is better.",
         "The metric column says which instrument each row and its ratio use:",
         "`insn (icount)` guest instructions per packet, deterministic (two runs'",
         "medians agree within 0.2-1.5%); `CPU ns (ticks)` busy time in /proc/stat,",
         "sampled by the 250 Hz tick and disturbed by the host (samples spread",
         "by up to 30%); `wall clock` rates and durations, as noisy;",
         "`bytes` memory. Documentation/bench/README.md, \"The deterministic",
         "metric\", says what the count includes and its limits.", "",
         "| scenario | IPVS median | rvs median | ratio rvs/IPVS | unit | metric | better | rounds | samples IPVS / rvs |",
         "|---|---:|---:|---:|---|---|---|---:|---|"]
    for r in res:
        samples = "%s / %s" % (", ".join(fmt(v) for v in r["ipvs_samples"]) or "-",
                               ", ".join(fmt(v) for v in r["rvs_samples"]) or "-")
        fails = r["ipvs_failed"] + r["rvs_failed"]
        if fails:
            samples += " (%d failed)" % fails
        ratio = "%.2f" % r["ratio_rvs_ipvs"] if r["ratio_rvs_ipvs"] is not None else "n/a"
        L.append("| %s | %s | %s | %s | %s | %s | %s | %d | %s |" % (
            r["scenario"], fmt(r["ipvs_median"]), fmt(r["rvs_median"]), ratio, r["unit"],
            r["metric"], r["better"], r["rounds"], samples))
    L += ["", "Targets (issue 5):", "",
          "| target | value | met | how |", "|---|---:|---|---|"]
    for t in targets(res):
        L.append("| %s | %s | %s | %s |" % t)
    L += ["", "Scenarios:", ""]
    for r in res:
        L.append("- `%s`: %s" % (r["scenario"], r["description"].replace("SVCS", str(meta.get("svcs", "N")))
                                  .replace("BATCH", str(meta.get("batch_svcs", "N")))
                                  .replace("CONNS", str(meta.get("conns", "N")))))
    L.append("")
    notes = os.path.join(os.path.dirname(path), "notes.md")
    if os.path.exists(notes):  # hand-written remarks on the committed run
        L.append(open(notes).read())
    with open(path, "w") as f:
        f.write("\n".join(L))


def rvs_wins(ratio, better):
    """Whether a ratio rvs/IPVS favours rvs: True, False, "even" within 5%
    of parity (less than a quiet host's spread between samples), None when
    there is no ratio."""
    if ratio is None:
        return None
    if abs(ratio - 1.0) < 0.05:
        return "even"
    return ratio > 1.0 if better == "higher" else ratio < 1.0


def advantage(ratio, better):
    """rvs's advantage over IPVS in a scenario: the ratio of medians turned
    so that above 1 always means rvs better (IPVS/rvs where lower is
    better), None without a ratio."""
    if not ratio:
        return None
    return ratio if better == "higher" else 1.0 / ratio


def png_bars(path, res):
    """A horizontal bar per scenario of rvs's advantage over IPVS (see
    `advantage`) on a log scale, so that one direction always means "rvs
    better" and 2x better looks as large as 2x worse: green where rvs does
    better, red where IPVS does, grey within 5%; each bar labelled with
    its scenario, unit and both medians. Needs matplotlib (qemu/install-deps
    installs Debian's python3-matplotlib); without it, a plain PNG of the
    same bars, unlabelled, and a warning."""
    ratios = [r["ratio_rvs_ipvs"] for r in res]
    betters = [r["better"] for r in res]
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("report: matplotlib is missing (qemu/install-deps installs it): %s has no labels" % path,
              file=sys.stderr)
        return plain_png(path, ratios, betters)
    adv = [advantage(r, b) for r, b in zip(ratios, betters)]
    shown = [a for a in adv if a]
    span = max([max(a, 1 / a) for a in shown] + [1.25]) * 1.6
    fig, ax = plt.subplots(figsize=(13, 0.42 * len(res) + 1.6))
    colors = [{True: "#55a868", False: "#c44e52", "even": "#8c8c8c", None: "#cccccc"}[rvs_wins(r, b)]
              for r, b in zip(ratios, betters)]
    ys = list(range(len(res)))[::-1]
    # Bars grow from 1 (parity) toward the advantage, right for rvs, left for IPVS.
    ax.barh(ys, [(a or 1.0) - 1.0 for a in adv], left=1.0, color=colors, height=0.7)
    ax.set_xscale("log")
    ax.set_xlim(1 / span, span)
    ticks = [t for t in (1 / 8, 1 / 4, 1 / 2, 1, 2, 4, 8) if 1 / span <= t <= span]
    ax.set_xticks(ticks)
    ax.set_xticklabels(["%gx IPVS" % (1 / t) if t < 1 else ("parity" if t == 1 else "%gx rvs" % t)
                        for t in ticks])
    ax.minorticks_off()
    ax.axvline(1.0, color="black", linewidth=1)
    ax.set_yticks(ys)
    ax.set_yticklabels(["%s (%s)" % (r["scenario"], r["unit"] or "-") for r in res], fontsize=8)
    for y, r, a in zip(ys, res, adv):
        text = "IPVS %s, rvs %s" % (fmt(r["ipvs_median"]), fmt(r["rvs_median"]))
        text += ": %.2fx" % a if a else ": n/a"
        ax.text((a or 1) * (1.04 if (a or 1) >= 1 else 0.96), y, text, va="center", fontsize=7,
                ha="left" if (a or 1) >= 1 else "right")
    ax.set_xlabel("rvs's advantage over IPVS (medians; IPVS/rvs where lower is better), log scale: "
                  "right of 1 rvs is better, left IPVS")
    ax.set_title("rvs vs IPVS, one run: green rvs better, red IPVS better, grey within 5%")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return True


def plain_png(path, ratios, betters):
    w, h, bw = 60 * max(len(ratios), 1), 300, 40
    top = max([r for r in ratios if r] + [1.2]) * 1.1
    px = [[(255, 255, 255)] * w for _ in range(h)]
    for i, (r, b) in enumerate(zip(ratios, betters)):
        bar = int(h * (r or 0) / top)
        colour = {True: (85, 168, 104), False: (196, 78, 82)}.get(rvs_wins(r, b), (140, 140, 140))
        for y in range(h - bar, h):
            for x in range(i * 60 + 10, i * 60 + 10 + bw):
                px[y][x] = colour
    one = h - int(h / top)
    for x in range(w):
        px[one][x] = (0, 0, 0)
    raw = b"".join(b"\0" + bytes(c for p in row for c in p) for row in px)
    chunk = lambda t, d: struct.pack(">I", len(d)) + t + d + struct.pack(">I", zlib.crc32(t + d))
    with open(path, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0))
                + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))
    return True


def main():
    out = sys.argv[1]
    elapsed = sys.argv[2] if len(sys.argv) > 2 else "?"
    cpus = sys.argv[3] if len(sys.argv) > 3 else "?"
    meta, rows = load(os.path.join(out, "raw.tsv"))
    res = summarise(rows)
    write_md(os.path.join(out, "results.md"), meta, res, elapsed, cpus)
    with open(os.path.join(out, "results.json"), "w") as f:
        json.dump({"targets": [dict(zip(("target", "value", "met", "how"), t)) for t in targets(res)],
                   "meta": dict(meta, elapsed_s=elapsed, accel="tcg", icount="icount_rounds" in meta,
                                date=os.environ.get("REPORT_DATE") or datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")),
                   "results": res}, f, indent=1)
        f.write("\n")
    png_bars(os.path.join(out, "ratios.png"), res)
    w = max(len(r["scenario"]) for r in res)
    print("%-*s %12s %12s %7s  %-9s %s" % (w, "scenario", "IPVS", "rvs", "ratio", "unit", "metric"))
    for r in res:
        ratio = "%.2f" % r["ratio_rvs_ipvs"] if r["ratio_rvs_ipvs"] is not None else "n/a"
        print("%-*s %12s %12s %7s  %-9s %s" % (w, r["scenario"], fmt(r["ipvs_median"]), fmt(r["rvs_median"]), ratio,
                                              r["unit"], r["metric"]))
    both = [r for r in res if r["ipvs_median"] is not None and r["rvs_median"] is not None]
    # A run of one engine (RVS_BENCH_ENGINES) compares it with itself.
    engines = os.environ.get("RVS_BENCH_ENGINES", "ipvs rvs").split()
    if not both and len(engines) > 1:
        print("report: no scenario has numbers for both engines", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
