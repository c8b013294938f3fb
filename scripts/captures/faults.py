"""Fault scenarios: one capture per problem docs/RULES.md detects, plus counter-examples.

Each scenario's docstring is its README paragraph; its expected findings are
computed from the written capture by :mod:`captures.expectations`.  Waits use
real time (the btsnoop timestamps are wall-clock) and are kept just above the
RULES.md default thresholds (see :mod:`captures.findings`).
"""

from __future__ import annotations

import asyncio
import contextlib
import struct
from collections.abc import Awaitable
from pathlib import Path

from bumble import att, core, gatt, gatt_client, hci, l2cap, smp
from bumble.device import (
    DEVICE_DEFAULT_CONNECT_SCAN_INTERVAL,
    DEVICE_DEFAULT_CONNECT_SCAN_WINDOW,
    ConnectionParametersPreferences,
    Peer,
)
from bumble.keys import PairingKeys

from . import gatt_db
from .controllers import (
    CancellingController,
    LargeBufferController,
    LimitedController,
    LinkLossController,
    LocalTerminationController,
    PacedController,
    PassiveScanController,
    UpdateRefusingController,
)
from .findings import ATT_TIMEOUT, IDLE, SILENCE, STALL, STUCK_TIMEOUT, SUBSCRIPTION_WAIT
from .scenarios import (
    RejectingDelegate,
    ScenarioError,
    SubscriptionStreamer,
    discover_custom_service,
    discover_descriptors,
    expect,
    just_works_config,
    one_characteristic,
    reproducible_smp_randomness,
    scenario,
    subscribe_and_collect,
)
from .testbed import (
    ABSENT_ADDRESS,
    LEGACY_ADVERTISING_DATA,
    REMOTE_USER_TERMINATED,
    STEP_TIMEOUT,
    Link,
    Testbed,
)

MARGIN = 1.0  # seconds added to every RULES.md threshold we must exceed
WRITE_VALUE = bytes(range(20))  # one 20-byte Write Command value (fills a 27-byte ACL packet)
FLOW_BURST = 10  # Write Commands per burst in the flow scenarios
UNRESPONSIVE_WRITES = int(SILENCE + MARGIN) + 1  # one Write Command per second
LONG_NOTIFICATION = bytes(range(100))
ABSENT = hci.Address(ABSENT_ADDRESS)
# mid_connection_start: values that fill ATT_MTU 247 - 3 exactly
FULL_VALUES = [bytes((n + k) & 0xFF for k in range(244)) for n in range(5)]
FULL_WRITE = bytes((0x80 + k) & 0xFF for k in range(244))


# ---------------------------------------------------------------------- helpers
async def discover_service(peer: Peer, uuid: int | str) -> None:
    """Discover one primary service by UUID, its characteristics and their descriptors."""
    services = await peer.discover_service(gatt_db.make_uuid(uuid))
    expect(len(services) == 1, f"service {uuid} not found")
    await discover_descriptors(peer, await peer.discover_characteristics(service=services[0]))


def cccd_of(characteristic: gatt_client.CharacteristicProxy) -> gatt_client.DescriptorProxy:
    descriptor = characteristic.get_descriptor(
        gatt_db.gatt.GATT_CLIENT_CHARACTERISTIC_CONFIGURATION_DESCRIPTOR
    )
    expect(descriptor is not None, f"no CCCD discovered for {characteristic}")
    return descriptor


async def drain(tb: Testbed, link: Link) -> None:
    """Wait until the controller completed every ACL packet the central sent."""
    handle = link.central.handle
    queue = tb.central.host.connections[handle].acl_packet_queue
    await asyncio.wait_for(queue.drain(handle), STEP_TIMEOUT)


async def until(condition, what: str, timeout: float = STEP_TIMEOUT) -> None:
    """Poll ``condition()`` every 10 ms."""
    async with asyncio.timeout(timeout):
        while not condition():
            await asyncio.sleep(0.01)
    del what


def collect_writes(tb: Testbed, uuid: str) -> list[bytes]:
    """Values the peripheral receives on a characteristic (filled as they arrive)."""
    received: list[bytes] = []
    characteristic = gatt_db.find_characteristic(tb.peripheral.gatt_server, uuid)
    characteristic.on("write", lambda _connection, value: received.append(bytes(value)))
    return received


def hang_peripheral_host(tb: Testbed) -> None:
    """The peripheral's host stops: its controller keeps the link up (and the central's
    controller keeps acknowledging packets) but nothing reaches or leaves the host."""
    tb.peripheral_controller.host = None


def create_connection_command(address: hci.Address) -> hci.HCI_LE_Create_Connection_Command:
    """LE Create Connection with the parameters Bumble's ``Device.connect`` uses."""
    prefs = ConnectionParametersPreferences.default
    return hci.HCI_LE_Create_Connection_Command(
        le_scan_interval=int(DEVICE_DEFAULT_CONNECT_SCAN_INTERVAL / 0.625),
        le_scan_window=int(DEVICE_DEFAULT_CONNECT_SCAN_WINDOW / 0.625),
        initiator_filter_policy=0,
        peer_address_type=address.address_type,
        peer_address=address,
        own_address_type=hci.OwnAddressType.RANDOM,
        connection_interval_min=int(prefs.connection_interval_min / 1.25),
        connection_interval_max=int(prefs.connection_interval_max / 1.25),
        max_latency=prefs.max_latency,
        supervision_timeout=int(prefs.supervision_timeout / 10),
        min_ce_length=int(prefs.min_ce_length / 0.625),
        max_ce_length=int(prefs.max_ce_length / 0.625),
    )


async def expect_failure(
    attempt: Awaitable[object], error: type[Exception], code: int, what: str
) -> None:
    """Await a connection attempt that must fail with ``error`` carrying ``code``."""
    try:
        await attempt
    except error as failure:
        expect(getattr(failure, "error_code", None) == code, f"{what} failed with {failure}")
    else:
        raise ScenarioError(f"{what} unexpectedly succeeded")


async def wait_disconnected(link: Link) -> None:
    if link.central.handle in link.central.device.connections:
        done = asyncio.get_running_loop().create_future()
        link.central.once("disconnection", done.set_result)
        await asyncio.wait_for(done, STEP_TIMEOUT)


# -------------------------------------------------------------------- pool.*
@scenario("stuck_attempt", timeout=STUCK_TIMEOUT + 15)
async def stuck_attempt(out_dir: Path) -> None:
    """A connection attempt that never completes (`pool.stuck-attempt`). Nobody
    advertises: the central sends LE Create Connection to `C0:11:22:33:44:99`,
    an address no device on the link uses, and the controller accepts it
    (Command Status 0x00). The app never gives up: 11 s later (RULES default
    timeout 10 s) it starts a passive legacy scan "to see whether the device is
    around" (LE Set Scan Parameters / Enable; nothing advertises, so no
    report) and stops it; these frames show that the capture lasts past the
    timeout (a btsnoop file has no end marker). The capture ends with the
    attempt still pending: no Connection Complete, no Create Connection
    Cancel, no disconnection."""
    async with Testbed(out_dir, "stuck_attempt.btsnoop") as tb:
        attempt = asyncio.create_task(tb.central.connect(ABSENT, timeout=None))
        await asyncio.sleep(STUCK_TIMEOUT + MARGIN)
        expect(not attempt.done(), "the attempt to an absent device completed")
        await tb.central.start_scanning(legacy=True, active=False)
        await asyncio.sleep(0.1)
        await tb.central.stop_scanning(legacy=True)
        tb.stop_capture()
        attempt.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await attempt


