#!/usr/bin/env python3
"""Generate bleanalyze's test captures with Bumble's virtual controller.

Usage (from the repository root)::

    python3 -m venv .venv && .venv/bin/pip install bumble==0.0.236
    .venv/bin/python scripts/make_captures.py --out captures/

Each registered scenario (see ``scripts/captures/scenarios.py`` and
``scripts/captures/faults.py``) runs Bumble devices over a ``LocalLink`` and
writes btsnoop files.  For every file the script writes
``<name>.expected.json``: the findings docs/RULES.md defines for it, computed
by the file's expectation function (``scripts/captures/expectations.py``) and
cross-checked against the reference rule engine (``scripts/captures/rules.py``).
It then writes ``gatt_server.json`` / ``gatt_server_faults.json``, the
pcap/pcapng/gzip variants of ``healthy.btsnoop`` (when ``editcap`` is
installed), cross-checks every file with tshark (when installed) and renders
``README.md``.  It exits with status 1 if anything fails.
"""

from __future__ import annotations

import argparse
import asyncio
import gzip
import json
import logging
import sys
import traceback
from pathlib import Path

from captures import faults, gatt_db, readme, rules, tools
from captures.btsnoop import decode_frames, read_records, summarize
from captures.expectations import EXPECTATIONS, Capture
from captures.findings import Expected, diff
from captures.scenarios import SCENARIOS, Scenario
from captures.testbed import Testbed

assert faults  # imported for its scenario registrations
H4_WITH_PHDR = 201


class CheckFailed(Exception):
    """A produced file does not look as expected."""


def parse_args(argv: list[str]) -> argparse.Namespace:
    """Command-line options (see ``--help``)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--out", type=Path, default=Path("captures"), help="output directory (default: captures/)"
    )
    parser.add_argument(
        "--only",
        action="append",
        choices=sorted(SCENARIOS),
        metavar="NAME",
        help="run only this scenario (repeatable); the other captures already in --out are "
        "kept as they are and analysed again; README.md, the GATT JSON files and the variants "
        "are written when every capture is present",
    )
    parser.add_argument(
        "--analyse",
        action="store_true",
        help="run no scenario: only re-analyse the captures already in --out (expected "
        "findings, cross-checks, README)",
    )
    parser.add_argument("--list", action="store_true", help="list scenarios and exit")
    parser.add_argument(
        "--print-gatt", action="store_true", help="print the peripheral's GATT definition and exit"
    )
    parser.add_argument(
        "--compare-with",
        type=Path,
        metavar="DIR",
        help="after the run, check that every capture also present in DIR has the same "
        "packets (bytes and direction flags; timestamps may differ)",
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="Bumble debug logging")
    return parser.parse_args(argv)


def run_scenario(scenario: Scenario, out_dir: Path) -> bool:
    """Run one scenario in a fresh event loop; print and swallow its failure."""

    async def bounded() -> None:
        await asyncio.wait_for(scenario.run(out_dir), scenario.timeout)

    try:
        asyncio.run(bounded())
    except Exception:  # report every kind of failure, keep going with the others
        print(f"FAIL {scenario.name}", file=sys.stderr)
        traceback.print_exc()
        return False
    print(f"ok   {scenario.name}: {', '.join(scenario.outputs)}")
    return True


async def export_gatt(out_dir: Path, fault_service: bool = False) -> dict:
    """Build the peripheral exactly as the scenarios do and export its GATT table."""
    async with Testbed(out_dir, central_capture=None, fault_service=fault_service) as testbed:
        description = (
            "The standard database plus the bleanalyze Faults service, as used by the "
            "scenarios that need a misconfigured server (see README.md)"
            if fault_service
            else None
        )
        return gatt_db.export_database(testbed.peripheral.gatt_server, description)


def write_expected(out_dir: Path, name: str) -> Expected:
    """Compute, cross-check and write ``<name>.expected.json`` for one capture."""
    frames = decode_frames(out_dir / name)
    expected = EXPECTATIONS[name](Capture(name, frames))
    problems = diff(expected.findings, rules.evaluate(frames), causes=expected.causes)
    if problems:
        raise CheckFailed(
            f"{name}: expectation and reference engine disagree:\n  " + "\n  ".join(problems)
        )
    expected.write(out_dir)
    return expected


def compare_packets(out_dir: Path, reference_dir: Path, names: list[str]) -> list[str]:
    """Names of captures whose packets (flags + bytes) differ from ``reference_dir``'s copy."""
    differing = []
    for name in names:
        reference = reference_dir / name
        if not reference.exists():
            continue
        ours = [(r.flags, r.data) for r in read_records(out_dir / name)]
        theirs = [(r.flags, r.data) for r in read_records(reference)]
        status = "identical packets" if ours == theirs else "DIFFERENT packets"
        print(f"compare {name}: {status} ({len(ours)} / {len(theirs)} frames)")
        if ours != theirs:
            differing.append(name)
    return differing


