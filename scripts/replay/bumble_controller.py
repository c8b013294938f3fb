"""A Bumble virtual controller for `bleanalyze replay` tests, with a peripheral on its link.

    .venv/bin/python scripts/replay/bumble_controller.py [--transport tcp-server:127.0.0.1:0 | pty:PATH]
                                                       [--variant default|encrypted-char|other-value|missing-service]

The controller under test is a ``bumble.controller.Controller`` exposed over Bumble's own H4
transports (``tcp-server``: one client at a time; ``pty``: a pseudo-terminal whose slave is
linked at PATH).  A second controller on the same ``LocalLink`` carries a peripheral ``Device``
that advertises (legacy ADV_IND, 20 ms) and serves a small GATT database (``replay_common``);
``--variant`` changes that peripheral the way a firmware update might.

Prints ``READY <port>`` (tcp-server; port 0 picks a free one) or ``READY <path>`` (pty) once
both are up, then runs until killed (SIGTERM/SIGINT end it cleanly), or until its parent process
is gone (a test runner that crashed leaves no controller behind).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import socket

from bumble import hci
from bumble.controller import Controller
from bumble.device import Device
from bumble.link import LocalLink
from bumble.transport import open_transport
from bumble.transport.tcp_server import open_tcp_server_transport_with_socket

import replay_common as rc


async def open_controller_transport(spec: str):
    """Returns (transport, ready-text). A tcp-server port of 0 is bound here to learn the port."""
    if spec.startswith("tcp-server:"):
        host, port = spec[len("tcp-server:") :].rsplit(":", 1)
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, int(port)))
        transport = await open_tcp_server_transport_with_socket(sock)
        return transport, str(sock.getsockname()[1])
    if spec.startswith("pty:"):
        return await open_transport(spec), spec[len("pty:") :]
    raise SystemExit(f"unsupported transport {spec!r}: use tcp-server:HOST:PORT or pty:PATH")


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--transport", default="tcp-server:127.0.0.1:0")
    parser.add_argument("--variant", choices=rc.VARIANTS, default="default")
    parser.add_argument("--no-peripheral", action="store_true", help="the controller alone on its link")
    parser.add_argument(
        "--peripheral-address",
        default=rc.PERIPHERAL_ADDRESS,
        help="the peripheral's random static address (another device than the recorded one)",
    )
    args = parser.parse_args()
    rc.quiet_logging()

    link = LocalLink()
    transport, ready = await open_controller_transport(args.transport)
    controller = Controller(
        "replay-target",
        host_source=transport.source,
        host_sink=transport.sink,
        link=link,
        public_address=hci.Address(rc.CONTROLLER_PUBLIC_ADDRESS, hci.Address.PUBLIC_DEVICE_ADDRESS),
    )
    rc.legacy_only(controller)

    if not args.no_peripheral:
        peripheral_controller = Controller(
            "peripheral",
            link=link,
            public_address=hci.Address(rc.PERIPHERAL_PUBLIC_ADDRESS, hci.Address.PUBLIC_DEVICE_ADDRESS),
        )
        rc.legacy_only(peripheral_controller)
        peripheral = Device.with_hci(
            rc.PERIPHERAL_NAME, hci.Address(args.peripheral_address), peripheral_controller, peripheral_controller
        )
        peripheral.add_services(rc.build_services(args.variant))
        rc.notify_on_subscribe(peripheral)
        await peripheral.power_on()
        # Advertise again after each disconnection, so one instance serves several sessions.
        await peripheral.start_advertising(
            advertising_data=rc.advertising_data(),
            auto_restart=True,
            advertising_interval_min=rc.ADVERTISING_INTERVAL_MS,
            advertising_interval_max=rc.ADVERTISING_INTERVAL_MS,
        )

    print(f"READY {ready}", flush=True)
    stop = asyncio.get_running_loop().create_future()
    for sig in (signal.SIGTERM, signal.SIGINT):
        asyncio.get_running_loop().add_signal_handler(sig, lambda: stop.done() or stop.set_result(None))
    watchdog = asyncio.get_running_loop().create_task(exit_with_parent(stop))
    await stop
    watchdog.cancel()
    await transport.close()


async def exit_with_parent(stop: asyncio.Future) -> None:
    """Ends the controller when the process that started it is gone (re-parented)."""
    parent = os.getppid()
    while os.getppid() == parent:
        await asyncio.sleep(1.0)
    if not stop.done():
        stop.set_result(None)


if __name__ == "__main__":
    asyncio.run(main())
