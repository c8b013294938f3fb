import BLEBytes
import BLECapture
import BLEProtocol

/// SMP on the fixed channel 0x0006 (Core v5.4 Vol 3 Part H): pairing attempts, failures, keys.
extension SessionModel {
    func smp(_ cmd: SMP.Command, _ c: Connection, frame: Frame, sent: Bool) {
        let who = sent ? "host" : "peer"
        switch cmd {
        case let .pairingRequest(p):
            c.smp.pairingRequests += 1
            emit(.security, .pairingRequest(c, frame: frame.number, time: frame.timestamp, sent: sent))
            c.note(frame.timestamp, frame.number, .security,
                   "pairing requested by \(who): IO \(p.ioCapability), " + Self.authText(p.authReq) + ", key size \(p.maxEncryptionKeySize)",
                   .init(security: .pairingRequested))
        case .securityRequest:
            c.note(frame.timestamp, frame.number, .security, "security requested by \(who)", .init(security: .securityRequested))
        case let .pairingFailed(reason):
            c.smp.failures.append((frame.number, reason, sent))
            emit(.security, .pairingFailed(c, frame: frame.number, time: frame.timestamp, reason: reason, sent: sent))
            c.note(frame.timestamp, frame.number, .security, "pairing failed (sent by \(who)): \(reason)", .init(security: .pairingFailed))
        case .encryptionInformation, .centralIdentification, .identityInformation, .identityAddressInformation, .signingInformation:
            c.smp.succeeded = true
            if let key = cmd.distributedKey, let name = SMP.KeyDistribution.names.name(UInt64(key.rawValue)) {
                let entry = SMPState.DistributedKey(key: key, sentByHost: sent)
                if !c.smp.keysDistributed.contains(entry) {
                    c.smp.keysDistributed.append(entry)
                    c.note(frame.timestamp, frame.number, .security, "key distributed: \(name) from \(who)", .init(security: .keyDistributed))
                }
            }
        case .pairingDHKeyCheck:
            if !sent || c.role == .peripheral { c.smp.succeeded = true }
        default:
            break
        }
    }

    /// `Bonding, MITM, SC` (or `no bonding`).
    static func authText(_ a: SMP.AuthReq) -> String {
        let names = SMP.AuthReq.names.flagNames(UInt64(a.rawValue)).names
        return names.isEmpty ? "no bonding, no MITM" : names.joined(separator: ", ")
    }
}