@scenario("cancelled_attempt")
async def cancelled_attempt(out_dir: Path) -> None:
    """Counter-example of `stuck_attempt`: the app gives up in time
    (`pool.cancelled-attempt`, info). The central connects to the absent
    `C0:11:22:33:44:99` with a 2 s timeout (Bumble's `connect(timeout=2.0)`),
    then sends LE Create Connection Cancel; the controller answers Command
    Complete (success) followed by LE Connection Complete with status 0x02
    Unknown Connection Identifier, and Bumble raises its timeout error. Stock
    Bumble never reports a cancelled attempt at all, so the central uses
    `CancellingController` (see "Controller changes")."""
    async with Testbed(
        out_dir, "cancelled_attempt.btsnoop", central_controller=CancellingController
    ) as tb:
        try:
            await tb.central.connect(ABSENT, timeout=2.0)
        except core.TimeoutError:
            pass
        else:
            raise ScenarioError("connected to an absent device")


@scenario("pool_full")
async def pool_full(out_dir: Path) -> None:
    """The controller's connection table is full (`pool.full`), and two
    simultaneous connections (`pool.concurrent-connections`, info). Three
    peripherals advertise (`C0:11:22:33:44:02`, `:03`, `:04`, each with the
    standard GATT database); the central's controller (`LimitedController`)
    has room for 2 LE connections. The central connects to `:02` (handle
    0x0001) and `:03` (handle 0x0002); its LE Create Connection to `:04` is
    rejected in the Command Status with 0x09 Connection Limit Exceeded (what
    Apache NimBLE's controller does; no Connection Complete follows) and
    Bumble raises the error. The central then disconnects `:03` and `:02`
    (0x13). No ATT traffic."""
    async with Testbed(
        out_dir, "pool_full.btsnoop", central_controller=LimitedController, extra_peripherals=2
    ) as tb:
        for device in tb.peripherals:
            await tb.advertise_legacy(device)
        first = await tb.connect(tb.peripherals[0])
        second = await tb.connect(tb.peripherals[1])
        await expect_failure(
            tb.central.connect(tb.peripherals[2].random_address),
            hci.HCI_Error,
            hci.HCI_ErrorCode.CONNECTION_LIMIT_EXCEEDED_ERROR,
            "third connection",
        )
        await tb.disconnect(second)
        await tb.disconnect(first)


@scenario("rejected_attempt")
async def rejected_attempt(out_dir: Path) -> None:
    """A connection attempt rejected while another is pending
    (`pool.rejected-attempt`), then the pending one cancelled
    (`pool.cancelled-attempt`, info). The peripheral `C0:11:22:33:44:02`
    advertises. The central connects to the absent `C0:11:22:33:44:99`
    (Bumble's `connect(timeout=None)`; Command Status 0x00, the attempt is
    pending). 0.5 s later a second LE Create Connection, to `:02`, goes to the
    controller as a host that does not queue its connection requests would
    send it (Bumble's own `Device.connect` refuses a second pending connect, so
    the script sends the raw HCI command with the same parameters): the
    controller answers Command Status 0x0C Command Disallowed (Core v5.4 Vol 4
    Part E 7.8.12: one pending LE Create Connection; stock Bumble does this).
    The app then cancels the pending attempt (LE Create Connection Cancel,
    Command Complete, LE Connection Complete 0x02 Unknown Connection
    Identifier: `CancellingController`), connects to `:02` (handle 0x0001)
    and disconnects (0x13)."""
    async with Testbed(
        out_dir, "rejected_attempt.btsnoop", central_controller=CancellingController
    ) as tb:
        await tb.advertise_legacy()
        pending = asyncio.create_task(tb.central.connect(ABSENT, timeout=None))
        await until(lambda: tb.central_controller.pending_le_connection is not None, "pending")
        await asyncio.sleep(0.5)
        status = await tb.central.host.send_async_command(
            create_connection_command(tb.peripheral_address), check_status=False
        )
        expect(status == hci.HCI_ErrorCode.COMMAND_DISALLOWED_ERROR, f"second create: {status!r}")
        expect(not pending.done(), "the pending attempt ended with the rejection")
        await tb.central.cancel_connection()
        await expect_failure(
            asyncio.wait_for(pending, STEP_TIMEOUT),
            core.ConnectionError,
            hci.HCI_ErrorCode.UNKNOWN_CONNECTION_IDENTIFIER_ERROR,
            "the cancelled attempt to an absent device",
        )
        link = await tb.connect()
        await tb.disconnect(link)


@scenario("idle_connection", timeout=IDLE + 15)
async def idle_connection(out_dir: Path) -> None:
    """A forgotten connection (`pool.idle-connection`). Two peripherals
    advertise. The central connects to `:02` (handle 0x0001), reads Device
    Name by handle (Read Request 0x0003, 13 bytes back), then leaves that
    connection without any ATT/L2CAP traffic for 21 s (RULES default idle
    20 s) and connects to `:03` (handle 0x0002, so two connections are open:
    `pool.concurrent-connections`), reads its Device Name, and disconnects
    `:03` then `:02` (0x13)."""
    async with Testbed(out_dir, "idle_connection.btsnoop", extra_peripherals=1) as tb:
        for device in tb.peripherals:
            await tb.advertise_legacy(device)
        first = await tb.connect(tb.peripherals[0])
        name = await Peer(first.central).read_value(0x0003)
        expect(name == gatt_db.DEVICE_NAME.encode(), f"device name {name!r}")
        await asyncio.sleep(IDLE + MARGIN)
        second = await tb.connect(tb.peripherals[1])
        await Peer(second.central).read_value(0x0003)
        await tb.disconnect(second)
        await tb.disconnect(first)


@scenario("unresponsive_peer", timeout=ATT_TIMEOUT + 20)
async def unresponsive_peer(out_dir: Path) -> None:
    """A peer that stops answering (`pool.unresponsive-peer`, `att.timeout`)
    and a supervision timeout (`link.disconnect` warning). The central
    connects and discovers the custom service. Then the peripheral's host
    hangs (its controller keeps the link alive and the central's controller
    keeps acknowledging packets, but nothing reaches or leaves the
    peripheral's host). The central sends a Read Request for Long Value
    (0x001D), which is never answered, and 12 Write Commands (20 bytes to
    0x0022), one per second, so it keeps sending for 11 s with nothing
    received (RULES silence 10 s). Bumble's GATT client gives up on the read
    after 30 s (ATT transaction timeout). 31 s after the Read Request the
    peripheral is gone for good and the central's controller
    (`LinkLossController`) reports Disconnection Complete with reason 0x08
    Connection Timeout (stock Bumble has no supervision timeout)."""
    async with Testbed(
        out_dir, "unresponsive_peer.btsnoop", central_controller=LinkLossController
    ) as tb:
        await tb.advertise_legacy()
        link = await tb.connect()
        peer = Peer(link.central)
        await discover_custom_service(peer)
        long_value = one_characteristic(peer, gatt_db.LONG_VALUE_UUID)
        target = one_characteristic(peer, gatt_db.WRITE_NO_RSP_UUID)

        hang_peripheral_host(tb)
        loop = asyncio.get_running_loop()
        started = loop.time()
        read = asyncio.create_task(peer.read_value(long_value))
        await asyncio.sleep(0)  # let the Read Request go out first
        for _ in range(UNRESPONSIVE_WRITES):
            await peer.write_value(target, WRITE_VALUE, with_response=False)
            await asyncio.sleep(1.0)
        try:
            await asyncio.wait_for(read, ATT_TIMEOUT + 5)
        except core.TimeoutError:
            pass
        else:
            raise ScenarioError("the read was answered")
        await asyncio.sleep(max(0.0, started + ATT_TIMEOUT + MARGIN - loop.time()))
        tb.central_controller.supervision_timeout(link.central.handle)
        await wait_disconnected(link)


