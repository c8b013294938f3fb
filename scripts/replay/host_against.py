"""Runs a Bumble host against `bleanalyze emulate` (or any controller) and prints its answers.

    .venv/bin/python scripts/replay/host_against.py --transport tcp-client:127.0.0.1:PORT [--scenario session]
    .venv/bin/python scripts/replay/host_against.py --transport serial:/dev/pts/N [--scenario session]

The host performs the same steps as ``record_central.py`` (``central_session``), so against an
emulator playing that recording it must get the recorded answers.  Prints ``RESULT {json}``
(the handle, MTU, services, values read, the notification) and exits 0, or prints the failure
and exits 1.
"""

from __future__ import annotations

import argparse
import asyncio
import sys

from bumble.transport import open_transport

import central_session
import replay_common as rc


async def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--transport", required=True, help="Bumble transport spec")
    parser.add_argument("--scenario", choices=central_session.SCENARIOS, default="session")
    parser.add_argument("--extended-scan", action="store_true",
                        help="scan with the extended commands (RootCanal refuses an extended connect after legacy scanning)")
    parser.add_argument("--read-timeout", type=float, default=central_session.READ_TIMEOUT,
                        help="seconds a read may wait for its answer (a phone's stack: 30)")
    args = parser.parse_args()
    rc.quiet_logging()
    central_session.READ_TIMEOUT = args.read_timeout
    try:
        async with await open_transport(args.transport) as transport:
            result = await central_session.run_session(transport, args.scenario, legacy=not args.extended_scan)
    except Exception as error:  # noqa: BLE001 - any failure is the host's answer
        print(f"FAILED {type(error).__name__}: {error}", flush=True)
        return 1
    central_session.print_result(result)
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
