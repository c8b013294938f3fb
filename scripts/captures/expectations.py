"""Expected findings per capture, derived from what each scenario did.

One function per output file (registered with :func:`expects`) receives the
decoded frames of the capture just written and returns the exact set of
findings docs/RULES.md defines for it, each keyed by its first evidence frame.
The functions locate frames from the scenario's own story (e.g. "the Error
Response that answers the CCCD write") and check that story with
:func:`check` (a capture that does not look as the scenario intended fails the
run).  ``make_captures.py`` additionally compares every result with the
generic reference engine in :mod:`captures.rules`.
"""

from __future__ import annotations

import dataclasses

import struct
from collections.abc import Callable, Iterable

from .btsnoop import (
    ATT_CONFIRMATION,
    ATT_DISCOVERY_REQUESTS,
    ATT_ERROR_RSP,
    ATT_INDICATION,
    ATT_MTU_REQ,
    ATT_NOTIFICATION,
    ATT_READ_BLOB_REQ,
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
    EV_NUMBER_OF_COMPLETED_PACKETS,
    LE_META_EVENT,
    OP_DISCONNECT,
    OP_LE_CREATE_CONNECTION,
    OP_LE_CONNECTION_UPDATE,
    OP_LE_CREATE_CONNECTION_CANCEL,
    OP_LE_READ_BUFFER_SIZE_V2,
    OP_LE_SET_ADVERTISING_ENABLE,
    L2CAP_CONNECTION_PARAMETER_UPDATE_REQUEST,
    L2CAP_CONNECTION_PARAMETER_UPDATE_RESPONSE,
    LE_SIGNALING_CID,
    SMP_PAIRING_DHKEY_CHECK,
    SMP_PAIRING_FAILED,
    SMP_PAIRING_RANDOM,
    SMP_PAIRING_REQUEST,
    SUB_ADVERTISING_REPORT,
    SUB_CONNECTION_UPDATE_COMPLETE,
    Frame,
)
from .findings import (
    ATT_TIMEOUT,
    COMMAND_DISALLOWED,
    IDLE,
    SILENCE,
    SLOW_RESPONSE,
    SMP_TIMEOUT,
    TIMER_MARGIN,
    STALL,
    STUCK_TIMEOUT,
    SUBSCRIPTION_WAIT,
    WARNING_DISCONNECT_REASONS,
    Expected,
    Finding,
    att_error_name,
    finding,
    status_name,
)

ExpectFunc = Callable[["Capture"], Expected]
EXPECTATIONS: dict[str, ExpectFunc] = {}


class ExpectationError(Exception):
    """The capture does not show what its scenario was meant to produce."""


def check(condition: bool, message: str) -> None:
    if not condition:
        raise ExpectationError(message)


def expects(*names: str) -> Callable[[Callable[..., Expected]], Callable[..., Expected]]:
    """Register the expectation function of one or more capture files."""

    def register(func):
        for name in names:
            if name in EXPECTATIONS:
                raise ValueError(f"duplicate expectation for {name}")
            EXPECTATIONS[name] = func
        return func

    return register


# ---------------------------------------------------------------------- capture queries
class Capture:
    """The decoded frames of one file, with the queries the expectations need."""

    def __init__(self, name: str, frames: list[Frame]) -> None:
        self.name = name
        self.frames = frames

    @property
    def last(self) -> Frame:
        return self.frames[-1]

    def where(
        self,
        predicate: Callable[[Frame], bool],
        after: Frame | None = None,
        before: Frame | None = None,
    ) -> list[Frame]:
        low = after.number if after else 0
        high = before.number if before else len(self.frames) + 1
        return [f for f in self.frames if low < f.number < high and predicate(f)]

    def first(
        self, predicate: Callable[[Frame], bool], after: Frame | None = None, what: str = ""
    ) -> Frame:
        found = self.where(predicate, after)
        check(
            bool(found),
            f"{self.name}: no {what or 'matching frame'} after #{after.number if after else 0}",
        )
        return found[0]

    def one(self, predicate: Callable[[Frame], bool], what: str) -> Frame:
        found = self.where(predicate)
        check(len(found) == 1, f"{self.name}: expected one {what}, found {len(found)}")
        return found[0]

    # --- typed shortcuts
    def commands(self, *opcodes: int) -> list[Frame]:
        return self.where(lambda f: f.is_command(*opcodes))

    def events(self, code: int, subevents: tuple[int, ...] | None = None) -> list[Frame]:
        return self.where(lambda f: f.is_event(code, subevents))

    def att(self, *opcodes: int, sent: bool | None = None) -> list[Frame]:
        return self.where(
            lambda f: (
                f.att is not None
                and (not opcodes or f.att[0] in opcodes)
                and (sent is None or f.sent == sent)
            )
        )

    def smp(self, code: int) -> list[Frame]:
        return self.where(lambda f: f.smp_code == code)

    def status_of(self, command: Frame) -> Frame:
        """The Command Status / Command Complete answering a command."""
        return self.first(
            lambda f: (
                (f.is_event(EV_COMMAND_STATUS) and f.command_status()[1] == command.opcode)
                or (f.is_event(EV_COMMAND_COMPLETE) and f.command_complete()[0] == command.opcode)
            ),
            after=command,
            what=f"status of {command.describe()}",
        )

    def connection_completes(self, status: int | None = 0) -> list[Frame]:
        return self.where(
            lambda f: (
                f.is_event(LE_META_EVENT, CONNECTION_COMPLETE_SUBEVENTS)
                and (status is None or f.connection_complete()[0] == status)
            )
        )

    def disconnections(self) -> list[Frame]:
        return self.where(
            lambda f: f.is_event(EV_DISCONNECTION_COMPLETE) and f.disconnection()[0] == 0
        )

    def response_to(self, request: Frame) -> Frame:
        """The ATT response (or Error Response) answering ``request`` (next one back)."""
        return self.first(
            lambda f: f.att is not None and f.att[0] in ATT_RESPONSES and f.sent != request.sent,
            after=request,
            what=f"response to {request.describe()}",
        )

    def request_of(self, response: Frame) -> Frame:
        """The latest ATT request sent in the other direction before ``response``."""
        found = self.where(
            lambda f: f.att is not None and f.att[0] in ATT_REQUESTS and f.sent != response.sent,
            before=response,
        )
        check(bool(found), f"{self.name}: no request before {response.describe()}")
        return found[-1]

    def le_buffers(self) -> int:
        """Total LE ACL buffers from LE Read Buffer Size [v2]."""
        reply = self.first(
            lambda f: (
                f.is_event(EV_COMMAND_COMPLETE)
                and f.command_complete()[0] == OP_LE_READ_BUFFER_SIZE_V2
            ),
            what="LE Read Buffer Size v2 reply",
        )
        return reply.command_complete()[1][3]


def att_handle(frame: Frame) -> int:
    """The attribute handle of a Read/Write/Notification/Indication/... PDU."""
    return struct.unpack_from("<H", frame.att, 1)[0]


def att_value(frame: Frame) -> bytes:
    """The value of a Write / Notification / Indication PDU, or of a Read Response."""
    pdu = frame.att
    return pdu[1:] if pdu[0] == ATT_READ_RSP else pdu[3:]


def error_fields(frame: Frame) -> tuple[int, int, int]:
    """(request opcode, handle, error code) of an Error Response."""
    request, handle, code = struct.unpack_from("<BHB", frame.att, 1)
    return request, handle, code


def create_peer(frame: Frame) -> str:
    """The peer address of an LE Create Connection command (Core v5.4 Vol 4 Part E 7.8.12)."""
    return ":".join(f"{b:02X}" for b in reversed(frame.params[6:12]))


def n(frame: Frame) -> str:
    return f"#{frame.number}"


def seconds(a: Frame, b: Frame) -> str:
    return f"{b.time - a.time:.1f} s"


def millis(delay: float) -> str:
    """'at most N ms' for a worst-case delay in seconds."""
    return "less than 1 ms" if delay < 0.001 else f"at most {delay * 1000:.0f} ms"


# ---------------------------------------------------------------------- common findings
def disconnect_findings(cap: Capture) -> list[Finding]:
    """link.disconnect for every Disconnection Complete, and link.disconnect-summary."""
    findings = []
    reasons: dict[int, int] = {}
    for frame in cap.disconnections():
        _status, handle, reason = frame.disconnection()
        reasons[reason] = reasons.get(reason, 0) + 1
        severity = "warning" if reason in WARNING_DISCONNECT_REASONS else "info"
        findings.append(
            finding(
                "link.disconnect",
                severity,
                handle,
                frame,
                why=f"Disconnection Complete {n(frame)}, handle 0x{handle:04X}, reason "
                f"{status_name(reason)} ({severity}: "
                + ("a link failure reason" if severity == "warning" else "not a failure reason")
                + ")",
            )
        )
    if findings:
        frames = cap.disconnections()
        summary = ", ".join(f"{status_name(r)} x{c}" for r, c in sorted(reasons.items()))
        findings.append(
            finding(
                "link.disconnect-summary",
                "info",
                None,
                *frames,
                why=f"{len(frames)} disconnection(s): {summary}",
            )
        )
    return findings