# -------------------------------------------------------------------- flow.*
async def flow_session(out_dir: Path, name: str, stall: float) -> None:
    async with Testbed(out_dir, name, central_controller=PacedController) as tb:
        received = collect_writes(tb, gatt_db.WRITE_NO_RSP_UUID)
        await tb.advertise_legacy()
        link = await tb.connect()
        peer = Peer(link.central)
        await discover_custom_service(peer)
        target = one_characteristic(peer, gatt_db.WRITE_NO_RSP_UUID)
        await drain(tb, link)
        bursts = 2 if stall else 1
        count = FLOW_BURST if stall else 2 * FLOW_BURST
        for burst in range(bursts):
            if burst:
                await asyncio.sleep(stall)
            for _ in range(count):
                await peer.write_value(target, WRITE_VALUE, with_response=False)
            await drain(tb, link)
        await until(lambda: len(received) == 2 * FLOW_BURST, "all writes received")
        await tb.disconnect(link)


@scenario("flow_stall")
async def flow_stall(out_dir: Path) -> None:
    """A sender that misses its "ready to send" callback (`flow.skipped-ready`).
    The central's controller (`PacedController`) has 4 LE ACL buffers (LE Read
    Buffer Size v2: 27 bytes x 4) and frees at most 2 per 15 ms connection
    interval (Number Of Completed Packets on a timer). After discovering the
    custom service the app writes a burst of 10 Write Commands (20 bytes,
    0x0022): Bumble's host sends 4 (no credit left), then 2 more each time a
    NOCP returns 2 credits; the tenth leaves 0 credits. The NOCPs that follow
    return all credits, but the app stays silent for 2 s (RULES stall 1 s)
    before writing a second burst of 10. Disconnects with 0x13."""
    await flow_session(out_dir, "flow_stall.btsnoop", stall=STALL + MARGIN)


@scenario("flow_paced")
async def flow_paced(out_dir: Path) -> None:
    """Counter-example of `flow_stall`: the same controller (4 buffers, 2
    completions per 15 ms), but the app hands 20 Write Commands to the host at
    once and the host sends the next packets as soon as each NOCP returns
    credits: the credits reach 0 many times and sending always resumes within
    the same millisecond. Disconnects with 0x13 once every packet is
    completed. No finding other than the disconnection infos."""
    await flow_session(out_dir, "flow_paced.btsnoop", stall=0.0)


@scenario("flow_stall_free")
async def flow_stall_free(out_dir: Path) -> None:
    """A bulk transfer that stalls mid-message with every buffer free
    (`flow.skipped-ready`, second form). The stock controller completes every
    packet at once (64 buffers), so the credits never run out. After
    discovering the custom service the app sends a 600-byte message in
    20-byte Write Commands (ATT_MTU 23 - 3) to 0x0022, one every 10 ms; after
    the 20th chunk it stops for 2 s (a missed ready callback: nothing was due
    from the peer, every buffer was free), then sends the remaining 10 chunks
    at the same pace. Disconnects with 0x13."""
    async with Testbed(out_dir, "flow_stall_free.btsnoop") as tb:
        received = collect_writes(tb, gatt_db.WRITE_NO_RSP_UUID)
        await tb.advertise_legacy()
        link = await tb.connect()
        peer = Peer(link.central)
        await discover_custom_service(peer)
        target = one_characteristic(peer, gatt_db.WRITE_NO_RSP_UUID)
        await drain(tb, link)
        for chunk in range(30):
            if chunk == 20:
                await asyncio.sleep(STALL + MARGIN)
            await peer.write_value(target, WRITE_VALUE, with_response=False)
            await asyncio.sleep(0.010)
        await until(lambda: len(received) == 30, "all writes received")
        await tb.disconnect(link)


@scenario("credits_lost")
async def credits_lost(out_dir: Path) -> None:
    """Packets the controller never reports as completed (`flow.credits-lost`).
    Same `PacedController` as `flow_stall`; after discovery (all packets
    completed) the controller stops sending Number Of Completed Packets
    (`hold`), the app writes 3 Write Commands (the peripheral receives them)
    and disconnects (0x13) 2 s later: the connection ends with 3 host packets
    that were never acknowledged although they were 2 s old (see "Rule
    caveats": a controller that flushes its buffers at the disconnection, as
    the Core spec allows, looks the same on HCI)."""
    async with Testbed(out_dir, "credits_lost.btsnoop", central_controller=PacedController) as tb:
        received = collect_writes(tb, gatt_db.WRITE_NO_RSP_UUID)
        await tb.advertise_legacy()
        link = await tb.connect()
        peer = Peer(link.central)
        await discover_custom_service(peer)
        target = one_characteristic(peer, gatt_db.WRITE_NO_RSP_UUID)
        await drain(tb, link)
        tb.central_controller.hold = True
        for _ in range(3):
            await peer.write_value(target, WRITE_VALUE, with_response=False)
        await until(lambda: len(received) == 3, "3 writes received")
        await asyncio.sleep(2.0)
        await tb.disconnect(link)


@scenario("credits_exhausted")
async def credits_exhausted(out_dir: Path) -> None:
    """A host that sends without a free controller buffer
    (`flow.credits-exhausted`). Same `PacedController`, holding completions
    after discovery: the app writes 4 Write Commands (Bumble's host sends them,
    0 credits left), then one more ACL packet (a fifth Write Command) is
    injected straight into the HCI transport with `host.send_hci_packet`,
    bypassing Bumble's flow-control queue, as a host with a credit-counting
    bug would. The controller then resumes completions (2 + 2 + 1; Bumble's
    host logs that it only had 4 in flight) and the central disconnects
    (0x13)."""
    async with Testbed(
        out_dir, "credits_exhausted.btsnoop", central_controller=PacedController
    ) as tb:
        received = collect_writes(tb, gatt_db.WRITE_NO_RSP_UUID)
        await tb.advertise_legacy()
        link = await tb.connect()
        peer = Peer(link.central)
        await discover_custom_service(peer)
        target = one_characteristic(peer, gatt_db.WRITE_NO_RSP_UUID)
        await drain(tb, link)
        tb.central_controller.hold = True
        for _ in range(4):
            await peer.write_value(target, WRITE_VALUE, with_response=False)
        pdu = att.ATT_Write_Command(attribute_handle=target.handle, attribute_value=WRITE_VALUE)
        frame = bytes(l2cap.L2CAP_PDU(att.ATT_CID, bytes(pdu)))
        tb.central.host.send_hci_packet(
            hci.HCI_AclDataPacket(link.central.handle, 0, 0, len(frame), frame)
        )
        await until(lambda: len(received) == 5, "5 writes received")
        await asyncio.sleep(0.1)
        tb.central_controller.release()
        await drain(tb, link)
        await asyncio.sleep(0.1)
        await tb.disconnect(link)


# -------------------------------------------------------------------- gatt.* / security.insufficient
async def fault_service_client(tb: Testbed) -> tuple[Link, Peer]:
    await tb.advertise_legacy()
    link = await tb.connect()
    peer = Peer(link.central)
    await discover_service(peer, gatt_db.FAULT_SERVICE_UUID)
    return link, peer


SECURE_VALUES = [b"SEC" + bytes([i]) for i in range(1, 4)]


