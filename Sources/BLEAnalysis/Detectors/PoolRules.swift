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
        thresholds: [.init(name: "timeout", defaultValue: 10, unit: "s", meaning: "how long an attempt may stay pending")],
        doc: .init(
            firesWhen: #"""
                an LE (Extended) Create Connection **to an address** (not through the filter accept list: \#
                background auto-connect waits by design), accepted by its Command Status, still pending when \#
                the capture ends ≥ `timeout` (default 10 s) later. An attempt the host cancels (Android's own \#
                direct-connect timeout) or that connects late was handled, not stuck.
                """#,
            evidence: "the create command, its Command Status"))
    let kinds: [SessionEvent.Kind] = [.attempt]

    // An attempt that ended — connected, or cancelled by the host's own timer (Android cancels a direct
    // connect after its timeout) — was handled, however long it took; only one that never ends is stuck.
    func observe(_ event: SessionEvent, _ context: DetectorContext, _ findings: inout [Finding]) {}

    func finish(_ context: DetectorContext, _ findings: inout [Finding]) {
        for a in context.model.attempts where a.outcome == .pending && !a.usesFilterAcceptList && a.isLE
            && context.captureEnd - a.time >= micros("timeout", context) {
            report(a, until: context.captureEnd, &findings)
        }
    }

    private func report(_ a: ConnectionAttempt, until end: Int64, _ findings: inout [Finding]) {
        let peer = a.peerAddress?.description ?? "the filter accept list"
        findings.append(Finding(rule: Self.rule.id, severity: .error, connection: nil, time: a.time,
                                frames: [a.frame] + (a.statusFrame.map { [$0] } ?? []),
                                message: "Connection attempt to \(peer) still pending when the capture ended, \(Format.seconds(end - a.time)) after it started"))
    }
}

/// `pool.cancelled-attempt`: an attempt the host cancelled.
final class CancelledAttempt: Detector {
    static let rule = RuleInfo(
        id: "pool.cancelled-attempt", severity: .info, title: "Connection attempt cancelled",
        explanation: """
        The host cancelled a pending connection attempt (LE Create Connection Cancel). This is what a well-behaved app does \
        when the peripheral is out of range; frequent cancels mean the app connects to devices that are not advertising.
        """,
        doc: .init(
            firesWhen: #"""
                an attempt to an address ended by LE Create Connection Cancel (Connection Complete 0x02/0x44); \#
                the OS's filter-accept-list attempts, cancelled and restarted whenever the list changes, are \#
                not reported
                """#,
            evidence: "the create command, the cancel, the completion"))
    let kinds: [SessionEvent.Kind] = [.attempt]

    func observe(_ event: SessionEvent, _ context: DetectorContext, _ findings: inout [Finding]) {
        guard case let .attemptEnded(i) = event else { return }
        let a = context.model.attempts[i]
        // Background auto-connect through the filter accept list is cancelled and restarted by the OS
        // whenever the list changes: by design, not the app's doing.
        guard a.outcome == .cancelled, !a.usesFilterAcceptList else { return }
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
        thresholds: [.init(name: "idle", defaultValue: 20, unit: "s", meaning: "time without data before a connection counts as idle")],
        doc: .init(
            firesWhen: #"""
                an LE connection whose set-up is in the capture, with no ATT/L2CAP traffic for ≥ `idle` \#
                (default 20 s), still open while the host starts an **LE attempt to an address** on the same \#
                adapter (a BR/EDR page, the OS's background auto-connect or a rejected create do not compete \#
                for an LE slot)
                """#,
            evidence: "the connection's last data frame (or its Connection Complete), the later create command"))
    let kinds: [SessionEvent.Kind] = [.attempt]
    private var reported = Set<Int>()

    func observe(_ event: SessionEvent, _ context: DetectorContext, _ findings: inout [Finding]) {
        guard case let .attemptStarted(i) = event else { return }
        let a = context.model.attempts[i]
        // Only an app's own LE connection attempt competes with idle LE links for the controller's
        // connection slots: not a BR/EDR page, not the OS's background auto-connect, not a rejected create.
        guard a.isLE, !a.usesFilterAcceptList, a.outcome == .pending else { return }
        for c in context.model.live.values.sorted(by: { $0.index < $1.index })
            where !reported.contains(c.index) && c.adapter == a.adapter && c.isLE && !c.lifecycle.inferred {
            let lastFrame = max(c.traffic.lastSentFrame ?? 0, c.traffic.lastReceivedFrame ?? 0)
            let lastTime = c.traffic.lastDataTime ?? c.lifecycle.completeTime ?? c.traffic.firstDataTime ?? a.time
            guard a.time - lastTime >= micros("idle", context) else { continue }
            reported.insert(c.index)
            let evidence = lastFrame > 0 ? lastFrame : (c.lifecycle.completeFrame ?? a.frame)
            findings.append(Finding(rule: Self.rule.id, severity: .warning, connection: c, time: a.time, frames: [evidence, a.frame],
                                    message: "Connection \(c.index) to \(peer: c) carried no data for \(Format.seconds(a.time - lastTime)) and was still open when the host started connecting to \(a.peerAddress?.description ?? "another device")"))
        }
    }
}

/// `pool.unresponsive-peer`: the host keeps sending to a peer that answers nothing, although something
/// was due: the host's packets sit in the controller (no Number Of Completed Packets for them: the peer's
/// link layer is gone), or a request of the host is outstanding (the peer's host is gone). Traffic that
/// flows one way and needs no answer is normal (Write Commands, notifications, RFCOMM streams the peer's
/// link layer acknowledges); a peer that sends anything (a parameter request, an empty PDU) is alive; one
/// packet before Bluetooth shuts down is not a pattern.
final class UnresponsivePeer: Detector {
    static let rule = RuleInfo(
        id: "pool.unresponsive-peer", severity: .warning, title: "Peer stopped answering",
        explanation: """
        The host kept sending on a connection for longer than the threshold while nothing came back from the peer, \
        although an answer was due (a request was outstanding, or the controller could not deliver the packets). The \
        peer is gone or hung; the link stays up until the supervision timeout. Keep supervision timeouts short (a few \
        seconds), and on an ATT timeout (30 s) disconnect: neither iOS nor Android reuses a bearer after an ATT timeout.
        """,
        thresholds: [.init(name: "silence", defaultValue: 10, unit: "s", meaning: "time of host traffic with nothing received while an answer was due")],
        actor: .peripheralFirmware,
        doc: .init(
            firesWhen: #"""
                the host kept sending (≥ 2 ACL packets) for ≥ `silence` (default 10 s) with nothing received \#
                from the peer, **while an answer was due**: a host ATT request outstanding since the silence \#
                began, or host packets the controller never completed (no Number Of Completed Packets). \#
                One-way traffic the peer's link layer acknowledges (Write Commands, notifications, RFCOMM) is \#
                not silence; a peer that sends anything is alive. On an air capture, not when the sniffer lost \#
                packets after the request (its answer may be among them; a peripheral that went silent is \#
                `link.disconnect`'s)
                """#,
            evidence: "the last frame received (or the Connection Complete), the last TX frame"))
    let kinds: [SessionEvent.Kind] = [.connection]

    func observe(_ event: SessionEvent, _ context: DetectorContext, _ findings: inout [Finding]) {
        guard case let .disconnected(c, pending) = event else { return }
        check(c, pending, context, &findings)
    }

    func finish(_ context: DetectorContext, _ findings: inout [Finding]) {
        for c in context.model.live.values.sorted(by: { $0.index < $1.index }) { check(c, c.buffers.unacknowledged.all, context, &findings) }
    }

    private func check(_ c: Connection, _ pending: [SentPacket], _ context: DetectorContext, _ findings: inout [Finding]) {
        guard let lastSent = c.traffic.lastSentTime, let lastSentFrame = c.traffic.lastSentFrame else { return }
        let lastHeard = c.traffic.lastReceivedTime ?? c.lifecycle.completeTime ?? c.traffic.firstDataTime ?? lastSent
        guard lastSent - lastHeard >= micros("silence", context), c.traffic.aclSent >= 2 else { return }
        // What was due: a host request outstanding since before the silence, or undelivered packets.
        let request = c.att.allOutstanding.first { $0.sentByHost && $0.time <= lastSent && $0.time >= lastHeard }
        let undelivered = c.buffers.packetsCompleted > 0 ? pending.first.flatMap { $0.time <= lastSent - micros("silence", context) ? $0 : nil } : nil
        guard request != nil || undelivered != nil else { return }
        // Air captures: the sniffer missed packets after the request; its answer may be among them.
        if let request, undelivered == nil, c.snifferLoss.captureLossFrame > request.frame { return }
        let heardFrame = c.traffic.lastReceivedFrame ?? c.lifecycle.completeFrame ?? lastSentFrame
        let why = request.map { "its \($0.opcode.name) (frame \($0.frame)) is still unanswered" }
            ?? "the controller delivered none of its last packets"
        findings.append(Finding(rule: Self.rule.id, severity: .warning, connection: c, time: lastHeard, frames: [heardFrame, lastSentFrame],
                                message: "The host kept sending to \(peer: c) for \(Format.seconds(lastSent - lastHeard)) with nothing received; \(why)"))
    }
}

/// `pool.rejected-attempt`: a connection attempt the controller rejected because another was still
/// pending (Command Disallowed, 0x0C): the controller allows one pending LE create at a time (Core v5.4
/// Vol 4 Part E 7.8.12). The pending attempt goes on; the rejected one never connects.
final class RejectedAttempt: Detector {
    static let rule = RuleInfo(
        id: "pool.rejected-attempt", severity: .warning, title: "Connection attempt rejected while another is pending",
        explanation: """
        The host issued a connection attempt while its previous one was still pending, and the controller answered \
        Command Disallowed. The second device is never connected by this attempt; whoever asked for it waits for a \
        callback that will not come unless the host retries. Host stacks should queue connection requests (one \
        pending LE Create Connection per controller); on Android, serialize connectGatt calls per device and use \
        autoConnect for background reconnection; on iOS, CoreBluetooth queues for you — report it to Apple.
        """, actor: .hostStack,
        doc: .init(
            firesWhen: #"""
                a connection attempt answered Command Disallowed (0x0C) in its Command Status while the host's \#
                previous attempt on that transport was still pending (the controller allows one pending LE \#
                create, Core v5.4 Vol 4 Part E 7.8.12); the pending attempt stays pending
                """#,
            evidence: "the Command Status, the rejected create, the pending create"))
    let kinds: [SessionEvent.Kind] = [.attempt]

    func observe(_ event: SessionEvent, _ context: DetectorContext, _ findings: inout [Finding]) {
        guard case let .attemptEnded(i) = event else { return }
        let a = context.model.attempts[i]
        guard case let .failed(status) = a.outcome, status == .commandDisallowed, let p = a.issuedWhilePending else { return }
        let pending = context.model.attempts[p]
        let target = a.peerAddress?.description ?? "the filter accept list"
        let other = pending.peerAddress?.description ?? "the filter accept list"
        var f = Finding(rule: Self.rule.id, severity: .warning, connection: nil, time: a.endTime ?? a.time,
                        frames: [a.endFrame ?? a.frame, a.frame, pending.frame],
                        message: "Connection attempt to \(target) rejected with Command Disallowed (0x0c): the attempt to \(other) started at frame \(pending.frame) was still pending")
        f.status = 0x0C
        f.cause = FindingCause(.controllerRefused, frames: [a.endFrame ?? a.frame, pending.frame], """
            the controller allows one pending LE connection attempt (Core v5.4 Vol 4 Part E 7.8.12): it refused this one in its \
            Command Status because the attempt of frame \(pending.frame) was still pending
            """)
        findings.append(f)
    }
}

/// `pool.page-timeouts`: BR/EDR pages that fail with Page Timeout (0x04) again and again: the OS
/// pages bonded devices that are not there (headsets, cars), spending radio time and battery, and
/// delaying every other connection while it pages.
final class RepeatedPageTimeouts: Detector {
    static let rule = RuleInfo(
        id: "pool.page-timeouts", severity: .warning, title: "Repeated failed pages",
        explanation: """
        BR/EDR connection attempts (pages) failed with Page Timeout again and again: the device paged is off or out \
        of range. Phones page bonded devices (audio, car kits) in the background; each page keeps the radio busy for \
        up to the page timeout (5 s by default), delaying LE connections and scanning. Remove bonds of devices that \
        are gone (Settings → Bluetooth → Forget), or let the app stop reconnecting to a device that does not answer.
        """,
        thresholds: [.init(name: "count", defaultValue: 5, unit: "pages", meaning: "failed pages to one device before it is reported")],
        actor: .hostStack,
        doc: .init(
            severity: "warning / info",
            firesWhen: #"""
                BR/EDR pages (Create Connection) failed with Page Timeout (0x04). Warning: ≥ `count` (default \#
                5) to one device — one finding per capture with the devices and counts (the OS pages a device \#
                that is gone again and again, each page holding the radio up to the page timeout, 5.12 s by \#
                default, Core v5.4 Vol 4 Part E 7.3.16). Info: fewer to a device, one finding per device from \#
                the first, with the count and the time the radio spent paging it
                """#,
            evidence: "the first failed completion, its create, the later failures"))
    let kinds: [SessionEvent.Kind] = []

    func observe(_ event: SessionEvent, _ context: DetectorContext, _ findings: inout [Finding]) {}

    func finish(_ context: DetectorContext, _ findings: inout [Finding]) {
        var perPeer: [BDAddr: [ConnectionAttempt]] = [:]
        var order: [BDAddr] = []
        for a in context.model.attempts where !a.isLE {
            guard case let .failed(status) = a.outcome, status == .pageTimeout, let peer = a.peerAddress else { continue }
            if perPeer[peer] == nil { order.append(peer) }
            perPeer[peer, default: []].append(a)
        }
        let minimum = Int(threshold("count", context))
        // Fewer failures to a device: information from the first, per device — the app or the OS paged a
        // device that is not there, and each page held the radio for up to the page timeout.
        for peer in order where (perPeer[peer]?.count ?? 0) < minimum {
            guard let list = perPeer[peer], let first = list.first else { continue }
            let held = list.reduce(Int64(0)) { $0 + (($1.endTime ?? $1.time) - $1.time) }
            findings.append(Finding(rule: Self.rule.id, severity: .info, connection: nil, time: first.time,
                                    frames: [first.endFrame ?? first.frame, first.frame] + list.dropFirst().compactMap(\.endFrame),
                                    message: "\(list.count == 1 ? "A page" : "\(list.count) pages") to \(peer) failed with Page Timeout (0x04): the device is off or out of range; the radio paged it for \(Format.duration(held))"))
        }
        let repeated = order.filter { (perPeer[$0]?.count ?? 0) >= minimum }
        guard !repeated.isEmpty else { return }
        let all = repeated.flatMap { perPeer[$0] ?? [] }.sorted { $0.frame < $1.frame }
        guard let first = all.first, let last = all.last else { return }
        let counts = repeated.map { "\($0) \(perPeer[$0]?.count ?? 0)×" }.joined(separator: ", ")
        let total = all.count
        findings.append(Finding(rule: Self.rule.id, severity: .warning, connection: nil, time: first.time,
                                frames: [first.endFrame ?? first.frame, first.frame] + all.dropFirst().prefix(48).compactMap(\.endFrame),
                                message: "\(total) pages failed with Page Timeout (0x04) over \(Format.duration((last.endTime ?? last.time) - first.time)): \(counts)"))
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
        """, actor: .app,
        doc: .init(
            firesWhen: #"""
                a connection attempt fails with Connection Limit Exceeded (0x09), Memory Capacity Exceeded \#
                (0x07) or Limited Resources (0x0D), in Command Status or Connection Complete
                """#,
            evidence: "the failing status event, the create command"))
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
        """, actor: .none,
        doc: .init(
            firesWhen: #"""
                once per capture: the maximum number of simultaneous connections, when ≥ 2. In a filtered \#
                export (no connection events) only links whose data interleaves were provably open together: \#
                successive sessions on new handles are not
                """#,
            evidence: #"""
                the Connection Complete that reached the maximum (filtered export: the first data frame of the \#
                link that reached it)
                """#))
    let kinds: [SessionEvent.Kind] = []

    func observe(_ event: SessionEvent, _ context: DetectorContext, _ findings: inout [Finding]) {}

    /// A summarised connection that made the peak so far: where it was reached, and when.
    private var summarisedPeak: (frame: Int, time: Int64?)?
    func retire(_ c: Connection, _ context: DetectorContext, _ findings: inout [Finding]) {
        if c.lifecycle.completeFrame == context.model.peakConnectionsFrame, summarisedPeak?.frame != c.lifecycle.completeFrame {
            summarisedPeak = (context.model.peakConnectionsFrame, c.lifecycle.completeTime)
        }
    }

    func finish(_ context: DetectorContext, _ findings: inout [Finding]) {
        let m = context.model
        if m.filteredExport != nil {
            // No connection event in the capture: a link shows it is open only while it carries data.
            // Only links whose data interleaves were provably open together (successive sessions on new
            // handles are not).
            guard let peak = Self.overlappingData(m.connections), peak.count >= 2 else { return }
            findings.append(Finding(rule: Self.rule.id, severity: .info, connection: nil, time: peak.time, frames: [peak.frame],
                                    message: "Up to \(peak.count) connections carried data at the same time (a filtered export: "
                                        + "connections open without traffic are not in it)"))
            return
        }
        guard m.peakConnections >= 2 else { return }
        let held = m.connections.first { $0.lifecycle.completeFrame == m.peakConnectionsFrame }
        let time = held?.lifecycle.completeTime ?? (summarisedPeak?.frame == m.peakConnectionsFrame ? summarisedPeak?.time : nil) ?? 0
        findings.append(Finding(rule: Self.rule.id, severity: .info, connection: nil, time: time, frames: [m.peakConnectionsFrame],
                                message: "Up to \(m.peakConnections) connections were open at the same time"))
    }

    /// The most connections whose spans of data (first to last ACL packet) overlap, and where the
    /// maximum was reached (the first data frame of the connection that reached it).
    static func overlappingData(_ connections: [Connection]) -> (count: Int, time: Int64, frame: Int)? {
        var edges: [(time: Int64, delta: Int, frame: Int)] = []
        for c in connections {
            guard let first = c.traffic.firstDataTime, let last = c.traffic.lastDataTime, last > first else { continue }
            edges.append((first, 1, c.timeline.first?.frame ?? 0))
            edges.append((last, -1, 0))
        }
        // Ends before starts at the same time: touching spans do not overlap.
        edges.sort { $0.time != $1.time ? $0.time < $1.time : $0.delta < $1.delta }
        var open = 0
        var best: (count: Int, time: Int64, frame: Int)?
        for e in edges {
            open += e.delta
            if open > (best?.count ?? 0) { best = (open, e.time, e.frame) }
        }
        return best
    }
}

/// Small formatting helpers for finding messages.
enum Format {
    static func seconds(_ micros: Int64) -> String {
        let tenths = micros / 100_000
        return "\(tenths / 10).\(tenths % 10) s"
    }
    /// A duration for a person: "850 ms", "12.3 s", "4 min 12 s", "1 h 22 min".
    static func duration(_ micros: Int64) -> String {
        let ms = micros / 1000
        if ms < 1000 { return "\(ms) ms" }
        if ms < 60_000 { return seconds(micros) }
        let s = ms / 1000
        if s < 3600 { return s % 60 == 0 ? "\(s / 60) min" : "\(s / 60) min \(s % 60) s" }
        return s % 3600 / 60 == 0 ? "\(s / 3600) h" : "\(s / 3600) h \(s % 3600 / 60) min"
    }
    static func hex<T: BinaryInteger>(_ v: T, _ width: Int = 2) -> String {
        let s = String(v, radix: 16)
        return String(repeating: "0", count: max(0, width - s.count)) + s
    }
}

/// `pool.attempt-refused`: a connection attempt failed with ACL Connection Already Exists (0x0B: the host
/// asked for a link it has — its bookkeeping lost it), Connection Rejected due to Security Reasons (0x0E) or
/// Unacceptable BD_ADDR (0x0F: the peer refused, Core v5.4 Vol 1 Part F 2.11, 2.14, 2.15). Information: the
/// capture shows the refusal, not that anyone needed the link. Limited Resources (0x0D) is `pool.full`'s.
final class AttemptRefused: Detector {
    static let rule = RuleInfo(
        id: "pool.attempt-refused", severity: .info, title: "Connection attempt refused",
        explanation: """
        A connection attempt failed because a link to that device already exists (0x0B: the host stack or the app \
        lost track of it and connects again), or the peer refused it for security reasons (0x0E) or would not accept \
        this device's address (0x0F). An app that reconnects should first look for the link it has (on Android, \
        getConnectedDevices); a refusal by the peer is the peer's policy.
        """, actor: .none,
        doc: .init(
            firesWhen: #"""
                a connection attempt fails with ACL Connection Already Exists (0x0B: the host asked for a link \#
                it has, its bookkeeping lost it), Connection Rejected due to Security Reasons (0x0E) or \#
                Unacceptable BD_ADDR (0x0F: the peer refused) (Vol 1 Part F 2.11, 2.14, 2.15), in Command \#
                Status or Connection Complete. Information: the refusal is seen, not that anyone needed the \#
                link
                """#,
            evidence: "the failing status event, the create command"))
    let kinds: [SessionEvent.Kind] = [.attempt]
    static let statuses: Set<UInt8> = [0x0B, 0x0E, 0x0F]

    func observe(_ event: SessionEvent, _ context: DetectorContext, _ findings: inout [Finding]) {
        guard case let .attemptEnded(i) = event else { return }
        let a = context.model.attempts[i]
        guard case let .failed(status) = a.outcome, Self.statuses.contains(status.rawValue) else { return }
        let why = status == .aclConnectionAlreadyExists ? "a link to it already exists" : "the peer refused it"
        var f = Finding(rule: Self.rule.id, severity: .info, connection: nil, time: a.endTime ?? a.time, frames: [a.endFrame ?? a.frame, a.frame],
                        message: "Connection attempt to \(a.peerAddress?.description ?? "the filter accept list") failed: \(status.name) (0x\(Format.hex(status.rawValue))): \(why)")
        f.status = status.rawValue
        findings.append(f)
    }
}
