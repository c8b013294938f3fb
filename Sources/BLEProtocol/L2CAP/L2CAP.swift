import BLEBytes

/// The Logical Link Control and Adaptation Protocol, Core v5.4 Vol 3 Part A: typed decoding of
/// complete (reassembled) L2CAP PDUs for the analysis engine.
public enum L2CAP {
    /// Largest L2CAP PDU payload the 16-bit Length field can declare, Core v5.4 Vol 3 Part A 3.
    public static let maxPDU = 65_535
    /// Bytes of the basic header (Length, Channel ID), Core v5.4 Vol 3 Part A 3.1.
    public static let basicHeaderLength = 4
    /// PSM of ATT over BR/EDR (Assigned Numbers 2.2, Core v5.4 Vol 3 Part F 3.2.11).
    public static let psmATT: UInt16 = 0x001F
    /// SPSM of Enhanced ATT bearers (credit-based channels, Core v5.4 Vol 3 Part G 5.4).
    public static let spsmEATT: UInt16 = 0x0027

    /// A channel identifier, Core v5.4 Vol 3 Part A 2.1 (Tables 2.1, 2.2). Open.
    public struct ChannelID: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        public let rawValue: UInt16
        @inlinable public init(rawValue: UInt16) { self.rawValue = rawValue }
        @inlinable public init(_ rawValue: UInt16) { self.rawValue = rawValue }

        /// BR/EDR signalling channel.
        public static let signaling = ChannelID(0x0001)
        /// BR/EDR connectionless channel.
        public static let connectionless = ChannelID(0x0002)
        public static let ampManager = ChannelID(0x0003)
        /// Attribute Protocol.
        public static let att = ChannelID(0x0004)
        /// LE signalling channel.
        public static let leSignaling = ChannelID(0x0005)
        /// Security Manager Protocol on LE.
        public static let smp = ChannelID(0x0006)
        /// Security Manager Protocol on BR/EDR.
        public static let brEdrSMP = ChannelID(0x0007)

        /// LE dynamically allocated CIDs: 0x0040–0x007F (Core v5.4 Vol 3 Part A 2.1, Table 2.3).
        @inlinable public var isLEDynamic: Bool { (0x0040...0x007F).contains(rawValue) }
        /// 0x0040 and above: dynamically allocated on BR/EDR (and LE, within 0x007F).
        @inlinable public var isDynamic: Bool { rawValue >= 0x0040 }

        public static let names = NameTable([
            (0x0001, "L2CAP Signaling"), (0x0002, "Connectionless"), (0x0003, "AMP Manager"), (0x0004, "ATT"),
            (0x0005, "LE L2CAP Signaling"), (0x0006, "SMP"), (0x0007, "BR/EDR SMP"),
        ], fallback: { $0 >= 0x0040 ? "Dynamic" : nil })

        /// `ATT`, `Dynamic`, or `Reserved`.
        public var name: String { Self.names.name(UInt64(rawValue)) ?? "Reserved" }
        /// `ATT (0x0004)`.
        public var description: String { "\(name) (0x\(Hex.pad(rawValue, 4)))" }
    }

    /// The basic L2CAP header, Core v5.4 Vol 3 Part A 3.1: Length of the information payload, then CID.
    public struct BasicHeader: Hashable, Sendable {
        public var length: UInt16
        public var channel: ChannelID
        @inlinable public init(length: UInt16, channel: ChannelID) { (self.length, self.channel) = (length, channel) }

        /// Reads the 4-byte header.
        /// - Throws: `.truncated` when fewer than 4 bytes remain.
        @inlinable
        public static func read(_ r: inout ByteReader) throws(DecodeError) -> BasicHeader {
            BasicHeader(length: try r.u16le("Length"), channel: ChannelID(try r.u16le("Channel ID")))
        }

        /// The Channel ID of a PDU that starts with this header, read without moving the reader
        /// (0, the null identifier, when the PDU is too short to hold one).
        @inlinable
        public static func channel(of pdu: ByteReader) -> UInt16 {
            UInt16(pdu.peekU8(at: 2) ?? 0) | UInt16(pdu.peekU8(at: 3) ?? 0) << 8
        }
    }

    /// A decoded L2CAP PDU by channel.
    public enum PDU: Sendable, Hashable {
        /// CID 0x0004.
        case att(ATT.PDU)
        /// CID 0x0006.
        case smp(SMP.Command)
        /// CID 0x0007.
        case brEdrSMP(SMP.Command)
        /// CID 0x0005: one command per C-frame on LE.
        case leSignaling(SignalingPacket)
        /// CID 0x0001: one or more commands; iterate with `L2CAP.decodeSignaling` over the range.
        case signaling(commands: ByteRange)
        /// Any other channel (dynamic channels: K-frames, reassembled later by the session).
        case channel(ChannelID, payload: ByteRange)
    }

    /// Decodes a complete L2CAP PDU from its basic header.
    ///
    /// On return, `r.remaining` counts bytes after the declared Length (a warning). Trailing bytes
    /// inside the payload of a fixed-size ATT/SMP PDU are ignored here; `ATTDisplay` notes them.
    /// - Throws: `.lengthMismatch` when the header declares more bytes than `r` holds, or the
    ///   channel's decoder error.
    public static func decode(_ r: inout ByteReader) throws(DecodeError) -> PDU {
        let header = try BasicHeader.read(&r)
        let declared = Int(header.length)
        guard declared <= r.remaining else {
            throw DecodeError(kind: .lengthMismatch(declared: declared, actual: r.remaining), offset: r.absoluteOffset &- 4, field: "Length")   // safe: header just read
        }
        var payload = try r.slice(declared, "Information Payload")
        switch header.channel {
        case .att: return .att(try ATT.decode(&payload))
        case .smp: return .smp(try SMP.decode(&payload))
        case .brEdrSMP: return .brEdrSMP(try SMP.decode(&payload))
        case .leSignaling: return .leSignaling(try decodeSignaling(&payload))
        case .signaling: return .signaling(commands: payload.takeRest())
        default: return .channel(header.channel, payload: payload.takeRest())
        }
    }

    /// One K-frame of an LE credit-based channel, Core v5.4 Vol 3 Part A 3.4.
    public struct KFrame: Hashable, Sendable {
        /// L2CAP SDU Length: present in the first K-frame of an SDU only.
        public var sduLength: UInt16?
        /// The information payload (part of the SDU).
        public var payload: ByteRange
        @inlinable public init(sduLength: UInt16?, payload: ByteRange) { (self.sduLength, self.payload) = (sduLength, payload) }
    }

    /// Decodes a K-frame payload (after the basic header). Whether it starts an SDU is channel
    /// state the session keeps (the previous SDU is complete).
    /// - Throws: `.truncated` when a first K-frame has no room for the SDU Length.
    public static func decodeKFrame(_ r: inout ByteReader, isFirstKFrame: Bool) throws(DecodeError) -> KFrame {
        let sduLength: UInt16? = isFirstKFrame ? try r.u16le("L2CAP SDU Length") : nil
        return KFrame(sduLength: sduLength, payload: r.takeRest())
    }
}