@scenario("cccd_insufficient_encryption")
async def cccd_insufficient_encryption(out_dir: Path) -> None:
    """A subscription the server refuses (`gatt.subscription-failed`,
    `security.insufficient`, `att.error`). The peripheral has the extra
    "bleanalyze Faults" service (handles 0x0023-0x0029, see
    `gatt_server_faults.json`) whose Secure Notify characteristic (value
    0x0025) has a CCCD (0x0026) writable only over an encrypted link. The
    central discovers that service (Find By Type Value, Read By Type, Find
    Information), writes `01 00` to the CCCD without pairing and gets Error
    Response 0x0F Insufficient Encryption. It does not recover and disconnects
    with 0x13."""
    async with Testbed(out_dir, "cccd_insufficient_encryption.btsnoop", fault_service=True) as tb:
        link, peer = await fault_service_client(tb)
        secure = one_characteristic(peer, gatt_db.SECURE_NOTIFY_UUID)
        try:
            await peer.subscribe(secure, lambda _value: None)
        except att.ATT_Error as error:
            expect(error.error_code == att.ErrorCode.INSUFFICIENT_ENCRYPTION, f"{error}")
        else:
            raise ScenarioError("subscription accepted without encryption")
        await tb.disconnect(link)


@scenario("cccd_recovered")
async def cccd_recovered(out_dir: Path) -> None:
    """Counter-example of `cccd_insufficient_encryption`: the app recovers,
    so both findings become info. Same start (CCCD 0x0026 write rejected with
    0x0F); the central then pairs (LE Secure Connections Just Works with
    bonding, seeded as in `pairing_ok`), the link is encrypted (Encryption
    Change), the central writes `01 00` to the CCCD again and gets a Write
    Response, and the peripheral sends 3 notifications (`SEC\\x01` ..
    `SEC\\x03`) on 0x0025. Disconnects with 0x13."""
    with reproducible_smp_randomness(seed=0xB1EB):
        async with Testbed(out_dir, "cccd_recovered.btsnoop", fault_service=True) as tb:
            tb.central.pairing_config_factory = lambda _: just_works_config()
            tb.peripheral.pairing_config_factory = lambda _: just_works_config()
            streamer = SubscriptionStreamer(
                tb.peripheral, gatt_db.SECURE_NOTIFY_UUID, SECURE_VALUES, indicate=False
            )
            link, peer = await fault_service_client(tb)
            secure = one_characteristic(peer, gatt_db.SECURE_NOTIFY_UUID)
            try:
                await peer.subscribe(secure, lambda _value: None)
            except att.ATT_Error as error:
                expect(error.error_code == att.ErrorCode.INSUFFICIENT_ENCRYPTION, f"{error}")
            else:
                raise ScenarioError("subscription accepted without encryption")
            await asyncio.wait_for(link.central.pair(), STEP_TIMEOUT)
            expect(link.central.is_encrypted, "link not encrypted after pairing")
            values = await subscribe_and_collect(peer, secure, len(SECURE_VALUES), notify=True)
            await streamer.finished()
            expect(values == SECURE_VALUES, f"notifications {values!r}")
            await tb.disconnect(link)


@scenario("cccd_silent", outputs=("cccd_silent.btsnoop", "peer_subscribes.btsnoop"), timeout=SUBSCRIPTION_WAIT + 15)
async def cccd_silent(out_dir: Path) -> None:
    """A subscription that never delivers (`gatt.subscription-silent`, info:
    silence alone proves nothing). The central discovers the Heart Rate service
    and writes `01 00` to the Heart Rate Measurement CCCD (0x0011); the server
    acknowledges (Write Response) but never notifies. The central waits 6 s
    (RULES wait 5 s) and disconnects with 0x13. `peer_subscribes.btsnoop` is
    the same session seen by the peripheral's host: the *peer* subscribes to
    the host's own characteristic, and the host (the server) never notifies —
    the finding names the host as the server, never the peer's firmware."""
    async with Testbed(out_dir, "cccd_silent.btsnoop", "peer_subscribes.btsnoop") as tb:
        await tb.advertise_legacy()
        link = await tb.connect()
        peer = Peer(link.central)
        await discover_service(peer, gatt_db.HEART_RATE_SERVICE)
        hr = one_characteristic(peer, gatt_db.HEART_RATE_MEASUREMENT)
        received: list[bytes] = []
        await peer.subscribe(hr, received.append)
        await asyncio.sleep(SUBSCRIPTION_WAIT + MARGIN)
        expect(not received, "the server notified")
        await tb.disconnect(link)


@scenario("cccd_no_notify_property")
async def cccd_no_notify_property(out_dir: Path) -> None:
    """A subscription to a characteristic that cannot notify
    (`gatt.subscription-no-notify-property`). With the "bleanalyze Faults"
    service, the central discovers CCCD Without Notify (properties read,
    write; value 0x0028) and its CCCD (0x0029, which the server should not
    have), writes `01 00` to that CCCD with a Write Request and gets a Write
    Response. It disconnects (0x13) 0.5 s later, before the RULES wait of a
    silent subscription (5 s) could elapse."""
    async with Testbed(out_dir, "cccd_no_notify_property.btsnoop", fault_service=True) as tb:
        link, peer = await fault_service_client(tb)
        characteristic = one_characteristic(peer, gatt_db.CCCD_NO_NOTIFY_UUID)
        await peer.write_value(cccd_of(characteristic), b"\x01\x00", with_response=True)
        await asyncio.sleep(0.5)
        await tb.disconnect(link)


@scenario("cccd_unanswered", timeout=ATT_TIMEOUT + 20)
async def cccd_unanswered(out_dir: Path) -> None:
    """A subscription request that is never answered
    (`gatt.subscription-unanswered`, `att.timeout`). The central discovers
    the Heart Rate service; then the peripheral's host hangs (as in
    `unresponsive_peer`). The central writes `01 00` to the Heart Rate
    Measurement CCCD (0x0011) with a Write Request, gets no response, and
    disconnects (0x13) only after the ATT timeout of 30 s: a request pending
    when the host itself closes the link earlier proves nothing (RULES.md)."""
    async with Testbed(out_dir, "cccd_unanswered.btsnoop") as tb:
        await tb.advertise_legacy()
        link = await tb.connect()
        peer = Peer(link.central)
        await discover_service(peer, gatt_db.HEART_RATE_SERVICE)
        hr = one_characteristic(peer, gatt_db.HEART_RATE_MEASUREMENT)
        hang_peripheral_host(tb)
        subscription = asyncio.create_task(peer.subscribe(hr, lambda _value: None))
        await asyncio.sleep(ATT_TIMEOUT + MARGIN)
        with contextlib.suppress(asyncio.CancelledError, core.BaseBumbleError):
            if subscription.done():
                expect(subscription.exception() is not None, "the subscription was answered")
        # The peripheral's host is gone: wait only for the central's side.
        await asyncio.wait_for(link.central.disconnect(REMOTE_USER_TERMINATED), STEP_TIMEOUT)
        with contextlib.suppress(asyncio.CancelledError, core.BaseBumbleError):
            await subscription


@scenario("unsubscribed_notification")
async def unsubscribed_notification(out_dir: Path) -> None:
    """Notifications nobody asked for (`gatt.unsubscribed-notification`,
    info). The central discovers the Heart Rate service but never writes the
    CCCD; the peripheral nevertheless sends 2 Heart Rate Measurement
    notifications (`00 48`, `00 49` on 0x0010; Bumble's
    `notify_subscriber(..., force=True)`). Bumble's client logs "received
    notification with no subscriber". Disconnects with 0x13."""
    async with Testbed(out_dir, "unsubscribed_notification.btsnoop") as tb:
        await tb.advertise_legacy()
        link = await tb.connect()
        peer = Peer(link.central)
        await discover_service(peer, gatt_db.HEART_RATE_SERVICE)
        hr = gatt_db.find_characteristic(tb.peripheral.gatt_server, gatt_db.HEART_RATE_MEASUREMENT)
        for value in (b"\x00\x48", b"\x00\x49"):
            await tb.peripheral.notify_subscriber(link.peripheral, hr, value, force=True)
        await until(
            lambda: peer.gatt_client.cached_values.get(hr.handle, (None, b""))[1] == b"\x00\x49",
            "notifications received",
        )
        await tb.disconnect(link)


