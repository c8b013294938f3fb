"""Renders ``captures/README.md`` from the scenario registry and measured counts.

Everything measurable (frame counts, opcode counts, handles, link types) is
filled in from the files just written, so the README cannot drift from the
captures.  Only the "Bumble behaviour" section is hand-written knowledge.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from importlib import metadata
from typing import Any

from . import controllers
from .btsnoop import Summary
from .findings import Expected
from .scenarios import Scenario
from .tools import Variant

REGENERATE = """\
```sh
python3 -m venv .venv
.venv/bin/pip install bumble==0.0.236
.venv/bin/python scripts/make_captures.py --out captures/
```

Useful options: `--only NAME` (repeatable) runs a subset and keeps the other
captures as they are (they are analysed again: expected findings, README),
`--analyse` runs no scenario and only re-analyses the files, `--list` lists the
scenarios, `--print-gatt` prints the GATT definition, `--compare-with DIR`
checks that the regenerated captures carry the same packets as the copies in
DIR (timestamps aside), `-v` shows Bumble's debug log. A full run takes about
2 minutes of real time (the fault scenarios wait past the RULES.md
thresholds). The script exits non-zero if any scenario, expectation,
variant or cross-check fails. A full run rewrites every capture with new
wall-clock timestamps (the packets stay identical: check with
`--compare-with`), and the CLI golden files in Tests/Golden show those
timestamps, so add new scenarios with `--only`. Wireshark's `editcap`/`capinfos`/`tshark` (Debian package `tshark`)
are optional: without them the pcap/pcapng/gzip variants and the tshark
cross-check are skipped with a notice.
"""

BUMBLE_NOTES = """\
Facts about Bumble's virtual controller and host that show up in the captures
(and that a real controller would do differently):

- **Init sequence**: every capture (but `mid_connection_start`, which begins
  mid-connection) starts with the host's init (Reset, Read
  Local Supported Commands, Read Local Version, LE Read Local Supported
  Features, Read Local Supported Features, Set Event Mask, Set Event Mask Page 2,
  LE Set Event Mask, Read Buffer Size, LE Read Buffer Size [v2], LE Read/Write
  Suggested Default Data Length, Read BD_ADDR, LE Set Random Address). The
  controller reports HCI 5.0, manufacturer 0xFFFF, LE ACL buffers 27 bytes x 64.
- **Flow control**: the controller acknowledges every host->controller ACL
  packet immediately with its own Number Of Completed Packets event
  (1 handle, count 1); buffers never fill up (the flow scenarios use
  `PacedController` instead). Bumble's host honours the credits: it queues
  packets while none is free.
- **ACL fragmentation**: host->controller L2CAP frames are fragmented at 27
  bytes (PB 0b00 then 0b01 continuation, e.g. the 69-byte SMP Pairing Public
  Key). Controller->host ACL is never fragmented: every received L2CAP frame
  arrives in one ACL packet (PB 0b10), even when longer than 27 bytes.
- **Connections**: only `LE Connection Complete` (subevent 0x01), never the
  Enhanced variant, even though the host unmasks it. The central's event
  echoes the requested parameters (interval 12 = 15 ms, latency 0, timeout
  72 = 720 ms); the peripheral's uses hard-coded values (interval 10, timeout
  10, clock accuracy 7). Handle 0x0001 on both sides. `LE Extended Create
  Connection` is never used (the controller does not list it as supported),
  so even the extended-advertising capture connects with `LE Create
  Connection`. No remote-feature, data-length, PHY or connection-update
  procedures happen after connecting unless a scenario asks for one
  (`cause_conn_update_failed`, `cause_short_supervision`); the controller
  applies every LE Connection Update at once (Command Status, then LE
  Connection Update Complete 0x00 echoing the maximum interval). Scanning
  works while a connection is open (`cause_peer_reset`). A second LE Create Connection while one
  is pending gets Command Status 0x0C Command Disallowed, as Core v5.4 Vol 4
  Part E 7.8.12 requires, but Bumble's `Device.connect` never sends one (it
  raises "connection already pending"), so `rejected_attempt` sends the raw
  HCI command.
