import BLEProtocol

/// `perf.*`: why a transfer is slow, from each connection's `transfer` (`Session/LinkBudget.swift`,
/// docs/RULES.md "Transfer and its limits"), decided when the pass ends. Information: the capture
/// shows how the data went, not that the application needed it faster.

/// Who sent a direction's PDUs, in a finding's words.
private func sender(_ d: TransferDirection, _ c: Connection) -> FindingMessage { d.sentByHost ? "the host" : .peer(c) }

/// Bytes per second, rounded, for a sentence.
private func rate(_ v: Double) -> String { v >= 100 ? String(Int(v.rounded())) : String(Double(Int((v * 10).rounded())) / 10) }

private func millis(_ micros: Double) -> String {
    micros >= 10_000 ? String(Int((micros / 1000).rounded())) : String(Double(Int((micros / 100).rounded())) / 10)
}

/// The `duration` threshold every `perf.*` rule has: a transfer over sooner is not slow in a way anyone notices.
private let duration = RuleInfo.Threshold(name: "duration", defaultValue: 1, unit: "s", meaning: "first to last value PDU of the side, at least")

/// A `--rule …count=` threshold as a count: a value out of range (1e300, nan) cannot trap.
private func whole(_ v: Double) -> Int { v.isFinite ? Int(min(max(v, 0), 1e15)) : Int.max }

private func seconds(_ s: Double) -> String { s >= 10 ? String(Int(s.rounded())) : String(Double(Int((s * 10).rounded())) / 10) }

