"""A Bumble central that connects to a device twin (``bleanalyze peer``) and reports what it found.

    .venv/bin/python scripts/replay/twin_central.py --transport tcp-client:127.0.0.1:PORT \
        --address FA:E4:E3:24:20:09 [--read HANDLE]... [--write HANDLE=HEX]... [--notifications N]

Power on, connect to ADDRESS (random unless it ends with /P), discover every service, every
characteristic and every descriptor with Bumble's own GATT client, pair with ``--pair`` (Just Works; with
``--passkey N`` as a keyboard typing N), read the handles given with
``--read``, write (with response) the values given with ``--write`` in order, then wait for N
notifications or indications (any handle), and disconnect.  Prints ``RESULT {json}``:
services (handle, end, uuid), characteristics (value handle, properties, uuid),
descriptors (handle, uuid), paired, encrypted and the LTK Bumble derived, hex as the controller takes it
(with --pair), reads (handle -> hex or error:0xNN), notifications ([handle, hex]).
The Swift tests compare these with what tshark decodes from the capture the twin was made of.
"""

from __future__ import annotations

import argparse
import asyncio
import json

from bumble import hci
from bumble.att import ATT_Error
from bumble.device import Device
from bumble.pairing import PairingConfig, PairingDelegate
from bumble.transport import open_transport

import replay_common as rc


def uuid_text(uuid) -> str:
    """16-bit UUIDs as 0xNNNN, others as lower-case 128-bit text (what the tests compare)."""
    raw = bytes(uuid.to_bytes())
    if len(raw) == 2:
        return f"0x{int.from_bytes(raw, 'little'):04x}"
    return str(uuid.to_hex_str("-")).lower() if hasattr(uuid, "to_hex_str") else str(uuid).lower()