- **Disconnection**: the local Disconnection Complete repeats the reason given
  to HCI Disconnect (0x13) instead of 0x16 (terminated by local host);
  `LocalTerminationController` reports 0x16 as real controllers do.
- **Advertising reports**: every advertising PDU produces two reports, even
  in a passive scan (`PassiveScanController` fixes that): the
  advertisement and a scan response that carries the *advertising* data again
  (the controller ignores LE Set Scan Response Data). RSSI is always -50 dBm.
  Extended reports use event type 0x0001 (connectable) and 0x0008 (scan
  response), legacy bit clear, SID 0 whatever the set's SID, TX power 0, and
  always carry the complete data in one report (no chained fragments).
- **Encryption**: LE Start Encryption -> Command Status -> Encryption Change
  (v1, although the host enables the v2 event). Bumble draws SMP nonces and
  P-256 keys from `secrets`; the script seeds them (see
  `reproducible_smp_randomness`), so all captures are byte-identical across
  runs apart from timestamps.
- **ATT**: Bumble's server answers Exchange MTU with 517; the client asked
  247, so the MTU is 247. Notifications/indications longer than ATT_MTU-3
  would be truncated by the server. The client's `read_value` does long reads
  by itself (Read Blob while a response is exactly ATT_MTU-1 bytes) and
  `write_value(..., with_response=True)` uses Prepare/Execute Write when the
  value exceeds ATT_MTU-3. Bumble's client re-runs Find Information before
  every subscribe (it never marks descriptors as discovered); the script marks
  them itself, so no duplicate discovery appears in the captures.
- **Permissions**: the GATT server only enforces the "requires
  encryption/authentication/authorization" permission flags. Plain
  READABLE/WRITEABLE are not checked: a Write Request to the read-only Device
  Name succeeds, and a Read Request to the notify-only Heart Rate Measurement
  returns its value. A fault scenario that needs an error response must
  use the encryption flags (e.g. a CCCD descriptor with
  WRITE_REQUIRES_ENCRYPTION; Bumble only adds its own CCCD when the
  characteristic has none).
- **Timing**: timestamps are wall-clock (btsnoop microseconds since year 0)
  and differ in each run. A session without waits takes well under a second;
  the fault scenarios really wait (up to 31 s) to exceed the RULES.md
  thresholds, so their durations are meaningful to within a few milliseconds
  but not exact. Connection events are not simulated.
- **No link loss**: the stock controller has no supervision timeout, never
  completes a cancelled connection attempt and accepts any number of
  connections; see "Controller changes" for the subclasses that do.