def concurrent_finding(cap: Capture, complete: Frame, count: int) -> Finding:
    return finding(
        "pool.concurrent-connections",
        "info",
        None,
        complete,
        why=f"LE Connection Complete {n(complete)} (handle 0x{complete.connection_complete()[1]:04X}) "
        f"brings the open connections to {count}, the maximum in this capture",
    )


def check_no_att_errors_but_discovery(cap: Capture) -> int:
    """Every Error Response is Attribute Not Found to a discovery request; return their count."""
    errors = cap.att(ATT_ERROR_RSP)
    for frame in errors:
        request, _handle, code = error_fields(frame)
        check(
            code == 0x0A and request in ATT_DISCOVERY_REQUESTS,
            f"{cap.name}: unexpected {frame.describe()} {att_error_name(code)}",
        )
    return len(errors)


def check_single_connection(cap: Capture) -> Frame:
    completes = cap.connection_completes()
    check(len(completes) == 1, f"{cap.name}: expected one connection, found {len(completes)}")
    return completes[0]


def clean(cap: Capture, notes: str, extra: Iterable[Finding] = ()) -> Expected:
    return Expected(cap.name, (*extra, *disconnect_findings(cap)), notes)


DISCOVERY_NOTE = (
    "Error Responses 0x0A Attribute Not Found to discovery requests (Find Information, Find By "
    "Type Value, Read By Type, Read By Group Type) end a discovery procedure and are not att.error."
)


# ---------------------------------------------------------------------- existing captures
@expects("healthy.btsnoop", "healthy_peripheral.btsnoop")
def expect_healthy(cap: Capture) -> Expected:
    check_single_connection(cap)
    errors = check_no_att_errors_but_discovery(cap)
    mtu_request = cap.one(lambda f: f.att_opcode == ATT_MTU_REQ, "MTU request")
    check(cap.att()[0] is mtu_request, "the MTU exchange is not the first ATT PDU")
    notifications = cap.att(ATT_NOTIFICATION)
    indications = cap.att(ATT_INDICATION)
    confirmations = cap.att(ATT_CONFIRMATION)
    check(len(indications) == len(confirmations) == 3, "3 confirmed indications expected")
    for ind, conf in zip(indications, confirmations):
        check(ind.number < conf.number, "confirmation before its indication")
    cccd_writes = [f for f in cap.att(ATT_WRITE_REQ) if att_handle(f) in (0x0011, 0x0020)]
    check(len(cccd_writes) == 2, "two CCCD writes expected")
    check(
        all(cccd_writes[0].number < f.number for f in notifications),
        "notification before subscription",
    )
    return clean(
        cap,
        "Healthy session: only the disconnection infos. "
        f"{errors} Error Responses, all 0x0A to discovery requests. {DISCOVERY_NOTE} The MTU "
        "exchange (247) is the first ATT PDU, so no mtu.late-exchange; notification values are 2 "
        f"bytes and indications 4 bytes, far below ATT_MTU - 3 = 244. The {len(notifications)} "
        "notifications on 0x0010 follow the CCCD write to 0x0011 and the 3 indications on 0x001F "
        "follow the CCCD write to 0x0020 and are each confirmed before the next one. Every ACL "
        "packet is completed at once by the stock controller (64 buffers). The peripheral-side "
        "file sees the same ATT exchange in the other direction; its legacy advertising stops "
        "when the connection is accepted (no re-enable), so no adv.not-stopped.",
    )


@expects("long_read_write.btsnoop")
def expect_long_read_write(cap: Capture) -> Expected:
    check_single_connection(cap)
    errors = check_no_att_errors_but_discovery(cap)
    full = [f for f in cap.att(ATT_READ_RSP) if len(att_value(f)) == 22]
    check(len(full) == 2, "two 22-byte Read Responses expected")
    for response in full:
        request = cap.request_of(response)
        nxt = cap.first(
            lambda f, s=response.sent: (
                f.att is not None and f.att[0] in ATT_REQUESTS and f.sent != s
            ),
            after=response,
        )
        check(
            nxt.att_opcode == ATT_READ_BLOB_REQ and att_handle(nxt) == att_handle(request),
            f"no Read Blob after {response.describe()}",
        )
    return clean(
        cap,
        "Counter-example of mtu_truncated_read: both Read Responses of exactly ATT_MTU - 1 = 22 "
        f"bytes ({', '.join(n(f) for f in full)}) are followed by a Read Blob Request on the same "
        "handle 0x001D, so no mtu.truncated-read (Read Blob Responses are not Read Responses). "
        "Writes go through Prepare Write (18-byte parts), never a Write Request/Command over "
        f"ATT_MTU - 3. {errors} Error Responses, all 0x0A to discovery requests.",
    )


@expects("pairing_failed.btsnoop")
def expect_pairing_failed(cap: Capture) -> Expected:
    check_single_connection(cap)
    request = cap.one(lambda f: f.smp_code == SMP_PAIRING_REQUEST, "Pairing Request")
    failed = cap.one(lambda f: f.smp_code == SMP_PAIRING_FAILED, "Pairing Failed")
    reason = failed.pdu[1]
    handle = failed.handle
    return clean(
        cap,
        "One rejected pairing, never retried: security.pairing-failed stays an error.",
        [
            finding(
                "security.pairing-failed",
                "error",
                handle,
                failed,
                request,
                why=f"SMP Pairing Failed {n(failed)} from the peripheral, reason 0x{reason:02X} "
                f"Pairing Not Supported, for the Pairing Request {n(request)}; no later pairing "
                "succeeds",
            )
        ],
    )


@expects("pairing_ok.btsnoop")
def expect_pairing_ok(cap: Capture) -> Expected:
    check_single_connection(cap)
    errors = check_no_att_errors_but_discovery(cap)
    change = cap.one(lambda f: f.is_event(EV_ENCRYPTION_CHANGE), "Encryption Change")
    check(change.encryption_change()[0] == 0, "encryption failed")
    check(not cap.smp(SMP_PAIRING_FAILED), "pairing failed")
    return clean(
        cap,
        f"Successful pairing: Encryption Change {n(change)} with status 0x00, no Pairing Failed. "
        f"The {errors} Error Response 0x0A answers the second Read By Type Request of the read "
        "by UUID 0x2A19 (the same opcode as discovery), the normal end of that procedure, so "
        "no att.error.",
    )


@expects("extended_adv.btsnoop")
def expect_extended_adv(cap: Capture) -> Expected:
    check_single_connection(cap)
    check(not cap.att(), "unexpected ATT traffic")
    return clean(
        cap,
        "Extended advertising reports carry 98 bytes of well-formed AD structures; adv.oversize "
        "only limits legacy advertising data to 31 bytes, so no finding. No ATT traffic.",
    )


@expects("write_without_response.btsnoop")
def expect_write_without_response(cap: Capture) -> Expected:
    check_single_connection(cap)
    errors = check_no_att_errors_but_discovery(cap)
    writes = cap.att(ATT_WRITE_CMD)
    check(len(writes) == 50 and all(len(att_value(f)) == 20 for f in writes), "50 x 20-byte writes")
    return clean(
        cap,
        f"50 Write Commands of 20 bytes = ATT_MTU - 3 (not over it, so no mtu.write-too-long); "
        f"64 LE buffers (LE Read Buffer Size v2: {cap.le_buffers()}) and one NOCP per packet, so "
        f"credits never run out. {errors} Error Responses, all 0x0A to discovery requests.",
    )


# ---------------------------------------------------------------------- pool.*
def only_attempt(cap: Capture) -> tuple[Frame, Frame]:
    create = cap.one(lambda f: f.is_command(*CREATE_CONNECTION_OPCODES), "connection attempt")
    status = cap.status_of(create)
    check(status.command_status()[0] == 0, "attempt not accepted")
    return create, status


@expects("stuck_attempt.btsnoop")
def expect_stuck_attempt(cap: Capture) -> Expected:
    create, status = only_attempt(cap)
    check(not cap.connection_completes(status=None), "a Connection Complete was reported")
    check(not cap.commands(OP_LE_CREATE_CONNECTION_CANCEL), "the attempt was cancelled")
    lasting = cap.last.time - create.time
    check(lasting >= STUCK_TIMEOUT, f"capture lasts only {lasting:.1f} s after the attempt")
    return Expected(
        cap.name,
        (
            finding(
                "pool.stuck-attempt",
                "error",
                None,
                create,
                status,
                why=f"LE Create Connection {n(create)} to C0:11:22:33:44:99 accepted by Command "
                f"Status {n(status)} (0x00); no Connection Complete and no Create Connection "
                f"Cancel until the capture ends {lasting:.1f} s later (last frame {n(cap.last)}), "
                f">= the {STUCK_TIMEOUT:.0f} s timeout",
            ),
        ),
        "No connection is ever established, so there is no link.* finding. The scan commands "
        "at the end only show that the capture lasts past the timeout.",
    )


