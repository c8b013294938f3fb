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

from .btsnoop import Summary
from .scenarios import Scenario
from .tools import Variant

REGENERATE = """\
```sh
python3 -m venv .venv
.venv/bin/pip install bumble==0.0.236
.venv/bin/python scripts/make_captures.py --out captures/
```

Useful options: `--only NAME` (repeatable) runs a subset, `--list` lists the
scenarios, `--print-gatt` prints the GATT definition, `-v` shows Bumble's
debug log. The script exits non-zero if any scenario, variant or cross-check
fails. Wireshark's `editcap`/`capinfos`/`tshark` (Debian package `tshark`)
are optional: without them the pcap/pcapng/gzip variants and the tshark
cross-check are skipped with a notice.
"""

BUMBLE_NOTES = """\
Facts about Bumble's virtual controller and host that show up in the captures
(and that a real controller would do differently):

- **Init sequence**: every capture starts with the host's init (Reset, Read
  Local Supported Commands, Read Local Version, LE Read Local Supported
  Features, Read Local Supported Features, Set Event Mask, Set Event Mask Page 2,
  LE Set Event Mask, Read Buffer Size, LE Read Buffer Size [v2], LE Read/Write
  Suggested Default Data Length, Read BD_ADDR, LE Set Random Address). The
  controller reports HCI 5.0, manufacturer 0xFFFF, LE ACL buffers 27 bytes x 64.
- **Flow control**: the controller acknowledges every host->controller ACL
  packet immediately with its own Number Of Completed Packets event
  (1 handle, count 1); buffers never fill up.
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
  procedures happen after connecting.
- **Disconnection**: the local Disconnection Complete repeats the reason given
  to HCI Disconnect (0x13) instead of 0x16 (terminated by local host).
- **Advertising reports**: every advertising PDU produces two reports: the
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
- **Timing**: timestamps are wall-clock (btsnoop microseconds since year 0),
  differ in each run and only relative order is meaningful. A whole session takes
  well under a second; connection events are not simulated.
"""


@dataclasses.dataclass(frozen=True)
class CaptureInfo:
    """Measured facts about one capture file."""

    name: str
    size: int
    summary: Summary


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


def _capture_section(scenario: Scenario, captures: dict[str, CaptureInfo]) -> list[str]:
    lines = [f"### {', '.join(f'`{name}`' for name in scenario.outputs)}", ""]
    lines += [scenario.description, ""]
    for name in scenario.outputs:
        info = captures[name]
        s = info.summary
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


def render(
    scenarios: Sequence[Scenario],
    captures: dict[str, CaptureInfo],
    variants: Sequence[VariantInfo] | None,
    database: dict[str, Any],
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
        "addresses 00:11:22:33:44:01/02) each with its own virtual "
        "`bumble.controller.Controller` on one `LocalLink`. The `.btsnoop` files "
        "are written by Bumble's `BtSnooper` on the host side: btsnoop version 1, "
        "datalink 1002 (H4), flags bit 0 = direction (0 sent, 1 received), bit 1 = "
        "command/event. Unless stated otherwise a file is the central's view.",
        "",
        "Do not edit these files by hand; regenerate them:",
        "",
        REGENERATE,
        "## Files",
        "",
        "| File | Frames | ATT PDUs | Size (bytes) |",
        "| --- | ---: | ---: | ---: |",
    ]
    for info in captures.values():
        lines.append(
            f"| `{info.name}` | {info.summary.frames} | {sum(info.summary.att.values())} "
            f"| {info.size} |"
        )
    for vinfo in variants or ():
        size = "varies" if vinfo.variant.editcap_format is None else str(vinfo.size)
        lines.append(f"| `{vinfo.variant.name}` | {vinfo.frames} | (as healthy) | {size} |")
    lines += ["", "Counts below come from the script's own btsnoop parser"]
    lines[-1] += (
        " and were cross-checked against `tshark -q -z io,phs` (frames) and "
        "`tshark -T fields -e btatt.opcode -e btsmp.opcode`."
        if tshark_checked
        else " (tshark was not available for the cross-check)."
    )
    lines.append("")

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
        "The peripheral's GATT server, identical in every scenario, as Bumble "
        "assigned the handles. `gatt_server.json` lists each service (uuid, "
        "uuid128, name, start/end handle) with its characteristics (declaration "
        "and value handle, properties, static value as hex where there is one) and "
        f"descriptors (uuid, handle). UUID format: {database['uuid_format']}.",
        "",
        *_gatt_section(database),
        "",
        "## Bumble behaviour and limitations",
        "",
        BUMBLE_NOTES,
    ]
    return "\n".join(lines).rstrip() + "\n"
