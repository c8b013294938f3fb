"""The peripheral's GATT database, shared by every scenario.

``GATT_SPEC`` is the human-readable definition (print it with
``make_captures.py --print-gatt``).  :func:`build_services` turns it into
Bumble ``gatt.Service`` objects, and :func:`export_database` walks the live
Bumble server afterwards, so the exported JSON contains the handles Bumble
really assigned (including the Generic Access / Generic Attribute services
and the CCCDs that Bumble adds on its own).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

from bumble import gatt, gatt_server
from bumble.core import UUID

DEVICE_NAME = "bleanalyze-hr"
MANUFACTURER_NAME = "bleanalyze"

# Custom 128-bit UUIDs (random version-4 base, "B1EA" prefix for readability).
CUSTOM_SERVICE_UUID = "B1EA0001-4E2A-4D8B-9C3F-5A17E0C0FFEE"
LONG_VALUE_UUID = "B1EA0002-4E2A-4D8B-9C3F-5A17E0C0FFEE"
INDICATE_UUID = "B1EA0003-4E2A-4D8B-9C3F-5A17E0C0FFEE"
WRITE_NO_RSP_UUID = "B1EA0004-4E2A-4D8B-9C3F-5A17E0C0FFEE"
# The "bleanalyze Faults" service, added after the standard database only by
# the scenarios that need a misconfigured server (see build_fault_service).
FAULT_SERVICE_UUID = "B1EA0010-4E2A-4D8B-9C3F-5A17E0C0FFEE"
SECURE_NOTIFY_UUID = "B1EA0011-4E2A-4D8B-9C3F-5A17E0C0FFEE"
CCCD_NO_NOTIFY_UUID = "B1EA0012-4E2A-4D8B-9C3F-5A17E0C0FFEE"

HEART_RATE_SERVICE = 0x180D
HEART_RATE_MEASUREMENT = 0x2A37
BODY_SENSOR_LOCATION = 0x2A38
BATTERY_SERVICE = 0x180F
BATTERY_LEVEL = 0x2A19
DEVICE_INFORMATION_SERVICE = 0x180A
MANUFACTURER_NAME_STRING = 0x2A29
DEVICE_NAME_CHARACTERISTIC = 0x2A00

LONG_VALUE = bytes(range(100))
BATTERY_LEVEL_VALUE = bytes([87])
BODY_SENSOR_LOCATION_CHEST = bytes([0x01])


@dataclasses.dataclass(frozen=True)
class CharacteristicSpec:
    """One characteristic; the CCCD is added by Bumble for notify/indicate."""

    name: str
    uuid: int | str
    properties: tuple[str, ...]
    value: bytes = b""


@dataclasses.dataclass(frozen=True)
class ServiceSpec:
    """One primary service."""

    name: str
    uuid: int | str
    characteristics: tuple[CharacteristicSpec, ...]


GATT_SPEC: tuple[ServiceSpec, ...] = (
    ServiceSpec(
        "Heart Rate",
        HEART_RATE_SERVICE,
        (
            CharacteristicSpec(
                "Heart Rate Measurement",
                HEART_RATE_MEASUREMENT,
                ("notify",),
                bytes([0x00, 60]),
            ),
            CharacteristicSpec(
                "Body Sensor Location",
                BODY_SENSOR_LOCATION,
                ("read",),
                BODY_SENSOR_LOCATION_CHEST,
            ),
        ),
    ),
    ServiceSpec(
        "Battery",
        BATTERY_SERVICE,
        (
            CharacteristicSpec(
                "Battery Level", BATTERY_LEVEL, ("read", "notify"), BATTERY_LEVEL_VALUE
            ),
        ),
    ),
    ServiceSpec(
        "Device Information",
        DEVICE_INFORMATION_SERVICE,
        (
            CharacteristicSpec(
                "Manufacturer Name String",
                MANUFACTURER_NAME_STRING,
                ("read",),
                MANUFACTURER_NAME.encode(),
            ),
        ),
    ),
    ServiceSpec(
        "bleanalyze Custom",
        CUSTOM_SERVICE_UUID,
        (
            CharacteristicSpec("Long Value", LONG_VALUE_UUID, ("read", "write"), LONG_VALUE),
            CharacteristicSpec("Indicate", INDICATE_UUID, ("indicate",)),
            CharacteristicSpec(
                "Write Without Response", WRITE_NO_RSP_UUID, ("write_without_response",)
            ),
        ),
    ),
)

FAULT_SPEC = ServiceSpec(
    "bleanalyze Faults",
    FAULT_SERVICE_UUID,
    (
        CharacteristicSpec("Secure Notify", SECURE_NOTIFY_UUID, ("notify",)),
        CharacteristicSpec("CCCD Without Notify", CCCD_NO_NOTIFY_UUID, ("read", "write"), b"\x00"),
    ),
)

# Names for the attributes Bumble adds by itself (default services, CCCDs).
KNOWN_NAMES = {
    "1800": "Generic Access",
    "1801": "Generic Attribute",
    "2A00": "Device Name",
    "2A01": "Appearance",
    "2A05": "Service Changed",
    "2B29": "Client Supported Features",
    "2B2A": "Database Hash",
    "2902": "Client Characteristic Configuration",
}


def make_uuid(uuid: int | str) -> UUID:
    """Build a Bumble UUID from a 16-bit int or a 128-bit string."""
    return UUID.from_16_bits(uuid) if isinstance(uuid, int) else UUID(uuid)


def uuid_text(uuid: UUID) -> str:
    """Canonical text: ``180D`` for SIG 16-bit UUIDs, upper-case dashed 128-bit otherwise."""
    raw = uuid.uuid_bytes
    if len(raw) == 2:
        return f"{int.from_bytes(raw, 'little'):04X}"
    return uuid128_text(uuid)


def uuid128_text(uuid: UUID) -> str:
    """The full 128-bit form of any UUID (upper-case, dashed)."""
    full = bytes(reversed(uuid.uuid_128_bytes)).hex().upper()
    return f"{full[:8]}-{full[8:12]}-{full[12:16]}-{full[16:20]}-{full[20:]}"


def _properties(names: Sequence[str]) -> gatt.Characteristic.Properties:
    props = gatt.Characteristic.Properties(0)
    for name in names:
        props |= gatt.Characteristic.Properties[name.upper()]
    return props


def _permissions(names: Sequence[str]) -> gatt.Characteristic.Permissions:
    perms = gatt.Characteristic.Permissions(0)
    if "read" in names:
        perms |= gatt.Characteristic.Permissions.READABLE
    if "write" in names or "write_without_response" in names:
        perms |= gatt.Characteristic.Permissions.WRITEABLE
    return perms


def build_services() -> list[gatt.Service]:
    """Instantiate fresh Bumble services for :data:`GATT_SPEC`."""
    return [
        gatt.Service(
            make_uuid(service.uuid),
            [
                gatt.Characteristic(
                    make_uuid(char.uuid),
                    _properties(char.properties),
                    _permissions(char.properties),
                    char.value,
                )
                for char in service.characteristics
            ],
        )
        for service in GATT_SPEC
    ]


def build_fault_service(server: gatt_server.Server) -> gatt.Service:
    """The "bleanalyze Faults" service (:data:`FAULT_SPEC`) with explicit CCCDs.

    * Secure Notify (notify): its CCCD is readable but writable only over an
      encrypted link (WRITE_REQUIRES_ENCRYPTION), so an unencrypted subscription
      gets Error Response 0x0F Insufficient Encryption.
    * CCCD Without Notify (read, write): has a CCCD although its properties
      have neither Notify nor Indicate (a server bug); writes to it succeed.

    Both CCCDs use the server's own CCCD value, so subscriptions behave as for
    the CCCDs Bumble adds by itself (Bumble adds none here: one is present).
    """
    cccd_uuid = gatt.GATT_CLIENT_CHARACTERISTIC_CONFIGURATION_DESCRIPTOR
    secure_spec, no_notify_spec = FAULT_SPEC.characteristics
    secure = gatt.Characteristic(
        make_uuid(secure_spec.uuid),
        _properties(secure_spec.properties),
        _permissions(secure_spec.properties),
        secure_spec.value,
    )
    secure.descriptors = [
        gatt.Descriptor(
            cccd_uuid,
            gatt.Attribute.READABLE | gatt.Attribute.WRITE_REQUIRES_ENCRYPTION,
            server.make_descriptor_value(secure),
        )
    ]
    no_notify = gatt.Characteristic(
        make_uuid(no_notify_spec.uuid),
        _properties(no_notify_spec.properties),
        _permissions(no_notify_spec.properties),
        no_notify_spec.value,
    )
    no_notify.descriptors = [
        gatt.Descriptor(
            cccd_uuid,
            gatt.Attribute.READABLE | gatt.Attribute.WRITEABLE,
            server.make_descriptor_value(no_notify),
        )
    ]
    return gatt.Service(make_uuid(FAULT_SPEC.uuid), [secure, no_notify])


def find_characteristic(server: gatt_server.Server, uuid: int | str) -> gatt.Characteristic:
    """Return the server-side characteristic (value attribute) with this UUID."""
    wanted = make_uuid(uuid)
    for attribute in server.attributes:
        if isinstance(attribute, gatt.Characteristic) and attribute.uuid == wanted:
            return attribute
    raise KeyError(f"no characteristic {wanted}")


def _spec_names() -> dict[str, str]:
    names = dict(KNOWN_NAMES)
    for service in (*GATT_SPEC, FAULT_SPEC):
        names[uuid_text(make_uuid(service.uuid))] = service.name
        for char in service.characteristics:
            names[uuid_text(make_uuid(char.uuid))] = char.name
    return names


def _property_names(props: int) -> list[str]:
    return [
        flag.name.lower()
        for flag in gatt.Characteristic.Properties
        if flag.name is not None and props & flag
    ]


def export_database(server: gatt_server.Server, description: str | None = None) -> dict[str, Any]:
    """Walk a Bumble GATT server's attribute table and describe it as JSON data.

    Every attribute is visited in handle order, so the result mirrors what a
    client discovers: services (with handle range), characteristics (declaration
    handle, value handle, properties) and descriptors.
    """
    names = _spec_names()
    services: list[dict[str, Any]] = []
    current_char: dict[str, Any] | None = None
    for attribute in server.attributes:
        if isinstance(attribute, gatt.Service):
            text = uuid_text(attribute.uuid)
            services.append(
                {
                    "uuid": text,
                    "uuid128": uuid128_text(attribute.uuid),
                    "name": names.get(text, ""),
                    "primary": attribute.primary,
                    "start_handle": attribute.handle,
                    "end_handle": attribute.end_group_handle,
                    "characteristics": [],
                }
            )
            current_char = None
        elif isinstance(attribute, gatt.CharacteristicDeclaration):
            char = attribute.characteristic
            text = uuid_text(char.uuid)
            current_char = {
                "uuid": text,
                "uuid128": uuid128_text(char.uuid),
                "name": names.get(text, ""),
                "declaration_handle": attribute.handle,
                "value_handle": attribute.value_handle,
                "end_handle": attribute.end_group_handle,
                "properties": _property_names(char.properties),
                "properties_value": int(char.properties),
                "descriptors": [],
            }
            if isinstance(char.value, bytes):
                current_char["value_hex"] = char.value.hex()
            services[-1]["characteristics"].append(current_char)
        elif isinstance(attribute, gatt.Characteristic):
            continue  # the value attribute, already described by its declaration
        else:
            assert current_char is not None, f"orphan attribute {attribute}"
            text = uuid_text(attribute.type)
            current_char["descriptors"].append(
                {"uuid": text, "name": names.get(text, ""), "handle": attribute.handle}
            )
    exported: dict[str, Any] = {"description": description} if description else {}
    return exported | {
        "device_name": DEVICE_NAME,
        "attribute_count": len(server.attributes),
        "uuid_format": "16-bit SIG UUIDs as 4 upper-case hex digits, others as "
        "upper-case dashed 128-bit; uuid128 is always the full 128-bit form",
        "services": services,
    }


def spec_as_text() -> str:
    """Render :data:`GATT_SPEC` as an indented outline (for ``--print-gatt``)."""
    lines = ["Generic Access (1800) and Generic Attribute (1801): added by Bumble"]
    for service in GATT_SPEC:
        lines.append(f"{service.name} ({uuid_text(make_uuid(service.uuid))})")
        for char in service.characteristics:
            value = f" value={char.value.hex()}" if char.value else ""
            cccd = " +CCCD" if {"notify", "indicate"} & set(char.properties) else ""
            lines.append(
                f"  {char.name} ({uuid_text(make_uuid(char.uuid))})"
                f" [{', '.join(char.properties)}]{cccd}{value}"
            )
    lines.append(
        f"{FAULT_SPEC.name} ({uuid_text(make_uuid(FAULT_SPEC.uuid))}): only in the scenarios "
        "that need it (see build_fault_service)"
    )
    lines.append("  Secure Notify [notify] +CCCD writable only when encrypted")
    lines.append("  CCCD Without Notify [read, write] +CCCD (a server bug) value=00")
    return "\n".join(lines)
