import BLEBytes

/// The BlueZ monitor protocol over a UART (or RTT): what Zephyr (`CONFIG_BT_DEBUG_MONITOR_UART`) and
/// NimBLE write for `btmon -d TTY`. Each packet (Zephyr subsys/bluetooth/host/monitor.h, BlueZ
/// monitor/tty.h), little-endian:
///
/// ```
/// data_len  u16   bytes after this field: 4 + hdr_len + the payload
/// opcode    u16   the monitor opcode, as a btsnoop monitor record's (2 command, 3 event, 4/5 ACL tx/rx …)
/// flags     u8    0
/// hdr_len   u8    the extended header's length
/// ext       hdr_len bytes: entries of type u8 + value — types 1–7 packets dropped since the last packet
///                 (u8, saturating at 255: command, event, ACL, ACL, SCO, SCO, other), type 8 a timestamp
///                 (u32, in 1/10 ms since the device started)
/// payload   the packet, as the monitor channel carries it (the controller index is implicitly 0)
/// ```
///
/// Types 3/4 are ACL TX/RX drops in BlueZ's tty.h and RX/TX in Zephyr's monitor.h (which writes the
/// TX count under 3): both are told as ACL drops. The stream has no sync byte: a length that cannot
/// be (`data_len` below 4, `hdr_len` past the packet, an opcode no monitor sends) is garbage, skipped
/// a byte at a time and counted, never silently.
public struct MonitorUARTDeframer {
    /// One packet: its monitor opcode, payload (in the deframer's buffer until the next `next()`),
    /// the device's timestamp and the drops it tells of.
    public struct Packet {
        public var opcode: UInt16
        public var payload: ArraySlice<UInt8>
        /// 1/10 ms since the device started, when the packet carries one.
        public var timestamp: UInt32?
        public var drops: Drops
    }

    /// Packets the device dropped (it could not send them), by kind.
    public struct Drops: Sendable, Equatable {
        public var command = 0, event = 0, acl = 0, sco = 0, other = 0
        public init() {}
        public var total: Int { command + event + acl + sco + other }
        public var isEmpty: Bool { total == 0 }
        public static func += (a: inout Drops, b: Drops) {
            a.command += b.command; a.event += b.event; a.acl += b.acl; a.sco += b.sco; a.other += b.other
        }
        /// (kind, count) of the kinds with drops, for messages and events.
        public var counts: [(String, Int)] {
            [("command", command), ("event", event), ("acl", acl), ("sco", sco), ("other", other)].filter { $0.1 > 0 }
        }
    }

    /// Extended header types (Zephyr monitor.h `BT_MONITOR_*_DROPS`, `BT_MONITOR_TS32`).
    enum ExtendedHeader: UInt8 {
        case commandDrops = 1, eventDrops, aclDrops3, aclDrops4, scoDrops5, scoDrops6, otherDrops, timestamp32
    }

    /// The fixed header: data_len, opcode, flags, hdr_len.
    public static let headerSize = 6
    /// Opcodes a monitor sends (btsnoop monitor opcodes 0…19, and 255 NOP).
    static func plausible(_ opcode: UInt16) -> Bool { opcode <= 19 || opcode == 255 }
    /// Longest packet accepted: an HCI ACL packet of 64 KiB plus headers.
    static let maxDataLength = 4 + 255 + 65_539

    private var buffer: [UInt8] = []
    private var start = 0
    /// Bytes skipped as garbage (no packet could start there), and packets read.
    public private(set) var skipped = 0
    public private(set) var packets = 0

    public init() {}

    /// Appends bytes read from the line.
    public mutating func receive(_ bytes: UnsafeRawBufferPointer) {
        if start > 0, start == buffer.count { buffer.removeAll(keepingCapacity: true); start = 0 }
        if start > 1 << 16 { buffer.removeFirst(start); start = 0 }
        buffer.append(contentsOf: bytes.bindMemory(to: UInt8.self))
    }

    /// The next whole packet, nil until more bytes come.
    public mutating func next() -> Packet? {
        while buffer.count - start >= Self.headerSize {
            let header = buffer.withUnsafeBytes { all -> (data: Int, opcode: UInt16, ext: Int)? in
                let r = ByteReader(UnsafeRawBufferPointer(rebasing: all[start ..< start + Self.headerSize]))
                guard let data = r.getU16le(at: 0), let opcode = r.getU16le(at: 2), let ext = r.getU8(at: 5) else { return nil }
                return (Int(data), opcode, Int(ext))
            }
            guard let header, header.data >= 4 + header.ext, header.data <= Self.maxDataLength, Self.plausible(header.opcode) else {
                start += 1
                skipped += 1
                continue
            }
            let end = start + 2 + header.data
            guard buffer.count >= end else { return nil }
            let extStart = start + Self.headerSize
            var packet = Packet(opcode: header.opcode, payload: buffer[(extStart + header.ext) ..< end], timestamp: nil, drops: Drops())
            buffer.withUnsafeBytes { all in
                Self.readExtended(ByteReader(UnsafeRawBufferPointer(rebasing: all[extStart ..< extStart + header.ext])), into: &packet)
            }
            start = end
            packets += 1
            return packet
        }
        return nil
    }

    /// Bytes held that make no whole packet yet (at the end of the stream: a cut packet).
    public var pending: Int { buffer.count - start }

    /// The extended header's entries; an unknown type ends it (its value's size is not known).
    private static func readExtended(_ ext: ByteReader, into packet: inout Packet) {
        var r = ext
        while let code = try? r.u8("extended header type"), let type = ExtendedHeader(rawValue: code) {
            if type == .timestamp32 {
                guard let t = try? r.u32le("timestamp") else { return }
                packet.timestamp = t
                continue
            }
            guard let n = (try? r.u8("drops")).map(Int.init) else { return }
            switch type {
            case .commandDrops: packet.drops.command += n
            case .eventDrops: packet.drops.event += n
            case .aclDrops3, .aclDrops4: packet.drops.acl += n
            case .scoDrops5, .scoDrops6: packet.drops.sco += n
            case .otherDrops, .timestamp32: packet.drops.other += n
            }
        }
    }
}
