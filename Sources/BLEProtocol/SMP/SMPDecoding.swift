import BLEBytes

extension SMP {
    /// The parameters' names in Core v5.4 Vol 3 Part H 3.5–3.6: the keys by which the typed decoder
    /// reads a row (`SMPLayout`) and `SMPEncoding` builds one. `Param.name` is display text only.
    public enum Key {
        /// Pairing Request / Response (3.5.1, 3.5.2).
        public static let ioCapability = ParamKey("IO_Capability")
        public static let oobDataFlag = ParamKey("OOB_Data_Flag")
        public static let authReq = ParamKey("AuthReq")
        public static let maxEncryptionKeySize = ParamKey("Maximum_Encryption_Key_Size")
        public static let initiatorKeyDistribution = ParamKey("Initiator_Key_Distribution")
        public static let responderKeyDistribution = ParamKey("Responder_Key_Distribution")
        /// Pairing Confirm (3.5.3), Pairing Random (3.5.4), Pairing Failed (3.5.5).
        public static let confirmValue = ParamKey("Confirm_Value")
        public static let randomValue = ParamKey("Random_Value")
        public static let reason = ParamKey("Reason")
        /// Pairing Public Key (3.5.6), Pairing DHKey Check (3.5.7), Keypress Notification (3.5.8).
        public static let publicKeyX = ParamKey("Public_Key_X")
        public static let publicKeyY = ParamKey("Public_Key_Y")
        public static let dhKeyCheck = ParamKey("DHKey_Check")
        public static let notificationType = ParamKey("Notification_Type")
        /// Key distribution (3.6.2–3.6.6).
        public static let longTermKey = ParamKey("Long_Term_Key")
        public static let ediv = ParamKey("EDIV")
        public static let rand = ParamKey("Rand")
        public static let identityResolvingKey = ParamKey("Identity_Resolving_Key")
        public static let addressType = ParamKey("AddrType")
        public static let address = ParamKey("BD_ADDR")
        public static let signatureKey = ParamKey("Signature_Key")
    }
}

/// One row of the SMP table: code, spec name, parameters and the typed decoder. The parameter list
/// is the layout: it drives display and JSON (`SMPDisplay`), the typed decoder reads it by key
/// (`SMPLayout`), `SMPEncoding` writes it, and the size rule (checked once by the dispatcher) is
/// its width. Key material is `.secret` so output shortens it by default.
struct SMPEntry: Sendable {
    /// Reads the command at the reader's cursor (the first parameter) without moving it.
    typealias Decode = @Sendable (ByteReader) throws(DecodeError) -> SMP.Command
    let code: SMPCode
    let name: StaticString
    let size: PDUSize
    let decode: Decode
    let params: [Param]

    init(_ code: SMPCode, _ name: StaticString, _ params: [Param], decode: @escaping Decode) {
        (self.code, self.name, self.params, self.decode) = (code, name, params, decode)
        // Every SMP command has a fixed size (Part H 3.3): the sum of its parameters' widths.
        size = .exactly(SizeRule.fixedLayout(params).reduce(0) { $0 + $1.size })
    }

    /// True when the command carries key material (a `.secret` parameter).
    var carriesKey: Bool {
        params.contains { if case .secret = $0.spec { true } else { false } }
    }
}

/// The SMP decoding table, Core v5.4 Vol 3 Part H 3.5–3.6, one row per command in spec order.
public enum SMPDecoding {
    typealias K = SMP.Key
    static let pairing: [Param] = [
        Param("IO Capability", .named(1, SMP.IOCapability.names), key: K.ioCapability),
        Param("OOB Data", .named(1, SMP.oobNames), key: K.oobDataFlag),
        Param("Authentication Requirement", .flags(1, SMP.AuthReq.names), key: K.authReq),
        Param("Max Encryption Key Size", .uint(1), key: K.maxEncryptionKeySize),
        Param("Initiator Key Distribution", .flags(1, SMP.KeyDistribution.names), key: K.initiatorKeyDistribution),
        Param("Responder Key Distribution", .flags(1, SMP.KeyDistribution.names), key: K.responderKeyDistribution),
    ]
    static let confirm = [Param("Confirm Value", .secret(16), key: K.confirmValue)]
    static let random = [Param("Random Value", .secret(16), key: K.randomValue)]
    static let failed = [Param(.reason, "Reason", .named(1, SMPFailureReason.names), key: K.reason)]
    static let encryptionInformation = [Param(.longTermKey, "Long Term Key", .secret(16), key: K.longTermKey)]
    static let centralIdentification = [Param("EDIV", .hex(2), key: K.ediv), Param("Rand", .hex(8), key: K.rand)]
    static let identityInformation = [Param("Identity Resolving Key", .secret(16), key: K.identityResolvingKey)]
    static let identityAddressInformation = [Param(.peerAddressType, "Address Type", .addressType, key: K.addressType), Param("Address", .address, key: K.address)]
    static let signingInformation = [Param("Signature Key", .secret(16), key: K.signatureKey)]
    static let securityRequest = [Param("Authentication Requirement", .flags(1, SMP.AuthReq.names), key: K.authReq)]
    static let publicKey = [Param("Public Key X", .secret(32), key: K.publicKeyX), Param("Public Key Y", .secret(32), key: K.publicKeyY)]
    static let dhKeyCheck = [Param("DHKey Check", .secret(16), key: K.dhKeyCheck)]
    static let keypress = [Param("Notification Type", .named(1, SMP.keypressNames), key: K.notificationType)]