"""


@dataclasses.dataclass(frozen=True)
class CaptureInfo:
    """Measured facts about one capture file."""

    name: str
    size: int
    summary: Summary
    expected: Expected


@dataclasses.dataclass(frozen=True)
class VariantInfo:
    """Measured facts about one independent-tool variant."""

    variant: Variant
    size: int
    frames: int
    file_type: str
    encapsulation: str
    link_type: int | None


def _counts(pairs: Sequence[tuple[str, int]]) -> str:
    return ", ".join(f"{name} {count}" for name, count in pairs) or "none"


def _opcodes(triples: Sequence[tuple[str, int, int]]) -> str:
    return ", ".join(f"{name} (0x{op:02X}) {count}" for name, op, count in triples) or "none"


def _findings_lines(expected: Expected) -> list[str]:
    stem = expected.capture.removesuffix(".btsnoop")
    lines = [f"Expected findings (`{stem}.expected.json`):", ""]
    for item in expected.as_json()["findings"]:
        connection = "-" if item["connection"] is None else f"0x{item['connection']:04X}"
        cause = item.get("cause")
        because = f" (cause `{cause['kind']}`, key frame {cause['frame']})" if cause else ""
        lines.append(
            f"- `{item['rule']}` {item['severity']}, connection {connection}, frame "
            f"{item['frame']}{because}: {item['why']}"
        )
    if expected.notes:
        lines += ["", f"Notes: {expected.notes}"]
    return lines + [""]


def _capture_section(scenario: Scenario, captures: dict[str, CaptureInfo]) -> list[str]:
    lines = [f"### {', '.join(f'`{name}`' for name in scenario.outputs)}", ""]
    lines += [scenario.description, ""]
    for name in scenario.outputs:
        info = captures[name]
        s = info.summary
        lines += _findings_lines(info.expected)
        lines += [
            f"`{name}`: {s.frames} frames, {info.size} bytes "
            f"({sum(s.commands.values())} commands, {sum(s.events.values())} events, "
            f"{s.acl_sent} ACL sent, {s.acl_received} ACL received).",
            "",
            f"- ATT: {_opcodes(s.att_counts())}",
        ]
        if s.smp:
            lines.append(f"- SMP: {_opcodes(s.smp_counts())}")
        lines += [
            f"- HCI commands: {_counts(s.command_counts())}",
            f"- HCI events: {_counts(s.event_counts())}",
            "",
        ]
    return lines


def _gatt_section(database: dict[str, Any]) -> list[str]:
    lines = [
        "| Handle | Attribute | UUID | Properties |",
        "| --- | --- | --- | --- |",
    ]
    for service in database["services"]:
        lines.append(
            f"| 0x{service['start_handle']:04X}-0x{service['end_handle']:04X} "
            f"| **{service['name']}** service | {service['uuid']} | |"
        )
        for char in service["characteristics"]:
            lines.append(
                f"| 0x{char['declaration_handle']:04X} / 0x{char['value_handle']:04X} "
                f"| {char['name']} (declaration / value) | {char['uuid']} "
                f"| {', '.join(char['properties'])} |"
            )
            for descriptor in char["descriptors"]:
                lines.append(
                    f"| 0x{descriptor['handle']:04X} | {descriptor['name']} "
                    f"| {descriptor['uuid']} | |"
                )
    return lines


EXPECTED_FORMAT = """\
Every capture `<name>.btsnoop` has `<name>.expected.json`:

```json
{"capture": "mtu_truncated_read.btsnoop",
 "findings": [{"rule": "mtu.truncated-read", "severity": "warning", "connection": 1,
               "frame": 55, "evidence": [55, 53], "why": "..."}],
 "notes": "..."}
```

`findings` is the exact set of findings the rules of docs/RULES.md (default
thresholds) produce on that capture, info-level ones included, sorted by
frame. `frame` is the first (key) evidence frame as RULES.md defines it,
a 1-based record number of the btsnoop file; `evidence` lists all evidence
frames in RULES.md order; `connection` is the HCI connection handle, or null
for capture-wide findings; `why` says how to check the finding by hand.
The Swift test (ExpectedFindingsTests) compares the set of `(rule, connection, frame, severity)`.

The captures of issue 23 (`cause_*` and `slow_response`) also give each
finding's `cause`: `{"kind": K, "frame": N}` or `null`, where `N` is the
key frame of the cause (the first of the cause's frames in the tool's
`cause.frames`) and `K` one of `peer-reset`, `peer-silent`, `parameters`,
`att-timeout`, `smp-timeout`, `ll-procedure`, `mic-failure`, `key-missing`,
`local-request`, `peer-request`, `phone-side`, `establishment`, `link-loss`,
`pairing`, `controller-refused`, `none`. Every warning and error has one; an
info finding has one when it is the consequence of another finding's problem
(e.g. `att.unanswered` with `link-loss`), otherwise `null`. The other files
do not list causes yet.

