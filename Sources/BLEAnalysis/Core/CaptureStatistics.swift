import BLECapture

/// Counts kept over the whole capture for `info` and the report header.
public struct CaptureStatistics: Sendable {
    /// Frames per kind, indexed by `FrameKind.rawValue`.
    public var perKind = [Int](repeating: 0, count: FrameKind.allCases.count)
    public var malformed = 0
    /// Vendor diagnostic frames of an H4 log, per indicator (`FrameKind.h4DiagnosticName`: Broadcom
    /// LMP monitor 0x07, Linux HCI_DIAG_PKT 0xF0…): the controller maker's, neither HCI nor malformed.
    public var h4Diagnostics: [UInt16: Int] = [:]
    /// Frames whose payload the capture cut (`incl_len < orig_len`).
    public var captureTruncated = 0
    /// ATT PDUs per opcode (a reassembled PDU counts once).
    public var attOpcodes = [Int](repeating: 0, count: 256)
    /// First few malformed frames, for the report (bounded).
    public var malformedExamples: [(frame: Int, reason: String, offset: Int)] = []
    public static let maxExamples = 50
    /// The largest forward step of the clock between two frames in a row, and the frame after it. A
    /// step of days between frames milliseconds apart in their traffic is the logger's clock being
    /// set, not time that passed: the report gives the span of the traffic instead.
    public var largestStep: (micros: Int64, frame: Int) = (0, 0)
    /// A step this large is a clock jump, never a pause in the traffic.
    public static let clockJump: Int64 = 24 * 3600 * 1_000_000
    public var clockJump: (micros: Int64, frame: Int)? { largestStep.micros >= Self.clockJump ? largestStep : nil }

    public init() {}

    public func count(_ kind: FrameKind) -> Int { perKind[Int(kind.rawValue)] }

    /// ACL data but no HCI command or event at all (a filtered export): connection set-up and teardown,
    /// flow control and encryption are not in the capture, so no rule can decide on them.
    public var holdsNoHCIEvents: Bool { count(.aclData) > 0 && count(.command) == 0 && count(.event) == 0 }
}

/// A controller seen in the capture: an adapter index (BlueZ monitor) with what the log says about it.
public struct AdapterInfo: Sendable {
    public var index: UInt16
    public var address: String?
    public var name: String?
    public var bus: String?
    public var manufacturer: String?

    public init(index: UInt16) { self.index = index }
}
