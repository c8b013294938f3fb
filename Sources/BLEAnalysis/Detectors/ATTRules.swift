import BLEProtocol

/// Outstanding requests at the end of a link or capture, shared by `att.timeout` and `att.unanswered`.
enum OutstandingRequests {
    /// Core v5.4 Vol 3 Part F 3.3.3: a transaction not completed within 30 s times out and the bearer is dead.
    static let transactionTimeout: Int64 = 30_000_000

    static func each(_ c: Connection, _ body: (ATTBearer.Pending) -> Void) {
        for p in c.att.allOutstanding { body(p) }
    }
}

/// `att.timeout`: a request without a response for 30 s.
final class ATTTimeout: Detector {
    static let rule = RuleInfo(
        id: "att.timeout", severity: .error, title: "ATT transaction timed out (30 s)",
        explanation: """
        A request got no response within 30 seconds (Core v5.4 Vol 3 Part F 3.3.3). After an ATT timeout no further \
        ATT PDUs may be sent on the bearer: the connection is useless and must be closed. The peer's GATT server is \
        hung or lost the request. iOS reports it as a CBError timeout; Android as GATT_ERROR/timeout in the callback, \
        or never calls back at all — disconnect and reconnect.
        """)
    let kinds: [SessionEvent.Kind] = [.attResponse, .connection]

    func observe(_ event: SessionEvent, _ context: DetectorContext, _ findings: inout [Finding]) {
        switch event {
        case let .attResponse(c, request?, _, _, _, time, _), let .attError(c, request?, _, _, _, time, _):
            if time - request.time >= OutstandingRequests.transactionTimeout { report(c, request, after: time - request.time, &findings) }
        case let .disconnected(c, _):
            OutstandingRequests.each(c) { p in
                if (c.disconnectTime ?? p.time) - p.time >= OutstandingRequests.transactionTimeout { report(c, p, after: nil, &findings) }
            }
        default:
            break
        }
    }

    func finish(_ context: DetectorContext, _ findings: inout [Finding]) {
        for c in context.model.live.values.sorted(by: { $0.index < $1.index }) {
            OutstandingRequests.each(c) { p in
                if context.captureEnd - p.time >= OutstandingRequests.transactionTimeout { report(c, p, after: nil, &findings) }
            }
        }
    }

    private func report(_ c: Connection, _ p: ATTBearer.Pending, after: Int64?, _ findings: inout [Finding]) {
        let tail = after.map { "answered only after \(Format.seconds($0))" } ?? "never answered"
        findings.append(Finding(rule: Self.rule.id, severity: .error, connection: c, time: p.time, frames: [p.frame],
                                message: "\(p.opcode.name)" + (p.handle.map { " for handle 0x\(Format.hex($0, 4))" } ?? "") + " \(tail) (ATT timeout is 30 s)"))
    }
}

/// `att.unanswered`: a request still waiting when the link closed or the capture ended (< 30 s).
final class ATTUnanswered: Detector {
    static let rule = RuleInfo(
        id: "att.unanswered", severity: .warning, title: "ATT request never answered",
        explanation: """
        A request had no response when the connection closed or the capture ended, less than 30 s after it was sent. \
        The app's GATT operation never completed; on Android the per-connection GATT queue stays blocked until \
        disconnect.
        """)
    let kinds: [SessionEvent.Kind] = [.connection]

    func observe(_ event: SessionEvent, _ context: DetectorContext, _ findings: inout [Finding]) {
        guard case let .disconnected(c, _) = event else { return }
        OutstandingRequests.each(c) { p in
            let end = c.disconnectTime ?? p.time
            if end - p.time < OutstandingRequests.transactionTimeout { report(c, p, "before the connection closed", &findings) }
        }
    }

    func finish(_ context: DetectorContext, _ findings: inout [Finding]) {
        for c in context.model.live.values.sorted(by: { $0.index < $1.index }) {
            OutstandingRequests.each(c) { p in
                if context.captureEnd - p.time < OutstandingRequests.transactionTimeout { report(c, p, "before the capture ended", &findings) }
            }
        }
    }

    private func report(_ c: Connection, _ p: ATTBearer.Pending, _ when: String, _ findings: inout [Finding]) {
        findings.append(Finding(rule: Self.rule.id, severity: .warning, connection: c, time: p.time, frames: [p.frame],
                                message: "\(p.opcode.name)" + (p.handle.map { " for handle 0x\(Format.hex($0, 4))" } ?? "") + " got no response \(when)"))
    }
}

