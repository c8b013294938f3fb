import BLEBytes

/// An SMP command code, Core v5.4 Vol 3 Part H 3.3 (Table 3.1). Open: unknown codes are values.
public struct SMPCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt8
    @inlinable public init(rawValue: UInt8) { self.rawValue = rawValue }
    @inlinable public init(_ rawValue: UInt8) { self.rawValue = rawValue }

    public static let pairingRequest = SMPCode(0x01)
    public static let pairingResponse = SMPCode(0x02)
    public static let pairingConfirm = SMPCode(0x03)
    public static let pairingRandom = SMPCode(0x04)
    public static let pairingFailed = SMPCode(0x05)
    public static let encryptionInformation = SMPCode(0x06)
    public static let centralIdentification = SMPCode(0x07)
    public static let identityInformation = SMPCode(0x08)
    public static let identityAddressInformation = SMPCode(0x09)
    public static let signingInformation = SMPCode(0x0A)
    public static let securityRequest = SMPCode(0x0B)
    public static let pairingPublicKey = SMPCode(0x0C)
    public static let pairingDHKeyCheck = SMPCode(0x0D)
    public static let pairingKeypressNotification = SMPCode(0x0E)

    /// The key a key-distribution command carries (3.6.1): EncKey for Encryption Information and
    /// Central Identification, IdKey for Identity (Address) Information, SignKey for Signing
    /// Information; nil for every other code.
    public var distributedKey: SMP.KeyDistribution? {
        switch self {
        case .encryptionInformation, .centralIdentification: .encKey
        case .identityInformation, .identityAddressInformation: .idKey
        case .signingInformation: .signKey
        default: nil
        }
    }

    /// `Pairing Request`, or `Unknown`.
    public var name: String { SMPDecoding.index[rawValue]?.name.description ?? "Unknown" }
    /// `Pairing Request (0x01)`.
    public var description: String { "\(name) (0x\(Hex.pad(rawValue, 2)))" }
}

/// The Security Manager Protocol, Core v5.4 Vol 3 Part H: typed commands for the analysis.
/// Key material stays as `ByteRange`s into the capture; copy it only if you must keep it.
public enum SMP {
    /// Smallest and largest encryption key size allowed in a pairing request, Vol 3 Part H 3.5.1.
    public static let keySizeRange: ClosedRange<UInt8> = 7...16
    /// The SMP timer: a procedure with no command for 30 s has failed (Core v5.4 Vol 3 Part H 3.4), in µs.
    public static let timeout: Int64 = 30_000_000

    /// One SMP command, Core v5.4 Vol 3 Part H 3.5–3.6. Unknown codes are `.unknown`, not errors.
    public enum Command: Sendable, Hashable {
        /// 3.5.1.
        case pairingRequest(PairingParameters)
        /// 3.5.2.
        case pairingResponse(PairingParameters)
        /// 3.5.3: Mconfirm/Sconfirm, 16 bytes.
        case pairingConfirm(value: ByteRange)
        /// 3.5.4: Mrand/Srand, 16 bytes.
        case pairingRandom(value: ByteRange)
        /// 3.5.5.
        case pairingFailed(reason: SMPFailureReason)
        /// 3.5.6: X (32 bytes) and Y (32 bytes) of the P-256 public key.
        case pairingPublicKey(x: ByteRange, y: ByteRange)
        /// 3.5.7: Ea/Eb, 16 bytes.
        case pairingDHKeyCheck(value: ByteRange)
        /// 3.5.8.
        case pairingKeypressNotification(type: UInt8)
        /// 3.6.2: the Long Term Key, 16 bytes.
        case encryptionInformation(ltk: ByteRange)
        /// 3.6.3: EDIV and Rand identify the LTK.
        case centralIdentification(ediv: UInt16, rand: UInt64)
        /// 3.6.4: the Identity Resolving Key, 16 bytes.
        case identityInformation(irk: ByteRange)
        /// 3.6.5.
        case identityAddressInformation(addressType: LEAddressType, address: BDAddr)
        /// 3.6.6: the Connection Signature Resolving Key, 16 bytes.
        case signingInformation(csrk: ByteRange)
        /// 3.6.7.
        case securityRequest(authReq: AuthReq)
        /// A code the table does not know; `payload` is everything after the code.
        case unknown(SMPCode, payload: ByteRange)