    typealias L = SMPLayout
    static let rows: [SMPEntry] = [
        SMPEntry(.pairingRequest, "Pairing Request", pairing) { r throws(DecodeError) in .pairingRequest(try L.pairing.read(r)) },
        SMPEntry(.pairingResponse, "Pairing Response", pairing) { r throws(DecodeError) in .pairingResponse(try L.pairing.read(r)) },
        SMPEntry(.pairingConfirm, "Pairing Confirm", confirm) { r throws(DecodeError) in .pairingConfirm(value: try L.confirmValue.range(r)) },
        SMPEntry(.pairingRandom, "Pairing Random", random) { r throws(DecodeError) in .pairingRandom(value: try L.randomValue.range(r)) },
        SMPEntry(.pairingFailed, "Pairing Failed", failed) { r throws(DecodeError) in
            .pairingFailed(reason: SMPFailureReason(rawValue: try L.reason.u8(r)))
        },
        SMPEntry(.encryptionInformation, "Encryption Information", encryptionInformation) { r throws(DecodeError) in
            .encryptionInformation(ltk: try L.longTermKey.range(r))
        },
        SMPEntry(.centralIdentification, "Central Identification", centralIdentification) { r throws(DecodeError) in
            .centralIdentification(ediv: try L.ediv.u16(r), rand: try L.rand.u64(r))
        },
        SMPEntry(.identityInformation, "Identity Information", identityInformation) { r throws(DecodeError) in
            .identityInformation(irk: try L.identityResolvingKey.range(r))
        },
        SMPEntry(.identityAddressInformation, "Identity Address Information", identityAddressInformation) { r throws(DecodeError) in
            .identityAddressInformation(addressType: LEAddressType(rawValue: try L.addressType.u8(r)), address: try L.address.address(r))
        },
        SMPEntry(.signingInformation, "Signing Information", signingInformation) { r throws(DecodeError) in
            .signingInformation(csrk: try L.signatureKey.range(r))
        },
        SMPEntry(.securityRequest, "Security Request", securityRequest) { r throws(DecodeError) in
            .securityRequest(authReq: SMP.AuthReq(rawValue: try L.securityAuthReq.u8(r)))
        },
        SMPEntry(.pairingPublicKey, "Pairing Public Key", publicKey) { r throws(DecodeError) in
            .pairingPublicKey(x: try L.publicKeyX.range(r), y: try L.publicKeyY.range(r))
        },
        SMPEntry(.pairingDHKeyCheck, "Pairing DHKey Check", dhKeyCheck) { r throws(DecodeError) in .pairingDHKeyCheck(value: try L.dhKeyCheck.range(r)) },
        SMPEntry(.pairingKeypressNotification, "Pairing Keypress Notification", keypress) { r throws(DecodeError) in
            .pairingKeypressNotification(type: try L.notificationType.u8(r))
        },
    ]

    static let index = ByteCodeIndex(rows) { $0.code.rawValue }

    /// Every code the table knows, in spec order.
    public static var knownCodes: [SMPCode] { rows.map(\.code) }
    /// Commands whose fields are random values or key material (Core v5.4 Vol 3 Part H 3.5–3.6):
    /// the rows with a `.secret` parameter, and Central Identification, whose EDIV and Rand the
    /// peripheral generates at random with its LTK (Part H 2.4.2.3), though shown in full.
    public static let randomOrKeyCodes: Set<SMPCode> = Set(rows.filter { $0.carriesKey || $0.code == .centralIdentification }.map(\.code))
    /// Codes with more than one row (should be empty; checked by a test).
    public static var duplicateCodes: [UInt8] { index.duplicateCodes }
    /// The parameters of `code`'s row with their keys, in wire order (empty for an unknown code).
    public static func parameterKeys(_ code: SMPCode) -> [ParamKey] { index[code.rawValue]?.params.compactMap(\.key) ?? [] }
}

/// The SMP fields the typed decoder reads, located in their `SMPDecoding` rows by key. Offsets
/// count from the first parameter after the code.
enum SMPLayout {
    typealias K = SMP.Key
    /// Pairing Request / Response (3.5.1, 3.5.2).
    struct Pairing: Sendable {
        let io, oob, authReq, maxKeySize, initiatorKeys, responderKeys: RowField
        init(_ p: [Param]) {
            (io, oob, authReq) = (RowField(p, key: K.ioCapability), RowField(p, key: K.oobDataFlag), RowField(p, key: K.authReq))
            (maxKeySize, initiatorKeys, responderKeys) = (RowField(p, key: K.maxEncryptionKeySize), RowField(p, key: K.initiatorKeyDistribution),
                                                          RowField(p, key: K.responderKeyDistribution))
        }

