import Testing
import BLEBytes
@testable import BLEProtocol

private typealias S = ATTTestSupport
private func r(_ offset: Int, _ count: Int) -> ByteRange { ByteRange(offset: offset, count: count) }
private func packet(_ code: UInt8, _ id: UInt8, _ command: L2CAP.SignalingCommand) -> L2CAP.SignalingPacket {
    L2CAP.SignalingPacket(code: L2CAP.SignalingCode(code), identifier: id, command: command)
}

/// Signalling commands (Code, Identifier, Length, data), offsets from the Code byte.
let l2capSignalingVectors: [(String, L2CAP.SignalingPacket)] = [
    // Command Reject: Command not understood
    ("01 01 02 00 00 00", packet(0x01, 1, .commandReject(reason: 0, data: r(6, 0)))),
    // Command Reject: Signaling MTU exceeded, actual MTU 23
    ("01 02 04 00 01 00 17 00", packet(0x01, 2, .commandReject(reason: 1, data: r(6, 2)))),
    // Command Reject: Invalid CID in request, local 0x0040, remote 0x0041
    ("01 03 06 00 02 00 40 00 41 00", packet(0x01, 3, .commandReject(reason: 2, data: r(6, 4)))),
    ("02 01 04 00 01 00 40 00", packet(0x02, 1, .connectionRequest(psm: 1, sourceCID: 0x40))),
    ("03 01 08 00 41 00 40 00 00 00 00 00", packet(0x03, 1, .connectionResponse(destinationCID: 0x41, sourceCID: 0x40, result: 0, status: 0))),
    // Configuration Request: destination 0x0041, flags 0, option MTU (01 02) = 672
    ("04 02 08 00 41 00 00 00 01 02 a0 02", packet(0x04, 2, .configurationRequest(destinationCID: 0x41, flags: 0, options: r(8, 4)))),
    ("05 02 0a 00 40 00 00 00 00 00 01 02 a0 02", packet(0x05, 2, .configurationResponse(sourceCID: 0x40, flags: 0, result: 0, options: r(10, 4)))),
    ("06 04 04 00 40 00 41 00", packet(0x06, 4, .disconnectionRequest(destinationCID: 0x40, sourceCID: 0x41))),
    ("07 04 04 00 40 00 41 00", packet(0x07, 4, .disconnectionResponse(destinationCID: 0x40, sourceCID: 0x41))),
    ("08 03 02 00 aa bb", packet(0x08, 3, .echoRequest(data: r(4, 2)))),
    ("09 03 00 00", packet(0x09, 3, .echoResponse(data: r(4, 0)))),
    ("0a 04 02 00 02 00", packet(0x0A, 4, .informationRequest(infoType: 2))),
    // Information Response: extended features, success, mask 0x000002b8
    ("0b 04 08 00 02 00 00 00 b8 02 00 00", packet(0x0B, 4, .informationResponse(infoType: 2, result: 0, data: r(8, 4)))),
    ("0c 05 05 00 01 00 40 00 01", packet(0x0C, 5, .amp(.createChannelRequest, payload: r(4, 5)))),
    ("0d 05 08 00 41 00 40 00 00 00 00 00", packet(0x0D, 5, .amp(.createChannelResponse, payload: r(4, 8)))),
    ("0e 06 03 00 40 00 01", packet(0x0E, 6, .amp(.moveChannelRequest, payload: r(4, 3)))),
    ("0f 06 04 00 40 00 00 00", packet(0x0F, 6, .amp(.moveChannelResponse, payload: r(4, 4)))),
    ("10 07 04 00 40 00 00 00", packet(0x10, 7, .amp(.moveChannelConfirmationRequest, payload: r(4, 4)))),
    ("11 07 02 00 40 00", packet(0x11, 7, .amp(.moveChannelConfirmationResponse, payload: r(4, 2)))),
    // Connection Parameter Update Request: 30–50 ms (24, 40 × 1.25 ms), latency 0, timeout 420 ms (42 × 10 ms)
    ("12 05 08 00 18 00 28 00 00 00 2a 00", packet(0x12, 5, .connectionParameterUpdateRequest(
        .init(intervalMinUnits: 24, intervalMaxUnits: 40, latency: 0, timeoutUnits: 42)))),
    ("13 05 02 00 00 00", packet(0x13, 5, .connectionParameterUpdateResponse(result: 0))),
    ("13 05 02 00 01 00", packet(0x13, 5, .connectionParameterUpdateResponse(result: 1))),
    // LE Credit Based Connection Request: SPSM 0x0080, source 0x0040, MTU 512, MPS 247, 10 credits
    ("14 06 0a 00 80 00 40 00 00 02 f7 00 0a 00", packet(0x14, 6, .leCreditBasedConnectionRequest(
        .init(spsm: 0x80, sourceCID: 0x40, mtu: 512, mps: 247, initialCredits: 10)))),
    // LE Credit Based Connection Response: destination 0x0041, MTU 512, MPS 247, 5 credits, success
    ("15 06 0a 00 41 00 00 02 f7 00 05 00 00 00", packet(0x15, 6, .leCreditBasedConnectionResponse(
        .init(destinationCID: 0x41, mtu: 512, mps: 247, initialCredits: 5, result: 0)))),
    ("16 07 04 00 40 00 08 00", packet(0x16, 7, .flowControlCreditIndication(cid: 0x40, credits: 8))),
    // Credit Based Connection Request: SPSM 0x0027, MTU 512, MPS 247, 10 credits, sources 0x0040, 0x0041
    ("17 08 0c 00 27 00 00 02 f7 00 0a 00 40 00 41 00", packet(0x17, 8, .creditBasedConnectionRequest(
        .init(spsm: 0x27, mtu: 512, mps: 247, initialCredits: 10, sourceCIDs: [0x40, 0x41])))),
    ("18 08 0c 00 00 02 f7 00 0a 00 00 00 50 00 51 00", packet(0x18, 8, .creditBasedConnectionResponse(
        .init(mtu: 512, mps: 247, initialCredits: 10, result: 0, destinationCIDs: [0x50, 0x51])))),
    ("19 09 08 00 00 04 f7 00 50 00 51 00", packet(0x19, 9, .creditBasedReconfigureRequest(mtu: 1024, mps: 247, destinationCIDs: [0x50, 0x51]))),
    ("1a 09 02 00 00 00", packet(0x1A, 9, .creditBasedReconfigureResponse(result: 0))),
    ("30 09 02 00 aa bb", packet(0x30, 9, .unknown(L2CAP.SignalingCode(0x30), payload: r(4, 2)))),
]

