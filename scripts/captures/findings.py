"""Expected findings (``captures/<name>.expected.json``) and the helpers shared by
the per-scenario expectation functions (:mod:`captures.expectations`) and the
reference rule engine (:mod:`captures.rules`).

A finding is keyed, as in docs/RULES.md, by ``(rule, connection, first evidence
frame)``; ``frame`` numbers are 1-based btsnoop record numbers.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterable, Sequence
from pathlib import Path

from bumble import hci

from .btsnoop import Frame

SEVERITIES = ("error", "warning", "info")

# Cause kinds (issue 23; the Swift side documents them in docs/RULES.md). A finding's cause is
# (kind, key frame); the key frame is the first of the cause's frames.
CAUSE_KINDS = frozenset(
    {
        "peer-reset",
        "peer-silent",
        "parameters",
        "att-timeout",
        "smp-timeout",
        "ll-procedure",
        "mic-failure",
        "key-missing",
        "local-request",
        "peer-request",
        "phone-side",
        "establishment",
        "link-loss",
        "pairing",
        "controller-refused",
        "none",
    }
)

# docs/RULES.md default thresholds (seconds).
STUCK_TIMEOUT = 10.0  # pool.stuck-attempt timeout
IDLE = 20.0  # pool.idle-connection idle
SILENCE = 10.0  # pool.unresponsive-peer silence
STALL = 1.0  # flow.skipped-ready stall
SUBSCRIPTION_WAIT = 5.0  # gatt.subscription-silent wait
ATT_TIMEOUT = 30.0  # att.timeout (Core v5.4 Vol 3 Part F 3.3.3)
SMP_TIMEOUT = 30.0  # security.pairing-timeout (Core v5.4 Vol 3 Part H 3.4)
SLOW_RESPONSE = 1.0  # att.slow-response: a response later than this (and within ATT_TIMEOUT)
# A host that disconnects because a 30 s timer expired does so at once: the HCI Disconnect comes
# within this margin after the timer (att-timeout / smp-timeout causes).
TIMER_MARGIN = 0.5

# link.disconnect reasons that are warnings; every other reason is info.
WARNING_DISCONNECT_REASONS = frozenset({0x08, 0x3E, 0x22, 0x3D})
# pool.full statuses.
POOL_FULL_STATUSES = frozenset({0x07, 0x09, 0x0D})
# security.insufficient ATT error codes.
INSUFFICIENT_SECURITY_ERRORS = frozenset({0x05, 0x0F, 0x0C, 0x08})
# Connection Complete statuses of a cancelled attempt.
CANCELLED_STATUSES = frozenset({0x02, 0x44})
# pool.rejected-attempt: a create refused because another is pending (Core v5.4 Vol 4 Part E 7.8.12).
COMMAND_DISALLOWED = 0x0C


@dataclasses.dataclass(frozen=True)
class Finding:
    """One expected finding; ``evidence`` lists all evidence frames (first = ``frame``)."""

    rule: str
    severity: str
    connection: int | None
    evidence: tuple[int, ...]
    why: str = dataclasses.field(default="", compare=False)
    # (kind, key frame) of the finding's cause, or None
    cause: tuple[str, int] | None = dataclasses.field(default=None, compare=False)

    def __post_init__(self) -> None:
        if self.severity not in SEVERITIES:
            raise ValueError(f"bad severity {self.severity}")
        if not self.evidence:
            raise ValueError(f"{self.rule}: no evidence frame")
        if self.cause is not None and self.cause[0] not in CAUSE_KINDS:
            raise ValueError(f"{self.rule}: unknown cause kind {self.cause[0]}")

    @property
    def frame(self) -> int:
        """The key (first) evidence frame."""
        return self.evidence[0]

    @property
    def key(self) -> tuple[str, int | None, int]:
        return (self.rule, self.connection, self.frame)

    def as_json(self, with_cause: bool = False) -> dict:
        item = {
            "rule": self.rule,
            "severity": self.severity,
            "connection": self.connection,
            "frame": self.frame,
            "evidence": list(self.evidence),
            "why": self.why,
        }
        if with_cause:
            item["cause"] = (
                None if self.cause is None else {"kind": self.cause[0], "frame": self.cause[1]}
            )
        return item


def finding(
    rule: str,
    severity: str,
    connection: int | None,
    *frames: Frame | int | None,
    why: str = "",
    cause: tuple[str, Frame | int] | None = None,
) -> Finding:
    """Build a finding from evidence frames (``None`` entries are skipped); ``cause`` is
    (kind, key frame)."""
    numbers = tuple(f if isinstance(f, int) else f.number for f in frames if f is not None)
    if cause is not None:
        kind, key = cause
        cause = (kind, key if isinstance(key, int) else key.number)
    return Finding(rule, severity, connection, numbers, why, cause)


def fold(findings: Iterable[Finding]) -> list[Finding]:
    """One problem, one finding (issue 23; docs/RULES.md "Causes"): consequences folded into the
    finding of their cause, applied alike to the scenario expectations and the reference engine.

    - an Error Response to a CCCD write: ``security.insufficient`` folds into ``gatt.subscription-failed``;
    - a CCCD write that timed out: ``gatt.subscription-unanswered`` folds into ``att.timeout``;
    - pairing failures on one connection: one ``security.pairing-failed`` (the first, worst severity;
      the Swift side folds per peer address, which is the same on every scenario here);
    - a disconnect whose cause is an ATT timeout folds into the ``att.timeout`` or
      ``att.indication-unconfirmed`` of its key frame (a warning at least, with that cause); one whose
      cause is an SMP timeout into ``security.pairing-timeout``; one whose cause is key-missing into
      ``security.encryption-failed``;
    - slow responses: one ``att.slow-response`` per connection (the first; evidence: the first response,
      its request, the slowest).
    """
    items = list(findings)
    rank = {"info": 0, "warning": 1, "error": 2}
    drop: set[int] = set()

    def at(rule: str, connection, frame: int) -> int | None:
        for i, f in enumerate(items):
            if f.rule == rule and f.connection == connection and f.frame == frame and i not in drop:
                return i
        return None

    for i, f in enumerate(items):
        if f.rule == "security.insufficient" and at("gatt.subscription-failed", f.connection, f.frame) is not None:
            drop.add(i)
        elif f.rule == "gatt.subscription-unanswered" and at("att.timeout", f.connection, f.frame) is not None:
            drop.add(i)
        elif f.rule == "link.disconnect" and f.cause is not None:
            kind, key = f.cause
            targets = {"att-timeout": ("att.timeout", "att.indication-unconfirmed"), "smp-timeout": ("security.pairing-timeout",)}.get(kind, ())
            if kind == "key-missing":
                target = next((j for j, g in enumerate(items) if g.rule == "security.encryption-failed" and g.connection == f.connection), None)
            else:
                target = next((j for rule in targets if (j := at(rule, f.connection, key)) is not None), None)
            if target is not None:
                t = items[target]
                severity = t.severity if rank[t.severity] >= rank["warning"] else "warning"
                items[target] = dataclasses.replace(t, severity=severity, cause=t.cause or f.cause)
                drop.add(i)
    first_failure: dict[object, int] = {}
    first_slow: dict[object, int] = {}
    for i, f in enumerate(items):
        if i in drop:
            continue
        if f.rule == "security.pairing-failed":
            if f.connection in first_failure:
                j = first_failure[f.connection]
                if rank[f.severity] > rank[items[j].severity]:
                    items[j] = dataclasses.replace(items[j], severity=f.severity)
                drop.add(i)
            else:
                first_failure[f.connection] = i
        elif f.rule == "att.slow-response":
            if f.connection in first_slow:
                drop.add(i)
            else:
                first_slow[f.connection] = i
    return [f for i, f in enumerate(items) if i not in drop]


def sort_findings(findings: Iterable[Finding]) -> list[Finding]:
    return sorted(
        findings, key=lambda f: (f.frame, f.rule, -1 if f.connection is None else f.connection)
    )


@dataclasses.dataclass(frozen=True)
class Expected:
    """The content of one ``.expected.json`` file."""

    capture: str
    findings: tuple[Finding, ...]
    notes: str
    # The file lists each finding's cause (the cause_* captures of issue 23 and slow_response);
    # the older files do not yet.
    causes: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "findings", tuple(fold(self.findings)))

    def as_json(self) -> dict:
        return {
            "capture": self.capture,
            "findings": [f.as_json(self.causes) for f in sort_findings(self.findings)],
            "notes": self.notes,
        }

    def write(self, out_dir: Path) -> Path:
        path = out_dir / (Path(self.capture).stem + ".expected.json")
        path.write_text(json.dumps(self.as_json(), indent=2) + "\n")
        return path

    def counts(self) -> dict[str, int]:
        """Findings per severity."""
        return {s: sum(1 for f in self.findings if f.severity == s) for s in SEVERITIES}


def status_name(code: int) -> str:
    """``0x13 Remote User Terminated Connection`` style text for an HCI status/reason."""
    try:
        name = hci.HCI_ErrorCode(code).name
    except ValueError:
        return f"0x{code:02X}"
    words = name.removesuffix("_ERROR").replace("_", " ").title()
    return f"0x{code:02X} {words}"


def att_error_name(code: int) -> str:
    from bumble import att

    try:
        return f"0x{code:02X} {att.ErrorCode(code).name.replace('_', ' ').title()}"
    except ValueError:
        return f"0x{code:02X}"


def diff(
    expected: Sequence[Finding], reference: Sequence[Finding], causes: bool = False
) -> list[str]:
    """Human-readable differences between two finding lists (severity and evidence included).

    With ``causes``, the cause of every warning/error, and of every info finding the
    expectation gives one, must match too.
    """

    def index(items: Sequence[Finding]) -> dict:
        return {f.key: f for f in items}

    mine, theirs = index(expected), index(reference)
    problems = []
    for key in sorted(set(mine) | set(theirs), key=lambda k: (k[2], k[0])):
        a, b = mine.get(key), theirs.get(key)
        if a is None:
            problems.append(f"reference engine only: {b.severity} {key} {b.evidence} {b.why}")
        elif b is None:
            problems.append(f"scenario expectation only: {a.severity} {key} {a.evidence}")
        elif (a.severity, a.evidence) != (b.severity, b.evidence):
            problems.append(
                f"{key}: expectation {a.severity} {a.evidence} vs reference {b.severity} {b.evidence}"
            )
        elif causes and (a.severity != "info" or a.cause is not None) and a.cause != b.cause:
            problems.append(f"{key}: expectation cause {a.cause} vs reference cause {b.cause}")
    if len(index(expected)) != len(expected):
        problems.append("duplicate keys in the scenario expectation")
    return problems
