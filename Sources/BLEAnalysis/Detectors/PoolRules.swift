import BLEProtocol

/// `pool.stuck-attempt`: a connection attempt that never ends. iOS and Android never time an LE
/// connection attempt out themselves; the controller keeps initiating until cancelled.
final class StuckAttempt: Detector {
    static let rule = RuleInfo(
        id: "pool.stuck-attempt", severity: .error, title: "Connection attempt never completed",
        explanation: """
        The host asked the controller to connect (LE Create Connection) and no Connection Complete or cancel followed \
        for longer than the timeout. The controller allows one pending LE connection attempt at a time, so every later \
        connection waits behind this one. On iOS, CBCentralManager.connect never times out: call cancelPeripheralConnection \
        after your own timeout. On Android, connectGatt(autoConnect=false) gives up after ~30 s with status 133 but \
        autoConnect=true waits forever: close() the BluetoothGatt you no longer need and retry with a timer.
        """,
        thresholds: [.init(name: "timeout", defaultValue: 10, unit: "s", meaning: "how long an attempt may stay pending")])
    let kinds: [SessionEvent.Kind] = [.attempt]

    func observe(_ event: SessionEvent, _ context: DetectorContext, _ findings: inout [Finding]) {
        guard case let .attemptEnded(i) = event else { return }
        let a = context.model.attempts[i]
        // Background connections through the filter accept list wait by design (autoConnect).
        guard !a.usesFilterAcceptList else { return }
        if case .failed = a.outcome { return }
        let end = a.endTime ?? a.time
        if end - a.time >= micros("timeout", context) { report(a, until: end, &findings) }
    }

    func finish(_ context: DetectorContext, _ findings: inout [Finding]) {
        for a in context.model.attempts where a.outcome == .pending && !a.usesFilterAcceptList
            && context.captureEnd - a.time >= micros("timeout", context) {
            report(a, until: context.captureEnd, &findings)
        }
    }

    private func report(_ a: ConnectionAttempt, until end: Int64, _ findings: inout [Finding]) {
        let peer = a.peerAddress?.description ?? "the filter accept list"
        let how = a.outcome == .pending ? "still pending at the end of the capture" : "ended only after"
        findings.append(Finding(rule: Self.rule.id, severity: .error, connection: nil, time: a.time,
                                frames: [a.frame] + (a.statusFrame.map { [$0] } ?? []),
                                message: "Connection attempt to \(peer) \(how) \(Format.seconds(end - a.time))"))
    }
}

/// `pool.cancelled-attempt`: an attempt the host cancelled.
final class CancelledAttempt: Detector {
    static let rule = RuleInfo(
        id: "pool.cancelled-attempt", severity: .info, title: "Connection attempt cancelled",
        explanation: """
        The host cancelled a pending connection attempt (LE Create Connection Cancel). This is what a well-behaved app does \
        when the peripheral is out of range; frequent cancels mean the app connects to devices that are not advertising.
        """)
    let kinds: [SessionEvent.Kind] = [.attempt]

    func observe(_ event: SessionEvent, _ context: DetectorContext, _ findings: inout [Finding]) {
        guard case let .attemptEnded(i) = event else { return }
        let a = context.model.attempts[i]
        guard a.outcome == .cancelled else { return }
        findings.append(Finding(rule: Self.rule.id, severity: .info, connection: nil, time: a.time,
                                frames: [a.frame] + [a.cancelFrame, a.endFrame].compactMap { $0 },
                                message: "Attempt to \(a.peerAddress?.description ?? "the filter accept list") cancelled after \(Format.seconds((a.endTime ?? a.time) - a.time))"))
    }
}

/// `pool.idle-connection`: a connection left open and unused while the app connects elsewhere.
final class IdleConnection: Detector {
    static let rule = RuleInfo(
        id: "pool.idle-connection", severity: .warning, title: "Idle connection kept open",
        explanation: """
        A connection carried no data for longer than the threshold and was still open when the host started another \
        connection attempt. Stale connections fill the controller's connection pool (often 4–8 links on phones) and \
        keep radio time. On iOS, cancelPeripheralConnection when you are done (and keep no strong reference to a \
        CBPeripheral you do not use); on Android, call BluetoothGatt.disconnect() and close() when done.
        """,
        thresholds: [.init(name: "idle", defaultValue: 20, unit: "s", meaning: "time without data before a connection counts as idle")])
    let kinds: [SessionEvent.Kind] = [.attempt]
    private var reported = Set<Int>()

    func observe(_ event: SessionEvent, _ context: DetectorContext, _ findings: inout [Finding]) {
        guard case let .attemptStarted(i) = event else { return }
        let a = context.model.attempts[i]
        for c in context.model.live.values.sorted(by: { $0.index < $1.index }) where !reported.contains(c.index) && c.adapter == a.adapter {
            let lastFrame = max(c.lastSentFrame ?? 0, c.lastReceivedFrame ?? 0)
            let lastTime = c.lastDataTime ?? c.completeTime ?? c.firstDataTime ?? a.time
            guard a.time - lastTime >= micros("idle", context) else { continue }
            reported.insert(c.index)
            let evidence = lastFrame > 0 ? lastFrame : (c.completeFrame ?? a.frame)
            findings.append(Finding(rule: Self.rule.id, severity: .warning, connection: c, time: a.time, frames: [evidence, a.frame],
                                    message: "Connection \(c.index) (\(c.peerAddress?.description ?? "handle \(c.handle)")) idle for \(Format.seconds(a.time - lastTime)) while a new connection attempt starts"))
        }
    }
}

