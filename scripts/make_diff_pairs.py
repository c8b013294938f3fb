#!/usr/bin/env python3
"""Before/after capture pairs for `bleanalyze diff` (captures/diff/, see captures/README.md).

The same session recorded by two Bumble devices (the Testbed of make_captures.py: central
C0:11:22:33:44:01, peripheral "bleanalyze-hr" C0:11:22:33:44:02) once as the reference and
once per change:

  before.btsnoop            scan, connect, MTU 247, discover everything, read Battery Level 10
                            times, subscribe to Heart Rate Measurement (20 notifications), 30 Write
                            Commands of 20 bytes to "Write Without Response", disconnect 0x13
  after_small_mtu.btsnoop   the same with MTU 64
  after_write_request.btsnoop  the 30 writes as Write Requests (each waits for its response)
  after_removed_char.btsnoop   the peripheral's firmware without Body Sensor Location (0x2A38)
  after_short_timeout.btsnoop  the central connects with a 100 ms supervision timeout (not 720 ms)

Usage: .venv/bin/python scripts/make_diff_pairs.py --out captures/diff/
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path
from unittest import mock

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bumble.device import ConnectionParametersPreferences, Peer  # noqa: E402
from bumble.hci import Phy  # noqa: E402

from captures import gatt_db  # noqa: E402
from captures.scenarios import (  # noqa: E402
    HEART_RATE_VALUES,
    SubscriptionStreamer,
    discover_everything,
    expect,
    one_characteristic,
    subscribe_and_collect,
)
from captures.testbed import STEP_TIMEOUT, Link, Testbed  # noqa: E402

WRITES = [bytes((n + i) & 0xFF for i in range(20)) for n in range(30)]
READS = 10


def services_without(uuid: int):
    """build_services() without the characteristic `uuid` (a firmware that dropped it)."""
    original = gatt_db.build_services

    def build():
        services = original()
        for s in services:
            s.characteristics = [c for c in s.characteristics if c.uuid != gatt_db.make_uuid(uuid)]
        return services

    return build


async def session(out_dir: Path, name: str, *, mtu: int = 247, with_response: bool = False,
                  supervision_timeout: int | None = None) -> None:
    async with Testbed(out_dir, name) as tb:
        heart_rate = SubscriptionStreamer(tb.peripheral, gatt_db.HEART_RATE_MEASUREMENT, HEART_RATE_VALUES, indicate=False)
        target = gatt_db.find_characteristic(tb.peripheral.gatt_server, gatt_db.WRITE_NO_RSP_UUID)
        received: list[bytes] = []
        all_received = asyncio.get_running_loop().create_future()

        def on_write(_connection, value: bytes) -> None:
            received.append(bytes(value))
            if len(received) == len(WRITES) and not all_received.done():
                all_received.set_result(None)

        target.on("write", on_write)
        await tb.advertise_legacy()
        await tb.scan(reports=2, legacy=True)
        preferences = None
        if supervision_timeout is not None:
            preferences = {Phy.LE_1M: ConnectionParametersPreferences(supervision_timeout=supervision_timeout)}
        peripheral_side = asyncio.get_running_loop().create_future()
        tb.peripheral.once("connection", peripheral_side.set_result)
        central = await asyncio.wait_for(
            tb.central.connect(tb.peripheral.random_address, connection_parameters_preferences=preferences), STEP_TIMEOUT)
        link = Link(central, await asyncio.wait_for(peripheral_side, STEP_TIMEOUT))
        peer = Peer(link.central)
        expect(await peer.request_mtu(mtu) == mtu, f"MTU exchange did not give {mtu}")
        await discover_everything(peer)
        battery = one_characteristic(peer, gatt_db.BATTERY_LEVEL)
        for _ in range(READS):
            expect(await peer.read_value(battery) == gatt_db.BATTERY_LEVEL_VALUE, "battery level")
        hr = one_characteristic(peer, gatt_db.HEART_RATE_MEASUREMENT)
        values = await subscribe_and_collect(peer, hr, len(HEART_RATE_VALUES), notify=True)
        await heart_rate.finished()
        expect(values == HEART_RATE_VALUES, "notification values")
        writable = one_characteristic(peer, gatt_db.WRITE_NO_RSP_UUID)
        for value in WRITES:
            await peer.write_value(writable, value, with_response=with_response)
        await asyncio.wait_for(all_received, STEP_TIMEOUT)
        expect(received == WRITES, "written values")
        await tb.disconnect(link)


PAIRS = {
    "before.btsnoop": {},
    "after_small_mtu.btsnoop": {"mtu": 64},
    "after_write_request.btsnoop": {"with_response": True},
    "after_removed_char.btsnoop": {"drop": gatt_db.BODY_SENSOR_LOCATION},
    "after_short_timeout.btsnoop": {"supervision_timeout": 100},
}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--only", action="append", choices=sorted(PAIRS))
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    for name, options in PAIRS.items():
        if args.only and name not in args.only:
            continue
        options = dict(options)
        drop = options.pop("drop", None)
        patch = mock.patch.object(gatt_db, "build_services", services_without(drop)) if drop else mock.patch.dict({})
        with patch:
            asyncio.run(session(args.out, name, **options))
        print(f"{name}: {(args.out / name).stat().st_size} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
