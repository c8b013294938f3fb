"""Records a central session against a controller, as btsnoop (H4, datalink 1002).

    .venv/bin/python scripts/replay/record_central.py --transport tcp-client:127.0.0.1:PORT \
        --out golden.btsnoop [--scenario session|setup]

A Bumble host drives the controller through the steps of ``central_session`` and Bumble's
snooper writes every HCI packet it exchanged; this is the "record once" half of the CI recipe
(docs/REPLAY.md).  Prints ``RESULT {json}`` with what the host read; exits 1 if a step failed.
"""

from __future__ import annotations

import argparse
import asyncio

from bumble.transport import open_transport

import central_session
import replay_common as rc


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--transport", required=True, help="Bumble transport spec, e.g. tcp-client:127.0.0.1:6402")
    parser.add_argument("--out", required=True, help="btsnoop file to write")
    parser.add_argument("--scenario", choices=central_session.SCENARIOS, default="session")
    args = parser.parse_args()
    rc.quiet_logging()
    async with await open_transport(args.transport) as transport:
        with open(args.out, "wb") as snoop:
            result = await central_session.run_session(transport, args.scenario, snoop)
    central_session.print_result(result)


if __name__ == "__main__":
    asyncio.run(main())
