"""A reference implementation of docs/RULES.md, in Python, for cross-checking.

The expected-findings files are written from the per-scenario expectation
functions (:mod:`captures.expectations`), which locate the frames from what
each scenario did.  This module evaluates *all* rules generically over a
capture; ``make_captures.py`` fails when the two disagree, which catches
findings a scenario produces incidentally (and mistakes in either).

It is not the product: the detectors live in Sources/BLEAnalysis.  Where
RULES.md leaves room for interpretation, the choice made here is documented in
captures/README.md ("Rule interpretations") and must match the detectors.
"""

from __future__ import annotations

import collections
import dataclasses
import struct

from .btsnoop import (
    ATT_ATTRIBUTE_NOT_FOUND,
    ATT_CONFIRMATION,
    ATT_DISCOVERY,
    ATT_DISCOVERY_REQUESTS,
    ATT_ERROR_RSP,
    ATT_FIND_INFO_RSP,
    ATT_INDICATION,
    ATT_MTU_REQ,
    ATT_MTU_RSP,
    ATT_NOTIFICATION,
    ATT_READ_BLOB_REQ,
    ATT_READ_BY_TYPE_REQ,
    ATT_READ_BY_TYPE_RSP,
    ATT_READ_REQ,
    ATT_READ_RSP,
    ATT_REQUESTS,
    ATT_RESPONSES,
    ATT_WRITE_CMD,
    ATT_WRITE_REQ,
    ATT_WRITE_RSP,
    CONNECTION_COMPLETE_SUBEVENTS,
    CREATE_CONNECTION_OPCODES,
    EV_COMMAND_COMPLETE,
    EV_COMMAND_STATUS,
    EV_DISCONNECTION_COMPLETE,
    EV_ENCRYPTION_CHANGE,
    EV_ENCRYPTION_CHANGE_V2,
    EV_ENCRYPTION_KEY_REFRESH_COMPLETE,
    EV_NUMBER_OF_COMPLETED_PACKETS,
    LE_META_EVENT,
    OP_DISCONNECT,
    OP_LE_CREATE_CONNECTION_CANCEL,
    OP_LE_ENABLE_ENCRYPTION,
    OP_LE_READ_BUFFER_SIZE,
    OP_LE_READ_BUFFER_SIZE_V2,
    OP_LE_SET_ADVERTISING_DATA,
    OP_LE_SET_ADVERTISING_ENABLE,
    OP_LE_SET_EXTENDED_ADVERTISING_DATA,
    OP_LE_SET_EXTENDED_ADVERTISING_ENABLE,
    OP_LE_SET_SCAN_RESPONSE_DATA,
    OP_READ_BUFFER_SIZE,
    PROP_INDICATE,
    PROP_NOTIFY,
    SMP_CID,
    SMP_PAIRING_FAILED,
    SMP_PAIRING_REQUEST,
    SUB_ADVERTISING_REPORT,
    SUB_CONNECTION_UPDATE_COMPLETE,
    SUB_EXTENDED_ADVERTISING_REPORT,
    UUID_CCCD,
    UUID_CHARACTERISTIC,
    Frame,
)
from .findings import (
    ATT_TIMEOUT,
    CANCELLED_STATUSES,
    COMMAND_DISALLOWED,
    IDLE,
    INSUFFICIENT_SECURITY_ERRORS,
    POOL_FULL_STATUSES,
    SILENCE,
    SLOW_RESPONSE,
    SMP_TIMEOUT,
    TIMER_MARGIN,
    STALL,
    STUCK_TIMEOUT,
    SUBSCRIPTION_WAIT,
    WARNING_DISCONNECT_REASONS,
    Finding,
    finding,
    fold,
    sort_findings,
)

ROLE_PERIPHERAL = 0x01
# Disconnection reasons and the cause kind they are on their own (link losses other than 0x08).
REASON_CAUSES = {0x22: "ll-procedure", 0x28: "ll-procedure", 0x3D: "mic-failure", 0x3E: "establishment", 0x06: "key-missing"}
# A connection update this close before a loss is a suspect even when it did not shorten the
# supervision timeout.
PARAMETERS_CHANGED_BEFORE_LOSS = 2.0


@dataclasses.dataclass
class Request:
    frame: Frame
    opcode: int
    handle: int | None  # attribute handle, when the request has one
    value: bytes = b""
    read_by_type_uuid: int | None = None


@dataclasses.dataclass
class Subscription:
    cccd: int
    request: Frame
    response: Frame
    value_handle: int | None
    notified: bool = False


@dataclasses.dataclass
class Bearer:
    """ATT state of one connection for one client side (local or remote client)."""

    outstanding: collections.deque = dataclasses.field(default_factory=collections.deque)
    unconfirmed: collections.deque = dataclasses.field(default_factory=collections.deque)
    # GATT knowledge from discovery: value handle -> properties; CCCD handles
    characteristics: dict[int, int] = dataclasses.field(default_factory=dict)
    cccds: set[int] = dataclasses.field(default_factory=set)
    cccd_written: set[int] = dataclasses.field(default_factory=set)
    subscriptions: dict[int, Subscription] = dataclasses.field(default_factory=dict)
    notified_handles: set[int] = dataclasses.field(default_factory=set)
    truncated_reads: list[tuple[Frame, Request]] = dataclasses.field(default_factory=list)
    read_blobs: list[tuple[Frame, int]] = dataclasses.field(default_factory=list)
    # (error frame, request, ok-after frames) for CCCD write errors / insufficient security
    cccd_errors: list[tuple[Frame, Request]] = dataclasses.field(default_factory=list)
    cccd_successes: list[tuple[Frame, int]] = dataclasses.field(default_factory=list)
    insufficient: list[tuple[Frame, Request]] = dataclasses.field(default_factory=list)
    successes: list[tuple[Frame, int, int | None]] = dataclasses.field(default_factory=list)
    requests_seen: list[tuple[Frame, int, int | None]] = dataclasses.field(default_factory=list)

    def value_handle_of(self, cccd: int) -> int | None:
        """The characteristic a descriptor belongs to: highest value handle below it."""
        below = [h for h in self.characteristics if h < cccd]
        return max(below) if below else None


