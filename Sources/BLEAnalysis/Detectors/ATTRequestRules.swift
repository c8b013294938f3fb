import BLEProtocol

/// `att.server-stalled`: a GATT server that stopped answering while its link layer still acknowledged.
/// A deadlocked ATT server (SweynTooth "Sequential ATT Deadlock", CVE-2019-19192: two requests in a row
/// and the server never answers again) keeps the link up — its link layer acknowledges every packet —
/// so neither a supervision timeout nor `pool.unresponsive-peer` (nothing received at all) tells it.
/// Proof needs the request delivered and the peer alive: the peer sent something after the request,
/// or the controller reported the request's packet completed (Number Of Completed Packets); and
/// `wait` seconds with the link up before the host closed it or the capture ended. A link that was
/// lost is `att.unanswered`; 30 s is `att.timeout`; on an air capture, packets lost after the request
/// may hold its response.
final class ATTServerStalled: Detector {
    static let rule = RuleInfo(
        id: "att.server-stalled", severity: .warning, title: "GATT server stopped answering",
        explanation: """
        A request was delivered (the peer's link layer acknowledged it, or the peer kept sending other PDUs) and the \
        peer's GATT server never answered it while the link stayed up. The ATT server is deadlocked or its queue is \
        stuck: a firmware bug (SweynTooth CVE-2019-19192 deadlocks a server after two requests in a row). The app waits \
        for its callback until the 30 s ATT timeout. Disconnect and reconnect; the firmware must answer every request \
        (an Error Response if nothing else, Core v5.4 Vol 3 Part F 3.3.2).
        """,
        thresholds: [.init(name: "wait", defaultValue: 10, unit: "s", meaning: "time a delivered request waits, link up, before it counts")],
        actor: .peripheralFirmware,
        doc: .init(
            firesWhen: #"""
                a host request delivered — the peer sent something after it, or Number Of Completed Packets \#
                completed its packet — that the peer's GATT server never answered although the link stayed up \#
                ≥ `wait` (default 10 s) and < 30 s (`att.timeout`) until the host closed it or the capture \#
                ended: a deadlocked ATT server (SweynTooth CVE-2019-19192). Not on a lost link \#
                (`att.unanswered`), nor after sniffer losses
                """#,
            evidence: "the request, the peer's later frame"))
    let kinds: [SessionEvent.Kind] = [.connection]

    func observe(_ event: SessionEvent, _ context: DetectorContext, _ findings: inout [Finding]) {
        guard case let .disconnected(c, unacknowledged) = event else { return }
        // A lost link may be why nothing came back (att.unanswered says so).
        if let reason = c.lifecycle.disconnectReason, Disconnects.warnings.contains(reason.rawValue) { return }
        check(c, end: c.lifecycle.disconnectTime ?? context.captureEnd, unacknowledged: unacknowledged, context, &findings)
    }

    func finish(_ context: DetectorContext, _ findings: inout [Finding]) {
        for c in context.model.live.values.sorted(by: { $0.index < $1.index }) {
            check(c, end: context.captureEnd, unacknowledged: c.buffers.unacknowledged.all, context, &findings)
        }
    }

    private func check(_ c: Connection, end: Int64, unacknowledged: [SentPacket], _ context: DetectorContext, _ findings: inout [Finding]) {
        let outstanding = c.att.allOutstanding.filter { $0.sentByHost && c.snifferLoss.captureLossFrame <= $0.frame }
        guard let p = outstanding.first else { return }
        let waited = end - p.time
        guard waited >= micros("wait", context), waited < OutstandingRequests.transactionTimeout else { return }
        // Delivered: the peer spoke after it, or the controller completed the request's packet.
        let heard = c.traffic.lastReceivedFrame.flatMap { $0 > p.frame ? $0 : nil }
        let completed = c.buffers.packetsCompleted > 0 && !unacknowledged.contains { $0.frame == p.frame }
        guard heard != nil || completed else { return }
        let how = heard.map { "\(FindingMessage.peer(c)) kept sending (frame \($0))" } ?? "its link layer acknowledged it (Number Of Completed Packets)"
        let more = outstanding.count > 1 ? "; \(outstanding.count - 1) later request\(outstanding.count == 2 ? "" : "s") also unanswered" : ""
        let what = p.handle.map { " for " + c.attributeName($0, serverIsHost: false) } ?? ""
        findings.append(Finding(rule: Self.rule.id, severity: .warning, connection: c, time: p.time, frames: [p.frame] + (heard.map { [$0] } ?? []),
                                message: "The GATT server of \(peer: c) stopped answering: \(p.opcode.name)\(what) got no response in \(Format.seconds(waited)) although \(how)\(more)"))
    }
}

/// `att.malformed-request`: a request the capture shows malformed — its L2CAP length lies about its
/// size, or its parameters do not fit its opcode — that the server answered as if it were valid. A
/// server must reject an invalid PDU with Error Response Invalid PDU (0x04, Core v5.4 Vol 3 Part F
/// 3.4.1.1); answering it means it parsed bytes that were not there (or ignored the ones that were),
/// the robustness bug fuzzers and attacks (SweynTooth) use. Rejected with Invalid PDU: information.
final class ATTMalformedRequest: Detector {
    static let rule = RuleInfo(
        id: "att.malformed-request", severity: .warning, title: "Malformed request answered",
        explanation: """
        A request on the ATT bearer was malformed (its L2CAP length does not match its bytes, or its parameters do not \
        fit its opcode) and the server answered it as a valid request instead of Error Response Invalid PDU (Core v5.4 \
        Vol 3 Part F 3.4.1.1). The server parses input it should reject: a robustness bug in its firmware that \
        malformed-packet attacks exploit. The client's stack (or the tool driving it) sent the malformed PDU.
        """, actor: .peripheralFirmware,
        doc: .init(
            severity: "warning (info when rejected with Invalid PDU)",
            firesWhen: #"""
                a request the capture shows malformed — its L2CAP length claims more or fewer bytes than were \#
                sent, or its parameters do not fit its opcode — answered by the server as a valid request \#
                instead of Error Response Invalid PDU (Core v5.4 Vol 3 Part F 3.4.1.1)
                """#,
            evidence: "the request, the answer"))
    let kinds: [SessionEvent.Kind] = [.attResponse]

    func observe(_ event: SessionEvent, _ context: DetectorContext, _ findings: inout [Finding]) {
        switch event {
        case let .attResponse(c, request?, opcode, _, frame, time, _) where request.malformed:
            report(c, request, answer: opcode.name, rejected: false, frame: frame, time: time, &findings)
        case let .attError(c, request?, error, _, frame, time, _) where request.malformed:
            report(c, request, answer: "Error Response (\(error))", rejected: error == .invalidPDU, frame: frame, time: time, &findings)
        default:
            break
        }
    }

    private func report(_ c: Connection, _ p: ATTBearer.Pending, answer: String, rejected: Bool, frame: Int, time: Int64, _ findings: inout [Finding]) {
        let server: FindingMessage = p.sentByHost ? .peer(c) : "the host"
        let client: FindingMessage = p.sentByHost ? "the host" : .peer(c)
        if rejected {
            findings.append(Finding(rule: Self.rule.id, severity: .info, connection: c, time: p.time, frames: [p.frame, frame],
                                    message: "Malformed \(p.opcode.name) from \(client), rejected by \(server) with \(answer) as it should be",
                                    actor: p.sentByHost ? .hostStack : .peripheralFirmware))
            return
        }
        findings.append(Finding(rule: Self.rule.id, severity: .warning, connection: c, time: p.time, frames: [p.frame, frame],
                                message: "Malformed \(p.opcode.name) from \(client) answered by \(server) with \(answer) instead of Invalid PDU",
                                actor: p.sentByHost ? .peripheralFirmware : .hostStack))
    }
}
