import BLEProtocol

/// `flow.skipped-ready`: the host filled the controller's buffers, got credits back, and then stayed
/// silent before resuming — the app missed its "ready to send" callback.
final class SkippedReady: Detector {
    static let rule = RuleInfo(
        id: "flow.skipped-ready", severity: .warning, title: "Host stalled after credits came back",
        explanation: """
        A burst of writes without response (or notifications) filled the controller's ACL buffers; Number Of Completed \
        Packets gave buffers back, but the host sent nothing for longer than the threshold and then resumed. The app \
        waited for a "ready" callback it never got or did not handle. On iOS, send the next chunk from \
        peripheralIsReady(toSendWriteWithoutResponse:) (central) or peripheralManagerIsReady(toUpdateSubscribers:) \
        (peripheral) and check canSendWriteWithoutResponse before each write; on Android, drive writes from \
        onCharacteristicWrite / onNotificationSent and retry when writeCharacteristic returns \
        ERROR_GATT_WRITE_REQUEST_BUSY.
        """,
        thresholds: [.init(name: "stall", defaultValue: 1, unit: "s", meaning: "silence after credits returned")],
        doc: .init(
            firesWhen: #"""
                (a) after the host filled the controller's LE ACL buffers (credits reached 0) on a connection, \#
                Number Of Completed Packets returned credits, and the host sent nothing on that connection for \#
                ≥ `stall` (default 1 s), then resumed; or (b) a bulk transfer — ≥ 16 Write \#
                Commands/notifications from the host of exactly ATT_MTU−3 bytes — stops after a full chunk \#
                (mid-message) for ≥ `stall` and ≥ 20× its pace with every buffer free and nothing received \#
                from the peer, then goes on at its pace for ≥ 8 more chunks (a shorter chunk ends a message, \#
                so user-paced commands do not count)
                """#,
            evidence: #"""
                (a) the NOCP that returned the first credit, the first TX after the stall; (b) the last chunk \#
                before the stall, the first after
                """#))
    let kinds: [SessionEvent.Kind] = [.aclSent, .credits, .attWrite, .attValueFull]

    /// Per connection, touched on every ACL packet (kept small: it is copied in and out): whether the
    /// buffers were full, when credits came back, and the buffers in use before the last packet.
    private struct State {
        var saturated = false
        var returnFrame: Int?
        var returnTime: Int64?
        var inUseBefore = 0
    }
    /// Per connection, touched only on full-size values: the host's run of full ATT_MTU−3 chunks (a
    /// bulk transfer), a reference so it is updated in place.
    private final class Run {
        @exclusivity(unchecked) var count = 0
        @exclusivity(unchecked) var lastChunk: (frame: Int, time: Int64)?
        /// Recent gaps between chunks (µs), bounded.
        @exclusivity(unchecked) var gaps: [Int64] = []
        /// A stall inside a run, waiting for the run to resume before it is reported.
        @exclusivity(unchecked) var candidate: (frame: Int, time: Int64, resumeFrame: Int, gap: Int64, pace: Int64)?
        @exclusivity(unchecked) var resumed = 0
        func reset() { count = 0; gaps.removeAll(); candidate = nil; lastChunk = nil }
    }
    @exclusivity(unchecked) private var state = ConnectionState<State>()
    @exclusivity(unchecked) private var runs = ConnectionState<Run>()
    /// The `stall` threshold in µs, looked up once (events come per ACL packet).
    @exclusivity(unchecked) private var stall: Int64?
    /// Full chunks before a stall for it to count as a transfer cut in the middle, and after it.
    static let runBefore = 16
    static let runAfter = 8

    func observe(_ event: SessionEvent, _ context: DetectorContext, _ findings: inout [Finding]) {
        switch event {
        case let .aclSent(c, frame, time, inUseBefore, capacity):
            // In place: the copy out of `state` and back cost ~50 instructions per ACL packet.
            let stalled: (frame: Int, time: Int64)? = state.update(c, initial: State()) { s in
                var stalled: (frame: Int, time: Int64)? = nil
                if let rt = s.returnTime, let rf = s.returnFrame { stalled = (rf, rt) }
                s.returnFrame = nil
                s.returnTime = nil
                s.inUseBefore = inUseBefore
                if let capacity, capacity > 0 { s.saturated = inUseBefore + 1 >= capacity }
                return stalled
            }
            guard let (rf, rt) = stalled else { return }
            let stall = self.stall ?? micros("stall", context)
            self.stall = stall
            if time - rt >= stall {
                findings.append(Finding(rule: Self.rule.id, severity: .warning, connection: c, time: rt, frames: [rf, frame],
                                        message: "Controller buffers were free again at frame \(rf) but the host sent nothing to \(peer: c) for \(Format.seconds(time - rt))"))
                runs[c]?.reset()
            }
        case let .attWrite(c, _, length, true, frame, time, true):
            chunk(c, length: length, frame: frame, time: time, context, &findings)
        case let .attValue(c, _, length, false, frame, time, true, _, _):
            chunk(c, length: length, frame: frame, time: time, context, &findings)
        case let .creditsReturned(c, frame, time, returned, _):
            guard returned > 0 else { return }
            state.updateIfPresent(c) { s in
                guard s.saturated else { return }
                s.saturated = false
                s.returnFrame = frame
                s.returnTime = time
            }
        default:
            break
        }
    }

    /// A Write Command or notification the host sent. A bulk transfer is a run of values of exactly
    /// ATT_MTU−3 bytes; a shorter value ends it (the last chunk of a message). A run that stops after a
    /// full chunk — mid-message — for ≥ `stall` with every buffer free and nothing from the peer to wait
    /// for, then goes on at its old pace, is the host's queue stalling.
    private func chunk(_ c: Connection, length: Int, frame: Int, time: Int64, _ context: DetectorContext, _ findings: inout [Finding]) {
        let run: Run
        if let r = runs[c] { run = r } else { run = Run(); runs[c] = run }
        guard c.att.mtuKnown, length == c.att.mtu - 3 else { run.reset(); return }
        let stall = self.stall ?? micros("stall", context)
        self.stall = stall
        if let last = run.lastChunk {
            let gap = time - last.time
            if gap >= stall {
                let pace = run.gaps.isEmpty ? 0 : run.gaps.sorted()[run.gaps.count / 2]
                let inUse = state[c]?.inUseBefore ?? 0
                // Nothing from the peer since the last chunk: the host was not waiting for an answer.
                let heard = c.traffic.lastReceivedTime.map { $0 > last.time } ?? false
                if run.count >= Self.runBefore, inUse == 0, pace > 0, gap >= 20 * pace, !heard {
                    run.candidate = (last.frame, last.time, frame, gap, pace)
                    run.resumed = 0
                } else {
                    run.candidate = nil
                }
                run.count = 0
                run.gaps.removeAll(keepingCapacity: true)
            } else {
                if run.gaps.count >= 32 { run.gaps.removeFirst() }
                run.gaps.append(gap)
                if let k = run.candidate {
                    if gap <= 5 * max(k.pace, 1000) {
                        run.resumed += 1
                        if run.resumed >= Self.runAfter {
                            findings.append(Finding(rule: Self.rule.id, severity: .warning, connection: c, time: k.time, frames: [k.frame, k.resumeFrame],
                                                    message: "The host's transfer to \(peer: c) (\(length)-byte chunks, one every \(Format.duration(k.pace))) stopped mid-message for \(Format.seconds(k.gap)) with every controller buffer free, then went on at the same pace"))
                            run.candidate = nil
                        }
                    } else {
                        run.candidate = nil
                    }
                }
            }
        }
        run.count += 1
        run.lastChunk = (frame, time)
    }
}

/// `flow.credits-exhausted`: the host sent more ACL packets than the controller has buffers.
final class CreditsExhausted: Detector {
    static let rule = RuleInfo(
        id: "flow.credits-exhausted", severity: .error, title: "Host ignored controller flow control",
        explanation: """
        The host sent an ACL packet while every controller buffer was in use (by (LE) Read Buffer Size and Number Of \
        Completed Packets). Controllers drop such packets or fail (Data Buffer Overflow). This is a host stack bug, or \
        the capture is missing Number Of Completed Packets events; report it to the stack vendor with this capture.
        """, actor: .hostStack,
        doc: .init(
            firesWhen: #"""
                the host sent an ACL packet while 0 controller buffers were free (by (LE) Read Buffer Size and \#
                NOCP accounting)
                """#,
            evidence: "the offending ACL TX frame"))
    let kinds: [SessionEvent.Kind] = [.aclSent]
    @exclusivity(unchecked) private var reported = Set<Int>()

    func observe(_ event: SessionEvent, _ context: DetectorContext, _ findings: inout [Finding]) {
        guard case let .aclSent(c, frame, time, inUseBefore, capacity) = event, let capacity,
              inUseBefore >= capacity, !reported.contains(c.index) else { return }
        reported.insert(c.index)
        findings.append(Finding(rule: Self.rule.id, severity: .error, connection: c, time: time, frames: [frame],
                                message: "ACL packet sent with all \(capacity) controller buffers in use"))
    }
}

/// `flow.credits-lost`: packets never acknowledged before the link went down.
final class CreditsLost: Detector {
    static let rule = RuleInfo(
        id: "flow.credits-lost", severity: .warning, title: "Packets never completed before disconnect",
        explanation: """
        The connection ended with ACL packets the controller had held for a long time without reporting them completed:         the data most likely never reached the peer (packets queued in the last moments before a disconnect are         flushed normally, Core v5.4 Vol 4 Part E 4.3, and are not counted). Writes without response and notifications         are not acknowledged by the peer, so the app believes they were delivered. Use write-with-response (or an         application-level acknowledgement) for data that must arrive, and look at why the controller stopped sending.
        """,
        thresholds: [.init(name: "age", defaultValue: 1, unit: "s", meaning: "how long a packet must have waited to count as lost")],
        doc: .init(
            firesWhen: #"""
                a connection closed by the host or the peer (not lost: a supervision timeout, LL response \#
                timeout, failed establishment or MIC failure flushes what the controller held, Core v5.4 Vol 4 \#
                Part E 4.3) with host ACL packets never acknowledged by NOCP that had waited ≥ `age` (default \#
                1 s)
                """#,
            evidence: "the Disconnection Complete, the oldest such TX"))
    let kinds: [SessionEvent.Kind] = [.connection]

    func observe(_ event: SessionEvent, _ context: DetectorContext, _ findings: inout [Finding]) {
        guard case let .disconnected(c, pending) = event, let frame = c.lifecycle.disconnectFrame, let end = c.lifecycle.disconnectTime else { return }
        // A link that was lost (supervision timeout, LL response timeout…) flushes what it held: the
        // loss is the problem (link.disconnect), not the packets (Core v5.4 Vol 4 Part E 4.3).
        if let reason = c.lifecycle.disconnectReason, Disconnects.warnings.contains(reason.rawValue) { return }
        let old = pending.filter { end - $0.time >= micros("age", context) }
        guard let oldest = old.first else { return }
        findings.append(Finding(rule: Self.rule.id, severity: .warning, connection: c, time: end, frames: [frame, oldest.frame],
                                message: "\(old.count) ACL packet\(old.count == 1 ? "" : "s") waited \(Format.seconds(end - oldest.time)) or more and never completed before the connection ended"))
    }
}
