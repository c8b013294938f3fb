import BLEBytes

/// Android's btsnooz: the last ~256 KiB of HCI traffic that the Bluetooth stack keeps in memory and
/// prints into `dumpsys bluetooth_manager` (and so into every `adb bugreport`) between
/// `--- BEGIN:BTSNOOP_LOG_SUMMARY (N bytes in) ---` and `--- END:BTSNOOP_LOG_SUMMARY ---`.
///
/// Layout (AOSP `btif_debug_btsnoop.h` / `btif_debug_btsnoop.cc`, `btsnooz.py`; all integers
/// little-endian, the phone's native order, structs packed):
/// - base64 text (lines of 128 characters) of
/// - a 9-byte preamble, not compressed: `u8 version` (1 or 2), `u64 last_timestamp` — named `_ms` in
///   the source but holding the **microseconds** (Unix epoch) of the newest record;
/// - a zlib stream of records: v1 `u16 length, u32 delta, u8 type` (7 bytes), v2
///   `u16 length, u16 packet_length, u32 delta, u8 type` (9 bytes), then `length − 1` bytes.
///   `length` is the stored length and `packet_length` the length on the wire, both **+1 for the
///   type byte**; `delta` is the µs since the previous record (0 for the first one ever logged), so
///   timestamps are counted back from `last_timestamp` over the whole buffer.
/// - types (`BT_EVT_*` >> 8): 0x10 event, 0x11 ACL in, 0x12 SCO in, 0x17 ISO in, 0x20 command,
///   0x21 ACL out, 0x22 SCO out, 0x2d ISO out.
/// The stack keeps commands and events whole, L2CAP signalling (CID 1) whole, and cuts every other
/// ACL packet to 14 bytes (HCI ACL header + L2CAP header + 6 bytes): such records are
/// capture-truncated (`originalLength > payload.count`), never protocol errors.
public enum Btsnooz {
    public static let beginMarker = Array("--- BEGIN:BTSNOOP_LOG_SUMMARY".utf8)
    public static let endMarker = Array("--- END:BTSNOOP_LOG_SUMMARY".utf8)
    /// Bytes of ACL the stack keeps (`MAX_HCI_ACL_LEN`).
    public static let maxACLBytes = 14
    /// Longest base64 section believed (the ring buffer is 256 KiB before compression).
    public static let maxSectionBytes = 16 << 20

    public static let preambleSize = 9

    /// One decoded record, ready to be written as btsnoop (payload without H4 indicator).
    public struct Record: Sendable, Equatable {
        public var type: UInt8
        public var timestamp: Int64
        public var payload: [UInt8]
        /// Length on the wire without the type byte.
        public var originalLength: Int

        public init(type: UInt8, timestamp: Int64, payload: [UInt8], originalLength: Int) {
            (self.type, self.timestamp, self.payload, self.originalLength) = (type, timestamp, payload, originalLength)
        }

        public var kind: FrameKind { Btsnooz.kind(type) }
        public var direction: Direction { Btsnooz.direction(type) }
    }

    public struct Log: Sendable {
        public var version: UInt8
        /// µs since the Unix epoch of the newest record.
        public var lastTimestamp: Int64
        public var records: [Record]
        /// Why decoding stopped before the end, if it did (records before it are kept).
        public var problem: String?
    }

    public struct Failure: Error, Sendable, CustomStringConvertible {
        public var reason: String
        public var description: String { reason }
    }

    public static func kind(_ type: UInt8) -> FrameKind {
        switch type {
        case 0x10: .event
        case 0x11, 0x21: .aclData
        case 0x12, 0x22: .scoData
        case 0x17, 0x2d: .isoData
        case 0x20: .command
        default: .unknown
        }
    }

    public static func direction(_ type: UInt8) -> Direction {
        switch type {
        case 0x10, 0x11, 0x12, 0x17: .received
        case 0x20, 0x21, 0x22, 0x2d: .sent
        default: .unknown
        }
    }