# -------------------------------------------------------------------- mtu.*
@scenario("mtu_truncated_read")
async def mtu_truncated_read(out_dir: Path) -> None:
    """A long value read without Read Blob (`mtu.truncated-read`). At the
    default ATT_MTU of 23 the central discovers the custom service and reads
    the 100-byte Long Value (0x001D) with a single Read Request (Bumble's
    `read_value(..., no_long_read=True)`): the Read Response carries the first
    22 bytes (ATT_MTU - 1) and no Read Blob Request follows; the central moves
    on and reads Device Name (0x0003), which proves it never continued.
    Disconnects with 0x13. Counter-example: `long_read_write` reads the same
    value with Read Blob."""
    async with Testbed(out_dir, "mtu_truncated_read.btsnoop") as tb:
        await tb.advertise_legacy()
        link = await tb.connect()
        peer = Peer(link.central)
        await discover_custom_service(peer)
        long_value = one_characteristic(peer, gatt_db.LONG_VALUE_UUID)
        value = await peer.gatt_client.read_value(long_value.handle, no_long_read=True)
        expect(value == gatt_db.LONG_VALUE[:22], f"read {len(value)} bytes")
        await peer.gatt_client.read_value(0x0003, no_long_read=True)
        await tb.disconnect(link)


@scenario("mtu_truncated_notify")
async def mtu_truncated_notify(out_dir: Path) -> None:
    """Notifications cut to ATT_MTU - 3 (`mtu.truncated-notification`), with
    the evidence that they are cut. Two connections to the same peripheral.
    The first exchanges the MTU (247) and subscribes to Heart Rate
    Measurement: the peripheral notifies three 100-byte values (bytes 0..99),
    whole. The second does not exchange the MTU (ATT_MTU 23) and subscribes
    again: the same three values arrive cut by Bumble's server to 20 bytes
    (bytes 0..19) on 0x0010 — every value of the characteristic exactly
    ATT_MTU - 3 while the same characteristic carried 100 bytes before.
    Each connection is closed with 0x13."""
    async with Testbed(out_dir, "mtu_truncated_notify.btsnoop") as tb:
        for exchange, expected in ((True, LONG_NOTIFICATION), (False, LONG_NOTIFICATION[:20])):
            streamer = SubscriptionStreamer(
                tb.peripheral, gatt_db.HEART_RATE_MEASUREMENT, [LONG_NOTIFICATION] * 3, indicate=False
            )
            await tb.advertise_legacy()
            link = await tb.connect()
            peer = Peer(link.central)
            if exchange:
                expect(await peer.request_mtu(247) == 247, "MTU exchange did not give 247")
            await discover_service(peer, gatt_db.HEART_RATE_SERVICE)
            hr = one_characteristic(peer, gatt_db.HEART_RATE_MEASUREMENT)
            values = await subscribe_and_collect(peer, hr, 3, notify=True)
            await streamer.finished()
            expect(values == [expected] * 3, f"notifications {values!r}")
            await tb.disconnect(link)


@scenario("segmented_notify")
async def segmented_notify(out_dir: Path) -> None:
    """Application-segmented notifications (counter-example for
    `mtu.truncated-notification`). No MTU exchange (ATT_MTU 23). The central
    subscribes to Heart Rate Measurement; the peripheral sends two 50-byte
    messages as the application would at this MTU, each in chunks of 20, 20
    and 10 bytes on 0x0010. Values of exactly ATT_MTU - 3 with a shorter last
    chunk are segmentation, not truncation: no mtu.* finding. Disconnects with
    0x13."""
    message = bytes(range(50))
    chunks = [message[0:20], message[20:40], message[40:50]] * 2
    async with Testbed(out_dir, "segmented_notify.btsnoop") as tb:
        streamer = SubscriptionStreamer(tb.peripheral, gatt_db.HEART_RATE_MEASUREMENT, chunks, indicate=False)
        await tb.advertise_legacy()
        link = await tb.connect()
        peer = Peer(link.central)
        await discover_service(peer, gatt_db.HEART_RATE_SERVICE)
        hr = one_characteristic(peer, gatt_db.HEART_RATE_MEASUREMENT)
        values = await subscribe_and_collect(peer, hr, len(chunks), notify=True)
        await streamer.finished()
        expect(values == chunks, f"notifications {values!r}")
        await tb.disconnect(link)


@scenario("mid_connection_start")
async def mid_connection_start(out_dir: Path) -> None:
    """A capture that begins mid-connection (no `mtu.*` finding: the ATT_MTU is
    unknown). The central connects, exchanges the MTU (client 247, server
    517: 247), discovers the Heart Rate and custom services and subscribes to
    Heart Rate Measurement (CCCD 0x0011 = `01 00`) with no snooper attached;
    only then does the capture start (`Testbed(capture_later=True)`), like a
    btsnoop log enabled while an app is connected: no init sequence, no
    Connection Complete, no MTU exchange, no discovery in the file. The
    peripheral notifies five 244-byte values on 0x0010 (ATT_MTU - 3, whole)
    and the central writes a 244-byte Write Command to 0x0022 (one 251-byte
    ACL packet: `LargeBufferController`), then disconnects with 0x13. An
    analyzer that assumed ATT_MTU 23 would call the write too long
    (`mtu.write-too-long`) and one that took the largest PDU seen (247) as
    the MTU would call every notification cut (`mtu.truncated-notification`);
    a notification with no CCCD write in the capture is no
    `gatt.unsubscribed-notification` either."""
    async with Testbed(
        out_dir,
        "mid_connection_start.btsnoop",
        central_controller=LargeBufferController,
        capture_later=True,
    ) as tb:
        received = collect_writes(tb, gatt_db.WRITE_NO_RSP_UUID)
        server_hr = gatt_db.find_characteristic(
            tb.peripheral.gatt_server, gatt_db.HEART_RATE_MEASUREMENT
        )
        await tb.advertise_legacy()
        link = await tb.connect()
        peer = Peer(link.central)
        expect(await peer.request_mtu(247) == 247, "MTU exchange did not give 247")
        await discover_service(peer, gatt_db.HEART_RATE_SERVICE)
        await discover_custom_service(peer)
        values: list[bytes] = []
        hr = one_characteristic(peer, gatt_db.HEART_RATE_MEASUREMENT)
        await peer.subscribe(hr, lambda value: values.append(bytes(value)), prefer_notify=True)
        tb.start_capture()
        for value in FULL_VALUES:
            await tb.peripheral.notify_subscriber(link.peripheral, server_hr, value)
        await until(lambda: len(values) == len(FULL_VALUES), "notifications received")
        expect(values == FULL_VALUES, f"notification lengths {[len(v) for v in values]}")
        target = one_characteristic(peer, gatt_db.WRITE_NO_RSP_UUID)
        await peer.write_value(target, FULL_WRITE, with_response=False)
        await until(lambda: received == [FULL_WRITE], "write received")
        await tb.disconnect(link)


