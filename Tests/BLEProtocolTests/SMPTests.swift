import Testing
import BLEBytes
@testable import BLEProtocol

private typealias S = ATTTestSupport
private func r(_ offset: Int, _ count: Int) -> ByteRange { ByteRange(offset: offset, count: count) }
private let key16 = "00 11 22 33 44 55 66 77 88 99 aa bb cc dd ee ff"
private let key64 = Array(repeating: key16, count: 4).joined(separator: " ")

/// One vector per SMP command of Core v5.4 Vol 3 Part H 3.5–3.6 (offsets from the Code byte).
let smpVectors: [(String, SMP.Command)] = [
    // Pairing Request: NoInputNoOutput, no OOB, Bonding|MITM|SC|CT2, 16 bytes, all keys both ways
    ("01 03 00 2d 10 0f 0f", .pairingRequest(.init(ioCapability: .noInputNoOutput, oobDataFlag: 0,
        authReq: [.bonding, .mitm, .secureConnections, .ct2], maxEncryptionKeySize: 16,
        initiatorKeyDistribution: [.encKey, .idKey, .signKey, .linkKey], responderKeyDistribution: [.encKey, .idKey, .signKey, .linkKey]))),
    // Pairing Response: KeyboardDisplay, OOB present, Bonding|SC|Keypress, 7 bytes, initiator EncKey, responder EncKey|IdKey
    ("02 04 01 19 07 01 03", .pairingResponse(.init(ioCapability: .keyboardDisplay, oobDataFlag: 1,
        authReq: [.bonding, .secureConnections, .keypress], maxEncryptionKeySize: 7,
        initiatorKeyDistribution: [.encKey], responderKeyDistribution: [.encKey, .idKey]))),
    ("03 " + key16, .pairingConfirm(value: r(1, 16))),
    ("04 " + key16, .pairingRandom(value: r(1, 16))),
    ("05 05", .pairingFailed(reason: .pairingNotSupported)),
    ("06 " + key16, .encryptionInformation(ltk: r(1, 16))),
    // Central Identification: EDIV 0x1234, Rand 0x0807060504030201
    ("07 34 12 01 02 03 04 05 06 07 08", .centralIdentification(ediv: 0x1234, rand: 0x0807_0605_0403_0201)),
    ("08 " + key16, .identityInformation(irk: r(1, 16))),
    // Identity Address Information: random (static) C1:02:03:04:05:06
    ("09 01 06 05 04 03 02 c1", .identityAddressInformation(addressType: .randomDevice, address: BDAddr(0xC1_02_03_04_05_06))),
    ("0a " + key16, .signingInformation(csrk: r(1, 16))),
    ("0b 0d", .securityRequest(authReq: [.bonding, .mitm, .secureConnections])),
    ("0c " + key64, .pairingPublicKey(x: r(1, 32), y: r(33, 32))),
    ("0d " + key16, .pairingDHKeyCheck(value: r(1, 16))),
    ("0e 01", .pairingKeypressNotification(type: 1)),
    ("0f 01", .unknown(SMPCode(0x0F), payload: r(1, 1))),
]

let smpNames: [(UInt8, String)] = [
    (0x01, "Pairing Request"), (0x02, "Pairing Response"), (0x03, "Pairing Confirm"), (0x04, "Pairing Random"),
    (0x05, "Pairing Failed"), (0x06, "Encryption Information"), (0x07, "Central Identification"),
    (0x08, "Identity Information"), (0x09, "Identity Address Information"), (0x0A, "Signing Information"),
    (0x0B, "Security Request"), (0x0C, "Pairing Public Key"), (0x0D, "Pairing DHKey Check"),
    (0x0E, "Pairing Keypress Notification"),
]

@Suite("SMP")
struct SMPTests {
    @Test(arguments: smpVectors)
    func decodesEveryCommand(hex: String, expected: SMP.Command) {
        let (result, remaining) = S.run(S.bytes(hex)) { r throws(DecodeError) in try SMP.decode(&r) }
        #expect(result == .success(expected))
        #expect(remaining == 0)
    }

    @Test(arguments: smpNames)
    func displaysEveryCommandByName(code: UInt8, name: String) {
        let vector = smpVectors.first { S.bytes($0.0).first == code }?.0 ?? ""
        let layer = S.show(vector) { SMPDisplay.decode(&$0) }
        #expect(layer.name == name)
        #expect(layer.error == nil && layer.notes.isEmpty)
        #expect(SMPCode(rawValue: code).name == name)
    }

