import BLEBytes

/// Reassembles L2CAP PDUs from ACL fragments (Core v5.4 Vol 4 Part E 5.4.2, Vol 3 Part A 7.2),
/// keyed by (adapter, connection handle, direction) so interleaved links never mix.
///
/// A PDU that arrives whole in one ACL packet (the common case) is delivered as a view into the
/// frame: no copy. Only PDUs split over several packets are buffered, bounded by the largest
/// L2CAP PDU. A start fragment that arrives while a PDU is incomplete delivers the partial PDU as a
/// problem and starts anew; a continuation with no start is reported and dropped.
public struct L2CAPReassembler {
    /// Largest L2CAP basic frame: 4-byte header + 65535 bytes of information payload (Vol 3 Part A 3.1).
    public static let maxPDU = 4 + 65_535

    public struct Key: Hashable, Sendable {
        public var adapter: UInt16
        public var handle: UInt16
        public var received: Bool
        public init(adapter: UInt16, handle: UInt16, received: Bool) { (self.adapter, self.handle, self.received) = (adapter, handle, received) }
    }

    /// Where a delivered PDU came from.
    public struct Origin: Sendable {
        /// Frame number of the start fragment.
        public var firstFrame: Int
        /// Number of ACL fragments it was carried in.
        public var fragments: Int
    }

    public enum Problem: Sendable, Equatable, CustomStringConvertible {
        /// A new start arrived before the previous PDU was complete: `have` of `expected` bytes were received.
        case incompletePDU(firstFrame: Int, have: Int, expected: Int)
        /// A continuation fragment with no PDU in progress.
        case orphanContinuation
        /// A start fragment too short to hold the 4-byte basic L2CAP header.
        case shortStart(Int)
        /// More bytes than the L2CAP length announced.
        case overrun(expected: Int, got: Int)

        public var description: String {
            switch self {
            case let .incompletePDU(first, have, expected):
                "L2CAP PDU started in frame \(first) is incomplete (\(have) of \(expected) bytes) when a new one starts"
            case .orphanContinuation: "ACL continuation fragment without a start (capture began mid-PDU?)"
            case let .shortStart(n): "ACL start fragment of \(n) bytes cannot hold the L2CAP header"
            case let .overrun(expected, got): "ACL fragments carry \(got) bytes for an L2CAP PDU of \(expected)"
            }
        }
    }

    struct Pending {
        var expected: Int
        var data: [UInt8]
        var firstFrame: Int
        var fragments: Int
    }

    private var pending: [Key: Pending] = [:]

    public init() {}

    /// PDUs still incomplete (for the end-of-capture report).
    public var incompleteCount: Int { pending.count }

    /// Forgets a link's partial PDUs (on disconnect).
    public mutating func reset(adapter: UInt16, handle: UInt16) {
        pending[Key(adapter: adapter, handle: handle, received: true)] = nil
        pending[Key(adapter: adapter, handle: handle, received: false)] = nil
    }

    /// Feeds one ACL packet's data. Calls `deliver` with each complete L2CAP PDU (header included);
    /// returns a problem when the fragment could not be used as-is.
    @discardableResult
    public mutating func push(_ key: Key, isStart: Bool, data: ByteReader, frame: Int,
                              deliver: (inout ByteReader, Origin) -> Void) -> Problem? {
        var problem: Problem? = nil
        if isStart {
            if !pending.isEmpty, let old = pending.removeValue(forKey: key) {
                problem = .incompletePDU(firstFrame: old.firstFrame, have: old.data.count, expected: old.expected)
            }
            guard data.remaining >= 4 else { return problem ?? .shortStart(data.remaining) }
            let length = Int(data.bytes[data.position]) | Int(data.bytes[data.position + 1]) << 8   // safe: remaining >= 4
            let expected = 4 + length
            if data.remaining >= expected {
                var view = data
                if data.remaining > expected, let s = try? view.slice(expected, "L2CAP PDU") {
                    var s = s
                    deliver(&s, Origin(firstFrame: frame, fragments: 1))
                    return problem ?? .overrun(expected: expected, got: data.remaining)
                }
                deliver(&view, Origin(firstFrame: frame, fragments: 1))
                return problem
            }
            // Reserve only what is present: a claimed length is not believed until the bytes arrive
            // (a hostile capture could otherwise reserve 64 KiB per link it opens).
            let buffer = Array(data.remainingBytes)
            pending[key] = Pending(expected: expected, data: buffer, firstFrame: frame, fragments: 1)
            return problem
        }
        // Moved out of the dictionary so the append is in place (a copy per fragment is quadratic).
        guard var p = pending.removeValue(forKey: key) else { return .orphanContinuation }
        p.data.append(contentsOf: data.remainingBytes)
        p.fragments += 1
        if p.data.count < p.expected {
            pending[key] = p
            return nil
        }
        let origin = Origin(firstFrame: p.firstFrame, fragments: p.fragments)
        let overrun = p.data.count > p.expected ? Problem.overrun(expected: p.expected, got: p.data.count) : nil
        p.data.withUnsafeBytes { raw in
            var r = ByteReader(UnsafeRawBufferPointer(rebasing: raw[0 ..< p.expected]), base: data.base - p.data.count + data.remaining)
            deliver(&r, origin)
        }
        return overrun
    }
}