/// The LE signalling commands of Core v5.4 Vol 3 Part A 4, with their display names.
let l2capLECommands: [(UInt8, String)] = [
    (0x01, "Command Reject"), (0x06, "Disconnection Request"), (0x07, "Disconnection Response"),
    (0x12, "Connection Parameter Update Request"), (0x13, "Connection Parameter Update Response"),
    (0x14, "LE Credit Based Connection Request"), (0x15, "LE Credit Based Connection Response"),
    (0x16, "Flow Control Credit Indication"), (0x17, "Credit Based Connection Request"),
    (0x18, "Credit Based Connection Response"), (0x19, "Credit Based Reconfigure Request"),
    (0x1A, "Credit Based Reconfigure Response"),
]

let l2capSignalingMalformed: [(String, DecodeError.Kind, Int)] = [
    // Connection Parameter Update Request declaring 6 bytes: the command needs 8
    ("12 05 06 00 18 00 28 00 00 00", .truncated(needed: 8, available: 6), 4),
    // Length 8 with 2 bytes present
    ("12 05 08 00 18 00", .lengthMismatch(declared: 8, actual: 2), 2),
    // Credit Based Connection Request with an odd number of CID bytes
    ("17 08 0b 00 27 00 00 02 f7 00 0a 00 40 00 41", .lengthMismatch(declared: 2, actual: 3), 12),
    ("01", .truncated(needed: 1, available: 0), 1),
    ("16 07 04", .truncated(needed: 2, available: 1), 2),
]

