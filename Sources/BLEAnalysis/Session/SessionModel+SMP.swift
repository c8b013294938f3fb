import BLEBytes
import BLECapture
import BLEProtocol

/// SMP on the fixed channel 0x0006 (Core v5.4 Vol 3 Part H): pairing attempts, failures, keys.
extension SessionModel {
    func smp(_ cmd: SMP.Command, _ c: Connection, frame: Frame, sent: Bool) {
        tellPairing(cmd, c, frame: frame, sent: sent)
        switch cmd {
        case let .pairingRequest(p):
            c.smp.pairingRequests += 1
            emit(.security, .pairingRequest(c, frame: frame.number, time: frame.timestamp, sent: sent))
            c.note(frame.timestamp, frame.number, .security,
                   .pairingRequested(byHost: sent, io: p.ioCapability, authReq: p.authReq, keySize: p.maxEncryptionKeySize),
                   .init(security: .pairingRequested))
        case .securityRequest:
            c.note(frame.timestamp, frame.number, .security, .securityRequested(byHost: sent), .init(security: .securityRequested))
        case let .pairingFailed(reason):
            c.smp.failures.append((frame.number, reason, sent))
            emit(.security, .pairingFailed(c, frame: frame.number, time: frame.timestamp, reason: reason, sent: sent))
            c.note(frame.timestamp, frame.number, .security, .pairingFailed(byHost: sent, reason: reason), .init(security: .pairingFailed))
        case .encryptionInformation, .centralIdentification, .identityInformation, .identityAddressInformation, .signingInformation:
            c.smp.succeeded = true
            if !sent, case let .identityAddressInformation(_, address) = cmd {
                c.peerIdentityAddress = address
                for k in c.longTermKeys where bondedIdentities.count < Self.maxClassicPeers { bondedIdentities[k] = address }
            }
            if !sent, case let .encryptionInformation(range) = cmd, let ltk = copy(range, frame: frame) { rememberKey(ltk, c) }
            if let key = cmd.distributedKey, SMP.KeyDistribution.names.name(UInt64(key.rawValue)) != nil {
                let entry = SMPState.DistributedKey(key: key, sentByHost: sent)
                if !c.smp.keysDistributed.contains(entry) {
                    c.smp.keysDistributed.append(entry)
                    c.note(frame.timestamp, frame.number, .security, .keyDistributed(key, byHost: sent), .init(security: .keyDistributed))
                }
            }
        case .pairingDHKeyCheck:
            if !sent || c.role == .peripheral { c.smp.succeeded = true }
        default:
            break
        }
    }

    /// The pairing story (`Connection.pairings`): a Pairing Request opens one, every SMP PDU of it
    /// moves its last step, Pairing Failed or key distribution ends it (encryption with the new key:
    /// `pairingEncrypted`).
    private func tellPairing(_ cmd: SMP.Command, _ c: Connection, frame: Frame, sent: Bool) {
        let mark = LinkForensics.Mark(frame: frame.number, time: frame.timestamp)
        if case let .pairingRequest(p) = cmd {
            guard c.pairings.count < Connection.maxPairings else { return }
            c.pairings.append(PairingStory(requestFrame: frame.number, requestTime: frame.timestamp, initiatorIsHost: sent, request: p,
                                           last: mark, lastCode: cmd.code, lastSentByHost: sent))
            return
        }
        guard let i = c.pairings.indices.last, c.pairings[i].outcome == .open else { return }
        if case .securityRequest = cmd { return }
        if case .pairingFailed = cmd {
            c.pairings[i].failedAfter = c.pairings[i].lastCode
            c.pairings[i].failedAfterMicros = frame.timestamp - c.pairings[i].last.time
        }
        c.pairings[i].last = mark
        c.pairings[i].lastCode = cmd.code
        c.pairings[i].lastSentByHost = sent
        switch cmd {
        case let .pairingResponse(p):
            c.pairings[i].response = p
            c.pairings[i].responseFrame = frame.number
            c.pairings[i].responseTime = frame.timestamp
            let story = c.pairings[i]
            if let method = story.method, let sc = story.secureConnections, let keySize = story.keySize {
                let (host, peer) = story.initiatorIsHost ? (story.request, p) : (p, story.request)
                c.note(frame.timestamp, frame.number, .security,
                       .pairingMethod(secureConnections: sc, method: method, hostIO: host.ioCapability, peerIO: peer.ioCapability,
                                      keySize: keySize, bonding: story.bonding))
            }
        case let .pairingFailed(reason):
            c.pairings[i].outcome = .failed(reason: reason, sentByHost: sent)
            c.pairings[i].outcomeFrame = frame.number
        case .encryptionInformation, .centralIdentification, .identityInformation, .identityAddressInformation, .signingInformation:
            c.pairings[i].outcome = .succeeded
            c.pairings[i].outcomeFrame = frame.number
        default:
            break
        }
    }

    /// Encryption came on while a pairing was open: the new key works (keys may follow).
    func pairingEncrypted(_ c: Connection, frame: Int) {
        guard let i = c.pairings.indices.last, c.pairings[i].outcome == .open, c.pairings[i].response != nil else { return }
        c.pairings[i].outcome = .succeeded
        c.pairings[i].outcomeFrame = frame
    }
}

extension SessionModel {
    /// Keeps a Long Term Key of `c`'s link; a key of an earlier bond names the peer's identity
    /// address on a link from a new resolvable private address (no pairing, so no Identity Address
    /// Information on this link). All-zero keys (a redacted capture zeroes them) prove nothing.
    func rememberKey(_ ltk: [UInt8], _ c: Connection) {
        guard ltk.contains(where: { $0 != 0 }), !c.longTermKeys.contains(ltk), c.longTermKeys.count < 4 else { return }
        c.longTermKeys.append(ltk)
        if c.peerIdentityAddress == nil, let identity = bondedIdentities[ltk] { c.peerIdentityAddress = identity }
    }
}
