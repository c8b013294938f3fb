import BLEProtocol

/// Splits an H4 byte stream into packets (Core v5.4 Vol 4 Part A 2): an indicator byte, then
/// the HCI packet whose header says how long it is.
///
/// | type | header | length field |
/// |---|---|---|
/// | command 0x01 | 3 | 1 byte at offset 2 (Vol 4 Part E 5.4.1) |
/// | ACL 0x02 | 4 | 2 bytes at offset 2 (5.4.2) |
/// | SCO 0x03 | 3 | 1 byte at offset 2 (5.4.3) |
/// | event 0x04 | 2 | 1 byte at offset 1 (5.4.4) |
/// | ISO 0x05 | 4 | 14 bits at offset 2 (5.4.5) |
///
/// Three outcomes per call, like swift-nio's decoders: a packet, nil (need more bytes), or a
/// recorded `Problem` when bytes had to be skipped. An indicator the peer may not send (a command
/// from a controller) or an unknown one is garbage: it is skipped byte by byte until a valid
/// indicator, and the skipped run is reported once. Memory is bounded by `maxPacket`.
public struct H4Parser: Sendable {
    /// Largest H4 packet: an ACL header and 65535 bytes of data (Vol 4 Part E 5.4.2).
    public static let maxPacket = 1 + 4 + 65_535
    /// At most this many problems are kept (the count goes on).
    public static let maxProblems = 16

    /// A run of bytes that was not an H4 packet.
    public struct Problem: Sendable, Equatable, CustomStringConvertible {
        /// Offset of the first skipped byte in the stream.
        public var offset: Int
        public var count: Int
        public var firstByte: UInt8
        public var description: String {
            "skipped \(count) byte\(count == 1 ? "" : "s") that are not H4 framing at stream offset \(offset) (first 0x\(String(firstByte, radix: 16)))"
        }
    }

    /// Packet types this side of the link may receive.
    public let accepted: Set<HCIPacketType>
    private var buffer: [UInt8] = []
    private var start = 0
    /// Stream offset of `buffer[0]`.
    private var base = 0
    private var finished: [Problem] = []
    /// Runs of skipped bytes, the one still being skipped included.
    public var problems: [Problem] { finished + (skipping.map { [$0] } ?? []) }
    public private(set) var skippedBytes = 0
    private var skipping: Problem?

    /// - Parameter accepted: what the peer may send: `.fromController` or `.fromHost`.
    public init(accepting accepted: Set<HCIPacketType>) { self.accepted = accepted }

    public static let fromController: Set<HCIPacketType> = [.event, .acl, .sco, .iso]
    public static let fromHost: Set<HCIPacketType> = [.command, .acl, .sco, .iso]

    /// Bytes buffered but not yet returned as a packet.
    public var pendingBytes: Int { buffer.count &- start }   // safe: start <= count

    public mutating func feed(_ bytes: UnsafeRawBufferPointer) {
        if start > 0, start >= buffer.count / 2 {
            buffer.removeFirst(start)
            base &+= start   // safe: stream offsets fit in Int
            start = 0
        }
        buffer.append(contentsOf: bytes)
    }

    public mutating func feed(_ bytes: [UInt8]) { bytes.withUnsafeBytes { feed($0) } }

    /// The next complete packet, or nil when more bytes are needed.
    public mutating func next() -> H4Packet? {
        while start < buffer.count {
            guard let type = HCIPacketType(rawValue: buffer[start]), accepted.contains(type) else {
                skip()
                continue
            }
            guard let total = Self.packetLength(type, buffer, at: start &+ 1) else { return nil }   // safe: start < count
            guard total &+ 1 <= buffer.count &- start else { return nil }   // safe: bounded lengths
            endSkipping()
            let body = Array(buffer[(start &+ 1) ..< (start &+ 1 &+ total)])   // safe: checked above
            start &+= 1 &+ total   // safe: the packet lies within the buffer
            return H4Packet(type, body)
        }
        return nil
    }

    /// Header + parameters length of the packet whose header starts at `at`; nil until the header is in.
    static func packetLength(_ type: HCIPacketType, _ b: [UInt8], at i: Int) -> Int? {
        b.withReader { r in r.getSlice(at: i, count: b.count &- i).flatMap { HCIPacketHeader.packetLength(type, $0) } }   // safe: i <= count
    }

    private mutating func skip() {
        // safe (all three): stream offsets and counts fit in Int; start < buffer.count here
        if skipping == nil { skipping = Problem(offset: base &+ start, count: 0, firstByte: buffer[start]) }
        skipping?.count += 1
        skippedBytes &+= 1
        start &+= 1
    }

    private mutating func endSkipping() {
        guard let problem = skipping else { return }
        skipping = nil
        if finished.count < Self.maxProblems { finished.append(problem) }
    }
}
