import BLEBytes

/// The header facts of an HCI packet (no H4 indicator), read without decoding the rest: what
/// replay, redaction, filters and the HTML ask of a packet before (or instead of) a full decode.
/// Every offset here is the spec's; code outside BLEProtocol asks these instead of indexing bytes.
/// Each returns nil when the packet is too short to hold the fact.
public enum HCIPacketHeader {
    /// Bytes of a command's header (Opcode, Parameter_Total_Length), 5.4.1.
    public static let commandHeaderSize = 3
    /// Bytes of an event's header (Event_Code, Parameter_Total_Length), 5.4.4.
    public static let eventHeaderSize = 2
    /// Bytes of a synchronous (SCO) data packet's header, 5.4.3.
    public static let scoHeaderSize = 3
    /// Bytes of an ISO data packet's header (before the optional time stamp), 5.4.5.
    public static let isoHeaderSize = 4
    /// Where an LE Meta event's parameters start, after the header and the subevent code (7.7.65).
    public static let leMetaParametersStart = eventHeaderSize + 1
    /// Where a Command Complete's return parameters start after the status (header, Num_HCI_Command_Packets,
    /// Command_Opcode, then the status every command except NOP returns first; 7.7.14).
    public static let commandCompleteReturnParametersStart = eventHeaderSize + 4

    // MARK: Commands (Core v5.4 Vol 4 Part E 5.4.1: Opcode u16, Parameter_Total_Length u8)

    /// A command's opcode.
    @inlinable public static func commandOpcode(_ r: ByteReader) -> HCIOpcode? { r.getU16le(at: 0).map(HCIOpcode.init(rawValue:)) }

    /// A command's parameters (after the 3-byte header; as many as the packet holds).
    @inlinable public static func commandParameters(_ r: ByteReader) -> ByteReader? {
        guard r.bytes.count >= commandHeaderSize else { return nil }
        return r.getSlice(at: commandHeaderSize, count: r.bytes.count &- commandHeaderSize)   // safe: count >= header
    }

    // MARK: Events (5.4.4: Event_Code u8, Parameter_Total_Length u8)

    /// An event's code.
    @inlinable public static func eventCode(_ r: ByteReader) -> UInt8? { r.getU8(at: 0) }

    /// The subevent code of an LE Meta event (7.7.65: the first parameter); nil for other events.
    @inlinable public static func leSubevent(_ r: ByteReader) -> UInt8? {
        r.getU8(at: 0) == HCIEventCode.leMeta ? r.getU8(at: 2) : nil
    }

    /// The opcode a Command Complete (7.7.14: Num_HCI_Command_Packets, Command_Opcode) or Command
    /// Status (7.7.15: Status, Num_HCI_Command_Packets, Command_Opcode) answers; nil for other events.
    @inlinable public static func answeredOpcode(_ r: ByteReader) -> UInt16? {
        switch r.getU8(at: 0) {
        case HCIEventCode.commandComplete?: r.getU16le(at: 3)
        case HCIEventCode.commandStatus?: r.getU16le(at: 4)
        default: nil
        }
    }

    /// The Status a Command Status carries (its first parameter, 7.7.15) or a Command Complete (its
    /// first return parameter, after Num_HCI_Command_Packets and Command_Opcode, 7.7.14; every
    /// command's but NOP's); nil for other events or when the packet stops before it.
    @inlinable public static func answeredStatus(_ r: ByteReader) -> UInt8? {
        switch r.getU8(at: 0) {
        case HCIEventCode.commandComplete?: r.getU8(at: commandCompleteReturnParametersStart &- 1)   // safe: constant
        case HCIEventCode.commandStatus?: r.getU8(at: eventHeaderSize)
        default: nil
        }
    }

    // MARK: ACL data (5.4.2: Handle and flags u16, Data_Total_Length u16)

    /// The ACL data packet's header.
    @inlinable public static func acl(_ r: ByteReader) -> ACLHeader? {
        guard let word = r.getU16le(at: 0), let length = r.getU16le(at: 2) else { return nil }
        return ACLHeader(word: word, length: length)
    }

    /// The connection handle of an ACL data packet (12 bits of its first word); nil under 2 bytes.
    @inlinable public static func aclHandle(_ r: ByteReader) -> UInt16? { r.getU16le(at: 0).map { $0 & 0x0FFF } }

    // MARK: Any packet type

    /// Header plus parameters (or data) length of a packet of `type` whose header `r` starts with;
    /// nil until the header is in. Command and SCO (5.4.1, 5.4.3): 3 + a u8 length; event: 2 + a u8;
    /// ACL: 4 + a u16; ISO (5.4.5): 4 + the low 14 bits of a u16.
    @inlinable public static func packetLength(_ type: HCIPacketType, _ r: ByteReader) -> Int? {
        switch type {
        case .command, .sco: r.getU8(at: 2).map { 3 + Int($0) }
        case .event: r.getU8(at: 1).map { 2 + Int($0) }
        case .acl: r.getU16le(at: 2).map { 4 + Int($0) }
        case .iso: r.getU16le(at: 2).map { 4 + Int($0 & 0x3FFF) }
        }
    }
}

extension L2CAP {
    /// The ATT opcode of `pdu` (an L2CAP PDU, basic header first, at the reader's cursor) when it is
    /// on the fixed ATT channel (CID 0x0004, Core v5.4 Vol 3 Part A 2.1): the first byte of its
    /// information payload. Nil on another channel or when the PDU stops before the opcode.
    @inlinable
    public static func attOpcode(_ pdu: ByteReader) -> ATTOpcode? {
        guard BasicHeader.peek(pdu)?.channel == .att, let code = pdu.peekU8(at: basicHeaderLength) else { return nil }
        return ATTOpcode(code)
    }
}

extension L2CAP.BasicHeader {
    /// The header at the start of `pdu`, read without moving the reader; nil under 4 bytes.
    @inlinable
    public static func peek(_ pdu: ByteReader) -> L2CAP.BasicHeader? {
        guard let length = pdu.peekU16le(at: 0), let channel = pdu.peekU16le(at: 2) else { return nil }
        return L2CAP.BasicHeader(length: length, channel: L2CAP.ChannelID(channel))
    }
}