/// Complete L2CAP PDUs (basic header first).
let l2capPDUVectors: [(String, L2CAP.PDU)] = [
    ("05 00 04 00 1b 0c 00 06 48", .att(.handleValueNotification(handle: 0x0C, value: r(7, 2)))),
    // SMP Pairing Request: NoInputNoOutput, no OOB, Bonding|MITM|SC|CT2 (0x2d), 16, keys 0x0f / 0x0f
    ("07 00 06 00 01 03 00 2d 10 0f 0f", .smp(.pairingRequest(.init(ioCapability: .noInputNoOutput, oobDataFlag: 0,
        authReq: [.bonding, .mitm, .secureConnections, .ct2], maxEncryptionKeySize: 16,
        initiatorKeyDistribution: [.encKey, .idKey, .signKey, .linkKey], responderKeyDistribution: [.encKey, .idKey, .signKey, .linkKey])))),
    ("02 00 07 00 05 05", .brEdrSMP(.pairingFailed(reason: .pairingNotSupported))),
    ("0c 00 05 00 12 05 08 00 18 00 28 00 00 00 2a 00", .leSignaling(packet(0x12, 5, .connectionParameterUpdateRequest(
        .init(intervalMinUnits: 24, intervalMaxUnits: 40, latency: 0, timeoutUnits: 42))))),
    ("0c 00 01 00 02 01 04 00 01 00 40 00 08 03 00 00", .signaling(commands: r(4, 12))),
    ("04 00 40 00 0a 00 aa bb", .channel(L2CAP.ChannelID(0x40), payload: r(4, 4))),
    ("02 00 02 00 01 00", .channel(.connectionless, payload: r(4, 2))),
    ("01 00 04 00 00", .att(.unknown(ATTOpcode(0), payload: r(5, 0)))),
]

@Suite("L2CAP signalling")
struct L2CAPSignalingTests {
    @Test(arguments: l2capSignalingVectors)
    func decodesEveryCommand(hex: String, expected: L2CAP.SignalingPacket) {
        let (result, remaining) = S.run(S.bytes(hex)) { r throws(DecodeError) in try L2CAP.decodeSignaling(&r) }
        #expect(result == .success(expected))
        #expect(remaining == 0)
    }

    @Test(arguments: l2capSignalingMalformed)
    func rejectsMalformed(hex: String, kind: DecodeError.Kind, offset: Int) {
        let result = S.run(hex) { r throws(DecodeError) in try L2CAP.decodeSignaling(&r) }
        #expect(result == .failure(DecodeError(kind: kind, offset: offset, field: "")))
    }

