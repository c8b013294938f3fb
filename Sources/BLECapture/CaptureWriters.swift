import BLEBytes

/// A record to write: what a reader would hand back as a `Frame`, with owned bytes.
public struct RecordToWrite: Sendable {
    public var timestamp: Int64
    public var direction: Direction
    public var kind: FrameKind
    public var adapter: UInt16
    /// The packet without H4 indicator (for HCI kinds) or the record payload.
    public var payload: [UInt8]
    /// Length on the wire; defaults to `payload.count` (set it larger to write a capture-truncated record).
    public var originalLength: Int?
    /// Record type for kinds with no fixed code (PacketLogger vendor records, unknown monitor opcodes);
    /// ignored for every other kind.
    public var rawType: UInt16?

    public init(timestamp: Int64, direction: Direction, kind: FrameKind, adapter: UInt16 = 0, payload: [UInt8],
                originalLength: Int? = nil, rawType: UInt16? = nil) {
        self.timestamp = timestamp
        self.direction = direction
        self.kind = kind
        self.adapter = adapter
        self.payload = payload
        self.originalLength = originalLength
        self.rawType = rawType
    }
}

/// Writes btsnoop v1 files (H4 1002 or monitor 2001): test fixtures, the benchmark generator, redaction.
public struct BTSnoopWriter {
    public private(set) var writer = ByteWriter()
    public let datalink: UInt32

    public init(datalink: UInt32 = Datalink.btsnoopH4) {
        self.datalink = datalink
        writer.append(Array("btsnoop\0".utf8))
        writer.u32be(1)
        writer.u32be(datalink)
    }

    public var bytes: [UInt8] { writer.bytes }

    public mutating func append(_ r: RecordToWrite) {
        var data: [UInt8]
        var flags: UInt32
        switch datalink {
        case Datalink.btsnoopMonitor:
            data = r.payload
            let opcode = r.kind == .unknown ? (r.rawType ?? 0xFFFF) : Self.monitorOpcode(r.kind, r.direction)
            flags = UInt32(r.adapter) << 16 | UInt32(opcode)
        case Datalink.btsnoopH1:
            data = r.payload
            flags = (r.direction == .received ? 1 : 0) | (r.kind == .command || r.kind == .event ? 2 : 0)
        default:
            data = [Self.h4Indicator(r.kind)] + r.payload
            flags = (r.direction == .received ? 1 : 0) | (r.kind == .command || r.kind == .event ? 2 : 0)
        }
        let header = datalink == Datalink.btsnoopH4 ? 1 : 0
        Self.record(flags: flags, timestamp: r.timestamp, originalLength: r.originalLength.map { $0 + header } ?? data.count,
                    data, into: &writer)
    }

    /// One record (header and `data`) appended to `writer`: what `live` makes of each packet a
    /// proxy passes on or the monitor channel gives. Flags as `BTSnoopReader` reads them.
    public static func record<C: Collection>(flags: UInt32, timestamp: Int64, originalLength: Int? = nil, drops: UInt32 = 0,
                                             _ data: C, into writer: inout ByteWriter) where C.Element == UInt8 {
        writer.u32be(UInt32(originalLength ?? data.count))
        writer.u32be(UInt32(data.count))
        writer.u32be(flags)
        writer.u32be(drops)
        writer.u64be(UInt64(bitPattern: timestamp &+ BTSnoopReader.epochOffset))   // safe: realistic timestamps
        writer.append(data)
    }

    /// Flags of an H4 record (btsnoop 1002): bit 0 received, bit 1 command or event.
    public static func h4Flags(received: Bool, commandOrEvent: Bool) -> UInt32 {
        (received ? 1 : 0) | (commandOrEvent ? 2 : 0)
    }

    static func h4Indicator(_ kind: FrameKind) -> UInt8 {
        switch kind {
        case .command: 1
        case .aclData: 2
        case .scoData: 3
        case .event: 4
        case .isoData: 5
        default: 0xFF
        }
    }

    static func monitorOpcode(_ kind: FrameKind, _ direction: Direction) -> UInt16 {
        switch kind {
        case .indexNew: 0
        case .indexDeleted: 1
        case .command: 2
        case .event: 3
        case .aclData: direction == .received ? 5 : 4
        case .scoData: direction == .received ? 7 : 6
        case .indexOpen: 8
        case .indexClosed: 9
        case .indexInfo: 10
        case .vendorDiagnostic: 11
        case .systemNote: 12
        case .userLogging: 13
        case .controlOpen: 14
        case .controlClose: 15
        case .controlCommand: 16
        case .controlEvent: 17
        case .isoData: direction == .received ? 19 : 18
        default: 0xFFFF
        }
    }
}

/// Writes Apple PacketLogger files in either byte order (the reader must detect both).
public struct PacketLoggerWriter {
    public private(set) var writer = ByteWriter()
    public let bigEndian: Bool

    public init(bigEndian: Bool) { self.bigEndian = bigEndian }

    public var bytes: [UInt8] { writer.bytes }

    public mutating func append(_ r: RecordToWrite) {
        let fixed = r.kind != .vendor && r.kind != .unknown
        let type = fixed ? Self.type(r.kind, r.direction) : UInt8(truncatingIfNeeded: r.rawType ?? 0xFA)
        let length = UInt32(9 + r.payload.count)
        let secs = UInt32(truncatingIfNeeded: r.timestamp / 1_000_000)
        let usecs = UInt32(truncatingIfNeeded: r.timestamp % 1_000_000)
        if bigEndian {
            writer.u32be(length); writer.u32be(secs); writer.u32be(usecs)
        } else {
            writer.u32le(length); writer.u32le(secs); writer.u32le(usecs)
        }
        writer.u8(type)
        writer.append(r.payload)
    }

    static func type(_ kind: FrameKind, _ direction: Direction) -> UInt8 {
        switch kind {
        case .command: 0x00
        case .event: 0x01
        case .aclData: direction == .received ? 0x03 : 0x02
        case .scoData: direction == .received ? 0x09 : 0x08
        case .isoData: direction == .received ? 0x13 : 0x12
        case .syslog: 0xF7
        case .power: 0xFB
        case .note: 0xFC
        case .newController: 0xFE
        default: 0xFA
        }
    }
}

extension CaptureFile {
    /// Reads every record into owned `RecordToWrite`s (tests and small conversions only: it copies).
    public func records() -> (records: [RecordToWrite], summary: ReadSummary) {
        var out: [RecordToWrite] = []
        let summary = read { f in
            out.append(RecordToWrite(timestamp: f.timestamp, direction: f.direction, kind: f.kind, adapter: f.adapter,
                                     payload: Array(f.payload), originalLength: f.originalLength, rawType: f.rawType))
        }
        return (out, summary)
    }
}
