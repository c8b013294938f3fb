"""Scenario registry: one async function per capture.

A scenario is registered with :func:`scenario`; its docstring becomes the
paragraph in ``captures/README.md``, so keep it factual.  Every scenario runs
in a fresh event loop with a fresh :class:`~captures.testbed.Testbed`, checks
its own outcome with :func:`expect`, and raises on any deviation (the script
then exits non-zero).

The fault scenarios live in :mod:`captures.faults`; every output file also has
an expectation function in :mod:`captures.expectations`.

To add a scenario (e.g. a fault case), write::

    @scenario("my_case")
    async def my_case(out_dir: Path) -> None:
        \"\"\"What happens and what the capture is for.\"\"\"
        async with Testbed(out_dir, "my_case.btsnoop") as tb:
            ...
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import inspect
import random
from collections.abc import Awaitable, Callable, Iterator, Sequence
from pathlib import Path
from unittest import mock

from bumble import crypto, gatt_client, pairing, smp
from bumble.core import ProtocolError
from bumble.device import Device, Peer

from . import gatt_db
from .testbed import EXTENDED_ADVERTISING_DATA, STEP_TIMEOUT, Testbed

ScenarioFunc = Callable[[Path], Awaitable[None]]


@dataclasses.dataclass(frozen=True)
class Scenario:
    """A registered scenario and the capture files it writes."""

    name: str
    outputs: tuple[str, ...]
    description: str
    run: ScenarioFunc
    timeout: float = 30.0  # seconds of real time the scenario may take


SCENARIOS: dict[str, Scenario] = {}


def scenario(
    name: str, outputs: Sequence[str] = (), timeout: float = 30.0
) -> Callable[[ScenarioFunc], ScenarioFunc]:
    """Register a scenario; ``outputs`` defaults to ``<name>.btsnoop``."""

    def register(func: ScenarioFunc) -> ScenarioFunc:
        if name in SCENARIOS:
            raise ValueError(f"duplicate scenario {name}")
        SCENARIOS[name] = Scenario(
            name=name,
            outputs=tuple(outputs) or (f"{name}.btsnoop",),
            description=inspect.getdoc(func) or "",
            run=func,
            timeout=timeout,
        )
        return func

    return register


class ScenarioError(Exception):
    """A scenario did not behave as expected."""


def expect(condition: bool, message: str) -> None:
    """Fail the running scenario unless ``condition`` holds."""
    if not condition:
        raise ScenarioError(message)


# ---------------------------------------------------------------------- helpers
class SubscriptionStreamer:
    """Peripheral behaviour: when a client subscribes to a characteristic, push values.

    Notifications are fire-and-forget; indications wait for each confirmation.
    """

    def __init__(
        self, device: Device, uuid: int | str, values: Sequence[bytes], indicate: bool
    ) -> None:
        self.device = device
        self.characteristic = gatt_db.find_characteristic(device.gatt_server, uuid)
        self.values = list(values)
        self.indicate = indicate
        self.task: asyncio.Task[None] | None = None
        device.on("characteristic_subscription", self._on_subscription)

    def _on_subscription(self, connection, characteristic, notify: bool, indicate: bool) -> None:
        enabled = indicate if self.indicate else notify
        if characteristic is self.characteristic and enabled and self.task is None:
            self.task = asyncio.create_task(self._send(connection))

    async def _send(self, connection) -> None:
        for value in self.values:
            if self.indicate:
                await self.device.indicate_subscriber(connection, self.characteristic, value)
            else:
                await self.device.notify_subscriber(connection, self.characteristic, value)

    async def finished(self) -> None:
        """Wait until every value was sent (and, for indications, confirmed)."""
        if self.task is None:
            raise ScenarioError("client never subscribed")
        await asyncio.wait_for(self.task, STEP_TIMEOUT)


async def subscribe_and_collect(
    peer: Peer, characteristic: gatt_client.CharacteristicProxy, count: int, notify: bool
) -> list[bytes]:
    """Write the CCCD (``01 00`` or ``02 00``) and wait for ``count`` values."""
    received: list[bytes] = []
    done = asyncio.get_running_loop().create_future()

    def on_value(value: bytes) -> None:
        received.append(bytes(value))
        if len(received) == count and not done.done():
            done.set_result(None)

    await peer.subscribe(characteristic, on_value, prefer_notify=notify)
    await asyncio.wait_for(done, STEP_TIMEOUT)
    return received


def one_characteristic(peer: Peer, uuid: int | str) -> gatt_client.CharacteristicProxy:
    """The single discovered characteristic with this UUID."""
    found = peer.get_characteristics_by_uuid(gatt_db.make_uuid(uuid))
    expect(len(found) == 1, f"expected one characteristic {uuid}, found {len(found)}")
    return found[0]


async def discover_descriptors(peer: Peer, characteristics) -> None:
    """Discover the descriptors of each characteristic (Find Information).

    Bumble 0.0.236 never sets ``descriptors_discovered``, so without marking it
    here ``subscribe()`` would repeat the Find Information Request right before
    writing the CCCD.
    """
    for characteristic in characteristics:
        await peer.discover_descriptors(characteristic)
        characteristic.descriptors_discovered = True


async def discover_everything(peer: Peer) -> None:
    """Discover all primary services, then all characteristics, then all descriptors."""
    await peer.discover_services()
    for service in peer.services:
        await peer.discover_characteristics(service=service)
    await discover_descriptors(peer, [c for s in peer.services for c in s.characteristics])


async def discover_custom_service(peer: Peer) -> None:
    """Discover only the custom service and its characteristics and descriptors."""
    services = await peer.discover_service(gatt_db.make_uuid(gatt_db.CUSTOM_SERVICE_UUID))
    expect(len(services) == 1, "custom service not found")
    await discover_descriptors(peer, await peer.discover_characteristics(service=services[0]))


def just_works_config(delegate: pairing.PairingDelegate | None = None) -> pairing.PairingConfig:
    """LE Secure Connections, bonding, no MITM, NoInputNoOutput => Just Works."""
    return pairing.PairingConfig(
        sc=True,
        mitm=False,
        bonding=True,
        delegate=delegate
        or pairing.PairingDelegate(pairing.PairingDelegate.IoCapability.NO_OUTPUT_NO_INPUT),
    )


P256_ORDER = 0xFFFFFFFF00000000FFFFFFFFFFFFFFFFBCE6FAADA7179E84F3B9CAC2FC632551


@contextlib.contextmanager
def reproducible_smp_randomness(seed: int) -> Iterator[None]:
    """Draw SMP's nonces (``crypto.r``) and P-256 key pairs from a seeded PRNG.

    Bumble takes both from ``secrets``; patching these two factories for the
    duration of a scenario makes a pairing capture byte-identical across runs.
    """
    rng = random.Random(seed)

    def generate_key(cls: type[crypto.EccKey]) -> crypto.EccKey:
        return cls.from_private_key_bytes(rng.randrange(1, P256_ORDER).to_bytes(32, "big"))

    with (
        mock.patch.object(crypto, "r", lambda: rng.randbytes(16)),
        mock.patch.object(crypto.EccKey, "generate", classmethod(generate_key)),
    ):
        yield


class RejectingDelegate(pairing.PairingDelegate):
    """A pairing delegate that refuses every Pairing Request."""

    async def accept(self) -> bool:
        return False


HEART_RATE_VALUES = [bytes([0x00, 60 + i]) for i in range(20)]
INDICATION_VALUES = [b"IND" + bytes([i]) for i in range(1, 4)]
LONG_WRITE_VALUE = bytes(range(100, 160))
WRITE_COMMAND_COUNT = 50
WRITE_COMMAND_VALUES = [
    bytes((n + k) & 0xFF for k in range(20)) for n in range(WRITE_COMMAND_COUNT)
]


# -------------------------------------------------------------------- scenarios
@scenario("healthy", outputs=("healthy.btsnoop", "healthy_peripheral.btsnoop"))
async def healthy(out_dir: Path) -> None:
    """The reference session, central side (`healthy.btsnoop`) and peripheral side
    (`healthy_peripheral.btsnoop`). After the HCI init sequence the peripheral
    advertises with legacy ADV_IND (Flags, Complete Local Name "bleanalyze-hr",
    16-bit UUIDs 0x180D/0x180F, TX Power -4 dBm, Manufacturer Specific Data
    with company 0x0059 Nordic: exactly 31 bytes). The central scans actively
    with the legacy commands (6 LE Advertising Report events: ADV_IND + SCAN_RSP
    for 3 advertising events), connects with LE Create Connection, exchanges
    the MTU (client 247, server 517, so 247), discovers all services,
    characteristics and descriptors, reads Device Name and Battery Level (87),
    writes `01 00` to the Heart Rate Measurement CCCD and receives 20
    notifications (`00 3C` .. `00 4F`), writes `02 00` to the custom Indicate
    CCCD and receives 3 confirmed indications (`IND\\x01` .. `IND\\x03`), then
    disconnects with reason 0x13. Use it for the happy path: the connection
    timeline, GATT table rebuild, notification/indication counting, and (from
    the peripheral file) host-to-controller notifications."""
    async with Testbed(out_dir, "healthy.btsnoop", "healthy_peripheral.btsnoop") as tb:
        heart_rate = SubscriptionStreamer(
            tb.peripheral, gatt_db.HEART_RATE_MEASUREMENT, HEART_RATE_VALUES, indicate=False
        )
        indicator = SubscriptionStreamer(
            tb.peripheral, gatt_db.INDICATE_UUID, INDICATION_VALUES, indicate=True
        )
        await tb.advertise_legacy()
        reports = await tb.scan(reports=6, legacy=True)
        expect(all(r == reports[0] for r in reports), "advertising data changed")

        link = await tb.connect()
        peer = Peer(link.central)
        expect(await peer.request_mtu(247) == 247, "MTU exchange did not give 247")
        await discover_everything(peer)

        name = await peer.read_value(one_characteristic(peer, gatt_db.DEVICE_NAME_CHARACTERISTIC))
        expect(name == gatt_db.DEVICE_NAME.encode(), f"device name {name!r}")
        battery = await peer.read_value(one_characteristic(peer, gatt_db.BATTERY_LEVEL))
        expect(battery == gatt_db.BATTERY_LEVEL_VALUE, f"battery level {battery!r}")

        hr = one_characteristic(peer, gatt_db.HEART_RATE_MEASUREMENT)
        notifications = await subscribe_and_collect(peer, hr, len(HEART_RATE_VALUES), notify=True)
        await heart_rate.finished()
        expect(notifications == HEART_RATE_VALUES, "unexpected notification values")

        ind = one_characteristic(peer, gatt_db.INDICATE_UUID)
        indications = await subscribe_and_collect(peer, ind, len(INDICATION_VALUES), notify=False)
        await indicator.finished()
        expect(indications == INDICATION_VALUES, "unexpected indication values")

        await tb.disconnect(link)


@scenario("long_read_write")
async def long_read_write(out_dir: Path) -> None:
    """Long read and long write at the default ATT_MTU of 23 (no MTU exchange).
    The central connects without scanning, discovers only the custom service
    (Find By Type Value, Read By Type, Find Information), then reads the
    100-byte "Long Value" characteristic (bytes 0..99): one Read Request (22
    bytes back) followed by 4 Read Blob Requests at offsets 22, 44, 66, 88 (the
    last returns 12 bytes). It then writes a 60-byte value (bytes 100..159)
    with a long write: 4 Prepare Write Requests (offsets 0, 18, 36, 54) and one
    Execute Write Request (flags 0x01), and reads it back (Read + 2 Read Blob).
    Disconnects with 0x13. Use it to test ATT value reassembly across Read
    Blob / Prepare Write sequences."""
    async with Testbed(out_dir, "long_read_write.btsnoop") as tb:
        await tb.advertise_legacy()
        link = await tb.connect()
        peer = Peer(link.central)
        await discover_custom_service(peer)
        long_value = one_characteristic(peer, gatt_db.LONG_VALUE_UUID)

        value = await peer.read_value(long_value)
        expect(value == gatt_db.LONG_VALUE, f"long read returned {len(value)} bytes")

        await peer.write_value(long_value, LONG_WRITE_VALUE, with_response=True)
        server_char = gatt_db.find_characteristic(
            tb.peripheral.gatt_server, gatt_db.LONG_VALUE_UUID
        )
        expect(server_char.value == LONG_WRITE_VALUE, "long write not applied on the server")
        expect(await peer.read_value(long_value) == LONG_WRITE_VALUE, "read-back mismatch")

        await tb.disconnect(link)


@scenario("pairing_failed")
async def pairing_failed(out_dir: Path) -> None:
    """Rejected pairing. The central connects and sends an SMP Pairing Request
    (Secure Connections, bonding, NoInputNoOutput); the peripheral's pairing
    delegate refuses, so it answers with SMP Pairing Failed, reason 0x05
    (Pairing Not Supported). No encryption is started. The central then
    disconnects with 0x13. Use it to test SMP failure reporting."""
    async with Testbed(out_dir, "pairing_failed.btsnoop") as tb:
        tb.central.pairing_config_factory = lambda _: just_works_config()
        tb.peripheral.pairing_config_factory = lambda _: just_works_config(RejectingDelegate())
        await tb.advertise_legacy()
        link = await tb.connect()
        try:
            await asyncio.wait_for(link.central.pair(), STEP_TIMEOUT)
        except ProtocolError as error:
            expect(
                error.error_code == smp.ErrorCode.PAIRING_NOT_SUPPORTED,
                f"unexpected pairing failure {error}",
            )
        else:
            raise ScenarioError("pairing unexpectedly succeeded")
        expect(not link.central.is_encrypted, "link encrypted after failed pairing")
        await tb.disconnect(link)


@scenario("pairing_ok")
async def pairing_ok(out_dir: Path) -> None:
    """Successful LE Secure Connections "Just Works" pairing with bonding.
    The central connects, sends Pairing Request; Pairing Response, Public Keys,
    Confirm, Randoms and DHKey Checks follow, the central issues HCI LE Enable
    Encryption and gets an Encryption Change event (enabled), then both sides
    distribute identity keys (Identity Information + Identity Address
    Information). The central then reads Battery Level over the encrypted
    link with a Read By Type Request (read by UUID 0x2A19) and disconnects
    with 0x13. The SMP nonces and P-256 keys come from a seeded PRNG, so the
    packet bytes are identical in every run. Use it to test SMP phase
    decoding and the encryption timeline."""
    with reproducible_smp_randomness(seed=0xB1EA):
        async with Testbed(out_dir, "pairing_ok.btsnoop") as tb:
            tb.central.pairing_config_factory = lambda _: just_works_config()
            tb.peripheral.pairing_config_factory = lambda _: just_works_config()
            await tb.advertise_legacy()
            link = await tb.connect()
            await asyncio.wait_for(link.central.pair(), STEP_TIMEOUT)
            expect(link.central.is_encrypted, "link not encrypted after pairing")
            peer = Peer(link.central)
            battery = await peer.read_characteristics_by_uuid(
                gatt_db.make_uuid(gatt_db.BATTERY_LEVEL)
            )
            expect(battery == [gatt_db.BATTERY_LEVEL_VALUE], f"battery level {battery!r}")
            await tb.disconnect(link)


@scenario("extended_adv")
async def extended_adv(out_dir: Path) -> None:
    """LE extended advertising. Both controllers keep the LE Extended
    Advertising feature, so the peripheral creates advertising set 0
    (HCI LE Set Extended Advertising Parameters/Data/Enable, connectable,
    non-scannable, SID 1) with 98 bytes of advertising data (Flags, a 39-char
    Complete Local Name, three 16-bit UUIDs, the custom 128-bit UUID, Service
    Data for 0x180F, TX Power, Nordic manufacturer data with 16 payload
    bytes). The central scans with HCI LE Set Extended Scan Parameters/Enable
    (1M + Coded PHY) and receives 6 LE Extended Advertising Report events
    carrying the full 98 bytes in one report each, stops scanning, connects
    (Bumble still uses the legacy LE Create Connection command) and disconnects
    with 0x13. Use it for extended-report parsing and payloads > 31 bytes."""
    async with Testbed(out_dir, "extended_adv.btsnoop", extended_advertising=True) as tb:
        await tb.advertise_extended()
        reports = await tb.scan(reports=6, legacy=False)
        expect(
            all(r == EXTENDED_ADVERTISING_DATA for r in reports),
            "extended advertising data not delivered intact",
        )
        link = await tb.connect()
        await tb.disconnect(link)


@scenario("write_without_response")
async def write_without_response(out_dir: Path) -> None:
    """A burst of Write Commands. At the default ATT_MTU of 23 the central
    discovers the custom service, then sends 50 ATT Write Commands (opcode
    0x52) of 20 bytes each (value n = bytes n..n+19) to the "Write Without
    Response" characteristic back to back, waits until the peripheral has
    received all 50, and disconnects with 0x13. Each command fills one
    27-byte ACL packet. Use it to test write-command counting and
    throughput/flow-control views (Number Of Completed Packets)."""
    async with Testbed(out_dir, "write_without_response.btsnoop") as tb:
        server_char = gatt_db.find_characteristic(
            tb.peripheral.gatt_server, gatt_db.WRITE_NO_RSP_UUID
        )
        received: list[bytes] = []
        all_received = asyncio.get_running_loop().create_future()

        def on_write(_connection, value: bytes) -> None:
            received.append(bytes(value))
            if len(received) == WRITE_COMMAND_COUNT and not all_received.done():
                all_received.set_result(None)

        server_char.on("write", on_write)
        await tb.advertise_legacy()
        link = await tb.connect()
        peer = Peer(link.central)
        await discover_custom_service(peer)
        target = one_characteristic(peer, gatt_db.WRITE_NO_RSP_UUID)
        for value in WRITE_COMMAND_VALUES:
            await peer.write_value(target, value, with_response=False)
        await asyncio.wait_for(all_received, STEP_TIMEOUT)
        expect(received == WRITE_COMMAND_VALUES, "peripheral received different values")
        await tb.disconnect(link)
