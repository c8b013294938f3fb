#!/usr/bin/env python3
"""Prints the `make bench` table from the runs that scripts/bench.sh recorded (a TSV of
/usr/bin/time -v results), the ratios bleanalyze/peer and PASS/MISS against the targets.
Also writes it as Markdown next to the results (DIR/report-FRAMES.md) and, when runs with another
frame count are in DIR, a linearity line (ns per frame at each size)."""
import argparse
import json
import os
import platform
import re
import subprocess

TARGET_FULL_FPS = 5_000_000     # full analysis frames/s
TARGET_FULL_VS_BTMON_R = 20     # full analysis at least 20x faster than btmon -r
TARGET_PACKETS_VS_BTMON_R = 3   # packets > /dev/null at least 3x faster than btmon -r
TARGET_RSS_MB = 100             # peak RSS of every bleanalyze run

LABELS = {
    "bleanalyze-info": "bleanalyze info FILE --json",
    "bleanalyze-packets": "bleanalyze packets FILE",
    "bleanalyze-json": "bleanalyze FILE --json",
    "btmon-r": "btmon -r FILE",
    "tshark": "tshark -r FILE",
    "btmon-a": "btmon -a FILE",
}


def machine():
    model = "?"
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = "?"
    try:
        for line in open("/proc/meminfo"):
            if line.startswith("MemTotal"):
                mem = "%.1f GiB" % (int(line.split()[1]) / 1024 / 1024)
    except OSError:
        pass
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else 0.0
    return "%d cores (nproc), %s, %s RAM, %s %s, load %.2f at report time" % (
        os.cpu_count() or 0, model, mem, platform.system(), platform.release(), load)


def versions():
    out = []
    for cmd in (["btmon", "--version"], ["tshark", "--version"]):
        try:
            v = subprocess.run(cmd, capture_output=True, text=True, timeout=10).stdout.splitlines()
            if v:
                out.append(v[0].strip() if cmd[0] == "tshark" else "btmon " + v[0].strip())
        except (OSError, subprocess.SubprocessError):
            pass
    return ", ".join(out)


def load(path):
    rows = {}
    with open(path) as f:
        header = f.readline().rstrip("\n").split("\t")
        for line in f:
            r = dict(zip(header, line.rstrip("\n").split("\t")))
            for k in ("wall", "user", "sys"):
                r[k] = float(r[k]) if r.get(k) not in (None, "") else None
            r["rss_kb"] = int(r["rss_kb"]) if r.get("rss_kb") else None
            r["status"] = int(r["status"])
            r["timeout"] = int(r["timeout"])
            rows[r["name"]] = r
    return rows


def finished(r):
    """True when the run completed (bleanalyze's default command exits 1 when it has findings)."""
    if r is None:
        return False
    return r["status"] == 0 or (r["name"] == "bleanalyze-json" and r["status"] == 1)


def status_text(r):
    s = r["status"]
    if s == -2:
        return r["command"]
    if s in (124, 137):
        return "did not finish in %d s" % r["timeout"]
    if finished(r):
        return "ok" if s == 0 else "ok (exit 1: findings)"
    if s > 128:
        return "crashed: signal %d" % (s - 128)
    return "failed: exit %d" % s


def fmt_rate(x):
    if x >= 1e6:
        return "%.2f M" % (x / 1e6)
    if x >= 1e3:
        return "%.1f k" % (x / 1e3)
    return "%.0f" % x


