import BLEBytes

/// One row of the SMP table: code, spec name, size rule (checked once by the dispatcher), the typed
/// decoder and the display parameters. Key material is `.secret` so output shortens it by default.
struct SMPEntry: Sendable {
    typealias Decode = @Sendable (inout ByteReader) throws(DecodeError) -> SMP.Command
    let code: SMPCode
    let name: StaticString
    let size: PDUSize
    let decode: Decode
    let params: [Param]

    init(_ code: SMPCode, _ name: StaticString, size: PDUSize, _ params: [Param], decode: @escaping Decode) {
        (self.code, self.name, self.size, self.params, self.decode) = (code, name, size, params, decode)
    }

    /// True when the command carries key material (a `.secret` parameter).
    var carriesKey: Bool {
        params.contains { if case .secret = $0.spec { true } else { false } }
    }
}

/// The SMP decoding table, Core v5.4 Vol 3 Part H 3.5–3.6, one row per command in spec order.
public enum SMPDecoding {
    static let pairingParams: [Param] = [
        Param("IO Capability", .named(1, SMP.IOCapability.names)),
        Param("OOB Data", .named(1, SMP.oobNames)),
        Param("Authentication Requirement", .flags(1, SMP.AuthReq.names)),
        Param("Max Encryption Key Size", .uint(1)),
        Param("Initiator Key Distribution", .flags(1, SMP.KeyDistribution.names)),
        Param("Responder Key Distribution", .flags(1, SMP.KeyDistribution.names)),
    ]

    static let rows: [SMPEntry] = [
        SMPEntry(.pairingRequest, "Pairing Request", size: .exactly(6), pairingParams) { r throws(DecodeError) in
            .pairingRequest(try pairingParameters(&r))
        },
        SMPEntry(.pairingResponse, "Pairing Response", size: .exactly(6), pairingParams) { r throws(DecodeError) in
            .pairingResponse(try pairingParameters(&r))
        },
        SMPEntry(.pairingConfirm, "Pairing Confirm", size: .exactly(16), [Param("Confirm Value", .secret(16))]) { r throws(DecodeError) in
            .pairingConfirm(value: try r.takeRange(16, "Confirm Value"))
        },
        SMPEntry(.pairingRandom, "Pairing Random", size: .exactly(16), [Param("Random Value", .secret(16))]) { r throws(DecodeError) in
            .pairingRandom(value: try r.takeRange(16, "Random Value"))
        },
        SMPEntry(.pairingFailed, "Pairing Failed", size: .exactly(1), [Param(.reason, "Reason", .named(1, SMPFailureReason.names))]) { r throws(DecodeError) in
            .pairingFailed(reason: SMPFailureReason(rawValue: try r.u8("Reason")))
        },
        SMPEntry(.encryptionInformation, "Encryption Information", size: .exactly(16), [Param(.longTermKey, "Long Term Key", .secret(16))]) { r throws(DecodeError) in
            .encryptionInformation(ltk: try r.takeRange(16, "Long Term Key"))
        },
        SMPEntry(.centralIdentification, "Central Identification", size: .exactly(10),
                 [Param("EDIV", .hex(2)), Param("Rand", .hex(8))]) { r throws(DecodeError) in
            .centralIdentification(ediv: try r.u16le("EDIV"), rand: try r.u64le("Rand"))
        },
        SMPEntry(.identityInformation, "Identity Information", size: .exactly(16), [Param("Identity Resolving Key", .secret(16))]) { r throws(DecodeError) in
            .identityInformation(irk: try r.takeRange(16, "Identity Resolving Key"))
        },
        SMPEntry(.identityAddressInformation, "Identity Address Information", size: .exactly(7),
                 [Param("Address Type", .addressType), Param("Address", .address)]) { r throws(DecodeError) in
            .identityAddressInformation(addressType: LEAddressType(rawValue: try r.u8("AddrType")), address: try r.address("BD_ADDR"))
        },
        SMPEntry(.signingInformation, "Signing Information", size: .exactly(16), [Param("Signature Key", .secret(16))]) { r throws(DecodeError) in
            .signingInformation(csrk: try r.takeRange(16, "Signature Key"))
        },
        SMPEntry(.securityRequest, "Security Request", size: .exactly(1),
                 [Param("Authentication Requirement", .flags(1, SMP.AuthReq.names))]) { r throws(DecodeError) in
            .securityRequest(authReq: SMP.AuthReq(rawValue: try r.u8("AuthReq")))
        },
        SMPEntry(.pairingPublicKey, "Pairing Public Key", size: .exactly(64),
                 [Param("Public Key X", .secret(32)), Param("Public Key Y", .secret(32))]) { r throws(DecodeError) in
            .pairingPublicKey(x: try r.takeRange(32, "Public Key X"), y: try r.takeRange(32, "Public Key Y"))
        },
        SMPEntry(.pairingDHKeyCheck, "Pairing DHKey Check", size: .exactly(16), [Param("DHKey Check", .secret(16))]) { r throws(DecodeError) in
            .pairingDHKeyCheck(value: try r.takeRange(16, "DHKey Check"))
        },
        SMPEntry(.pairingKeypressNotification, "Pairing Keypress Notification", size: .exactly(1),
                 [Param("Notification Type", .named(1, SMP.keypressNames))]) { r throws(DecodeError) in
            .pairingKeypressNotification(type: try r.u8("Notification Type"))
        },
    ]

    static let index = ByteCodeIndex(rows) { $0.code.rawValue }

    /// Every code the table knows, in spec order.
    public static var knownCodes: [SMPCode] { rows.map(\.code) }
    /// Codes with more than one row (should be empty; checked by a test).
    public static var duplicateCodes: [UInt8] { index.duplicateCodes }

    static func pairingParameters(_ r: inout ByteReader) throws(DecodeError) -> SMP.PairingParameters {
        SMP.PairingParameters(ioCapability: SMP.IOCapability(rawValue: try r.u8("IO Capability")),
                              oobDataFlag: try r.u8("OOB Data Flag"),
                              authReq: SMP.AuthReq(rawValue: try r.u8("AuthReq")),
                              maxEncryptionKeySize: try r.u8("Maximum Encryption Key Size"),
                              initiatorKeyDistribution: SMP.KeyDistribution(rawValue: try r.u8("Initiator Key Distribution")),
                              responderKeyDistribution: SMP.KeyDistribution(rawValue: try r.u8("Responder Key Distribution")))
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
