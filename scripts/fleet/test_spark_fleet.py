#!/usr/bin/env python3
"""The fleet job tested as it runs: a Spark standalone master and two workers on 127.0.0.1 (the
scripts inside the PySpark package), spark_fleet.py submitted over the project's captures, the shared
real corpus and a damaged file; then the Parquet is read back with pyarrow (not Spark) and every row is
compared with what `bleanalyze FILE --json` says of that file and with hashlib's SHA-256. A second,
small run uses --master local[2] and a file:// URI (the binaryFiles path an object store takes).

    test_spark_fleet.py --binary PATH [--real DIR]

Prints `fleet: N passed, M failed` last; exits 1 on any failure. Starts and stops its own processes.
"""
import argparse
import glob
import hashlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
JOB = os.path.join(REPO, "scripts", "fleet", "spark_fleet.py")


class Checks:
    def __init__(self):
        self.passed, self.failed = 0, 0

    def expect(self, ok, what):
        if ok:
            self.passed += 1
        else:
            self.failed += 1
            print(f"FAIL: {what}")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def spark_home():
    import pyspark
    return os.path.dirname(pyspark.__file__)


class Cluster:
    """A master and two one-core, 1 GiB workers (executors of 512 MiB fit; Spark's floor is 450 MiB)."""

    def __init__(self, workdir):
        os.makedirs(workdir)
        self.processes = []
        self.port, self.ui = free_port(), free_port()
        env = dict(os.environ, SPARK_HOME=spark_home(), SPARK_LOCAL_IP="127.0.0.1",
                   SPARK_LOG_DIR=os.path.join(workdir, "logs"), PYSPARK_PYTHON=sys.executable)
        self.env = env
        cls = os.path.join(spark_home(), "bin", "spark-class")
        self.start([cls, "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1", "--port", str(self.port),
                    "--webui-port", str(self.ui)], os.path.join(workdir, "master.log"))
        self.url = f"spark://127.0.0.1:{self.port}"
        for i in range(2):
            work = os.path.join(workdir, f"worker{i}")
            os.makedirs(work)
            self.start([cls, "org.apache.spark.deploy.worker.Worker", "--host", "127.0.0.1", "--cores", "1", "--memory", "1g",
                        "--webui-port", str(free_port()), "--work-dir", work, self.url], os.path.join(workdir, f"worker{i}.log"))

    def start(self, command, log):
        out = open(log, "wb")
        self.processes.append(subprocess.Popen(command, env=self.env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True))

    def wait_for_workers(self, count, timeout=120):
        deadline = time.time() + timeout
        while time.time() < deadline:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{self.ui}/json/", timeout=2) as r:
                    state = json.load(r)
                if sum(1 for w in state.get("workers", []) if w.get("state") == "ALIVE") >= count:
                    return True
            except OSError:
                pass
            time.sleep(1)
        return False

    def stop(self):
        # Each was started in its own session: its group is the JVM and whatever spark-class started.
        for p in self.processes:
            try:
                os.killpg(p.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
        for p in self.processes:
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)


def read_parquet(directory):
    import pyarrow.parquet as pq
    files = sorted(glob.glob(os.path.join(directory, "*.parquet")))
    rows = []
    for f in files:
        rows += pq.read_table(f).to_pylist()
    return rows


