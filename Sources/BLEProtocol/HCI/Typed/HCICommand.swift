import BLEBytes

/// Typed HCI commands for the analysis pass (the ones the session model tracks). Fast path; display
/// decoding is table-driven (`HCIDecoder`).
public enum HCICommand: Sendable {
    /// LE Create Connection / LE Extended Create Connection (v1, v2): the peer being connected to.
    /// `peerAddress` is nil when the filter accept list is used.
    case createConnection(peerAddressType: LEAddressType?, peerAddress: BDAddr?, isLE: Bool)
    case createConnectionCancel(isLE: Bool)
    case disconnect(handle: UInt16, reason: HCIStatus)
    /// Legacy or extended advertising enable/disable.
    case setAdvertisingEnable(enabled: Bool)
    /// LE Set (Extended) Scan Enable (Core v5.4 Vol 4 Part E 7.8.11 / 7.8.65): the first parameter is Enable.
    case setScanEnable(enabled: Bool)
    /// LE Set Advertising Data / Scan Response Data (legacy): the declared length and the data.
    case setAdvertisingData(scanResponse: Bool, declaredLength: UInt8, data: ByteRange)
    /// LE Enable Encryption (Core v5.4 Vol 4 Part E 7.8.24). `key`: Random_Number (8 bytes),
    /// Encrypted_Diversifier and Long_Term_Key (16 bytes, little-endian as sent) as ranges of the
    /// packet; nil when the command is cut short after the handle.
    case enableEncryption(handle: UInt16, key: EncryptionKey?)
    /// LE Long Term Key Request Reply (Core v5.4 Vol 4 Part E 7.8.25): the key a host in the
    /// peripheral role gives its controller (16 bytes as sent; nil when the command is cut short).
    case longTermKeyReply(handle: UInt16, key: ByteRange?)
    /// LE Connection Update (Core v5.4 Vol 4 Part E 7.8.18): the handle whose parameters the host asks to change.
    case connectionUpdate(handle: UInt16)
    /// Secure Simple Pairing: the host's answer to User Confirmation / User Passkey Request (7.1.30–7.1.33).
    case pairingAnswer(address: BDAddr, accepted: Bool)
    /// IO Capability Request Reply (7.1.29): the host's IO capability and authentication requirements.
    case ioCapabilityReply(address: BDAddr, capabilities: SSPCapabilities)
    /// Link Key Request Reply / Negative Reply (7.1.10, 7.1.11): the host has a stored key for the peer or not.
    case linkKeyAnswer(address: BDAddr, found: Bool)
    /// Read Encryption Key Size (7.5.7): the handle whose key size the host asks.
    case readEncryptionKeySize(handle: UInt16)
    /// Inquiry or Periodic Inquiry Mode (Core v5.4 Vol 4 Part E 7.1.1, 7.1.3): Inquiry_Length in 1.28 s units.
    case inquiry(lengthUnits: UInt8, periodic: Bool)
    /// Inquiry Cancel / Exit Periodic Inquiry Mode (7.1.2, 7.1.4).
    case inquiryCancel
    case reset
    /// Write Secure Connections Host Support (7.3.92): the host says it supports BR/EDR Secure Connections.
    case secureConnectionsHostSupport(enabled: Bool)
    case other(HCIOpcode)

