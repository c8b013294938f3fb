import BLEProtocol

/// Links each consequence to its cause when the pass ends, and folds what is one problem into one
/// finding (docs/RULES.md "Causes"):
/// - a disconnect carries why the link ended (`Connection.endCause`), and its severity and actor
///   follow the cause;
/// - a request that died with a lost link, and an encryption start cut by the loss, are the loss's
///   consequences: folded into its `link.disconnect`;
/// - an ATT or SMP transaction whose 30 s timer ended the link keeps its own finding, with the
///   disconnect folded into it;
/// - one Error Response is one finding (`gatt.subscription-failed` keeps it, `security.insufficient`
///   folds in); a pairing that fails again and again on one connection is one finding with a count.
enum Causes {
    static func link(_ findings: inout [Finding], _ model: SessionModel) {
        // A summarised connection's findings were linked when it was summarised (`DetectorEngine.retire`).
        func connection(_ f: Finding) -> Connection? { f.connectionIndex.flatMap(model.connection) }
        var disconnectOf: [Int: Int] = [:]
        for (i, f) in findings.enumerated() where f.rule == Disconnects.rule.id {
            if let n = f.connectionIndex { disconnectOf[n] = i }
        }
        var dropped = Set<Int>()
        func fold(_ i: Int, into target: Int?) {
            guard let target else { return }
            dropped.insert(i)
            findings[target].fold(findings[i])
        }

        // Disconnects: why, and what that makes of them.
        for i in disconnectOf.values {
            guard let c = connection(findings[i]) else { continue }
            findings[i].status = c.lifecycle.disconnectReason?.rawValue
            guard let end = c.endCause else { continue }
            findings[i].cause = end.cause
            if end.severity > findings[i].severity { findings[i].severity = end.severity }
            if findings[i].severity != .info { findings[i].actor = end.actor }
        }

        var subscriptionErrors: [Int: Int] = [:]   // Error Response frame → finding
        for (i, f) in findings.enumerated() where f.rule == SubscriptionFailed.rule.id { if let k = f.frames.first { subscriptionErrors[k] = i } }
        var firstPairingFailure: [String: Int] = [:]  // peer (address, else connection) → finding
        var timeouts: [Int: Int] = [:]             // timed-out request frame → att.timeout finding
        for (i, f) in findings.enumerated() where f.rule == ATTTimeout.rule.id { if let k = f.frames.first { timeouts[k] = i } }

        for i in findings.indices {
            let f = findings[i]
            guard let c = connection(f) else { continue }
            let disconnect = disconnectOf[c.index]
            switch f.rule {
            case QualityReports.rule.id where c.lifecycle.disconnectReason.map({ LinkLoss.reasons.contains($0.rawValue) }) ?? false:
                // The report that warned of the loss is the loss's evidence: one problem, told by its link.disconnect.
                fold(i, into: disconnect)
            case ATTUnanswered.rule.id where c.lifecycle.disconnectReason.map({ LinkLoss.reasons.contains($0.rawValue) }) ?? false:
                guard let frame = c.lifecycle.disconnectFrame, let reason = c.lifecycle.disconnectReason else { continue }
                findings[i].severity = .info
                findings[i].actor = .none
                findings[i].cause = FindingCause(.linkLoss, frames: [frame], "the request died with the link, lost at frame \(frame) (\(reason.name)); see its link.disconnect")
                if let disconnect { findings[disconnect].fold(rule: f.rule, frame: f.frames.first ?? 0) }
            case EncryptionFailed.rule.id:
                guard let status = f.status else { continue }
                if LinkLoss.reasons.contains(status) || [0x22, 0x28].contains(status), c.lifecycle.disconnectFrame != nil {
                    // Encryption Change carried the link loss's reason: the loss is the problem.
                    fold(i, into: disconnect)
                } else if status == HCIStatus.pinOrKeyMissing.rawValue {
                    findings[i].cause = FindingCause(.keyMissing, frames: [f.frames.first ?? 0], """
                        the peer answered the encryption request without the key of this bond (PIN or Key Missing): it was reset \
                        or bonded with another phone; remove the bond on the phone and pair again
                        """)
                    findings[i].actor = .user
                    // The disconnect that follows is this failure's consequence.
                    if let disconnect, c.endCause?.cause.kind == .keyMissing { fold(disconnect, into: i) }
                }
            case ATTTimeout.rule.id, IndicationUnconfirmed.rule.id:
                guard let end = c.endCause, end.cause.kind == .attTimeout, end.timedOut == f.frames.first else {
                    if f.rule == ATTTimeout.rule.id, let request = f.frames.first {
                        findings[i].cause = FindingCause(.attTimeout, frames: [request], """
                            the server never answered the request at frame \(request) within 30 s (Core v5.4 Vol 3 Part F 3.3.3): \
                            its GATT server is hung or lost the request; no further ATT is allowed on this bearer
                            """)
                    }
                    continue
                }
                findings[i].cause = end.cause
                if findings[i].severity < .warning { findings[i].severity = .warning }
                findings[i].actor = end.actor
                if let disconnect { fold(disconnect, into: i) }
            case PairingTimeout.rule.id:
                guard let end = c.endCause, end.cause.kind == .smpTimeout, end.timedOut == f.frames.first else { continue }
                if let disconnect { fold(disconnect, into: i) }
            case PairingFailed.rule.id:
                findings[i].cause = pairingCause(c, failure: f.frames.first ?? 0) ?? f.cause
                let peer = c.peerAddress?.description ?? "connection \(c.index)"
                if let first = firstPairingFailure[peer] {
                    // The same pairing failing again with this peer (a pairing loop, on one connection or
                    // across reconnects): one problem.
                    if findings[i].severity > findings[first].severity { findings[first].severity = findings[i].severity }
                    fold(i, into: first)
                } else {
                    firstPairingFailure[peer] = i
                }
            case SubscriptionUnanswered.rule.id:
                // The CCCD write that timed out is one problem: att.timeout tells it.
                if let k = f.frames.first, let t = timeouts[k] { fold(i, into: t) }
            case InsufficientSecurity.rule.id:
                if let k = f.frames.first, let s = subscriptionErrors[k] {
                    findings[s].cause = findings[s].cause ?? FindingCause(.pairing, frames: [k], """
                        the characteristic needs \(c.encryption.encrypted || c.encryption.everEncrypted ? "more security than the link had" : "an encrypted link, and the link was not encrypted")
                        """)
                    fold(i, into: s)
                }
            default:
                break
            }
        }
        if !dropped.isEmpty { findings = findings.enumerated().filter { !dropped.contains($0.offset) }.map(\.element) }

        // What folded in is told once, and the attribute named by its UUID where discovery showed it.
        for i in findings.indices {
            let c = connection(findings[i])
            // Linked and worded when its connection was summarised.
            if c == nil, findings[i].connectionIndex != nil { continue }
            if findings[i].uuid == nil, let h = findings[i].handle, let c {
                findings[i].uuid = (c.peerGATT?.owningCharacteristic(of: h) ?? c.localGATT?.owningCharacteristic(of: h))?.uuid
            }
            guard !findings[i].folded.isEmpty else { continue }
            let parts = findings[i].folded.sorted { $0.rule < $1.rule }.map {
                "\($0.count)× \($0.rule) (frame\($0.count == 1 ? "" : "s") \($0.frames.prefix(6).map(String.init).joined(separator: ", "))\($0.count > 6 ? ", …" : ""))"
            }
            findings[i].message = findings[i].message + FindingMessage("; one problem, also reported here: \(parts.joined(separator: ", "))")
        }
    }