@scenario("mtu_write_too_long")
async def mtu_write_too_long(out_dir: Path) -> None:
    """A write longer than ATT_MTU - 3 (`mtu.write-too-long`). No MTU exchange
    (ATT_MTU 23). The central discovers the custom service and sends, at PDU
    level (`gatt_client.send_command`), a Write Command with a 30-byte value
    (bytes 0..29) to Write Without Response (0x0022): a 33-byte ATT PDU.
    Bumble's server accepts it anyway. The central's controller
    (`LargeBufferController`) has 251-byte LE ACL buffers, so the PDU travels
    in one ACL packet (one frame, no L2CAP fragmentation). Disconnects with
    0x13."""
    async with Testbed(
        out_dir, "mtu_write_too_long.btsnoop", central_controller=LargeBufferController
    ) as tb:
        received = collect_writes(tb, gatt_db.WRITE_NO_RSP_UUID)
        await tb.advertise_legacy()
        link = await tb.connect()
        peer = Peer(link.central)
        await discover_custom_service(peer)
        target = one_characteristic(peer, gatt_db.WRITE_NO_RSP_UUID)
        await peer.gatt_client.send_command(
            att.ATT_Write_Command(attribute_handle=target.handle, attribute_value=bytes(range(30)))
        )
        await until(lambda: received == [bytes(range(30))], "oversized write received")
        await tb.disconnect(link)


@scenario("mtu_late_exchange")
async def mtu_late_exchange(out_dir: Path) -> None:
    """An MTU exchange after data already flowed (`mtu.late-exchange`, info).
    The central discovers the Battery service, reads Battery Level (Read
    Request 0x0016, 1 byte back) at ATT_MTU 23, and only then exchanges the
    MTU (client 247, server 517, so 247). Disconnects with 0x13."""
    async with Testbed(out_dir, "mtu_late_exchange.btsnoop") as tb:
        await tb.advertise_legacy()
        link = await tb.connect()
        peer = Peer(link.central)
        await discover_service(peer, gatt_db.BATTERY_SERVICE)
        battery = await peer.read_value(one_characteristic(peer, gatt_db.BATTERY_LEVEL))
        expect(battery == gatt_db.BATTERY_LEVEL_VALUE, f"battery {battery!r}")
        expect(await peer.request_mtu(247) == 247, "MTU exchange did not give 247")
        await tb.disconnect(link)


# -------------------------------------------------------------------- att.*
@scenario("att_protocol_violation")
async def att_protocol_violation(out_dir: Path) -> None:
    """ATT sequencing errors by both sides (`att.protocol-violation`,
    `att.indication-unconfirmed`), all sent as raw PDUs. The central
    discovers the custom service, then (1) sends two Read Requests back to
    back, Device Name (0x0003) and Battery Level (0x0016), without waiting
    for the first response; Bumble's server answers both, in order. (2) The
    peripheral sends a Read Response (`EE`) nobody asked for. (3) The central
    writes `02 00` to the Indicate CCCD (0x0020, Write Response) but its
    client never sends Handle Value Confirmation (suppressed); the
    peripheral sends an indication on 0x001F (`IND\\x01`) and, 0.1 s later
    and still unconfirmed, a second one (`IND\\x02`). (4) The central then
    reads Battery Level (0x0016): it is alive and talking, yet the second
    indication is never confirmed. Disconnects with 0x13."""
    async with Testbed(out_dir, "att_protocol_violation.btsnoop") as tb:
        await tb.advertise_legacy()
        link = await tb.connect()
        peer = Peer(link.central)
        await discover_custom_service(peer)
        client, server = peer.gatt_client, tb.peripheral.gatt_server

        # (1) two outstanding requests
        client.send_gatt_pdu(bytes(att.ATT_Read_Request(attribute_handle=0x0003)))
        client.send_gatt_pdu(bytes(att.ATT_Read_Request(attribute_handle=0x0016)))
        await asyncio.sleep(0.1)
        # (2) an unsolicited response from the server
        server.send_gatt_pdu(link.peripheral, bytes(att.ATT_Read_Response(attribute_value=b"\xee")))
        await asyncio.sleep(0.1)
        # (3) indications without confirmation
        client.send_confirmation = lambda _confirmation: None
        indicate = one_characteristic(peer, gatt_db.INDICATE_UUID)
        received: list[bytes] = []
        await peer.subscribe(indicate, received.append, prefer_notify=False)
        value_handle = gatt_db.find_characteristic(server, gatt_db.INDICATE_UUID).handle
        for value in (b"IND\x01", b"IND\x02"):
            indication = att.ATT_Handle_Value_Indication(
                attribute_handle=value_handle, attribute_value=value
            )
            server.send_gatt_pdu(link.peripheral, bytes(indication))
            await asyncio.sleep(0.1)
        expect(received == [b"IND\x01", b"IND\x02"], f"indications {received!r}")
        # (4) the client keeps talking ATT without confirming
        await client.read_value(0x0016, no_long_read=True)
        await tb.disconnect(link)


# -------------------------------------------------------------------- security.*
@scenario("encryption_failed")
async def encryption_failed(out_dir: Path) -> None:
    """Encryption with a key the peer no longer has
    (`security.encryption-failed`). The central's key store holds an LTK for
    the peripheral (as after an earlier bonding: 16 bytes `B1 EA 00 ..`, EDIV
    0, Rand 0); the peripheral's key store is empty (it "forgot" the bond).
    The central connects and sends LE Enable Encryption; the peripheral's
    host answers the LE Long Term Key Request with a negative reply, and the
    central gets Encryption Change with status 0x06 PIN or Key Missing
    (stock Bumble controller). The central then disconnects with 0x05
    Authentication Failure."""
    async with Testbed(out_dir, "encryption_failed.btsnoop") as tb:
        ltk = PairingKeys.Key(value=bytes([0xB1, 0xEA]) + bytes(14))
        await tb.central.keystore.update(
            str(tb.peripheral_address),
            PairingKeys(address_type=hci.AddressType.RANDOM_DEVICE, ltk=ltk),
        )
        await tb.advertise_legacy()
        link = await tb.connect()
        try:
            await asyncio.wait_for(link.central.encrypt(), STEP_TIMEOUT)
        except hci.HCI_Error as error:
            expect(error.error_code == hci.HCI_ErrorCode.PIN_OR_KEY_MISSING_ERROR, f"{error}")
        else:
            raise ScenarioError("encryption unexpectedly succeeded")
        await tb.disconnect(link, hci.HCI_ErrorCode.AUTHENTICATION_FAILURE_ERROR)


@scenario("repeated_pairing")
async def repeated_pairing(out_dir: Path) -> None:
    """Pairing retried again and again (`security.repeated-pairing`,
    `security.pairing-failed`). As in `pairing_failed`, the peripheral's
    pairing delegate refuses every request; the central sends three SMP
    Pairing Requests on the same connection, each answered by Pairing Failed
    0x05 Pairing Not Supported, then disconnects with 0x13."""
    with reproducible_smp_randomness(seed=0xB1EC):
        async with Testbed(out_dir, "repeated_pairing.btsnoop") as tb:
            tb.central.pairing_config_factory = lambda _: just_works_config()
            tb.peripheral.pairing_config_factory = lambda _: just_works_config(RejectingDelegate())
            await tb.advertise_legacy()
            link = await tb.connect()
            for _ in range(3):
                try:
                    await asyncio.wait_for(link.central.pair(), STEP_TIMEOUT)
                except core.ProtocolError as error:
                    expect(error.error_code == 0x05, f"unexpected pairing failure {error}")
                else:
                    raise ScenarioError("pairing unexpectedly succeeded")
            await tb.disconnect(link)


# -------------------------------------------------------------------- adv.*
@scenario("adv_not_stopped")
async def adv_not_stopped(out_dir: Path) -> None:
    """Peripheral side: advertising re-enabled during a connection
    (`adv.not-stopped`, info). The peripheral advertises (legacy ADV_IND),
    the central connects (the controller stops legacy advertising on
    connection, as the spec requires), and the peripheral's host, as a
    multi-connection peripheral would, starts advertising again while the
    connection is open (LE Set Advertising Parameters / Data / Scan Response
    Data / Enable). 0.3 s later the central disconnects (0x13, seen as a
    remote disconnection). Only the peripheral's view is captured."""
    async with Testbed(out_dir, None, "adv_not_stopped.btsnoop") as tb:
        await tb.advertise_legacy()
        link = await tb.connect()
        await tb.advertise_legacy()
        await asyncio.sleep(0.3)
        await tb.disconnect(link)


