"""The central session the replay tests record and replay: one Bumble host, one peripheral.

``run_session`` drives a Bumble ``Device`` (host side only; the controller is whatever the
transport reaches) through the steps below and returns what it read, so a caller can check
the answers it got.  Each step is bounded by ``STEP_TIMEOUT``.

session: power on (HCI_Reset and Bumble's init sequence), active legacy scan until the
         peripheral is seen, connect, exchange MTU, discover services and characteristics,
         read the golden characteristic and Battery Level, subscribe to Battery Level and wait
         for one notification, disconnect.
setup:   power on, legacy advertising on/off, legacy scanning on/off (commands only: the
         controller-level recording replayed against RootCanal).
"""

from __future__ import annotations

import asyncio
import json

from bumble import core, hci
from bumble.core import UUID
from bumble.device import Device
from bumble.att import ATT_Error

import replay_common as rc

SCENARIOS = ("session", "setup")

# How long the session waits for a read's answer. An app on a phone waits as its stack does: Android
# and iOS give a GATT request the ATT transaction's 30 s (Core v5.4 Vol 3 Part F 3.3.3) and then fail
# it (host_against.py --read-timeout); Bumble's client gives up at 30 s too (GATT_REQUEST_TIMEOUT).
READ_TIMEOUT = rc.STEP_TIMEOUT
# After a read that got no answer the app keeps the link this long, then closes it and fails.
LINGER_AFTER_TIMEOUT = 3.0


async def _scan_for_peripheral(device: Device, legacy: bool = True) -> None:
    seen = asyncio.get_running_loop().create_future()
    target = hci.Address(rc.PERIPHERAL_ADDRESS)

    def on_advertisement(advertisement) -> None:
        if advertisement.address == target and not seen.done():
            seen.set_result(None)

    device.on("advertisement", on_advertisement)
    await device.start_scanning(legacy=legacy, active=True)
    await asyncio.wait_for(seen, rc.STEP_TIMEOUT)
    await device.stop_scanning(legacy=legacy)
    device.remove_listener("advertisement", on_advertisement)


async def _read(peer, characteristic) -> str:
    try:
        return (await asyncio.wait_for(peer.read_value(characteristic), READ_TIMEOUT)).hex()
    except ATT_Error as error:
        return f"error:{error.error_code:#04x}"


async def session(device: Device, legacy: bool = True) -> dict:
    result: dict = {}
    await _scan_for_peripheral(device, legacy)
    connection = await asyncio.wait_for(device.connect(rc.PERIPHERAL_ADDRESS), rc.STEP_TIMEOUT)
    result["handle"] = connection.handle
    peer = connection.gatt_client
    result["mtu"] = await asyncio.wait_for(peer.request_mtu(128), rc.STEP_TIMEOUT)
    services = await asyncio.wait_for(peer.discover_services(), rc.STEP_TIMEOUT)
    result["services"] = [str(s.uuid) for s in services]
    for service in services:
        await asyncio.wait_for(peer.discover_characteristics([], service), rc.STEP_TIMEOUT)
    golden = peer.get_characteristics_by_uuid(UUID(rc.GOLDEN_UUID))
    if golden:
        try:
            result["golden"] = await _read(peer, golden[0])
        except (asyncio.TimeoutError, TimeoutError, core.TimeoutError):
            # No answer: the bearer is dead (no further ATT PDU may be sent on it); the app gives up
            # and closes the link, as a phone's app does on its GATT timeout.
            await asyncio.sleep(LINGER_AFTER_TIMEOUT)
            await asyncio.wait_for(connection.disconnect(), rc.STEP_TIMEOUT)
            raise
    battery = peer.get_characteristics_by_uuid(UUID.from_16_bits(rc.BATTERY_LEVEL))
    if battery:
        result["battery"] = await _read(peer, battery[0])
        await asyncio.wait_for(peer.discover_descriptors(battery[0]), rc.STEP_TIMEOUT)
        notified = asyncio.get_running_loop().create_future()
        await asyncio.wait_for(
            battery[0].subscribe(lambda value: notified.done() or notified.set_result(value)),
            rc.STEP_TIMEOUT,
        )
        result["notified"] = bytes(await asyncio.wait_for(notified, rc.STEP_TIMEOUT)).hex()
    await asyncio.wait_for(connection.disconnect(), rc.STEP_TIMEOUT)
    return result


async def setup(device: Device) -> dict:
    await device.start_advertising(
        advertising_data=rc.advertising_data(),
        advertising_interval_min=rc.ADVERTISING_INTERVAL_MS,
        advertising_interval_max=rc.ADVERTISING_INTERVAL_MS,
    )
    await device.stop_advertising()
    await device.start_scanning(legacy=True, active=False)
    await device.stop_scanning(legacy=True)
    return {"setup": "done"}


async def run_session(transport, scenario: str, snoop_file=None, legacy: bool = True) -> dict:
    """Powers a central on `transport` and runs `scenario`; returns the answers it got.

    `legacy=False` scans with the extended commands, for controllers that, like RootCanal, refuse
    an extended LE Create Connection after legacy scanning (Command Disallowed)."""
    from bumble.snoop import BtSnooper

    device = Device.with_hci("bleanalyze-central", hci.Address(rc.CENTRAL_ADDRESS), transport.source, transport.sink)
    if snoop_file is not None:
        device.host.snooper = BtSnooper(snoop_file)
    await asyncio.wait_for(device.power_on(), rc.STEP_TIMEOUT)
    result = await (session(device, legacy) if scenario == "session" else setup(device))
    device.host.snooper = None
    return result


def print_result(result: dict) -> None:
    print("RESULT " + json.dumps(result, sort_keys=True), flush=True)
