import BLEBytes

/// Reads btsnoop v1 files: Android `btsnoop_hci.log`, BlueZ `btmon -w`, Bumble's snooper.
///
/// Layout (RFC 1761 with the Bluetooth datalinks; all integers big-endian):
/// header `"btsnoop\0"`, u32 version (1), u32 datalink; then records of
/// u32 original length, u32 included length, u32 flags, u32 cumulative drops, i64 timestamp
/// (microseconds since midnight 1 Jan of year 0), data.
/// - H1 (1001) / H4 (1002): flags bit 0 = received (controller → host), bit 1 = command/event.
/// - Linux monitor (2001): flags = adapter index << 16 | monitor opcode.
struct BTSnoopReader {
    static let headerSize = 16
    static let recordHeaderSize = 24
    /// Microseconds between year 0 and the Unix epoch, as btsnoop defines its timestamps.
    static let epochOffset: Int64 = 0x00dc_ddb3_0f2f_8000

    let datalink: UInt32

    static func readHeader(_ bytes: UnsafeRawBufferPointer, path: String) throws(CaptureError) -> UInt32 {
        guard bytes.count >= headerSize else {
            throw CaptureError(path: path, offset: bytes.count, reason: "btsnoop header cut short (\(bytes.count) of 16 bytes)")
        }
        let version = bytes.loadBE32(at: 8)
        guard version == 1 else {
            throw CaptureError(path: path, offset: 8, reason: "btsnoop version \(version) is not 1")
        }
        return bytes.loadBE32(at: 12)
    }

    /// Reads every record, calling `body` for each; stops at the end of the file or at a record
    /// header that cannot be believed (reported in the summary).
    func read(_ bytes: UnsafeRawBufferPointer, mapped: MappedFile?, _ body: (inout Frame) -> Void) -> ReadSummary {
        var summary = ReadSummary()
        var offset = Self.headerSize
        let end = bytes.count
        while offset < end {
            let number = summary.frames + 1
            let remaining = end - offset
            guard remaining >= Self.recordHeaderSize else {
                summary.truncated = true
                summary.issues.append(CaptureIssue(kind: .truncatedRecord(needed: Self.recordHeaderSize, available: remaining),
                                                   frameNumber: number, offset: offset))
                break
            }
            let originalLength = Int(bytes.loadBE32(at: offset))
            let includedLength = Int(bytes.loadBE32(at: offset + 4))
            let flags = bytes.loadBE32(at: offset + 8)
            let rawTime = Int64(bitPattern: bytes.loadBE64(at: offset + 16))
            let dataOffset = offset + Self.recordHeaderSize
            guard includedLength <= CaptureLimits.maxRecord else {
                summary.issues.append(CaptureIssue(kind: .corruptRecord("included length \(includedLength) exceeds any record"),
                                                   frameNumber: number, offset: offset))
                summary.truncated = includedLength > end - dataOffset
                break
            }
            guard includedLength <= end - dataOffset else {
                summary.truncated = true
                summary.issues.append(CaptureIssue(kind: .truncatedRecord(needed: Self.recordHeaderSize + includedLength,
                                                                          available: remaining),
                                                   frameNumber: number, offset: offset))
                break
            }
            let data = UnsafeRawBufferPointer(rebasing: bytes[dataOffset ..< dataOffset + includedLength])
            // safe: wraps only for garbage timestamps, which the clamp then bounds
            let timestamp = CaptureLimits.clampTimestamp(rawTime &- Self.epochOffset)
            var frame = makeFrame(number: number, timestamp: timestamp, flags: flags, recordOffset: offset,
                                  dataOffset: dataOffset, data: data, originalLength: originalLength)
            summary.noteTimestamp(timestamp)
            if MappedFile.anyFault, let at = mapped?.vanishedOffset, at < dataOffset + includedLength {
                summary.truncated = true
                summary.issues.append(CaptureIssue(kind: .fileShrank(at: at), frameNumber: number, offset: offset))
                break
            }
            summary.frames = number
            body(&frame)
            offset = dataOffset + includedLength
            mapped?.release(before: offset)
        }
        return summary
    }

    @inline(__always)
    private func makeFrame(number: Int, timestamp: Int64, flags: UInt32, recordOffset: Int, dataOffset: Int,
                           data: UnsafeRawBufferPointer, originalLength: Int) -> Frame {
        let received = flags & 1 != 0
        let direction: Direction = received ? .received : .sent
        switch datalink {
        case Datalink.btsnoopH4:
            guard let indicator = data.first else {
                return Frame(number: number, timestamp: timestamp, direction: direction, kind: .unknown, adapter: 0,
                             recordOffset: recordOffset, payloadOffset: dataOffset, payload: data,
                             originalLength: originalLength, rawType: 0, problem: .empty)
            }
            return H4.frame(indicator: indicator, number: number, timestamp: timestamp, direction: direction,
                            adapter: 0, recordOffset: recordOffset, payloadOffset: dataOffset + 1,
                            payload: UnsafeRawBufferPointer(rebasing: data[1...]),
                            originalLength: max(0, originalLength - 1))
        case Datalink.btsnoopH1:
            let kind: FrameKind = flags & 2 != 0 ? (received ? .event : .command) : .aclData
            return Frame(number: number, timestamp: timestamp, direction: direction, kind: kind, adapter: 0,
                         recordOffset: recordOffset, payloadOffset: dataOffset, payload: data,
                         originalLength: originalLength, rawType: UInt16(flags & 3),
                         problem: data.isEmpty ? .empty : nil)
        case Datalink.btsnoopMonitor:
            return Monitor.frame(opcode: UInt16(truncatingIfNeeded: flags), adapter: UInt16(truncatingIfNeeded: flags >> 16),
                                 number: number, timestamp: timestamp, recordOffset: recordOffset,
                                 payloadOffset: dataOffset, payload: data, originalLength: originalLength)
        default:
            return Frame(number: number, timestamp: timestamp, direction: direction, kind: .unknown, adapter: 0,
                         recordOffset: recordOffset, payloadOffset: dataOffset, payload: data,
                         originalLength: originalLength, rawType: 0)
        }
    }
}