@expects("cancelled_attempt.btsnoop")
def expect_cancelled_attempt(cap: Capture) -> Expected:
    create, _status = only_attempt(cap)
    cancel = cap.one(lambda f: f.is_command(OP_LE_CREATE_CONNECTION_CANCEL), "cancel")
    complete = cap.one(
        lambda f: f.is_event(LE_META_EVENT, CONNECTION_COMPLETE_SUBEVENTS), "completion"
    )
    check(complete.connection_complete()[0] == 0x02, "completion status is not 0x02")
    check(cancel.time - create.time < STUCK_TIMEOUT, "cancel after the stuck timeout")
    return Expected(
        cap.name,
        (
            finding(
                "pool.cancelled-attempt",
                "info",
                None,
                create,
                cancel,
                complete,
                why=f"LE Create Connection {n(create)} cancelled by LE Create Connection Cancel "
                f"{n(cancel)} {seconds(create, cancel)} later; LE Connection Complete "
                f"{n(complete)} with status {status_name(0x02)}",
            ),
        ),
        f"Not pool.stuck-attempt: the attempt ends (cancel {n(cancel)}) {seconds(create, cancel)} "
        f"after it started, within the {STUCK_TIMEOUT:.0f} s timeout. No connection, so no link.* "
        "finding.",
    )


@expects("pool_full.btsnoop")
def expect_pool_full(cap: Capture) -> Expected:
    creates = cap.commands(OP_LE_CREATE_CONNECTION)
    check(len(creates) == 3, "three attempts expected")
    completes = cap.connection_completes()
    check(len(completes) == 2, "two connections expected")
    rejected = creates[2]
    status = cap.status_of(rejected)
    check(status.command_status()[0] == 0x09, "third attempt not rejected with 0x09")
    return clean(
        cap,
        "The rejected attempt never starts (Command Status != 0x00), so it is neither stuck nor "
        "cancelled.",
        [
            finding(
                "pool.full",
                "error",
                None,
                status,
                rejected,
                why=f"Command Status {n(status)} rejects LE Create Connection {n(rejected)} "
                f"(to C0:11:22:33:44:04) with {status_name(0x09)}",
            ),
            concurrent_finding(cap, completes[1], 2),
        ],
    )


@expects("rejected_attempt.btsnoop")
def expect_rejected_attempt(cap: Capture) -> Expected:
    first, rejected, retry = cap.commands(OP_LE_CREATE_CONNECTION)
    accepted = cap.status_of(first)
    check(accepted.command_status()[0] == 0, "first attempt not accepted")
    status = cap.status_of(rejected)
    check(status.command_status()[0] == COMMAND_DISALLOWED, "second attempt not rejected with 0x0C")
    check(
        not cap.where(lambda f: f.is_event(LE_META_EVENT, CONNECTION_COMPLETE_SUBEVENTS), before=status),
        "the first attempt ended before the rejection",
    )
    cancel = cap.one(lambda f: f.is_command(OP_LE_CREATE_CONNECTION_CANCEL), "cancel")
    (cancelled,) = cap.connection_completes(status=0x02)
    check(cancelled.connection_complete()[3] == create_peer(first), "0x02 completion for another peer")
    check(status.number < cancel.number < cancelled.number < retry.number, "order of the story")
    check(cancel.time - first.time < STUCK_TIMEOUT, "cancel after the stuck timeout")
    (connected,) = cap.connection_completes()
    check(
        connected.number > retry.number and connected.connection_complete()[3] == create_peer(rejected),
        "the retry did not connect to the rejected peer",
    )
    return clean(
        cap,
        f"The rejected create {n(rejected)} does not replace the pending attempt {n(first)}: the "
        f"Cancel {n(cancel)} and the 0x02 completion {n(cancelled)} still end {n(first)} (an "
        "attempt that ended is not stuck), and the rejected one never starts, so it is neither "
        f"stuck nor cancelled. The retry {n(retry)} after the cancel connects (handle 0x0001).",
        [
            finding(
                "pool.rejected-attempt",
                "warning",
                None,
                status,
                rejected,
                first,
                why=f"Command Status {n(status)} rejects LE Create Connection {n(rejected)} (to "
                f"{create_peer(rejected)}) with {status_name(COMMAND_DISALLOWED)} while LE Create "
                f"Connection {n(first)} (to {create_peer(first)}, accepted by {n(accepted)}) is "
                "pending: no Connection Complete or Cancel between them",
            ),
            finding(
                "pool.cancelled-attempt",
                "info",
                None,
                first,
                cancel,
                cancelled,
                why=f"LE Create Connection {n(first)} cancelled by LE Create Connection Cancel "
                f"{n(cancel)} {seconds(first, cancel)} later; LE Connection Complete "
                f"{n(cancelled)} with status {status_name(0x02)} for {create_peer(first)}",
            ),
        ],
    )


@expects("idle_connection.btsnoop")
def expect_idle_connection(cap: Capture) -> Expected:
    creates = cap.commands(OP_LE_CREATE_CONNECTION)
    check(len(creates) == 2, "two attempts expected")
    first, second = cap.connection_completes()
    handle = first.connection_complete()[1]
    data = cap.where(lambda f: f.is_acl and f.handle == handle, before=creates[1])
    last_data = data[-1]
    check(
        last_data.att_opcode == ATT_READ_RSP, "last data before the second attempt is not the read"
    )
    idle = creates[1].time - last_data.time
    check(idle >= IDLE, f"idle only {idle:.1f} s")
    return clean(
        cap,
        "Connection 0x0002 is used right after it opens, so only 0x0001 is idle.",
        [
            finding(
                "pool.idle-connection",
                "warning",
                handle,
                last_data,
                creates[1],
                why=f"Connection 0x{handle:04X}'s last ATT/L2CAP frame is the Read Response "
                f"{n(last_data)}; {idle:.1f} s later (>= {IDLE:.0f} s), while it is still open, the "
                f"host starts another attempt (LE Create Connection {n(creates[1])})",
            ),
            concurrent_finding(cap, second, 2),
        ],
    )


@expects("unresponsive_peer.btsnoop")
def expect_unresponsive_peer(cap: Capture) -> Expected:
    complete = check_single_connection(cap)
    handle = complete.connection_complete()[1]
    read = cap.one(lambda f: f.att_opcode == ATT_READ_REQ, "Read Request")
    rx_before = cap.where(lambda f: f.is_acl and not f.sent, before=read)
    last_rx = rx_before[-1]
    check(not cap.where(lambda f: f.is_acl and not f.sent, after=read), "the peer answered")
    writes = cap.att(ATT_WRITE_CMD)
    silent = [f for f in writes if f.number > last_rx.number]
    last_tx = silent[-1]
    (disconnection,) = cap.disconnections()
    check(disconnection.disconnection()[2] == 0x08, "not a supervision timeout")
    check(last_tx.time - last_rx.time >= SILENCE, "not silent long enough")
    check(disconnection.time - read.time >= ATT_TIMEOUT, "disconnected before the ATT timeout")
    return clean(
        cap,
        "The Read Request stays unanswered for more than 30 s, so it is att.timeout and not "
        "att.unanswered. The central's controller keeps completing its packets (NOCP), so no "
        "flow.credits-lost.",
        [
            finding(
                "pool.unresponsive-peer",
                "warning",
                handle,
                last_rx,
                last_tx,
                why=f"After the last ACL frame received from the peer ({n(last_rx)}, Find "
                f"Information Response) the host keeps sending ({len(silent)} Write Commands and "
                f"the Read Request {n(read)}) until {n(last_tx)}, "
                f"{seconds(last_rx, last_tx)} later (>= {SILENCE:.0f} s), with nothing received "
                "and no disconnection in between",
            ),
            finding(
                "att.timeout",
                "error",
                handle,
                read,
                why=f"Read Request {n(read)} (handle 0x{att_handle(read):04X}) never gets a "
                f"response; the link closes {seconds(read, disconnection)} later "
                f"(Disconnection Complete {n(disconnection)}), beyond the 30 s ATT timeout",
            ),
        ],
    )


# ---------------------------------------------------------------------- flow.*
def credit_trace(cap: Capture) -> list[tuple[Frame, int]]:
    """(frame, free credits after it) for every ACL TX and NOCP frame."""
    free = total = cap.le_buffers()
    trace = []
    for frame in cap.frames:
        if frame.is_acl and frame.sent:
            free -= 1
            trace.append((frame, free))
        elif frame.is_event(EV_NUMBER_OF_COMPLETED_PACKETS):
            free += sum(count for _h, count in frame.completed_packets())
            trace.append((frame, free))
    check(free == total or cap.disconnections(), "credits do not add up")
    return trace


def zero_credit_resumes(cap: Capture) -> list[tuple[Frame, Frame | None, Frame | None]]:
    """(TX that took the last credit, the next NOCP, the next TX) for each time credits hit 0."""
    trace = credit_trace(cap)
    resumes = []
    for index, (frame, free) in enumerate(trace):
        if frame.is_acl and free == 0:
            later = [f for f, _free in trace[index + 1 :]]
            nocp = next((f for f in later if not f.is_acl), None)
            next_tx = next((f for f in later if f.is_acl), None)
            resumes.append((frame, nocp, next_tx))
    return resumes


