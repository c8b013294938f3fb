import BLEBytes

/// BR/EDR security as HCI shows it: Secure Simple Pairing's IO capabilities and association model
/// (Core v5.4 Vol 3 Part C 5.2.2.6), the link key type (Vol 4 Part E 7.7.24) and the cipher of
/// Encryption Change (7.7.8).
public struct SSPCapabilities: Sendable, Equatable {
    /// IO_Capability (0 DisplayOnly, 1 DisplayYesNo, 2 KeyboardOnly, 3 NoInputNoOutput), the values of
    /// SMP's (Vol 3 Part H 3.5.1) for these four.
    public var io: SMP.IOCapability
    /// Authentication_Requirements: bit 0 MITM protection required; 0x02/0x03 dedicated bonding,
    /// 0x04/0x05 general bonding (Vol 4 Part E 7.1.29).
    public var authReq: UInt8
    public init(io: SMP.IOCapability, authReq: UInt8) { (self.io, self.authReq) = (io, authReq) }

    public var mitm: Bool { authReq & 0x01 != 0 }
    public var bonding: Bool { authReq >= 0x02 }

    /// The association model two sides' capabilities select (Vol 3 Part C 5.2.2.6, Table 5.7): Just
    /// Works when neither side requires MITM protection (numeric comparison confirmed automatically),
    /// else the IO capability matrix, which for these four capabilities is LE Secure Connections'
    /// (Vol 3 Part H Table 2.8). Out of band is told by Remote OOB Data Request, not here.
    public static func method(_ a: SSPCapabilities, _ b: SSPCapabilities) -> SMP.PairingMethod {
        guard a.mitm || b.mitm else { return .justWorks }
        return SMP.PairingMethod.matrix(initiator: a.io, responder: b.io, secureConnections: true)
    }
}

/// Key_Type of Link Key Notification (Core v5.4 Vol 4 Part E 7.7.24).
public struct LinkKeyType: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// From Secure Simple Pairing with MITM protection (numeric comparison, passkey, OOB).
    public var isAuthenticated: Bool { rawValue == 0x05 || rawValue == 0x08 }
    /// From Secure Connections (P-256): the link may use AES-CCM; P-192 keys mean E0.
    public var isSecureConnections: Bool { rawValue == 0x07 || rawValue == 0x08 }
    /// Legacy PIN pairing (combination, unit and debug keys), before Secure Simple Pairing.
    public var isLegacy: Bool { rawValue <= 0x03 }

    public var description: String {
        switch rawValue {
        case 0x00: "combination key (legacy PIN pairing)"
        case 0x01, 0x02: "unit key (legacy)"
        case 0x03: "debug combination key"
        case 0x04: "unauthenticated P-192"
        case 0x05: "authenticated P-192"
        case 0x06: "changed combination key"
        case 0x07: "unauthenticated P-256"
        case 0x08: "authenticated P-256"
        default: "key type 0x\(String(rawValue, radix: 16, uppercase: true))"
        }
    }
}

/// The cipher an Encryption Change turned on (Encryption_Enabled, Core v5.4 Vol 4 Part E 7.7.8):
/// 0x01 is E0 on a BR/EDR link and AES-CCM on LE; 0x02 is AES-CCM on BR/EDR (Secure Connections).
public enum LinkCipher: String, Sendable, Equatable {
    case e0 = "E0"
    case aesCCM = "AES-CCM"

    public static func of(encryptionEnabled v: UInt8, isLE: Bool) -> LinkCipher? {
        switch v {
        case 0x00: nil
        case 0x01: isLE ? .aesCCM : .e0
        default: .aesCCM
        }
    }
}

/// Read Encryption Key Size's return parameters (Core v5.4 Vol 4 Part E 7.5.7), after the status.
public struct EncryptionKeySize: Sendable, Equatable {
    public var handle: UInt16
    public var size: UInt8

    public static func decode(_ opcode: HCIOpcode, _ r: inout ByteReader) throws(DecodeError) -> EncryptionKeySize? {
        guard opcode == .readEncryptionKeySize else { return nil }
        let handle = try r.u16le("Connection_Handle") & 0x0FFF
        return EncryptionKeySize(handle: handle, size: try r.u8("Key_Size"))
    }
}

/// Read Local Extended Features' return parameters (Core v5.4 Vol 4 Part E 7.4.4), after the status: one
/// page of the local controller's LMP features (`LMPFeatures` reads the Secure Connections bits).
public struct LocalExtendedFeatures: Sendable, Equatable {
    public var page: UInt8
    public var features: UInt64

    public static func decode(_ opcode: HCIOpcode, _ r: inout ByteReader) throws(DecodeError) -> LocalExtendedFeatures? {
        guard opcode == .readLocalExtendedFeatures else { return nil }
        let page = try r.u8("Page_Number")
        try r.skip(1, "Maximum_Page_Number")
        return LocalExtendedFeatures(page: page, features: try r.u64le("Extended_LMP_Features"))
    }
}