        func read(_ r: ByteReader) throws(DecodeError) -> SMP.PairingParameters {
            SMP.PairingParameters(ioCapability: SMP.IOCapability(rawValue: try io.u8(r)), oobDataFlag: try oob.u8(r),
                                  authReq: SMP.AuthReq(rawValue: try authReq.u8(r)), maxEncryptionKeySize: try maxKeySize.u8(r),
                                  initiatorKeyDistribution: SMP.KeyDistribution(rawValue: try initiatorKeys.u8(r)),
                                  responderKeyDistribution: SMP.KeyDistribution(rawValue: try responderKeys.u8(r)))
        }
    }
    typealias D = SMPDecoding
    static let pairing = Pairing(D.pairing)
    static let confirmValue = RowField(D.confirm, key: K.confirmValue)
    static let randomValue = RowField(D.random, key: K.randomValue)
    static let reason = RowField(D.failed, key: K.reason)
    static let longTermKey = RowField(D.encryptionInformation, key: K.longTermKey)
    static let ediv = RowField(D.centralIdentification, key: K.ediv)
    static let rand = RowField(D.centralIdentification, key: K.rand)
    static let identityResolvingKey = RowField(D.identityInformation, key: K.identityResolvingKey)
    static let addressType = RowField(D.identityAddressInformation, key: K.addressType)
    static let address = RowField(D.identityAddressInformation, key: K.address)
    static let signatureKey = RowField(D.signingInformation, key: K.signatureKey)
    static let securityAuthReq = RowField(D.securityRequest, key: K.authReq)
    static let publicKeyX = RowField(D.publicKey, key: K.publicKeyX)
    static let publicKeyY = RowField(D.publicKey, key: K.publicKeyY)
    static let dhKeyCheck = RowField(D.dhKeyCheck, key: K.dhKeyCheck)
    static let notificationType = RowField(D.keypress, key: K.notificationType)
}

/// Builds SMP commands from the decoding table (`SMPDecoding`): the row lists the parameters and
/// their widths, the caller gives values by key (`SMP.Key`), never by display label or byte index.
/// The encoding side of the table, so a PDU the twin or a test sends is laid out by the row that
/// decodes it (Bumble's model: one field list drives parse, print and serialise).
public enum SMPEncoding {
    public typealias Value = HCICommandEncoding.Value
    public typealias Failure = HCICommandEncoding.Failure

    /// The SMP command (code, then its parameters; the L2CAP payload on CID 0x0006). A parameter
    /// left out is an error, so a table change cannot silently send zeros.
    public static func command(_ code: SMPCode, _ values: [ParamKey: Value] = [:]) throws(Failure) -> [UInt8] {
        guard let entry = SMPDecoding.index[code.rawValue] else { throw .unknownCommand(UInt16(code.rawValue)) }
        var w = ByteWriter(capacity: 1 + entry.size.minimum)
        w.u8(code.rawValue)
        try HCICommandEncoding.write(entry.params, values, into: &w)
        return w.bytes
    }
}

/// Decodes one SMP command for display. Never throws: malformed → layer `error` plus partial fields.
public enum SMPDisplay {
    /// - Parameters:
    ///   - r: the SMP command, from its code to the end of the L2CAP payload.
    ///   - protocolName: "SMP" on LE (CID 0x0006), "BR/EDR SMP" on CID 0x0007.
    public static func decode(_ r: inout ByteReader, protocolName: StaticString = "SMP") -> Layer {
        var layer = Layer(protocolName: protocolName, name: "Malformed", code: "", length: r.remaining)
        let code: UInt8
        do { code = try r.u8("Code") } catch {
            layer.error = error
            return layer
        }
        layer.code = Hex.code(code, 2)
        guard let entry = SMPDecoding.index[code] else {
            layer.name = "Unknown"
            if r.remaining > 0 { layer.fields.append(Field("Data", .bytes(Array(r.rest().bytes)))) }
            return layer
        }
        layer.name = entry.name.description
        do {
            try entry.size.check(r, entry.name)
        } catch {
            layer.error = error
            layer.notes.append("invalid packet size")
            if r.remaining > 0 {
                // A cut key is still key material: keep it shortened.
                let raw = Array(r.rest().bytes)
                layer.fields.append(Field("Data", entry.carriesKey ? .secret(raw) : .bytes(raw)))
            }
            return layer
        }
        let (fields, error, notes) = FieldDecoder.decodeMessage(entry.params, &r)
        layer.fields = fields
        layer.error = error
        layer.notes += notes
        return layer
    }
}