@expects("flow_stall.btsnoop")
def expect_flow_stall(cap: Capture) -> Expected:
    complete = check_single_connection(cap)
    handle = complete.connection_complete()[1]
    writes = cap.att(ATT_WRITE_CMD)
    check(len(writes) == 20, "20 Write Commands expected")
    burst_end, resume = writes[9], writes[10]
    resumes = {tx.number: (nocp, nxt) for tx, nocp, nxt in zero_credit_resumes(cap)}
    check(burst_end.number in resumes, "the burst does not use the last credit")
    nocp, first_tx = resumes.pop(burst_end.number)
    check(first_tx is resume and nocp.number < resume.number, "TX during the stall")
    others = [nxt.time - nocp.time for nocp, nxt in resumes.values() if nxt is not None]
    check(bool(others) and max(others) < STALL, "another stall")
    return clean(
        cap,
        f"The controller has {cap.le_buffers()} LE buffers. The credits also reach 0 at "
        f"{len(resumes)} other points (during discovery and inside each burst), but there the "
        f"next packet leaves {millis(max(others))} after the NOCP that returns a credit "
        f"(< {STALL:.0f} s); after the second burst the host only disconnects.",
        [
            finding(
                "flow.skipped-ready",
                "warning",
                handle,
                nocp,
                resume,
                why=f"Write Command {n(burst_end)} uses the last free LE buffer (credits 0); NOCP "
                f"{n(nocp)} returns credits, but the host sends nothing on 0x{handle:04X} until "
                f"Write Command {n(resume)}, {seconds(nocp, resume)} later (>= {STALL:.0f} s)",
            )
        ],
    )


@expects("flow_paced.btsnoop")
def expect_flow_paced(cap: Capture) -> Expected:
    check_single_connection(cap)
    resumes = zero_credit_resumes(cap)
    delays = [nxt.time - nocp.time for _tx, nocp, nxt in resumes if nxt is not None]
    check(len(resumes) >= 5, "credits should run out several times")
    check(max(delays) < STALL, f"a resume took {max(delays):.3f} s")
    return clean(
        cap,
        f"Counter-example of flow_stall: the credits reach 0 {len(resumes)} times, and each time "
        f"the next packet leaves {millis(max(delays))} after the NOCP that returns a credit "
        f"(< {STALL:.0f} s); after the last packet all credits come back and the host only "
        "disconnects (no further TX).",
    )


@expects("flow_stall_free.btsnoop")
def expect_flow_stall_free(cap: Capture) -> Expected:
    check_single_connection(cap)
    errors = check_no_att_errors_but_discovery(cap)
    writes = cap.att(ATT_WRITE_CMD)
    check(len(writes) == 30 and all(len(att_value(f)) == 20 for f in writes), "30 x 20-byte writes")
    gaps = [(b.time - a.time, a, b) for a, b in zip(writes, writes[1:])]
    stall, before, after = max(gaps, key=lambda g: g[0])
    check(before is writes[19] and stall >= STALL, f"the stall is after the 20th chunk ({stall:.2f} s)")
    check(not cap.where(lambda f: f.is_acl and not f.sent, after=before, before=after), "the peer sent something")
    return clean(
        cap,
        f"The stock controller completes every packet at once: credits never run out, so the first form "
        f"of flow.skipped-ready (after a full buffer) cannot apply. {errors} Error Responses, all 0x0A to "
        "discovery requests.",
        [
            finding(
                "flow.skipped-ready",
                "warning",
                before.handle,
                before,
                after,
                why=f"20 Write Commands of exactly ATT_MTU - 3 = 20 bytes about 10 ms apart, then nothing "
                f"for {stall:.1f} s after {n(before)} with every buffer free and nothing received, then "
                f"{n(after)} and 9 more chunks at the same pace",
            )
        ],
    )


@expects("credits_lost.btsnoop")
def expect_credits_lost(cap: Capture) -> Expected:
    complete = check_single_connection(cap)
    handle = complete.connection_complete()[1]
    (disconnection,) = cap.disconnections()
    writes = cap.att(ATT_WRITE_CMD)
    check(len(writes) == 3, "3 Write Commands expected")
    last_nocp = cap.events(EV_NUMBER_OF_COMPLETED_PACKETS)[-1]
    check(last_nocp.number < writes[0].number, "a Write Command was completed")
    tx = cap.where(lambda f: f.is_acl and f.sent)
    completed = sum(
        c for f in cap.events(EV_NUMBER_OF_COMPLETED_PACKETS) for _h, c in f.completed_packets()
    )
    check(completed == len(tx) - 3, "accounting mismatch")
    return clean(
        cap,
        f"{len(tx)} ACL packets sent, {completed} completed by NOCP; the oldest unacknowledged is "
        "the first Write Command (completions are in order).",
        [
            finding(
                "flow.credits-lost",
                "warning",
                handle,
                disconnection,
                writes[0],
                why=f"Disconnection Complete {n(disconnection)} ends 0x{handle:04X} with 3 ACL "
                f"packets (Write Commands {', '.join(n(w) for w in writes)}) never reported by "
                f"Number Of Completed Packets (the last NOCP is {n(last_nocp)}; the oldest was "
                f"sent {seconds(writes[0], disconnection)} before the disconnection)",
            )
        ],
    )


@expects("credits_exhausted.btsnoop")
def expect_credits_exhausted(cap: Capture) -> Expected:
    complete = check_single_connection(cap)
    handle = complete.connection_complete()[1]
    trace = credit_trace(cap)
    offending = [f for f, free in trace if f.is_acl and free < 0]
    check(len(offending) == 1, "one packet over the limit expected")
    (bad,) = offending
    previous = cap.where(lambda f: f.is_acl and f.sent, before=bad)[-1]
    return clean(
        cap,
        "After the extra packet the controller completes all 5 (NOCP 2 + 2 + 1), so nothing is "
        "lost at the disconnection.",
        [
            finding(
                "flow.credits-exhausted",
                "error",
                handle,
                bad,
                why=f"Write Command {n(bad)} is sent while all {cap.le_buffers()} LE buffers are "
                f"in use (the 4th, {n(previous)}, took the last one and no NOCP came since)",
            )
        ],
    )


# ---------------------------------------------------------------------- gatt.* / security
SECURE_CCCD = 0x0026
NO_NOTIFY_CCCD = 0x0029
HR_CCCD = 0x0011


def cccd_write(cap: Capture, cccd: int, index: int = 0) -> Frame:
    writes = [f for f in cap.att(ATT_WRITE_REQ) if att_handle(f) == cccd]
    check(len(writes) > index, f"no CCCD write #{index} to 0x{cccd:04X}")
    return writes[index]


def subscription_findings(cap: Capture, recovered: bool) -> tuple[list[Finding], Frame]:
    write = cccd_write(cap, SECURE_CCCD)
    error = cap.response_to(write)
    check(error.att_opcode == ATT_ERROR_RSP, "the CCCD write succeeded")
    request, handle, code = error_fields(error)
    check((request, handle, code) == (ATT_WRITE_REQ, SECURE_CCCD, 0x0F), "unexpected error")
    severity = "info" if recovered else "warning"
    conn = error.handle
    findings = [
        finding(
            "gatt.subscription-failed",
            severity,
            conn,
            error,
            write,
            why=f"Write Request {n(write)} of 01 00 to the CCCD 0x{SECURE_CCCD:04X} (Secure "
            f"Notify) answered by Error Response {n(error)} {att_error_name(code)}"
            + (
                "; a later write to the same CCCD succeeds, so info"
                if recovered
                else "; never retried"
            ),
        ),
        finding(
            "security.insufficient",
            severity,
            conn,
            error,
            write,
            why=f"Error Response {n(error)} {att_error_name(code)} to Write Request {n(write)}"
            + (
                "; the link is then encrypted and the same write succeeds, so info"
                if recovered
                else "; the link is never encrypted"
            ),
        ),
        finding(
            "att.error",
            "info",
            conn,
            error,
            why=f"first Error Response with code {att_error_name(code)} on 0x{conn:04X} ({n(error)})",
        ),
    ]
    return findings, error


@expects("cccd_insufficient_encryption.btsnoop")
def expect_cccd_insufficient_encryption(cap: Capture) -> Expected:
    check_single_connection(cap)
    findings, _ = subscription_findings(cap, recovered=False)
    check(not cap.events(EV_ENCRYPTION_CHANGE), "encryption happened")
    return clean(
        cap,
        "The other Error Responses are 0x0A to discovery requests (not att.error). The failed "
        "subscription was never acknowledged, so it cannot be silent.",
        findings,
    )