    /// Why a pairing failed, from its story: method, parameters, who ended it and what the reason
    /// means for the reader.
    static func pairingCause(_ c: Connection, failure frame: Int) -> FindingCause? {
        guard let s = c.pairings.last(where: { $0.outcomeFrame == frame }),
              case let .failed(reason, byHost) = s.outcome else { return nil }
        var how = [String]()
        if let m = s.method, let sc = s.secureConnections {
            how.append("\(sc ? "LE Secure Connections" : "LE legacy pairing"), \(m.rawValue)")
        }
        if let r = s.response {
            let (i, p) = s.initiatorIsHost ? (s.request, r) : (r, s.request)
            how.append("IO \(i.ioCapability) (host) / \(p.ioCapability) (peer)")
        }
        if let k = s.keySize { how.append("key size \(k)") }
        if s.response != nil { how.append(s.bonding ? "bonding" : "no bonding") }
        let by: FindingMessage = byHost ? "the host" : .peer(c)
        let meaning: String
        switch reason {
        case .confirmValueFailed: meaning = "the confirm values did not match: a wrong passkey was entered (or the two sides computed different keys)"
        case .passkeyEntryFailed: meaning = "passkey entry was cancelled or failed on that side (the user dismissed the prompt)"
        case .numericComparisonFailed: meaning = "the user rejected the numbers shown (Numeric Comparison)"
        case .dhKeyCheckFailed: meaning = "the DHKey check failed: the two sides derived different keys"
        case .pairingNotSupported: meaning = "that side does not accept pairing now"
        case .authenticationRequirements: meaning = "the two sides' IO capabilities cannot give the protection (MITM / Secure Connections) asked for"
        case .encryptionKeySize: meaning = "the key would be shorter than that side accepts"
        case .repeatedAttempts: meaning = "too many attempts in a short time: that side waits before accepting another"
        case .unspecifiedReason where byHost:
            // When it came says who gave up: at once (the stack refused without asking anyone), after
            // seconds (a person or the app), or after SMP's 30 s (the stack's timer).
            let after = s.failedAfterMicros ?? 0
            let when = SessionModel.span(after) + " after the " + (s.failedAfter?.name ?? "previous step")
            if after < 200_000 {
                meaning = "the host's stack refused at once (\(when)): no person was asked — a bond it holds or forbids, or the app removing or cancelling the bond"
            } else if after >= SMP.timeout - 1_000_000 {
                meaning = "the host gave up after SMP's 30 s (\(when)): its own timer, no answer came"
            } else {
                meaning = "the host gave up \(when): a person dismissing the pairing prompt or the app cancelling the bond (the capture holds no prompt to tell which)"
            }
        default: meaning = "\(reason)"
        }
        return FindingCause(.pairing, frames: [frame, s.requestFrame], """
            \(how.isEmpty ? "" : how.joined(separator: ", ") + "; ")\(by) ended it after the \(s.failedAfter?.name ?? "Pairing Request") with \(reason): \(meaning)
            """)
    }
}

