import BLECapture
import BLEProtocol
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What a live run sent and received, written as btsnoop (H4, datalink 1002) by `-w`, so the live
/// session can be analyzed with the same tool.
public final class LiveCapture {
    private var writer = BTSnoopWriter(datalink: Datalink.btsnoopH4)
    public private(set) var count = 0
    /// True when we play the host (replay); false when we play the controller (emulate).
    private let weAreHost: Bool

    public init(weAreHost: Bool) { self.weAreHost = weAreHost }

    /// Logs a packet we sent (`outgoing`) or received, stamped now.
    func log(_ packet: H4Packet, outgoing: Bool) {
        let kind: FrameKind
        switch packet.type {
        case .command: kind = .command
        case .event: kind = .event
        case .acl: kind = .aclData
        case .sco: kind = .scoData
        case .iso: kind = .isoData
        }
        let hostToController = outgoing == weAreHost
        writer.append(RecordToWrite(timestamp: Clock.wallMicros(), direction: hostToController ? .sent : .received,
                                    kind: kind, payload: packet.bytes))
        count += 1
    }

    /// Writes the file. The corresponding C functions are `fopen`, `fwrite` and `fclose`.
    /// - Throws: `TransportError.Kind.io` with the path when it cannot be written.
    public func write(to path: String) throws(TransportError) {
        guard let f = fopen(path, "wb") else { throw TransportError(.io, "cannot write \(path): \(PosixIO.errnoText())") }
        let bytes = writer.bytes
        let written = bytes.withUnsafeBytes { fwrite($0.baseAddress, 1, $0.count, f) }
        let closed = fclose(f) == 0
        guard written == bytes.count, closed else { throw TransportError(.io, "cannot write \(path): \(PosixIO.errnoText())") }
    }
}
