#!/usr/bin/env python3
"""Fleets of field logs on Apache Spark: every capture under INPUT analysed by `bleanalyze check --jsonl`
on the executors, written as Parquet, with a summary printed at the end.

    spark_fleet.py INPUT OUTPUT [--master URL] [--binary PATH]

INPUT   a directory of captures (walked recursively; bugreport zips, sysdiagnose tar.gz, pcap, btsnoop,
        PacketLogger...), or a Hadoop file-system URI (s3a://bucket/prefix/, hdfs://...) read with
        `binaryFiles`: each file is then copied to the executor's disk before analysis.
OUTPUT  where OUTPUT/captures/ (one row per capture) and OUTPUT/findings/ (one row per finding) go,
        as Parquet; overwritten.

The release binary (`swift build -c release --static-swift-stdlib`: executors need no Swift) is
shipped with the job (SparkContext.addFile) and run once per partition over that partition's files;
its JSON lines (docs/check-jsonl-schema.json) become the rows. A file the binary cannot read is a row
with `error`; a binary that dies gives each file of its batch such a row: the job itself never fails
on bad input. See docs/FLEET.md.
"""
import argparse
import json
import os
import socket
import stat
import subprocess
import sys
import tempfile
from urllib.parse import urlparse

# Columns of OUTPUT/captures/: the JSON line's fields as they are (nested host/peers, ruleCounts as a
# map), plus `executor` (which executor analysed the file: operations, and the test that both
# workers took tasks).
CONTROLLER = "struct<adapter:int,manufacturerId:int,manufacturer:string,hciVersion:int,hciVersionName:string," \
             "hciRevision:int,lmpVersion:int,lmpVersionName:string,lmpSubversion:int>"
HOST = "struct<product:string,software:string,bluetoothHost:string,chipset:string,controllerFirmware:string," \
       f"transport:string,buildFingerprint:string,controller:{CONTROLLER}>"
PEER = "struct<address:string,transport:string,addressType:string,name:string,connections:int,manufacturer:string," \
       "model:string,firmware:string,software:string,hardware:string>"
CAPTURES_SCHEMA = (f"file string, sha256 string, format string, fieldLog struct<container:string,member:string>, "
                   f"frames bigint, durationSeconds double, error string, host {HOST}, peers array<{PEER}>, "
                   f"ruleCounts map<string,int>, findingCount int, executor string")
FINDINGS_SCHEMA = "file string, sha256 string, rule string, severity string, connection int, frame bigint, message string"
BINARY_NAME = "bleanalyze"
# Files per `bleanalyze` process: a process start costs a few ms; a batch keeps the binary's cores busy.
MAX_BATCH = 200


def executor_id():
    """The standalone executor's id (its working directory is work/APP/ID), else host:pid (local mode)."""
    cwd = os.getcwd()
    parent = os.path.basename(os.path.dirname(cwd))
    if parent.startswith("app-"):
        return f"{socket.gethostname()}/{parent}/{os.path.basename(cwd)}"
    return f"{socket.gethostname()}:{os.getpid()}"


def error_line(path, message):
    return {"file": path, "sha256": None, "format": None, "fieldLog": None, "frames": None, "durationSeconds": None,
            "error": message, "host": None, "peers": [], "findings": [], "ruleCounts": {}}


