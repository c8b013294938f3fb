import BLEBytes

/// Reads Apple PacketLogger `.pklg` files (macOS PacketLogger, iOS Bluetooth logging profile,
/// sysdiagnose). There is no file header: records are
/// `u32 length` (bytes after this field: 8 of timestamp + 1 of type + payload), `u32 seconds`,
/// `u32 microseconds`, `u8 type`, payload. Older macOS files are big-endian, newer iOS ones
/// little-endian: the byte order is detected per file from the first records.
struct PacketLoggerReader {
    static let recordHeaderSize = 13
    let bigEndian: Bool

    /// PacketLogger record types (as Wireshark and Apple's tools use them).
    static func kind(_ type: UInt8) -> (FrameKind, Direction) {
        switch type {
        case 0x00: (.command, .sent)
        case 0x01: (.event, .received)
        case 0x02: (.aclData, .sent)
        case 0x03: (.aclData, .received)
        case 0x08: (.scoData, .sent)
        case 0x09: (.scoData, .received)
        case 0x12: (.isoData, .sent)
        case 0x13: (.isoData, .received)
        case 0xF7: (.syslog, .unknown)
        case 0xFB: (.power, .unknown)
        case 0xFC: (.note, .unknown)
        case 0xFE: (.newController, .unknown)
        default: (.vendor, .unknown)
        }
    }

    /// Tries both byte orders on the first few records; returns `true` for big-endian, `false` for
    /// little-endian, nil when neither walks cleanly (then the file is not PacketLogger).
    static func plausibleEndianness(_ bytes: UnsafeRawBufferPointer) -> Bool? {
        func walks(_ bigEndian: Bool) -> Bool {
            var offset = 0
            var records = 0
            while records < 8, offset < bytes.count {
                guard bytes.count - offset >= recordHeaderSize else { return records > 0 }
                let length = Int(bigEndian ? bytes.loadBE32(at: offset) : bytes.loadLE32(at: offset))
                guard length >= 9, length <= 1 << 20 else { return false }
                let type = bytes[offset + 12]
                if records == 0, kind(type).0 == .vendor, type != 0xF8, type != 0x0A { return false }
                offset += 4 + length
                records += 1
            }
            return records > 0 && offset <= bytes.count + 4 + (1 << 20)
        }
        let be = walks(true), le = walks(false)
        switch (be, le) {
        case (true, false): return true
        case (false, true): return false
        case (true, true):
            // Both walk: choose the order giving the smaller first length (the other is byte-swapped).
            return bytes.loadBE32(at: 0) <= bytes.loadLE32(at: 0)
        default: return nil
        }
    }

    func read(_ bytes: UnsafeRawBufferPointer, mapped: MappedFile?, _ body: (inout Frame) -> Void) -> ReadSummary {
        var summary = ReadSummary()
        var offset = 0
        let end = bytes.count
        while offset < end {
            let number = summary.frames + 1
            switch record(bytes, at: offset, base: 0, number: number) {
            case let .frame(f, next):
                var frame = f
                summary.noteTimestamp(frame.timestamp)
                if MappedFile.anyFault, let at = mapped?.vanishedOffset, at < next {
                    summary.truncated = true
                    summary.issues.append(CaptureIssue(kind: .fileShrank(at: at), frameNumber: number, offset: offset))
                    return summary
                }
                summary.frames = number
                body(&frame)
                offset = next
                mapped?.release(before: offset)
            case let .short(needed, available):
                summary.truncated = true
                summary.issues.append(CaptureIssue(kind: .truncatedRecord(needed: needed, available: available),
                                                   frameNumber: number, offset: offset))
                return summary
            case let .corrupt(why, needs):
                summary.issues.append(CaptureIssue(kind: .corruptRecord(why), frameNumber: number, offset: offset))
                summary.truncated = needs > end - offset
                return summary
            }
        }
        return summary
    }

    /// The record at `offset` of `bytes` (which start at file offset `base`); see `RecordStep`.
    @inline(__always)
    func record(_ bytes: UnsafeRawBufferPointer, at offset: Int, base: Int, number: Int) -> RecordStep {
        let remaining = bytes.count - offset
        guard remaining >= Self.recordHeaderSize else { return .short(needed: Self.recordHeaderSize, available: remaining) }
        let length = Int(bigEndian ? bytes.loadBE32(at: offset) : bytes.loadLE32(at: offset))
        guard length >= 9, length <= CaptureLimits.maxRecord else {
            return .corrupt("record length \(length) is impossible (9…\(CaptureLimits.maxRecord))", needs: 4 + length)
        }
        guard length <= remaining - 4 else { return .short(needed: 4 + length, available: remaining) }
        let secs = bigEndian ? bytes.loadBE32(at: offset + 4) : bytes.loadLE32(at: offset + 4)
        let usecs = bigEndian ? bytes.loadBE32(at: offset + 8) : bytes.loadLE32(at: offset + 8)
        let type = bytes[offset + 12]
        let dataOffset = offset + Self.recordHeaderSize
        let payloadLength = length - 9
        let payload = UnsafeRawBufferPointer(rebasing: bytes[dataOffset ..< dataOffset + payloadLength])
        let timestamp = CaptureLimits.clampTimestamp(Int64(secs) * 1_000_000 + Int64(usecs))   // u32 × 10^6 fits in Int64
        let (kind, direction) = Self.kind(type)
        var problem: RecordProblem? = nil
        if kind.isHCI, payloadLength > CaptureLimits.maxHCIRecord {
            problem = .oversized(length: payloadLength, limit: CaptureLimits.maxHCIRecord)
        }
        let frame = Frame(number: number, timestamp: timestamp, direction: direction, kind: kind, adapter: 0,
                          recordOffset: base + offset, payloadOffset: base + dataOffset, payload: payload,
                          originalLength: payloadLength, rawType: UInt16(type), problem: problem)
        return .frame(frame, next: dataOffset + payloadLength)
    }
}