async def run(args) -> dict:
    async with await open_transport(args.transport) as transport:
        device = Device.with_hci("bleanalyze-twin-central", hci.Address(rc.CENTRAL_ADDRESS), transport.source, transport.sink)
        # Just Works: no input, no output, no MITM; with --passkey, a keyboard that types it
        # (Passkey Entry with a device that displays, Core v5.4 Vol 3 Part H 2.3.5.1).
        if args.passkey is not None:
            class Keyboard(PairingDelegate):
                async def get_number(self):
                    return args.passkey
            device.pairing_config_factory = lambda connection: PairingConfig(
                sc=True, mitm=True, bonding=True, delegate=Keyboard(io_capability=PairingDelegate.IoCapability.KEYBOARD_INPUT_ONLY))
        else:
            device.pairing_config_factory = lambda connection: PairingConfig(
                sc=True, mitm=False, bonding=True, delegate=PairingDelegate(io_capability=PairingDelegate.IoCapability.NO_OUTPUT_NO_INPUT))
        await asyncio.wait_for(device.power_on(), rc.STEP_TIMEOUT)
        address = hci.Address(args.address[:-2], hci.Address.PUBLIC_DEVICE_ADDRESS) if args.address.endswith("/P") else hci.Address(args.address)
        # Listen for a Security Request from the moment the link exists: a peripheral may send it
        # with its first PDU, before connect() returns.
        security_request = asyncio.Event()
        device.on("connection", lambda c: c.on(c.EVENT_SECURITY_REQUEST, lambda auth_req: security_request.set()))
        connection = await asyncio.wait_for(device.connect(address), args.connect_timeout)
        client = connection.gatt_client
        received: list = []
        arrived = asyncio.Event()

        def spy(original):
            def handler(pdu):
                received.append([pdu.attribute_handle, bytes(pdu.attribute_value).hex()])
                if len(received) >= args.notifications:
                    arrived.set()
                original(pdu)
            return handler

        client.on_att_handle_value_notification = spy(client.on_att_handle_value_notification)
        client.on_att_handle_value_indication = spy(client.on_att_handle_value_indication)

        result: dict = {"services": [], "characteristics": [], "descriptors": [], "reads": {}, "writes": {}}
        services = await asyncio.wait_for(client.discover_services(), rc.STEP_TIMEOUT)
        for service in services:
            result["services"].append({"handle": service.handle, "end": service.end_group_handle, "uuid": uuid_text(service.uuid)})
            characteristics = await asyncio.wait_for(client.discover_characteristics([], service), rc.STEP_TIMEOUT)
            for c in characteristics:
                result["characteristics"].append({"value": c.handle,
                                                  "properties": int(c.properties), "uuid": uuid_text(c.uuid)})
                for d in await asyncio.wait_for(client.discover_descriptors(c), rc.STEP_TIMEOUT):
                    result["descriptors"].append({"handle": d.handle, "uuid": uuid_text(d.type)})
        if args.pair_on_security_request:
            # The peripheral asks for security (SMP Security Request, Core v5.4 Vol 3 Part H 3.6.7): pair then.
            try:
                await asyncio.wait_for(security_request.wait(), rc.STEP_TIMEOUT)
                result["securityRequest"] = True
            except asyncio.TimeoutError:
                result["securityRequest"] = False
        if args.pair or (args.pair_on_security_request and result.get("securityRequest")):
            keys: list = []
            connection.on(connection.EVENT_PAIRING, keys.append)
            try:
                await asyncio.wait_for(connection.pair(), rc.STEP_TIMEOUT)
                result["paired"] = "ok"
            except Exception as error:  # the twin's refusal is a result, not a crash
                result["paired"] = f"error:{error}"
            result["encrypted"] = bool(connection.is_encrypted)
            ltk = keys[0].ltk if keys and keys[0].ltk else None   # Secure Connections: the f5 LTK both sides hold
            result["ltk"] = bytes(ltk.value).hex() if ltk else None
        for handle in args.read:
            try:
                value = await asyncio.wait_for(client.read_value(int(handle, 0)), rc.STEP_TIMEOUT)
                result["reads"][handle] = bytes(value).hex()
            except ATT_Error as error:
                result["reads"][handle] = f"error:{error.error_code:#04x}"
        for item in args.write:
            handle, value = item.split("=")
            try:
                await asyncio.wait_for(client.write_value(int(handle, 0), bytes.fromhex(value), with_response=True), rc.STEP_TIMEOUT)
                result["writes"][item] = "ok"
            except ATT_Error as error:
                result["writes"][item] = f"error:{error.error_code:#04x}"
        if args.notifications > 0:
            try:
                await asyncio.wait_for(arrived.wait(), rc.STEP_TIMEOUT)
            except asyncio.TimeoutError:
                pass
        result["notifications"] = received
        await asyncio.wait_for(connection.disconnect(), rc.STEP_TIMEOUT)
        return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--transport", required=True, help="Bumble transport spec, e.g. tcp-client:127.0.0.1:6402")
    parser.add_argument("--address", required=True, help="the twin's address (append /P for a public one)")
    parser.add_argument("--read", action="append", default=[], help="a handle to read (0x0010), repeatable")
    parser.add_argument("--write", action="append", default=[], help="HANDLE=HEX written with response, repeatable, in order")
    parser.add_argument("--notifications", type=int, default=0, help="wait for this many notifications/indications")
    parser.add_argument("--pair", action="store_true", help="pair (Just Works, no input/output) after discovery")
    parser.add_argument("--pair-on-security-request", action="store_true",
                        help="pair (as --pair) when the peripheral sends an SMP Security Request; reports securityRequest")
    parser.add_argument("--passkey", type=int, help="with --pair: pair as a keyboard that types this passkey (MITM)")
    parser.add_argument("--connect-timeout", type=float, default=20.0)
    args = parser.parse_args()
    rc.quiet_logging()
    print("RESULT " + json.dumps(asyncio.run(run(args)), sort_keys=True), flush=True)


if __name__ == "__main__":
    main()
