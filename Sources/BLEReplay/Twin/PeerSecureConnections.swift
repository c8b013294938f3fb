import BLEProtocol

/// A live central's LE Secure Connections pairing with the twin, when the device paired with
/// Secure Connections in the recording (its Pairing Response has the SC bit) and the central asks
/// for it too: the twin is the responder of Core v5.4 Vol 3 Part H 2.3.5.6.2 (Just Works, or
/// Numeric Comparison confirmed at once as the device did). It answers with the device's recorded
/// Pairing Response, a fresh P-256 key pair (3.5.6 Pairing Public Key), the confirm f4(PKbx, PKax,
/// Nb, 0), its random, and once the central's DHKey Check Ea = f6(MacKey, Na, Nb, 0, IOcapA, A, B)
/// is right, its own Eb (3.5.7); the LTK from f5 is the key of the central's encryption. P-256 and
/// AES-CMAC come from libcrypto (`SecureConnectionsCrypto.swift`).
struct SecureConnectionsState {
    /// The central's Pairing Request and the twin's Pairing Response.
    var request: SMP.PairingParameters
    var response: SMP.PairingParameters
    var method: SMP.PairingMethod
    /// Little-endian, as SMP carries them.
    var own: P256KeyPair?
    var peerX: [UInt8] = []
    var dhKey: [UInt8]?
    var nb: [UInt8] = (0 ..< 16).map { _ in UInt8.random(in: 0 ... 255) }
    var na: [UInt8]?
    var ltk: [UInt8]?
    /// Passkey Entry (2.3.5.6.3): the passkey, the round (0–19, bit `round` of the passkey), the
    /// central's commitment Cai of this round.
    var passkey: UInt32?
    var round = 0
    var cai: [UInt8]?
    /// The central sent the recording's own Public Key (a replayed pairing): the recorded answers
    /// are sent, and the recorded LTK encrypts.
    var replayed = false
}

extension PeerEngine {
    /// The central's Pairing Request when both sides ask for Secure Connections: the recorded
    /// Pairing Response if the method is Just Works or Numeric Comparison; else nil and the reason.
    func secureConnectionsRequest(_ p: [UInt8], recorded: [UInt8]) -> String? {
        guard let method = TwinPDU.pairingMethod(request: p, response: recorded) else { return "the central's Pairing Request or the recorded Pairing Response is malformed" }
        guard SecureConnectionsSupport.available else { return SecureConnectionsSupport.unavailable }
        let passkey = method == .passkeyEntry ? options.passkey ?? twin.story.recordedPasskey : nil
        guard method == .justWorks || method == .numericComparison || passkey != nil else {
            return "the central's Pairing Request and the device's recorded Pairing Response make this LE Secure Connections pairing \(method.rawValue), which a twin cannot do"
                + (method == .passkeyEntry ? " without a passkey (the recording shows none: give it with --passkey)" : "")
        }
        guard let pairing = TwinPDU.pairingResponse(recorded, answering: p) else { return "the central's Pairing Request or the recorded Pairing Response is malformed" }
        secure = SecureConnectionsState(request: pairing.request, response: pairing.response, method: method)
        secure?.passkey = passkey
        let source = options.passkey != nil ? "--passkey" : "the recorded pairing"
        notes.append("pairing: LE Secure Connections \(method.rawValue) with the device's recorded Pairing Response"
                     + (passkey.map { " (passkey \(Self.sixDigits($0)) from \(source))" } ?? ""))
        send(L2CAP.ChannelID.smp.rawValue, pairing.pdu)
        return nil
    }

