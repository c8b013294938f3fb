import BLEProtocol

/// A live central's pairing with the twin, when the device paired in the recording with LE legacy
/// pairing (its Pairing Response has no Secure Connections bit): the twin answers with the
/// device's recorded Pairing Response (key distribution narrowed to what the central asked), its
/// recorded random, confirm values computed with c1 for Just Works (TK = 0), the STK from s1 for
/// the controller's key request, and the device's recorded keys once the link is encrypted
/// (Core v5.4 Vol 3 Part H 2.3.5.5, 2.4.4, 3.5, 3.6); also when the device could do Secure
/// Connections but the central cannot. Secure Connections pairing: `PeerSecureConnections.swift`.
struct LegacyPairingState {
    /// The Temporary Key (2.3.5): 0 for Just Works, the passkey for Passkey Entry (2.3.5.3),
    /// 16 bytes little-endian.
    var tk = [UInt8](repeating: 0, count: 16)
    /// The central's Pairing Request and the twin's Pairing Response, whole (c1 takes them so).
    var preq: [UInt8]
    var pres: [UInt8]
    /// The twin's Pairing Response parameters (what it promised to distribute).
    var response: SMP.PairingParameters
    var srand: [UInt8]
    var mconfirm: [UInt8]?
    var stk: [UInt8]?
}

extension PeerEngine {
    /// Handles an SMP PDU of a live pairing; false when the twin cannot pair this way (then
    /// `pairingRefusal` says why, if known).
    func livePairing(_ p: [UInt8], pdu: [UInt8]) -> Bool {
        guard TwinPDU.smpCode(p) == .pairingRequest else { return secureConnectionsPairing(p, pdu: pdu) || legacyPairing(p, pdu: pdu) }
        // Pairing Request: Secure Connections when the device's recorded Pairing Response and the
        // central both set the SC bit (AuthReq bit 3), else legacy pairing (2.3.5.6).
        (pairing, secure, pairingRefusal) = (nil, nil, nil)
        guard TwinPDU.smp(p, exact: true) != nil, let recorded = twin.story.pairingResponse else { return false }
        if TwinPDU.pairingResponse(recorded, answering: p)?.secureConnections == true {
            pairingRefusal = secureConnectionsRequest(p, recorded: recorded)
            return pairingRefusal == nil
        }
        guard let method = TwinPDU.pairingMethod(request: p, response: recorded) else { return false }
        switch method {
        case .justWorks: return legacyPairing(p, pdu: pdu)
        case .passkeyEntry:
            // A legacy pairing's passkey cannot be read back from the recording without trying
            // its 10^6 values against each address (the central's may be a resolvable one): only
            // `--passkey` gives it.
            guard let passkey = options.passkey else {
                pairingRefusal = "the central's Pairing Request and the device's recorded Pairing Response make this legacy pairing Passkey Entry: give the passkey with --passkey"
                return false
            }
            return legacyPairing(p, pdu: pdu, tk: Self.passkeyValue(passkey))
        default:
            pairingRefusal = "the central's Pairing Request and the device's recorded Pairing Response make this legacy pairing \(method.rawValue), which a twin cannot do"
            return false
        }
    }

    /// A passkey as a 128-bit value, little-endian (TK of legacy Passkey Entry, 2.3.5.3; ra/rb of
    /// Secure Connections Passkey Entry, 2.3.5.6.3).
    static func passkeyValue(_ passkey: UInt32) -> [UInt8] {
        (0 ..< 16).map { $0 < 4 ? UInt8(truncatingIfNeeded: passkey >> UInt32(8 * $0)) : 0 }
    }