/// `pool.unresponsive-peer`: the host keeps sending to a peer that stopped answering.
final class UnresponsivePeer: Detector {
    static let rule = RuleInfo(
        id: "pool.unresponsive-peer", severity: .warning, title: "Peer stopped answering",
        explanation: """
        The host kept sending on a connection for longer than the threshold while nothing came back from the peer. The \
        peer is gone or hung; the link stays up until the supervision timeout. Keep supervision timeouts short (a few \
        seconds), and on an ATT timeout (30 s) disconnect: neither iOS nor Android reuses a bearer after an ATT timeout.
        """,
        thresholds: [.init(name: "silence", defaultValue: 10, unit: "s", meaning: "time of host traffic with nothing received")])
    let kinds: [SessionEvent.Kind] = [.connection]

    func observe(_ event: SessionEvent, _ context: DetectorContext, _ findings: inout [Finding]) {
        guard case let .disconnected(c, _) = event else { return }
        check(c, context, &findings)
    }

    func finish(_ context: DetectorContext, _ findings: inout [Finding]) {
        for c in context.model.live.values.sorted(by: { $0.index < $1.index }) { check(c, context, &findings) }
    }

    private func check(_ c: Connection, _ context: DetectorContext, _ findings: inout [Finding]) {
        guard let lastSent = c.lastSentTime, let lastSentFrame = c.lastSentFrame else { return }
        let lastHeard = c.lastReceivedTime ?? c.completeTime ?? c.firstDataTime ?? lastSent
        guard lastSent - lastHeard >= micros("silence", context) else { return }
        let heardFrame = c.lastReceivedFrame ?? c.completeFrame ?? lastSentFrame
        findings.append(Finding(rule: Self.rule.id, severity: .warning, connection: c, time: lastHeard, frames: [heardFrame, lastSentFrame],
                                message: "Host kept sending for \(Format.seconds(lastSent - lastHeard)) with nothing received from \(c.peerAddress?.description ?? "the peer")"))
    }
}

/// `pool.full`: the controller refused a connection for lack of resources.
final class PoolFull: Detector {
    static let rule = RuleInfo(
        id: "pool.full", severity: .error, title: "Connection pool full",
        explanation: """
        A connection attempt failed with Connection Limit Exceeded (0x09), Memory Capacity Exceeded (0x07) or Connection \
        Rejected due to Limited Resources (0x0D): the controller has no room for another link. Look for connections the \
        app no longer needs (pool.idle-connection) and close them; on Android, a BluetoothGatt that was never close()d \
        keeps its client slot even after disconnect.
        """)
    let kinds: [SessionEvent.Kind] = [.attempt]
    static let statuses: Set<UInt8> = [0x07, 0x09, 0x0D]

    func observe(_ event: SessionEvent, _ context: DetectorContext, _ findings: inout [Finding]) {
        guard case let .attemptEnded(i) = event else { return }
        let a = context.model.attempts[i]
        guard case let .failed(status) = a.outcome, Self.statuses.contains(status.rawValue) else { return }
        let open = context.model.live.count
        findings.append(Finding(rule: Self.rule.id, severity: .error, connection: nil, time: a.endTime ?? a.time,
                                frames: [a.endFrame ?? a.frame, a.frame],
                                message: "Connection attempt to \(a.peerAddress?.description ?? "the filter accept list") refused: \(status.name) (0x\(Format.hex(status.rawValue))) with \(open) connection\(open == 1 ? "" : "s") open"))
    }
}

/// `pool.concurrent-connections`: how many links were open at once.
final class ConcurrentConnections: Detector {
    static let rule = RuleInfo(
        id: "pool.concurrent-connections", severity: .info, title: "Simultaneous connections",
        explanation: """
        The largest number of connections open at the same time. Phones typically allow 4–8 LE links, shared with \
        every app and accessory (watch, earbuds).
        """)
    let kinds: [SessionEvent.Kind] = []

    func observe(_ event: SessionEvent, _ context: DetectorContext, _ findings: inout [Finding]) {}

    func finish(_ context: DetectorContext, _ findings: inout [Finding]) {
        let m = context.model
        guard m.peakConnections >= 2 else { return }
        let time = m.connections.first { $0.completeFrame == m.peakConnectionsFrame }?.completeTime ?? 0
        findings.append(Finding(rule: Self.rule.id, severity: .info, connection: nil, time: time, frames: [m.peakConnectionsFrame],
                                message: "Up to \(m.peakConnections) connections were open at the same time"))
    }
}

/// Small formatting helpers for finding messages.
enum Format {
    static func seconds(_ micros: Int64) -> String {
        let tenths = micros / 100_000
        return "\(tenths / 10).\(tenths % 10) s"
    }
    static func hex<T: BinaryInteger>(_ v: T, _ width: Int = 2) -> String {
        let s = String(v, radix: 16)
        return String(repeating: "0", count: max(0, width - s.count)) + s
    }
}