@expects("cccd_recovered.btsnoop")
def expect_cccd_recovered(cap: Capture) -> Expected:
    check_single_connection(cap)
    findings, error = subscription_findings(cap, recovered=True)
    change = cap.first(
        lambda f: f.is_event(EV_ENCRYPTION_CHANGE), after=error, what="Encryption Change"
    )
    check(change.encryption_change()[0] == 0, "encryption failed")
    retry = cccd_write(cap, SECURE_CCCD, 1)
    check(retry.number > change.number, "retry before encryption")
    ok = cap.response_to(retry)
    check(ok.att_opcode == ATT_WRITE_RSP, "retry failed")
    notifications = [f for f in cap.att(ATT_NOTIFICATION) if att_handle(f) == 0x0025]
    check(
        len(notifications) == 3 and notifications[0].number > ok.number, "3 notifications expected"
    )
    return clean(
        cap,
        f"Recovery: Encryption Change {n(change)} (0x00), the retried CCCD write {n(retry)} gets "
        f"Write Response {n(ok)} and 3 notifications on 0x0025 follow, so the subscription is "
        "neither failed (warning) nor silent, and security.insufficient is info. The pairing "
        "succeeds (no Pairing Failed).",
        findings,
    )


@expects("cccd_silent.btsnoop", "peer_subscribes.btsnoop")
def expect_cccd_silent(cap: Capture) -> Expected:
    check_single_connection(cap)
    write = cccd_write(cap, HR_CCCD)
    response = cap.response_to(write)
    check(response.att_opcode == ATT_WRITE_RSP, "subscription refused")
    check(not cap.att(ATT_NOTIFICATION, ATT_INDICATION), "something was notified")
    (disconnection,) = cap.disconnections()
    waited = disconnection.time - response.time
    check(waited >= SUBSCRIPTION_WAIT, f"only {waited:.1f} s")
    return clean(
        cap,
        "The CCCD of Heart Rate Measurement (value handle 0x0010) is 0x0011, known from Find "
        "Information during discovery. Silence after subscribing is information only (RULES.md). In "
        "peer_subscribes.btsnoop (the peripheral's view) the write comes from the peer and the host "
        "is the server that stays silent.",
        [
            finding(
                "gatt.subscription-silent",
                "info",
                response.handle,
                response,
                write,
                why=f"Write Request {n(write)} of 01 00 to the CCCD 0x{HR_CCCD:04X} acknowledged "
                f"by Write Response {n(response)}; no notification on 0x0010 until the link "
                f"closes {waited:.1f} s later (>= {SUBSCRIPTION_WAIT:.0f} s)",
            )
        ],
    )


@expects("cccd_no_notify_property.btsnoop")
def expect_cccd_no_notify_property(cap: Capture) -> Expected:
    check_single_connection(cap)
    write = cccd_write(cap, NO_NOTIFY_CCCD)
    response = cap.response_to(write)
    check(response.att_opcode == ATT_WRITE_RSP, "write refused")
    (disconnection,) = cap.disconnections()
    check(disconnection.time - response.time < SUBSCRIPTION_WAIT, "waited too long")
    return clean(
        cap,
        "The characteristic (declaration 0x0027, value 0x0028) was discovered with properties "
        "0x0A (read, write) by Read By Type; its descriptor 0x0029 is a CCCD (Find Information). "
        f"The link closes {seconds(response, disconnection)} after the acknowledged write, "
        f"before the {SUBSCRIPTION_WAIT:.0f} s wait, so gatt.subscription-silent does not apply.",
        [
            finding(
                "gatt.subscription-no-notify-property",
                "info",
                write.handle,
                write,
                why=f"Write Request {n(write)} writes 01 00 (enable notifications) to the CCCD "
                f"0x{NO_NOTIFY_CCCD:04X} of characteristic 0x0028 whose properties (read, write) "
                "have neither Notify nor Indicate",
            )
        ],
    )


@expects("cccd_unanswered.btsnoop")
def expect_cccd_unanswered(cap: Capture) -> Expected:
    check_single_connection(cap)
    write = cccd_write(cap, HR_CCCD)
    check(not cap.where(lambda f: f.is_acl and not f.sent, after=write), "the peer answered")
    (disconnection,) = cap.disconnections()
    waited = disconnection.time - write.time
    check(waited >= ATT_TIMEOUT, "closed before the ATT timeout")
    why = (
        f"Write Request {n(write)} of 01 00 to the CCCD 0x{HR_CCCD:04X} has no response in the "
        f"{waited:.1f} s until the link closes (Disconnection Complete {n(disconnection)}, >= 30 s)"
    )
    return clean(
        cap,
        "Both findings share the Write Request as evidence. The central kept the link up past the ATT "
        "transaction timeout, so the missing answer is proven (a request pending when the host closes "
        "the link earlier would be information only).",
        [
            finding("gatt.subscription-unanswered", "warning", write.handle, write, why=why),
            finding("att.timeout", "error", write.handle, write, why=why),
        ],
    )


@expects("unsubscribed_notification.btsnoop")
def expect_unsubscribed_notification(cap: Capture) -> Expected:
    check_single_connection(cap)
    check(not cap.att(ATT_WRITE_REQ, ATT_WRITE_CMD), "a write happened")
    notifications = cap.att(ATT_NOTIFICATION)
    check(
        len(notifications) == 2 and {att_handle(f) for f in notifications} == {0x0010},
        "2 notifications on 0x0010",
    )
    first = notifications[0]
    return clean(
        cap,
        "Once per handle: the second notification on 0x0010 adds no finding.",
        [
            finding(
                "gatt.unsubscribed-notification",
                "warning",
                first.handle,
                first,
                why=f"Handle Value Notification {n(first)} on 0x0010 (Heart Rate Measurement) "
                f"although its CCCD 0x{HR_CCCD:04X} is never written on this connection, whose "
                "set-up is in the capture and which is never encrypted (no bonded client)",
            )
        ],
    )


# ---------------------------------------------------------------------- mtu.*
@expects("mtu_truncated_read.btsnoop")
def expect_mtu_truncated_read(cap: Capture) -> Expected:
    check_single_connection(cap)
    check(not cap.att(ATT_MTU_REQ), "MTU exchanged")
    reads = cap.att(ATT_READ_REQ)
    check(len(reads) == 2, "two Read Requests (the long value, then another)")
    request = reads[0]
    response = cap.response_to(request)
    check(response.att_opcode == ATT_READ_RSP and len(att_value(response)) == 22, "not 22 bytes")
    check(not cap.att(ATT_READ_BLOB_REQ), "a Read Blob follows")
    later = cap.where(lambda f: f.att_opcode == ATT_READ_REQ and f.sent, after=response)
    check(len(later) == 1, "the client moves on with one more Read Request")
    return clean(
        cap,
        f"ATT_MTU is the default 23 (no exchange). The client moves on: Read Request {n(later[0])}.",
        [
            finding(
                "mtu.truncated-read",
                "warning",
                response.handle,
                response,
                request,
                why=f"Read Response {n(response)} of 22 bytes (ATT_MTU 23 - 1) to Read Request "
                f"{n(request)} for handle 0x{att_handle(request):04X}; the client's next request "
                f"{n(later[0])} reads another handle and no Read Blob Request follows",
            )
        ],
    )


@expects("mtu_truncated_notify.btsnoop")
def expect_mtu_truncated_notify(cap: Capture) -> Expected:
    first_link, second_link = cap.disconnections()
    check(len(cap.att(ATT_MTU_REQ)) == 1, "one MTU exchange (first connection)")
    notifications = cap.att(ATT_NOTIFICATION)
    check(len(notifications) == 6, "6 notifications")
    whole = [f for f in notifications if f.number < first_link.number]
    cut = [f for f in notifications if f.number > first_link.number]
    check(len(whole) == 3 and all(len(att_value(f)) == 100 for f in whole), "3 x 100 bytes first")
    check(len(cut) == 3 and all(len(att_value(f)) == 20 for f in cut), "3 x 20 bytes second")
    first = cut[0]
    return clean(
        cap,
        "Once per handle: the other two 20-byte notifications on 0x0010 add no finding. The first "
        "connection (ATT_MTU 247) gets the whole 100-byte values: no finding.",
        [
            finding(
                "mtu.truncated-notification",
                "warning",
                first.handle,
                first,
                whole[-1],
                why=f"On the second connection every notification on 0x0010 carries exactly 20 bytes "
                f"(ATT_MTU 23 - 3, no exchange), while the same characteristic of the same peripheral "
                f"carried 100 bytes on the first connection ({n(whole[-1])})",
            )
        ],
    )


@expects("segmented_notify.btsnoop")
def expect_segmented_notify(cap: Capture) -> Expected:
    check_single_connection(cap)
    check(not cap.att(ATT_MTU_REQ), "MTU exchanged")
    notifications = cap.att(ATT_NOTIFICATION)
    lengths = [len(att_value(f)) for f in notifications]
    check(lengths == [20, 20, 10, 20, 20, 10], f"chunks {lengths}")
    errors = check_no_att_errors_but_discovery(cap)
    return clean(
        cap,
        "Two 50-byte messages in 20/20/10-byte chunks on 0x0010 at ATT_MTU 23: the 20-byte chunks fill "
        "ATT_MTU - 3 but the shorter last chunk shows the application segments its data, so no "
        f"mtu.truncated-notification. {errors} Error Responses, all 0x0A to discovery requests.",
    )


