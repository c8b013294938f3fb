import BLEProtocol

/// `link.stall`: the controller held host ACL packets of a link and neither completed one (Number Of
/// Completed Packets) nor delivered anything from the peer for ≥ `seconds` (default 1 s) and ≥ `events`
/// (default 20) connection events (interval × (1 + peripheral latency): a peripheral with latency listens
/// only that often), then went on. Warning when the stall reached `fraction` (default 0.4) of the
/// supervision timeout: the link layer heard nothing from the peer for that long, close to the loss
/// (Core v5.4 Vol 6 Part B 4.5.2); Android's Quality Report warns at half. A stall the link ended in is
/// its disconnect's cause (`LinkEnds`), not a finding of its own; one at the capture's end is not decidable.
/// The host must have sent a second packet into the stall (≥ 2 waiting when it ended): a controller reports
/// completions at its own rate (Vol 4 Part E 4.3), and one packet on an idle link completed late is not a stall.
/// One finding per connection, with the count and the longest.
final class LinkStallRule: Detector {
    static let rule = RuleInfo(
        id: "link.stall", severity: .warning, title: "Link stalled",
        explanation: """
        The controller held the host's packets for this link and reported none sent (no Number Of Completed Packets) \
        and nothing arrived from the peer for seconds: the peer did not acknowledge (out of range, busy, asleep with \
        peripheral latency) or this controller gave the link no radio time (scanning, another link, Classic audio). \
        The app sees a frozen device. The why line names scanning the host started inside it.
        """, thresholds: [.init(name: "seconds", defaultValue: 1, unit: "s", meaning: "shortest stall reported"),
                          .init(name: "events", defaultValue: 20, unit: "connection events", meaning: "shortest stall in connection events"),
                          .init(name: "fraction", defaultValue: 0.4, unit: "of the supervision timeout", meaning: "stall that makes it a warning")],
        actor: .none)
    let kinds: [SessionEvent.Kind] = [.controller, .aclSent]
    /// Per link: the first stall, the longest, how many, and the finding made at the first (its index).
    private var stalls = ConnectionState<(first: LinkStall, longest: LinkStall, count: Int, finding: Int)>()
    private var order: [Connection] = []
    /// A one-packet stall ended by a completion, waiting for the host's next packet on the link.
    private var waiting: [Int: (c: Connection, stall: LinkStall)] = [:]

    func observe(_ event: SessionEvent, _ context: DetectorContext, _ findings: inout [Finding]) {
        if case let .aclSent(c, _, time, _, _) = event {
            guard !waiting.isEmpty, let w = waiting.removeValue(forKey: c.index) else { return }
            // The host sent its next packet at once: it had been waiting for that completion.
            let prompt = max(Int64(c.link.intervalUnits) * 1250 * 2, 50_000)
            if time - w.stall.to.time <= prompt { record(c, w.stall, context, &findings) }
            return
        }
        guard case let .linkStall(c, stall) = event, stall.end == .completed || stall.end == .received else { return }
        // A controller reports completions at a rate of its own (Core v5.4 Vol 4 Part E 4.3): one packet on
        // an idle link completed late proves nothing (a real PacketLogger log: 15 s on a 5 s timeout, the link
        // fine). The host must have been blocked by the stall — a second packet waiting, or its next packet
        // sent the moment the completion came — on a link whose completions the capture holds.
        guard c.buffers.packetsCompleted > 0 || stall.end == .completed, stall.duration >= micros("seconds", context) else { return }
        if stall.waiting >= 2 { record(c, stall, context, &findings) } else if stall.end == .completed { waiting[c.index] = (c, stall) }
    }

    private func record(_ c: Connection, _ stall: LinkStall, _ context: DetectorContext, _ findings: inout [Finding]) {
        // Whole-second timestamps (a PacketLogger log stamped in seconds) cannot measure a stall of seconds.
        if stall.from.time % 1_000_000 == 0, stall.to.time % 1_000_000 == 0 { return }
        if c.isLE {
            // Unknown interval (a capture begun mid-connection): the events are not counted.
            let event = Int64(c.link.intervalUnits) * 1250 * (1 + Int64(c.link.latency))
            guard stall.duration >= Int64(threshold("events", context)) * event else { return }
        }
        if var s = stalls[c] {
            s.count += 1
            if stall.duration > s.longest.duration { s.longest = stall }
            stalls[c] = s
        } else {
            // Made now, so the HTML report decodes its frames as they go by (as `att.slow-response` does);
            // told in full, with the longest stall and the severity, at the end.
            findings.append(Finding(rule: Self.rule.id, severity: .info, connection: c, time: stall.from.time,
                                    frames: Self.frames(stall), message: "the link stalled"))
            stalls[c] = (stall, stall, 1, findings.count - 1)
            order.append(c)
        }
    }

    /// A stall's evidence: the frame that ended it, the oldest packet held, the first frame of the stall.
    private static func frames(_ l: LinkStall) -> [Int] {
        var frames = [l.to.frame]
        for n in [l.oldest.frame, l.from.frame] where !frames.contains(n) { frames.append(n) }
        return frames
    }