The files are computed from the capture just written, by one function per
capture in `scripts/captures/expectations.py` that locates the frames from
what the scenario did, and every result is cross-checked against an
independent, generic Python implementation of all the rules
(`scripts/captures/rules.py`): the run fails if the two disagree on any
finding, severity or evidence frame.
"""

INTERPRETATIONS = """\
RULES.md leaves some details open; the expected files (and `rules.py`) use
these readings, which the detectors must match:

- **Frame of a fragmented PDU** (as RULES.md now says): an ATT/SMP PDU split
  over several ACL packets is located at the packet that completes it.
  No evidence frame in these captures is fragmented (`mtu_write_too_long`
  uses 251-byte controller buffers for that reason).
- **Connection null** for `pool.stuck-attempt`, `pool.cancelled-attempt`,
  `pool.rejected-attempt` and `pool.full` (no handle exists yet; a failed Connection Complete's handle
  field is meaningless) and for the once-per-capture
  `pool.concurrent-connections` and `link.disconnect-summary`.
  `adv.not-stopped` carries the handle of the open peripheral-role connection.
- **Attempts** (RULES.md "Attempt bookkeeping"): a create becomes the pending
  attempt when its Command Status is 0x00 (and then supersedes one still
  pending); a create rejected in its Command Status never starts and leaves
  the pending one pending, so a later Cancel and 0x02 completion still end
  that one (`rejected_attempt`). Rejected with 0x0C Command Disallowed while
  another was pending when it was issued, it is `pool.rejected-attempt`
  (evidence: the Command Status, the rejected create, the pending create).
  `pool.idle-connection` is checked when an attempt to an address is
  accepted, against connections whose set-up is in the capture.
- **Durations** are differences of frame timestamps. `pool.stuck-attempt`:
  from the create command to its Connection Complete, its Cancel or the next
  create command (superseded), or, if none comes, to the last frame of the
  capture (so a capture needs some frame >= 10 s after the attempt;
  `stuck_attempt` ends with a short scan for that reason). Attempts with
  Initiator_Filter_Policy 1 (filter accept list) are never stuck. A Cancel
  later than the timeout still gives `pool.stuck-attempt` (and
  `pool.cancelled-attempt`). `pool.idle-connection`:
  from the connection's last ACL frame (either direction; else its Connection
  Complete) to the create command, once per (connection, that frame).
  `pool.unresponsive-peer`: from the last ACL RX (else Connection Complete) to
  the last ACL TX sent before the next RX, the disconnection or the end of the
  capture; evidence = that RX and that TX. `flow.skipped-ready`: from the NOCP
  that first returns a credit after a TX on that connection took the last one,
  to the next TX on that connection. `gatt.subscription-silent`: from the
  Write Response to the CCCD write that clears it, the Disconnection Complete
  or the last frame. `att.timeout`: the response came > 30 s after the
  request, or none came and the link closed / the capture ended >= 30 s after
  it; otherwise (none, < 30 s) `att.unanswered`.
- **ATT bookkeeping** is per connection and per client side (requests and
  commands go client -> server; responses, notifications, indications server
  -> client), so central and peripheral captures are handled alike. Responses
  match requests first-in first-out (as RULES.md now says): a request sent while another is
  outstanding is an `att.protocol-violation` but is queued, so its response is
  not "unsolicited". A new indication while one is unconfirmed is a violation
  (evidence: the new one, the oldest unconfirmed one) and ends the wait for
  the unconfirmed one(s) (`att.indication-unconfirmed` for each).
- **att.error** excludes only 0x0A Attribute Not Found answering Find
  Information, Find By Type Value, Read By Type or Read By Group Type,
  including Read By Type used for "Read Using Characteristic UUID"
  (`pairing_ok`). Error Responses in either direction count.
