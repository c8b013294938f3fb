#!/usr/bin/env python3
"""Generate the Bluetooth SIG assigned-numbers tables of the BLEProtocol module.

Data sources (facts only; no code from them is copied into the output):

* PyPI ``bluetooth-numbers`` (pinned: 1.1.2): company identifiers, 16-bit GATT
  service / characteristic / descriptor UUIDs, member-service UUIDs
  (0xFCxx-0xFExx, SDO 0xFFFx) with the owning company's name, and vendor
  128-bit service / characteristic UUIDs (Nordic UART, micro:bit, ...).
* PyPI ``bumble`` (pinned: 0.0.236): GATT declarations (0x2800-0x2803), SDP
  protocol and service-class UUIDs, the GATT UUIDs it knows that
  bluetooth-numbers lacks, a few vendor 128-bit UUIDs (ASHA, Apple) and the
  Appearance categories / subcategories (``bumble.core.Appearance``).

Precedence: bluetooth-numbers first; bumble only fills gaps. The SIG 0x27xx
units and the GATT object types are in neither package, so they are not
generated.

Regenerate (from the repository root)::

    python3 -m venv /tmp/anvenv
    /tmp/anvenv/bin/pip install bluetooth-numbers==1.1.2 bumble==0.0.236
    /tmp/anvenv/bin/python scripts/gen_assigned_numbers.py

``--check`` exits non-zero (writing nothing) when the checked-in files differ
from what would be generated. Output is deterministic: every table is sorted
by key, and nothing depends on the time, the machine or dict iteration order
of anything but the pinned packages' own source.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import re
import sys
from pathlib import Path
from uuid import UUID

PINNED = {"bluetooth-numbers": "1.1.2", "bumble": "0.0.236"}

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_OUT = REPO_ROOT / "Sources" / "BLEProtocol" / "AssignedNumbers"

# Category letters used in the UUID16 table; AssignedNumbers.swift maps them back.
CAT_SERVICE = "s"
CAT_CHARACTERISTIC = "c"
CAT_DESCRIPTOR = "d"
CAT_UNIT = "u"
CAT_DECLARATION = "x"
CAT_MEMBER = "m"
CAT_OTHER = "o"

MEMBER_UUID_MIN = 0xFC00  # member (0xFCxx-0xFExx) and SDO (0xFFFx) 16-bit UUIDs

SIG_BASE_SUFFIX = "00001000800000805f9b34fb"  # Bluetooth Base UUID, bytes 4..15 as hex


# --------------------------------------------------------------------------- helpers


def clean(name: str) -> str:
    """Normalise whitespace and repair UTF-8 that was decoded as Latin-1 ("GerÃ¤te")."""
    if "\u00c3" in name or "\u00c2" in name:
        for codec in ("cp1252", "latin-1"):
            try:
                name = name.encode(codec).decode("utf-8")
                break
            except (UnicodeEncodeError, UnicodeDecodeError):
                continue
    name = re.sub(r"\s+", " ", name).strip()
    if not name:
        raise ValueError("empty name")
    return name


# Obvious slips in the upstream data, corrected to the Assigned Numbers document's
# names. Applied after merging; each entry is (category letter, name).
UUID16_CORRECTIONS = {
    0x0005: (CAT_OTHER, "TCS-BIN"),  # bumble: "TCP-BIN"
    0x1855: (CAT_SERVICE, "Telephony and Media Audio"),  # bluetooth-numbers: "TMAS"
    0x1859: (CAT_SERVICE, "Mesh Proxy Solicitation"),  # bumble: "Mesh Audio Solicitation"
    0x2901: (
        CAT_DESCRIPTOR,
        "Characteristic User Description",
    ),  # bluetooth-numbers: "...Descriptor"
    # bumble defines these two with the value 0x290F by mistake; 0x290F itself is
    # "Complete BR-EDR Transport Block Data" in both packages.
    0x2910: (CAT_DESCRIPTOR, "Observation Schedule"),
    0x2911: (CAT_DESCRIPTOR, "Valid Range and Accuracy"),
}


def put(table: dict, key, value) -> None:
    """Insert unless already present (first source wins)."""
    if key not in table:
        table[key] = value


def uuid16_of_bumble(u) -> int | None:
    raw = bytes(u.uuid_bytes)
    if len(raw) == 2:
        return int.from_bytes(raw, "little")
    return None


def uuid128_str_of_bumble(u) -> str | None:
    raw = bytes(u.uuid_bytes)
    if len(raw) == 16:
        return raw[::-1].hex()
    return None


def bumble_uuid_constants(module):
    """(constant name, bumble UUID) in definition order."""
    from bumble.core import UUID as BumbleUUID

    for attr, value in vars(module).items():
        if attr.isupper() and isinstance(value, BumbleUUID):
            yield attr, value


# --------------------------------------------------------------------------- collect


def collect_uuid16() -> dict[int, tuple[str, str]]:
    import bluetooth_numbers as bn
    import bumble.core
    import bumble.gatt
    import bumble.sdp

    table: dict[int, tuple[str, str]] = {}

    # bluetooth-numbers services. Its member-UUID entries are keyed by a buggy
    # literal: the decimal value written with a 0x prefix (0x65279 for 65279 =
    # 0xFEFF "GN Netcom"); those carry the company name. A handful of member
    # UUIDs are keyed correctly and carry a descriptive service name instead.
    member_company: dict[int, str] = {}
    member_descr: dict[int, str] = {}
    for key, name in bn.service.items():
        if not isinstance(key, int):
            continue
        if key > 0xFFFF:
            digits = format(key, "x")
            if not digits.isdigit() or int(digits) > 0xFFFF:
                raise SystemExit(f"unexpected bluetooth-numbers service key {key:#x}")
            member_company[int(digits)] = clean(name)
        elif key >= MEMBER_UUID_MIN:
            member_descr[key] = clean(name)
        else:
            put(table, key, (CAT_SERVICE, clean(name)))

    for key, name in bn.characteristic.items():
        if isinstance(key, int):
            put(table, key, (CAT_CHARACTERISTIC, clean(name)))
    for key, name in bn.descriptor.items():
        if isinstance(key, int):
            put(table, key, (CAT_DESCRIPTOR, clean(name)))

    # bumble GATT constants, categorised by the constant's name.
    for attr, u in bumble_uuid_constants(bumble.gatt):
        value = uuid16_of_bumble(u)
        if value is None or not u.name:
            continue
        name = clean(u.name)
        if attr.endswith("_SERVICE"):
            if value >= MEMBER_UUID_MIN:
                put(member_descr, value, name)
            else:
                put(table, value, (CAT_SERVICE, name))
        elif attr.endswith("_CHARACTERISTIC"):
            put(table, value, (CAT_CHARACTERISTIC, name))
        elif attr.endswith("_DESCRIPTOR"):
            put(table, value, (CAT_DESCRIPTOR, name))
        elif attr.endswith("_ATTRIBUTE_TYPE"):
            put(table, value, (CAT_DECLARATION, name))
        else:
            raise SystemExit(f"uncategorised bumble.gatt constant {attr}")

    # Member services: descriptive name, with the company when it isn't obvious.
    for value in sorted(set(member_company) | set(member_descr)):
        company = member_company.get(value)
        descr = member_descr.get(value)
        if descr and company:
            first_word = company.split()[0].lower().strip(",.")
            name = descr if first_word in descr.lower() else f"{descr} ({company})"
        else:
            name = descr or company
        put(table, value, (CAT_MEMBER, name))

    # SDP protocol identifiers and service classes (Assigned Numbers 3.1 / 3.3).
    for module in (bumble.core, bumble.sdp):
        for attr, u in bumble_uuid_constants(module):
            value = uuid16_of_bumble(u)
            if value is None or not u.name or attr == "BASE_UUID":
                continue
            put(table, value, (CAT_OTHER, clean(u.name)))

    table.update(UUID16_CORRECTIONS)
    return table


def collect_uuid128() -> dict[str, str]:
    import bluetooth_numbers as bn
    import bumble.gatt

    table: dict[str, str] = {}
    for source in (bn.service, bn.characteristic, bn.descriptor):
        for key, name in source.items():
            if isinstance(key, UUID):
                put(table, key.hex, clean(name))
    for _attr, u in bumble_uuid_constants(bumble.gatt):
        hex128 = uuid128_str_of_bumble(u)
        if hex128 and u.name:
            put(table, hex128, clean(u.name))
    # SIG-base UUIDs are answered through the 16-bit table instead.
    return {
        k: v for k, v in table.items() if not (k.startswith("0000") and k.endswith(SIG_BASE_SUFFIX))
    }


def collect_companies() -> dict[int, str]:
    import bluetooth_numbers as bn
    from bumble.company_ids import COMPANY_IDENTIFIERS

    table: dict[int, str] = {}
    for key, name in bn.company.items():
        put(table, key, clean(name))
    for key, name in COMPANY_IDENTIFIERS.items():
        put(table, key, clean(name))
    return table


# Appearance names from bumble's enum member names, made readable.
APPEARANCE_WORDS = {
    "PC": "PC",
    "PDA": "PDA",
    "IOT": "IoT",
    "HVAC": "HVAC",
    "LED": "LED",
    "HID": "HID",
    "AV": "AV",
    "CD": "CD",
    "DVD": "DVD",
    "BLURAY": "Blu-ray",
    "AND": "and",
    "OR": "or",
    "WITH": "with",
}
APPEARANCE_NAMES = {
    "EYE_GLASSES": "Eyeglasses",
    "HANDHELD_PC_PDA": "Handheld PC/PDA",
    "PALM_SIZE_PC_PDA": "Palm-size PC/PDA",
    "ALL_IN_ONE": "All-in-One",
    "IN_SHOE_RUNNING_WALKING_SENSOR": "In-Shoe Running Walking Sensor",
    "ON_SHOW_RUNNING_WALKING_SENSOR": "On-Shoe Running Walking Sensor",  # bumble typo "SHOW"
    "ON_HIP_RUNNING_WALKING_SENSOR": "On-Hip Running Walking Sensor",
    "SET_TOP_BOX": "Set-top Box",
    "IN_GROUND_LIGHT": "In-ground Light",
    "POLE_TOP_LIGHT": "Pole-top Light",
    "IN_EAR_HEARING_AID": "In-ear Hearing Aid",
    "BEHIND_EAR_HEARING_AID": "Behind-ear Hearing Aid",
    "WRIST_WORN_PULSE_OXIMETER": "Wrist Worn Pulse Oximeter",
    "INSULIN_PUMP_DURABLE_PUMP": "Insulin Pump, durable pump",
    "INSULIN_PUMP_PATCH_PUMP": "Insulin Pump, patch pump",
}


def appearance_words(enum_name: str) -> str:
    if enum_name in APPEARANCE_NAMES:
        return APPEARANCE_NAMES[enum_name]
    words = enum_name.split("_")
    out = []
    for i, w in enumerate(words):
        if w in APPEARANCE_WORDS and not (i == 0 and APPEARANCE_WORDS[w].islower()):
            out.append(APPEARANCE_WORDS[w])
        else:
            out.append(w.capitalize())
    return " ".join(out)


def collect_appearance() -> dict[int, str]:
    from bumble.core import Appearance

    table: dict[int, str] = {}
    for category in Appearance.Category:  # canonical members only, definition order
        cat_name = appearance_words(category.name)
        base = int(category) << 6
        put(table, base, cat_name)
        sub_class = Appearance.SUBCATEGORY_CLASSES.get(category)
        for sub in sub_class or ():
            if int(sub) == 0:
                continue  # "Generic X": the category's own name
            if not 0 < int(sub) < 0x40:
                raise SystemExit(f"bad appearance subcategory {category.name}.{sub.name}")
            put(table, base | int(sub), f"{cat_name}: {appearance_words(sub.name)}")
    return table


# --------------------------------------------------------------------------- emit


def header(versions: dict[str, str], what: str) -> str:
    return (
        f"// Generated by scripts/gen_assigned_numbers.py from PyPI bluetooth-numbers "
        f"{versions['bluetooth-numbers']} (and bumble {versions['bumble']}) — do not edit.\n"
        f"// {what}\n"
        "// Regenerate: /tmp/anvenv/bin/python scripts/gen_assigned_numbers.py "
        "(see the script's docstring for the venv).\n"
    )


def check_line(line: str) -> str:
    if "\n" in line or "\r" in line or '"""#' in line:
        raise SystemExit(f"line cannot be embedded in a raw string literal: {line!r}")
    return line