    /// Decodes an HCI command packet (header included).
    public static func decode(_ r: inout ByteReader) throws(DecodeError) -> HCICommand {
        let opcode = HCIOpcode(rawValue: try r.u16le("Opcode"))
        let plen = Int(try r.u8("Parameter Total Length"))
        var p = try r.slice(min(plen, r.remaining), "Parameters")
        switch opcode {
        case .leCreateConnection:
            try p.skip(5, "Scan Interval, Window, Filter Policy")
            let filter = p.bytes[p.position - 1]   // safe: 5 bytes were just skipped
            let type = LEAddressType(rawValue: try p.u8("Peer Address Type"))
            let address = try p.address("Peer Address")
            return filter == 0 ? .createConnection(peerAddressType: type, peerAddress: address, isLE: true)
                               : .createConnection(peerAddressType: nil, peerAddress: nil, isLE: true)
        case .leExtendedCreateConnection, .leExtendedCreateConnectionV2:
            if opcode == .leExtendedCreateConnectionV2 { try p.skip(2, "Advertising and Sync Handles") }
            let filter = try p.u8("Initiator Filter Policy")
            try p.skip(1, "Own Address Type")
            let type = LEAddressType(rawValue: try p.u8("Peer Address Type"))
            let address = try p.address("Peer Address")
            return filter == 0 ? .createConnection(peerAddressType: type, peerAddress: address, isLE: true)
                               : .createConnection(peerAddressType: nil, peerAddress: nil, isLE: true)
        case .createConnection:
            return .createConnection(peerAddressType: nil, peerAddress: try p.address("Address"), isLE: false)
        case .leCreateConnectionCancel:
            return .createConnectionCancel(isLE: true)
        case .createConnectionCancel:
            return .createConnectionCancel(isLE: false)
        case .disconnect:
            return .disconnect(handle: try p.u16le("Handle") & 0x0FFF, reason: HCIStatus(rawValue: try p.u8("Reason")))
        case .leSetAdvertisingEnable:
            return .setAdvertisingEnable(enabled: try p.u8("Advertising Enable") != 0)
        case .leSetExtendedAdvertisingEnable:
            return .setAdvertisingEnable(enabled: try p.u8("Enable") != 0)
        case .leSetScanEnable, .leSetExtendedScanEnable:
            return .setScanEnable(enabled: try p.u8("Enable") != 0)
        case .leSetAdvertisingData, .leSetScanResponseData:
            let length = try p.u8("Data Length")
            let data = p.rest()
            return .setAdvertisingData(scanResponse: opcode == .leSetScanResponseData, declaredLength: length,
                                       data: ByteRange(offset: data.base, count: min(Int(length), data.remaining)))
        case .leEnableEncryption:
            let handle = try p.u16le("Handle") & 0x0FFF
            return .enableEncryption(handle: handle, key: try? EncryptionKey.decode(&p))
        case .leLongTermKeyRequestReply:
            let handle = try p.u16le("Connection_Handle") & 0x0FFF
            let key = try? p.slice(16, "Long_Term_Key")
            return .longTermKeyReply(handle: handle, key: key.map { ByteRange(offset: $0.base, count: 16) })
        case .leConnectionUpdate:
            return .connectionUpdate(handle: try p.u16le("Handle") & 0x0FFF)
        case .userConfirmationRequestReply, .userConfirmationRequestNegativeReply, .userPasskeyRequestReply, .userPasskeyRequestNegativeReply:
            return .pairingAnswer(address: try p.address("Address"),
                                  accepted: opcode == .userConfirmationRequestReply || opcode == .userPasskeyRequestReply)
        case .ioCapabilityRequestReply:
            let address = try p.address("BD_ADDR")
            let io = SMP.IOCapability(rawValue: try p.u8("IO_Capability"))
            try p.skip(1, "OOB_Data_Present")
            return .ioCapabilityReply(address: address, capabilities: SSPCapabilities(io: io, authReq: try p.u8("Authentication_Requirements")))
        case .linkKeyRequestReply, .linkKeyRequestNegativeReply:
            return .linkKeyAnswer(address: try p.address("BD_ADDR"), found: opcode == .linkKeyRequestReply)
        case .readEncryptionKeySize:
            return .readEncryptionKeySize(handle: try p.u16le("Connection_Handle") & 0x0FFF)
        case .inquiry:
            try p.skip(3, "LAP")
            return .inquiry(lengthUnits: try p.u8("Inquiry_Length"), periodic: false)
        case .periodicInquiryMode:
            try p.skip(7, "Max_Period_Length, Min_Period_Length, LAP")
            return .inquiry(lengthUnits: try p.u8("Inquiry_Length"), periodic: true)
        case .inquiryCancel, .exitPeriodicInquiryMode:
            return .inquiryCancel
        case .reset:
            return .reset
        case .writeSecureConnectionsHostSupport:
            return .secureConnectionsHostSupport(enabled: try p.u8("Secure_Connections_Host_Support") != 0)
        default:
            return .other(opcode)
        }
    }
}

/// The key parameters of LE Enable Encryption (Core v5.4 Vol 4 Part E 7.8.24), after the handle.
public struct EncryptionKey: Sendable, Equatable {
    public var random: ByteRange
    public var ediv: UInt16
    public var longTermKey: ByteRange

    static func decode(_ p: inout ByteReader) throws(DecodeError) -> EncryptionKey {
        let random = try p.slice(8, "Random_Number")
        let ediv = try p.u16le("Encrypted_Diversifier")
        let key = try p.slice(16, "Long_Term_Key")
        return EncryptionKey(random: ByteRange(offset: random.base, count: 8), ediv: ediv,
                             longTermKey: ByteRange(offset: key.base, count: 16))
    }
}

/// Buffer sizes from (LE) Read Buffer Size return parameters (Core v5.4 Vol 4 Part E 7.4.5, 7.8.2, 7.8.2 v2).
public struct BufferSize: Sendable, Equatable {
    public var aclLength: UInt16
    public var aclPackets: UInt16

    /// Decodes from a Command Complete's return parameters (after the status byte).
    public static func decode(_ opcode: HCIOpcode, _ r: inout ByteReader) throws(DecodeError) -> BufferSize? {
        switch opcode {
        case .readBufferSize:
            let len = try r.u16le("ACL Data Packet Length")
            try r.skip(1, "SCO Data Packet Length")
            return BufferSize(aclLength: len, aclPackets: try r.u16le("Total Num ACL Data Packets"))
        case .leReadBufferSize, .leReadBufferSizeV2:
            let len = try r.u16le("LE ACL Data Packet Length")
            return BufferSize(aclLength: len, aclPackets: UInt16(try r.u8("Total Num LE ACL Data Packets")))
        default:
            return nil
        }
    }
}