    /// Pairing Request/Response written back from their parameters (Part H 3.5.1, 3.5.2): the
    /// vectors above decode and encode to the same bytes.
    @Test(arguments: smpVectors.filter { S.bytes($0.0).first == 0x01 || S.bytes($0.0).first == 0x02 })
    func pairingParametersEncodeAsTheyDecode(hex: String, expected: SMP.Command) {
        switch expected {
        case let .pairingRequest(p): #expect(p.bytes(.pairingRequest) == S.bytes(hex))
        case let .pairingResponse(p): #expect(p.bytes(.pairingResponse) == S.bytes(hex))
        default: Issue.record("not a pairing request or response: \(hex)")
        }
    }

    /// Every command built by key from its table row (`SMPEncoding`), values read off Core v5.4 Vol 3
    /// Part H 3.5–3.6 by hand: the same bytes as the decoding vectors above.
    @Test(arguments: smpVectors.filter { if case .unknown = $0.1 { false } else { true } })
    func everyCommandEncodesByKey(hex: String, expected: SMP.Command) throws {
        typealias K = SMP.Key
        let key = S.bytes(key16)
        let values: [ParamKey: SMPEncoding.Value]
        switch expected {
        case let .pairingRequest(p), let .pairingResponse(p): values = p.values
        case .pairingConfirm: values = [K.confirmValue: .bytes(key)]
        case .pairingRandom: values = [K.randomValue: .bytes(key)]
        case .pairingFailed: values = [K.reason: .int(0x05)]
        case .encryptionInformation: values = [K.longTermKey: .bytes(key)]
        case .centralIdentification: values = [K.ediv: .int(0x1234), K.rand: .int(0x0807_0605_0403_0201)]
        case .identityInformation: values = [K.identityResolvingKey: .bytes(key)]
        case .identityAddressInformation: values = [K.addressType: .int(1), K.address: .address(BDAddr(0xC1_02_03_04_05_06))]
        case .signingInformation: values = [K.signatureKey: .bytes(key)]
        case .securityRequest: values = [K.authReq: .int(0x0D)]
        case .pairingPublicKey: values = [K.publicKeyX: .bytes(key + key), K.publicKeyY: .bytes(key + key)]
        case .pairingDHKeyCheck: values = [K.dhKeyCheck: .bytes(key)]
        case .pairingKeypressNotification: values = [K.notificationType: .int(1)]
        case .unknown: return
        }
        #expect(try SMPEncoding.command(expected.code, values) == S.bytes(hex))
        #expect(SMPDecoding.parameterKeys(expected.code).count == values.count)
    }

    @Test func encodingRefusesWhatTheRowDoesNotHave() {
        #expect(throws: SMPEncoding.Failure.missingParameter("Reason")) { try SMPEncoding.command(.pairingFailed) }
        #expect(throws: SMPEncoding.Failure.unknownCommand(0x0F)) { try SMPEncoding.command(SMPCode(0x0F)) }
    }