/// The H4 (UART) packet indicator, Core v5.4 Vol 4 Part A 2.
enum H4 {
    /// 0x01–0x05 are the Core's. The others a log may hold are the controller maker's diagnostics,
    /// not malformed HCI: Broadcom/Cypress diagnostic frames (the LMP monitor, 0x07: InternalBlue's
    /// packet-h4bcm.c dissects them), Linux's HCI_DIAG_PKT (0xF0, Qualcomm/Broadcom/Intel
    /// diagnostics through hci_recv_diag) and HCI_VENDOR_PKT (0xFF; include/net/bluetooth/hci.h),
    /// which btmon shows as "Vendor Diagnostic". Kept as `.vendorDiagnostic`, the indicator in `rawType`
    /// (named by `FrameKind.h4DiagnosticName`).
    static func kind(_ indicator: UInt8) -> FrameKind? {
        switch indicator {
        case 0x01: .command
        case 0x02: .aclData
        case 0x03: .scoData
        case 0x04: .event
        case 0x05: .isoData
        case 0x07, 0xF0, 0xFF: .vendorDiagnostic
        default: nil
        }
    }

    @inline(__always)
    static func frame(indicator: UInt8, number: Int, timestamp: Int64, direction: Direction, adapter: UInt16,
                      recordOffset: Int, payloadOffset: Int, payload: UnsafeRawBufferPointer,
                      originalLength: Int) -> Frame {
        let kind = kind(indicator)
        var problem: RecordProblem? = kind == nil ? .unknownType(UInt16(indicator)) : nil
        if payload.count > CaptureLimits.maxHCIRecord { problem = .oversized(length: payload.count, limit: CaptureLimits.maxHCIRecord) }
        return Frame(number: number, timestamp: timestamp, direction: direction, kind: kind ?? .unknown, adapter: adapter,
                     recordOffset: recordOffset, payloadOffset: payloadOffset, payload: payload,
                     originalLength: originalLength, rawType: UInt16(indicator), problem: problem)
    }
}

/// BlueZ monitor opcodes (Linux `include/net/bluetooth/hci_mon.h`, `HCI_MON_*`).
enum Monitor {
    static func kind(_ opcode: UInt16) -> (FrameKind, Direction) {
        switch opcode {
        case 0: (.indexNew, .unknown)
        case 1: (.indexDeleted, .unknown)
        case 2: (.command, .sent)
        case 3: (.event, .received)
        case 4: (.aclData, .sent)
        case 5: (.aclData, .received)
        case 6: (.scoData, .sent)
        case 7: (.scoData, .received)
        case 8: (.indexOpen, .unknown)
        case 9: (.indexClosed, .unknown)
        case 10: (.indexInfo, .unknown)
        case 11: (.vendorDiagnostic, .unknown)
        case 12: (.systemNote, .unknown)
        case 13: (.userLogging, .unknown)
        case 14: (.controlOpen, .unknown)
        case 15: (.controlClose, .unknown)
        case 16: (.controlCommand, .sent)
        case 17: (.controlEvent, .received)
        case 18: (.isoData, .sent)
        case 19: (.isoData, .received)
        default: (.unknown, .unknown)
        }
    }

    @inline(__always)
    static func frame(opcode: UInt16, adapter: UInt16, number: Int, timestamp: Int64, recordOffset: Int,
                      payloadOffset: Int, payload: UnsafeRawBufferPointer, originalLength: Int) -> Frame {
        let (kind, direction) = kind(opcode)
        var problem: RecordProblem? = kind == .unknown ? .unknownType(opcode) : nil
        if kind.isHCI, payload.count > CaptureLimits.maxHCIRecord {
            problem = .oversized(length: payload.count, limit: CaptureLimits.maxHCIRecord)
        }
        return Frame(number: number, timestamp: timestamp, direction: direction, kind: kind, adapter: adapter,
                     recordOffset: recordOffset, payloadOffset: payloadOffset, payload: payload,
                     originalLength: originalLength, rawType: opcode, problem: problem)
    }
}

extension UnsafeRawBufferPointer {
    @inline(__always) func loadBE32(at offset: Int) -> UInt32 {
        UInt32(bigEndian: loadUnaligned(fromByteOffset: offset, as: UInt32.self))
    }
    @inline(__always) func loadBE64(at offset: Int) -> UInt64 {
        UInt64(bigEndian: loadUnaligned(fromByteOffset: offset, as: UInt64.self))
    }
    @inline(__always) func loadLE32(at offset: Int) -> UInt32 {
        UInt32(littleEndian: loadUnaligned(fromByteOffset: offset, as: UInt32.self))
    }
    @inline(__always) func loadLE64(at offset: Int) -> UInt64 {
        UInt64(littleEndian: loadUnaligned(fromByteOffset: offset, as: UInt64.self))
    }
}