    func finish(_ context: DetectorContext, _ findings: inout [Finding]) {
        for c in order {
            guard let s = stalls[c] else { continue }
            let l = s.longest
            let timeout = Int64(c.link.timeoutUnits) * 10_000
            let share = c.isLE && timeout > 0 ? Double(l.duration) / Double(timeout) : nil
            let severe = share.map { $0 >= threshold("fraction", context) } ?? false
            var text: FindingMessage = "The controller completed none of the host's packets to \(peer: c) and nothing arrived for \(Format.duration(l.duration))"
            if c.isLE, c.link.intervalUnits > 0 {
                let events = l.duration / (Int64(c.link.intervalUnits) * 1250)
                let part = share.map { ", \(Int($0 * 100)) % of the \(Format.duration(timeout)) supervision timeout" } ?? ""
                text = "\(text) (\(events) connection events of \(Format.millis(c.link.intervalUnits))\(part))"
            }
            if s.count > 1 { text = "\(text); \(s.count) stalls on this link, the first at frame \(s.first.to.frame)" }
            // Keyed on the first stall (its frames were kept as they went by), the longest's frames after.
            var frames = Self.frames(s.first)
            for n in Self.frames(l) where !frames.contains(n) { frames.append(n) }
            findings[s.finding].message = text
            findings[s.finding].severity = severe ? .warning : .info
            findings[s.finding].frames = frames
            findings[s.finding].cause = Self.cause(l)
        }
    }

    /// What the frames show of the stall: the host's scanning started inside it, or nothing.
    static func cause(_ l: LinkStall) -> FindingCause {
        let span = "from frame \(l.from.frame) to frame \(l.to.frame) \(l.waiting) host packet\(l.waiting == 1 ? "" : "s") waited in the controller, the oldest from frame \(l.oldest.frame)"
        if let scan = l.scanEnable {
            let when = scan.time >= l.from.time ? "inside the stall" : "before it, and scanning stayed on"
            return FindingCause(.radioContention, frames: [scan.frame, l.to.frame],
                                "the host enabled LE scanning at frame \(scan.frame), \(when): scanning shares the radio with the link; \(span)")
        }
        return FindingCause(.none, frames: [l.to.frame], "\(span); the host was not scanning: the peer did not acknowledge, or the controller gave the link no radio time")
    }
}

/// `link.instant-passed` and `link.procedure-collision`: an LL procedure (connection update, PHY update,
/// encryption start) or a command ended with Instant Passed (0x28) or a collision — LL Procedure
/// Collision (0x23), Different Transaction Collision (0x2A) (Core v5.4 Vol 6 Part B 5.1.1, 5.1.10, 5.3).
/// A link ended with one of these is `link.disconnect`'s (cause `ll-procedure`).
final class ProcedureFailures: Detector {
    static let rule = RuleInfo(
        id: "link.procedure-collision", severity: .info, title: "Link-layer procedure collided",
        explanation: """
        Two link-layer procedures were started at once by the two sides (LL Procedure Collision 0x23, Different \
        Transaction Collision 0x2A): one is rejected and the stack must retry it. Repeated collisions mean both \
        sides start procedures right after connecting (parameter update, PHY, data length): the peripheral firmware \
        should wait a second before its own requests.
        """, actor: .none)
    static let instantRule = RuleInfo(
        id: "link.instant-passed", severity: .info, title: "LL instant passed",
        explanation: """
        A connection update, channel map or PHY update carries the connection event (the instant) at which it \
        applies; the other side received it too late (Instant Passed 0x28, Core v5.4 Vol 6 Part B 5.5.1): the link \
        layer considers the link lost or the procedure failed. Links with peripheral latency or lost packets meet it.
        """, actor: .none)
    let kinds: [SessionEvent.Kind] = [.controller]
    let instant: Bool
    init(instant: Bool) { self.instant = instant }

    func observe(_ event: SessionEvent, _ context: DetectorContext, _ findings: inout [Finding]) {
        guard case let .procedureFailed(c, _, frame, time, status, procedure) = event, procedure != .disconnection,
              (status.rawValue == 0x28) == instant else { return }
        let id = instant ? Self.instantRule.id : Self.rule.id
        let on = c.map { " on the link to \($0.peerLabel)" } ?? ""
        var f = Finding(rule: id, severity: .info, connection: c, time: time, frames: [frame],
                        message: "The \(procedure.name)\(on) failed: \(status.name) (0x\(Format.hex(status.rawValue)))")
        f.status = status.rawValue
        findings.append(f)
    }
}

/// `link.instant-passed`: the same detector, listed under its own rule.
final class InstantPassed: Detector {
    static let rule = ProcedureFailures.instantRule
    let kinds: [SessionEvent.Kind] = [.controller]
    private let inner = ProcedureFailures(instant: true)
    func observe(_ event: SessionEvent, _ context: DetectorContext, _ findings: inout [Finding]) { inner.observe(event, context, &findings) }
}

extension Format {
    /// A connection interval in 1.25 ms units, as milliseconds.
    static func millis(_ units: UInt16) -> String {
        let hundredths = Int(units) * 125
        let (ms, frac) = (hundredths / 100, hundredths % 100)
        if frac == 0 { return "\(ms) ms" }
        return frac % 10 == 0 ? "\(ms).\(frac / 10) ms" : "\(ms).\(frac < 10 ? "0" : "")\(frac) ms"
    }
}
