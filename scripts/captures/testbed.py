"""A virtual two-device setup on Bumble's ``LocalLink``.

Each device gets its own ``bumble.controller.Controller`` attached to one shared
``LocalLink`` and its own ``bumble.host.Host`` (via ``Device.with_hci``).  A
``BtSnooper`` is attached to a host *before* power-on, so a capture starts
with the host's HCI_Reset / init sequence exactly like a real btsnoop log.

Fault scenarios can pass their own controller class (``central_controller`` /
``peripheral_controller``, see :mod:`captures.controllers`), add uncaptured
extra peripherals (``extra_peripherals``, addresses ``C0:11:22:33:44:03``...)
or the "bleanalyze Faults" GATT service (``fault_service``).  With
``capture_later=True`` no snooper is attached until :meth:`Testbed.start_capture`,
so the file begins mid-session, like a btsnoop log enabled while an app is
already connected.
"""

from __future__ import annotations

import asyncio
import dataclasses
import struct
from pathlib import Path
from typing import BinaryIO

from bumble import hci
from bumble.controller import Controller
from bumble.device import (
    AdvertisingEventProperties,
    AdvertisingParameters,
    Connection,
    Device,
)
from bumble.link import LocalLink
from bumble.snoop import BtSnooper

from . import gatt_db

CENTRAL_NAME = "bleanalyze-central"
# Random static addresses (two most significant bits set) used on the air.
CENTRAL_ADDRESS = "C0:11:22:33:44:01"
PERIPHERAL_ADDRESS = "C0:11:22:33:44:02"
# Public addresses reported by HCI_Read_BD_ADDR.
CENTRAL_PUBLIC_ADDRESS = "00:11:22:33:44:01"
PERIPHERAL_PUBLIC_ADDRESS = "00:11:22:33:44:02"
# Extra peripherals (pool scenarios): C0:11:22:33:44:03, :04, ... (public 00:...)
EXTRA_PERIPHERAL_BASE = 0x03
# An address nobody on the link uses (stuck connection attempts).
ABSENT_ADDRESS = "C0:11:22:33:44:99"

ADVERTISING_INTERVAL_MS = 50
REMOTE_USER_TERMINATED = hci.HCI_REMOTE_USER_TERMINATED_CONNECTION_ERROR  # 0x13
STEP_TIMEOUT = 10.0  # seconds, for any single wait in a scenario

COMPANY_ID_NORDIC = 0x0059
TX_POWER_DBM = -4

# Without these two features the controller reports legacy LE Advertising
# Report events and the host uses the legacy advertising/scanning commands.
EXTENDED_FEATURES = (
    hci.LeFeatureMask.LE_EXTENDED_ADVERTISING | hci.LeFeatureMask.LE_PERIODIC_ADVERTISING
)


def ad_structure(ad_type: int, payload: bytes) -> bytes:
    """One length-type-value advertising data structure."""
    return bytes([len(payload) + 1, ad_type]) + payload


LEGACY_ADVERTISING_DATA = b"".join(
    [
        ad_structure(0x01, bytes([0x06])),  # Flags: LE General Discoverable, no BR/EDR
        ad_structure(0x09, gatt_db.DEVICE_NAME.encode()),  # Complete Local Name
        ad_structure(0x03, struct.pack("<HH", 0x180D, 0x180F)),  # Complete 16-bit UUIDs
        ad_structure(0x0A, struct.pack("<b", TX_POWER_DBM)),  # TX Power Level
        ad_structure(0xFF, struct.pack("<H", COMPANY_ID_NORDIC)),  # Manufacturer data
    ]
)
assert len(LEGACY_ADVERTISING_DATA) == 31, "legacy advertising data is limited to 31 bytes"

EXTENDED_DEVICE_NAME = "bleanalyze-hr extended advertising demo"
EXTENDED_ADVERTISING_DATA = b"".join(
    [
        ad_structure(0x01, bytes([0x06])),
        ad_structure(0x09, EXTENDED_DEVICE_NAME.encode()),
        ad_structure(0x03, struct.pack("<HHH", 0x180D, 0x180F, 0x180A)),
        ad_structure(0x07, gatt_db.make_uuid(gatt_db.CUSTOM_SERVICE_UUID).uuid_bytes),
        ad_structure(0x16, struct.pack("<H", 0x180F) + gatt_db.BATTERY_LEVEL_VALUE),
        ad_structure(0x0A, struct.pack("<b", TX_POWER_DBM)),
        ad_structure(0xFF, struct.pack("<H", COMPANY_ID_NORDIC) + bytes(range(16))),
    ]
)