/// `att.protocol-violation`: the sequential ATT protocol broken.
final class ATTProtocolViolation: Detector {
    static let rule = RuleInfo(
        id: "att.protocol-violation", severity: .warning, title: "ATT protocol violation",
        explanation: """
        ATT is sequential (Core v5.4 Vol 3 Part F 3.3.2): a client sends one request and waits for its response; a server \
        sends one indication and waits for its confirmation. Here a second request was sent while one was outstanding, \
        a response came with no request, or an indication was sent before the previous one was confirmed. Peers may drop \
        the PDU or disconnect. On Android, never issue a GATT operation before the previous callback; on iOS, this points \
        at the peripheral firmware or another host on the device.
        """)
    let kinds: [SessionEvent.Kind] = [.attRequest, .attResponse, .attIndication]

    func observe(_ event: SessionEvent, _ context: DetectorContext, _ findings: inout [Finding]) {
        switch event {
        case let .attRequest(c, p, _, overlapping?):
            findings.append(Finding(rule: Self.rule.id, severity: .warning, connection: c, time: p.time, frames: [p.frame, overlapping.frame],
                                    message: "\(p.opcode.name) sent while \(overlapping.opcode.name) (frame \(overlapping.frame)) was still outstanding"))
        case let .attResponse(c, nil, opcode, _, frame, time, _):
            findings.append(Finding(rule: Self.rule.id, severity: .warning, connection: c, time: time, frames: [frame],
                                    message: "\(opcode.name) with no outstanding request"))
        case let .attError(c, nil, error, _, frame, time, _):
            findings.append(Finding(rule: Self.rule.id, severity: .warning, connection: c, time: time, frames: [frame],
                                    message: "Error Response (\(error)) with no outstanding request"))
        case let .attValue(c, _, _, true, frame, time, _, unconfirmed?, _):
            findings.append(Finding(rule: Self.rule.id, severity: .warning, connection: c, time: time, frames: [frame, unconfirmed.frame],
                                    message: "Indication sent before the indication of frame \(unconfirmed.frame) was confirmed"))
        default:
            break
        }
    }
}

/// `att.indication-unconfirmed`: an indication never confirmed.
final class IndicationUnconfirmed: Detector {
    static let rule = RuleInfo(
        id: "att.indication-unconfirmed", severity: .warning, title: "Indication never confirmed",
        explanation: """
        An indication got no Handle Value Confirmation before the next indication, the disconnect or the end of the \
        capture. The server cannot send another indication until it is confirmed (and times out after 30 s). On the \
        client, the stack confirms automatically — a missing confirmation points at a stuck host or a link that died.
        """)
    let kinds: [SessionEvent.Kind] = [.attIndication, .connection]

    func observe(_ event: SessionEvent, _ context: DetectorContext, _ findings: inout [Finding]) {
        switch event {
        case let .attValue(c, _, _, true, _, _, _, unconfirmed?, _):
            report(c, unconfirmed, &findings)
        case let .disconnected(c, _):
            for p in c.att.unconfirmedIndication.compactMap({ $0 }) { report(c, p, &findings) }
        default:
            break
        }
    }

    func finish(_ context: DetectorContext, _ findings: inout [Finding]) {
        for c in context.model.live.values.sorted(by: { $0.index < $1.index }) {
            for p in c.att.unconfirmedIndication.compactMap({ $0 }) { report(c, p, &findings) }
        }
    }

    private func report(_ c: Connection, _ p: ATTBearer.Pending, _ findings: inout [Finding]) {
        findings.append(Finding(rule: Self.rule.id, severity: .warning, connection: c, time: p.time, frames: [p.frame],
                                message: "Indication of handle 0x\(Format.hex(p.handle ?? 0, 4)) was never confirmed"))
    }
}

/// `att.error`: Error Responses other than the "Attribute Not Found" that ends every discovery.
final class ATTErrors: Detector {
    static let rule = RuleInfo(
        id: "att.error", severity: .info, title: "ATT error responses",
        explanation: """
        The server answered requests with errors (one finding per connection and error code). Discovery always ends with \
        Attribute Not Found, which is not reported. Read/Write Not Permitted and Invalid Handle usually mean the app \
        uses a stale handle cache (Android: refresh the cache after a firmware update; iOS: the peripheral must \
        implement Service Changed).
        """)
    let kinds: [SessionEvent.Kind] = [.attResponse]
    private var seen = Set<String>()

    func observe(_ event: SessionEvent, _ context: DetectorContext, _ findings: inout [Finding]) {
        guard case let .attError(c, request, error, handle, frame, time, _) = event else { return }
        if error == .attributeNotFound, let op = request?.opcode,
           [.readByGroupTypeRequest, .readByTypeRequest, .findInformationRequest, .findByTypeValueRequest].contains(op) { return }
        guard seen.insert("\(c.index)/\(error.rawValue)").inserted else { return }
        findings.append(Finding(rule: Self.rule.id, severity: .info, connection: c, time: time, frames: [frame],
                                message: "\(request?.opcode.name ?? "Request") failed: \(error)" + (handle != 0 ? " on handle 0x\(Format.hex(handle, 4))" : "")))
    }
}
