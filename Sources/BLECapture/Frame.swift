/// Who sent a frame, seen from the host: `sent` = host → controller, `received` = controller → host.
public enum Direction: UInt8, Sendable {
    case sent, received, unknown

    /// btmon's glyphs: `<` host → controller, `>` controller → host.
    public var glyph: Character {
        switch self { case .sent: "<"; case .received: ">"; case .unknown: "=" }
    }
    public var name: String {
        switch self { case .sent: "sent"; case .received: "received"; case .unknown: "unknown" }
    }
}

/// What a capture record holds. HCI packets first; then the records that carry no HCI packet but
/// belong to the log (BlueZ monitor index and log records, PacketLogger syslog/notes, air captures).
public enum FrameKind: UInt8, Sendable, CaseIterable {
    case command, event, aclData, scoData, isoData
    // BlueZ monitor (btsnoop 2001, pcap DLT 254); Linux kernel `include/net/bluetooth/hci_mon.h`
    case indexNew, indexDeleted, indexOpen, indexClosed, indexInfo, vendorDiagnostic, systemNote, userLogging
    case controlOpen, controlClose, controlCommand, controlEvent
    // Apple PacketLogger
    case syslog, power, note, newController, vendor
    /// Over-the-air link layer packet (pcap DLT 251/256/272): counted, not decoded yet.
    case airLE
    /// A record type the format does not define.
    case unknown

    /// Stable lowercase name used in `--json` output and `info` counts.
    public var name: String {
        switch self {
        case .command: "command"
        case .event: "event"
        case .aclData: "acl"
        case .scoData: "sco"
        case .isoData: "iso"
        case .indexNew: "new-index"
        case .indexDeleted: "delete-index"
        case .indexOpen: "open-index"
        case .indexClosed: "close-index"
        case .indexInfo: "index-info"
        case .vendorDiagnostic: "vendor-diagnostic"
        case .systemNote: "system-note"
        case .userLogging: "user-logging"
        case .controlOpen: "control-open"
        case .controlClose: "control-close"
        case .controlCommand: "control-command"
        case .controlEvent: "control-event"
        case .syslog: "syslog"
        case .power: "power"
        case .note: "note"
        case .newController: "new-controller"
        case .vendor: "vendor"
        case .airLE: "air-le"
        case .unknown: "unknown"
        }
    }

    /// True for the five HCI packet types (H4 indicators 0x01–0x05).
    public var isHCI: Bool { rawValue <= FrameKind.isoData.rawValue }
}

/// A problem the capture reader found in one record (as opposed to a protocol decoding error).
public enum RecordProblem: Sendable, Equatable {
    /// The record holds no bytes at all.
    case empty
    /// The record is longer than any packet of its type can be.
    case oversized(length: Int, limit: Int)
    /// The H4 packet indicator / record type is not one the format defines.
    case unknownType(UInt16)

    public var description: String {
        switch self {
        case .empty: "empty record"
        case let .oversized(length, limit): "record of \(length) bytes is longer than any packet (\(limit))"
        case let .unknownType(t): "unknown packet type 0x\(String(t, radix: 16))"
        }
    }
}

/// One record of a capture: a view into the file, valid only inside the reader's callback.
///
/// `payload` excludes the H4 packet indicator and any pseudo-header (pcap direction word, monitor
/// header): for HCI kinds it starts at the HCI packet header (opcode, event code, handle).
public struct Frame {
    /// 1-based record number, counting every record in the file.
    public var number: Int
    /// Microseconds since the Unix epoch.
    public var timestamp: Int64
    public var direction: Direction
    public var kind: FrameKind
    /// Controller index (BlueZ monitor), 0 elsewhere.
    public var adapter: UInt16
    /// File offset of the record header (of the decompressed stream for gzip input).
    public var recordOffset: Int
    /// File offset of `payload[0]`.
    public var payloadOffset: Int
    /// The bytes as captured.
    public var payload: UnsafeRawBufferPointer
    /// Length of the payload on the wire; larger than `payload.count` when the capture cut it.
    public var originalLength: Int
    /// The record's own type code (H4 indicator, monitor opcode, PacketLogger type).
    public var rawType: UInt16
    /// Set when the reader itself found the record unusable.
    public var problem: RecordProblem?

    public init(number: Int, timestamp: Int64, direction: Direction, kind: FrameKind, adapter: UInt16,
                recordOffset: Int, payloadOffset: Int, payload: UnsafeRawBufferPointer, originalLength: Int,
                rawType: UInt16, problem: RecordProblem? = nil) {
        self.number = number
        self.timestamp = timestamp
        self.direction = direction
        self.kind = kind
        self.adapter = adapter
        self.recordOffset = recordOffset
        self.payloadOffset = payloadOffset
        self.payload = payload
        self.originalLength = originalLength
        self.rawType = rawType
        self.problem = problem
    }

    /// The capture kept fewer bytes than were on the wire (`incl_len < orig_len`, a snap length,
    /// Android btsnooz): not a protocol error, and never reported as one.
    public var isCaptureTruncated: Bool { payload.count < originalLength }
}

/// Named limits that keep a hostile capture from exhausting memory or time.
public enum CaptureLimits {
    /// Timestamps are clamped to ±2^52 µs (about ±142 years around 1970) when read, so that every
    /// difference the analysis computes fits in an Int64: a garbage timestamp field cannot trap.
    public static let maxTimestampMagnitude: Int64 = 1 << 52

    @inlinable
    public static func clampTimestamp(_ t: Int64) -> Int64 {
        min(max(t, -maxTimestampMagnitude), maxTimestampMagnitude)
    }

    /// Longest HCI packet with its H4 indicator: an ACL packet has a 4-byte header and up to 65535
    /// bytes of data (Core v5.4 Vol 4 Part E 5.4.2); a monitor or pcap pseudo-header adds a few bytes.
    public static let maxHCIRecord = 1 + 4 + 65_535 + 16
    /// Longest record accepted at all (PacketLogger syslog text, monitor logging). Beyond this a
    /// length field is taken as corrupt rather than believed.
    public static let maxRecord = 1 << 24
}

extension FrameKind {
    /// What an H4 vendor diagnostic indicator (`H4.kind`) is, for display; nil for other records.
    public static func h4DiagnosticName(_ indicator: UInt16) -> String? {
        switch indicator {
        case 0x07: "Broadcom diagnostic (LMP monitor)"
        case 0xF0: "Linux HCI_DIAG_PKT (vendor diagnostic)"
        case 0xFF: "Linux HCI_VENDOR_PKT"
        default: nil
        }
    }
}
