"""The peripheral of the `live --proxy` tests and CI example: a Bumble GATT server on any controller.

    .venv/bin/python scripts/live/proxy_peripheral.py --transport tcp-client:127.0.0.1:6402 [--broken FAULT]

It advertises as ``replay_common.PERIPHERAL_NAME`` at ``PERIPHERAL_ADDRESS`` with the replay
tests' database (a readable custom characteristic, Battery Level with notify) and sends one
Battery Level notification when a client subscribes. ``--broken notify-early`` also notifies
Battery Level as soon as a central connects, before any subscription: the fault
`gatt.unsubscribed-notification` names. ``--broken unanswered`` never answers a read of the
readable custom characteristic (a server that lost the request: `att.timeout` once 30 s pass,
Core v5.4 Vol 3 Part F 3.3.3). (A link loss cannot be staged here: a device whose
controller connection goes away is reported by RootCanal 1.10 with Remote Device Terminated
Connection due to Power Off, 0x15, a close the peer asked for, and neither RootCanal nor Bumble
times a link out.) Prints ``READY`` once advertising, then
runs until killed.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "replay"))

from bumble import gatt, hci  # noqa: E402
from bumble.device import Device  # noqa: E402
from bumble.transport import open_transport  # noqa: E402

import replay_common as rc  # noqa: E402


async def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--transport", required=True, help="Bumble transport spec, e.g. tcp-client:127.0.0.1:6402")
    parser.add_argument("--broken", choices=["notify-early", "unanswered"], help="the fault to commit")
    args = parser.parse_args()
    rc.quiet_logging()
    async with await open_transport(args.transport) as transport:
        device = Device.with_hci(rc.PERIPHERAL_NAME, hci.Address(rc.PERIPHERAL_ADDRESS), transport.source, transport.sink)
        services = rc.build_services("default")
        if args.broken == "unanswered":
            async def never_answered(_connection) -> bytes:
                return await asyncio.get_running_loop().create_future()
            for service in services:
                for characteristic in service.characteristics:
                    if str(characteristic.uuid).upper() == rc.GOLDEN_UUID:
                        characteristic.value = gatt.CharacteristicValue(read=never_answered)
        for service in services:
            device.add_service(service)
        rc.notify_on_subscribe(device)
        if args.broken == "notify-early":
            def on_connection(connection) -> None:
                async def early() -> None:
                    await asyncio.sleep(0.2)
                    characteristic = device.gatt_server.get_characteristic_attributes(
                        gatt.GATT_BATTERY_SERVICE, gatt.GATT_BATTERY_LEVEL_CHARACTERISTIC)
                    if characteristic:
                        await device.notify_subscriber(connection, characteristic[1], rc.NOTIFIED_BATTERY_LEVEL, force=True)
                asyncio.get_running_loop().create_task(early())
            device.on("connection", on_connection)
        await device.power_on()
        await device.start_advertising(
            advertising_data=rc.advertising_data(),
            advertising_interval_min=rc.ADVERTISING_INTERVAL_MS,
            advertising_interval_max=rc.ADVERTISING_INTERVAL_MS,
            auto_restart=True,
        )
        print("READY", flush=True)
        await asyncio.get_running_loop().create_future()
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