def shape2(a, p):
    """The second capture shape: full analysis vs btmon -r, same 20× target."""
    rows = load(a.shape2_results)
    o, q = rows.get("bleanalyze-json"), rows.get("btmon-r")
    p("Second shape (%s frames, write- and discovery-heavy: %s):" % (format(a.shape2_frames, ","),
                                                                     os.path.basename(a.shape2_capture)))
    p("")
    p("| command (stdout to /dev/null) | wall s | CPU s | frames/s | peak RSS MB | status |")
    p("|---|---:|---:|---:|---:|---|")
    for name, r in rows.items():
        cpu = (r["user"] or 0) + (r["sys"] or 0)
        fps = fmt_rate(a.shape2_frames / r["wall"]) if finished(r) and r["wall"] else "—"
        rss = "%.1f" % (r["rss_kb"] / 1024) if r["rss_kb"] else "?"
        p("| `%s` | %.2f | %.2f | %s | %s | %s |" % (LABELS.get(name, name), r["wall"] or 0, cpu, fps, rss, status_text(r)))
    p("")
    if finished(o) and finished(q) and o["wall"]:
        x = q["wall"] / o["wall"]
        p("- %s full analysis ≥ 20× faster than btmon -r on the second shape: %.1f× faster" %
          ("PASS" if x >= TARGET_FULL_VS_BTMON_R else "MISS", x))
    else:
        p("- n/a full analysis ≥ 20× faster than btmon -r on the second shape: not both finished")
    p("")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--results", required=True)
    ap.add_argument("--frames", type=int, required=True)
    ap.add_argument("--bytes", type=int, required=True)
    ap.add_argument("--capture", required=True)
    ap.add_argument("--btmon-fact", default="")
    ap.add_argument("--dir", required=True)
    ap.add_argument("--shape2-results", help="results of the second capture shape (--shape writes)")
    ap.add_argument("--shape2-frames", type=int, default=0)
    ap.add_argument("--shape2-capture", default="")
    a = ap.parse_args()
    rows = load(a.results)
    mb = a.bytes / 1e6

    lines = []
    p = lines.append
    p("## bench: %s frames, %.1f MB (%s)" % (format(a.frames, ","), mb, os.path.basename(a.capture)))
    p("")
    p("Machine: " + machine())
    v = versions()
    if v:
        p("Peers: " + v)
    p("")
    p("| command (stdout to /dev/null) | wall s | CPU s | frames/s | MB/s | peak RSS MB | status |")
    p("|---|---:|---:|---:|---:|---:|---|")
    for name, r in rows.items():
        label = LABELS.get(name, name)
        cpu = (r["user"] or 0) + (r["sys"] or 0)
        rss = "%.1f" % (r["rss_kb"] / 1024) if r["rss_kb"] else "?"
        if finished(r) and r["wall"]:
            fps = fmt_rate(a.frames / r["wall"])
            mbs = "%.1f" % (mb / r["wall"])
            wall = "%.2f" % r["wall"]
        else:
            fps = mbs = "—"
            wall = "> %d" % r["timeout"] if r["status"] in (124, 137) else ("%.2f" % r["wall"] if r["wall"] else "?")
        if r["status"] == -2:
            p("| `%s` | — | — | — | — | — | %s |" % (label, status_text(r)))
            continue
        p("| `%s` | %s | %.2f | %s | %s | %s | %s |" % (label, wall, cpu, fps, mbs, rss, status_text(r)))
    p("")

    def speedup(ours, peer):
        """(text, value, is_lower_bound): how many times faster `ours` is than `peer` in wall time."""
        o, q = rows.get(ours), rows.get(peer)
        if not finished(o) or q is None or not o["wall"]:
            return None
        if finished(q):
            x = q["wall"] / o["wall"]
            text = "%.1f× faster" % x if x >= 1 else "%.1f× slower" % (1 / x)
            oc, qc = (o["user"] or 0) + (o["sys"] or 0), (q["user"] or 0) + (q["sys"] or 0)
            if oc > 0 and qc > 0:
                y = qc / oc
                text += " (CPU time: %s)" % ("%.1f× faster" % y if y >= 1 else "%.1f× slower" % (1 / y))
            return (text, x, False)
        if q["status"] in (124, 137):
            x = q["timeout"] / o["wall"]
            return ("> %.0f× faster (%s did not finish in %d s)" % (x, LABELS[peer], q["timeout"]), x, True)
        return ("— (%s %s)" % (LABELS[peer], status_text(q)), None, False)

    p("Ratios (wall time of the peer / wall time of bleanalyze; peak RSS bleanalyze vs peer):")
    p("")
    for ours, peer in (("bleanalyze-packets", "btmon-r"), ("bleanalyze-packets", "tshark"),
                       ("bleanalyze-json", "btmon-a"), ("bleanalyze-json", "btmon-r"),
                       ("bleanalyze-json", "tshark")):
        s = speedup(ours, peer)
        if s is None:
            continue
        o, q = rows[ours], rows[peer]
        rss = ""
        if o["rss_kb"] and q["rss_kb"]:
            rss = "; RSS %.1f MB vs %.1f MB (×%.2f)" % (o["rss_kb"] / 1024, q["rss_kb"] / 1024, o["rss_kb"] / q["rss_kb"])
        p("- `%s` vs `%s`: %s%s" % (LABELS[ours], LABELS[peer], s[0], rss))
    p("")

    p("Targets:")
    p("")

    def verdict(ok):
        return "PASS" if ok else "MISS"
    full = rows.get("bleanalyze-json")
    if finished(full) and full["wall"]:
        fps = a.frames / full["wall"]
        p("- %s full analysis ≥ 5 M frames/s: %s frames/s" % (verdict(fps >= TARGET_FULL_FPS), fmt_rate(fps)))
    else:
        p("- MISS full analysis ≥ 5 M frames/s: %s" % (status_text(full) if full else "not run"))
    def ratio_verdict(s, target):
        # a peer that did not finish gives a lower bound: below the target it decides nothing
        if s[2] and s[1] < target:
            return "n/a"
        return verdict(s[1] >= target)
    s = speedup("bleanalyze-json", "btmon-r")
    if s and s[1] is not None:
        p("- %s full analysis ≥ 20× faster than btmon -r: %s" % (ratio_verdict(s, TARGET_FULL_VS_BTMON_R), s[0]))
    elif full is not None and not finished(full):
        p(unfinished_ours("bleanalyze-json", "btmon-r", TARGET_FULL_VS_BTMON_R, "full analysis ≥ 20× faster than btmon -r"))
    else:
        p("- n/a full analysis ≥ 20× faster than btmon -r: btmon -r not run or did not finish")
    def unfinished_ours(ours, peer, target, what):
        """bleanalyze did not finish: if the peer did, the ratio is at most peer wall / limit."""
        o, q = rows.get(ours), rows.get(peer)
        if o is None or q is None:
            return "- n/a %s: %s not run" % (what, LABELS[ours] if o is None else LABELS[peer])
        if not finished(q):
            return "- n/a %s: neither finished" % what
        bound = q["wall"] / o["wall"] if o["wall"] else 0
        return "- %s %s: %s %s, %s took %.1f s (ratio < %.2f×)" % (
            "MISS" if bound < target else "n/a", what, LABELS[ours], status_text(o), LABELS[peer], q["wall"], bound)
    s = speedup("bleanalyze-packets", "btmon-r")
    what = "packets > /dev/null ≥ 3× faster than btmon -r"
    if s and s[1] is not None:
        p("- %s %s: %s" % (ratio_verdict(s, TARGET_PACKETS_VS_BTMON_R), what, s[0]))
    elif rows.get("bleanalyze-packets") is not None and not finished(rows["bleanalyze-packets"]):
        p(unfinished_ours("bleanalyze-packets", "btmon-r", TARGET_PACKETS_VS_BTMON_R, what))
    else:
        p("- n/a %s: btmon -r not run or did not finish" % what)
    for name, r in rows.items():
        if name.startswith("bleanalyze") and r["rss_kb"]:
            mbr = r["rss_kb"] / 1024
            p("- %s peak RSS ≤ 100 MB, `%s`: %.1f MB" % (verdict(mbr <= TARGET_RSS_MB), LABELS[name], mbr))
    p("")
    if a.shape2_results and os.path.exists(a.shape2_results):
        shape2(a, p)
    if a.btmon_fact:
        p("btmon fact: " + a.btmon_fact)
        p("")

    # linearity: other frame counts measured with the same commands
    meta = {"frames": a.frames, "bytes": a.bytes, "results": os.path.basename(a.results)}
    with open(os.path.join(a.dir, "results-meta-%d.json" % a.frames), "w") as f:
        json.dump(meta, f)
    others = []
    for fn in sorted(os.listdir(a.dir)):
        m = re.fullmatch(r"results-meta-(\d+)\.json", fn)
        if m and int(m.group(1)) != a.frames:
            with open(os.path.join(a.dir, fn)) as f:
                om = json.load(f)
            rp = os.path.join(a.dir, om["results"])
            if os.path.exists(rp):
                others.append((om["frames"], load(rp)))
    if others:
        p("Linearity (ns per frame: wall / CPU; flat = linear):")
        p("")
        sizes = sorted([(a.frames, rows)] + others, key=lambda t: t[0])
        p("| command | " + " | ".join(format(n, ",") + " frames" for n, _ in sizes) + " |")
        p("|---|" + "---:|" * len(sizes))
        names = list(rows) + [n for _, rs in others for n in rs if n not in rows]
        for name in dict.fromkeys(names):
            cells = []
            for n, rs in sizes:
                r = rs.get(name)
                if finished(r) and r["wall"]:
                    cpu = (r["user"] or 0) + (r["sys"] or 0)
                    cells.append("%.0f / %.0f" % (r["wall"] * 1e9 / n, cpu * 1e9 / n))
                elif r is not None and r["status"] in (124, 137):
                    cells.append("> %.0f (did not finish)" % (r["timeout"] * 1e9 / n))
                else:
                    cells.append("—")
            p("| `%s` | %s |" % (LABELS.get(name, name), " | ".join(cells)))
        p("")

    text = "\n".join(lines)
    print(text)
    with open(os.path.join(a.dir, "report-%d.md" % a.frames), "w") as f:
        f.write(text + "\n")


if __name__ == "__main__":
    main()