- **GATT knowledge** comes from discovery in the capture: CCCDs from Find
  Information (UUID 0x2902), characteristic properties from Read By Type
  0x2803; a descriptor belongs to the characteristic with the highest value
  handle below it. A CCCD write "enables" when bit 0 or 1 of its first byte
  is set. `gatt.unsubscribed-notification`: no write to that characteristic's
  CCCD before the notification (in these captures: none at all), once per
  (connection, value handle).
- **MTU**: 23 until an Exchange MTU Response, then min(client, server).
  `mtu.truncated-notification` when no exchange happened or the negotiated MTU
  is below the larger of the two offers; once per (connection, value handle).
  `mtu.truncated-read` is cleared by a Read Blob Request on the same handle
  anywhere later on that connection. `mtu.late-exchange`: "data" is any ATT
  PDU other than Exchange MTU and the discovery requests/responses above (and
  their 0x0A errors); once per connection. **Mid-connection**: ACL on a
  handle with no Connection Complete in the capture opens an inferred
  connection whose ATT_MTU is unknown (the largest ATT PDU seen is only a
  lower bound) until an exchange is seen: no `mtu.truncated-read`,
  `mtu.truncated-notification`, `mtu.write-too-long` or `flow.skipped-ready`
  (b) decides on it, and no `gatt.unsubscribed-notification`,
  `pool.idle-connection` or 30 s wait of `att.indication-unconfirmed` either
  (`mid_connection_start`).
- **Flow control**: credits = LE Read Buffer Size [v2] total (Read Buffer
  Size if the LE value is 0); NOCP completes a connection's oldest packets
  first, so `flow.credits-lost` names the oldest unacknowledged TX; at a
  Disconnection Complete that connection's packets are freed.
- **Security**: `security.insufficient` becomes info when an Encryption
  Change with status 0x00 follows the error and then the same request (opcode
  and attribute handle) gets a non-error response. `security.pairing-failed`'s
  second evidence frame is the latest Pairing Request on that connection.
  `security.repeated-pairing` is reported once, at the third Pairing Request.
- **link.disconnect** counts Disconnection Complete events with status 0x00
  (one finding each); `link.disconnect-summary` exists only when there is at
  least one, with all of them as evidence.
- **adv.not-stopped**: legacy connectable advertising stops by itself when a
  connection is accepted (Core spec), so an enable before the connection does
  not count; an LE Set (Extended) Advertising Enable with Enable = 1 while a
  peripheral-role connection is open does. (The "stays enabled" case, with the
  Connection Complete as evidence, is not exercised by these captures.)
- **Causes** (issue 23; `cause_*` captures). `link.disconnect` with 0x08:
  `peer-reset` when a connectable advertising report (ADV_IND, ADV_DIRECT_IND,
  or an extended report with the connectable bit and not a scan response)
  from the connection's peer address arrives after the last ACL packet
  received on that connection (key: the first such report); else
  `parameters` when the last successful LE Connection Update Complete of the
  connection shortened the supervision timeout, or came <= 2 s before the loss
  (key: that event); else `peer-silent` (key: the last packet received).
  After the host's own HCI Disconnect: `att-timeout` when a request or
  indication the host sent was still unanswered / unconfirmed and the
  Disconnect came 30 s to 30.5 s after it (a host that disconnects on the
  expiry of its 30 s timer does it at once; key: that request/indication) —
  the disconnection is then a warning whatever its reason (0x16 here), and the
  unconfirmed indication's own finding is info; `smp-timeout` when a pairing
  (Pairing Request without Pairing Failed or Encryption Change since) had its
  last SMP PDU 30 s to 30.5 s before the Disconnect (key: that PDU; the
  disconnection stays info, the problem is `security.pairing-timeout`); else
  `local-request` (key: the HCI Disconnect). `att.unanswered` on a lost link
  (0x08, 0x22, 0x3E, 0x3D) is info with cause `link-loss` (key: the
  Disconnection Complete).
