"""Optional Wireshark command-line tools: variants and cross-checks.

Nothing here is required: when ``editcap``/``capinfos``/``tshark`` are not on
PATH the callers print a notice and skip the step.  (Debian: ``apt-get install
-y tshark``, which also brings ``wireshark-common`` with editcap/capinfos.)
"""

from __future__ import annotations

import collections
import dataclasses
import re
import shutil
import struct
import subprocess
from pathlib import Path

PCAP_MAGICS = {
    b"\xd4\xc3\xb2\xa1": "<",
    b"\xa1\xb2\xc3\xd4": ">",
    b"\x4d\x3c\xb2\xa1": "<",
    b"\xa1\xb2\x3c\x4d": ">",
}
PCAPNG_SHB = 0x0A0D0D0A
PCAPNG_IDB = 0x00000001


def available(*tools: str) -> bool:
    """True when every named tool is on PATH."""
    return all(shutil.which(tool) for tool in tools)


def _run(*args: str | Path) -> str:
    result = subprocess.run([str(a) for a in args], check=True, capture_output=True, text=True)
    return result.stdout


@dataclasses.dataclass(frozen=True)
class Variant:
    """A file derived from a btsnoop capture by an independent tool."""

    name: str
    editcap_format: str | None  # None: gzip -n copy
    description: str


HEALTHY_VARIANTS = (
    Variant("healthy.pcap", "pcap", "`editcap -F pcap`: classic pcap, microsecond timestamps"),
    Variant(
        "healthy_ns.pcap",
        "nsecpcap",
        "`editcap -F nsecpcap`: pcap with nanosecond timestamps (magic a1b23c4d)",
    ),
    Variant("healthy.pcapng", "pcapng", "`editcap -F pcapng`: pcapng (SHB + IDB + EPBs)"),
    Variant("healthy.btsnoop.gz", None, "`gzip -n`: the btsnoop file, gzip-compressed"),
)


def make_variant(source: Path, variant: Variant, out_dir: Path) -> Path:
    """Write one variant of ``source`` into ``out_dir``."""
    target = out_dir / variant.name
    if variant.editcap_format is None:
        with open(target, "wb") as output:
            subprocess.run(["gzip", "-n", "-c", str(source)], check=True, stdout=output)
    else:
        _run("editcap", "-F", variant.editcap_format, source, target)
    return target


def link_type(path: Path) -> int | None:
    """The link-layer type in a pcap header or the first pcapng IDB (None otherwise)."""
    raw = path.read_bytes()[:512]
    if raw[:4] in PCAP_MAGICS:
        return struct.unpack_from(PCAP_MAGICS[raw[:4]] + "I", raw, 20)[0]
    if len(raw) >= 12 and struct.unpack_from("<I", raw)[0] == PCAPNG_SHB:
        endian = "<" if raw[8:12] == b"\x4d\x3c\x2b\x1a" else ">"
        offset = 0
        while offset + 12 <= len(raw):
            block_type, block_length = struct.unpack_from(endian + "II", raw, offset)
            if block_type == PCAPNG_IDB:
                return struct.unpack_from(endian + "H", raw, offset + 8)[0]
            offset += block_length
    return None


def capinfos(path: Path) -> dict[str, str]:
    """``capinfos -t -E -c -M``: file type, encapsulation and packet count."""
    info = {}
    for line in _run("capinfos", "-t", "-E", "-c", "-M", path).splitlines():
        key, _, value = line.partition(":")
        info[key.strip()] = value.strip()
    return info


def tshark_frame_count(path: Path) -> int:
    """Frames of the top protocol line of ``tshark -q -z io,phs``."""
    output = _run("tshark", "-r", path, "-q", "-z", "io,phs")
    match = re.search(r"^\s*\S+\s+frames:(\d+)", output, re.MULTILINE)
    if match is None:
        raise RuntimeError(f"cannot parse io,phs output for {path}:\n{output}")
    return int(match.group(1))


def tshark_opcodes(path: Path, field: str) -> collections.Counter[int]:
    """Count the values of one opcode field (``btatt.opcode`` / ``btsmp.opcode``)."""
    values = _run("tshark", "-r", path, "-T", "fields", "-e", field).split()
    return collections.Counter(int(value, 16) for value in values)