def shipped_binary():
    from pyspark import SparkFiles
    path = SparkFiles.get(BINARY_NAME)
    mode = os.stat(path).st_mode
    if not mode & stat.S_IXUSR:
        os.chmod(path, mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return path


def run_binary(paths, extra):
    """`bleanalyze check --jsonl --only-captures PATH...`: its lines, then an error line for any path it
    did not answer (a crash, or a signal)."""
    if not paths:
        return []
    proc = subprocess.run([shipped_binary(), "check", "--jsonl", "--only-captures", *extra, *paths],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    lines = []
    for raw in proc.stdout.splitlines():
        try:
            lines.append(json.loads(raw))
        except ValueError:
            continue   # a line cut by a crash: that file gets an error line below
    answered = {line.get("file") for line in lines}
    if proc.returncode not in (0, 1, 2):
        why = f"bleanalyze exited with status {proc.returncode}: {proc.stderr.decode(errors='replace')[-300:]}"
        lines += [error_line(p, why) for p in paths if p not in answered]
    return lines


def analyse_local(paths, extra):
    """A partition of local paths (a shared or local file system the executors see)."""
    paths = list(paths)
    for start in range(0, len(paths), MAX_BATCH):
        yield from run_binary(paths[start:start + MAX_BATCH], extra)


def analyse_streams(items, extra):
    """A partition of (uri, PortableDataStream) from binaryFiles: each file copied to local disk, analysed
    under its URI's name."""
    with tempfile.TemporaryDirectory(prefix="bleanalyze-fleet-") as tmp:
        for i, (uri, stream) in enumerate(items):
            local = os.path.join(tmp, f"{i}-{os.path.basename(urlparse(uri).path) or 'capture'}")
            with open(local, "wb") as out:
                out.write(stream)   # PySpark hands binaryFiles contents over as bytes
            for line in run_binary([local], extra):
                line["file"] = uri
                yield line
            os.unlink(local)


def rows(lines, executor):
    """JSON lines → (capture row, [finding rows])."""
    for line in lines:
        findings = line.get("findings") or []
        capture = dict(line)
        capture.pop("findings", None)
        capture["findingCount"] = len(findings)
        capture["executor"] = executor
        yield ("capture", capture)
        for f in findings:
            yield ("finding", {"file": line["file"], "sha256": line.get("sha256"), "rule": f["rule"],
                               "severity": f["severity"], "connection": f.get("connection"),
                               "frame": f.get("frame"), "message": f["message"]})


def list_local(root):
    """Every regular file under `root` (a file: itself), skipping dot-names, not following directory links.
    Which of them are captures is bleanalyze's decision (--only-captures), made from their bytes."""
    if os.path.isfile(root):
        return [os.path.abspath(root)]
    found = []
    for directory, dirs, files in os.walk(os.path.abspath(root)):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        found += [os.path.join(directory, f) for f in sorted(files) if not f.startswith(".")]
    return found


# Captures per (dimension, value) and, per rule, how many of them have it. A capture counts once per
# value (a capture with two accessories counts for both). Also usable by hand: docs/FLEET.md.
SUMMARY_SQL = """
WITH readable AS (
  SELECT file, peers,
         coalesce(host.product, split(host.buildFingerprint, ':')[0], 'unknown') AS phone,
         coalesce(nullif(concat_ws(' ', host.controller.manufacturer, 'LMP ' || host.controller.lmpVersionName), ''),
                  host.chipset, 'unknown') AS controller
  FROM captures WHERE error IS NULL
),
rules AS (SELECT DISTINCT file, rule FROM captures LATERAL VIEW explode(map_keys(ruleCounts)) AS rule WHERE error IS NULL),
dimensions AS (
  SELECT 'phone' AS dimension, phone AS value, file FROM readable
  UNION ALL SELECT 'controller', controller, file FROM readable
  UNION ALL SELECT DISTINCT 'accessory firmware',
         coalesce(nullif(concat_ws(' ', p.manufacturer, p.model, p.firmware), ''), 'unknown'), file
  FROM readable LATERAL VIEW OUTER explode(peers) AS p
),
totals AS (SELECT dimension, value, count(DISTINCT file) AS captures FROM dimensions GROUP BY dimension, value),
hits AS (SELECT dimension, value, rule, count(DISTINCT file) AS with_rule FROM dimensions JOIN rules USING (file)
         GROUP BY dimension, value, rule)
SELECT t.dimension, t.value, t.captures, h.rule, h.with_rule, round(100.0 * h.with_rule / t.captures, 1) AS share_pct
FROM totals t LEFT JOIN hits h USING (dimension, value)
ORDER BY t.dimension, t.captures DESC, t.value, share_pct DESC, h.rule
"""


def print_summary(rows, rules_shown):
    """One table per dimension: each value, its captures, and the rules most of its captures have."""
    groups = {}
    for r in rows:
        groups.setdefault(r["dimension"], {}).setdefault((r["value"], r["captures"]), [])
        if r["rule"] is not None:
            groups[r["dimension"]][(r["value"], r["captures"])].append((r["share_pct"], r["rule"], r["with_rule"]))
    for dimension in ["phone", "controller", "accessory firmware"]:
        values = groups.get(dimension, {})
        width = min(48, max([len(dimension)] + [len(v) for v, _ in values]))
        print(f"\n{dimension.ljust(width)}  captures  share of captures with each rule (top {rules_shown})")
        for (value, captures), hits in sorted(values.items(), key=lambda kv: (-kv[0][1], kv[0][0])):
            hits.sort(key=lambda h: (-h[0], h[1]))
            shown = ", ".join(f"{rule} {share:g}%" for share, rule, _ in hits[:rules_shown]) or "(no findings)"
            more = f", +{len(hits) - rules_shown} more" if len(hits) > rules_shown else ""
            print(f"{value[:width].ljust(width)}  {captures:8d}  {shown}{more}")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("input")
    parser.add_argument("output")
    parser.add_argument("--master", default=None, help="local[2], spark://HOST:7077 … (default: spark-submit's)")
    parser.add_argument("--binary", default=None,
                        help="bleanalyze to ship (default: .build-static/release/bleanalyze, the static release build of `make static`)")
    parser.add_argument("--executor-memory", default="512m", help="per executor (Spark's floor is 450 MiB)")
    parser.add_argument("--partitions", type=int, default=None, help="tasks (default: 4 per core, at most one per file)")
    parser.add_argument("--rule", action="append", default=[], help="passed to bleanalyze (ID=off, ID.NAME=VALUE)")
    parser.add_argument("--summary-rules", type=int, default=4, help="rules shown per value in the summary (0: no summary)")
    args = parser.parse_args(argv)

    repo = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    binary = args.binary or os.path.join(repo, ".build-static", "release", BINARY_NAME)
    if not os.access(binary, os.X_OK):
        sys.exit(f"spark_fleet: no executable {binary} (make static builds it)")
    if os.path.basename(binary) != BINARY_NAME:
        sys.exit(f"spark_fleet: the binary must be named {BINARY_NAME}")

    from pyspark.sql import SparkSession
    builder = SparkSession.builder.appName("bleanalyze-fleet")
    if args.master:
        builder = builder.master(args.master)
    loopback = args.master is None or args.master.startswith("local") or "127.0.0.1" in args.master or "localhost" in args.master
    if loopback:
        builder = builder.config("spark.driver.host", "127.0.0.1").config("spark.driver.bindAddress", "127.0.0.1")
    builder = (builder.config("spark.ui.enabled", os.environ.get("SPARK_UI", "false"))
               .config("spark.executor.memory", args.executor_memory)
               .config("spark.pyspark.python", os.environ.get("PYSPARK_PYTHON", sys.executable))
               .config("spark.sql.session.timeZone", "UTC"))
    spark = builder.getOrCreate()
    sc = spark.sparkContext
    sc.setLogLevel("WARN")
    sc.addFile(binary)
    extra = [f"--rule={r}" for r in args.rule]

    scheme = urlparse(args.input).scheme
    if scheme in ("", "file") and not args.input.startswith("file:"):
        paths = list_local(args.input)
        if not paths:
            sys.exit(f"spark_fleet: no files under {args.input}")
        slices = args.partitions or max(1, min(len(paths), 4 * sc.defaultParallelism))
        lines = sc.parallelize(paths, slices).mapPartitions(lambda part: analyse_local(part, extra))
    else:
        streams = sc.binaryFiles(args.input, args.partitions or 4 * sc.defaultParallelism)
        lines = streams.mapPartitions(lambda part: analyse_streams(part, extra))

    tagged = lines.mapPartitions(lambda part: rows(part, executor_id())).cache()
    captures = spark.createDataFrame(tagged.filter(lambda t: t[0] == "capture").map(lambda t: t[1]), CAPTURES_SCHEMA)
    findings = spark.createDataFrame(tagged.filter(lambda t: t[0] == "finding").map(lambda t: t[1]), FINDINGS_SCHEMA)
    out = args.output.rstrip("/")
    captures.write.mode("overwrite").parquet(out + "/captures")
    findings.write.mode("overwrite").parquet(out + "/findings")

    written = spark.read.parquet(out + "/captures")
    written.createOrReplaceTempView("captures")
    total = written.count()
    errors = written.filter("error IS NOT NULL").count()
    executors = written.select("executor").distinct().count()
    print(f"spark_fleet: {total} captures ({errors} unreadable), {spark.read.parquet(out + '/findings').count()} findings, "
          f"{executors} executors; Parquet in {out}/captures and {out}/findings")
    if args.summary_rules:
        print("Share of captures with each rule, by phone model, controller and accessory firmware:")
        print_summary([r.asDict() for r in spark.sql(SUMMARY_SQL).collect()], args.summary_rules)
    spark.stop()


if __name__ == "__main__":
    main()
