"""A small, independent btsnoop (datalink 1002, H4) reader and summariser.

It is deliberately separate from Bumble's own packet classes: it re-reads the
files written by the snooper, reassembles L2CAP from ACL fragments and counts
HCI commands/events and ATT/SMP opcodes.  The counts go into the README and
are cross-checked against tshark when it is installed.
"""

from __future__ import annotations

import collections
import dataclasses
import struct
from pathlib import Path

from bumble import att, hci, smp

BTSNOOP_MAGIC = b"btsnoop\0"
BTSNOOP_VERSION = 1
DATALINK_H4 = 1002
RECORD_HEADER = struct.Struct(">IIIIq")

H4_COMMAND, H4_ACL, H4_EVENT = 0x01, 0x02, 0x04
LE_META_EVENT = 0x3E
ATT_CID, SMP_CID = 0x0004, 0x0006


@dataclasses.dataclass(frozen=True)
class Record:
    """One btsnoop record: flags bit 0 is the direction (0 = host->controller)."""

    flags: int
    timestamp_us: int
    data: bytes

    @property
    def sent(self) -> bool:
        """True for host->controller packets."""
        return self.flags & 0x01 == 0


def read_records(path: Path) -> list[Record]:
    """Parse a btsnoop v1 / H4 file, checking header and record lengths."""
    raw = path.read_bytes()
    if raw[:8] != BTSNOOP_MAGIC:
        raise ValueError(f"{path}: not a btsnoop file")
    version, datalink = struct.unpack_from(">II", raw, 8)
    if (version, datalink) != (BTSNOOP_VERSION, DATALINK_H4):
        raise ValueError(f"{path}: unexpected version {version} / datalink {datalink}")
    records, offset = [], 16
    while offset < len(raw):
        original, included, flags, _drops, timestamp = RECORD_HEADER.unpack_from(raw, offset)
        offset += RECORD_HEADER.size
        if original != included or offset + included > len(raw):
            raise ValueError(f"{path}: truncated record at offset {offset}")
        records.append(Record(flags, timestamp, raw[offset : offset + included]))
        offset += included
    return records


def command_name(opcode: int) -> str:
    """``LE_CREATE_CONNECTION`` style name for an HCI opcode."""
    name = hci.HCI_Command.command_name(opcode)
    return name.removeprefix("HCI_").removesuffix("_COMMAND")


def event_name(code: int, subevent: int | None) -> str:
    """``DISCONNECTION_COMPLETE`` / ``LE_ADVERTISING_REPORT`` style event name."""
    if subevent is not None:
        name = hci.HCI_LE_Meta_Event.subevent_name(subevent)
    else:
        name = hci.HCI_Event.event_name(code)
    return name.removeprefix("HCI_").removesuffix("_EVENT")


def att_name(opcode: int) -> str:
    """``READ_REQUEST`` style name for an ATT opcode."""
    try:
        return att.Opcode(opcode).name.removeprefix("ATT_")
    except ValueError:
        return f"UNKNOWN_0x{opcode:02X}"


def smp_name(code: int) -> str:
    """``PAIRING_REQUEST`` style name for an SMP command code."""
    try:
        return smp.CommandCode(code).name
    except ValueError:
        return f"UNKNOWN_0x{code:02X}"


@dataclasses.dataclass
class Summary:
    """Counts for one capture file."""

    frames: int = 0
    commands: collections.Counter[int] = dataclasses.field(default_factory=collections.Counter)
    events: collections.Counter[tuple[int, int | None]] = dataclasses.field(
        default_factory=collections.Counter
    )
    acl_sent: int = 0
    acl_received: int = 0
    att: collections.Counter[int] = dataclasses.field(default_factory=collections.Counter)
    smp: collections.Counter[int] = dataclasses.field(default_factory=collections.Counter)

    def command_counts(self) -> list[tuple[str, int]]:
        """(name, count) per HCI command, in opcode order."""
        return [(command_name(op), n) for op, n in sorted(self.commands.items())]

    def event_counts(self) -> list[tuple[str, int]]:
        """(name, count) per HCI event / LE subevent, in code order."""
        return [
            (event_name(code, sub), n)
            for (code, sub), n in sorted(
                self.events.items(), key=lambda kv: (kv[0][0], kv[0][1] or 0)
            )
        ]

    def att_counts(self) -> list[tuple[str, int, int]]:
        """(name, opcode, count) per ATT opcode."""
        return [(att_name(op), op, n) for op, n in sorted(self.att.items())]

    def smp_counts(self) -> list[tuple[str, int, int]]:
        """(name, code, count) per SMP command."""
        return [(smp_name(code), code, n) for code, n in sorted(self.smp.items())]


class _L2capReassembler:
    """Rebuilds L2CAP frames from ACL packets, per (direction, connection handle)."""

    def __init__(self) -> None:
        self._partial: dict[tuple[bool, int], bytearray] = {}

    def feed(self, sent: bool, payload: bytes) -> tuple[int, bytes] | None:
        """Feed one ACL packet (after the H4 type byte); return (cid, pdu) when complete."""
        handle_flags, length = struct.unpack_from("<HH", payload)
        handle, pb_flag = handle_flags & 0x0FFF, (handle_flags >> 12) & 0x3
        data = payload[4 : 4 + length]
        key = (sent, handle)
        if pb_flag == 0b01:  # continuing fragment
            if key not in self._partial:
                raise ValueError("ACL continuation without a start fragment")
            self._partial[key] += data
        else:
            self._partial[key] = bytearray(data)
        buffer = self._partial[key]
        if len(buffer) < 4:
            return None
        pdu_length, cid = struct.unpack_from("<HH", buffer)
        if len(buffer) < 4 + pdu_length:
            return None
        del self._partial[key]
        return cid, bytes(buffer[4 : 4 + pdu_length])


def summarize(path: Path) -> Summary:
    """Count frames, HCI commands/events, ACL packets and ATT/SMP PDUs in a file."""
    summary = Summary()
    l2cap = _L2capReassembler()
    for record in read_records(path):
        summary.frames += 1
        packet_type, body = record.data[0], record.data[1:]
        if packet_type == H4_COMMAND:
            summary.commands[struct.unpack_from("<H", body)[0]] += 1
        elif packet_type == H4_EVENT:
            code = body[0]
            summary.events[(code, body[2] if code == LE_META_EVENT else None)] += 1
        elif packet_type == H4_ACL:
            if record.sent:
                summary.acl_sent += 1
            else:
                summary.acl_received += 1
            frame = l2cap.feed(record.sent, body)
            if frame is not None:
                cid, pdu = frame
                if cid == ATT_CID:
                    summary.att[pdu[0]] += 1
                elif cid == SMP_CID:
                    summary.smp[pdu[0]] += 1
        else:
            raise ValueError(f"{path}: unexpected H4 packet type 0x{packet_type:02X}")
    return summary