    /// Legacy pairing's PDUs; false when it does not apply.
    func legacyPairing(_ p: [UInt8], pdu: [UInt8], tk: [UInt8]? = nil) -> Bool {
        guard let code = TwinPDU.smpCode(p) else { return false }
        switch code {
        case .pairingRequest:
            guard let recorded = twin.story.pairingResponse, let answer = TwinPDU.pairingResponse(recorded, answering: p) else { return false }
            let srand = twin.story.pairingRandom ?? (0..<16).map { _ in UInt8.random(in: 0...255) }
            pairing = LegacyPairingState(preq: p, pres: answer.pdu, response: answer.response, srand: srand)
            if let tk { pairing?.tk = tk }
            notes.append("pairing: legacy \(tk == nil ? "Just Works" : "Passkey Entry (the passkey of --passkey)") with the device's recorded Pairing Response and random")
            send(L2CAP.ChannelID.smp.rawValue, answer.pdu)
        case .pairingConfirm:   // answer with ours
            guard var state = pairing, let mconfirm = TwinPDU.smpValue(p), let confirm = confirmValue(state.srand, state) else { return false }
            state.mconfirm = mconfirm
            pairing = state
            sendSMP(.pairingConfirm, [SMP.Key.confirmValue: .bytes(confirm)])
        case .pairingRandom:   // check the central's confirm, answer with our random
            guard var state = pairing, let mconfirm = state.mconfirm, let mrand = TwinPDU.smpValue(p) else { return false }
            guard confirmValue(mrand, state) == mconfirm else {
                diverge(pdu, state.tk.allSatisfy { $0 == 0 } ? "the central's confirm value does not fit Just Works (TK 0): answered Pairing Failed (Confirm Value Failed)"
                        : "the central's confirm value does not fit the passkey: answered Pairing Failed (Confirm Value Failed)")
                sendPairingFailed(.confirmValueFailed)
                pairing = nil
                return true
            }
            state.stk = LegacyPairing.s1(k: state.tk, r1: state.srand, r2: mrand)
            pairing = state
            sendSMP(.pairingRandom, [SMP.Key.randomValue: .bytes(state.srand)])
        case .encryptionInformation, .centralIdentification, .identityInformation, .identityAddressInformation, .signingInformation:
            return pairing != nil   // the central's own keys: taken, not kept
        default:
            return false
        }
        return true
    }

    /// c1 with the pairing's TK, the central as initiator and the twin as responder.
    private func confirmValue(_ r: [UInt8], _ state: LegacyPairingState) -> [UInt8]? {
        guard let central = centralAddress, let own = advertisedAddress, let ownType = advertisedAddressType else { return nil }
        return LegacyPairing.c1(k: state.tk, r: r, preq: state.preq, pres: state.pres,
                                iat: central.type, ia: Self.bytes(central.address), rat: ownType.rawValue & 1, ra: Self.bytes(own))
    }

    /// Sends the SMP command `code` with its parameters by key, laid out by BLEProtocol's SMP table.
    func sendSMP(_ code: SMPCode, _ values: [ParamKey: SMPEncoding.Value]) {
        do {
            send(L2CAP.ChannelID.smp.rawValue, try SMPEncoding.command(code, values))
        } catch {
            notes.append("pairing: cannot build \(code): \(error)")
        }
    }

    /// Sends Pairing Failed (3.5.5) with `reason`.
    func sendPairingFailed(_ reason: SMPFailureReason) {
        sendSMP(.pairingFailed, [SMP.Key.reason: .int(UInt64(reason.rawValue))])
    }

    static func bytes(_ a: BDAddr) -> [UInt8] { (0..<6).map { UInt8(truncatingIfNeeded: a.value >> UInt64(8 * $0)) } }

    /// After a live pairing encrypted the link: the device's recorded keys the Pairing Response
    /// promised (EncKey: Encryption Information + Central Identification, legacy pairing only — with
    /// Secure Connections the LTK comes from f5 and EncKey is ignored, 3.6.1; IdKey: Identity
    /// Information + Identity Address Information; SignKey: Signing Information).
    func pairingKeyDistribution() -> [(pdu: [UInt8], timestamp: Int64)] {
        let keys: SMP.KeyDistribution
        if let state = pairing, state.stk != nil {
            keys = state.response.responderKeyDistribution
        } else if let state = secure, state.ltk != nil {
            keys = state.response.responderKeyDistribution.subtracting(.encKey)
        } else {
            return []
        }
        var out: [(pdu: [UInt8], timestamp: Int64)] = []
        for code in keys.commands {
            guard let payload = twin.story.keyDistribution[code] else {
                notes.append("pairing: the recording has no SMP 0x\(String(code.rawValue, radix: 16)) of the device to distribute")
                continue
            }
            out.append((L2CAPEncoding.basicFrame(channel: L2CAP.ChannelID.smp.rawValue, payload), 0))
        }
        return out
    }
}