        /// The code this command was decoded from.
        public var code: SMPCode {
            switch self {
            case .pairingRequest: .pairingRequest
            case .pairingResponse: .pairingResponse
            case .pairingConfirm: .pairingConfirm
            case .pairingRandom: .pairingRandom
            case .pairingFailed: .pairingFailed
            case .pairingPublicKey: .pairingPublicKey
            case .pairingDHKeyCheck: .pairingDHKeyCheck
            case .pairingKeypressNotification: .pairingKeypressNotification
            case .encryptionInformation: .encryptionInformation
            case .centralIdentification: .centralIdentification
            case .identityInformation: .identityInformation
            case .identityAddressInformation: .identityAddressInformation
            case .signingInformation: .signingInformation
            case .securityRequest: .securityRequest
            case let .unknown(code, _): code
            }
        }

        /// The key a key-distribution command carries (3.6.1): EncKey for Encryption Information and
        /// Central Identification, IdKey for Identity (Address) Information, SignKey for Signing
        /// Information; nil for every other command.
        public var distributedKey: KeyDistribution? { code.distributedKey }
    }

    /// Pairing Request / Pairing Response parameters, 3.5.1–3.5.2.
    public struct PairingParameters: Hashable, Sendable {
        public var ioCapability: IOCapability
        /// OOB Data Flag: 0x00 not present, 0x01 present.
        public var oobDataFlag: UInt8
        public var authReq: AuthReq
        /// Maximum Encryption Key Size, 7…16 bytes.
        public var maxEncryptionKeySize: UInt8
        public var initiatorKeyDistribution: KeyDistribution
        public var responderKeyDistribution: KeyDistribution

        public init(ioCapability: IOCapability, oobDataFlag: UInt8, authReq: AuthReq, maxEncryptionKeySize: UInt8,
                    initiatorKeyDistribution: KeyDistribution, responderKeyDistribution: KeyDistribution) {
            self.ioCapability = ioCapability
            self.oobDataFlag = oobDataFlag
            self.authReq = authReq
            self.maxEncryptionKeySize = maxEncryptionKeySize
            self.initiatorKeyDistribution = initiatorKeyDistribution
            self.responderKeyDistribution = responderKeyDistribution
        }

        public var oobDataPresent: Bool { oobDataFlag == 0x01 }
        /// IOcapA / IOcapB of the f6 check function (2.2.8): AuthReq || OOB data flag || IO
        /// capability, most significant octet first, given little-endian as SMP carries values.
        public var ioCap: [UInt8] { [ioCapability.rawValue, oobDataFlag, authReq.rawValue] }
        /// Outside 7…16: the peer must fail pairing with Invalid Parameters.
        public var isKeySizeValid: Bool { SMP.keySizeRange.contains(maxEncryptionKeySize) }
    }