@dataclasses.dataclass
class Node:
    """One simulated device: controller + host/device, optionally captured."""

    controller: Controller
    device: Device
    capture_path: Path | None
    capture_file: BinaryIO | None = None


@dataclasses.dataclass
class Link:
    """Both ends of an established LE connection."""

    central: Connection
    peripheral: Connection


class Testbed:
    """A central and a peripheral (with the bleanalyze GATT server) on one LocalLink.

    Use as ``async with Testbed(...) as tb:``; both devices are powered on when
    the block starts and the capture files are closed when it ends.
    """

    def __init__(
        self,
        out_dir: Path,
        central_capture: str | None,
        peripheral_capture: str | None = None,
        extended_advertising: bool = False,
        central_controller: type[Controller] = Controller,
        peripheral_controller: type[Controller] = Controller,
        extra_peripherals: int = 0,
        fault_service: bool = False,
        capture_later: bool = False,
    ) -> None:
        self.out_dir = out_dir
        self._captures = (central_capture, peripheral_capture)
        self._capture_later = capture_later
        self._extended = extended_advertising
        self._controller_classes = (central_controller, peripheral_controller)
        self._extra_peripherals = extra_peripherals
        self._fault_service = fault_service
        self.link = LocalLink()
        self.central: Device
        self.peripheral: Device
        self.central_controller: Controller
        self.peripheral_controller: Controller
        # The peripheral plus the extra ones, in address order.
        self.peripherals: list[Device] = []
        self._nodes: list[Node] = []

    async def __aenter__(self) -> Testbed:
        central_cls, peripheral_cls = self._controller_classes
        central_capture, peripheral_capture = self._captures
        central = self._make_node(
            central_cls,
            "central",
            CENTRAL_NAME,
            CENTRAL_ADDRESS,
            CENTRAL_PUBLIC_ADDRESS,
            central_capture,
        )
        peripheral = self._make_node(
            peripheral_cls,
            "peripheral",
            gatt_db.DEVICE_NAME,
            PERIPHERAL_ADDRESS,
            PERIPHERAL_PUBLIC_ADDRESS,
            peripheral_capture,
        )
        self.central, self.peripheral = central.device, peripheral.device
        self.central_controller, self.peripheral_controller = (
            central.controller,
            peripheral.controller,
        )
        self.peripheral.add_services(gatt_db.build_services())
        if self._fault_service:
            self.peripheral.add_service(gatt_db.build_fault_service(self.peripheral.gatt_server))
        self.peripherals = [self.peripheral]
        for index in range(self._extra_peripherals):
            number = EXTRA_PERIPHERAL_BASE + index
            extra = self._make_node(
                Controller,
                f"peripheral-{number}",
                f"{gatt_db.DEVICE_NAME}-{number}",
                f"C0:11:22:33:44:{number:02X}",
                f"00:11:22:33:44:{number:02X}",
                None,
            )
            extra.device.add_services(gatt_db.build_services())
            self.peripherals.append(extra.device)
        for node in self._nodes:
            await node.device.power_on()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        self.stop_capture()
        for node in self._nodes:
            close = getattr(node.controller, "close", None)
            if close is not None:
                close()

    def start_capture(self) -> None:
        """Attach the snoopers now (``capture_later=True``): the files begin here.

        Nothing before this point is recorded: no init sequence, no connection
        set-up.  ``BtSnooper`` writes the btsnoop header when it is created.
        """
        for node in self._nodes:
            if node.capture_path is not None and node.capture_file is None:
                self._attach_snooper(node)

    def _attach_snooper(self, node: Node) -> None:
        node.capture_file = open(node.capture_path, "wb")
        node.device.host.snooper = BtSnooper(node.capture_file)

    def stop_capture(self) -> None:
        """Detach the snoopers and close the files (nothing more is recorded)."""
        for node in self._nodes:
            node.device.host.snooper = None
            if node.capture_file is not None:
                node.capture_file.close()
                node.capture_file = None

    def _make_node(
        self,
        controller_cls: type[Controller],
        controller_name: str,
        device_name: str,
        address: str,
        public_address: str,
        capture: str | None,
    ) -> Node:
        controller = controller_cls(
            controller_name,
            link=self.link,
            public_address=hci.Address(public_address, hci.Address.PUBLIC_DEVICE_ADDRESS),
        )
        if not self._extended:
            controller.le_features = controller.le_features & ~EXTENDED_FEATURES
        device = Device.with_hci(device_name, hci.Address(address), controller, controller)
        node = Node(controller, device, self.out_dir / capture if capture else None)
        if node.capture_path is not None and not self._capture_later:
            self._attach_snooper(node)
        self._nodes.append(node)
        return node

    @property
    def peripheral_address(self) -> hci.Address:
        """The address the peripheral advertises with (its random static address)."""
        return self.peripheral.random_address

    # ------------------------------------------------------------------ advertising
    async def advertise_legacy(self, device: Device | None = None) -> None:
        """Start connectable, scannable legacy advertising (ADV_IND) on a peripheral."""
        await (device or self.peripheral).start_advertising(
            advertising_data=LEGACY_ADVERTISING_DATA,
            advertising_interval_min=ADVERTISING_INTERVAL_MS,
            advertising_interval_max=ADVERTISING_INTERVAL_MS,
        )

    async def advertise_extended(self) -> None:
        """Start a connectable, non-scannable extended advertising set (> 31 bytes)."""
        await self.peripheral.create_advertising_set(
            advertising_parameters=AdvertisingParameters(
                advertising_event_properties=AdvertisingEventProperties(
                    is_connectable=True, is_scannable=False, is_legacy=False
                ),
                primary_advertising_interval_min=ADVERTISING_INTERVAL_MS,
                primary_advertising_interval_max=ADVERTISING_INTERVAL_MS,
                advertising_sid=1,
            ),
            advertising_data=EXTENDED_ADVERTISING_DATA,
        )

    async def scan(self, reports: int, legacy: bool) -> list[bytes]:
        """Actively scan until ``reports`` reports from the peripheral arrived.

        Returns the advertising data of those reports.  The virtual controller
        emits two reports per advertising PDU (advertisement + scan response),
        so an even count keeps the capture deterministic.
        """
        seen: list[bytes] = []
        done = asyncio.get_running_loop().create_future()

        def on_report(report) -> None:
            if report.address == self.peripheral_address and not done.done():
                seen.append(bytes(report.data))
                if len(seen) == reports:
                    done.set_result(None)

        self.central.host.on("advertising_report", on_report)
        try:
            await self.central.start_scanning(legacy=legacy, active=True)
            await asyncio.wait_for(done, STEP_TIMEOUT)
            await self.central.stop_scanning(legacy=legacy)
        finally:
            self.central.host.remove_listener("advertising_report", on_report)
        return seen

    # ------------------------------------------------------------------ connections
    async def connect(self, device: Device | None = None) -> Link:
        """Connect the central to an advertising peripheral (LE Create Connection)."""
        device = device or self.peripheral
        peripheral_side = asyncio.get_running_loop().create_future()
        device.once("connection", peripheral_side.set_result)
        central_conn = await asyncio.wait_for(
            self.central.connect(device.random_address), STEP_TIMEOUT
        )
        peripheral_conn = await asyncio.wait_for(peripheral_side, STEP_TIMEOUT)
        return Link(central_conn, peripheral_conn)

    async def disconnect(self, link: Link, reason: int = REMOTE_USER_TERMINATED) -> None:
        """Central-initiated disconnection; waits until both hosts saw it."""
        peripheral_done = asyncio.get_running_loop().create_future()
        link.peripheral.once("disconnection", peripheral_done.set_result)
        await asyncio.wait_for(link.central.disconnect(reason), STEP_TIMEOUT)
        await asyncio.wait_for(peripheral_done, STEP_TIMEOUT)
