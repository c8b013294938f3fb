import BLEProtocol

/// `security.pairing-failed`: SMP Pairing Failed.
final class PairingFailed: Detector {
    static let rule = RuleInfo(
        id: "security.pairing-failed", severity: .error, title: "Pairing failed",
        explanation: """
        SMP Pairing Failed was sent (the reason says by whom and why). Pairing Not Supported or Authentication \
        Requirements mean the two sides' IO capabilities/MITM/Secure Connections demands cannot be met; Confirm/DHKey \
        Check Failed means a wrong passkey or a key mismatch; Unspecified Reason often follows a user cancel. On iOS, \
        a stale bond on either side causes repeated failures: "Forget This Device" and re-pair; on Android remove the \
        bond (removeBond via reflection in tests, or Settings). Info when a later pairing succeeded.
        """,
        doc: .init(
            severity: "error (info if a later pairing on the same connection/peer succeeds)",
            firesWhen: #"""
                SMP Pairing Failed (either direction), with the reason; cause `pairing`: the method (legacy or \#
                LE Secure Connections; Just Works, Numeric Comparison, Passkey Entry, OOB — Core v5.4 Vol 3 \#
                Part H 2.3.5.1), IO capabilities, key size, bonding, the step it failed after, who ended it \#
                and what the reason means (Confirm Value Failed: wrong passkey; Unspecified Reason from the \#
                host: a dismissed prompt, a cancelled bond or the stack's timer). Failures on one connection \#
                are one finding (the first; the others folded in). BR/EDR Secure Simple Pairing Complete with \#
                an error is this rule too; when the host had answered the user prompt with a negative reply \#
                (User Confirmation / Passkey Request Negative Reply, Vol 4 Part E 7.1.31, 7.1.33) a person \#
                declined: info, actor `user`
                """#,
            evidence: #"""
                the Pairing Failed, the Pairing Request (BR/EDR: the negative reply, Simple Pairing Complete, \#
                the prompt)
                """#))
    let kinds: [SessionEvent.Kind] = [.security]
    private struct Failure {
        var c: Connection; var frame: Int; var time: Int64; var request: Int?
        var reason: SMPFailureReason; var sentByHost: Bool; var recovered = false
    }
    private var failures: [Failure] = []
    private var lastRequest: [Int: Int] = [:]
    private var pairingAfterFailure = Set<Int>()

    /// A failure is decided at the end (a later pairing with the peer may recover it).
    func keeps(_ c: Connection, _ context: DetectorContext) -> Bool { failures.contains { $0.c === c } }
    func retire(_ c: Connection, _ context: DetectorContext, _ findings: inout [Finding]) {
        lastRequest[c.index] = nil
        pairingAfterFailure.remove(c.index)
    }

    func observe(_ event: SessionEvent, _ context: DetectorContext, _ findings: inout [Finding]) {
        switch event {
        case let .pairingRequest(c, frame, _, _):
            lastRequest[c.index] = frame
            if failures.contains(where: { $0.c === c || ($0.c.peerAddress != nil && $0.c.peerAddress == c.peerAddress) }) {
                pairingAfterFailure.insert(c.index)
            }
        case let .pairingFailed(c, frame, time, reason, sent):
            failures.append(Failure(c: c, frame: frame, time: time, request: lastRequest[c.index], reason: reason, sentByHost: sent))
            pairingAfterFailure.remove(c.index)
        case let .simplePairingFailed(c, frame, time, status, step, rejected):
            // A negative reply to the user prompt (Core v5.4 Vol 4 Part E 7.1.31, 7.1.33): a person said
            // no; the failure that follows is its outcome, not a fault to fix.
            var f = Finding(rule: Self.rule.id, severity: rejected != nil ? .info : .error, connection: c, time: time,
                            frames: (rejected.map { [$0] } ?? []) + [frame] + (step.map { [$0.frame] } ?? []),
                            message: rejected != nil
                                ? "Secure Simple Pairing with \(peer: c) declined on the phone: \(status.name) (0x\(Format.hex(status.rawValue)))"
                                : "Secure Simple Pairing with \(peer: c) failed: \(status.name) (0x\(Format.hex(status.rawValue)))",
                            actor: rejected != nil ? .user : nil)
            f.status = status.rawValue
            let meaning: String
            if let rejected {
                meaning = "the host answered \(step.map { "the \($0.kind.rawValue) at frame \($0.frame)" } ?? "the prompt") with a negative reply at frame \(rejected): the user declined the pairing"
            } else if let step {
                meaning = "after the \(step.kind.rawValue) at frame \(step.frame) the host never confirmed: the user did not accept in time or dismissed the prompt, or the peer rejected it"
            } else {
                meaning = "the capture shows no step asked of the user before it"
            }
            f.cause = FindingCause(.pairing, frames: [rejected ?? step?.frame ?? frame, frame], "BR/EDR Secure Simple Pairing: \(meaning)")
            findings.append(f)
        case let .encryptionChanged(c, _, _, status, true) where status == .success:
            guard pairingAfterFailure.contains(c.index) else { return }
            for i in failures.indices where failures[i].c === c || (failures[i].c.peerAddress != nil && failures[i].c.peerAddress == c.peerAddress) {
                failures[i].recovered = true
            }
        default:
            break
        }
    }

    func finish(_ context: DetectorContext, _ findings: inout [Finding]) {
        for f in failures {
            var finding = Finding(rule: Self.rule.id, severity: f.recovered ? .info : .error, connection: f.c, time: f.time,
                                  frames: [f.frame] + (f.request.map { [$0] } ?? []),
                                  message: "Pairing failed: \(f.reason) (sent by the \(f.sentByHost ? "host" : "peer"))"
                                      + (f.recovered ? "; a later pairing succeeded" : ""),
                                  actor: f.sentByHost ? .app : .peripheralFirmware)
            finding.status = f.reason.rawValue
            findings.append(finding)
        }
    }
}

/// `security.encryption-failed`: encryption could not be started or refreshed.
final class EncryptionFailed: Detector {
    static let rule = RuleInfo(
        id: "security.encryption-failed", severity: .error, title: "Encryption failed",
        explanation: """
        Encryption Change (or Key Refresh) reported an error, or the controller refused to start encryption. PIN or Key \
        Missing (0x06) means the peer has no key for this bond — it was reset or bonded with someone else: delete the \
        bond and pair again. MIC Failure (0x3D) means the keys disagree or the link is corrupted.
        """,
        doc: .init(
            firesWhen: #"""
                Encryption Change (v1/v2) or Encryption Key Refresh with non-zero status, or LE Enable \#
                Encryption rejected in Command Status. A status that is a link-loss reason (0x08, 0x22, 0x28, \#
                0x3E, 0x3D: the link died while encryption started) is the loss's consequence, folded into its \#
                `link.disconnect`; PIN or Key Missing (0x06) has cause `key-missing` and absorbs the \#
                disconnect that follows
                """#,
            evidence: "the failing event"))
    let kinds: [SessionEvent.Kind] = [.security]

    func observe(_ event: SessionEvent, _ context: DetectorContext, _ findings: inout [Finding]) {
        guard case let .encryptionChanged(c, frame, time, status, _) = event, status != .success else { return }
        var finding = Finding(rule: Self.rule.id, severity: .error, connection: c, time: time, frames: [frame],
                              message: "Encryption failed: \(status.name) (0x\(Format.hex(status.rawValue)))")
        finding.status = status.rawValue
        findings.append(finding)
    }
}

/// `security.repeated-pairing`: pairing tried again and again.
final class RepeatedPairing: Detector {
    static let rule = RuleInfo(
        id: "security.repeated-pairing", severity: .warning, title: "Repeated pairing attempts",
        explanation: """
        Three or more pairing attempts on one connection or with one peer. Something keeps failing or one side keeps \
        losing its bond; the user sees repeated pairing prompts. Check the failure reasons and whether the bond is \
        stored (Bonding flag in the Pairing Request/Response).
        """,
        doc: .init(
            severity: "warning (info when the pairings succeed)",
            firesWhen: #"""
                ≥ 3 Pairing Requests on one connection or ≥ 3 pairing attempts with one peer; a warning only \#
                when ≥ 2 of those attempts failed or stalled (a phone that removes a bond and pairs again, \#
                successfully, re-pairs on purpose)
                """#,
            evidence: "the third Pairing Request"))
    let kinds: [SessionEvent.Kind] = [.security]
    private var perConnection: [Int: Int] = [:]
    private var perPeer: [String: Int] = [:]
    private var reported = Set<String>()

    func observe(_ event: SessionEvent, _ context: DetectorContext, _ findings: inout [Finding]) {
        guard case let .pairingRequest(c, frame, time, _) = event else { return }
        perConnection[c.index, default: 0] += 1
        let peer = c.peerAddress?.description ?? "conn\(c.index)"
        perPeer[peer, default: 0] += 1
        guard perConnection[c.index, default: 0] >= 3 || perPeer[peer, default: 0] >= 3, reported.insert(peer).inserted else { return }
        third.append((c, frame, time, peer))
    }
    private var third: [(c: Connection, frame: Int, time: Int64, peer: String)] = []
    /// Per peer: the pairings of its summarised connections (all, failed or stalled, succeeded).
    private var summarised: [String: (all: Int, failed: Int, succeeded: Int)] = [:]

    func keeps(_ c: Connection, _ context: DetectorContext) -> Bool { third.contains { $0.c === c } }
    func retire(_ c: Connection, _ context: DetectorContext, _ findings: inout [Finding]) {
        perConnection[c.index] = nil
        guard !c.pairings.isEmpty else { return }
        let (failed, succeeded) = Self.outcomes(c.pairings)
        let peer = c.peerAddress?.description ?? "conn\(c.index)"
        let s = summarised[peer] ?? (0, 0, 0)
        summarised[peer] = (s.all + c.pairings.count, s.failed + failed, s.succeeded + succeeded)
    }

    private static func outcomes(_ attempts: [PairingStory]) -> (failed: Int, succeeded: Int) {
        (attempts.filter { if case .failed = $0.outcome { true } else { $0.outcome == .timedOut } }.count,
         attempts.filter { $0.outcome == .succeeded }.count)
    }

    /// Decided when the outcomes are known: a problem only when pairing kept failing (two or more of
    /// the attempts failed or stalled); a phone that removes a bond and pairs again, successfully, is a
    /// fact (Android's "forget device", an app's re-bond), not a loop.
    func finish(_ context: DetectorContext, _ findings: inout [Finding]) {
        for t in third {
            let attempts = context.model.connections.filter { ($0.peerAddress?.description ?? "conn\($0.index)") == t.peer }.flatMap(\.pairings)
            var (failed, succeeded) = Self.outcomes(attempts)
            var all = attempts.count
            if let s = summarised[t.peer] { all += s.all; failed += s.failed; succeeded += s.succeeded }
            let looping = failed >= 2
            findings.append(Finding(rule: Self.rule.id, severity: looping ? .warning : .info, connection: t.c, time: t.time, frames: [t.frame],
                                    message: "Third pairing attempt with \(peerAddress: t.c, or: "the peer")"
                                        + " (\(all) in all: \(failed) failed or stalled, \(succeeded) succeeded)"
                                        + (looping ? "" : "; the pairings succeed, so this is re-pairing on purpose, not a loop")))
        }
    }
}

/// `security.insufficient`: an attribute that needs more security than the link has.
final class InsufficientSecurity: Detector {
    static let rule = RuleInfo(
        id: "security.insufficient", severity: .warning, title: "Attribute needs pairing or encryption",
        explanation: """
        The server refused a request with Insufficient Authentication (0x05), Insufficient Encryption (0x0F), \
        Insufficient Encryption Key Size (0x0C) or Insufficient Authorization (0x08). The characteristic needs an \
        encrypted (and maybe authenticated) link: pair first. iOS pairs automatically on these errors when the \
        peripheral requests it; Android needs createBond() or retries after ACTION_BOND_STATE_CHANGED. Info when the \
        same request succeeded after encryption.
        """,
        doc: .init(
            severity: "warning (info if encryption/pairing followed and the same request then succeeded)",
            firesWhen: #"""
                ATT Error Response Insufficient Authentication (0x05), Insufficient Encryption (0x0F), \#
                Insufficient Encryption Key Size (0x0C) or Insufficient Authorization (0x08) (on an encrypted \#
                link 0x08 is the server application's own check: the advice says so, the peripheral firmware \#
                acts). An Error Response to a CCCD write is one problem: folded into its \#
                `gatt.subscription-failed`
                """#,
            evidence: "the Error Response, the request"))
    let kinds: [SessionEvent.Kind] = [.attResponse]
    private struct Refusal {
        var c: Connection; var opcode: ATTOpcode?; var handle: UInt16; var frames: [Int]; var time: Int64; var error: ATTErrorCode
        /// The host sent the Error Response (it is the server).
        var serverIsHost: Bool
        var recovered = false
    }
    @exclusivity(unchecked) private var refusals: [Refusal] = []

    /// A refusal is decided at the end (the same request may still succeed on its link), or when its
    /// connection is summarised.
    func retire(_ c: Connection, _ context: DetectorContext, _ findings: inout [Finding]) {
        for r in refusals where r.c === c { report(r, &findings) }
        refusals.removeAll { $0.c === c }
    }

    func observe(_ event: SessionEvent, _ context: DetectorContext, _ findings: inout [Finding]) {
        switch event {
        case let .attError(c, request, error, handle, frame, time, sent) where error.isSecurityError:
            refusals.append(Refusal(c: c, opcode: request?.opcode, handle: request?.handle ?? handle,
                                    frames: [frame] + (request.map { [$0.frame] } ?? []), time: time, error: error, serverIsHost: sent))
        case let .attResponse(c, request?, _, _, _, _, _):
            for i in refusals.indices where refusals[i].c === c && refusals[i].opcode == request.opcode && refusals[i].handle == request.handle {
                refusals[i].recovered = true
            }
        default:
            break
        }
    }

    func finish(_ context: DetectorContext, _ findings: inout [Finding]) {
        for r in refusals { report(r, &findings) }
    }

    private func report(_ r: Refusal, _ findings: inout [Finding]) {
        // Insufficient Authorization on an encrypted link is the application's own check, not pairing.
        let ownCheck = r.error == .insufficientAuthorization && (r.c.encryption.encrypted || r.c.encryption.everEncrypted)
        var finding = Finding(rule: Self.rule.id, severity: r.recovered ? .info : .warning, connection: r.c, time: r.time, frames: r.frames,
                              message: "\(r.opcode?.name ?? "Request") on \(r.c.attributeName(r.handle, serverIsHost: r.serverIsHost)) refused: \(r.error)"
                                  + (r.recovered ? "; it succeeded after the link was secured" : "")
                                  + (ownCheck ? "; the link was encrypted, so this is the server application's own authorization check, not pairing" : ""),
                              actor: ownCheck ? .peripheralFirmware : nil)
        finding.status = r.error.rawValue
        finding.handle = r.handle
        findings.append(finding)
    }
}

/// `security.pairing-timeout`: a pairing that stopped half-way — neither the next step nor Pairing
/// Failed for 30 s, so SMP timed out (Core v5.4 Vol 3 Part H 3.4: the procedure has failed and no
/// further SMP commands are sent on the link). The story (`Connection.pairings`) tells which step
/// was the last and who owed the next.
final class PairingTimeout: Detector {
    static let rule = RuleInfo(
        id: "security.pairing-timeout", severity: .warning, title: "Pairing never finished (SMP timeout)",
        explanation: """
        A pairing stopped half-way: after the last step neither side sent the next one nor Pairing Failed for 30 s, so \
        the Security Manager timed out and pairing silently failed; the link can only pair again after reconnecting. When \
        the peer owed the next step, its firmware stalled (often while computing the DH key or after a reset); when the \
        phone owed it, a pairing prompt was left unanswered or the stack lost the procedure.
        """, actor: .peripheralFirmware,
        doc: .init(
            firesWhen: #"""
                a pairing with no SMP PDU for 30 s after its last one and neither Pairing Failed nor key \#
                distribution/encryption: SMP timed out (Vol 3 Part H 3.4); who owed the next step says who \#
                acts. A disconnect the timeout causes is folded in
                """#,
            evidence: "the last SMP PDU, the Pairing Request"))
    let kinds: [SessionEvent.Kind] = []

    func observe(_ event: SessionEvent, _ context: DetectorContext, _ findings: inout [Finding]) {}

    func finish(_ context: DetectorContext, _ findings: inout [Finding]) {
        for c in context.model.connections { decide(c, &findings) }
    }
    func retire(_ c: Connection, _ context: DetectorContext, _ findings: inout [Finding]) { decide(c, &findings) }

    private func decide(_ c: Connection, _ findings: inout [Finding]) {
        for s in c.pairings where s.outcome == .timedOut {
            let owed: FindingMessage = s.lastSentByHost ? .peer(c) : "the host"
            let method = s.method.map { " (\($0.rawValue))" } ?? ""
            let text: FindingMessage = "the pairing stalled after the \(s.lastCode.name) at frame \(s.last.frame): \(owed) never sent the next step or Pairing Failed, so SMP timed out 30 s later (Core v5.4 Vol 3 Part H 3.4)"
            var f = Finding(rule: Self.rule.id, severity: .warning, connection: c, time: s.last.time, frames: [s.last.frame, s.requestFrame],
                            message: "Pairing\(method) with \(peer: c) never finished: no step after the \(s.lastCode.name) at frame \(s.last.frame)",
                            actor: s.lastSentByHost ? .peripheralFirmware : .hostStack)
            f.cause = FindingCause(.smpTimeout, frames: [s.last.frame], text)
            findings.append(f)
        }
    }
}

/// `security.legacy-pairing`: the initiator asked for LE Secure Connections and the responder's
/// Pairing Response left the SC flag out, so the pairing fell back to LE legacy pairing (Core v5.4
/// Vol 3 Part H 2.3.5.1: SC only when both set it), whose keys a passive sniffer that records the
/// pairing can recover (legacy Just Works and Passkey Entry give no protection against eavesdropping,
/// 2.3.5.2–2.3.5.3). When neither side asked for SC it is the design of both, not a downgrade: nothing
/// is said.
final class LegacyPairing: Detector {
    static let rule = RuleInfo(
        id: "security.legacy-pairing", severity: .warning, title: "Pairing fell back to legacy",
        explanation: """
        The phone asked for LE Secure Connections but the accessory answered without it, so pairing used LE legacy \
        pairing: anyone who records the pairing over the air can compute the keys and decrypt the link. Enable LE \
        Secure Connections in the accessory's stack (most SDKs have a flag; Bluetooth 4.2 and later support it).
        """, actor: .peripheralFirmware,
        doc: .init(
            firesWhen: #"""
                the initiator's Pairing Request sets the Secure Connections flag and the responder's Pairing \#
                Response does not: the pairing falls back to LE legacy pairing (Vol 3 Part H 2.3.5.1), whose \#
                keys a passive sniffer recording the pairing recovers. Cause `pairing`. Nothing when neither \#
                side asks for SC. One finding per peer: later fallbacks with the same peer are folded in
                """#,
            evidence: "the Pairing Response, the Pairing Request"))
    let kinds: [SessionEvent.Kind] = []

    func observe(_ event: SessionEvent, _ context: DetectorContext, _ findings: inout [Finding]) {}

    /// A connection with a fallback is kept whole: its finding is folded per peer at the end.
    func keeps(_ c: Connection, _ context: DetectorContext) -> Bool {
        c.pairings.contains(where: Self.fellBack)
    }

    /// The initiator asked for Secure Connections and the Pairing Response left it out.
    private static func fellBack(_ s: PairingStory) -> Bool {
        guard let response = s.response, s.responseFrame != nil else { return false }
        return s.request.authReq.contains(.secureConnections) && !response.authReq.contains(.secureConnections)
    }

    /// One finding per peer (one problem, one finding): the first fallback is the evidence, the later
    /// ones with the same peer are folded into it (`folded`: their Pairing Responses).
    func finish(_ context: DetectorContext, _ findings: inout [Finding]) {
        var byPeer: [String: Int] = [:]
        for c in context.model.connections {
            for s in c.pairings {
                guard Self.fellBack(s), let frame = s.responseFrame else { continue }
                let peer = c.peerAddress?.description ?? "conn\(c.index)"
                if let i = byPeer[peer] {
                    findings[i].fold(rule: Self.rule.id, frame: frame)
                    continue
                }
                let method = s.method.map { " (\($0.rawValue))" } ?? ""
                var f = Finding(rule: Self.rule.id, severity: .warning, connection: c, time: s.responseTime ?? s.requestTime,
                                frames: [frame, s.requestFrame],
                                message: "Pairing with \(peer: c) fell back to LE legacy pairing\(method): the \(s.initiatorIsHost ? "host" : "peer") asked for Secure Connections, the \(s.initiatorIsHost ? "peer" : "host") answered without it")
                f.cause = FindingCause(.pairing, frames: [frame], "the Pairing Response at frame \(frame) does not set the SC flag the Pairing Request at frame \(s.requestFrame) set: the responder does not support or enable LE Secure Connections")
                byPeer[peer] = findings.count
                findings.append(f)
            }
        }
    }
}

/// `security.key-size-downgrade`: an encryption key shorter than 16 octets, and above all shorter than
/// the same peer's key on an earlier connection in the capture. The key size is negotiated by the two
/// controllers (LMP on BR/EDR, Core v5.4 Vol 2 Part C 4.2.5.4; SMP's Maximum Encryption Key Size on LE),
/// unauthenticated and open to a man in the middle who proposes the minimum: KNOB (CVE-2019-9506, Core
/// errata: 7 octets minimum, Vol 2 Part H 4.1 / Vol 3 Part H 2.3.4) and, with the session key derived
/// from it, BLUFFS (CVE-2023-24023). The frames prove the downgrade when the same peer agreed on a
/// longer key before: warning; a short key with nothing to compare is a fact: info. Weak link key facts
/// (unauthenticated P-192, E0: no Secure Connections) are told in the message.
final class KeySizeDowngrade: Detector {
    static let rule = RuleInfo(
        id: "security.key-size-downgrade", severity: .warning, title: "Encryption key shorter than before",
        explanation: """
        The link was encrypted with a key shorter than 16 octets, and the same peer agreed on a longer key on an \
        earlier connection in the capture. The key size is negotiated without protection; an attacker in range can \
        force the minimum and brute-force the key (KNOB, CVE-2019-9506; BLUFFS, CVE-2023-24023). Refuse key sizes \
        below 16 on the host (read it with Read Encryption Key Size and disconnect), update the controllers' \
        firmware, and use Secure Connections (P-256 link keys, AES-CCM). Info when no longer key was seen.
        """, actor: .peripheralFirmware,
        doc: .init(
            severity: "warning (info with nothing to compare)",
            firesWhen: #"""
                an encrypted link's key size (Read Encryption Key Size's Command Complete, Vol 4 Part E 7.5.7, \#
                or Encryption Change v2) below 16 octets: warning when the same peer (same transport) had a \#
                longer key on an earlier connection in the capture — the key size is negotiated unprotected, \#
                an attacker forces the minimum (KNOB, CVE-2019-9506; BLUFFS, CVE-2023-24023; minimum 7 octets, \#
                Vol 2 Part H 4.1 errata) —, info when no longer key was seen. The message adds the weak-key \#
                facts the capture shows: an unauthenticated or P-192 link key (Link Key Notification, 7.7.24; \#
                on a reconnection the type made earlier for that peer) and E0 (Encryption_Enabled 0x01 on \#
                BR/EDR, 7.7.8: no Secure Connections). One finding per peer, later short keys folded in
                """#,
            evidence: "the short key size, the earlier longer one"))
    let kinds: [SessionEvent.Kind] = []

    func observe(_ event: SessionEvent, _ context: DetectorContext, _ findings: inout [Finding]) {}

    /// A key below 16 octets is decided at the end (folded per peer); a full key is what a later
    /// short one of the peer is compared with: the first full key of each peer summarised is kept.
    func keeps(_ c: Connection, _ context: DetectorContext) -> Bool { (c.encryption.keySize?.size ?? 16) < 16 }
    func retire(_ c: Connection, _ context: DetectorContext, _ findings: inout [Finding]) {
        guard let k = c.encryption.keySize else { return }
        let peer = Self.peer(c)
        if summarisedFull[peer].map({ c.index < $0.connection }) ?? true { summarisedFull[peer] = (c.index, k.frame) }
    }
    private var summarisedFull: [String: (connection: Int, frame: Int)] = [:]
    private static func peer(_ c: Connection) -> String { (c.isLE ? "le " : "br ") + (c.peerAddress?.description ?? "conn\(c.index)") }

    func finish(_ context: DetectorContext, _ findings: inout [Finding]) {
        // Per peer (and transport), connections in capture order with their smallest key size.
        var best: [String: (size: UInt8, frame: Int)] = [:]
        var reported: [String: Int] = [:]   // peer → its finding; later short keys of the peer fold into it
        for c in context.model.connections {
            guard let k = c.encryption.keySize else { continue }
            let peer = Self.peer(c)
            // A full key of a summarised connection before this one.
            if let full = summarisedFull[peer], full.connection < c.index, 16 > best[peer]?.size ?? 0 { best[peer] = (16, full.frame) }
            defer { if k.size > best[peer]?.size ?? 0 { best[peer] = (k.size, k.frame) } }
            let earlier = best[peer].flatMap { $0.size > k.size ? $0 : nil }
            guard k.size < 16 || earlier != nil else { continue }
            if let i = reported[peer] {
                findings[i].fold(rule: Self.rule.id, frame: k.frame)
                if earlier != nil, findings[i].severity == .info { findings[i].severity = .warning }
                continue
            }
            var weak: [String] = []
            if let key = c.encryption.linkKey, !key.isSecureConnections {
                weak.append("link key \(key)\(c.encryption.linkKeyFromEarlier ? " (made on an earlier connection)" : "")")
            }
            if c.encryption.cipher == .e0 { weak.append("encryption E0 (no Secure Connections)") }
            let facts = weak.isEmpty ? "" : "; " + weak.joined(separator: ", ")
            let message: FindingMessage = earlier.map {
                "Encryption key size \(k.size) octets (\(Int(k.size) * 8) bits) with \(peer: c), \($0.size) on an earlier connection (frame \($0.frame)): the key size was negotiated down (KNOB / BLUFFS class)\(facts)"
            } ?? "Encryption key size \(k.size) octets (\(Int(k.size) * 8) bits) with \(peer: c), below 16\(facts)"
            var f = Finding(rule: Self.rule.id, severity: earlier != nil ? .warning : .info, connection: c, time: k.time,
                            frames: [k.frame] + (earlier.map { [$0.frame] } ?? []), message: message)
            f.status = k.size
            reported[peer] = findings.count
            findings.append(f)
        }
    }
}

/// `security.sc-downgrade`: a BR/EDR link without Secure Connections although the capture proves all four
/// parts support it: the local host (Write Secure Connections Host Support, Core v5.4 Vol 4 Part E 7.3.92,
/// answered with success), the local controller (Read Local Extended Features page 2 bit 8, 7.4.4), the peer's
/// host and controller (Read Remote Extended Features Complete pages 1 bit 3 and 2 bit 8, 7.7.34; Vol 2 Part C
/// 3.3). Then pairing must make a P-256 key and encryption must be AES-CCM (Vol 2 Part F 4.2; Vol 3 Part C
/// 5.2.2.6): a P-192 key notified on the link (types 0x04/0x05, 7.7.24), or E0 (Encryption Change
/// Encryption_Enabled 0x01, 7.7.8) with such a key or one made on the link, is the downgrade BIAS
/// (CVE-2020-10135) and BLUFFS (CVE-2023-24023) force: warning. E0 with a stored key the capture did not see
/// made may be a key from before both sides had Secure Connections: information. When any of the four is
/// not shown, nothing is decidable and nothing is said. One finding per peer; later links fold in.
final class SecureConnectionsDowngrade: Detector {
    static let rule = RuleInfo(
        id: "security.sc-downgrade", severity: .warning, title: "BR/EDR without Secure Connections although both sides support it",
        explanation: """
        Both hosts and both controllers said they support BR/EDR Secure Connections, yet the link got a P-192 link key \
        or E0 encryption: what a man in the middle forces by pretending one side lacks Secure Connections (BIAS, \
        CVE-2020-10135; BLUFFS, CVE-2023-24023), or a stack that does not use it. Delete the bond on both sides and \
        pair again; the phone's stack can require Secure Connections for this peer (Secure Connections Only mode). \
        Info when E0 runs with a stored key that may predate Secure Connections.
        """, actor: .hostStack,
        doc: .init(
            severity: "warning / info",
            firesWhen: #"""
                a BR/EDR link without Secure Connections although the capture proves all four parts support \#
                it: the local host (Write Secure Connections Host Support 0x01, Vol 4 Part E 7.3.92, answered \#
                with success), the local controller (Read Local Extended Features page 2 bit 8, 7.4.4), the \#
                peer's host and controller (Read Remote Extended Features Complete page 1 bit 3, page 2 bit 8, \#
                7.7.34; Vol 2 Part C 3.3). Then pairing must give a P-256 key and encryption AES-CCM (Vol 2 \#
                Part F 4.2): a P-192 link key notified on the link (types 0x04/0x05, 7.7.24), or E0 \#
                (Encryption_Enabled 0x01, 7.7.8) with a key made on the link, is warning — the downgrade BIAS \#
                (CVE-2020-10135) and BLUFFS (CVE-2023-24023) force; E0 with a stored key the capture did not \#
                see made is info (the key may predate Secure Connections). Any of the four not shown: nothing. \#
                One finding per peer, later links folded
                """#,
            evidence: "the P-192 key (or E0 Encryption Change), the peer's page 1 and page 2, the E0 Encryption Change"))
    let kinds: [SessionEvent.Kind] = []

    func observe(_ event: SessionEvent, _ context: DetectorContext, _ findings: inout [Finding]) {}

    /// A BR/EDR link with a P-192 or E0 fact is decided at the end (folded per peer).
    func keeps(_ c: Connection, _ context: DetectorContext) -> Bool {
        !c.isLE && (c.encryption.e0Frame != nil || c.encryption.linkKey.map { !$0.isSecureConnections } ?? false)
    }

    func finish(_ context: DetectorContext, _ findings: inout [Finding]) {
        var reported: [String: Int] = [:]
        for c in context.model.connections where !c.isLE {
            let e = c.encryption
            guard let local = context.model.controller.localSecureConnections[c.adapter], local.host == true, local.controller == true,
                  let host = e.peerSecureConnections.host, host.0, let controller = e.peerSecureConnections.controller, controller.0 else { continue }
            let madeHere = e.linkKey.flatMap { e.linkKeyFromEarlier ? nil : $0 }
            let p192 = madeHere.map { !$0.isSecureConnections && !$0.isLegacy } ?? false
            let e0 = e.e0Frame
            guard p192 || e0 != nil else { continue }
            let proven = p192 || madeHere != nil || e.linkKey?.isSecureConnections == true
            let key = p192 ? e.linkKeyFrame : nil
            let peer = c.peerAddress?.description ?? "conn\(c.index)"
            if let i = reported[peer] {
                findings[i].fold(rule: Self.rule.id, frame: key ?? e0 ?? 0)
                if proven, findings[i].severity == .info { findings[i].severity = .warning }
                continue
            }
            let keyFrame = key ?? e0 ?? 0
            let time = c.timeline.first { $0.frame == keyFrame }?.time ?? c.startTime ?? 0
            var what: [String] = []
            if let k = e.linkKey, let f = e.linkKeyFrame ?? key, p192 { what.append("a \(k) link key (frame \(f))") }
            if let e0 { what.append("E0 encryption (frame \(e0))\(e.linkKeyFromEarlier || e.linkKey == nil ? " with a stored link key" : "")") }
            let message: FindingMessage = "The link to \(peer: c) got \(what.joined(separator: " and ")) although both sides support Secure Connections: the phone's host and controller, the peer's host (frame \(host.1)) and controller (frame \(controller.1)); a downgrade (BIAS / BLUFFS class)\(proven ? "" : ", or a stored key from before Secure Connections")"
            var frames = [keyFrame, host.1, controller.1]
            if let e0, e0 != keyFrame { frames.append(e0) }
            reported[peer] = findings.count
            findings.append(Finding(rule: Self.rule.id, severity: proven ? .warning : .info, connection: c, time: time, frames: frames, message: message))
        }
    }
}

/// `security.authentication-failed`: BR/EDR Authentication Complete with Authentication Failure (0x05,
/// Core v5.4 Vol 4 Part E 7.7.6; Vol 2 Part C 4.2.1): the two sides' link keys (or the PIN) disagree — the
/// peer lost or replaced the bond, or the PIN was wrong. Warning: the link is not authenticated, profiles
/// that need it fail; a person must remove the bond and pair again. Other failures are information.
final class AuthenticationFailed: Detector {
    static let rule = RuleInfo(
        id: "security.authentication-failed", severity: .warning, title: "Classic authentication failed",
        explanation: """
        A BR/EDR link's authentication failed (Authentication Complete with Authentication Failure 0x05): the link \
        key the phone stored does not match the peer's — the accessory was reset or paired with another phone — or the \
        PIN entered was wrong. Profiles that need an authenticated link (audio, HID, SPP with security) will not \
        start. Remove the device from the phone's Bluetooth settings and pair again; an app can start pairing \
        (createBond on Android) after removing the bond.
        """, actor: .user,
        doc: .init(
            severity: "warning (0x05) / info",
            firesWhen: #"""
                BR/EDR Authentication Complete with an error (Vol 4 Part E 7.7.6). Authentication Failure \#
                (0x05): the stored link key or the PIN does not match the peer's (the accessory was reset or \#
                paired elsewhere, Vol 2 Part C 4.2.1); profiles needing an authenticated link fail, a person \#
                removes the bond and pairs again (actor: the user). Other statuses are information
                """#,
            evidence: "the Authentication Complete"))
    let kinds: [SessionEvent.Kind] = [.security]

    func observe(_ event: SessionEvent, _ context: DetectorContext, _ findings: inout [Finding]) {
        guard case let .authenticationFailed(c, frame, time, status) = event else { return }
        let failure = status == .authenticationFailure
        let then = failure ? ": the stored link key or the PIN does not match the peer's; remove the bond and pair again" : ""
        var f = Finding(rule: Self.rule.id, severity: failure ? .warning : .info, connection: c, time: time, frames: [frame],
                        message: "Authentication of the link to \(peer: c) failed: \(status.name) (0x\(Format.hex(status.rawValue)))\(then)")
        f.status = status.rawValue
        findings.append(f)
    }
}

/// `security.just-works-mitm`: an LE pairing that succeeded with Just Works although the peer's Pairing
/// Request or Response set the MITM flag (Core v5.4 Vol 3 Part H 2.3.1, 2.3.5.1): the IO capabilities
/// (Table 2.8) give no authenticated method, so the key is unauthenticated. Only the peer's flag counts:
/// phones set MITM by default and fall back to Just Works with any accessory that has no display or keys
/// (on the real corpus, every Android Pairing Request sets it). Information: the peer asked for protection
/// its own IO capabilities cannot give (it should have refused with Authentication Requirements, 0x03, if
/// it needed it); characteristics that require authenticated encryption will then fail.
final class JustWorksMITM: Detector {
    static let rule = RuleInfo(
        id: "security.just-works-mitm", severity: .info, title: "Just Works although MITM was asked",
        explanation: """
        The accessory's pairing parameters asked for man-in-the-middle protection (MITM flag), but the two sides' \
        IO capabilities allow no authenticated method, so they paired with Just Works: the key is unauthenticated \
        and an attacker in range during pairing could have intercepted it. If the accessory needs protection, its \
        firmware must offer IO (a display for Passkey Entry or Numeric Comparison) or out-of-band data, or refuse \
        the pairing; if not, it should not set the flag.
        """, actor: .peripheralFirmware,
        doc: .init(
            firesWhen: #"""
                an LE pairing succeeded with Just Works although the **peer's** Pairing Request/Response set \#
                the MITM flag: the IO capabilities (Vol 3 Part H 2.3.5.1, Table 2.8) allow no authenticated \#
                method, the key is unauthenticated. The host's flag does not count: phones set it by default \#
                (every Android Pairing Request in the real corpus does) and would flood. Actor: the peripheral \#
                firmware (offer IO or OOB, refuse with Authentication Requirements, or not ask)
                """#,
            evidence: "the peer's Pairing Request/Response, the other, the encryption or key distribution that ended it"))
    let kinds: [SessionEvent.Kind] = []

    func observe(_ event: SessionEvent, _ context: DetectorContext, _ findings: inout [Finding]) {}

    func finish(_ context: DetectorContext, _ findings: inout [Finding]) {
        for c in context.model.connections { decide(c, &findings) }
    }
    func retire(_ c: Connection, _ context: DetectorContext, _ findings: inout [Finding]) { decide(c, &findings) }

    private func decide(_ c: Connection, _ findings: inout [Finding]) {
        guard c.isLE,
              let p = c.pairings.first(where: { $0.outcome == .succeeded && $0.method == .justWorks }),
              let response = p.response else { return }
        let peer = p.initiatorIsHost ? response : p.request
        guard peer.authReq.contains(.mitm) else { return }
        let host = p.initiatorIsHost ? p.request : response
        let frames = [p.initiatorIsHost ? p.responseFrame : p.requestFrame, p.initiatorIsHost ? p.requestFrame : p.responseFrame,
                      p.outcomeFrame].compactMap { $0 }
        findings.append(Finding(rule: Self.rule.id, severity: .info, connection: c, time: p.requestTime, frames: frames,
                                message: "\(peer: c) asked for MITM protection, but its IO capability (\(peer.ioCapability)) and the host's (\(host.ioCapability)) allow only Just Works: the pairing succeeded with an unauthenticated key"))
    }
}

/// `security.plain-after-encryption`: on air, after both sides encrypted the link (each sent a PDU the
/// sniffer marks encrypted after LL_START_ENC_REQ: the LL_START_ENC_RSPs), a non-empty data PDU the
/// sniffer's header marks as sent in the clear, or whose MIC failed while the sniffer decrypted the link's
/// other PDUs. A Link Layer encrypts every such PDU until LL_PAUSE_ENC (Core v5.4 Vol 6 Part B 5.1.3.1,
/// 5.1.3.2); a third device injecting into the link (InjectaBLE) sends in the clear or with a wrong MIC, and
/// the receiver then drops the link with MIC Failure (0x3D). A sniffer can also mislabel a packet. The
/// capture cannot tell which, so information, never a warning. One finding per link, with the count.
final class PlainAfterEncryption: Detector {
    static let rule = RuleInfo(
        id: "security.plain-after-encryption", severity: .info, title: "Unencrypted PDU on an encrypted link (air)",
        explanation: """
        Once both sides of an LE link started encryption, every data packet is encrypted with a MIC. The sniffer \
        marked this one as sent in the clear (or its MIC failed while the sniffer decrypted the others). Either a \
        third device injected a packet into the link (InjectaBLE-style attacks; the receiver then fails the MIC and \
        drops the link with 0x3D), or the sniffer mislabeled or mis-decrypted it. Look at the packet's content and \
        at how the link ended; capture again with another sniffer before calling it an attack.
        """, actor: .none,
        doc: .init(
            firesWhen: #"""
                on air, after both sides encrypted the link (each sent a PDU the sniffer marks encrypted after \#
                LL_START_ENC_REQ: the LL_START_ENC_RSPs), a non-empty data PDU the sniffer's header marks as \#
                sent in the clear (nRF Sniffer flag 0x04 clear), or whose MIC failed while the sniffer \#
                decrypted the link's other PDUs. Every such PDU is encrypted until LL_PAUSE_ENC (Vol 6 Part B \#
                5.1.3.1, 5.1.3.2): a third device injecting (InjectaBLE) or a sniffer artefact; the capture \#
                cannot tell which, so information. A sniffer that decrypts without saying so marks the \#
                LL_START_ENC_RSPs plain too and is never judged; headers that do not say (PHDR without the \#
                decrypted flag, 251) tell nothing. One finding per link with the counts
                """#,
            evidence: "the first such PDU, the two LL_START_ENC_RSPs"))
    let kinds: [SessionEvent.Kind] = [.link]
    /// Per link: the finding (its index), the first PDU, and how many were plain and how many failed their MIC.
    private var seen = ConnectionState<(finding: Int, first: AirUnencryptedPDU, plain: Int, badMIC: Int)>()
    func findingsMoved(_ moves: FindingMoves) { seen.updateAll { $0.finding = moves($0.finding) } }

    func observe(_ event: SessionEvent, _ context: DetectorContext, _ findings: inout [Finding]) {
        guard case let .airUnencryptedPDU(c, u) = event else { return }
        var s = seen[c] ?? (findings.count, u, 0, 0)
        if u.micFailed { s.badMIC += 1 } else { s.plain += 1 }
        let message = Self.message(c, s.first, plain: s.plain, badMIC: s.badMIC)
        if s.finding == findings.count {
            findings.append(Finding(rule: Self.rule.id, severity: .info, connection: c, time: u.time,
                                    frames: [u.frame, u.started.central, u.started.peripheral], message: message))
        } else {
            findings[s.finding].message = message
        }
        seen[c] = s
    }

    static func message(_ c: Connection, _ first: AirUnencryptedPDU, plain: Int, badMIC: Int) -> FindingMessage {
        var what: [String] = []
        if plain > 0 { what.append("\(plain) data PDU\(plain == 1 ? "" : "s") as sent unencrypted") }
        if badMIC > 0 { what.append("\(badMIC) as failing the MIC while it decrypted the others") }
        return "On the link to \(peer: c), after both sides encrypted it (their first encrypted PDUs: frames \(first.started.central) and "
            + "\(first.started.peripheral)), the sniffer marks \(what.joined(separator: " and ")) (the first: frame \(first.frame), from the "
            + "\(first.byPeripheral ? "peripheral" : "central")): a packet injected into the link, or a sniffer artefact; the capture cannot tell which"
    }
}
