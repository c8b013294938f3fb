"""Shared by the replay helper scripts: addresses, the peripheral's GATT database and variants.

The peripheral is a Bumble ``Device`` on its own virtual controller; the controller under test
(the one ``bleanalyze replay`` or a Bumble host talks to) shares a ``LocalLink`` with it.  Every
value a test asserts on is defined here, so the Swift tests and the scripts agree.
"""

from __future__ import annotations

import asyncio
import logging
import struct
import sys

from bumble import gatt, hci
from bumble.att import Attribute
from bumble.device import Device

PERIPHERAL_NAME = "bleanalyze-replay"
# Random static addresses (two most significant bits set).
PERIPHERAL_ADDRESS = "C0:5E:1A:00:00:02"
CENTRAL_ADDRESS = "C0:5E:1A:00:00:01"
# Public addresses reported by HCI_Read_BD_ADDR.
CONTROLLER_PUBLIC_ADDRESS = "00:5E:1A:00:00:01"
PERIPHERAL_PUBLIC_ADDRESS = "00:5E:1A:00:00:02"

CUSTOM_SERVICE_UUID = "B1EA0100-4E2A-4D8B-9C3F-5A17E0C0FFEE"
GOLDEN_UUID = "B1EA0101-4E2A-4D8B-9C3F-5A17E0C0FFEE"
GOLDEN_VALUE = b"golden"
OTHER_VALUE = b"changed"
BATTERY_SERVICE = 0x180F
BATTERY_LEVEL = 0x2A19
BATTERY_LEVEL_VALUE = bytes([0x64])
NOTIFIED_BATTERY_LEVEL = bytes([0x63])

ADVERTISING_INTERVAL_MS = 20
STEP_TIMEOUT = 10.0  # seconds, for any single wait

VARIANTS = ("default", "encrypted-char", "other-value", "missing-service")


def advertising_data() -> bytes:
    """Flags, Complete Local Name, Complete 16-bit Service UUIDs (legacy, <= 31 bytes)."""

    def ad(ad_type: int, payload: bytes) -> bytes:
        return bytes([len(payload) + 1, ad_type]) + payload

    return (
        ad(0x01, bytes([0x06]))
        + ad(0x09, PERIPHERAL_NAME.encode())
        + ad(0x03, struct.pack("<H", BATTERY_SERVICE))
    )


def build_services(variant: str) -> list[gatt.Service]:
    """The custom service (one readable characteristic) first, then Battery (read + notify).

    Battery comes last so that ``missing-service`` (which drops it) leaves every other
    handle where it was: the only differences a replay sees are the ones the change causes.
    """
    permissions = Attribute.Permissions.READABLE
    if variant == "encrypted-char":
        permissions |= Attribute.Permissions.READ_REQUIRES_ENCRYPTION
    value = OTHER_VALUE if variant == "other-value" else GOLDEN_VALUE
    golden = gatt.Characteristic(
        GOLDEN_UUID, gatt.Characteristic.Properties.READ, permissions, value
    )
    services = [gatt.Service(CUSTOM_SERVICE_UUID, [golden])]
    if variant != "missing-service":
        battery = gatt.Characteristic(
            gatt.GATT_BATTERY_LEVEL_CHARACTERISTIC,
            gatt.Characteristic.Properties.READ | gatt.Characteristic.Properties.NOTIFY,
            Attribute.Permissions.READABLE,
            BATTERY_LEVEL_VALUE,
        )
        services.append(gatt.Service(gatt.GATT_BATTERY_SERVICE, [battery]))
    return services


def legacy_only(controller) -> None:
    """Hide extended advertising from a controller: hosts then use the legacy LE commands,
    which every controller (Bumble, RootCanal, real chips) implements alike."""
    controller.le_features &= ~(
        hci.LeFeatureMask.LE_EXTENDED_ADVERTISING | hci.LeFeatureMask.LE_PERIODIC_ADVERTISING
    )


def notify_on_subscribe(device: Device) -> None:
    """When a client subscribes to Battery Level, send one notification with a new value."""

    def on_subscription(connection, characteristic, notify_enabled, _indicate_enabled):
        if notify_enabled and characteristic.uuid == gatt.GATT_BATTERY_LEVEL_CHARACTERISTIC:
            asyncio.get_running_loop().create_task(
                device.notify_subscriber(connection, characteristic, NOTIFIED_BATTERY_LEVEL)
            )

    device.on("characteristic_subscription", on_subscription)


def quiet_logging() -> None:
    """Bumble warns about every unsupported command on stderr; keep errors only."""
    logging.basicConfig(level=logging.ERROR, stream=sys.stderr)