    /// What the twin and redaction read by key instead of by index.
    @Test func keyedFacts() {
        // 3.6.1: EncKey → Encryption Information + Central Identification, IdKey → Identity (Address)
        // Information, SignKey → Signing Information; LinkKey sends nothing.
        #expect(SMP.KeyDistribution([.encKey, .idKey, .signKey, .linkKey]).commands
                == [.encryptionInformation, .centralIdentification, .identityInformation, .identityAddressInformation, .signingInformation])
        #expect(SMP.KeyDistribution([.idKey]).commands == [.identityInformation, .identityAddressInformation])
        #expect(SMP.KeyDistribution([.linkKey]).commands.isEmpty)
        // Commands with key material and their parameter sizes (3.5.3, 3.5.4, 3.5.6, 3.5.7, 3.6.2, 3.6.4, 3.6.6).
        let sizes = Dictionary(uniqueKeysWithValues: (0 ... 0x10).compactMap { c in SMP.keyParameterSize(SMPCode(c)).map { (c, $0) } })
        #expect(sizes == [0x03: 16, 0x04: 16, 0x06: 16, 0x08: 16, 0x0A: 16, 0x0C: 64, 0x0D: 16])
        // IOcap of f6 (2.2.8): the Pairing Response "02 04 01 19 …" gives IO 04, OOB 01, AuthReq 19.
        guard case let .pairingResponse(p) = smpVectors[1].1 else { Issue.record("vector 1 is the Pairing Response"); return }
        #expect(p.ioCap == [0x04, 0x01, 0x19])
    }

    @Test func tableCoversEveryCode() {
        #expect(SMPDecoding.knownCodes.map(\.rawValue) == Array(1...0x0E))
        #expect(SMPDecoding.duplicateCodes.isEmpty)
    }

    @Test func pairingRequestFieldsByName() {
        let layer = S.show("01 03 00 2d 10 0f 0f") { SMPDisplay.decode(&$0) }
        #expect(S.lines(layer) == [
            "IO Capability: NoInputNoOutput (0x03)",
            "OOB Data: OOB Authentication data not present (0x00)",
            "Authentication Requirement: 0x2d [Bonding, MITM, SC, CT2]",
            "Max Encryption Key Size: 16",
            "Initiator Key Distribution: 0x0f [EncKey, IdKey, SignKey, LinkKey]",
            "Responder Key Distribution: 0x0f [EncKey, IdKey, SignKey, LinkKey]",
        ])
        let rsp = S.show("02 04 01 19 07 01 03") { SMPDisplay.decode(&$0) }
        #expect(S.has(rsp, "IO Capability: KeyboardDisplay (0x04)"))
        #expect(S.has(rsp, "Authentication Requirement: 0x19 [Bonding, SC, Keypress]"))
        #expect(S.has(rsp, "Responder Key Distribution: 0x03 [EncKey, IdKey]"))
    }

    /// Every key value is `.secret`, so output shortens it unless keys are requested.
    @Test(arguments: [("03 " + key16, 1), ("04 " + key16, 1), ("06 " + key16, 1), ("08 " + key16, 1),
                      ("0a " + key16, 1), ("0c " + key64, 2), ("0d " + key16, 1)])
    func keyMaterialIsSecret(hex: String, secrets: Int) {
        let layer = S.show(hex) { SMPDisplay.decode(&$0) }
        let values = S.values(layer.fields)
        #expect(values.count == secrets)
        for v in values {
            guard case let .secret(bytes) = v else {
                Issue.record("not secret: \(v)")
                continue
            }
            #expect(bytes.count == 16 || bytes.count == 32)
        }
        #expect(!S.lines(layer).joined().contains("00 11 22 33"))
    }

    @Test func aCutKeyIsStillSecret() {
        let layer = S.show("06 00 11 22") { SMPDisplay.decode(&$0) }
        #expect(layer.error == DecodeError(kind: .truncated(needed: 16, available: 3), offset: 1, field: ""))
        guard case .secret? = layer.fields.first?.value else {
            Issue.record("raw key bytes shown")
            return
        }
        let notKey = S.show("01 03") { SMPDisplay.decode(&$0) }
        guard case .bytes? = notKey.fields.first?.value else {
            Issue.record("pairing request bytes hidden")
            return
        }
    }

    @Test func otherFields() {
        let central = S.show("07 34 12 01 02 03 04 05 06 07 08") { SMPDisplay.decode(&$0) }
        #expect(S.lines(central) == ["EDIV: 0x1234", "Rand: 0x0807060504030201"])
        let identity = S.show("09 01 06 05 04 03 02 c1") { SMPDisplay.decode(&$0) }
        #expect(S.lines(identity) == ["Address Type: Random (0x01)", "Address: C1:02:03:04:05:06"])
        let keypress = S.show("0e 04") { SMPDisplay.decode(&$0) }
        #expect(S.lines(keypress) == ["Notification Type: Passkey entry completed (0x04)"])
        let security = S.show("0b 0d") { SMPDisplay.decode(&$0) }
        #expect(S.lines(security) == ["Authentication Requirement: 0x0d [Bonding, MITM, SC]"])
        let unknown = S.show("0f 01") { SMPDisplay.decode(&$0) }
        #expect(unknown.name == "Unknown" && unknown.error == nil)
    }

    @Test(arguments: [
        (UInt8(0x01), "Passkey Entry Failed"), (0x02, "OOB Not Available"), (0x03, "Authentication Requirements"),
        (0x04, "Confirm Value Failed"), (0x05, "Pairing Not Supported"), (0x06, "Encryption Key Size"),
        (0x07, "Command Not Supported"), (0x08, "Unspecified Reason"), (0x09, "Repeated Attempts"),
        (0x0A, "Invalid Parameters"), (0x0B, "DHKey Check Failed"), (0x0C, "Numeric Comparison Failed"),
        (0x0D, "BR/EDR pairing in progress"), (0x0E, "Cross-transport Key Derivation/Generation not allowed"),
        (0x0F, "Key Rejected"), (0x42, "Reserved"),
    ])
    func failureReasons(code: UInt8, name: String) {
        #expect(SMPFailureReason(rawValue: code).name == name)
        let layer = S.show([0x05, code]) { SMPDisplay.decode(&$0) }
        #expect(S.lines(layer).first?.hasPrefix("Reason: \(name == "Reserved" ? "Unknown" : name)") == true)
    }

    @Test func distributedKeys() {
        #expect(SMP.Command.encryptionInformation(ltk: r(0, 16)).distributedKey == .encKey)
        #expect(SMP.Command.centralIdentification(ediv: 0, rand: 0).distributedKey == .encKey)
        #expect(SMP.Command.identityInformation(irk: r(0, 16)).distributedKey == .idKey)
        #expect(SMP.Command.identityAddressInformation(addressType: .publicDevice, address: BDAddr(0)).distributedKey == .idKey)
        #expect(SMP.Command.signingInformation(csrk: r(0, 16)).distributedKey == .signKey)
        #expect(SMP.Command.pairingRandom(value: r(0, 16)).distributedKey == nil)
    }

    @Test func parameterHelpers() {
        let p = SMP.PairingParameters(ioCapability: .displayYesNo, oobDataFlag: 0, authReq: [.bonding, .mitm],
                                      maxEncryptionKeySize: 6, initiatorKeyDistribution: [], responderKeyDistribution: [.encKey])
        #expect(!p.isKeySizeValid && !p.oobDataPresent)
        #expect(p.authReq.bondingFlags == 1)
        #expect(p.ioCapability.description == "DisplayYesNo")
        #expect(SMP.IOCapability(rawValue: 9).description == "Reserved (0x09)")
        #expect(SMP.Command.pairingFailed(reason: .dhKeyCheckFailed).code == .pairingFailed)
    }

    @Test(arguments: [
        ("01 03 00", DecodeError.Kind.truncated(needed: 6, available: 2), 1),
        ("06 00 01", .truncated(needed: 16, available: 2), 1),
        ("0c 00", .truncated(needed: 64, available: 1), 1),
        ("", .truncated(needed: 1, available: 0), 0),
    ])
    func rejectsShortCommands(hex: String, kind: DecodeError.Kind, offset: Int) {
        let result = S.run(hex) { r throws(DecodeError) in try SMP.decode(&r) }
        #expect(result == .failure(DecodeError(kind: kind, offset: offset, field: "")))
        let layer = S.show(hex) { SMPDisplay.decode(&$0) }
        #expect(layer.error == DecodeError(kind: kind, offset: offset, field: ""))
    }

    @Test func trailingBytesAreNoted() {
        let (result, remaining) = S.run(S.bytes("05 05 00")) { r throws(DecodeError) in try SMP.decode(&r) }
        #expect(result == .success(.pairingFailed(reason: .pairingNotSupported)))
        #expect(remaining == 1)
        #expect(S.show("05 05 00") { SMPDisplay.decode(&$0) }.notes == ["1 trailing byte: 00"])
    }
}

