#!/usr/bin/env python3
"""A bonded peripheral whose resolvable private address changes between connections
(captures/gate/rpa_rotation.btsnoop, the central's HCI, and rpa_rotation_peripheral.btsnoop, the
peripheral's; for `check --baseline` across an address change, issue 33).

The Testbed of make_captures.py (central C0:11:22:33:44:01, peripheral "bleanalyze-hr" whose
identity address is its random static C0:11:22:33:44:02) with the peripheral on resolvable
private addresses made from its IRK (Core v5.4 Vol 6 Part B 1.3.2.2):

  connection 1  the peripheral advertises on RPA 1; the central connects, pairs (LE Secure
                Connections Just Works, bonding: the peripheral distributes its IRK in Identity
                Information and C0:11:22:33:44:02 in Identity Address Information), discovers
                everything and disconnects (0x13)
  connection 2  the peripheral advertises on RPA 2 (a new address); the central connects to it,
                encrypts with the LTK of the bond (LE Enable Encryption, no pairing), reads the
                Battery Level and disconnects (0x13)

The peripheral's name is not in its advertising data, so nothing but the bond says that the
second address is the same device. The random numbers of both RPAs and of SMP come from a
seeded generator: the capture is byte-identical across runs.

Usage: .venv/bin/python scripts/make_rpa_rotation.py --out captures/gate/
"""

from __future__ import annotations

import argparse
import asyncio
import random
import sys
from pathlib import Path
from unittest import mock

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bumble import crypto, hci  # noqa: E402
from bumble.device import Peer  # noqa: E402

from captures import gatt_db  # noqa: E402
from captures.scenarios import (  # noqa: E402
    discover_everything,
    expect,
    just_works_config,
    one_characteristic,
    reproducible_smp_randomness,
)
from captures.testbed import STEP_TIMEOUT, Testbed  # noqa: E402

PERIPHERAL_IRK = bytes(range(0x10, 0x20))
NAME = "rpa_rotation.btsnoop"
# The same session from the peripheral's host: it answers LE Long Term Key Request with the bond's
# key (LE Long Term Key Request Reply) on both links; its peer, the central, keeps its address.
PERIPHERAL_NAME = "rpa_rotation_peripheral.btsnoop"


async def connect_to_rpa(tb: Testbed, rng: random.Random):
    """The peripheral takes a new RPA (LE Set Random Address) and advertises without its name; the
    central connects to that address."""
    with mock.patch.object(crypto, "generate_prand", lambda: bytes(rng.randbytes(2)) + bytes([0x40 | rng.randrange(0x40)])):
        rpa = hci.Address.generate_private_address(PERIPHERAL_IRK)
    await tb.peripheral.send_sync_command(hci.HCI_LE_Set_Random_Address_Command(random_address=rpa))
    tb.peripheral.random_address = rpa
    await tb.peripheral.start_advertising(own_address_type=hci.OwnAddressType.RANDOM,
                                          advertising_data=bytes([2, 0x01, 0x06]))
    peripheral_side = asyncio.get_running_loop().create_future()
    tb.peripheral.once("connection", peripheral_side.set_result)
    central = await asyncio.wait_for(tb.central.connect(rpa), STEP_TIMEOUT)
    await asyncio.wait_for(peripheral_side, STEP_TIMEOUT)
    return central, rpa


async def session(out_dir: Path) -> None:
    rng = random.Random(33)
    async with Testbed(out_dir, NAME, PERIPHERAL_NAME) as tb:
        tb.peripheral.irk = PERIPHERAL_IRK
        # Both distribute their random static address as identity (not their public one), so each
        # finds the other's keys when the link comes back.
        config = just_works_config()
        config.identity_address_type = hci.Address.RANDOM_DEVICE_ADDRESS
        tb.central.pairing_config_factory = lambda _: config
        tb.peripheral.pairing_config_factory = lambda _: config

        first, rpa1 = await connect_to_rpa(tb, rng)
        await asyncio.wait_for(first.pair(), STEP_TIMEOUT)
        expect(first.is_encrypted, "link not encrypted after pairing")
        await discover_everything(Peer(first))
        await asyncio.wait_for(first.disconnect(hci.HCI_REMOTE_USER_TERMINATED_CONNECTION_ERROR), STEP_TIMEOUT)
        await asyncio.sleep(0.2)

        second, rpa2 = await connect_to_rpa(tb, rng)
        expect(rpa1 != rpa2, "the RPA did not change")
        await asyncio.wait_for(second.encrypt(), STEP_TIMEOUT)
        expect(second.is_encrypted, "bonded reconnection not encrypted")
        peer = Peer(second)
        await peer.discover_services()
        for s in peer.services:
            await peer.discover_characteristics(service=s)
        battery = one_characteristic(peer, gatt_db.BATTERY_LEVEL)
        expect(await peer.read_value(battery) == gatt_db.BATTERY_LEVEL_VALUE, "battery level")
        await asyncio.wait_for(second.disconnect(hci.HCI_REMOTE_USER_TERMINATED_CONNECTION_ERROR), STEP_TIMEOUT)
        await asyncio.sleep(0.2)
        print(f"RPA 1 {rpa1}, RPA 2 {rpa2}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    with reproducible_smp_randomness(33):
        asyncio.run(session(args.out))
    for name in (NAME, PERIPHERAL_NAME):
        print(f"{name}: {(args.out / name).stat().st_size} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