@expects("mid_connection_start.btsnoop")
def expect_mid_connection_start(cap: Capture) -> Expected:
    commands = {f.opcode for f in cap.commands()}
    check(commands == {OP_DISCONNECT}, f"commands other than Disconnect: {commands}")
    check(
        not cap.where(lambda f: f.is_event(LE_META_EVENT, CONNECTION_COMPLETE_SUBEVENTS)),
        "a Connection Complete is in the capture",
    )
    check(not cap.att(ATT_MTU_REQ), "an MTU exchange is in the capture")
    check(cap.frames[0].att_opcode == ATT_NOTIFICATION, "the capture does not begin with data")
    notifications = cap.att(ATT_NOTIFICATION)
    check(
        len(notifications) == 5 and all(len(att_value(f)) == 244 for f in notifications),
        "five 244-byte notifications",
    )
    check({att_handle(f) for f in notifications} == {0x0010}, "notifications on 0x0010")
    check(not cap.att(ATT_WRITE_REQ), "a CCCD write is in the capture")
    write = cap.one(lambda f: f.att_opcode == ATT_WRITE_CMD, "Write Command")
    check(len(att_value(write)) == 244 and write.pb_flag == 0b00, "one 244-byte Write Command")
    check(len(write.body) - 4 == 4 + len(write.att), "write fragmented")
    largest = max(len(f.att) for f in cap.att())
    # The premise of the scenario: each wrong MTU guess has a false alarm to make.
    check(len(att_value(write)) > 23 - 3, "the write fits the default ATT_MTU: proves nothing")
    check(
        all(len(att_value(f)) == largest - 3 for f in notifications),
        "the notifications do not fill the lower bound: proves nothing",
    )
    return clean(
        cap,
        "The capture begins after the connection set-up (first frame: Notification "
        f"{n(notifications[0])}; no Connection Complete, MTU exchange, discovery or CCCD write), so "
        f"the ATT_MTU is unknown: the largest ATT PDU seen ({largest} bytes) only bounds it below. "
        "No mtu.* finding: assuming the default 23, the 244-byte Write Command "
        f"{n(write)} would be mtu.write-too-long; taking {largest} as the MTU, every notification "
        "on 0x0010 would be exactly ATT_MTU - 3 (mtu.truncated-notification). The subscription "
        "predates the capture, so no gatt.unsubscribed-notification. The connection (handle "
        "0x0001) is known only from its traffic and its Disconnection Complete.",
    )


@expects("mtu_write_too_long.btsnoop")
def expect_mtu_write_too_long(cap: Capture) -> Expected:
    check_single_connection(cap)
    check(not cap.att(ATT_MTU_REQ), "MTU exchanged")
    write = cap.one(lambda f: f.att_opcode == ATT_WRITE_CMD, "Write Command")
    check(len(att_value(write)) == 30, "not 30 bytes")
    check(write.pb_flag == 0b00 and len(write.body) - 4 == 4 + len(write.att), "write fragmented")
    return clean(
        cap,
        "The 33-byte PDU is carried by one ACL packet (251-byte controller buffers), so the "
        "evidence frame is unambiguous.",
        [
            finding(
                "mtu.write-too-long",
                "warning",
                write.handle,
                write,
                why=f"Write Command {n(write)} to 0x{att_handle(write):04X} with a 30-byte value, "
                "over ATT_MTU 23 - 3 = 20 (no MTU exchange)",
            )
        ],
    )


@expects("mtu_late_exchange.btsnoop")
def expect_mtu_late_exchange(cap: Capture) -> Expected:
    check_single_connection(cap)
    mtu = cap.one(lambda f: f.att_opcode == ATT_MTU_REQ, "MTU request")
    data = [
        f
        for f in cap.att()
        if f.att[0] not in ATT_DISCOVERY_REQUESTS | {0x05, 0x07, 0x09, 0x11}
        and not (f.att[0] == ATT_ERROR_RSP and f.att[1] in ATT_DISCOVERY_REQUESTS)
    ]
    first_data = data[0]
    check(
        first_data.att_opcode == ATT_READ_REQ and first_data.number < mtu.number,
        "no data before MTU",
    )
    return clean(
        cap,
        "Discovery PDUs (Find By Type Value, Read By Type, Find Information and their 0x0A "
        "errors) before the read do not count as data.",
        [
            finding(
                "mtu.late-exchange",
                "info",
                mtu.handle,
                mtu,
                first_data,
                why=f"Exchange MTU Request {n(mtu)} after ATT data already flowed: Read Request "
                f"{n(first_data)} (Battery Level 0x{att_handle(first_data):04X}) at ATT_MTU 23",
            )
        ],
    )


# ---------------------------------------------------------------------- att.*
@expects("att_protocol_violation.btsnoop")
def expect_att_protocol_violation(cap: Capture) -> Expected:
    check_single_connection(cap)
    reads = cap.att(ATT_READ_REQ)[:2]   # the third is the client's read after the indications
    check(reads[1].number < cap.response_to(reads[0]).number, "not overlapping")
    responses = cap.att(ATT_READ_RSP)
    check(len(responses) == 4, "4 Read Responses expected")
    unsolicited = responses[2]
    check(att_value(unsolicited) == b"\xee", "unexpected unsolicited response")
    indications = cap.att(ATT_INDICATION)
    check(len(indications) == 2 and not cap.att(ATT_CONFIRMATION), "2 unconfirmed indications")
    later = cap.where(lambda f: f.att_opcode == ATT_READ_REQ and f.sent, after=indications[1])
    check(len(later) == 1, "the client reads once more after the indications")
    conn = reads[0].handle
    (disconnection,) = cap.disconnections()
    return clean(
        cap,
        "Requests are matched to responses in order (FIFO): the server answers both reads, "
        f"{n(responses[0])} answers {n(reads[0])} and {n(responses[1])} answers {n(reads[1])}, so "
        "only the second request is a violation; the later Read Response "
        f"{n(unsolicited)} has no outstanding request. Indication {n(indications[0])} is "
        f"unconfirmed when the next indication arrives (the violation); {n(indications[1])} is never "
        f"confirmed although the client sends Read Request {n(later[0])} after it.",
        [
            finding(
                "att.protocol-violation",
                "warning",
                conn,
                reads[1],
                reads[0],
                why=f"Read Request {n(reads[1])} (0x0016) sent while Read Request {n(reads[0])} "
                "(0x0003) is still outstanding",
            ),
            finding(
                "att.protocol-violation",
                "warning",
                conn,
                unsolicited,
                why=f"Read Response {n(unsolicited)} (value EE) received with no outstanding request",
            ),
            finding(
                "att.protocol-violation",
                "warning",
                conn,
                indications[1],
                indications[0],
                why=f"Indication {n(indications[1])} sent while indication {n(indications[0])} is "
                "still unconfirmed",
            ),
            finding(
                "att.indication-unconfirmed",
                "warning",
                conn,
                indications[1],
                later[0],
                why=f"Indication {n(indications[1])} on 0x001F is never confirmed although the client "
                f"sends Read Request {n(later[0])} after it",
            ),
        ],
    )


# ---------------------------------------------------------------------- security.*
@expects("encryption_failed.btsnoop")
def expect_encryption_failed(cap: Capture) -> Expected:
    check_single_connection(cap)
    change = cap.one(lambda f: f.is_event(EV_ENCRYPTION_CHANGE), "Encryption Change")
    status, handle = change.encryption_change()
    check(status == 0x06, f"status 0x{status:02X}")
    enable = cap.one(lambda f: f.is_command(0x2019), "LE Enable Encryption")
    check(cap.status_of(enable).command_status()[0] == 0, "LE Enable Encryption rejected")
    # The disconnection that follows is the key-missing failure's consequence: folded into it.
    disconnects = [
        dataclasses.replace(f, cause=("key-missing", change.number)) if f.rule == "link.disconnect" else f
        for f in disconnect_findings(cap)
    ]
    return Expected(
        cap.name,
        (
            finding(
                "security.encryption-failed",
                "error",
                handle,
                change,
                why=f"Encryption Change {n(change)} for 0x{handle:04X} with status "
                f"{status_name(status)} after LE Enable Encryption {n(enable)} (the peripheral "
                "has no key for this LTK); the disconnection after it is folded into this finding",
            ),
            *disconnects,
        ),
        "No SMP traffic: the central used a stored LTK. The disconnection (reason 0x05) is the "
        "key-missing failure's consequence: one problem, one finding.",
    )


@expects("repeated_pairing.btsnoop")
def expect_repeated_pairing(cap: Capture) -> Expected:
    check_single_connection(cap)
    requests = cap.smp(SMP_PAIRING_REQUEST)
    failures = cap.smp(SMP_PAIRING_FAILED)
    check(len(requests) == len(failures) == 3, "3 failed pairings expected")
    check(not cap.events(EV_ENCRYPTION_CHANGE), "encryption happened")
    handle = requests[0].handle
    findings = [
        finding(
            "security.pairing-failed",
            "error",
            handle,
            failed,
            request,
            why=f"SMP Pairing Failed {n(failed)}, reason 0x{failed.pdu[1]:02X} Pairing Not "
            f"Supported, for Pairing Request {n(request)}; no later pairing succeeds",
        )
        for request, failed in zip(requests, failures)
    ]
    findings.append(
        finding(
            "security.repeated-pairing",
            "warning",
            handle,
            requests[2],
            why=f"Third Pairing Request on 0x{handle:04X}: {', '.join(n(r) for r in requests)}",
        )
    )
    return clean(cap, "All three attempts on the same connection fail.", findings)