# -------------------------------------------------------------------- causes (issue 23)
# Each capture shows one cause of a failure and its consequence, frame by frame.
SMP_TIMEOUT = 30.0  # Core v5.4 Vol 3 Part H 3.4
# What an Android phone asks for when it connects: interval 30 ms, latency 0, supervision
# timeout 5 s (BTM_BLE_CONN_TIMEOUT_DEF); Bumble's default timeout is 720 ms.
PHONE_PREFERENCES = ConnectionParametersPreferences(
    connection_interval_min=30.0,
    connection_interval_max=50.0,
    max_latency=0,
    supervision_timeout=5000,
)
REBOOT_COMMAND = b"\x52\x42"  # "RB": the app's command that makes the peripheral restart
RESTART_ADVERTISING_DELAY = 0.9  # s from the command to the restarted peripheral's advertising
RESTART_ADVERTISING_INTERVAL_MS = 500  # the restarted firmware advertises slowly
SLOW_DELAYS = (2.0, 7.0)  # s the server takes to answer each Write Request in slow_response
SHORT_TIMEOUT_MS = 100  # the supervision timeout the peer asks for in short_supervision


async def connect_with(tb: Testbed, preferences: ConnectionParametersPreferences) -> Link:
    """``Testbed.connect`` with other connection parameters in LE Create Connection."""
    peripheral_side = asyncio.get_running_loop().create_future()
    tb.peripheral.once("connection", peripheral_side.set_result)
    central = await asyncio.wait_for(
        tb.central.connect(
            tb.peripheral_address,
            connection_parameters_preferences={hci.HCI_LE_1M_PHY: preferences},
        ),
        STEP_TIMEOUT,
    )
    return Link(central, await asyncio.wait_for(peripheral_side, STEP_TIMEOUT))


def replace_write_handler(tb: Testbed, uuid: str, write) -> None:
    """Give a server characteristic an application write handler (async allowed)."""
    characteristic = gatt_db.find_characteristic(tb.peripheral.gatt_server, uuid)
    characteristic.value = gatt.CharacteristicValue(write=write)


class PassiveScanLinkLossController(LinkLossController, PassiveScanController):
    """`LinkLossController` whose passive scans report advertisements only."""


@scenario("cause_peer_reset", timeout=40)
async def cause_peer_reset(out_dir: Path) -> None:
    """A peripheral that restarts right after a command, while the phone still
    holds the link (`link.disconnect` warning, cause `peer-reset`; the
    unanswered write is `att.unanswered` info, cause `link-loss`). The central
    connects as an Android phone does (LE Create Connection with interval 30 ms,
    latency 0, supervision timeout 5 s) and discovers the custom service. It
    writes the command `52 42` to Long Value (0x001D) with a Write Request; the
    peripheral's application restarts the device on that command: its
    controller (`LinkLossController`) forgets the link at once without
    LL_TERMINATE_IND, so the write is never answered. The app starts a passive
    legacy scan to find the device again (LE Set Scan Parameters / Enable,
    while the link is open; `PassiveScanController`, so no scan responses). 0.9 s after the write the restarted peripheral
    advertises again (connectable ADV_IND from `C0:11:22:33:44:02`; it asks
    for 500 ms, 800 units of 0.625 ms, which Bumble's legacy advertiser reads
    as 800 ms): the central receives LE Advertising Reports from the address of
    the peer it is still connected to, which a connected peripheral cannot
    send. 5 s after the write (the supervision timeout) the central's
    controller (`LinkLossController`) reports Disconnection Complete 0x08
    Connection Timeout; the app then stops scanning."""
    async with Testbed(
        out_dir,
        "cause_peer_reset.btsnoop",
        central_controller=PassiveScanLinkLossController,
        peripheral_controller=LinkLossController,
    ) as tb:
        commands: list[bytes] = []

        async def restart_on_command(connection, value: bytes) -> None:
            commands.append(bytes(value))
            tb.peripheral_controller.supervision_timeout(connection.handle)
            await asyncio.Event().wait()  # the device restarts: no response ever

        replace_write_handler(tb, gatt_db.LONG_VALUE_UUID, restart_on_command)
        await tb.advertise_legacy()
        link = await connect_with(tb, PHONE_PREFERENCES)
        peer = Peer(link.central)
        await discover_custom_service(peer)
        long_value = one_characteristic(peer, gatt_db.LONG_VALUE_UUID)
        loop = asyncio.get_running_loop()
        write = asyncio.create_task(peer.write_value(long_value, REBOOT_COMMAND, with_response=True))
        await until(lambda: commands == [REBOOT_COMMAND], "command received")
        written = loop.time()
        await tb.central.start_scanning(legacy=True, active=False)
        await asyncio.sleep(max(0.0, written + RESTART_ADVERTISING_DELAY - loop.time()))
        await tb.peripheral.start_advertising(
            advertising_data=LEGACY_ADVERTISING_DATA,
            advertising_interval_min=RESTART_ADVERTISING_INTERVAL_MS,
            advertising_interval_max=RESTART_ADVERTISING_INTERVAL_MS,
        )
        timeout = PHONE_PREFERENCES.supervision_timeout / 1000
        await asyncio.sleep(max(0.0, written + timeout - loop.time()))
        expect(not write.done(), "the write was answered")
        tb.central_controller.supervision_timeout(link.central.handle)
        await wait_disconnected(link)
        await tb.central.stop_scanning(legacy=True)
        tb.stop_capture()
        write.cancel()
        with contextlib.suppress(asyncio.CancelledError, core.BaseBumbleError):
            await write


@scenario("cause_att_timeout_indication", timeout=ATT_TIMEOUT + 20)
async def cause_att_timeout_indication(out_dir: Path) -> None:
    """An indication the peer never confirms, and the ATT transaction timeout
    that ends the link (`link.disconnect` warning, cause `att-timeout`; the
    unconfirmed indication itself is only `att.indication-unconfirmed` info).
    The phone (central) is a GATT server too: Bumble's device has the Generic
    Attribute service (0x1801) with Service Changed (0x2A05, value handle
    0x0008, CCCD 0x0009 in the central's database). The central connects and
    discovers the peer's custom service; the peer's GATT client discovers the
    central's Generic Attribute service and subscribes to Service Changed
    indications (writes `02 00` to 0x0009, Write Response). The central's
    server then sends a Service Changed indication (`01 00 FF FF`: handles
    0x0001-0xFFFF); the peripheral's GATT client never sends Handle Value
    Confirmation (suppressed). Bumble's server gives up after its 30 s
    transaction timer (Core v5.4 Vol 3 Part F 3.3.3: no further ATT PDU may
    be sent on that bearer) and the central's host disconnects at once (HCI
    Disconnect 0x13); its controller (`LocalTerminationController`) reports
    Disconnection Complete 0x16 Connection Terminated By Local Host."""
    async with Testbed(
        out_dir,
        "cause_att_timeout_indication.btsnoop",
        central_controller=LocalTerminationController,
    ) as tb:
        await tb.advertise_legacy()
        link = await tb.connect()
        peer = Peer(link.central)
        await discover_custom_service(peer)
        phone = Peer(link.peripheral)  # the peer's GATT client, on the phone's server
        await discover_service(phone, 0x1801)
        changed = one_characteristic(phone, 0x2A05)
        await phone.subscribe(changed, lambda _value: None, prefer_notify=False)
        link.peripheral.gatt_client.send_confirmation = lambda _confirmation: None
        service_changed = tb.central.gatt_service.service_changed_characteristic
        expect(service_changed.handle == changed.handle, "Service Changed handle")
        try:
            await tb.central.indicate_subscriber(
                link.central, service_changed, struct.pack("<HH", 0x0001, 0xFFFF)
            )
        except TimeoutError:
            pass
        else:
            raise ScenarioError("the indication was confirmed")
        await tb.disconnect(link)


