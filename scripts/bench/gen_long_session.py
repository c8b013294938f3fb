#!/usr/bin/env python3
"""A long live session for the memory soak (issue 32): N short LE connections one after another,
2 s apart (20,000 connections = 11 h of capture time), each set up (LE Create Connection, Command
Status, LE Connection Complete), six Write Requests answered with their Number Of Completed Packets,
and closed (Remote User Terminated; every 10th lost with Connection Timeout). 500 peers in turn.
Unlike gen_btsnoop.c, whose connection count stays near 4,000 whatever the frames, the connections
here grow with the session. Deterministic.
    python3 scripts/bench/gen_long_session.py CONNECTIONS OUT.btsnoop"""
import struct, sys

def main():
    count, out = int(sys.argv[1]), sys.argv[2]
    t = 0x00DCDDB30F2F8000 + 1_700_000_000_000_000   # btsnoop: µs since 0000-01-01 (0x00DCDDB30F2F8000 is 1970)
    recs = []
    def rec(dt, flags, h4, payload):
        nonlocal t
        t += dt
        data = bytes([h4]) + payload
        recs.append(struct.pack(">IIIIq", len(data), len(data), flags, 0, t) + data)
    def cmd(dt, op, params): rec(dt, 2, 0x01, struct.pack("<HB", op, len(params)) + params)
    def evt(dt, code, params): rec(dt, 3, 0x04, bytes([code, len(params)]) + params)
    def acl(dt, sent, handle, att):
        l2 = struct.pack("<HH", len(att), 4) + att
        rec(dt, 0 if sent else 1, 0x02, struct.pack("<HH", handle | 0x2000, len(l2)) + l2)
    with open(out, "wb") as f:
        f.write(b"btsnoop\0" + struct.pack(">II", 1, 1002))
        for i in range(1, count + 1):
            handle = 0x40 + i % 4
            peer = bytes([i % 500 & 0xFF, i % 500 >> 8, 0x10, 0xEE, 0xFF, 0xC0])
            cmd(2_000_000, 0x200D, bytes([0x60, 0, 0x30, 0, 0, 1]) + peer + bytes([0, 0x18, 0, 0x28, 0, 0, 0, 0xF4, 1, 0, 0, 0, 0]))
            evt(300, 0x0F, bytes([0, 1]) + struct.pack("<H", 0x200D))
            evt(20_000, 0x3E, bytes([1, 0]) + struct.pack("<H", handle) + bytes([0, 1]) + peer + struct.pack("<HHHB", 0x18, 0, 0xC8, 0))
            for w in range(6):
                acl(30_000, True, handle, bytes([0x12, 0x10, 0x00, w, 1]))
                evt(2_000, 0x13, bytes([1]) + struct.pack("<HH", handle, 1))
                acl(28_000, False, handle, bytes([0x13]))
            evt(100_000, 0x05, bytes([0]) + struct.pack("<H", handle) + bytes([0x08 if i % 10 == 0 else 0x13]))
            if len(recs) > 4096:
                f.write(b"".join(recs)); recs.clear()
        f.write(b"".join(recs))

main()
