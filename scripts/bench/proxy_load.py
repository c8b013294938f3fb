"""Load for `bleanalyze live --proxy` (make bench): a minimal H4 controller over TCP and a host.

    python3 scripts/bench/proxy_load.py controller PORT            # answers every command at once
    python3 scripts/bench/proxy_load.py host PORT [--packets N] [--pings N]

The controller answers each HCI command with a Command Complete (status 0) as soon as it has read
it, and counts ACL packets. The host (1) sends --pings commands one at a time, each waiting for its
Command Complete: round-trip times; (2) sends --packets 27-byte ACL packets as fast as the socket
takes them, then one command, and waits for its answer (which comes after every ACL packet, H4 being
in order): packets per second through whatever is between the two. Prints one JSON line.
"""

from __future__ import annotations

import json
import socket
import struct
import sys
import time


def read_exact(s: socket.socket, n: int, buf: bytearray) -> bytes:
    while len(buf) < n:
        chunk = s.recv(1 << 16)
        if not chunk:
            raise EOFError
        buf += chunk
    out = bytes(buf[:n])
    del buf[:n]
    return out


def controller(port: int) -> None:
    server = socket.create_server(("127.0.0.1", port))
    print("READY", flush=True)
    while True:
        conn, _ = server.accept()
        conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        buf = bytearray()
        acl = 0
        try:
            while True:
                kind = read_exact(conn, 1, buf)[0]
                if kind == 0x01:
                    opcode, length = struct.unpack("<HB", read_exact(conn, 3, buf))
                    read_exact(conn, length, buf)
                    conn.sendall(bytes([0x04, 0x0E, 0x04, 0x01]) + struct.pack("<H", opcode) + b"\x00")
                elif kind == 0x02:
                    _, length = struct.unpack("<HH", read_exact(conn, 4, buf))
                    read_exact(conn, length, buf)
                    acl += 1
                else:
                    raise ValueError(f"packet type {kind:#x}")
        except EOFError:
            conn.close()


def host(port: int, packets: int, pings: int) -> None:
    s = socket.create_connection(("127.0.0.1", port))
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    buf = bytearray()
    reset = bytes([0x01, 0x03, 0x0C, 0x00])
    rtts = []
    for _ in range(pings):
        t0 = time.perf_counter_ns()
        s.sendall(reset)
        read_exact(s, 7, buf)
        rtts.append((time.perf_counter_ns() - t0) / 1000)
    rtts.sort()
    acl = bytes([0x02, 0x40, 0x00, 27, 0x00]) + bytes([0x17, 0x00, 0x04, 0x00, 0x1B, 0x10, 0x00]) + bytes(20)
    batch = acl * 1000
    t0 = time.perf_counter()
    for _ in range(packets // 1000):
        s.sendall(batch)
    s.sendall(reset)
    read_exact(s, 7, buf)
    seconds = time.perf_counter() - t0
    s.close()
    print(json.dumps({
        "pings": pings,
        "rttMedianMicros": rtts[len(rtts) // 2] if rtts else None,
        "rttP99Micros": rtts[int(len(rtts) * 0.99)] if rtts else None,
        "packets": packets // 1000 * 1000,
        "seconds": round(seconds, 3),
        "packetsPerSecond": round(packets // 1000 * 1000 / seconds),
    }), flush=True)


if __name__ == "__main__":
    role, port = sys.argv[1], int(sys.argv[2])
    args = sys.argv[3:]
    opt = {args[i]: int(args[i + 1]) for i in range(0, len(args) - 1, 2)}
    if role == "controller":
        controller(port)
    else:
        host(port, opt.get("--packets", 200_000), opt.get("--pings", 2000))