# ---------------------------------------------------------------------- adv.*
@expects("adv_not_stopped.btsnoop")
def expect_adv_not_stopped(cap: Capture) -> Expected:
    complete = check_single_connection(cap)
    _status, handle, role, _peer = complete.connection_complete()
    check(role == 0x01, "not a peripheral connection")
    enables = [f for f in cap.commands(OP_LE_SET_ADVERTISING_ENABLE) if f.params[0] == 1]
    check(
        len(enables) == 2 and enables[0].number < complete.number < enables[1].number, "2 enables"
    )
    (disconnection,) = cap.disconnections()
    check(enables[1].number < disconnection.number, "enable after disconnection")
    return clean(
        cap,
        f"The first LE Set Advertising Enable ({n(enables[0])}) precedes the connection, and "
        "legacy advertising stops by itself when the connection is accepted, so only the "
        "re-enable is reported. The peripheral sees the central's disconnection as reason 0x13.",
        [
            finding(
                "adv.not-stopped",
                "info",
                handle,
                enables[1],
                why=f"LE Set Advertising Enable (0x01) {n(enables[1])} while the accepted connection "
                f"0x{handle:04X} (LE Connection Complete {n(complete)}, role peripheral) is open "
                f"(closed only by {n(disconnection)})",
            )
        ],
    )


# ---------------------------------------------------------------------- causes (issue 23)
PEER = "C0:11:22:33:44:02"
OP_LE_SET_SCAN_ENABLE = 0x200C
REASON_TIMEOUT = 0x08
REASON_LOCAL_HOST = 0x16


def summary_finding(cap: Capture) -> Finding:
    frames = cap.disconnections()
    reasons: dict[int, int] = {}
    for frame in frames:
        reason = frame.disconnection()[2]
        reasons[reason] = reasons.get(reason, 0) + 1
    summary = ", ".join(f"{status_name(r)} x{c}" for r, c in sorted(reasons.items()))
    return finding(
        "link.disconnect-summary", "info", None, *frames,
        why=f"{len(frames)} disconnection(s): {summary}",
    )


def only_disconnection(cap: Capture, reason: int) -> tuple[Frame, int]:
    (disconnection,) = cap.disconnections()
    _status, handle, actual = disconnection.disconnection()
    check(actual == reason, f"{cap.name}: reason {status_name(actual)}, not {status_name(reason)}")
    return disconnection, handle


def acl_rx(cap: Capture, before: Frame | None = None, after: Frame | None = None) -> list[Frame]:
    return cap.where(lambda f: f.is_acl and not f.sent, after=after, before=before)


def host_disconnect(cap: Capture, handle: int) -> Frame:
    command = cap.one(lambda f: f.is_command(OP_DISCONNECT), "HCI Disconnect")
    check(struct.unpack_from("<H", command.params)[0] == handle, "Disconnect for another handle")
    check(cap.status_of(command).command_status()[0] == 0, "Disconnect refused")
    return command


def timer_expiry(cap: Capture, start: Frame, command: Frame, timer: float, what: str) -> float:
    """Seconds from ``start`` to the host's Disconnect, checked to be right after ``timer``."""
    waited = command.time - start.time
    check(
        timer <= waited < timer + TIMER_MARGIN,
        f"{cap.name}: Disconnect {waited:.3f} s after {what}, not right after {timer:.0f} s",
    )
    return waited


def l2cap_signaling(cap: Capture, code: int, sent: bool) -> Frame:
    return cap.one(
        lambda f: f.cid == LE_SIGNALING_CID and f.pdu and f.pdu[0] == code and f.sent == sent,
        f"L2CAP signaling code 0x{code:02X}",
    )


def update_completes(cap: Capture) -> list[Frame]:
    return cap.events(LE_META_EVENT, (SUB_CONNECTION_UPDATE_COMPLETE,))


def units(parameters: tuple[int, int, int]) -> str:
    interval, latency, timeout = parameters
    return f"interval {interval * 1.25:g} ms, latency {latency}, supervision timeout {timeout * 10} ms"


@expects("cause_peer_reset.btsnoop")
def expect_cause_peer_reset(cap: Capture) -> Expected:
    complete = check_single_connection(cap)
    _status, handle, _role, peer = complete.connection_complete()
    check(peer == PEER, f"connected to {peer}")
    parameters = complete.connection_parameters()
    supervision = parameters[2] / 100
    write = cap.one(lambda f: f.att_opcode == ATT_WRITE_REQ, "Write Request")
    check(att_value(write) == b"\x52\x42" and att_handle(write) == 0x001D, "not the command")
    check(not acl_rx(cap, after=write), "the peer sent something after the command")
    last_rx = acl_rx(cap, before=write)[-1]
    scan = cap.first(
        lambda f: f.is_command(OP_LE_SET_SCAN_ENABLE) and f.params[0] == 1, after=write,
        what="LE Set Scan Enable",
    )
    disconnection, _ = only_disconnection(cap, REASON_TIMEOUT)
    heard = cap.where(
        lambda f: f.is_event(LE_META_EVENT, (SUB_ADVERTISING_REPORT,))
        and (PEER, True) in f.advertising_reports(),
        after=last_rx,
        before=disconnection,
    )
    check(len(heard) >= 2, "the peer is not heard advertising while connected")
    reports = cap.events(LE_META_EVENT, (SUB_ADVERTISING_REPORT,))
    check(
        all(r.advertising_reports() == [(PEER, True)] for r in reports),
        "a report that is not an ADV_IND from the peer",
    )
    first = heard[0]
    check(scan.number < first.number, "reports before the scan")
    check(
        disconnection.time - last_rx.time >= supervision,
        "the controller gave up before the supervision timeout",
    )
    return Expected(
        cap.name,
        (
            finding(
                "att.unanswered",
                "info",
                handle,
                write,
                why=f"Write Request {n(write)} (`52 42` to 0x001D) is never answered: the link is "
                f"lost (Disconnection Complete {n(disconnection)}, 0x08) "
                f"{seconds(write, disconnection)} later; a consequence of that loss, reported there",
                cause=("link-loss", disconnection),
            ),
            finding(
                "link.disconnect",
                "warning",
                handle,
                disconnection,
                why=f"Disconnection Complete {n(disconnection)}, handle 0x{handle:04X}, reason "
                f"{status_name(REASON_TIMEOUT)}; the peer {PEER} was heard advertising connectably "
                f"(LE Advertising Report {n(first)}, ADV_IND, {seconds(write, first)} after the "
                f"command {n(write)}; {len(heard)} ADV_IND reports before the loss) after its last packet "
                f"{n(last_rx)} while the link was still open: it restarted or left the link",
                cause=("peer-reset", first),
            ),
            summary_finding(cap),
        ),
        f"Connection parameters from LE Connection Complete {n(complete)}: {units(parameters)}. "
        f"The app scans passively (LE Set Scan Enable {n(scan)}) right after the command: "
        f"{len(reports)} LE Advertising Reports, all ADV_IND from {PEER}. The loss comes {seconds(last_rx, disconnection)} after the peer's last "
        f"packet {n(last_rx)}, as the {supervision:g} s supervision timeout says. The unanswered "
        "write is info with cause link-loss: one problem, one finding (the disconnection).",
        causes=True,
    )


@expects("cause_att_timeout_indication.btsnoop")
def expect_cause_att_timeout_indication(cap: Capture) -> Expected:
    check_single_connection(cap)
    indication = cap.one(lambda f: f.att_opcode == ATT_INDICATION, "indication")
    check(indication.sent, "the indication is not the phone's")
    check(
        att_handle(indication) == 0x0008 and att_value(indication) == b"\x01\x00\xff\xff",
        "not a Service Changed indication for 0x0001-0xFFFF",
    )
    subscribe = cap.one(
        lambda f: f.att_opcode == ATT_WRITE_REQ and not f.sent and att_handle(f) == 0x0009,
        "CCCD write by the peer",
    )
    check(att_value(subscribe) == b"\x02\x00", "not an indication subscription")
    check(cap.response_to(subscribe).att_opcode == ATT_WRITE_RSP, "subscription refused")
    check(subscribe.number < indication.number, "subscribed after the indication")
    check(not cap.att(ATT_CONFIRMATION), "a confirmation was sent")
    check(not acl_rx(cap, after=indication), "the peer sent something after the indication")
    disconnection, handle = only_disconnection(cap, REASON_LOCAL_HOST)
    command = host_disconnect(cap, handle)
    waited = timer_expiry(cap, indication, command, ATT_TIMEOUT, "the indication")
    return Expected(
        cap.name,
        (
            finding(
                "att.indication-unconfirmed",
                "info",
                handle,
                indication,
                why=f"Service Changed indication {n(indication)} (0x0008) to the subscribed peer "
                f"(CCCD write {n(subscribe)}) is never confirmed; the host's disconnect {n(disconnection)} "
                "30 s later is folded into this finding (one problem, one finding)",
            ),
            finding(
                "link.disconnect",
                "warning",
                handle,
                disconnection,
                why=f"Disconnection Complete {n(disconnection)}, reason "
                f"{status_name(REASON_LOCAL_HOST)}, after the host's HCI Disconnect {n(command)} "
                f"sent {waited:.2f} s after the unconfirmed indication {n(indication)}: the ATT "
                "transaction timed out (30 s, Core v5.4 Vol 3 Part F 3.3.3) and the host closed "
                "the dead bearer",
                cause=("att-timeout", indication),
            ),
            summary_finding(cap),
        ),
        "The phone's own GATT server sends the indication; the peer had subscribed to Service "
        f"Changed ({n(subscribe)}), so the indication was due a confirmation. Nothing is received "
        "from the peer after it. 0x16 alone would be an ordinary local termination (info); the "
        "30 s ATT timeout before the HCI Disconnect makes it a warning.",
        causes=True,
    )


