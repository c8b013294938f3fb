import BLEBytes
import BLEProtocol

/// The host's side of HCI flow control, learned from what the live controller sends.
///
/// - Commands: Num_HCI_Command_Packets of the last Command Complete / Status is how many commands
///   may be sent now (Core v5.4 Vol 4 Part E 4.4).
/// - ACL: the controller's buffer count and size come from (LE) Read Buffer Size; each packet
///   sent takes a buffer until Number Of Completed Packets returns it, or its connection ends
///   (Vol 4 Part E 4.1.1, 7.7.19). Until the buffer size is known, nothing limits sending.
struct HostFlowControl: Sendable {
    var commandCredits = 1
    /// Total ACL buffers (LE ones if the controller has them).
    private(set) var aclBuffers: Int?
    /// Largest ACL data length the controller accepts.
    private(set) var aclMaxLength: Int?
    private var leBuffers = false
    private(set) var inFlight: [UInt16: Int] = [:]

    var inFlightTotal: Int { inFlight.values.reduce(0, +) }
    var canSendACL: Bool { aclBuffers.map { inFlightTotal < $0 } ?? true }

    mutating func sentCommand() { commandCredits = max(0, commandCredits - 1) }
    mutating func sentACL(handle: UInt16) { inFlight[handle, default: 0] += 1 }
    /// After a stall was reported: start counting afresh.
    mutating func forgetInFlight() { inFlight.removeAll() }

    /// Learns from a live controller → host unit.
    mutating func observe(_ v: UnitView) {
        guard case let .event(b) = v.unit.content else { return }
        switch v.eventCode {
        case HCIEventCode.commandComplete?:
            if b.count >= 3 { commandCredits = Int(b[2]) }
            if let op = v.opcode, b.count > 5, b[5] == 0 { learnBuffers(HCIOpcode(rawValue: op), Array(b[6...])) }
        case HCIEventCode.commandStatus?:
            if b.count >= 4 { commandCredits = Int(b[3]) }
        case HCIEventCode.numberOfCompletedPackets?:
            guard b.count >= 3 else { return }
            let n = Int(b[2])
            for i in 0..<n {
                let o = 3 + i * 4
                guard o + 4 <= b.count else { break }
                let handle = (UInt16(b[o]) | UInt16(b[o + 1]) << 8) & 0x0FFF
                let count = Int(UInt16(b[o + 2]) | UInt16(b[o + 3]) << 8)
                inFlight[handle] = max(0, (inFlight[handle] ?? 0) - count)
            }
        case HCIEventCode.disconnectionComplete?:
            if let h = v.handle { inFlight[h] = nil }
        default:
            break
        }
    }

    /// Buffer sizes from a successful (LE) Read Buffer Size; LE sizes win, and an LE count of 0
    /// means the LE link shares the BR/EDR buffers (Vol 4 Part E 7.8.2).
    private mutating func learnBuffers(_ opcode: HCIOpcode, _ returns: [UInt8]) {
        let size: BufferSize? = returns.withUnsafeBytes { raw in
            var r = ByteReader(raw)
            return try? BufferSize.decode(opcode, &r)
        }
        guard let size, size.aclPackets > 0, size.aclLength > 0 else { return }
        let isLE = opcode != .readBufferSize
        if isLE || !leBuffers {
            aclBuffers = Int(size.aclPackets)
            aclMaxLength = Int(size.aclLength)
            leBuffers = leBuffers || isLE
        }
    }
}