def report(binary, path):
    r = subprocess.run([binary, path, "--json"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    return json.loads(r.stdout) if r.returncode == 0 else None


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def make_input(root, real):
    """INPUT: links to every file of captures/ and of the real corpus, a damaged capture, a text file."""
    sources = [("own", os.path.join(REPO, "captures"))] + ([("real", real)] if real else [])
    for name, directory in sources:
        os.makedirs(os.path.join(root, name))
        for f in sorted(os.listdir(directory)):
            os.symlink(os.path.join(directory, f), os.path.join(root, name, f))
    with open(os.path.join(root, "damaged.btsnoop"), "wb") as f:
        f.write(b"this was a capture before a bad copy\n" * 10)
    with open(os.path.join(root, "notes.txt"), "w") as f:
        f.write("phone 3, morning run\n")


def check_rows(checks, binary, out, input_root, label):
    captures = read_parquet(os.path.join(out, "captures"))
    findings = read_parquet(os.path.join(out, "findings"))
    by_file = {r["file"]: r for r in captures}
    checks.expect(len(by_file) == len(captures), f"{label}: one row per file")
    damaged = [r for r in captures if r["file"].endswith("damaged.btsnoop")]
    checks.expect(len(damaged) == 1 and damaged[0]["error"] and damaged[0]["frames"] is None,
                  f"{label}: the damaged file is a row with error: {damaged}")
    checks.expect(not any(r["file"].endswith("notes.txt") for r in captures), f"{label}: notes.txt skipped")
    compared = 0
    for row in captures:
        if row["file"].endswith("damaged.btsnoop"):
            continue
        path = row["file"]
        if path.startswith("file:"):
            path = path[len("file:"):].lstrip("/")
            path = "/" + path
        want = report(binary, path)
        if want is None:
            checks.expect(row["error"] is not None, f"{label}: {path}: unreadable for the report, so an error row")
            continue
        compared += 1
        checks.expect(row["error"] is None, f"{label}: {path}: error {row['error']}")
        checks.expect(row["sha256"] == sha256(path), f"{label}: {path}: sha256")
        checks.expect(row["frames"] == want["capture"]["frames"], f"{label}: {path}: frames {row['frames']} vs {want['capture']['frames']}")
        checks.expect(row["format"] == want["capture"]["format"], f"{label}: {path}: format")
        expected = sorted((f["rule"], f["severity"], f.get("connection"), (f["frames"] or [None])[0], f["message"]) for f in want["findings"])
        got = sorted((f["rule"], f["severity"], f["connection"], f["frame"], f["message"]) for f in findings if f["file"] == row["file"])
        checks.expect(got == expected, f"{label}: {path}: findings differ ({len(got)} vs {len(expected)})")
        counts = {}
        for f in want["findings"]:
            counts[f["rule"]] = counts.get(f["rule"], 0) + 1
        checks.expect(dict(row["ruleCounts"] or []) == counts, f"{label}: {path}: ruleCounts")
    return captures, compared


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--binary", required=True)
    parser.add_argument("--real", default=os.path.join(os.path.dirname(REPO), "shared", "captures", "real"))
    args = parser.parse_args()
    binary = os.path.abspath(args.binary)
    real = args.real if os.path.isdir(args.real) else None
    if real is None:
        print("notice: shared real corpus absent; the fleet test uses captures/ only")
    checks = Checks()
    work = tempfile.mkdtemp(prefix="bleanalyze-fleet-test-")
    started = time.time()
    cluster = None
    local_job = None
    try:
        input_root = os.path.join(work, "input")
        make_input(input_root, real)
        # The captures among them, by the names the project gives them (the other CLI tests' rule):
        # everything else there (README.md, *.expected.json, PROVENANCE.md, SHA256SUMS) must be skipped.
        expected_files = {os.path.join(input_root, "own", f) for f in os.listdir(os.path.join(input_root, "own"))
                          if f.endswith((".btsnoop", ".pcap", ".pcapng", ".gz"))}
        if real:
            expected_files |= {os.path.join(input_root, "real", f) for f in os.listdir(os.path.join(input_root, "real"))
                               if not f.endswith(".md") and f != "SHA256SUMS"}
        # The local[2] run needs no cluster: it starts now and runs while the cluster's JVMs start and
        # the standalone job runs (the two used to run one after the other: ~80 s more on two cores).
        small = os.path.join(work, "small")
        os.makedirs(small)
        for name in ["healthy.btsnoop", "pairing_failed.btsnoop", "healthy.btsnoop.gz"]:
            shutil.copy(os.path.join(REPO, "captures", name), small)
        with open(os.path.join(small, "damaged.btsnoop"), "wb") as f:
            f.write(b"\x00" * 7)
        out2 = os.path.join(work, "out-local")
        local_log = open(os.path.join(work, "local.log"), "w+b")
        local_started = time.time()
        local_job = subprocess.Popen([sys.executable, JOB, "file://" + small, out2, "--master", "local[2]", "--binary", binary],
                                     stdout=local_log, stderr=subprocess.STDOUT)
        cluster = Cluster(os.path.join(work, "cluster"))
        up = cluster.wait_for_workers(2)
        checks.expect(up, "master and two workers up")
        cluster_up = time.time() - started
        out = os.path.join(work, "out")
        job_started = time.time()
        job = subprocess.run([sys.executable, JOB, input_root, out, "--master", cluster.url, "--binary", binary],
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=dict(os.environ, PYSPARK_PYTHON=sys.executable))
        job_seconds = time.time() - job_started
        text = job.stdout.decode(errors="replace")
        checks.expect(job.returncode == 0, f"standalone job exit {job.returncode}: {text[-2000:]}")
        checks.expect("Share of captures with each rule" in text, "summary printed")
        if job.returncode == 0:
            captures, compared = check_rows(checks, binary, out, input_root, "standalone")
            readable = [r for r in captures if r["error"] is None]
            checks.expect(compared == len(readable), f"standalone: compared {compared} of {len(readable)} readable rows")
            got_files = {r["file"] for r in captures if not r["file"].endswith("damaged.btsnoop")}
            checks.expect(got_files == expected_files, f"standalone: rows for exactly the captures: "
                          f"missing {sorted(expected_files - got_files)[:5]}, extra {sorted(got_files - expected_files)[:5]}")
            executors = {r["executor"] for r in captures}
            checks.expect(len(executors) == 2, f"both workers ran tasks: {sorted(executors)}")
        cluster.stop()
        cluster = None

        # local[2] over a file:// URI: three files through binaryFiles (copied to the executor's disk).
        local_status = local_job.wait()
        local_seconds = time.time() - local_started
        local_log.seek(0)
        local_text = local_log.read().decode(errors="replace")
        checks.expect(local_status == 0, f"local[2] job exit {local_status}: {local_text[-2000:]}")
        if local_status == 0:
            captures, compared = check_rows(checks, binary, out2, small, "local[2] file://")
            checks.expect(compared == 3 and len(captures) == 4, f"local[2]: {compared} compared, {len(captures)} rows")
        print(f"fleet: cluster up in {cluster_up:.1f} s, standalone job {job_seconds:.1f} s, local[2] job {local_seconds:.1f} s, "
              f"total {time.time() - started:.1f} s")
    finally:
        if local_job and local_job.poll() is None:
            local_job.kill()
            local_job.wait()
        if cluster:
            cluster.stop()
        shutil.rmtree(work, ignore_errors=True)
    print(f"fleet: {checks.passed} passed, {checks.failed} failed")
    sys.exit(1 if checks.failed else 0)


if __name__ == "__main__":
    main()
