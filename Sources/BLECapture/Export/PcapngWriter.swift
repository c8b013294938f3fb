import BLEBytes

/// Writes minimal pcapng files (IETF draft-ietf-opsawg-pcapng): one Section Header Block, one
/// Interface Description Block with `if_tsresol`, then Enhanced Packet Blocks. libpcap can read
/// pcapng but not write it; this covers what we need (test fixtures with any timestamp resolution,
/// conversions), little-endian.
public struct PcapngWriter {
    public private(set) var writer = ByteWriter()
    public let linkType: UInt16
    /// `if_tsresol`: bit 7 clear = 10^-n seconds, set = 2^-n seconds (section 4.2).
    public let tsresol: UInt8

    /// - Parameters:
    ///   - linkType: the pcap LINKTYPE (201 H4 with direction, 187 H4, 254 Linux monitor).
    ///   - tsresol: 6 = microseconds (the default when the option is absent), 9 = nanoseconds.
    public init(linkType: UInt16, tsresol: UInt8 = 6, snapLength: UInt32 = 0) {
        self.linkType = linkType
        self.tsresol = tsresol
        // Section Header Block: type, length, byte-order magic, version 1.0, section length unknown.
        block(0x0A0D_0D0A) { b in
            b.u32le(0x1A2B_3C4D)
            b.u16le(1); b.u16le(0)
            b.u64le(UInt64.max)
        }
        // Interface Description Block: link type, reserved, snap length, if_tsresol, opt_endofopt.
        block(1) { b in
            b.u16le(linkType); b.u16le(0)
            b.u32le(snapLength)
            b.u16le(9); b.u16le(1); b.u8(tsresol); b.append([0, 0, 0])
            b.u16le(0); b.u16le(0)
        }
    }

    public var bytes: [UInt8] { writer.bytes }

    /// Units per second of this interface's timestamps.
    public var unitsPerSecond: UInt64 {
        let n = UInt64(tsresol & 0x7F)
        if tsresol & 0x80 != 0 { return n >= 64 ? UInt64.max : 1 << n }
        var v: UInt64 = 1
        for _ in 0 ..< min(n, 19) { v *= 10 }
        return v
    }

    /// Appends an Enhanced Packet Block. `timestamp` is in units of `if_tsresol` since the epoch.
    public mutating func append(timestamp: UInt64, data: [UInt8], originalLength: Int? = nil) {
        block(6) { b in
            b.u32le(0)                                   // interface 0
            b.u32le(UInt32(truncatingIfNeeded: timestamp >> 32))
            b.u32le(UInt32(truncatingIfNeeded: timestamp))
            b.u32le(UInt32(data.count))
            b.u32le(UInt32(originalLength ?? data.count))
            b.append(data)
            b.append([UInt8](repeating: 0, count: (4 - data.count % 4) % 4))   // safe: constant divisor
        }
    }

    /// Appends an Enhanced Packet Block with `opt_comment` options (section 4.3, option code 1: UTF-8,
    /// padded to 32 bits; the list ends with `opt_endofopt`), as Wireshark shows them in `frame.comment`.
    public mutating func append(micros: Int64, data: [UInt8], originalLength: Int? = nil, comments: [String]) {
        guard !comments.isEmpty else { append(micros: micros, data: data, originalLength: originalLength); return }
        let (high, low) = split(micros)
        block(6) { b in
            b.u32le(0)
            b.u32le(high); b.u32le(low)
            b.u32le(UInt32(data.count))
            b.u32le(UInt32(originalLength ?? data.count))
            b.append(data)
            b.append([UInt8](repeating: 0, count: (4 - data.count % 4) % 4))   // safe: constant divisor
            for comment in comments {
                let text = Array(comment.utf8.prefix(65_000))
                b.u16le(1); b.u16le(UInt16(text.count))
                b.append(text)
                b.append([UInt8](repeating: 0, count: (4 - text.count % 4) % 4))   // safe: constant divisor
            }
            b.u16le(0); b.u16le(0)
        }
    }

    /// The bytes written so far, handed over and forgotten (a writer streaming to a file drains it).
    public mutating func drain() -> [UInt8] {
        defer { writer = ByteWriter() }
        return writer.bytes
    }

    /// A timestamp in µs as the EPB's high and low 32 bits in `if_tsresol` units.
    private func split(_ micros: Int64) -> (UInt32, UInt32) {
        let units = unitsPerSecond
        let seconds = UInt64(max(0, micros)) / 1_000_000
        let fraction = UInt64(max(0, micros)) % 1_000_000
        let scaled = units >= 1_000_000 ? fraction * (units / 1_000_000) : fraction / (1_000_000 / max(1, units))
        let t = seconds &* units &+ scaled   // safe: realistic timestamps
        return (UInt32(truncatingIfNeeded: t >> 32), UInt32(truncatingIfNeeded: t))
    }

    /// Appends an Enhanced Packet Block with a timestamp in microseconds since the epoch.
    public mutating func append(micros: Int64, data: [UInt8], originalLength: Int? = nil) {
        let units = unitsPerSecond
        let seconds = UInt64(max(0, micros)) / 1_000_000
        let fraction = UInt64(max(0, micros)) % 1_000_000
        let scaled = units >= 1_000_000 ? fraction * (units / 1_000_000) : fraction / (1_000_000 / max(1, units))
        append(timestamp: seconds &* units &+ scaled, data: data, originalLength: originalLength)   // safe: realistic timestamps
    }

    private mutating func block(_ type: UInt32, _ body: (inout ByteWriter) -> Void) {
        var b = ByteWriter()
        body(&b)
        let total = UInt32(12 + b.bytes.count)
        writer.u32le(type)
        writer.u32le(total)
        writer.append(b.bytes)
        writer.u32le(total)
    }
}