def cross_check(path: Path, info: readme.CaptureInfo) -> None:
    """Compare our own counts with tshark's."""
    frames = tools.tshark_frame_count(path)
    if frames != info.summary.frames:
        raise CheckFailed(
            f"{path.name}: tshark sees {frames} frames, we parsed {info.summary.frames}"
        )
    for field, ours in (("btatt.opcode", info.summary.att), ("btsmp.opcode", info.summary.smp)):
        theirs = tools.tshark_opcodes(path, field)
        if theirs != ours:
            raise CheckFailed(
                f"{path.name}: {field} counts differ: tshark {dict(theirs)}, ours {dict(ours)}"
            )


def make_variants(
    out_dir: Path, healthy: readme.CaptureInfo, tshark_checked: bool
) -> list[readme.VariantInfo]:
    """Convert healthy.btsnoop with editcap/gzip and verify each result.

    Each variant must keep the frame count (capinfos, and tshark when present);
    pcap/pcapng must carry link type 201 and the .gz must decompress to the
    original bytes.
    """
    source = out_dir / healthy.name
    results = []
    for variant in tools.HEALTHY_VARIANTS:
        target = tools.make_variant(source, variant, out_dir)
        link = tools.link_type(target)
        if variant.editcap_format is None:
            if gzip.decompress(target.read_bytes()) != source.read_bytes():
                raise CheckFailed(f"{target.name} does not decompress to {source.name}")
        elif link != H4_WITH_PHDR:
            raise CheckFailed(f"{target.name}: link type {link}, expected {H4_WITH_PHDR}")
        info = tools.capinfos(target)
        frames = int(info["Number of packets"])
        counts = {frames, tools.tshark_frame_count(target)} if tshark_checked else {frames}
        if counts != {healthy.summary.frames}:
            raise CheckFailed(f"{target.name}: {counts} packets, expected {healthy.summary.frames}")
        results.append(
            readme.VariantInfo(
                variant,
                target.stat().st_size,
                frames,
                info["File type"],
                info["File encapsulation"],
                link,
            )
        )
    return results


def main(argv: list[str]) -> int:
    args = parse_args(argv)
    if args.list:
        for scenario in SCENARIOS.values():
            print(f"{scenario.name:30} -> {', '.join(scenario.outputs)}")
        return 0
    if args.print_gatt:
        print(gatt_db.spec_as_text())
        return 0
    logging.basicConfig(level=logging.DEBUG if args.verbose else logging.ERROR)

    out_dir: Path = args.out
    out_dir.mkdir(parents=True, exist_ok=True)
    selected = [SCENARIOS[name] for name in args.only] if args.only else list(SCENARIOS.values())
    if args.analyse:
        selected = []
    failed = [s.name for s in selected if not run_scenario(s, out_dir)]
    if failed:
        print(f"{len(failed)} scenario(s) failed: {', '.join(failed)}", file=sys.stderr)
        return 1

    try:
        missing = [n for s in SCENARIOS.values() for n in s.outputs if n not in EXPECTATIONS]
        if missing:
            raise CheckFailed(f"no expectation function for {', '.join(missing)}")
        outputs = [name for scenario in SCENARIOS.values() for name in scenario.outputs]
        present = [name for name in outputs if (out_dir / name).exists()]
        captures = {
            name: readme.CaptureInfo(
                name,
                (out_dir / name).stat().st_size,
                summarize(out_dir / name),
                write_expected(out_dir, name),
            )
            for name in present
        }
        if args.compare_with is not None:
            differing = compare_packets(out_dir, args.compare_with, list(captures))
            if differing:
                raise CheckFailed(
                    f"packets differ from {args.compare_with}: {', '.join(differing)}"
                )
        tshark_checked = tools.available("tshark")
        if tshark_checked:
            for name, info in captures.items():
                cross_check(out_dir / name, info)
        else:
            print("notice: tshark not found, skipping the tshark cross-check")
        if len(present) < len(outputs):
            absent = ", ".join(name for name in outputs if name not in present)
            print(f"missing in {out_dir}: {absent}; not writing README.md, GATT JSON or variants")
            return 0

        variants = None
        if tools.available("editcap", "capinfos", "gzip"):
            variants = make_variants(out_dir, captures["healthy.btsnoop"], tshark_checked)
        else:
            print(
                "notice: editcap/capinfos not found (apt-get install -y tshark), "
                "skipping the pcap/pcapng/gzip variants"
            )

        database = asyncio.run(export_gatt(out_dir))
        (out_dir / "gatt_server.json").write_text(json.dumps(database, indent=2) + "\n")
        fault_database = asyncio.run(export_gatt(out_dir, fault_service=True))
        (out_dir / "gatt_server_faults.json").write_text(
            json.dumps(fault_database, indent=2) + "\n"
        )
        (out_dir / "README.md").write_text(
            readme.render(
                list(SCENARIOS.values()),
                captures,
                variants,
                database,
                fault_database,
                tshark_checked,
            )
        )
    except Exception:  # any check or tool failure must make the run fail
        traceback.print_exc()
        return 1

    for info in captures.values():
        counts = info.expected.counts()
        print(
            f"{info.name:38} {info.size:7} bytes {info.summary.frames:5} frames  "
            f"expected: {counts['error']} error, {counts['warning']} warning, {counts['info']} info"
        )
    for vinfo in variants or ():
        print(f"{vinfo.variant.name:34} {vinfo.size:7} bytes {vinfo.frames:5} frames")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
