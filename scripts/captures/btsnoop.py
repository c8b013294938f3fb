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


# ---------------------------------------------------------------------------
# Frame-level decoding, used to locate the evidence frames of expected findings.
#
# Everything below is decoded from the raw bytes with ``struct`` (Bumble is only
# used above for opcode *names*), so the expectations do not depend on Bumble's
# own packet classes.

# HCI command opcodes (OGF << 10 | OCF)
OP_DISCONNECT = 0x0406
OP_READ_BUFFER_SIZE = 0x1005
OP_LE_READ_BUFFER_SIZE = 0x2002
OP_LE_READ_BUFFER_SIZE_V2 = 0x2060
OP_LE_SET_ADVERTISING_DATA = 0x2008
OP_LE_SET_SCAN_RESPONSE_DATA = 0x2009
OP_LE_SET_ADVERTISING_ENABLE = 0x200A
OP_LE_CREATE_CONNECTION = 0x200D
OP_LE_CREATE_CONNECTION_CANCEL = 0x200E
OP_LE_CONNECTION_UPDATE = 0x2013
OP_LE_ENABLE_ENCRYPTION = 0x2019
OP_LE_SET_EXTENDED_ADVERTISING_DATA = 0x2037
OP_LE_SET_EXTENDED_SCAN_RESPONSE_DATA = 0x2038
OP_LE_SET_EXTENDED_ADVERTISING_ENABLE = 0x2039
OP_LE_EXTENDED_CREATE_CONNECTION = 0x2043
CREATE_CONNECTION_OPCODES = (OP_LE_CREATE_CONNECTION, OP_LE_EXTENDED_CREATE_CONNECTION)

# HCI event codes
EV_DISCONNECTION_COMPLETE = 0x05
EV_ENCRYPTION_CHANGE = 0x08
EV_COMMAND_COMPLETE = 0x0E
EV_COMMAND_STATUS = 0x0F
EV_NUMBER_OF_COMPLETED_PACKETS = 0x13
EV_ENCRYPTION_KEY_REFRESH_COMPLETE = 0x30
EV_ENCRYPTION_CHANGE_V2 = 0x59
# LE Meta subevents
SUB_CONNECTION_COMPLETE = 0x01
SUB_ADVERTISING_REPORT = 0x02
SUB_CONNECTION_UPDATE_COMPLETE = 0x03
SUB_ENHANCED_CONNECTION_COMPLETE = 0x0A
SUB_EXTENDED_ADVERTISING_REPORT = 0x0D
SUB_ADVERTISING_SET_TERMINATED = 0x12
SUB_ENHANCED_CONNECTION_COMPLETE_V2 = 0x29
CONNECTION_COMPLETE_SUBEVENTS = (
    SUB_CONNECTION_COMPLETE,
    SUB_ENHANCED_CONNECTION_COMPLETE,
    SUB_ENHANCED_CONNECTION_COMPLETE_V2,
)

# ATT opcodes
ATT_ERROR_RSP = 0x01
ATT_MTU_REQ, ATT_MTU_RSP = 0x02, 0x03
ATT_FIND_INFO_REQ, ATT_FIND_INFO_RSP = 0x04, 0x05
ATT_FIND_BY_TYPE_REQ, ATT_FIND_BY_TYPE_RSP = 0x06, 0x07
ATT_READ_BY_TYPE_REQ, ATT_READ_BY_TYPE_RSP = 0x08, 0x09
ATT_READ_REQ, ATT_READ_RSP = 0x0A, 0x0B
ATT_READ_BLOB_REQ, ATT_READ_BLOB_RSP = 0x0C, 0x0D
ATT_READ_MULTIPLE_REQ, ATT_READ_MULTIPLE_RSP = 0x0E, 0x0F
ATT_READ_BY_GROUP_REQ, ATT_READ_BY_GROUP_RSP = 0x10, 0x11
ATT_WRITE_REQ, ATT_WRITE_RSP = 0x12, 0x13
ATT_PREPARE_WRITE_REQ, ATT_PREPARE_WRITE_RSP = 0x16, 0x17
ATT_EXECUTE_WRITE_REQ, ATT_EXECUTE_WRITE_RSP = 0x18, 0x19
ATT_NOTIFICATION = 0x1B
ATT_INDICATION, ATT_CONFIRMATION = 0x1D, 0x1E
ATT_READ_MULTIPLE_VARIABLE_REQ, ATT_READ_MULTIPLE_VARIABLE_RSP = 0x20, 0x21
ATT_WRITE_CMD = 0x52
ATT_SIGNED_WRITE_CMD = 0xD2
ATT_REQUEST_TO_RESPONSE = {
    ATT_MTU_REQ: ATT_MTU_RSP,
    ATT_FIND_INFO_REQ: ATT_FIND_INFO_RSP,
    ATT_FIND_BY_TYPE_REQ: ATT_FIND_BY_TYPE_RSP,
    ATT_READ_BY_TYPE_REQ: ATT_READ_BY_TYPE_RSP,
    ATT_READ_REQ: ATT_READ_RSP,
    ATT_READ_BLOB_REQ: ATT_READ_BLOB_RSP,
    ATT_READ_MULTIPLE_REQ: ATT_READ_MULTIPLE_RSP,
    ATT_READ_BY_GROUP_REQ: ATT_READ_BY_GROUP_RSP,
    ATT_WRITE_REQ: ATT_WRITE_RSP,
    ATT_PREPARE_WRITE_REQ: ATT_PREPARE_WRITE_RSP,
    ATT_EXECUTE_WRITE_REQ: ATT_EXECUTE_WRITE_RSP,
    ATT_READ_MULTIPLE_VARIABLE_REQ: ATT_READ_MULTIPLE_VARIABLE_RSP,
}
ATT_REQUESTS = frozenset(ATT_REQUEST_TO_RESPONSE)
ATT_RESPONSES = frozenset(ATT_REQUEST_TO_RESPONSE.values()) | {ATT_ERROR_RSP}
# Requests of the GATT discovery procedures (and their responses).
ATT_DISCOVERY_REQUESTS = frozenset(
    {ATT_FIND_INFO_REQ, ATT_FIND_BY_TYPE_REQ, ATT_READ_BY_TYPE_REQ, ATT_READ_BY_GROUP_REQ}
)
ATT_DISCOVERY = ATT_DISCOVERY_REQUESTS | {
    ATT_FIND_INFO_RSP,
    ATT_FIND_BY_TYPE_RSP,
    ATT_READ_BY_TYPE_RSP,
    ATT_READ_BY_GROUP_RSP,
}
ATT_ATTRIBUTE_NOT_FOUND = 0x0A

