#!/usr/bin/env python3
"""Fails a CI run (CI=true) in which a test of a suite CI must run was skipped.

Usage: check_ci_skips.py RESULTS.xml MUST_RUN.txt. RESULTS.xml is swift test's xunit output for Swift
Testing (``--xunit-output F`` writes ``F-swift-testing.xml``); MUST_RUN.txt lists ``Module.Suite`` names.
Outside CI it prints nothing and exits 0: a developer without ../shared or a tool sees the skips in the
test runner's own output. Prints nothing on success, so the runner's summary stays the last line.
"""
import os
import sys
import xml.etree.ElementTree as ET


def main() -> int:
    results, must_run = sys.argv[1], sys.argv[2]
    if os.environ.get("CI", "").lower() not in ("1", "true", "yes"):
        return 0
    if not os.path.exists(results):
        print(f"check_ci_skips: {results} is missing (swift test --xunit-output)", file=sys.stderr)
        return 1
    suites = {line.strip() for line in open(must_run) if line.strip() and not line.startswith("#")}
    skipped = []
    seen = set()
    for case in ET.parse(results).getroot().iter("testcase"):
        suite = case.get("classname", "")
        seen.add(suite)
        if case.find("skipped") is None:
            continue
        if suite in suites:
            reason = (case.find("skipped").text or "").strip()
            skipped.append(f"{suite}.{case.get('name')}: {reason}")
    # A listed suite that ran no test at all (renamed, removed from the build): the list is stale.
    skipped += [f"{suite}: no test of it ran (renamed? update {must_run})" for suite in sorted(suites - seen)]
    if skipped:
        print(f"CI must run these tests, but they were skipped ({len(skipped)}; list: {must_run}):", file=sys.stderr)
        for s in skipped:
            print(f"  {s}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