    /// The btsnooz type of a frame kind and direction (for the encoder).
    public static func type(_ kind: FrameKind, _ direction: Direction) -> UInt8? {
        let received = direction == .received
        switch kind {
        case .event: return 0x10
        case .command: return 0x20
        case .aclData: return received ? 0x11 : 0x21
        case .scoData: return received ? 0x12 : 0x22
        case .isoData: return received ? 0x17 : 0x2d
        default: return nil
        }
    }

    // MARK: Finding the section

    /// The byte range of the base64 text between the BEGIN line and the END marker, if present.
    public static func section(in bytes: UnsafeRawBufferPointer) -> Range<Int>? {
        guard let begin = find(beginMarker, in: bytes, from: 0) else { return nil }
        // The base64 starts on the line after the BEGIN marker line.
        var start = begin + beginMarker.count
        while start < bytes.count, bytes[start] != 0x0A { start += 1 }
        guard start < bytes.count else { return nil }
        let end = find(endMarker, in: bytes, from: start) ?? bytes.count
        return start ..< end
    }

    static func find(_ needle: [UInt8], in bytes: UnsafeRawBufferPointer, from: Int) -> Int? {
        guard let first = needle.first, bytes.count >= needle.count else { return nil }
        var i = from
        let last = bytes.count - needle.count   // safe: checked above
        while i <= last {
            if bytes[i] == first {
                var j = 1
                while j < needle.count, bytes[i + j] == needle[j] { j += 1 }
                if j == needle.count { return i }
            }
            i += 1
        }
        return nil
    }