# SMP codes
SMP_PAIRING_REQUEST = 0x01
SMP_PAIRING_FAILED = 0x05
SMP_PAIRING_RANDOM = 0x04
SMP_PAIRING_DHKEY_CHECK = 0x0D
# L2CAP LE signaling channel and its Connection Parameter Update Request/Response codes
LE_SIGNALING_CID = 0x0005
L2CAP_CONNECTION_PARAMETER_UPDATE_REQUEST = 0x12
L2CAP_CONNECTION_PARAMETER_UPDATE_RESPONSE = 0x13

UUID_CCCD = 0x2902
UUID_CHARACTERISTIC = 0x2803
PROP_NOTIFY, PROP_INDICATE = 0x10, 0x20


@dataclasses.dataclass
class Frame:
    """One decoded btsnoop record; ``number`` is 1-based, ``time`` in seconds."""

    number: int
    timestamp_us: int
    sent: bool
    packet_type: int
    body: bytes
    # HCI command
    opcode: int | None = None
    # HCI event
    event_code: int | None = None
    subevent: int | None = None
    params: bytes = b""
    # ACL
    handle: int | None = None
    pb_flag: int | None = None
    # Set on the ACL frame that completes an L2CAP PDU (last fragment)
    cid: int | None = None
    pdu: bytes | None = None

    @property
    def time(self) -> float:
        return self.timestamp_us / 1e6

    @property
    def is_acl(self) -> bool:
        return self.packet_type == H4_ACL

    def is_command(self, *opcodes: int) -> bool:
        return self.opcode is not None and (not opcodes or self.opcode in opcodes)

    def is_event(self, code: int, subevents: tuple[int, ...] | None = None) -> bool:
        if self.event_code != code:
            return False
        return subevents is None or self.subevent in subevents

    @property
    def att(self) -> bytes | None:
        """The ATT PDU completed by this frame, if any."""
        return self.pdu if self.cid == ATT_CID else None

    @property
    def att_opcode(self) -> int | None:
        att_pdu = self.att
        return att_pdu[0] if att_pdu else None

    @property
    def smp_code(self) -> int | None:
        return self.pdu[0] if self.cid == SMP_CID and self.pdu else None

    # --- event field accessors (raise if the frame is not that event) -----------
    def command_status(self) -> tuple[int, int]:
        """(status, command opcode) of a Command Status event."""
        assert self.event_code == EV_COMMAND_STATUS
        status, _num, opcode = struct.unpack_from("<BBH", self.params)
        return status, opcode

    def command_complete(self) -> tuple[int, bytes]:
        """(command opcode, return parameters) of a Command Complete event."""
        assert self.event_code == EV_COMMAND_COMPLETE
        _num, opcode = struct.unpack_from("<BH", self.params)
        return opcode, self.params[3:]

    def disconnection(self) -> tuple[int, int, int]:
        """(status, handle, reason) of a Disconnection Complete event."""
        assert self.event_code == EV_DISCONNECTION_COMPLETE
        status, handle, reason = struct.unpack_from("<BHB", self.params)
        return status, handle & 0x0FFF, reason

    def connection_complete(self) -> tuple[int, int, int, str]:
        """(status, handle, role, peer address) of an LE (Enhanced) Connection Complete."""
        assert self.subevent in CONNECTION_COMPLETE_SUBEVENTS
        status, handle, role, _peer_type = struct.unpack_from("<BHBB", self.params, 1)
        address = ":".join(f"{b:02X}" for b in reversed(self.params[6:12]))
        return status, handle & 0x0FFF, role, address

    def connection_parameters(self) -> tuple[int, int, int]:
        """(interval, latency, supervision timeout) in HCI units (1.25 ms, events, 10 ms) of an
        LE (Enhanced) Connection Complete or an LE Connection Update Complete."""
        if self.subevent == SUB_CONNECTION_UPDATE_COMPLETE:
            offset = 4
        elif self.subevent == SUB_CONNECTION_COMPLETE:
            offset = 12
        else:
            assert self.subevent in CONNECTION_COMPLETE_SUBEVENTS
            offset = 24  # after the local and peer resolvable private addresses
        return struct.unpack_from("<HHH", self.params, offset)

    def update_complete(self) -> tuple[int, int]:
        """(status, handle) of an LE Connection Update Complete."""
        assert self.subevent == SUB_CONNECTION_UPDATE_COMPLETE
        status, handle = struct.unpack_from("<BH", self.params, 1)
        return status, handle & 0x0FFF

    def advertising_reports(self) -> list[tuple[str, bool]]:
        """(advertiser address, connectable) of each report of an LE (Extended) Advertising
        Report event (Core v5.4 Vol 4 Part E 7.7.65.2 / 7.7.65.13)."""
        reports = []
        offset = 2
        for _ in range(self.params[1]):
            if self.subevent == SUB_ADVERTISING_REPORT:
                event_type = self.params[offset]
                address = self.params[offset + 2 : offset + 8]
                length = self.params[offset + 8]
                connectable = event_type in (0x00, 0x01)  # ADV_IND, ADV_DIRECT_IND
                offset += 10 + length
            elif self.subevent == SUB_EXTENDED_ADVERTISING_REPORT:
                event_type = struct.unpack_from("<H", self.params, offset)[0]
                address = self.params[offset + 3 : offset + 9]
                length = self.params[offset + 23]
                connectable = bool(event_type & 0x0001) and not event_type & 0x0008
                offset += 24 + length
            else:
                raise AssertionError("not an advertising report")
            reports.append((":".join(f"{b:02X}" for b in reversed(address)), connectable))
        return reports

    def completed_packets(self) -> list[tuple[int, int]]:
        """[(handle, count)] of a Number Of Completed Packets event."""
        assert self.event_code == EV_NUMBER_OF_COMPLETED_PACKETS
        count = self.params[0]
        return [
            (h & 0x0FFF, n)
            for h, n in (struct.unpack_from("<HH", self.params, 1 + 4 * i) for i in range(count))
        ]

    def encryption_change(self) -> tuple[int, int]:
        """(status, handle) of an Encryption Change (v1/v2) / Key Refresh Complete event."""
        assert self.event_code in (
            EV_ENCRYPTION_CHANGE,
            EV_ENCRYPTION_CHANGE_V2,
            EV_ENCRYPTION_KEY_REFRESH_COMPLETE,
        )
        status, handle = struct.unpack_from("<BH", self.params)
        return status, handle & 0x0FFF

    def describe(self) -> str:
        """A short human-readable label, for messages."""
        direction = "TX" if self.sent else "RX"
        if self.opcode is not None:
            return f"#{self.number} {direction} {command_name(self.opcode)}"
        if self.event_code is not None:
            return f"#{self.number} {direction} {event_name(self.event_code, self.subevent)}"
        if self.att is not None:
            return f"#{self.number} {direction} ATT {att_name(self.att[0])}"
        if self.cid == SMP_CID and self.pdu:
            return f"#{self.number} {direction} SMP {smp_name(self.pdu[0])}"
        if self.cid == LE_SIGNALING_CID and self.pdu:
            return f"#{self.number} {direction} L2CAP signaling code 0x{self.pdu[0]:02X}"
        return f"#{self.number} {direction} ACL handle 0x{self.handle or 0:04X}"


def decode_frames(path: Path) -> list[Frame]:
    """Decode every record of a btsnoop file (L2CAP reassembled per direction/handle)."""
    frames = []
    l2cap = _L2capReassembler()
    for number, record in enumerate(read_records(path), start=1):
        packet_type, body = record.data[0], record.data[1:]
        frame = Frame(number, record.timestamp_us, record.sent, packet_type, body)
        if packet_type == H4_COMMAND:
            frame.opcode, length = struct.unpack_from("<HB", body)
            frame.params = body[3 : 3 + length]
        elif packet_type == H4_EVENT:
            frame.event_code, length = body[0], body[1]
            frame.params = body[2 : 2 + length]
            if frame.event_code == LE_META_EVENT:
                frame.subevent = frame.params[0]
        elif packet_type == H4_ACL:
            handle_flags, _length = struct.unpack_from("<HH", body)
            frame.handle, frame.pb_flag = handle_flags & 0x0FFF, (handle_flags >> 12) & 0x3
            completed = l2cap.feed(record.sent, body)
            if completed is not None:
                frame.cid, frame.pdu = completed
        frames.append(frame)
    return frames