    @Test func tableCoversEveryCode() {
        #expect(L2CAPSignalingTable.knownCodes.map(\.rawValue) == Array(1...0x1A))
        #expect(L2CAPSignalingTable.duplicateCodes.isEmpty)
        let covered = Set(l2capSignalingVectors.compactMap { S.bytes($0.0).first })
        for code in UInt8(1)...0x1A { #expect(covered.contains(code)) }
    }

    @Test(arguments: l2capLECommands)
    func leCommandsDisplayByName(code: UInt8, name: String) {
        let vector = l2capSignalingVectors.first { S.bytes($0.0).first == code }?.0 ?? ""
        let body = S.bytes(vector)
        // Wrap in a basic header on the LE signalling channel.
        let pdu = [UInt8(body.count), 0, 0x05, 0x00] + body
        let layers = S.show(pdu) { L2CAPDisplay.decode(pdu: &$0, context: .none) }
        #expect(layers.count == 2)
        #expect(layers[0].name == "LE L2CAP Signaling" && layers[0].error == nil)
        #expect(layers[1].protocolName.description == "LE L2CAP")
        #expect(layers[1].name == name)
        #expect(layers[1].error == nil && layers[1].notes.isEmpty)
        #expect(L2CAP.SignalingCode(code).name == name)
    }

    @Test func connectionParameterUpdateDisplay() {
        let layers = S.show("0c 00 05 00 12 05 08 00 18 00 28 00 00 00 2a 00") { L2CAPDisplay.decode(pdu: &$0, context: .none) }
        #expect(S.lines(layers[1]) == ["Identifier: 5", "Min Interval: 30.0 msec", "Max Interval: 50.0 msec",
                                       "Peripheral Latency: 0", "Timeout Multiplier: 420.0 msec"])
        #expect(layers[1].code == "0x12" && layers[1].length == 8)
    }

    @Test func resultsByName() {
        let reject = S.show("06 00 05 00 13 05 02 00 01 00") { L2CAPDisplay.decode(pdu: &$0, context: .none) }
        #expect(S.has(reject[1], "Result: Connection Parameters rejected (0x0001)"))
        let le = S.show("0e 00 05 00 15 06 0a 00 00 00 00 00 00 00 00 00 05 00") { L2CAPDisplay.decode(pdu: &$0, context: .none) }
        #expect(S.has(le[1], "Result: Connection refused - insufficient authentication (0x0005)"))
        let ecred = S.show("10 00 05 00 18 08 0c 00 00 02 f7 00 0a 00 04 00 50 00 00 00") { L2CAPDisplay.decode(pdu: &$0, context: .none) }
        #expect(S.has(ecred[1], "Result: Some connections refused - insufficient resources available (0x0004)"))
        #expect(S.has(ecred[1], "Destination CID: 0x0050, 0x0000"))
        let mtu = S.show("08 00 05 00 01 02 04 00 01 00 17 00") { L2CAPDisplay.decode(pdu: &$0, context: .none) }
        #expect(S.lines(mtu[1]) == ["Identifier: 2", "Reason: Signaling MTU exceeded (0x0001)", "Actual MTU: 23"])
    }

    @Test func requestResponsePairs() {
        #expect(L2CAP.SignalingCode.connectionParameterUpdateRequest.responseCode == .connectionParameterUpdateResponse)
        #expect(L2CAP.SignalingCode.leCreditBasedConnectionRequest.responseCode == .leCreditBasedConnectionResponse)
        #expect(L2CAP.SignalingCode.creditBasedReconfigureRequest.responseCode == .creditBasedReconfigureResponse)
        #expect(L2CAP.SignalingCode.flowControlCreditIndication.responseCode == nil)
    }

    @Test func connectionParameterDurations() {
        let p = L2CAP.ConnectionParameterUpdateRequest(intervalMinUnits: 24, intervalMaxUnits: 40, latency: 0, timeoutUnits: 42)
        #expect(p.intervalMin == .milliseconds(30))
        #expect(p.intervalMax == .milliseconds(50))
        #expect(p.timeout == .milliseconds(420))
    }
}

@Suite("L2CAP PDUs")
struct L2CAPPDUTests {
    @Test(arguments: l2capPDUVectors)
    func decodesByChannel(hex: String, expected: L2CAP.PDU) {
        let (result, remaining) = S.run(S.bytes(hex)) { r throws(DecodeError) in try L2CAP.decode(&r) }
        #expect(result == .success(expected))
        #expect(remaining == 0)
    }

    @Test func headerLongerThanTheBytesThrows() {
        let result = S.run("09 00 04 00 1b") { r throws(DecodeError) in try L2CAP.decode(&r) }
        #expect(result == .failure(DecodeError(kind: .lengthMismatch(declared: 9, actual: 1), offset: 0, field: "")))
        let layers = S.show("09 00 04 00 1b") { L2CAPDisplay.decode(pdu: &$0, context: .none) }
        #expect(layers[0].error == DecodeError(kind: .lengthMismatch(declared: 9, actual: 1), offset: 0, field: ""))
        #expect(layers.count == 2)   // the ATT layer still shows what is there
    }

    @Test func bytesAfterTheDeclaredLengthAreLeft() {
        let (result, remaining) = S.run(S.bytes("01 00 04 00 1e ff")) { r throws(DecodeError) in try L2CAP.decode(&r) }
        #expect(result == .success(.att(.handleValueConfirmation)))
        #expect(remaining == 1)
        let layers = S.show("01 00 04 00 1e ff") { L2CAPDisplay.decode(pdu: &$0, context: .none) }
        #expect(layers[0].notes == ["1 byte after the L2CAP PDU: ff"])
    }