@expects("cause_smp_timeout.btsnoop")
def expect_cause_smp_timeout(cap: Capture) -> Expected:
    check_single_connection(cap)
    smp_frames = cap.where(lambda f: f.smp_code is not None)
    last = smp_frames[-1]
    check(last.smp_code == SMP_PAIRING_DHKEY_CHECK and last.sent, "last SMP PDU: not our DHKey Check")
    randoms = cap.smp(SMP_PAIRING_RANDOM)
    check(
        len(randoms) == 2 and not randoms[1].sent and randoms[1].number < last.number,
        "the responder's Pairing Random",
    )
    check(not cap.smp(SMP_PAIRING_FAILED), "Pairing Failed in the capture")
    check(
        len(cap.smp(SMP_PAIRING_DHKEY_CHECK)) == 1, "the responder sent its DHKey Check"
    )
    check(not cap.events(EV_ENCRYPTION_CHANGE) and not cap.commands(0x2019), "encryption started")
    disconnection, handle = only_disconnection(cap, REASON_LOCAL_HOST)
    command = host_disconnect(cap, handle)
    waited = timer_expiry(cap, last, command, SMP_TIMEOUT, "the last SMP PDU")
    return Expected(
        cap.name,
        (
            finding(
                "security.pairing-timeout",
                "warning",
                handle,
                last,
                why=f"Pairing (Request {n(cap.smp(SMP_PAIRING_REQUEST)[0])}) stops after the "
                f"responder's Pairing Random {n(randoms[1])}: the central's DHKey Check {n(last)} "
                f"gets neither a DHKey Check nor a Pairing Failed, and no SMP PDU follows for "
                f"{seconds(last, disconnection)} (SMP timeout 30 s, Core v5.4 Vol 3 Part H 3.4)",
                cause=("smp-timeout", last),
            ),
            finding(
                "link.disconnect",
                "info",
                handle,
                disconnection,
                why=f"Disconnection Complete {n(disconnection)}, reason "
                f"{status_name(REASON_LOCAL_HOST)}, after the host's HCI Disconnect {n(command)} "
                f"{waited:.2f} s after the last SMP PDU {n(last)}: the end of the timed-out "
                "pairing, reported there (one problem, one finding)",
                cause=("smp-timeout", last),
            ),
            summary_finding(cap),
        ),
        "Bumble's SMP has no 30 s timer; the scenario plays it and the host disconnects. No "
        "Pairing Failed, no encryption: the stall is visible only as 30 s of SMP silence.",
        causes=True,
    )


@expects("cause_conn_update_failed.btsnoop")
def expect_cause_conn_update_failed(cap: Capture) -> Expected:
    complete = check_single_connection(cap)
    handle = complete.connection_complete()[1]
    command = cap.one(lambda f: f.is_command(OP_LE_CONNECTION_UPDATE), "LE Connection Update")
    status = cap.status_of(command)
    check(status.is_event(EV_COMMAND_STATUS) and status.command_status()[0] == 0, "not accepted")
    (update,) = update_completes(cap)
    code, updated = update.update_complete()
    check(code == 0x20 and updated == handle, f"update status {status_name(code)}")
    check(
        update.connection_parameters() == complete.connection_parameters(),
        "parameters changed",
    )
    requested = struct.unpack_from("<HHHH", command.params, 2)
    read = cap.first(lambda f: f.att_opcode == ATT_READ_REQ, after=update, what="read after")
    check(cap.response_to(read).att_opcode == ATT_READ_RSP, "the link does not work")
    _disconnection, _ = only_disconnection(cap, 0x13)
    return Expected(
        cap.name,
        (
            finding(
                "link.parameter-update-refused",
                "warning",
                handle,
                update,
                why=f"LE Connection Update {n(command)} (interval {requested[0] * 1.25:g}-"
                f"{requested[1] * 1.25:g} ms, latency {requested[2]}, timeout "
                f"{requested[3] * 10} ms) accepted by Command Status {n(status)} (0x00), then LE "
                f"Connection Update Complete {n(update)} with status {status_name(code)}: the "
                f"parameters stay {units(update.connection_parameters())}",
                cause=("controller-refused", update),
            ),
            *disconnect_findings(cap),
        ),
        f"The link keeps working with its old parameters (Read Request {n(read)} answered). The "
        "0x13 disconnection is info.",
        causes=True,
    )


@expects("cause_short_supervision.btsnoop")
def expect_cause_short_supervision(cap: Capture) -> Expected:
    complete = check_single_connection(cap)
    request = l2cap_signaling(cap, L2CAP_CONNECTION_PARAMETER_UPDATE_REQUEST, sent=False)
    response = l2cap_signaling(cap, L2CAP_CONNECTION_PARAMETER_UPDATE_RESPONSE, sent=True)
    asked = struct.unpack_from("<HHHH", request.pdu, 4)  # interval min/max, latency, timeout
    check(asked[3] == 10, f"asked timeout {asked[3] * 10} ms")
    check(struct.unpack_from("<H", response.pdu, 4)[0] == 0, "the host rejected the request")
    command = cap.one(lambda f: f.is_command(OP_LE_CONNECTION_UPDATE), "LE Connection Update")
    check(struct.unpack_from("<HHHH", command.params, 2) == asked, "applied other parameters")
    (update,) = update_completes(cap)
    check(update.update_complete()[0] == 0, "update failed")
    applied = update.connection_parameters()
    check(applied[2] == 10, "timeout not applied")
    before = complete.connection_parameters()
    check(applied[2] < before[2], "the timeout was not shortened")
    disconnection, handle = only_disconnection(cap, REASON_TIMEOUT)
    last_rx = acl_rx(cap, before=disconnection)[-1]
    gap = disconnection.time - last_rx.time
    check(gap > applied[2] / 100, f"lost {gap:.3f} s after the last packet")
    reads = [f for f in cap.att(ATT_READ_REQ) if f.number > update.number]
    return Expected(
        cap.name,
        (
            finding(
                "link.disconnect",
                "warning",
                handle,
                disconnection,
                why=f"Disconnection Complete {n(disconnection)}, reason "
                f"{status_name(REASON_TIMEOUT)}, {gap * 1000:.0f} ms after the last packet "
                f"{n(last_rx)}; the supervision timeout in force is {applied[2] * 10} ms, applied "
                f"by LE Connection Update Complete {n(update)} (was {before[2] * 10} ms) at the "
                f"peer's request {n(request)}",
                cause=("parameters", update),
            ),
            summary_finding(cap),
        ),
        f"Parameters: LE Connection Complete {n(complete)}: {units(before)}; the peer's L2CAP "
        f"Connection Parameter Update Request {n(request)} asks {units(asked[1:])}; accepted "
        f"({n(response)}) and applied (LE Connection Update {n(command)}, Complete {n(update)}: "
        f"{units(applied)}). {len(reads)} reads work after it before the loss.",
        causes=True,
    )


@expects("slow_response.btsnoop")
def expect_slow_response(cap: Capture) -> Expected:
    complete = check_single_connection(cap)
    handle = complete.connection_complete()[1]
    check_no_att_errors_but_discovery(cap)
    writes = cap.att(ATT_WRITE_REQ)
    check(len(writes) == 2, "two Write Requests")
    findings = []
    for write in writes:
        response = cap.response_to(write)
        check(response.att_opcode == ATT_WRITE_RSP, "not a Write Response")
        delay = response.time - write.time
        check(SLOW_RESPONSE < delay <= ATT_TIMEOUT, f"{delay:.1f} s")
        findings.append(
            finding(
                "att.slow-response",
                "info",
                handle,
                response,
                write,
                why=f"Write Response {n(response)} comes {delay:.1f} s after its Write Request "
                f"{n(write)} (0x{att_handle(write):04X}, value {att_value(write).hex()}): over "
                f"{SLOW_RESPONSE:.0f} s, within the 30 s ATT timeout",
            )
        )
    return Expected(
        cap.name,
        (*findings, *disconnect_findings(cap)),
        "Every other response comes within milliseconds. The waits (2 s, 7 s) stay below the "
        "10 s of pool.unresponsive-peer.",
        causes=True,
    )