@dataclasses.dataclass
class Connection:
    handle: int
    role: int | None
    peer: str | None
    complete: Frame  # the Connection Complete, or the first frame of an inferred connection
    last_data: Frame | None = None
    last_rx: Frame | None = None
    silent_tx: Frame | None = None  # last TX of a silent period >= SILENCE
    mtu: int = 23
    mtu_exchanged: bool = False
    # A connection whose set-up is not in the capture (first seen in ACL): its ATT_MTU is
    # unknown; ``mtu`` is then only a lower bound, the largest ATT PDU seen (RULES.md).
    inferred: bool = False
    mtu_known: bool = True
    client_mtu: int | None = None
    server_mtu: int | None = None
    first_data: Frame | None = None
    late_exchange_reported: bool = False
    truncated_notified: set[int] = dataclasses.field(default_factory=set)
    bearers: dict[bool, Bearer] = dataclasses.field(default_factory=dict)
    pairing_requests: list[Frame] = dataclasses.field(default_factory=list)
    encrypted_at: list[Frame] = dataclasses.field(default_factory=list)
    disconnect_reason: int | None = None
    # (frame, supervision timeout in 10 ms units) of the Connection Complete and of every
    # successful LE Connection Update Complete, in order
    timeouts: list[tuple[Frame, int]] = dataclasses.field(default_factory=list)
    disconnect_command: Frame | None = None  # the host's HCI Disconnect for this handle
    last_smp: Frame | None = None
    pairing_open: bool = False  # a Pairing Request not yet ended by Pairing Failed / encryption
    att_timeout_key: Frame | None = None  # the transaction whose 30 s timeout closed the link
    key_missing: Frame | None = None  # an Encryption Change with PIN or Key Missing (0x06)
    # ATT PDUs sent by the host / received (to tell whether a client spoke after an indication)
    att_tx: int = 0
    att_rx: int = 0
    last_att_tx: Frame | None = None
    last_att_rx: Frame | None = None
    # value handle -> [full values, shorter values, longest, first full frame, last frame, host sent]
    value_stats: dict[int, list] = dataclasses.field(default_factory=dict)
    # first notification/indication of a handle with no CCCD written: (frame, sent by the host)
    unsubscribed: list[tuple[Frame, bool]] = dataclasses.field(default_factory=list)
    # flow.skipped-ready (b): the host's run of full ATT_MTU-3 chunks (count, last chunk, gaps),
    # and a stall waiting for the run to resume (last chunk, first chunk after, pace, resumed)
    chunk_run: int = 0
    last_chunk: Frame | None = None
    chunk_gaps: list[float] = dataclasses.field(default_factory=list)
    stall_candidate: tuple | None = None

    def bearer(self, local_client: bool) -> Bearer:
        return self.bearers.setdefault(local_client, Bearer())


@dataclasses.dataclass
class Attempt:
    create: Frame
    pending: Attempt | None = None  # the attempt still pending when this one was issued
    status: Frame | None = None
    cancel: Frame | None = None
    end: Frame | None = None  # completion, rejection, or the create command superseding it
    accept_list: bool = False  # initiator filter policy 1: background auto-connect

    @property
    def ends_at(self) -> Frame | None:
        """Whichever ended the attempt first: its end or a Cancel."""
        ends = [f for f in (self.end, self.cancel) if f is not None]
        return min(ends, key=lambda f: f.number) if ends else None