    /// IO Capability, 3.5.1 (Table 3.4).
    public struct IOCapability: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        public let rawValue: UInt8
        @inlinable public init(rawValue: UInt8) { self.rawValue = rawValue }
        public static let displayOnly = IOCapability(rawValue: 0x00)
        public static let displayYesNo = IOCapability(rawValue: 0x01)
        public static let keyboardOnly = IOCapability(rawValue: 0x02)
        public static let noInputNoOutput = IOCapability(rawValue: 0x03)
        public static let keyboardDisplay = IOCapability(rawValue: 0x04)
        public static let names = NameTable([
            (0x00, "DisplayOnly"), (0x01, "DisplayYesNo"), (0x02, "KeyboardOnly"), (0x03, "NoInputNoOutput"), (0x04, "KeyboardDisplay"),
        ])
        public var description: String { Self.names.name(UInt64(rawValue)) ?? "Reserved (0x\(Hex.pad(rawValue, 2)))" }
    }

    /// AuthReq, 3.5.1 (Figure 3.3): Bonding_Flags (2 bits), MITM, SC, Keypress, CT2.
    public struct AuthReq: OptionSet, Hashable, Sendable {
        public let rawValue: UInt8
        @inlinable public init(rawValue: UInt8) { self.rawValue = rawValue }
        /// Bonding_Flags = 0b01: store the keys.
        public static let bonding = AuthReq(rawValue: 0x01)
        public static let mitm = AuthReq(rawValue: 0x04)
        public static let secureConnections = AuthReq(rawValue: 0x08)
        public static let keypress = AuthReq(rawValue: 0x10)
        public static let ct2 = AuthReq(rawValue: 0x20)
        /// Bonding_Flags, bits 0–1 (0b00 no bonding, 0b01 bonding, others reserved).
        public var bondingFlags: UInt8 { rawValue & 0x03 }
        public static let names = NameTable([
            (0x01, "Bonding"), (0x04, "MITM"), (0x08, "SC"), (0x10, "Keypress"), (0x20, "CT2"),
        ])
    }

    /// Initiator / Responder Key Distribution, 3.6.1 (Figure 3.11).
    public struct KeyDistribution: OptionSet, Hashable, Sendable {
        public let rawValue: UInt8
        @inlinable public init(rawValue: UInt8) { self.rawValue = rawValue }
        public static let encKey = KeyDistribution(rawValue: 0x01)
        public static let idKey = KeyDistribution(rawValue: 0x02)
        public static let signKey = KeyDistribution(rawValue: 0x04)
        public static let linkKey = KeyDistribution(rawValue: 0x08)
        public static let names = NameTable([(0x01, "EncKey"), (0x02, "IdKey"), (0x04, "SignKey"), (0x08, "LinkKey")])

        /// The commands that distribute these keys, in the order they are sent (3.6.1, Figure 3.11:
        /// EncKey, then IdKey, then SignKey). LinkKey is derived, not sent.
        public var commands: [SMPCode] {
            SMPDecoding.knownCodes.filter { $0.distributedKey.map(contains) ?? false }
        }
    }

    /// Keypress Notification Type, 3.5.8.
    public static let keypressNames = NameTable([
        (0, "Passkey entry started"), (1, "Passkey digit entered"), (2, "Passkey digit erased"),
        (3, "Passkey cleared"), (4, "Passkey entry completed"),
    ])

    /// OOB Data Flag, 3.5.1.
    public static let oobNames = NameTable([(0, "OOB Authentication data not present"), (1, "OOB Authentication data present")])

    /// Decodes one SMP command (the whole L2CAP payload on CID 0x0006 or 0x0007).
    ///
    /// On return, `r.remaining` counts trailing bytes after the fixed-size command (a warning).
    /// - Throws: `DecodeError` when the command is shorter than its code needs.
    public static func decode(_ r: inout ByteReader) throws(DecodeError) -> Command {
        let code = try r.u8("Code")
        guard let entry = SMPDecoding.index[code] else {
            return .unknown(SMPCode(code), payload: r.takeRest())
        }
        try entry.size.check(r, entry.name)
        let command = try entry.decode(r)
        try r.skip(entry.size.minimum, entry.name)
        return command
    }

    /// The parameter size of a command carrying key material (Pairing Confirm, Random, Public Key,
    /// DHKey Check, Encryption / Identity / Signing Information: a `.secret` in its row); nil for
    /// the others and unknown codes. Redaction zeroes a wrong-size PDU of these whole.
    public static func keyParameterSize(_ code: SMPCode) -> Int? {
        SMPDecoding.index[code.rawValue].flatMap { $0.carriesKey ? $0.size.minimum : nil }
    }
}

