import BLEProtocol

/// `adv.oversize`: advertising data over its size limit or with a broken AD structure.
final class AdvertisingOversize: Detector {
    static let rule = RuleInfo(
        id: "adv.oversize", severity: .warning, title: "Advertising data too long or malformed",
        explanation: """
        Legacy advertising and scan response data hold at most 31 bytes, and each AD structure's length must fit in \
        them. Longer data is rejected by the controller or cut, and scanners drop malformed structures (iOS shows no \
        name or services). Move data to the scan response, shorten the local name, or use extended advertising.
        """)
    let kinds: [SessionEvent.Kind] = [.advertising]

    func observe(_ event: SessionEvent, _ context: DetectorContext, _ findings: inout [Finding]) {
        switch event {
        case let .advertisingData(frame, time, declared, problem?):
            findings.append(Finding(rule: Self.rule.id, severity: .warning, connection: nil, time: time, frames: [frame],
                                    message: "Advertising data set by the host (\(declared) bytes): \(problem)"))
        case let .advertisingReportProblem(frame, time, problem):
            findings.append(Finding(rule: Self.rule.id, severity: .warning, connection: nil, time: time, frames: [frame],
                                    message: "Advertising report: \(problem)"))
        default:
            break
        }
    }
}

/// `adv.not-stopped`: a peripheral advertising on while connected.
final class AdvertisingNotStopped: Detector {
    static let rule = RuleInfo(
        id: "adv.not-stopped", severity: .info, title: "Advertising while connected",
        explanation: """
        The local peripheral enabled advertising while a connection it accepted was open. Fine for a peripheral that \
        serves several centrals; otherwise it wastes radio time and battery and lets other phones connect. On iOS, \
        stopAdvertising() once connected; on Android, stop the AdvertiseCallback / advertising set.
        """)
    let kinds: [SessionEvent.Kind] = [.advertising]

    func observe(_ event: SessionEvent, _ context: DetectorContext, _ findings: inout [Finding]) {
        guard case let .advertisingEnable(frame, time, adapter, true) = event else { return }
        guard let c = context.model.live.values.filter({ $0.adapter == adapter && $0.role == .peripheral }).min(by: { $0.index < $1.index })
        else { return }
        findings.append(Finding(rule: Self.rule.id, severity: .info, connection: c, time: time, frames: [frame],
                                message: "Advertising enabled while connection \(c.index) (as peripheral) is open"))
    }
}

/// `link.disconnect`: every disconnection with its reason; link-loss reasons are warnings.
final class Disconnects: Detector {
    static let rule = RuleInfo(
        id: "link.disconnect", severity: .warning, title: "Disconnection",
        explanation: """
        Why each connection ended. Connection Timeout (0x08, supervision timeout: the peer went out of range or \
        stopped), Connection Failed to be Established (0x3E: the first packets were never exchanged — interference or \
        a peer that stopped advertising), LL Response Timeout (0x22) and MIC Failure (0x3D) are warnings; host- or \
        user-initiated reasons are information.
        """)
    let kinds: [SessionEvent.Kind] = [.connection]
    static let warnings: Set<UInt8> = [0x08, 0x22, 0x3D, 0x3E]

    func observe(_ event: SessionEvent, _ context: DetectorContext, _ findings: inout [Finding]) {
        guard case let .disconnected(c, _) = event, let frame = c.disconnectFrame, let reason = c.disconnectReason else { return }
        let severity: Severity = Self.warnings.contains(reason.rawValue) ? .warning : .info
        let who = c.localDisconnectReason != nil ? "the host" : "the peer or the controller"
        findings.append(Finding(rule: Self.rule.id, severity: severity, connection: c, time: c.disconnectTime ?? 0, frames: [frame],
                                message: "Disconnected: \(reason.name) (0x\(Format.hex(reason.rawValue))), initiated by \(who)"))
    }
}

/// `link.disconnect-summary`: disconnect reasons over the whole capture.
final class DisconnectSummary: Detector {
    static let rule = RuleInfo(
        id: "link.disconnect-summary", severity: .info, title: "Disconnect reasons",
        explanation: "How many connections ended for each reason over the whole capture.")
    let kinds: [SessionEvent.Kind] = []

    func observe(_ event: SessionEvent, _ context: DetectorContext, _ findings: inout [Finding]) {}

    func finish(_ context: DetectorContext, _ findings: inout [Finding]) {
        let closed = context.model.connections.filter { $0.disconnectReason != nil }.sorted { ($0.disconnectFrame ?? 0) < ($1.disconnectFrame ?? 0) }
        guard !closed.isEmpty else { return }
        var counts: [UInt8: Int] = [:]
        for c in closed { counts[c.disconnectReason!.rawValue, default: 0] += 1 }   // safe: filtered non-nil
        let text = counts.sorted { $0.value > $1.value }.map { "\($0.value)× \(HCIStatus(rawValue: $0.key).name) (0x\(Format.hex($0.key)))" }
        findings.append(Finding(rule: Self.rule.id, severity: .info, connection: nil, time: closed[0].disconnectTime ?? 0,
                                frames: closed.prefix(50).compactMap(\.disconnectFrame),
                                message: "Disconnect reasons: " + text.joined(separator: ", ")))
    }
}
