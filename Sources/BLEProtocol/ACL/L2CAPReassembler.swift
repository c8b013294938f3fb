import BLEBytes

/// Reassembles L2CAP PDUs from ACL fragments (Core v5.4 Vol 4 Part E 5.4.2, Vol 3 Part A 7.2),
/// keyed by (adapter, connection handle, direction) so interleaved links never mix.
///
/// A PDU that arrives whole in one ACL packet (the common case) is delivered as a view into the
/// frame: no copy. Only PDUs split over several packets are buffered, bounded by the largest
/// L2CAP PDU. A start fragment that arrives while a PDU is incomplete delivers the partial PDU as a
/// problem and starts anew; a continuation with no start is reported and dropped.
///
/// Each delivered PDU comes with a `FragmentMap` (in its `Origin`): which file bytes each part of
/// the PDU came from, so an error inside a fragmented PDU can name the byte's file offset.
public struct L2CAPReassembler {
    /// Largest L2CAP basic frame: 4-byte header + 65535 bytes of information payload (Vol 3 Part A 3.1).
    public static let maxPDU = 4 + 65_535

    public struct Key: Hashable, Sendable {
        public var adapter: UInt16
        public var handle: UInt16
        public var received: Bool
        public init(adapter: UInt16, handle: UInt16, received: Bool) { (self.adapter, self.handle, self.received) = (adapter, handle, received) }
    }

    /// Where a delivered PDU came from. Valid inside the delivery only (its `map` reads the
    /// reassembler's segment list in place).
    public struct Origin {
        /// Frame number of the start fragment.
        public var firstFrame: Int
        /// Number of ACL fragments it was carried in.
        public var fragments: Int
        /// Where the PDU's bytes lie in the file (reader offset → file offset), fragment by fragment.
        public var map: FragmentMap
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
        /// One per fragment that carried bytes (the `FragmentMap` of the PDU).
        var segments: [FragmentMap.Segment]
    }

    /// The PDU in progress on the link fragmented last, kept out of the dictionary: fragments of
    /// one PDU nearly always follow each other, so most continuations touch no hash table, and its
    /// buffer is reused for the next PDU.
    private var hotKey: Key?
    private var hot = Pending(expected: 0, data: [], firstFrame: 0, fragments: 0, segments: [])
    /// PDUs in progress on other links.
    private var pending: [Key: Pending] = [:]

    public init() {}

    /// PDUs still incomplete (for the end-of-capture report).
    public var incompleteCount: Int { pending.count + (hotKey == nil ? 0 : 1) }

    /// How far a PDU still incomplete has come.
    public struct Progress: Sendable, Equatable {
        /// Frame number of the start fragment.
        public var firstFrame: Int
        /// Bytes received so far, L2CAP header included.
        public var have: Int
        /// Bytes the L2CAP header announced, header included.
        public var expected: Int
    }

    /// The PDU in progress on `key`, if any (a sniffer's analysis tells from it what was lost).
    public func inProgress(_ key: Key) -> Progress? {
        let p = hotKey == key ? hot : pending.isEmpty ? nil : pending[key]
        return p.map { Progress(firstFrame: $0.firstFrame, have: $0.data.count, expected: $0.expected) }
    }

    /// Forgets a link's partial PDUs (on disconnect).
    public mutating func reset(adapter: UInt16, handle: UInt16) {
        for received in [true, false] {
            let key = Key(adapter: adapter, handle: handle, received: received)
            if hotKey == key { hotKey = nil }
            pending[key] = nil
        }
    }

    /// Takes `key`'s PDU in progress out of the store, if any.
    private mutating func take(_ key: Key) -> Pending? {
        if hotKey == key {
            hotKey = nil
            return hot
        }
        return pending.isEmpty ? nil : pending.removeValue(forKey: key)
    }

    /// Makes `key` the hot link, moving the previous hot PDU to the dictionary.
    private mutating func makeHot(_ key: Key, _ p: Pending) {
        if let old = hotKey, old != key { pending[old] = hot }
        hotKey = key
        hot = p
    }

    /// Feeds one ACL packet's data. Calls `deliver` with each complete L2CAP PDU (header included);
    /// returns a problem when the fragment could not be used as-is.
    @discardableResult
    public mutating func push(_ key: Key, isStart: Bool, data: ByteReader, frame: Int,
                              deliver: (inout ByteReader, Origin) -> Void) -> Problem? {
        var problem: Problem? = nil
        if isStart {
            if let old = take(key) {
                problem = .incompletePDU(firstFrame: old.firstFrame, have: old.data.count, expected: old.expected)
            }
            guard data.remaining >= 4 else { return problem ?? .shortStart(data.remaining) }
            let length = Int(data.bytes[data.position]) | Int(data.bytes[data.position + 1]) << 8   // safe: remaining >= 4
            let expected = 4 + length
            if data.remaining >= expected {
                var view = data
                let map = FragmentMap(single: .init(pduStart: 0, fileOffset: data.absoluteOffset, length: expected, frame: frame))
                if data.remaining > expected, let s = try? view.slice(expected, "L2CAP PDU") {
                    var s = s
                    deliver(&s, Origin(firstFrame: frame, fragments: 1, map: map))
                    return problem ?? .overrun(expected: expected, got: data.remaining)
                }
                deliver(&view, Origin(firstFrame: frame, fragments: 1, map: map))
                return problem
            }
            // Reserve only what is present: a claimed length is not believed until the bytes arrive
            // (a hostile capture could otherwise reserve 64 KiB per link it opens). The hot buffer
            // is reused when it is free.
            var buffer: [UInt8] = []
            var segments: [FragmentMap.Segment] = []
            if hotKey == nil {
                swap(&buffer, &hot.data); buffer.removeAll(keepingCapacity: true)
                swap(&segments, &hot.segments); segments.removeAll(keepingCapacity: true)
            }
            buffer.append(contentsOf: data.remainingBytes)
            segments.append(.init(pduStart: 0, fileOffset: data.absoluteOffset, length: data.remaining, frame: frame))
            makeHot(key, Pending(expected: expected, data: buffer, firstFrame: frame, fragments: 1, segments: segments))
            return problem
        }
        if hotKey != key {
            guard let p = take(key) else { return .orphanContinuation }
            makeHot(key, p)
        }
        // Appended in place (a copy per fragment would be quadratic).
        if data.remaining > 0 {
            hot.segments.append(.init(pduStart: hot.data.count, fileOffset: data.absoluteOffset, length: data.remaining, frame: frame))
        }
        hot.data.append(contentsOf: data.remainingBytes)
        hot.fragments += 1
        if hot.data.count < hot.expected { return nil }
        hotKey = nil   // complete: the buffers stay for the next PDU
        let expected = hot.expected, count = hot.data.count
        let overrun = count > expected ? Problem.overrun(expected: expected, got: count) : nil
        // The reader's offsets are those of a PDU ending where the last fragment ends (true file
        // offsets for the last fragment's bytes); the map gives the others.
        let base = data.absoluteOffset &+ data.remaining &- count   // safe: offsets fit in Int
        if count > expected { hot.segments[hot.segments.count - 1].length -= count - expected }   // safe: data.remaining > 0
        let (firstFrame, fragments) = (hot.firstFrame, hot.fragments)
        hot.segments.withUnsafeBufferPointer { segments in
            hot.data.withUnsafeBytes { raw in
                var r = ByteReader(UnsafeRawBufferPointer(rebasing: raw[0 ..< expected]), base: base)
                deliver(&r, Origin(firstFrame: firstFrame, fragments: fragments, map: FragmentMap(readerBase: base, segments: segments)))
            }
        }
        return overrun
    }
}