/// `perf.write-with-response`: a side's transfer was paced by Write Requests, each waiting for its
/// response. Preconditions: at least `count` Write Requests / Prepare Write Requests, at least half of
/// the side's value PDUs; the round trip sets the ceiling (`limitedBy` starts with
/// `write-with-response`); the waits for the responses fill at least half of the transfer's span (the
/// application was not pausing between writes). A few configuration writes do not fire.
final class WriteWithResponse: Detector {
    static let rule = RuleInfo(
        id: "perf.write-with-response", severity: .info, title: "Writes paced by their responses",
        explanation: """
        Each Write Request waits for its Write Response before the next may go (one request outstanding, Core v5.4 \
        Vol 3 Part F 3.3.2): at best one write per connection interval, often two or three. For a stream of data, \
        use Write Command (write without response) with flow control. iOS: .withoutResponse, sending while \
        canSendWriteWithoutResponse is true and resuming in peripheralIsReady(toSendWriteWithoutResponse:). \
        Android: WRITE_TYPE_NO_RESPONSE, one write at a time, the next after onCharacteristicWrite. Keep Write \
        Request for the writes whose outcome the app must know.
        """,
        thresholds: [.init(name: "count", defaultValue: 50, unit: "writes", meaning: "Write Requests of one side on a connection"), duration],
        doc: .init(
            firesWhen: #"""
                one side of a connection sent ≥ `count` (default 50) Write Requests / Prepare Write Requests, \#
                at least half of its value PDUs, over ≥ `duration` (default 1 s); the round trip sets its \#
                ceiling (`limitedBy` starts with `write-with-response`) and the waits for the responses fill \#
                at least half of its span (each write paced by its response, not an application pausing \#
                between writes). The message gives the rate, the wait in connection intervals, the ceiling, \#
                what Write Commands would allow, and the iOS / Android flow-control calls
                """#,
            evidence: "the first value PDU of the side, the last"))
    let kinds: [SessionEvent.Kind] = []

    func observe(_ event: SessionEvent, _ context: DetectorContext, _ findings: inout [Finding]) {}

    func finish(_ context: DetectorContext, _ findings: inout [Finding]) { decide(nil, context, &findings) }
    func retire(_ c: Connection, _ context: DetectorContext, _ findings: inout [Finding]) { decide(c, context, &findings) }

    private func decide(_ only: Connection?, _ context: DetectorContext, _ findings: inout [Finding]) {
        let count = whole(threshold("count", context))
        eachTransfer(lasting: threshold("duration", context), context, only: only) { c, d in
            guard d.writeRequests >= count, d.writeRequests * 2 >= d.pdus, d.limitedBy.first == .writeWithResponse,
                  let span = d.seconds, let measured = d.bytesPerSecond, let ceiling = d.ceilingBytesPerSecond,
                  let wait = d.averageAnswerMicros, Double(d.answerWaitMicros) >= span * 1e6 / 2 else { return }
            let interval = Double(d.intervalUnits) * 1250
            var m: FindingMessage = d.sentByHost ? "The host" : .peer(c)
            m = m + " sent \(d.writeRequests) Write Requests"
            m = m + " (\(d.bytes / max(1, d.pdus)) bytes on average) in \(seconds(span)) s: \(rate(measured)) bytes/s."
            m = m + " Each waited for its response, \(millis(Double(wait))) ms on average"
            if interval > 0 {
                m = m + " (\(String(Double(Int((Double(wait) / interval * 10).rounded())) / 10)) connection intervals of \(millis(interval)) ms"
                m = m + (d.latency > 0 ? ", peripheral latency \(d.latency))" : ")")
            }
            m = m + "; one write per round trip allows \(rate(ceiling)) bytes/s here."
            // The same PDUs without the round trip: air time and controller buffers only.
            // The one change that helps most: Write Command with flow control (the same PDUs without the
            // round trip: air time and controller buffers only), then the link's parameters.
            let streaming = max(d.airMicros, d.bufferMicros)
            m = m + " Use Write Command with flow control"
            if streaming > 0 { m = m + ", up to \(rate(Double(d.bytes) * 1e6 / streaming)) bytes/s on this link" }
            m = m + (d.sentByHost
                ? ": iOS .withoutResponse, paced by canSendWriteWithoutResponse / peripheralIsReady(toSendWriteWithoutResponse:); Android WRITE_TYPE_NO_RESPONSE, the next write after onCharacteristicWrite."
                : " (the peer's client).")
            if d.latency > 0 { m = m + " Latency 0 while streaming shortens each wait." }
            if interval > 15_000 {
                m = m + " Where writes with response must stay, a shorter interval shortens each round trip"
                m = m + " (iOS accepts 15 ms at the shortest; Android: requestConnectionPriority(CONNECTION_PRIORITY_HIGH))."
            }
            findings.append(Finding(rule: Self.rule.id, severity: .info, connection: c, time: d.firstTime, frames: [d.firstFrame, d.lastFrame],
                                    message: m, actor: d.sentByHost ? .app : .peripheralFirmware))
        }
    }
}

/// `perf.small-mtu`: a side's values fill a small ATT_MTU: the data is cut into ATT_MTU−3 pieces.
/// Preconditions: ATT_MTU known and below 247; at least `count` PDUs filled it, at least half of the
/// side's value PDUs (`limitedBy` contains `att-mtu`).
final class SmallMTU: Detector {
    static let rule = RuleInfo(
        id: "perf.small-mtu", severity: .info, title: "Data cut into small ATT PDUs",
        explanation: """
        The values fill ATT_MTU−3 exactly: the application cuts its data into pieces the ATT_MTU allows, and each \
        piece pays its own PDU (and, for writes with response or indications, its own round trip). A larger \
        ATT_MTU carries up to 244 bytes per PDU in one LL packet of 251 octets. Android: BluetoothGatt.requestMtu(517) \
        after connecting, then size the pieces from onMtuChanged. iOS negotiates the MTU itself: size writes by \
        maximumWriteValueLength(for:). A peripheral whose server answers a small MTU must raise it in its firmware.
        """,
        thresholds: [.init(name: "count", defaultValue: 50, unit: "PDUs", meaning: "PDUs of one side filling ATT_MTU−3"), duration],
        doc: .init(
            firesWhen: #"""
                ≥ `count` (default 50) values of one side filled a known ATT_MTU below 247 (value = ATT_MTU − \#
                3), at least half of its value PDUs (`limitedBy` has `att-mtu`), over ≥ `duration` (1 s), and \#
                the application was not pausing (`limitedBy` does not start with `application`). Actor: the \#
                peripheral firmware when the host asked for more and the server answered the small MTU, else \#
                the app (`requestMtu`, `maximumWriteValueLength(for:)`)
                """#,
            evidence: "the first value PDU of the side, the last"))
    let kinds: [SessionEvent.Kind] = []

    func observe(_ event: SessionEvent, _ context: DetectorContext, _ findings: inout [Finding]) {}

    func finish(_ context: DetectorContext, _ findings: inout [Finding]) { decide(nil, context, &findings) }
    func retire(_ c: Connection, _ context: DetectorContext, _ findings: inout [Finding]) { decide(c, context, &findings) }

    private func decide(_ only: Connection?, _ context: DetectorContext, _ findings: inout [Finding]) {
        let count = whole(threshold("count", context))
        eachTransfer(lasting: threshold("duration", context), context, only: only) { c, d in
            let limits = d.limitedBy
            guard d.fullPDUs >= count, limits.contains(.attMTU), limits.first != .application else { return }
            var m: FindingMessage = "\(d.fullPDUs) of the \(d.pdus) values \(sender(d, c)) sent filled ATT_MTU \(d.mtu)"
            m = m + " (\(d.mtu - 3) bytes each)"
            if let measured = d.bytesPerSecond, let span = d.seconds { m = m + "; \(d.bytes) bytes in \(seconds(span)) s, \(rate(measured)) bytes/s." } else { m = m + "." }
            // Who keeps the MTU small: the server's answer when the client asked for more.
            var actor = Actor.app
            if let client = c.att.clientMTU, let server = c.att.serverMTU, server < client, Int(server) == d.mtu {
                m = m + " The client asked for \(client), the server answered \(server): the server's firmware sets the limit."
                actor = c.att.clientIsHost == true ? .peripheralFirmware : .app
            } else if c.att.clientMTU == nil {
                m = m + " No MTU exchange on this connection: Android BluetoothGatt.requestMtu(517); iOS negotiates itself (maximumWriteValueLength(for:))."
            } else {
                m = m + " A larger ATT_MTU (up to 247 fills one LL packet of 251 octets) carries more per PDU: Android requestMtu(517); iOS maximumWriteValueLength(for:)."
            }
            findings.append(Finding(rule: Self.rule.id, severity: .info, connection: c, time: d.firstTime, frames: [d.firstFrame, d.lastFrame],
                                    message: m, actor: actor))
        }
    }
}

/// `perf.data-length`: a side's PDUs crossed the air in several LL data PDUs because the LL data
/// length stayed below what the ATT_MTU needs. Preconditions: at least `count` PDUs needed more than one
/// LL data PDU, at least half of the side's value PDUs, at a data length below 251 octets (`limitedBy`
/// contains `data-length`).
final class SmallDataLength: Detector {
    static let rule = RuleInfo(
        id: "perf.data-length", severity: .info, title: "PDUs split into short LL packets",
        explanation: """
        Each ATT PDU longer than the LL data length (27 octets until LE Data Length Change, Core v5.4 Vol 6 Part B \
        4.5.10) crosses the air in several LL packets, each answered by the other side: a large ATT_MTU then buys \
        little. LE Data Length Extension (251 octets) is negotiated by the controllers (LL_LENGTH_REQ): enable it in \
        the peripheral's stack (Nordic sd_ble_gap_data_length_update, Zephyr CONFIG_BT_CTLR_DATA_LENGTH_MAX=251); \
        phones that support it accept. The 2M PHY halves the air time again where both sides support it (Android \
        BluetoothGatt.setPreferredPhy; iOS chooses itself).
        """,
        thresholds: [.init(name: "count", defaultValue: 50, unit: "PDUs", meaning: "PDUs of one side needing several LL packets"), duration],
        actor: .peripheralFirmware,
        doc: .init(
            firesWhen: #"""
                ≥ `count` (default 50) PDUs of one side needed several LL data PDUs at a data length below 251 \#
                octets, at least half of its value PDUs (`limitedBy` has `data-length`), over ≥ `duration` (1 \#
                s), and the application was not pausing
                """#,
            evidence: "the first value PDU of the side, the last"))
    let kinds: [SessionEvent.Kind] = []

    func observe(_ event: SessionEvent, _ context: DetectorContext, _ findings: inout [Finding]) {}

    func finish(_ context: DetectorContext, _ findings: inout [Finding]) { decide(nil, context, &findings) }
    func retire(_ c: Connection, _ context: DetectorContext, _ findings: inout [Finding]) { decide(c, context, &findings) }

    private func decide(_ only: Connection?, _ context: DetectorContext, _ findings: inout [Finding]) {
        let count = whole(threshold("count", context))
        eachTransfer(lasting: threshold("duration", context), context, only: only) { c, d in
            let limits = d.limitedBy
            guard d.fragmentedPDUs >= count, d.fragmentedPDUs * 2 >= d.pdus, limits.contains(.dataLength), limits.first != .application
            else { return }
            let average = d.bytes / max(1, d.pdus)
            let packets = (average + 3 + 4 + d.llPayload - 1) / d.llPayload   // opcode and handle, L2CAP header
            var m: FindingMessage = "\(d.fragmentedPDUs) of the \(d.pdus) PDUs \(sender(d, c)) sent (\(average) bytes of value on average)"
            m = m + " crossed the air in about \(packets) LL packets each: the LL data length stayed at \(d.llPayload) octets"
            m = m + " with ATT_MTU \(d.mtu)" + (d.phy == 2 ? "." : " on the \(d.phy == 3 ? "LE Coded" : "LE 1M") PHY.")
            if let measured = d.bytesPerSecond, let ceiling = d.ceilingBytesPerSecond {
                m = m + " Measured \(rate(measured)) bytes/s, the link allowed \(rate(ceiling)) bytes/s at this data length."
            }
            m = m + " Enable LE Data Length Extension (251 octets) in the peripheral's stack."
            findings.append(Finding(rule: Self.rule.id, severity: .info, connection: c, time: d.firstTime, frames: [d.firstFrame, d.lastFrame],
                                    message: m))
        }
    }
}

extension Detector {
    /// Each direction of each connection whose value PDUs span at least `seconds` (the perf rules'
    /// common walk over `Connection.transfer`): of the connections held at the end, or of `only`, the
    /// one being summarised (`retire`: each connection is decided alone).
    func eachTransfer(lasting seconds: Double, _ context: DetectorContext, only: Connection? = nil,
                      _ body: (Connection, TransferDirection) -> Void) {
        for c in only.map({ [$0] }) ?? context.model.connections {
            for d in [c.transfer.sent, c.transfer.received] where (d.seconds ?? 0) >= seconds { body(c, d) }
        }
    }
}