- **New rules** (issue 23). `att.slow-response` (info): a response more than
  1 s and at most 30 s after its request (evidence: the response, the
  request). `security.pairing-timeout` (warning): a pairing whose last SMP PDU
  is followed by 30 s without any SMP PDU on that connection until its
  Disconnection Complete or the end of the capture, with no Pairing Failed and
  no Encryption Change (frame and cause key: that last PDU).
  `link.parameter-update-refused` (warning): an LE Connection Update Complete
  with a non-zero status (cause `controller-refused`, key: that event).
"""

CAVEATS = """\
Cases where a rule, as written, also fires on legitimate traffic (the
captures above avoid them; the detectors may want to refine these):

- `flow.credits-lost`: Core v5.4 Vol 4 Part E 4.3 says the host shall assume
  that packets unacknowledged at a Disconnection Complete were flushed, so a
  host that writes and disconnects at once normally leaves packets without
  NOCP. `credits_lost` keeps its 3 packets unacknowledged for 2 s first.
- `pool.unresponsive-peer`: a one-way stream of Write Commands (e.g. a
  firmware upload) legitimately receives no ACL for many seconds.
  `unresponsive_peer` also has a request that is never answered.
- `flow.skipped-ready`: an app that filled the buffers, finished, and sends
  something unrelated later looks the same on HCI as a stalled sender.
- `gatt.subscription-silent`: characteristics that notify only on change
  (Battery Level) can stay silent for minutes.
- `gatt.unsubscribed-notification`: a bonded peer's CCCDs persist across
  connections, so notifications without a CCCD write in this capture are
  normal for bonded devices (it is only info).
"""

NOT_PRODUCED = """\
Bumble cannot make these; they are written by the documented test-support
writer in `Tests/BLEAnalysisTests/SyntheticCaptureTests.swift`, which also
checks that the committed files are exactly what it writes
(`BLEANALYZE_RECORD=1 swift test --filter SyntheticCaptureTests` rewrites them):

- `adv_oversize.btsnoop` (`adv.oversize`): a well-behaved host cannot send more
  than 31 bytes of legacy advertising data (the HCI command has a 31-byte
  field). Frame 1 is an LE Set Advertising Data whose second AD structure runs
  past its 31 bytes; frame 3 an LE Advertising Report carrying 37 bytes of
  legacy advertising data; frame 4 a well-formed report (no finding).
- `capture_truncated.btsnoop` (`mtu.capture-truncated`): Bumble's snooper always
  records whole packets. This is `healthy.btsnoop` with every ACL record cut to
  14 bytes, as Android's btsnooz keeps them (original lengths kept): one info,
  no `mtu.*` warning, and the opcodes of cut PDUs still pair requests with
  responses.
- `flow.credits-exhausted` cannot come from Bumble's host, which honours the
  credits; `credits_exhausted.btsnoop` injects the offending packet below the
  host's flow-control queue (see that capture).
