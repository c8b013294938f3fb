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
        b.withReader { r in
            var event = r
            switch try? HCIEvent.decode(&event) {
            case let .commandComplete(c)?:
                commandCredits = Int(c.numPackets)
                if c.status == .success, let returns = r.reader(for: c.returnParameters) { learnBuffers(c.opcode, returns) }
            case let .commandStatus(_, numPackets, _)?:
                commandCredits = Int(numPackets)
            case let .numberOfCompletedPackets(pairs)?:
                pairs.forEach(in: r.bytes, base: r.base) { handle, count in
                    inFlight[handle] = max(0, (inFlight[handle] ?? 0) - Int(count))
                }
            case .disconnectionComplete?:
                if let h = v.handle { inFlight[h] = nil }
            default:
                break
            }
        }
    }

    /// Buffer sizes from a successful (LE) Read Buffer Size; LE sizes win, and an LE count of 0
    /// means the LE link shares the BR/EDR buffers (Vol 4 Part E 7.8.2).
    private mutating func learnBuffers(_ opcode: HCIOpcode, _ returns: ByteReader) {
        var r = returns
        guard let size = try? BufferSize.decode(opcode, &r), size.aclPackets > 0, size.aclLength > 0 else { return }
        let isLE = opcode != .readBufferSize
        if isLE || !leBuffers {
            aclBuffers = Int(size.aclPackets)
            aclMaxLength = Int(size.aclLength)
            leBuffers = leBuffers || isLE
        }
    }
}