    /// Decodes base64 text, skipping whitespace; stops at the first character that is neither.
    public static func base64Decode(_ text: UnsafeRawBufferPointer) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(text.count / 4 * 3)
        var acc: UInt32 = 0
        var bits = 0
        for c in text {
            let v: UInt32
            switch c {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"): v = UInt32(c - UInt8(ascii: "A"))
            case UInt8(ascii: "a")...UInt8(ascii: "z"): v = UInt32(c - UInt8(ascii: "a")) + 26
            case UInt8(ascii: "0")...UInt8(ascii: "9"): v = UInt32(c - UInt8(ascii: "0")) + 52
            case UInt8(ascii: "+"): v = 62
            case UInt8(ascii: "/"): v = 63
            case UInt8(ascii: "="), 0x20, 0x09, 0x0A, 0x0D: continue
            default: return out
            }
            acc = (acc << 6 | v) & 0xFFFFFF
            bits += 6
            if bits >= 8 {
                bits -= 8
                out.append(UInt8(truncatingIfNeeded: acc >> UInt32(bits)))
            }
        }
        return out
    }

    /// Encodes bytes as base64 lines (the encoder side, for fixtures).
    public static func base64Encode(_ bytes: [UInt8], lineLength: Int = 128) -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
        var out: [UInt8] = []
        var i = 0
        while i < bytes.count {
            let n = min(3, bytes.count - i)
            let b0 = UInt32(bytes[i]), b1 = n > 1 ? UInt32(bytes[i + 1]) : 0, b2 = n > 2 ? UInt32(bytes[i + 2]) : 0
            let v = b0 << 16 | b1 << 8 | b2
            out.append(alphabet[Int(v >> 18 & 63)])
            out.append(alphabet[Int(v >> 12 & 63)])
            out.append(n > 1 ? alphabet[Int(v >> 6 & 63)] : UInt8(ascii: "="))
            out.append(n > 2 ? alphabet[Int(v & 63)] : UInt8(ascii: "="))
            i += 3
            if lineLength > 0, out.count % (lineLength + 1) == lineLength, i < bytes.count { out.append(0x0A) }
        }
        return String(decoding: out, as: UTF8.self)
    }

    // MARK: Decoding

    /// Decodes the base64 section text into records.
    /// - Throws: `Failure` when there is no usable preamble or zlib stream at all.
    public static func decode(sectionText: UnsafeRawBufferPointer) throws(Failure) -> Log {
        try decode(snooz: base64Decode(sectionText))
    }

    /// Decodes the binary btsnooz (preamble + zlib stream).
    public static func decode(snooz: [UInt8]) throws(Failure) -> Log {
        guard snooz.count > preambleSize else {
            throw Failure(reason: "btsnooz summary of \(snooz.count) bytes is shorter than its 9-byte preamble and a zlib stream")
        }
        let version = snooz[0]
        guard version == 1 || version == 2 else { throw Failure(reason: "btsnooz version \(version) is not 1 or 2") }
        let last = snooz.withReader { $0.getU64le(at: 1) } ?? 0   // after the version byte; count > preambleSize
        let (body, failure) = ZlibStream.inflate(Array(snooz[preambleSize...]))
        var problem: String? = nil
        if let failure {
            if body.isEmpty { throw Failure(reason: "btsnooz zlib stream cannot be inflated (\(failure))") }
            problem = "btsnooz zlib stream damaged after \(body.count) bytes: the records before are kept"
        }
        let lastTimestamp = Int64(bitPattern: last)
        var log = Log(version: version, lastTimestamp: lastTimestamp, records: [], problem: problem)
        let headerSize = version == 1 ? 7 : 9
        // Pass 1: record boundaries and deltas (timestamps are counted back from the newest one).
        var spans: [(offset: Int, length: Int, wire: Int, delta: UInt32, type: UInt8)] = []
        var offset = 0
        while offset < body.count {
            guard body.count - offset >= headerSize else {
                log.problem = log.problem ?? "btsnooz record header cut at byte \(offset) of the inflated stream"
                break
            }
            // u16 length (type byte included), v2: u16 length on the wire, then u32 time delta, u8 type.
            guard let (length, wire, delta, type) = body.withReader({ r -> (Int, Int, UInt32, UInt8)? in
                guard var h = r.getSlice(at: offset, count: headerSize) else { return nil }
                return try? { () throws(DecodeError) in
                    let length = Int(try h.u16le("Length"))
                    let wire = version == 2 ? Int(try h.u16le("Wire Length")) : length
                    return (length, wire, try h.u32le("Delta"), try h.u8("Type"))
                }()
            }) else { break }
            guard length >= 1 else {
                log.problem = log.problem ?? "btsnooz record at byte \(offset) has length 0 (it must count its type byte)"
                break
            }
            let dataStart = offset + headerSize
            guard length - 1 <= body.count - dataStart else {
                log.problem = log.problem ?? "btsnooz record at byte \(offset) runs past the end of the stream"
                break
            }
            spans.append((dataStart, length - 1, max(wire, length) - 1, delta, type))
            offset = dataStart + length - 1
        }
        var total: Int64 = 0
        for s in spans { total &+= Int64(s.delta) }   // safe: ≤ records × 2^32
        var t = lastTimestamp &- total                  // safe: realistic timestamps
        log.records.reserveCapacity(spans.count)
        for s in spans {
            t &+= Int64(s.delta)                        // safe: bounded by lastTimestamp
            let payload = Array(body[s.offset ..< s.offset + s.length])
            var original = s.wire
            if version == 1, kind(s.type) == .aclData, payload.count >= 4 {
                // v1 keeps no wire length: the ACL header's data length tells it.
                original = max(original, 4 + Int(payload.withReader { $0.getU16le(at: 2) } ?? 0))   // after the handle word
            }
            log.records.append(Record(type: s.type, timestamp: t, payload: payload, originalLength: original))
        }
        return log
    }

    /// The records as a btsnoop H4 file (capture-truncated records keep their wire length).
    public static func btsnoop(_ log: Log) -> [UInt8] {
        var w = BTSnoopWriter(datalink: Datalink.btsnoopH4)
        for r in log.records {
            w.append(RecordToWrite(timestamp: r.timestamp, direction: r.direction, kind: r.kind, payload: r.payload,
                                   originalLength: r.originalLength, rawType: UInt16(r.type)))
        }
        return w.bytes
    }
}