    @Test func displayStacksTheChannelLayer() {
        let att = S.show("05 00 04 00 1b 0c 00 06 48") { L2CAPDisplay.decode(pdu: &$0, context: .none) }
        #expect(att.map(\.protocolName.description) == ["L2CAP", "ATT"])
        #expect(att[0].name == "ATT" && att[0].code == "0x0004" && att[0].length == 5)
        #expect(S.lines(att[0]) == ["Length: 5", "CID: ATT (0x0004)"])
        #expect(att[1].name == "Handle Value Notification")
        let smp = S.show("07 00 06 00 01 03 00 2d 10 0f 0f") { L2CAPDisplay.decode(pdu: &$0, context: .none) }
        #expect(smp.map(\.protocolName.description) == ["L2CAP", "SMP"])
        #expect(smp[1].name == "Pairing Request")
        let brSMP = S.show("02 00 07 00 05 05") { L2CAPDisplay.decode(pdu: &$0, context: .none) }
        #expect(brSMP[1].protocolName.description == "BR/EDR SMP")
        // BR/EDR signalling: two commands in one C-frame → one layer each.
        let br = S.show("0c 00 01 00 02 01 04 00 01 00 40 00 08 03 00 00") { L2CAPDisplay.decode(pdu: &$0, context: .none) }
        #expect(br.map(\.name) == ["L2CAP Signaling", "Connection Request", "Echo Request"])
        #expect(br[1].protocolName.description == "L2CAP")
        let dynamic = S.show("04 00 40 00 0a 00 aa bb") { L2CAPDisplay.decode(pdu: &$0, context: .none) }
        #expect(dynamic.count == 1)
        #expect(S.lines(dynamic[0]) == ["Length: 4", "CID: Dynamic (0x0040)", "Payload: 0a 00 aa bb"])
    }

    @Test func leSignalingCarriesOneCommand() {
        let layers = S.show("08 00 05 00 13 05 02 00 00 00 16 07") { L2CAPDisplay.decode(pdu: &$0, context: .none) }
        #expect(layers.count == 2)
        #expect(layers[0].notes == ["2 bytes after the LE signalling command: 16 07"])
    }

    @Test func kFrames() {
        let first = S.run("0a 00 01 02 03") { r throws(DecodeError) in try L2CAP.decodeKFrame(&r, isFirstKFrame: true) }
        #expect(first == .success(L2CAP.KFrame(sduLength: 10, payload: r(2, 3))))
        let next = S.run("0a 00 01 02 03") { r throws(DecodeError) in try L2CAP.decodeKFrame(&r, isFirstKFrame: false) }
        #expect(next == .success(L2CAP.KFrame(sduLength: nil, payload: r(0, 5))))
        let short = S.run("0a") { r throws(DecodeError) in try L2CAP.decodeKFrame(&r, isFirstKFrame: true) }
        #expect(short == .failure(DecodeError(kind: .truncated(needed: 2, available: 1), offset: 0, field: "")))

        #expect(S.render(S.show("0a 00 01 02 03") { L2CAPDisplay.kFrame(&$0, isFirstKFrame: true) }) == ["SDU Length: 10", "Payload: 01 02 03"])
        #expect(S.render(S.show("0a 00 01 02 03") { L2CAPDisplay.kFrame(&$0, isFirstKFrame: false) }) == ["Payload: 0a 00 01 02 03"])
        let layers = S.show("07 00 41 00 05 00 68 65 6c 6c 6f") { L2CAPDisplay.decode(pdu: &$0, context: .none, isFirstKFrame: true) }
        #expect(S.lines(layers[0]) == ["Length: 7", "CID: Dynamic (0x0041)", "SDU Length: 5", "Payload: 68 65 6c 6c 6f"])
    }

    @Test func channelNames() {
        #expect(L2CAP.ChannelID.att.description == "ATT (0x0004)")
        #expect(L2CAP.ChannelID.leSignaling.name == "LE L2CAP Signaling")
        #expect(L2CAP.ChannelID(0x0040).isLEDynamic && !L2CAP.ChannelID(0x0080).isLEDynamic)
        #expect(L2CAP.ChannelID(0x0020).name == "Reserved")
    }
}