@Suite("SMP robustness")
struct SMPRobustnessTests {
    /// Every prefix decodes or throws (never traps): the empty one is refused and the whole vector
    /// accepted, by the typed and the display decoder alike.
    @Test func everyPrefixDecodesOrThrows() {
        for (hex, _) in smpVectors {
            let typed = S.prefixOutcomes(S.bytes(hex)) { r in (try? SMP.decode(&r)) != nil }
            #expect(typed.first == false && typed.last == true, "\(hex): \(typed)")
            let shown = S.prefixOutcomes(S.bytes(hex)) { r in SMPDisplay.decode(&r).error == nil }
            #expect(shown.first == false && shown.last == true, "\(hex): \(shown)")
        }
    }

    @Test func randomBuffers() {
        let leads = Array(UInt8(0)...0x0F)
        let typed = S.fuzzOutcomes(seed: 0x5E9, maxLength: 80, leads: leads) { r in (try? SMP.decode(&r)) != nil }
        let shown = S.fuzzOutcomes(seed: 0x5EA, maxLength: 80, leads: leads) { r in SMPDisplay.decode(&r).error == nil }
        #expect(typed.both && shown.both, "typed \(typed); display \(shown)")
    }

    /// The replay's `smp-random` commands come from the rows: those carrying key material, and
    /// Central Identification (random EDIV and Rand, Part H 2.4.2.3), Core v5.4 Vol 3 Part H 3.5–3.6.
    @Test func randomOrKeyCodesAreTheKeyRowsAndCentralIdentification() {
        #expect(SMPDecoding.randomOrKeyCodes == [
            .pairingConfirm, .pairingRandom, .encryptionInformation, .centralIdentification,
            .identityInformation, .signingInformation, .pairingPublicKey, .pairingDHKeyCheck,
        ])
        #expect(!SMPDecoding.randomOrKeyCodes.contains(.identityAddressInformation))
    }
}