"""


def _controller_notes() -> list[str]:
    lines = [
        (
            "Scenarios that need a non-ideal controller use these subclasses of "
            "`bumble.controller.Controller` (`scripts/captures/controllers.py`); "
            "everything else runs on the stock controller."
        ),
        "",
    ]
    for cls in (
        controllers.CancellingController,
        controllers.LimitedController,
        controllers.PacedController,
        controllers.LinkLossController,
        controllers.LargeBufferController,
        controllers.LocalTerminationController,
        controllers.UpdateRefusingController,
        controllers.PassiveScanController,
    ):
        doc = " ".join(line.strip() for line in (cls.__doc__ or "").strip().splitlines())
        lines.append(f"- `{cls.__name__}`: {doc}")
    return lines + [""]


# The before/after pairs of `bleanalyze diff` (scripts/make_diff_pairs.py), in their own directory.
DIFF_PAIRS = [
    "## Before/after pairs for `diff` (`captures/diff/`)",
    "",
    "`scripts/make_diff_pairs.py --out captures/diff/` records the same session with the same two Bumble",
    "devices (the Testbed above) once as the reference and once per change: `before.btsnoop` (scan,",
    "connect, MTU 247, discover everything, read Battery Level 10 times, 20 Heart Rate notifications, 30",
    "Write Commands of 20 bytes to \"Write Without Response\", disconnect 0x13); `after_small_mtu.btsnoop`",
    "(MTU 64); `after_write_request.btsnoop` (the 30 writes as Write Requests); `after_removed_char.btsnoop`",
    "(the peripheral without Body Sensor Location 0x2A38); `after_short_timeout.btsnoop` (the central",
    "connects with a 100 ms supervision timeout, not 720 ms). They live in a subdirectory: the per-capture",
    "tests (expected findings, Reports/, golden files) read `captures/` only; `DiffTests` checks what",
    "`diff` says of them against tshark.",
    "",
    "## A resolvable private address that changes (`captures/gate/`)",
    "",
    "`scripts/make_rpa_rotation.py --out captures/gate/` records `rpa_rotation.btsnoop` (the central's HCI):",
    "the peripheral, on resolvable private addresses made from its IRK, is connected on RPA 1, pairs (LE",
    "Secure Connections Just Works, bonding; it distributes its IRK and its identity address",
    "C0:11:22:33:44:02), is discovered and disconnected; then it advertises on RPA 2 without its name, the",
    "central connects, encrypts with the bond's LTK and reads the Battery Level. `rpa_rotation_peripheral.btsnoop`",
    "is the same session from the peripheral's host (LE Long Term Key Request Reply with the same key on both",
    "links). `BaselineGateTests` checks that `check --baseline` keyed by the identity address accepts both",
    "links and that a redacted copy passes by the GATT table; `BondIdentityTests` checks both sides.",
    "",
]


def render(
    scenarios: Sequence[Scenario],
    captures: dict[str, CaptureInfo],
    variants: Sequence[VariantInfo] | None,
    database: dict[str, Any],
    fault_database: dict[str, Any],
    tshark_checked: bool,
) -> str:
    """The complete README text."""
    bumble_version = metadata.version("bumble")
    lines = [
        "# Test captures",
        "",
        "Bluetooth LE HCI captures for bleanalyze's tests, generated by "
        "`scripts/make_captures.py` with [Bumble](https://github.com/google/bumble) "
        f"{bumble_version}: two Bumble devices (central `C0:11:22:33:44:01`, "
        "peripheral `C0:11:22:33:44:02`, both random static addresses; public "
        "addresses 00:11:22:33:44:01/02; the pool scenarios add peripherals "
        "`C0:11:22:33:44:03`/`04`) each with its own virtual "
        '`bumble.controller.Controller` (or a subclass, see "Controller changes") '
        "on one `LocalLink`. The `.btsnoop` files "
        "are written by Bumble's `BtSnooper` on the host side: btsnoop version 1, "
        "datalink 1002 (H4), flags bit 0 = direction (0 sent, 1 received), bit 1 = "
        "command/event. Unless stated otherwise a file is the central's view.",
        "",
        "Do not edit these files by hand; regenerate them:",
        "",
        REGENERATE,
        *DIFF_PAIRS,
        "## Files",
        "",
        "| File | Frames | ATT PDUs | Size (bytes) | Expected findings (error / warning / info) |",
        "| --- | ---: | ---: | ---: | --- |",
    ]
    for info in captures.values():
        counts = info.expected.counts()
        # Every rule but the disconnection infos present in most files; a warning/error's cause
        # kind follows its rule.
        named = [
            f
            for f in info.expected.findings
            if not (f.rule.startswith("link.disconnect") and f.severity == "info")
        ]
        labels = []
        for rule in sorted({f.rule for f in named}):
            kinds = sorted(
                {f.cause[0] for f in named if f.rule == rule and f.cause and f.severity != "info"}
            )
            labels.append(f"`{rule}`" + (f" (cause {', '.join(f'`{k}`' for k in kinds)})" if kinds and info.expected.causes else ""))
        lines.append(
            f"| `{info.name}` | {info.summary.frames} | {sum(info.summary.att.values())} "
            f"| {info.size} | {counts['error']} / {counts['warning']} / {counts['info']}"
            + (f": {', '.join(labels)}" if labels else "")
            + " |"
        )
    for vinfo in variants or ():
        size = "varies" if vinfo.variant.editcap_format is None else str(vinfo.size)
        lines.append(f"| `{vinfo.variant.name}` | {vinfo.frames} | (as healthy) | {size} | |")
    lines += ["", "Counts below come from the script's own btsnoop parser"]
    lines[-1] += (
        " and were cross-checked against `tshark -q -z io,phs` (frames) and "
        "`tshark -T fields -e btatt.opcode -e btsmp.opcode`."
        if tshark_checked
        else " (tshark was not available for the cross-check)."
    )
    lines += [
        "",
        "## Expected findings",
        "",
        EXPECTED_FORMAT,
        "### Rule interpretations",
        "",
        INTERPRETATIONS,
        "### Rule caveats",
        "",
        CAVEATS,
        "### Not produced here",
        "",
        NOT_PRODUCED,
        "## Controller changes",
        "",
        *_controller_notes(),
        "## Captures",
        "",
    ]

    for scenario in scenarios:
        lines += _capture_section(scenario, captures)

    lines += ["### Independent-tool variants of `healthy.btsnoop`", ""]
    if variants is None:
        lines += ["Not generated: `editcap`/`capinfos` were not available.", ""]
    else:
        lines += [
            "Same packets as `healthy.btsnoop`, converted by Wireshark's tools, for "
            "testing input-format detection. pcap/pcapng use link type 201 "
            "(LINKTYPE_BLUETOOTH_HCI_H4_WITH_PHDR: a 4-byte big-endian direction "
            "pseudo-header, 0 = sent, 1 = received, before the H4 bytes).",
            "",
        ]
        for vinfo in variants:
            link = f", link type {vinfo.link_type}" if vinfo.link_type is not None else ""
            lines.append(
                f"- `{vinfo.variant.name}`: {vinfo.variant.description}; capinfos: "
                f"{vinfo.file_type} / {vinfo.encapsulation}{link}, {vinfo.frames} frames."
            )
        lines.append("")

    lines += [
        "## GATT database (`gatt_server.json`)",
        "",
        "The peripheral's GATT server, identical in every scenario (three add a service at "
        "the end, see below), as Bumble "
        "assigned the handles. `gatt_server.json` lists each service (uuid, "
        "uuid128, name, start/end handle) with its characteristics (declaration "
        "and value handle, properties, static value as hex where there is one) and "
        f"descriptors (uuid, handle). UUID format: {database['uuid_format']}.",
        "",
        *_gatt_section(database),
        "",
        "### `gatt_server_faults.json`",
        "",
        (
            "The scenarios that need a misconfigured server (`cccd_insufficient_encryption`, "
            '`cccd_recovered`, `cccd_no_notify_property`) add a "bleanalyze Faults" service '
            "after the standard database, so every handle above keeps its value. "
            "`gatt_server_faults.json` is the whole table in the same format; the extra rows:"
        ),
        "",
        *_gatt_section({"services": fault_database["services"][-1:]}),
        "",
        (
            "Secure Notify's CCCD (0x0026) is readable but writable only over an encrypted "
            "link (Bumble permission WRITE_REQUIRES_ENCRYPTION: Error Response 0x0F otherwise). "
            "CCCD Without Notify has a CCCD (0x0029) although its properties lack Notify and "
            "Indicate."
        ),
        "",
        "## Bumble behaviour and limitations",
        "",
        BUMBLE_NOTES,
    ]
    return "\n".join(lines).rstrip() + "\n"