class StalledResponder(smp.Session):
    """An SMP responder that goes silent after its Pairing Random: the initiator's
    DHKey Check is never answered (no DHKey Check, no Pairing Failed)."""

    stalled: list[smp.Session] = []

    def on_smp_pairing_dhkey_check_command(self, command) -> None:
        StalledResponder.stalled.append(self)


@scenario("cause_smp_timeout", timeout=SMP_TIMEOUT + 20)
async def cause_smp_timeout(out_dir: Path) -> None:
    """Pairing that never finishes (`security.pairing-timeout`, cause
    `smp-timeout`). The central pairs (LE Secure Connections, Just Works,
    bonding, seeded as in `pairing_ok`): Pairing Request / Response, Public
    Keys, the responder's Confirm, both Randoms, then the central's DHKey
    Check. The responder's SMP (`StalledResponder`) stops there: no DHKey
    Check, no Pairing Failed, no encryption. Bumble's SMP has no timer;
    the script plays the initiator's 30 s SMP timeout (Core v5.4 Vol 3 Part H
    3.4: the procedure fails and no further SMP PDU is sent): 30 s after its
    DHKey Check the central's host disconnects (HCI Disconnect 0x13) without
    any SMP PDU, and its controller (`LocalTerminationController`) reports
    Disconnection Complete 0x16 Connection Terminated By Local Host. No
    Pairing Failed appears in the capture."""
    StalledResponder.stalled.clear()
    with reproducible_smp_randomness(seed=0xB1ED):
        async with Testbed(
            out_dir, "cause_smp_timeout.btsnoop", central_controller=LocalTerminationController
        ) as tb:
            tb.central.pairing_config_factory = lambda _: just_works_config()
            tb.peripheral.pairing_config_factory = lambda _: just_works_config()
            tb.peripheral.smp_session_proxy = StalledResponder
            await tb.advertise_legacy()
            link = await tb.connect()
            pairing = asyncio.create_task(link.central.pair())
            await until(lambda: bool(StalledResponder.stalled), "DHKey Check at the responder")
            await asyncio.sleep(SMP_TIMEOUT)
            expect(not pairing.done(), "the pairing ended by itself")
            await tb.disconnect(link)
            with contextlib.suppress(asyncio.CancelledError, core.BaseBumbleError):
                await asyncio.wait_for(pairing, STEP_TIMEOUT)
            expect(not link.central.is_encrypted, "the link was encrypted")


@scenario("cause_conn_update_failed")
async def cause_conn_update_failed(out_dir: Path) -> None:
    """A connection update that fails after it was accepted
    (`link.parameter-update-refused`, cause `controller-refused`). The central
    connects (interval 15 ms, latency 0, timeout 720 ms) and asks for a faster
    link: LE Connection Update with interval 7.5 ms (6), latency 0,
    supervision timeout 2 s (200). Its controller (`UpdateRefusingController`)
    answers Command Status 0x00, then 50 ms later LE Connection Update Complete
    with status 0x20 Unsupported LL Parameter Value and the parameters still in
    force (12, 0, 72): the parameters never change. Bumble raises the error;
    the central then reads Battery Level (0x0016, the link still works) and
    disconnects with 0x13."""
    async with Testbed(
        out_dir, "cause_conn_update_failed.btsnoop", central_controller=UpdateRefusingController
    ) as tb:
        await tb.advertise_legacy()
        link = await tb.connect()
        try:
            await tb.central.update_connection_parameters(link.central, 7.5, 7.5, 0, 2000)
        except hci.HCI_Error as error:
            expect(
                error.error_code == hci.HCI_ErrorCode.UNSUPPORTED_LMP_OR_LL_PARAMETER_VALUE_ERROR,
                f"{error}",
            )
        else:
            raise ScenarioError("the update succeeded")
        battery = await Peer(link.central).gatt_client.read_value(0x0016, no_long_read=True)
        expect(battery == gatt_db.BATTERY_LEVEL_VALUE, f"battery {battery!r}")
        await tb.disconnect(link)


@scenario("cause_short_supervision", timeout=40)
async def cause_short_supervision(out_dir: Path) -> None:
    """Parameters that doom the link (`link.disconnect` warning, cause
    `parameters`). The central connects (interval 15 ms, latency 0, timeout
    720 ms) and reads Battery Level (0x0016). The peripheral then sends an
    L2CAP Connection Parameter Update Request (LE signaling channel: interval
    30 ms (24), latency 0, supervision timeout 100 ms (10)); Bumble's host
    accepts it (Connection Parameter Update Response, result 0) and applies it
    (LE Connection Update; Command Status 0x00; LE Connection Update Complete
    0x00 with interval 24, latency 0, timeout 10). The central keeps reading
    Battery Level once a second (3 reads); about 0.11 s after the last
    response (more than the 100 ms in force) the central's controller (`LinkLossController`) reports Disconnection Complete
    0x08 Connection Timeout: one lost burst longer than 100 ms ends such a
    link."""
    async with Testbed(
        out_dir, "cause_short_supervision.btsnoop", central_controller=LinkLossController
    ) as tb:
        await tb.advertise_legacy()
        link = await tb.connect()
        client = Peer(link.central).gatt_client
        await client.read_value(0x0016, no_long_read=True)
        updated = asyncio.get_running_loop().create_future()
        link.central.once("connection_parameters_update", lambda: updated.set_result(None))
        result = await tb.peripheral.l2cap_channel_manager.update_connection_parameters(
            link.peripheral, 24, 24, 0, SHORT_TIMEOUT_MS // 10
        )
        expect(result == l2cap.L2CAP_CONNECTION_PARAMETERS_ACCEPTED_RESULT, f"result {result}")
        await asyncio.wait_for(updated, STEP_TIMEOUT)
        expect(
            link.central.parameters.supervision_timeout == SHORT_TIMEOUT_MS,
            f"timeout {link.central.parameters}",
        )
        for _ in range(3):
            await asyncio.sleep(1.0)
            battery = await client.read_value(0x0016, no_long_read=True)
            expect(battery == gatt_db.BATTERY_LEVEL_VALUE, f"battery {battery!r}")
        await asyncio.sleep(0.106)
        tb.central_controller.supervision_timeout(link.central.handle)
        await wait_disconnected(link)


@scenario("slow_response", timeout=40)
async def slow_response(out_dir: Path) -> None:
    """Slow answers (`att.slow-response`, info). The peripheral's application
    handles writes to Long Value (0x001D) slowly (its write handler sleeps):
    the central discovers the custom service and writes `01` with a Write
    Request, answered after 2 s, then `02`, answered after 7 s: both within
    the 30 s ATT transaction timeout. Disconnects with 0x13."""
    async with Testbed(out_dir, "slow_response.btsnoop") as tb:
        delays = list(SLOW_DELAYS)

        async def slow_write(_connection, _value: bytes) -> None:
            await asyncio.sleep(delays.pop(0))

        replace_write_handler(tb, gatt_db.LONG_VALUE_UUID, slow_write)
        await tb.advertise_legacy()
        link = await tb.connect()
        peer = Peer(link.central)
        await discover_custom_service(peer)
        long_value = one_characteristic(peer, gatt_db.LONG_VALUE_UUID)
        for value in (b"\x01", b"\x02"):
            await peer.write_value(long_value, value, with_response=True)
        expect(not delays, "not every write was handled")
        await tb.disconnect(link)