@Suite("L2CAP robustness")
struct L2CAPRobustnessTests {
    /// Every prefix decodes or throws (never traps); the empty prefix is refused and the whole
    /// vector accepted, by the typed and the display decoder alike.
    @Test func everyPrefixDecodesOrThrows() {
        for (hex, _) in l2capSignalingVectors {
            let typed = S.prefixOutcomes(S.bytes(hex)) { r in (try? L2CAP.decodeSignaling(&r)) != nil }
            #expect(typed.first == false && typed.last == true, "\(hex): \(typed)")
            let shown = S.prefixOutcomes(S.bytes(hex)) { r in L2CAPDisplay.signaling(&r, protocolName: "LE L2CAP").error == nil }
            #expect(shown.first == false && shown.last == true, "\(hex): \(shown)")
        }
        for (hex, _) in l2capPDUVectors {
            let typed = S.prefixOutcomes(S.bytes(hex)) { r in (try? L2CAP.decode(&r)) != nil }
            #expect(typed.first == false && typed.last == true, "\(hex): \(typed)")
            let shown = S.prefixOutcomes(S.bytes(hex)) { r in
                L2CAPDisplay.decode(pdu: &r, context: .none, isFirstKFrame: true).allSatisfy { $0.error == nil }
            }
            #expect(shown.first == false && shown.last == true, "\(hex): \(shown)")
        }
    }

    /// Random payloads behind a consistent basic header on the interesting channels, so the
    /// channel decoders (not the header check) get the random bytes.
    static func pdus(seed: UInt64, count: Int = 10_000, _ body: (inout ByteReader) -> Bool) -> ATTTestSupport.Outcomes {
        var outcomes = S.Outcomes()
        var rng = ATTTestSplitMix64(seed: seed)
        let cids: [UInt16] = [0x0001, 0x0004, 0x0005, 0x0006, 0x0007, 0x0002, 0x0040, 0x0003]
        for _ in 0..<count {
            let length = Int(rng.next() % 40)
            var payload = (0..<length).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
            if length > 0, rng.next() & 1 == 0 { payload[0] = UInt8(truncatingIfNeeded: rng.next() % 0x1C) }   // known codes
            if length > 3, rng.next() & 1 == 0 { payload[2] = UInt8(length - 4); payload[3] = 0 }              // plausible Length
            let cid = rng.next() & 7 == 0 ? UInt16(truncatingIfNeeded: rng.next()) : cids[Int(rng.next() % UInt64(cids.count))]
            var declared = UInt16(length)
            if rng.next() % 8 == 0 { declared = UInt16(truncatingIfNeeded: rng.next()) }   // sometimes a lying header
            let pdu = [UInt8(declared & 0xFF), UInt8(declared >> 8), UInt8(cid & 0xFF), UInt8(cid >> 8)] + payload
            outcomes.note(S.show(pdu, body))
        }
        return outcomes
    }

    // The random runs never trap, and reach both the decoded and the refused path.

    @Test func randomPDUsThroughTheTypedDecoder() {
        let o = Self.pdus(seed: 0x12CA) { r in (try? L2CAP.decode(&r)) != nil }
        #expect(o.both, "\(o)")
    }

    @Test func randomPDUsThroughTheDisplayDecoder() {
        let o = Self.pdus(seed: 0x12CB) { r in
            L2CAPDisplay.decode(pdu: &r, context: ATTDisplayTests.heartRate, isFirstKFrame: true).allSatisfy { $0.error == nil }
        }
        #expect(o.both, "\(o)")
    }

    @Test func randomSignalingCommands() {
        let leads = Array(UInt8(0)...0x1B)
        let typed = S.fuzzOutcomes(seed: 0x516, leads: leads) { r in (try? L2CAP.decodeSignaling(&r)) != nil }
        let shown = S.fuzzOutcomes(seed: 0x517, leads: leads) { r in L2CAPDisplay.signaling(&r, protocolName: "LE L2CAP").error == nil }
        let kFrames = S.fuzzOutcomes(seed: 0x518) { r in (try? L2CAP.decodeKFrame(&r, isFirstKFrame: true)) != nil }
        #expect(typed.both && shown.both && kFrames.both, "typed \(typed); display \(shown); K-frames \(kFrames)")
    }

    @Test func randomBuffersAsWholePDUs() {
        var typed = S.Outcomes()
        let shown = S.fuzzOutcomes(seed: 0x519) { r in
            var copy = r
            typed.note((try? L2CAP.decode(&copy)) != nil)
            return L2CAPDisplay.decode(pdu: &r, context: .none).allSatisfy { $0.error == nil }
        }
        #expect(typed.both && shown.both, "typed \(typed); display \(shown)")
    }
}