class Engine:
    """Single pass over the frames; ``run()`` returns the findings."""

    def __init__(self, frames: list[Frame]) -> None:
        self.frames = frames
        self.findings: list[Finding] = []
        self.connections: dict[int, Connection] = {}
        self.attempts: list[Attempt] = []
        self.pending_commands: dict[int, collections.deque[Frame]] = collections.defaultdict(
            collections.deque
        )
        self.open_max = 0
        self.open_max_frame: Frame | None = None
        self.disconnections: list[Frame] = []
        self.att_errors: set[tuple[int, int]] = set()
        self.idle_reported: set[tuple[int, int]] = set()
        # flow control
        self.credits: int | None = None
        self.acl_credits: int | None = None
        self.in_flight: dict[int, collections.deque[Frame]] = collections.defaultdict(
            collections.deque
        )
        self.armed: dict[int, Frame | None] = {}  # handle -> NOCP that returned credit
        # security
        self.peer_pairing: dict[str, list[tuple[int, Frame]]] = collections.defaultdict(list)
        self.repeated_reported: set[object] = set()
        self.pairing_failures: list[tuple[Frame, Frame | None, int, str]] = []
        self.closed: list[Connection] = []
        # adv.oversize for reports heard: first problem frame per advertiser address
        self.bad_advertisers: dict[str, Frame] = {}
        # connectable advertising reports heard, per advertiser address
        self.connectable_reports: dict[str, list[Frame]] = collections.defaultdict(list)

    # ------------------------------------------------------------------ helpers
    def add(
        self, rule: str, severity: str, connection: int | None, *frames, why: str = "", cause=None
    ) -> None:
        self.findings.append(finding(rule, severity, connection, *frames, why=why, cause=cause))

    @property
    def free_credits(self) -> int | None:
        total = self.credits if self.credits else self.acl_credits
        if total is None:
            return None
        return total - sum(len(q) for q in self.in_flight.values())

    # ------------------------------------------------------------------ main loop
    def run(self) -> list[Finding]:
        for frame in self.frames:
            if frame.opcode is not None:
                self.on_command(frame)
            elif frame.event_code is not None:
                self.on_event(frame)
            elif frame.is_acl:
                self.on_acl(frame)
        self.finish()
        return sort_findings(fold(self.findings))

    # ------------------------------------------------------------------ commands
    def on_command(self, frame: Frame) -> None:
        self.pending_commands[frame.opcode].append(frame)
        if frame.opcode in CREATE_CONNECTION_OPCODES:
            # The attempt waits for its Command Status (on_create_status): a create the controller
            # rejects must not replace the one still pending.
            # Initiator_Filter_Policy: 5th parameter byte of LE Create Connection, 1st of
            # LE Extended Create Connection; 1 = connect to the filter accept list.
            policy = (
                frame.params[4] if frame.opcode == CREATE_CONNECTION_OPCODES[0] else frame.params[0]
            )
            self.attempts.append(
                Attempt(frame, pending=self.active_attempt(), accept_list=policy == 0x01)
            )
        elif frame.opcode == OP_LE_CREATE_CONNECTION_CANCEL:
            attempt = self.active_attempt()
            if attempt is not None and attempt.cancel is None:
                attempt.cancel = frame
        elif frame.opcode in (OP_LE_SET_ADVERTISING_ENABLE, OP_LE_SET_EXTENDED_ADVERTISING_ENABLE):
            if frame.params and frame.params[0] == 0x01:
                for conn in self.connections.values():
                    if conn.role == ROLE_PERIPHERAL:
                        self.add("adv.not-stopped", "info", conn.handle, frame)
        elif frame.opcode in (OP_LE_SET_ADVERTISING_DATA, OP_LE_SET_SCAN_RESPONSE_DATA):
            length = frame.params[0]
            data = frame.params[1 : 1 + length]
            if length > 31 or not ad_well_formed(data):
                self.add("adv.oversize", "warning", None, frame)
        elif frame.opcode == OP_DISCONNECT:
            handle = struct.unpack_from("<H", frame.params)[0] & 0x0FFF
            conn = self.connections.get(handle)
            if conn is not None and conn.disconnect_command is None:
                conn.disconnect_command = frame
        elif frame.opcode == OP_LE_SET_EXTENDED_ADVERTISING_DATA:
            length = frame.params[3]
            if not ad_well_formed(frame.params[4 : 4 + length]):
                self.add("adv.oversize", "warning", None, frame)

    def active_attempt(self) -> Attempt | None:
        for attempt in reversed(self.attempts):
            if attempt.end is None and attempt.status is not None:
                return attempt
        return None

    # ------------------------------------------------------------------ events
    def on_event(self, frame: Frame) -> None:
        code = frame.event_code
        if code == EV_COMMAND_STATUS:
            status, opcode = frame.command_status()
            command = self.pop_command(opcode)
            if opcode in CREATE_CONNECTION_OPCODES and command is not None:
                self.on_create_status(next(a for a in self.attempts if a.create is command), frame)
            elif opcode == OP_LE_ENABLE_ENCRYPTION and status != 0:
                handle = struct.unpack_from("<H", command.params)[0] if command else None
                self.add("security.encryption-failed", "error", handle, frame)
        elif code == EV_COMMAND_COMPLETE:
            opcode, ret = frame.command_complete()
            self.pop_command(opcode)
            if opcode in (OP_LE_READ_BUFFER_SIZE, OP_LE_READ_BUFFER_SIZE_V2) and ret[0] == 0:
                self.credits = ret[3]
            elif opcode == OP_READ_BUFFER_SIZE and ret[0] == 0:
                self.acl_credits = struct.unpack_from("<H", ret, 4)[0]
        elif code == LE_META_EVENT and frame.subevent in CONNECTION_COMPLETE_SUBEVENTS:
            self.on_connection_complete(frame)
        elif code == EV_DISCONNECTION_COMPLETE:
            self.on_disconnection(frame)
        elif code == EV_NUMBER_OF_COMPLETED_PACKETS:
            for handle, count in frame.completed_packets():
                queue = self.in_flight[handle]
                for _ in range(min(count, len(queue))):
                    queue.popleft()
            free = self.free_credits
            if free is not None and free > 0:
                for handle in [h for h, nocp in self.armed.items() if nocp is None]:
                    self.armed[handle] = frame
        elif code in (
            EV_ENCRYPTION_CHANGE,
            EV_ENCRYPTION_CHANGE_V2,
            EV_ENCRYPTION_KEY_REFRESH_COMPLETE,
        ):
            status, handle = frame.encryption_change()
            if status != 0:
                self.add("security.encryption-failed", "error", handle, frame)
                if status == 0x06 and handle in self.connections:
                    self.connections[handle].key_missing = frame
            elif handle in self.connections:
                self.connections[handle].encrypted_at.append(frame)
                self.connections[handle].pairing_open = False
        elif code == LE_META_EVENT and frame.subevent == SUB_CONNECTION_UPDATE_COMPLETE:
            status, handle = frame.update_complete()
            if status != 0:
                # Accepted in its Command Status, refused by the link layer: nothing changed.
                self.add(
                    "link.parameter-update-refused", "warning", handle, frame,
                    cause=("controller-refused", frame),
                )
            elif handle in self.connections:
                self.connections[handle].timeouts.append((frame, frame.connection_parameters()[2]))
        elif code == LE_META_EVENT and frame.subevent in (
            SUB_ADVERTISING_REPORT,
            SUB_EXTENDED_ADVERTISING_REPORT,
        ):
            for address, connectable in frame.advertising_reports():
                if connectable:
                    self.connectable_reports[address].append(frame)
        if code == LE_META_EVENT and frame.subevent == SUB_ADVERTISING_REPORT:
            offset = 2
            for _ in range(frame.params[1]):
                length = frame.params[offset + 8]
                data = frame.params[offset + 9 : offset + 9 + length]
                if length > 31 or not ad_well_formed(data):
                    address = ":".join(f"{b:02X}" for b in reversed(frame.params[offset + 2 : offset + 8]))
                    self.bad_advertisers.setdefault(address, frame)
                    break
                offset += 10 + length

    def on_create_status(self, attempt: Attempt, frame: Frame) -> None:
        """A create's Command Status: accepted, it is the pending attempt; rejected, it never
        started and whatever was pending stays pending."""
        status = frame.command_status()[0]
        previous = self.active_attempt()
        attempt.status = frame
        if status != 0:
            attempt.end = frame
            if status in POOL_FULL_STATUSES:
                self.add("pool.full", "error", None, frame, attempt.create)
            elif status == COMMAND_DISALLOWED and attempt.pending is not None:
                self.add(
                    "pool.rejected-attempt", "warning", None, frame, attempt.create,
                    attempt.pending.create,
                )
            return
        if previous is not None:
            previous.end = attempt.create  # superseded by a new attempt (same transport: LE)
        if attempt.accept_list:
            return  # background auto-connect does not compete for a slot
        create = attempt.create
        for conn in self.connections.values():
            reference = conn.last_data or conn.complete
            if (
                not conn.inferred
                and create.time - reference.time >= IDLE
                and (conn.handle, reference.number) not in self.idle_reported
            ):
                self.idle_reported.add((conn.handle, reference.number))
                self.add("pool.idle-connection", "warning", conn.handle, reference, create)

    def pop_command(self, opcode: int) -> Frame | None:
        queue = self.pending_commands.get(opcode)
        return queue.popleft() if queue else None

    def on_connection_complete(self, frame: Frame) -> None:
        status, handle, role, peer = frame.connection_complete()
        attempt = self.active_attempt() if role != ROLE_PERIPHERAL else None
        if attempt is not None:
            attempt.end = frame
            if status in CANCELLED_STATUSES and attempt.cancel is not None:
                self.add(
                    "pool.cancelled-attempt", "info", None, attempt.create, attempt.cancel, frame
                )
            elif status in POOL_FULL_STATUSES:
                self.add("pool.full", "error", None, frame, attempt.create)
        if status != 0:
            return
        conn = Connection(handle, role, peer, frame, last_rx=frame)
        conn.timeouts.append((frame, frame.connection_parameters()[2]))
        self.open(conn)

    def open(self, conn: Connection) -> None:
        self.connections[conn.handle] = conn
        if len(self.connections) > self.open_max:
            self.open_max, self.open_max_frame = len(self.connections), conn.complete

    def on_disconnection(self, frame: Frame) -> None:
        status, handle, reason = frame.disconnection()
        if status != 0:
            return
        self.disconnections.append(frame)
        conn = self.connections.get(handle)
        cause = self.disconnect_cause(conn, frame, reason)
        severity = "warning" if reason in WARNING_DISCONNECT_REASONS else "info"
        if cause is not None and cause[0] == "att-timeout":
            severity = "warning"  # the bearer is dead (Vol 3 Part F 3.3.3): not a normal close
        self.add("link.disconnect", severity, handle, frame, cause=cause)
        queue = self.in_flight.pop(handle, None)
        if queue and reason not in WARNING_DISCONNECT_REASONS:
            self.add("flow.credits-lost", "warning", handle, frame, queue[0])
        self.armed.pop(handle, None)
        conn = self.connections.pop(handle, None)
        if conn is not None:
            conn.disconnect_reason = reason
            self.close(conn, frame)

    def disconnect_cause(self, conn: Connection | None, frame: Frame, reason: int):
        """(kind, key frame) explaining a Disconnection Complete (issue 23)."""
        if conn is None:
            return ("none", frame)
        if reason == 0x08:
            # The peer advertised connectably after its last packet: it reset or left the link.
            if conn.peer is not None:
                heard = [
                    f for f in self.connectable_reports.get(conn.peer, [])
                    if f.number > conn.last_rx.number
                ]
                if heard:
                    return ("peer-reset", heard[0])
            if len(conn.timeouts) > 1:
                update, timeout = conn.timeouts[-1]
                shortened = timeout < conn.timeouts[-2][1]
                if shortened or frame.time - update.time <= PARAMETERS_CHANGED_BEFORE_LOSS:
                    return ("parameters", update)
            return ("peer-silent", conn.last_rx)
        if conn.key_missing is not None:
            return ("key-missing", conn.key_missing)
        if reason in REASON_CAUSES:
            return (REASON_CAUSES[reason], frame)
        command = conn.disconnect_command
        if command is None:
            return ("peer-request", frame)
        # The host closed the link: right after a 30 s ATT or SMP timer expired?
        pending = [
            request.frame
            for bearer in conn.bearers.values()
            for request in bearer.outstanding
            if request.frame.sent
        ] + [
            indication
            for bearer in conn.bearers.values()
            for indication, _count in bearer.unconfirmed
            if indication.sent
        ]
        for transaction in sorted(pending, key=lambda f: f.number):
            waited = command.time - transaction.time
            if ATT_TIMEOUT <= waited < ATT_TIMEOUT + TIMER_MARGIN:
                conn.att_timeout_key = transaction
                return ("att-timeout", transaction)
        if conn.pairing_open and conn.last_smp is not None:
            waited = command.time - conn.last_smp.time
            if SMP_TIMEOUT <= waited < SMP_TIMEOUT + TIMER_MARGIN:
                return ("smp-timeout", conn.last_smp)
        return ("local-request", command)

    # ------------------------------------------------------------------ ACL
    def on_acl(self, frame: Frame) -> None:
        conn = self.connections.get(frame.handle)
        if conn is None:
            # The capture began mid-connection: the link is inferred from its traffic.
            conn = Connection(
                frame.handle, None, None, frame, last_rx=frame, inferred=True, mtu_known=False
            )
            self.open(conn)
        conn.last_data = frame
        if frame.sent:
            self.on_acl_tx(conn, frame)
        else:
            self.flush_silence(conn)
            conn.last_rx = frame
        if frame.att is not None:
            self.on_att(conn, frame)
        elif frame.cid == SMP_CID and frame.pdu:
            self.on_smp(conn, frame)

    def on_acl_tx(self, conn: Connection, frame: Frame) -> None:
        if frame.time - conn.last_rx.time >= SILENCE:
            conn.silent_tx = frame
        handle = conn.handle
        free = self.free_credits
        if free is not None and free <= 0:
            self.add("flow.credits-exhausted", "error", handle, frame)
        nocp = self.armed.get(handle)
        if nocp is not None and frame.time - nocp.time >= STALL:
            self.add("flow.skipped-ready", "warning", handle, nocp, frame)
        self.armed.pop(handle, None)
        self.in_flight[handle].append(frame)
        if self.free_credits == 0:
            self.armed[handle] = None

    def flush_silence(self, conn: Connection) -> None:
        if conn.silent_tx is not None:
            self.add("pool.unresponsive-peer", "warning", conn.handle, conn.last_rx, conn.silent_tx)
            conn.silent_tx = None

    # ------------------------------------------------------------------ SMP
    def on_smp(self, conn: Connection, frame: Frame) -> None:
        code = frame.pdu[0]
        conn.last_smp = frame
        if code == SMP_PAIRING_REQUEST:
            conn.pairing_open = True
            conn.pairing_requests.append(frame)
            self.peer_pairing[conn.peer].append((conn.handle, frame))
            if (
                len(conn.pairing_requests) == 3
                and ("conn", conn.handle, conn.complete.number) not in self.repeated_reported
            ):
                self.repeated_reported.add(("conn", conn.handle, conn.complete.number))
                self.repeated_reported.add(("peer", conn.peer))
                self.add("security.repeated-pairing", "warning", conn.handle, frame)
            elif (
                len(self.peer_pairing[conn.peer]) == 3
                and ("peer", conn.peer) not in self.repeated_reported
            ):
                self.repeated_reported.add(("peer", conn.peer))
                self.add("security.repeated-pairing", "warning", conn.handle, frame)
        elif code == SMP_PAIRING_FAILED:
            conn.pairing_open = False
            request = conn.pairing_requests[-1] if conn.pairing_requests else None
            self.pairing_failures.append((frame, request, conn.handle, conn.peer))

    # ------------------------------------------------------------------ ATT
    def on_att(self, conn: Connection, frame: Frame) -> None:
        pdu = frame.att
        opcode = pdu[0]
        if not conn.mtu_known:
            conn.mtu = max(conn.mtu, len(pdu))  # a host never sends a PDU larger than ATT_MTU
        from_client = opcode in ATT_REQUESTS or opcode in (ATT_WRITE_CMD, 0xD2, ATT_CONFIRMATION)
        local_client = frame.sent if from_client else not frame.sent
        bearer = conn.bearer(local_client)
        if frame.sent:
            conn.att_tx += 1
            conn.last_att_tx = frame
        else:
            conn.att_rx += 1
            conn.last_att_rx = frame

        discovery = opcode in ATT_DISCOVERY or opcode in (ATT_MTU_REQ, ATT_MTU_RSP)
        if opcode == ATT_ERROR_RSP and pdu[1] in ATT_DISCOVERY_REQUESTS:
            discovery = True
        if opcode == ATT_MTU_REQ:
            conn.client_mtu = struct.unpack_from("<H", pdu, 1)[0]
            # Only the first exchange at ATT_MTU 23 can be late (a client sends it once, Vol 3 Part F 3.4.2.1).
            if conn.first_data is not None and not conn.late_exchange_reported and conn.mtu_known and conn.mtu == 23:
                self.add("mtu.late-exchange", "info", conn.handle, frame, conn.first_data)
            conn.late_exchange_reported = True
        # GATT configuration is not data: a 2-byte CCCD write, the host's own Service Changed indication.
        configuration = (opcode == ATT_WRITE_REQ and len(pdu) == 5 and struct.unpack_from("<H", pdu, 1)[0] in bearer.cccds) or (
            opcode == ATT_INDICATION and frame.sent and len(pdu) == 7
        )
        if not discovery and not configuration and conn.first_data is None:
            conn.first_data = frame

        if opcode in ATT_REQUESTS:
            self.on_att_request(conn, bearer, frame, pdu)
        elif opcode in ATT_RESPONSES:
            self.on_att_response(conn, bearer, frame, pdu)
        elif opcode in (ATT_NOTIFICATION, ATT_INDICATION):
            self.on_att_value(conn, bearer, frame, pdu)
        elif opcode == ATT_CONFIRMATION and bearer.unconfirmed:
            bearer.unconfirmed.popleft()
        if frame.sent and (opcode == ATT_WRITE_CMD or opcode == ATT_NOTIFICATION):
            self.on_chunk(conn, frame, len(pdu) - 3)
        if opcode in (ATT_WRITE_REQ, ATT_WRITE_CMD):
            handle = struct.unpack_from("<H", pdu, 1)[0]
            value = pdu[3:]
            if conn.mtu_known and len(value) > conn.mtu - 3:
                self.add("mtu.write-too-long", "warning", conn.handle, frame)
            if handle in bearer.cccds:
                bearer.cccd_written.add(handle)
                value_handle = bearer.value_handle_of(handle)
                enabling = bool(value) and value[0] & 0x03
                properties = bearer.characteristics.get(value_handle)
                if (
                    enabling
                    and properties is not None
                    and not properties & (PROP_NOTIFY | PROP_INDICATE)
                ):
                    self.add("gatt.subscription-no-notify-property", "info", conn.handle, frame)
                if not enabling:
                    self.end_subscription(conn, bearer, handle, frame)

    def on_chunk(self, conn: Connection, frame: Frame, length: int) -> None:
        """flow.skipped-ready (b): a bulk transfer (>= 16 Write Commands / notifications of exactly
        ATT_MTU-3 from the host) that stops after a full chunk for >= STALL and >= 20x its pace with
        every buffer free and nothing received, then goes on for >= 8 chunks at its pace."""
        if not conn.mtu_known or length != conn.mtu - 3:
            conn.chunk_run, conn.last_chunk, conn.chunk_gaps, conn.stall_candidate = 0, None, [], None
            return
        last = conn.last_chunk
        if last is not None:
            gap = frame.time - last.time
            if gap >= STALL:
                pace = sorted(conn.chunk_gaps)[len(conn.chunk_gaps) // 2] if conn.chunk_gaps else 0
                free = sum(len(q) for q in self.in_flight.values()) - 1 == 0  # before this packet
                heard = conn.last_rx is not None and conn.last_rx.time > last.time
                if conn.chunk_run >= 16 and free and pace > 0 and gap >= 20 * pace and not heard:
                    conn.stall_candidate = (last, frame, pace, 0)
                else:
                    conn.stall_candidate = None
                conn.chunk_run, conn.chunk_gaps = 0, []
            else:
                conn.chunk_gaps = (conn.chunk_gaps + [gap])[-32:]
                if conn.stall_candidate is not None:
                    before, after, pace, resumed = conn.stall_candidate
                    if gap <= 5 * max(pace, 0.001):
                        resumed += 1
                        if resumed >= 8:
                            self.add("flow.skipped-ready", "warning", conn.handle, before, after)
                            conn.stall_candidate = None
                        else:
                            conn.stall_candidate = (before, after, pace, resumed)
                    else:
                        conn.stall_candidate = None
        conn.chunk_run += 1
        conn.last_chunk = frame

    def on_att_request(self, conn: Connection, bearer: Bearer, frame: Frame, pdu: bytes) -> None:
        opcode = pdu[0]
        if bearer.outstanding:
            self.add(
                "att.protocol-violation", "warning", conn.handle, frame, bearer.outstanding[0].frame
            )
        handle = (
            struct.unpack_from("<H", pdu, 1)[0]
            if opcode in (ATT_READ_REQ, ATT_READ_BLOB_REQ, ATT_WRITE_REQ, 0x16)
            else None
        )
        request = Request(frame, opcode, handle, pdu[3:] if opcode == ATT_WRITE_REQ else b"")
        if opcode == ATT_READ_BY_TYPE_REQ and len(pdu) == 7:
            request.read_by_type_uuid = struct.unpack_from("<H", pdu, 5)[0]
        if opcode == ATT_READ_BLOB_REQ:
            bearer.read_blobs.append((frame, handle))
        bearer.requests_seen.append((frame, opcode, handle))
        bearer.outstanding.append(request)

    def on_att_response(self, conn: Connection, bearer: Bearer, frame: Frame, pdu: bytes) -> None:
        opcode = pdu[0]
        if not bearer.outstanding:
            self.add("att.protocol-violation", "warning", conn.handle, frame)
            return
        request = bearer.outstanding.popleft()
        waited = frame.time - request.frame.time
        if waited > ATT_TIMEOUT:
            self.add("att.timeout", "error", conn.handle, request.frame, cause=("att-timeout", request.frame))
        elif waited > SLOW_RESPONSE:
            self.add("att.slow-response", "info", conn.handle, frame, request.frame)
        if opcode == ATT_ERROR_RSP:
            code = pdu[4]
            expected_end = code == ATT_ATTRIBUTE_NOT_FOUND and pdu[1] in ATT_DISCOVERY_REQUESTS
            if not expected_end and (conn.handle, code) not in self.att_errors:
                self.att_errors.add((conn.handle, code))
                self.add("att.error", "info", conn.handle, frame)
            if request.opcode == ATT_WRITE_REQ and request.handle in bearer.cccds:
                bearer.cccd_errors.append((frame, request))
            if code in INSUFFICIENT_SECURITY_ERRORS:
                bearer.insufficient.append((frame, request))
            return
        bearer.successes.append((frame, request.opcode, request.handle))
        if opcode == ATT_MTU_RSP:
            conn.server_mtu = struct.unpack_from("<H", pdu, 1)[0]
            conn.mtu = max(23, min(conn.client_mtu or 23, conn.server_mtu))
            conn.mtu_exchanged = True
            conn.mtu_known = True
        elif opcode == ATT_FIND_INFO_RSP:
            step = 4 if pdu[1] == 0x01 else 18
            for offset in range(2, len(pdu) - step + 1, step):
                handle = struct.unpack_from("<H", pdu, offset)[0]
                if step == 4 and struct.unpack_from("<H", pdu, offset + 2)[0] == UUID_CCCD:
                    bearer.cccds.add(handle)
        elif opcode == ATT_READ_BY_TYPE_RSP and request.read_by_type_uuid == UUID_CHARACTERISTIC:
            length = pdu[1]
            for offset in range(2, len(pdu) - length + 1, length):
                properties = pdu[offset + 2]
                value_handle = struct.unpack_from("<H", pdu, offset + 3)[0]
                bearer.characteristics[value_handle] = properties
        elif opcode == ATT_READ_RSP and conn.mtu_known and len(pdu) - 1 == conn.mtu - 1:
            bearer.truncated_reads.append((frame, request))
        elif opcode == ATT_WRITE_RSP and request.handle in bearer.cccds:
            bearer.cccd_successes.append((frame, request.handle))
            value = request.value
            if value and value[0] & 0x03:
                bearer.subscriptions[request.handle] = Subscription(
                    request.handle, request.frame, frame, bearer.value_handle_of(request.handle)
                )

    def on_att_value(self, conn: Connection, bearer: Bearer, frame: Frame, pdu: bytes) -> None:
        opcode = pdu[0]
        handle = struct.unpack_from("<H", pdu, 1)[0]
        value = pdu[3:]
        if opcode == ATT_INDICATION:
            if bearer.unconfirmed:
                # A second indication while one is open: the violation is its own rule; the old one
                # is no longer followed (RULES.md att.indication-unconfirmed).
                self.add(
                    "att.protocol-violation", "warning", conn.handle, frame, bearer.unconfirmed[0][0]
                )
                bearer.unconfirmed.clear()
            client_count = conn.att_rx if frame.sent else conn.att_tx
            bearer.unconfirmed.append((frame, client_count))
        for sub in bearer.subscriptions.values():
            if sub.value_handle == handle:
                sub.notified = True
        cccd = next((c for c in sorted(bearer.cccds) if bearer.value_handle_of(c) == handle), None)
        if (
            cccd is None or cccd not in bearer.cccd_written
        ) and handle not in bearer.notified_handles:
            conn.unsubscribed.append((frame, frame.sent))
        bearer.notified_handles.add(handle)
        stats = conn.value_stats.setdefault(handle, [0, 0, 0, None, None, frame.sent])
        if not conn.mtu_known:
            pass  # "full" is not decidable against a lower bound
        elif len(value) == conn.mtu - 3:
            stats[0] += 1
            if stats[3] is None:
                stats[3] = frame
        elif len(value) < conn.mtu - 3:
            stats[1] += 1
        stats[2] = max(stats[2], len(value))
        stats[4] = frame

    def end_subscription(self, conn: Connection, bearer: Bearer, cccd: int, end: Frame) -> None:
        sub = bearer.subscriptions.pop(cccd, None)
        if (
            sub is not None
            and not sub.notified
            and end.time - sub.response.time >= SUBSCRIPTION_WAIT
        ):
            self.add("gatt.subscription-silent", "info", conn.handle, sub.response, sub.request)

    # ------------------------------------------------------------------ closing
    def close(self, conn: Connection, end: Frame) -> None:
        """The link closed (Disconnection Complete) or the capture ended."""
        self.flush_silence(conn)
        lost = conn.disconnect_reason in WARNING_DISCONNECT_REASONS
        if (
            conn.pairing_open
            and conn.last_smp is not None
            and end.time - conn.last_smp.time >= SMP_TIMEOUT
        ):
            # Neither side sent an SMP PDU for 30 s in an unfinished pairing (Vol 3 Part H 3.4).
            self.add(
                "security.pairing-timeout", "warning", conn.handle, conn.last_smp,
                cause=("smp-timeout", conn.last_smp),
            )
        for bearer in conn.bearers.values():
            for request in bearer.outstanding:
                late = end.time - request.frame.time >= ATT_TIMEOUT
                if late:
                    self.add("att.timeout", "error", conn.handle, request.frame, cause=("att-timeout", request.frame))
                elif lost:
                    # A consequence of the link loss, reported there (one problem, one finding).
                    self.add("att.unanswered", "info", conn.handle, request.frame, cause=("link-loss", end))
                else:
                    # The link or the capture ended first (information).
                    self.add("att.unanswered", "info", conn.handle, request.frame)
                if request.opcode == ATT_WRITE_REQ and request.handle in bearer.cccds and (late or lost):
                    self.add("gatt.subscription-unanswered", "warning", conn.handle, request.frame)
            for indication, client_count in bearer.unconfirmed:
                spoke = (conn.att_rx if indication.sent else conn.att_tx) > client_count
                waited = end.time - indication.time >= ATT_TIMEOUT and not conn.inferred
                if spoke or waited:
                    unasked = indication.sent and not bearer.cccd_written
                    last = conn.last_att_rx if indication.sent else conn.last_att_tx
                    evidence = [last] if spoke and last is not None else []
                    # Its 30 s timeout closed the link: the disconnection is the finding.
                    self.add("att.indication-unconfirmed", "info" if unasked else "warning", conn.handle, indication, *evidence)
            for cccd in list(bearer.subscriptions):
                self.end_subscription(conn, bearer, cccd, end)
            for response, request in bearer.truncated_reads:
                if not any(
                    f.number > response.number and h == request.handle for f, h in bearer.read_blobs
                ):
                    # Proven cut only when the client moved on to another request; a read the link
                    # or the capture ended right after is not decidable.
                    moved_on = any(f.number > response.number for f, _, _ in bearer.requests_seen)
                    self.add("mtu.truncated-read", "warning" if moved_on else "info", conn.handle, response, request.frame)
            for error, request in bearer.cccd_errors:
                recovered = any(
                    f.number > error.number and h == request.handle
                    for f, h in bearer.cccd_successes
                )
                self.add(
                    "gatt.subscription-failed",
                    "info" if recovered else "warning",
                    conn.handle,
                    error,
                    request.frame,
                )
            for error, request in bearer.insufficient:
                secured = [e for e in conn.encrypted_at if e.number > error.number]
                recovered = bool(secured) and any(
                    f.number > secured[0].number and op == request.opcode and h == request.handle
                    for f, op, h in bearer.successes
                )
                self.add(
                    "security.insufficient",
                    "info" if recovered else "warning",
                    conn.handle,
                    error,
                    request.frame,
                )
        # A subscription may predate a mid-connection capture: nothing to say (RULES.md).
        for value_frame, host_sent in [] if conn.inferred else conn.unsubscribed:
            unencrypted = not conn.encrypted_at and not conn.pairing_requests
            self.add("gatt.unsubscribed-notification", "warning" if unencrypted and not host_sent else "info",
                     conn.handle, value_frame)
        self.closed.append(conn)

    def finish(self) -> None:
        last = self.frames[-1]
        for conn in list(self.connections.values()):
            self.close(conn, last)
        for attempt in self.attempts:
            if attempt.status is None or attempt.status.command_status()[0] != 0:
                continue
            if attempt.accept_list:
                continue  # background auto-connect waits by design
            end = attempt.ends_at
            if end is not None:
                stuck = end.time - attempt.create.time > STUCK_TIMEOUT
            else:
                stuck = last.time - attempt.create.time >= STUCK_TIMEOUT
            if stuck:
                self.add("pool.stuck-attempt", "error", None, attempt.create, attempt.status)
        if self.open_max >= 2:
            self.add("pool.concurrent-connections", "info", None, self.open_max_frame)
        # mtu.truncated-notification: every value of a handle exactly ATT_MTU-3 on a connection;
        # a warning when the same peer sent longer values of it on another connection.
        for conn in self.closed:
            for handle, (full, shorter, longest, first_full, _last, host_sent) in conn.value_stats.items():
                if not conn.mtu_known or not full or shorter or longest != conn.mtu - 3:
                    continue
                longer = [
                    other.value_stats[handle][4]
                    for other in self.closed
                    if other is not conn and other.peer is not None and other.peer == conn.peer
                    and handle in other.value_stats
                    and other.value_stats[handle][2] > longest and other.value_stats[handle][5] == host_sent
                ]
                if longer:
                    self.add("mtu.truncated-notification", "warning", conn.handle, first_full, longer[-1])
                else:
                    self.add("mtu.truncated-notification", "info", conn.handle, first_full)
        # adv.oversize heard from others: a warning only for a device the host connected to or tried to.
        peers = {conn.peer for conn in self.closed}
        for address, frame in self.bad_advertisers.items():
            self.add("adv.oversize", "warning" if address in peers else "info", None, frame)
        if self.disconnections:
            self.add("link.disconnect-summary", "info", None, *self.disconnections)
        # security.pairing-failed: info if a later pairing with the same connection/peer succeeded
        for failed, request, handle, peer in self.pairing_failures:
            later_ok = any(
                enc.number > failed.number
                for conn in self.closed
                if conn.handle == handle or conn.peer == peer
                for enc in conn.encrypted_at
                if any(
                    r.number > failed.number and r.number < enc.number
                    for r in conn.pairing_requests
                )
            )
            self.add(
                "security.pairing-failed", "info" if later_ok else "error", handle, failed, request
            )


def ad_well_formed(data: bytes) -> bool:
    """True when every AD structure's length stays inside ``data`` (0 ends the data)."""
    offset = 0
    while offset < len(data):
        length = data[offset]
        if length == 0:
            return True
        if offset + 1 + length > len(data):
            return False
        offset += 1 + length
    return True


def evaluate(frames: list[Frame]) -> list[Finding]:
    """All findings docs/RULES.md defines for this capture, by this reference engine."""
    return Engine(frames).run()
