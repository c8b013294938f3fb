import BLEProtocol

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
        """, actor: .peripheralFirmware)
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