def emit(versions, what: str, prop: str, doc: str, lines: list[str]) -> str:
    body = "\n".join(check_line(line) for line in lines)
    return (
        header(versions, what)
        + "\n"
        + "extension AssignedNumbersTables {\n"
        + f"    /// {doc}\n"
        + f'    static let {prop}: String = #"""\n'
        + body
        + '\n"""#\n'
        + "}\n"
    )


def generate(versions: dict[str, str]) -> dict[str, str]:
    uuid16 = collect_uuid16()
    uuid128 = collect_uuid128()
    companies = collect_companies()
    appearance = collect_appearance()

    counts: dict[str, int] = {}
    for cat, _name in uuid16.values():
        counts[cat] = counts.get(cat, 0) + 1
    summary = ", ".join(f"{letter}={counts.get(letter, 0)}" for letter in "scdxmo")

    files = {
        "AssignedNumbersUUID16Table.swift": emit(
            versions,
            f"{len(uuid16)} SIG 16-bit UUIDs ({summary}).",
            "uuid16Text",
            "One line per 16-bit UUID: `hex<TAB>category letter<TAB>name`, sorted by value. "
            "Letters: s service, c characteristic, d descriptor, u unit, x declaration, "
            "m member/SDO service, o other (SDP protocol / service class).",
            [f"{k:04x}\t{cat}\t{name}" for k, (cat, name) in sorted(uuid16.items())],
        ),
        "AssignedNumbersCompanyTable.swift": emit(
            versions,
            f"{len(companies)} company identifiers.",
            "companyText",
            "One line per company identifier: `hex<TAB>name`, sorted by value.",
            [f"{k:04x}\t{name}" for k, name in sorted(companies.items())],
        ),
        "AssignedNumbersAppearanceTable.swift": emit(
            versions,
            f"{len(appearance)} appearance values (bumble.core.Appearance).",
            "appearanceText",
            "One line per appearance value: `hex<TAB>name`, sorted by value. "
            "Subcategory 0 (generic) lines carry the category name.",
            [f"{k:04x}\t{name}" for k, name in sorted(appearance.items())],
        ),
        "AssignedNumbersUUID128Table.swift": emit(
            versions,
            f"{len(uuid128)} well-known vendor 128-bit UUIDs.",
            "uuid128Text",
            "One line per 128-bit UUID: `32 lowercase hex digits (big-endian)<TAB>name`, sorted.",
            [f"{k}\t{name}" for k, name in sorted(uuid128.items())],
        ),
    }
    print(
        f"uuid16: {len(uuid16)} ({summary}); companies: {len(companies)}; "
        f"appearance: {len(appearance)}; uuid128: {len(uuid128)}",
        file=sys.stderr,
    )
    return files


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="output folder")
    parser.add_argument(
        "--check", action="store_true", help="compare with the files on disk instead of writing"
    )
    args = parser.parse_args()

    versions = {}
    for dist, pinned in PINNED.items():
        try:
            versions[dist] = importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            print(f"error: {dist} is not installed (pip install {dist}=={pinned})", file=sys.stderr)
            return 2
        if versions[dist] != pinned:
            print(
                f"warning: {dist} {versions[dist]} installed; tables were pinned to {pinned}",
                file=sys.stderr,
            )

    files = generate(versions)
    stale = []
    for name, text in sorted(files.items()):
        path = args.out / name
        if args.check:
            if not path.exists() or path.read_text(encoding="utf-8") != text:
                stale.append(str(path))
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
            print(f"wrote {path}", file=sys.stderr)
    if stale:
        print("out of date: " + ", ".join(stale), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