/// Pairing Failed reason, Core v5.4 Vol 3 Part H 3.5.5 (Table 3.7). Open.
public struct SMPFailureReason: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt8
    @inlinable public init(rawValue: UInt8) { self.rawValue = rawValue }
    public static let passkeyEntryFailed = SMPFailureReason(rawValue: 0x01)
    public static let oobNotAvailable = SMPFailureReason(rawValue: 0x02)
    public static let authenticationRequirements = SMPFailureReason(rawValue: 0x03)
    public static let confirmValueFailed = SMPFailureReason(rawValue: 0x04)
    public static let pairingNotSupported = SMPFailureReason(rawValue: 0x05)
    public static let encryptionKeySize = SMPFailureReason(rawValue: 0x06)
    public static let commandNotSupported = SMPFailureReason(rawValue: 0x07)
    public static let unspecifiedReason = SMPFailureReason(rawValue: 0x08)
    public static let repeatedAttempts = SMPFailureReason(rawValue: 0x09)
    public static let invalidParameters = SMPFailureReason(rawValue: 0x0A)
    public static let dhKeyCheckFailed = SMPFailureReason(rawValue: 0x0B)
    public static let numericComparisonFailed = SMPFailureReason(rawValue: 0x0C)
    public static let brEdrPairingInProgress = SMPFailureReason(rawValue: 0x0D)
    public static let crossTransportKeyNotAllowed = SMPFailureReason(rawValue: 0x0E)
    public static let keyRejected = SMPFailureReason(rawValue: 0x0F)

    public static let names = NameTable([
        (0x01, "Passkey Entry Failed"), (0x02, "OOB Not Available"), (0x03, "Authentication Requirements"),
        (0x04, "Confirm Value Failed"), (0x05, "Pairing Not Supported"), (0x06, "Encryption Key Size"),
        (0x07, "Command Not Supported"), (0x08, "Unspecified Reason"), (0x09, "Repeated Attempts"),
        (0x0A, "Invalid Parameters"), (0x0B, "DHKey Check Failed"), (0x0C, "Numeric Comparison Failed"),
        (0x0D, "BR/EDR pairing in progress"), (0x0E, "Cross-transport Key Derivation/Generation not allowed"),
        (0x0F, "Key Rejected"), (0x10, "Busy"),
    ])

    /// `Pairing Not Supported`, or `Reserved`.
    public var name: String { Self.names.name(UInt64(rawValue)) ?? "Reserved" }
    /// `Pairing Not Supported (0x05)`.
    public var description: String { "\(name) (0x\(Hex.pad(rawValue, 2)))" }
}

extension SMP.PairingParameters {
    /// The Pairing Request (`.pairingRequest`) or Pairing Response (`.pairingResponse`) PDU carrying
    /// these parameters (Core v5.4 Vol 3 Part H 3.5.1, 3.5.2): code, IO Capability, OOB Data Flag,
    /// AuthReq, Maximum Encryption Key Size, Initiator and Responder Key Distribution.
    /// Laid out by the table's pairing row (`SMPEncoding`).
    public func bytes(_ code: SMPCode) -> [UInt8] {
        precondition(code == .pairingRequest || code == .pairingResponse, "\(code) carries no pairing parameters")
        do { return try SMPEncoding.command(code, values) } catch { preconditionFailure("the pairing row lost a key: \(error)") }
    }

    /// The parameters by key (`SMP.Key`), as `SMPEncoding` takes them.
    public var values: [ParamKey: SMPEncoding.Value] {
        [SMP.Key.ioCapability: .int(UInt64(ioCapability.rawValue)), SMP.Key.oobDataFlag: .int(UInt64(oobDataFlag)),
         SMP.Key.authReq: .int(UInt64(authReq.rawValue)), SMP.Key.maxEncryptionKeySize: .int(UInt64(maxEncryptionKeySize)),
         SMP.Key.initiatorKeyDistribution: .int(UInt64(initiatorKeyDistribution.rawValue)),
         SMP.Key.responderKeyDistribution: .int(UInt64(responderKeyDistribution.rawValue))]
    }
}
