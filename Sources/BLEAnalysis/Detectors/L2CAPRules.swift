import BLEProtocol

/// `l2cap.parameter-request-refused`: a Connection Parameter Update Response with result 1 (rejected,
/// Core v5.4 Vol 3 Part A 4.21): the peripheral's request for new parameters was refused, the link keeps
/// the central's. Information (a central may refuse: iOS refuses parameters outside its accessory
/// guidelines). One finding per link, with the count: peripherals retry.
final class ParameterRequestRefused: Detector {
    static let rule = RuleInfo(
        id: "l2cap.parameter-request-refused", severity: .info, title: "Connection parameter request refused",
        explanation: """
        The peripheral asked for connection parameters (L2CAP Connection Parameter Update Request) and the central \
        answered "rejected": the link keeps its interval, latency and timeout. Centrals refuse values outside what \
        they allow (Apple's accessory design guidelines list them); the peripheral firmware should ask for values \
        inside those ranges, or live with the central's.
        """, actor: .peripheralFirmware,
        doc: .init(
            firesWhen: #"""
                a Connection Parameter Update Response with result 1 (rejected, Vol 3 Part A 4.21): the \#
                parameters stay; centrals refuse values outside their limits. One finding per link with the \#
                count. Actor: the peripheral firmware
                """#,
            evidence: "the response, the request it answers (when the host refused the peer's)"))
    let kinds: [SessionEvent.Kind] = [.link]
    private var seen = ConnectionState<(finding: Int, count: Int)>()
    func findingsMoved(_ moves: FindingMoves) { seen.updateAll { $0.finding = moves($0.finding) } }

    func observe(_ event: SessionEvent, _ context: DetectorContext, _ findings: inout [Finding]) {
        guard case let .parameterResponse(c, frame, time, sent, false) = event else { return }
        let by = sent ? "the host" : "the peer"
        if var s = seen[c] {
            s.count += 1
            seen[c] = s
            if s.count == 2 { findings[s.finding].frames.append(frame) }
            findings[s.finding].message = "\(by.prefix(1).uppercased() + by.dropFirst()) refused the connection parameter request \(s.count) times on the link to \(peer: c) (Connection Parameter Update Response: rejected); the parameters stay as they were"
            return
        }
        // The request the refusal answers: the peer's, kept by the model, when the host refused.
        var frames = [frame]
        if sent, let request = c.forensics.peerParameterRequest, request.frame < frame { frames.append(request.frame) }
        findings.append(Finding(rule: Self.rule.id, severity: .info, connection: c, time: time, frames: frames,
                                message: "\(by.prefix(1).uppercased() + by.dropFirst()) refused the connection parameter request on the link to \(peer: c) (Connection Parameter Update Response: rejected); the parameters stay as they were"))
        seen[c] = (findings.count - 1, 1)
    }
}

/// `l2cap.channel-refused`: an LE Credit Based or Credit Based Connection Response refusing every channel
/// asked for (Core v5.4 Vol 3 Part A 4.23, 4.26): the channel never opens. Warning for an app's channel;
/// information for Enhanced ATT (SPSM 0x0027), which stacks try and then do without (ATT stays on its
/// fixed channel, Vol 3 Part G 5.4).
final class ChannelRefused: Detector {
    static let rule = RuleInfo(
        id: "l2cap.channel-refused", severity: .warning, title: "L2CAP channel refused",
        explanation: """
        An L2CAP connection-oriented channel (LE Credit Based or Enhanced Credit Based) was refused: the data the \
        app meant to send over it never flows. The result says why: SPSM not supported (the peer does not offer that \
        PSM: check the PSM the app opens, on iOS the one the peripheral published), insufficient authentication, \
        authorization or encryption (pair first), no resources. An Enhanced ATT channel refused is information: ATT \
        goes on over its fixed channel.
        """, actor: .app,
        doc: .init(
            severity: "warning (info for Enhanced ATT, SPSM 0x0027)",
            firesWhen: #"""
                an LE Credit Based or Credit Based Connection Response refusing every channel asked (results \#
                of Vol 3 Part A 4.23, 4.26; 0x000D–0x000F of 4.26 are pending, not refusals): the app's \#
                channel never opens. A refused EATT channel is information: ATT stays on its fixed channel \#
                (Vol 3 Part G 5.4)
                """#,
            evidence: "the response"))
    let kinds: [SessionEvent.Kind] = [.link]

    func observe(_ event: SessionEvent, _ context: DetectorContext, _ findings: inout [Finding]) {
        guard case let .signalingRefused(c, r) = event, case let .channel(spsm, result, enhanced) = r.kind else { return }
        let table = enhanced ? L2CAPSignalingTable.creditBasedResults : L2CAPSignalingTable.leCreditResults
        let name = table.name(UInt64(result)) ?? "result 0x\(Format.hex(result, 4))"
        let kind = enhanced ? "Credit Based" : "LE Credit Based"
        let eatt = spsm == L2CAP.spsmEATT
        let what = eatt ? "Enhanced ATT channel (SPSM 0x0027)" : spsm.map { "L2CAP channel on SPSM 0x\(Format.hex($0, 4))" } ?? "L2CAP channel"
        let by = r.byHost ? "the host" : "the peer"
        let after = eatt ? "ATT stays on its fixed channel" : "the channel never opens"
        findings.append(Finding(rule: Self.rule.id, severity: eatt ? .info : .warning, connection: c, time: r.time, frames: [r.frame],
                                message: "The \(what) to \(peer: c) was refused by \(by): \(name) (\(kind) Connection Response); \(after)",
                                actor: eatt ? Actor.none : nil))
    }
}

/// `l2cap.command-reject`: an L2CAP Command Reject (Core v5.4 Vol 3 Part A 4.1): one side did not
/// understand a signalling command (an optional feature it lacks) or found a bad CID or size. Information;
/// one finding per link and reason, with the count.
final class CommandRejected: Detector {
    static let rule = RuleInfo(
        id: "l2cap.command-reject", severity: .info, title: "L2CAP command rejected",
        explanation: """
        One side answered an L2CAP signalling command with Command Reject: it does not support the command (an \
        older stack without connection parameter requests or credit-based channels), or the command named a CID \
        that is not open or exceeded its signalling MTU. The command had no effect; the sender should not repeat it.
        """, actor: .none,
        doc: .init(
            firesWhen: #"""
                an L2CAP Command Reject (Vol 3 Part A 4.1): command not understood, signalling MTU exceeded or \#
                invalid CID. One finding per link and reason, with the count
                """#,
            evidence: "the reject, the second"))
    let kinds: [SessionEvent.Kind] = [.link]
    private var seen: [Int: [UInt16: (finding: Int, count: Int)]] = [:]
    func findingsMoved(_ moves: FindingMoves) { seen = seen.mapValues { $0.mapValues { (moves($0.finding), $0.count) } } }

    func observe(_ event: SessionEvent, _ context: DetectorContext, _ findings: inout [Finding]) {
        guard case let .signalingRefused(c, r) = event, case let .commandReject(reason) = r.kind else { return }
        let name = L2CAPSignalingTable.rejectReasons.name(UInt64(reason)) ?? "reason 0x\(Format.hex(reason, 4))"
        let by = r.byHost ? "The host" : "The peer"
        if var s = seen[c.index]?[reason] {
            s.count += 1
            seen[c.index, default: [:]][reason] = s
            if s.count == 2 { findings[s.finding].frames.append(r.frame) }
            findings[s.finding].message = "\(by) rejected \(s.count) L2CAP signalling commands on the link to \(peer: c): \(name)"
            return
        }
        findings.append(Finding(rule: Self.rule.id, severity: .info, connection: c, time: r.time, frames: [r.frame],
                                message: "\(by) rejected an L2CAP signalling command on the link to \(peer: c): \(name)"))
        seen[c.index, default: [:]][reason] = (findings.count - 1, 1)
    }
}

/// `l2cap.credits-exhausted`: a credit-based channel's sender spent its last credit and sent its next
/// K-frame within 100 ms of the LE Flow Control Credit Indication that gave it more (Core v5.4 Vol 3 Part A
/// 10.1): it was waiting, for as long as the receiver kept the credits. One finding per channel and sender,
/// with the count and the longest wait. Warning when the longest reached `seconds` (default 1 s, the stall
/// a user sees as a frozen transfer, as `link.stall` and `flow.skipped-ready` use): a receiver returns
/// credits as its app reads SDUs, within connection events; seconds mean the receiving app stopped reading.
final class CreditWait: Detector {
    static let rule = RuleInfo(
        id: "l2cap.credits-exhausted", severity: .warning, title: "L2CAP channel waited for credits",
        explanation: """
        On an L2CAP credit-based channel the sender may send one K-frame per credit; the receiver gives credits back \
        (LE Flow Control Credit) as its app reads the data. The sender used its last credit and waited: short waits \
        only pace a transfer, a wait of seconds means the receiving app stopped reading the channel (on iOS the \
        L2CAP channel's input stream, on Android the BluetoothSocket's) or gave too few initial credits.
        """, thresholds: [.init(name: "seconds", defaultValue: 1, unit: "s", meaning: "wait for credits that makes it a warning")],
        actor: .app,
        doc: .init(
            severity: "warning (wait ≥ `seconds`, default 1 s) / info",
            firesWhen: #"""
                a credit-based channel's sender spent its last credit and sent its next K-frame within 100 ms \#
                of the LE Flow Control Credit Indication that gave it credits (it was waiting; Vol 3 Part A \#
                10.1). One finding per channel and sender with the count and the longest wait. 1 s: the stall \#
                a user sees as a frozen transfer (`link.stall`, `flow.skipped-ready`); a receiver returns \#
                credits as its app reads, within connection events, so seconds mean its app stopped reading
                """#,
            evidence: #"""
                the credit indication that ended the longest wait, the K-frame that spent the last credit, the \#
                next K-frame
                """#))
    let kinds: [SessionEvent.Kind] = [.link]
    private struct Key: Hashable {
        var connection: Int
        var cid: UInt16
        var host: Bool
    }
    /// Per channel and sender: the finding, how many waits, the first (whose frames the finding starts with)
    /// and the longest. The finding is rewritten at each wait, so it is whole when its link ends.
    private var seen: [Key: (finding: Int, count: Int, first: CreditChannels.Wait, longest: CreditChannels.Wait)] = [:]
    func findingsMoved(_ moves: FindingMoves) { seen = seen.mapValues { s in var s = s; s.finding = moves(s.finding); return s } }

    func observe(_ event: SessionEvent, _ context: DetectorContext, _ findings: inout [Finding]) {
        guard case let .creditWait(c, w) = event else { return }
        let key = Key(connection: c.index, cid: w.cid, host: w.senderIsHost)
        var s: (finding: Int, count: Int, first: CreditChannels.Wait, longest: CreditChannels.Wait)
        if let old = seen[key] {
            s = old
            s.count += 1
            if w.duration > s.longest.duration { s.longest = w }
        } else {
            findings.append(Finding(rule: Self.rule.id, severity: .info, connection: c, time: w.drained.time, frames: [], message: ""))
            s = (findings.count - 1, 1, w, w)
        }
        seen[key] = s
        let longest = s.longest
        let sender = longest.senderIsHost ? "The host" : "The peer"
        let giver = longest.senderIsHost ? "the peer" : "the host"
        var text: FindingMessage = "\(sender) used its last credit on the L2CAP channel (SPSM 0x\(Format.hex(longest.spsm, 4))) to \(peer: c) and waited \(Format.duration(longest.duration)) for \(giver) to give credits (frames \(longest.drained.frame) to \(longest.credit.frame))"
        if s.count > 1 { text = "\(text); it waited \(s.count) times" }
        findings[s.finding].message = text
        findings[s.finding].severity = longest.duration >= micros("seconds", context) ? .warning : .info
        var frames = Self.frames(s.first)
        for n in Self.frames(longest) where !frames.contains(n) { frames.append(n) }
        findings[s.finding].frames = frames
    }

    private static func frames(_ w: CreditChannels.Wait) -> [Int] { [w.credit.frame, w.drained.frame, w.resumed.frame] }
}