    /// The PDUs after the Pairing Request; false when no Secure Connections pairing is under way.
    func secureConnectionsPairing(_ p: [UInt8], pdu: [UInt8]) -> Bool {
        guard var state = secure, !state.replayed else { return false }
        guard let code = TwinPDU.smpCode(p) else { return false }
        // The PDU is exactly its table row's size (no trailing bytes).
        let exact = TwinPDU.smp(p, exact: true) != nil
        // The 16-byte value of a Pairing Confirm, Random or DHKey Check (empty for other PDUs).
        let value = TwinPDU.smpValue(p) ?? []
        switch code {
        case .pairingPublicKey where exact:   // X, Y little-endian (3.5.6)
            guard case let .pairingPublicKey(xRange, yRange)? = TwinPDU.smp(p) else { return false }
            state.peerX = TwinPDU.bytes(xRange, of: p)
            guard let own = P256KeyPair(), let dhKey = own.dhKey(peerX: state.peerX.reversed(), peerY: TwinPDU.bytes(yRange, of: p).reversed()),
                  own.x != state.peerX.reversed() else {
                return fail(pdu, .dhKeyCheckFailed, "the central's public key is not a P-256 point (or is the twin's own): answered Pairing Failed (DHKey Check Failed)")
            }
            state.own = own
            state.dhKey = Array(dhKey.reversed())
            let pkbx = Array(own.x.reversed())
            let publicKey: [ParamKey: SMPEncoding.Value] = [SMP.Key.publicKeyX: .bytes(pkbx), SMP.Key.publicKeyY: .bytes(own.y.reversed())]
            if state.passkey != nil {   // Passkey Entry: the central commits first, each round (2.3.5.6.3)
                secure = state
                sendSMP(.pairingPublicKey, publicKey)
                return true
            }
            // Just Works / Numeric Comparison: the responder's commitment Cb = f4(PKbx, PKax, Nb, 0) (2.3.5.6.2).
            guard let cb = SecureConnections.f4(u: pkbx, v: state.peerX, x: state.nb, z: 0) else { return false }
            secure = state
            sendSMP(.pairingPublicKey, publicKey)
            sendSMP(.pairingConfirm, [SMP.Key.confirmValue: .bytes(cb)])
        case .pairingConfirm where exact && state.passkey != nil:   // Passkey Entry round: Cai; answer Cbi = f4(PKbx, PKax, Nbi, 0x80|rbi)
            guard let own = state.own, let passkey = state.passkey else { return false }
            state.cai = value
            state.nb = (0 ..< 16).map { _ in UInt8.random(in: 0 ... 255) }
            let bit = UInt8(truncatingIfNeeded: passkey >> UInt32(state.round)) & 1
            guard let cb = SecureConnections.f4(u: own.x.reversed(), v: state.peerX, x: state.nb, z: 0x80 | bit) else { return false }
            secure = state
            sendSMP(.pairingConfirm, [SMP.Key.confirmValue: .bytes(cb)])
        case .pairingRandom where exact && state.passkey != nil:   // Passkey Entry round: Nai; check Cai, answer Nbi
            guard let own = state.own, let passkey = state.passkey, let cai = state.cai else { return false }
            let na = value
            let bit = UInt8(truncatingIfNeeded: passkey >> UInt32(state.round)) & 1
            guard SecureConnections.f4(u: state.peerX, v: own.x.reversed(), x: na, z: 0x80 | bit) == cai else {
                return fail(pdu, .confirmValueFailed, "the central's confirm value of passkey round \(state.round + 1) does not fit the passkey: answered Pairing Failed (Confirm Value Failed)")
            }
            state.na = na
            state.round += 1
            state.cai = nil
            secure = state
            sendSMP(.pairingRandom, [SMP.Key.randomValue: .bytes(state.nb)])
        case .pairingRandom where exact:   // Na; answer with Nb
            guard let own = state.own else { return false }
            let na = value
            state.na = na
            secure = state
            if state.method == .numericComparison, let v = SecureConnections.g2(u: state.peerX, v: own.x.reversed(), x: na, y: state.nb) {
                notes.append("pairing: numeric comparison value \(Self.sixDigits(v)), confirmed as the device did")
            }
            sendSMP(.pairingRandom, [SMP.Key.randomValue: .bytes(state.nb)])
        case .pairingDHKeyCheck where exact:   // Ea; answer Eb (3.5.7)
            // A, B: the central's and the twin's addresses, 56 bits with the address type on top.
            guard let na = state.na, let w = state.dhKey, let ia = centralAddress, let ra = advertisedAddress, let rt = advertisedAddressType else { return false }
            let a = Self.bytes(ia.address) + [ia.type], b = Self.bytes(ra) + [rt.rawValue & 1]
            guard let keys = SecureConnections.f5(w: w, n1: na, n2: state.nb, a1: a, a2: b) else { return false }
            // r: 0 for Just Works / Numeric Comparison, the passkey (ra = rb) for Passkey Entry (2.3.5.6.5).
            let r = state.passkey.map(Self.passkeyValue) ?? [UInt8](repeating: 0, count: 16)
            // IOcapA / IOcapB: AuthReq || OOB flag || IO capability of the Pairing Request / Response.
            let ea = SecureConnections.f6(w: keys.macKey, n1: na, n2: state.nb, r: r, ioCap: state.request.ioCap, a1: a, a2: b)
            guard ea == value else {
                return fail(pdu, .dhKeyCheckFailed, "the central's DHKey check does not fit the keys and nonces exchanged: answered Pairing Failed (DHKey Check Failed)")
            }
            guard let eb = SecureConnections.f6(w: keys.macKey, n1: state.nb, n2: na, r: r, ioCap: state.response.ioCap, a1: b, a2: a) else { return false }
            // A negotiated key size under 16 zeroes the LTK's most significant bytes (2.3.4).
            let size = Int(max(7, min(16, min(state.request.maxEncryptionKeySize, state.response.maxEncryptionKeySize))))
            state.ltk = keys.ltk.enumerated().map { $0.offset < size ? $0.element : 0 }
            secure = state
            sendSMP(.pairingDHKeyCheck, [SMP.Key.dhKeyCheck: .bytes(eb)])
        case .encryptionInformation, .centralIdentification, .identityInformation, .identityAddressInformation, .signingInformation:
            return true   // the central's own keys: taken, not kept
        default:
            return false
        }
        return true
    }

    static func sixDigits(_ n: UInt32) -> String {
        let digits = String(n % 1_000_000)
        return String(repeating: "0", count: 6 - digits.count) + digits
    }

    /// Ends the pairing with Pairing Failed (`reason`, 3.5.5), reported as a divergence.
    private func fail(_ pdu: [UInt8], _ reason: SMPFailureReason, _ rule: String) -> Bool {
        diverge(pdu, rule)
        sendPairingFailed(reason)
        secure = nil
        return true
    }
}
