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
        actor: .none,
        doc: .init(
            severity: "warning (≥ `fraction` of the supervision timeout) / info",
            firesWhen: #"""
                the controller held host ACL packets of a link and neither completed one (no Number Of \#
                Completed Packets, Core v5.4 Vol 4 Part E 7.7.19) nor delivered a packet from the peer for ≥ \#
                `seconds` (default 1 s) and, on LE, ≥ `events` (default 20) connection events of interval × (1 \#
                + peripheral latency) (a peripheral with latency listens only that often, Vol 6 Part B 4.5.1), \#
                then went on. The stall runs from the last sign of life — the oldest waiting packet, or a \#
                later completion or received packet — to the completion or packet that ended it. Warning when \#
                it reached `fraction` (default 0.4) of the supervision timeout: the link layer heard nothing \#
                from the peer for that long, close to the loss (Vol 6 Part B 4.5.2; Android's Quality Report \#
                warns at half); the two real cases that asked for it measured 88 events (4.3 s on 48.75 ms) \#
                and 45 % of a 6 s timeout. A stall the link ended in is told by its `link.disconnect` cause \#
                (the writes never completed); one at the capture's end is not decidable. One finding per \#
                connection with the count and the longest; the why line names scanning the host enabled inside \#
                it
                """#,
            evidence: #"""
                the completion or packet that ended the longest, the oldest waiting packet, the last sign of \#
                life before it
                """#))
    let kinds: [SessionEvent.Kind] = [.controller, .aclSent]
    /// The host's packets matter only while a stall waits for the next one (`waiting`).
    let onDemand: [SessionEvent.Kind] = [.aclSent]
    /// Per link: the first stall, the longest, how many, and the finding made at the first (its index).
    private var stalls = ConnectionState<(first: LinkStall, longest: LinkStall, count: Int, finding: Int)>()
    func findingsMoved(_ moves: FindingMoves) { stalls.updateAll { $0.finding = moves($0.finding) } }
    private var order: [Connection] = []
    /// A one-packet stall ended by a completion, waiting for the host's next packet on the link.
    /// Read on the packets the host sends: no dynamic exclusivity check (the pass is single-threaded,
    /// as for the other per-packet detectors; checked, it was ~75 instructions per packet).
    @exclusivity(unchecked) private var waiting: [Int: (c: Connection, stall: LinkStall)] = [:]
    func retire(_ c: Connection, _ context: DetectorContext, _ findings: inout [Finding]) {
        complete(c, context, &findings)
        stalls[c] = nil
        order.removeAll { $0 === c }
        guard waiting.removeValue(forKey: c.index) != nil, waiting.isEmpty else { return }
        context.demand(.aclSent, false)
    }

    func observe(_ event: SessionEvent, _ context: DetectorContext, _ findings: inout [Finding]) {
        if case let .aclSent(c, _, time, _, _) = event {
            guard !waiting.isEmpty, let w = waiting.removeValue(forKey: c.index) else { return }
            if waiting.isEmpty { context.demand(.aclSent, false) }
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
        if stall.waiting >= 2 {
            record(c, stall, context, &findings)
        } else if stall.end == .completed {
            if waiting.isEmpty { context.demand(.aclSent, true) }
            waiting[c.index] = (c, stall)
        }
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
        for c in order { complete(c, context, &findings) }
    }

    /// The link's finding told in full: at the end, or when the connection is summarised (nothing
    /// later changes it).
    private func complete(_ c: Connection, _ context: DetectorContext, _ findings: inout [Finding]) {
        guard let s = stalls[c] else { return }
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
        """, actor: .none,
        doc: .init(
            firesWhen: #"""
                an LL procedure (connection update, PHY update, encryption start) or a command failed with LL \#
                Procedure Collision (0x23) or Different Transaction Collision (0x2A) (Vol 6 Part B 5.3): both \#
                sides started procedures at once; the stack retries. A link that ended with it is \#
                `link.disconnect`'s (cause `ll-procedure`)
                """#,
            evidence: "the failing event"))
    static let instantRule = RuleInfo(
        id: "link.instant-passed", severity: .info, title: "LL instant passed",
        explanation: """
        A connection update, channel map or PHY update carries the connection event (the instant) at which it \
        applies; the other side received it too late (Instant Passed 0x28, Core v5.4 Vol 6 Part B 5.5.1): the link \
        layer considers the link lost or the procedure failed. Links with peripheral latency or lost packets meet it.
        """, actor: .none,
        doc: .init(
            firesWhen: #"""
                an LL procedure failed with Instant Passed (0x28): the other side got the update after its \#
                instant (Vol 6 Part B 5.5.1). A link that ended with it is `link.disconnect`'s
                """#,
            evidence: "the failing event"))
    let kinds: [SessionEvent.Kind] = [.controller]
    let instant: Bool
    init(instant: Bool) { self.instant = instant }

    func observe(_ event: SessionEvent, _ context: DetectorContext, _ findings: inout [Finding]) {
        guard case let .procedureFailed(c, _, frame, time, status, procedure) = event, procedure != .disconnection,
              LLProcedure.collisionStatuses.contains(status.rawValue), (status == .instantPassed) == instant else { return }
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

/// `link.feature-refused`: a PHY update or data length update refused, or an LL procedure the peer
/// does not know. Over HCI: LE PHY Update Complete with an error (collisions and Instant Passed are
/// `link.procedure-collision`'s), LE Set PHY or LE Set Data Length refused; on air: LL_REJECT_EXT_IND to
/// LL_PHY_REQ or LL_LENGTH_REQ, LL_UNKNOWN_RSP (Core v5.4 Vol 6 Part B 2.4.2.8, 5.1.9, 5.1.10).
/// Information: a link keeps working on 1M PHY and 27-byte PDUs (`perf.data-length` tells the cost
/// when the link moved enough data). One finding per link (or adapter) and procedure, with the count.
final class FeatureRefused: Detector {
    static let rule = RuleInfo(
        id: "link.feature-refused", severity: .info, title: "Link-layer feature refused",
        explanation: """
        A link-layer procedure was refused, or the peer answered it with LL_UNKNOWN_RSP (it does not support it); \
        the finding names the procedure by its LL opcode. The link goes on without it. A PHY update (2M or Coded) or \
        a data length update refused leaves 1M PHY or 27-byte link-layer PDUs, so large transfers take longer: a \
        peripheral that must move data fast needs a chip and firmware with LE 2M PHY and Data Length Extension. \
        Other procedures (channel classification, subrating, power control, ping) simply stay unused. Nothing is \
        broken; the app or stack can stop asking a peer that refused.
        """, actor: .none,
        doc: .init(
            firesWhen: #"""
                a PHY update or data length update refused, or an LL procedure the peer does not know: LE PHY \#
                Update Complete with an error (collisions and 0x28 are `link.procedure-collision` / \#
                `link.instant-passed`'s), LE Set PHY or LE Set Data Length refused (Vol 4 Part E 7.8.49, \#
                7.8.33; the link named when one LE link is open); on air LL_REJECT_EXT_IND to LL_PHY_REQ or \#
                LL_LENGTH_REQ (not for a collision), LL_UNKNOWN_RSP (Vol 6 Part B 2.4.2.8, 5.1.9, 5.1.10), \#
                named by its opcode (the LL control table runs to 0x2C: LL_SUBRATE_REQ/IND 0x26/0x27, \#
                LL_CHANNEL_REPORTING_IND 0x28, LL_CHANNEL_STATUS_IND 0x29, LL_PERIODIC_SYNC_WR_IND 0x2A, \#
                LL_FEATURE_EXT_REQ/RSP 0x2B/0x2C) with what the link goes without. The link goes on at 1M PHY \#
                / its PDU length (or without subrating, channel classification…): information \#
                (`perf.data-length` tells the cost when it moved data). One finding per link (or adapter) and \#
                procedure, with the count
                """#,
            evidence: "the refusal, the second"))
    let kinds: [SessionEvent.Kind] = [.link]
    private struct Key: Hashable {
        var connection: Int?
        var adapter: UInt16
        var procedure: FeatureRefusal.Procedure
    }
    /// Per key: the finding made at the first refusal (its index) and how many came.
    private var seen: [Key: (finding: Int, count: Int, last: Int)] = [:]
    func findingsMoved(_ moves: FindingMoves) { seen = seen.mapValues { s in var s = s; s.finding = moves(s.finding); return s } }

    func observe(_ event: SessionEvent, _ context: DetectorContext, _ findings: inout [Finding]) {
        guard case let .featureRefused(c, r) = event else { return }
        let key = Key(connection: c?.index, adapter: c?.adapter ?? 0, procedure: r.procedure)
        if var s = seen[key] {
            s.count += 1
            s.last = r.frame
            seen[key] = s
            if s.count == 2 { findings[s.finding].frames.append(r.frame) }
            findings[s.finding].message = Self.message(c, r, count: s.count)
            return
        }
        var f = Finding(rule: Self.rule.id, severity: .info, connection: c, time: r.time, frames: [r.frame], message: Self.message(c, r, count: 1))
        f.status = r.status?.rawValue
        findings.append(f)
        seen[key] = (findings.count - 1, 1, r.frame)
    }

    /// What the link lacks when the procedure an LL control opcode starts is not carried out (Core v5.4
    /// Vol 6 Part B 5.1.8 ping, 5.1.19–5.1.22 subrating and channel classification, 5.1.17 power control).
    static func without(_ opcode: UInt8) -> String {
        switch opcode {
        case 0x12: "the link goes on without the LE Ping check of its encryption"
        case 0x23: "the link goes on without LE power control (each side keeps its transmit power)"
        case 0x26, 0x27: "the link goes on without subrating (every connection event stays in use)"
        case 0x28: "the link goes on without channel classification reports (the central classifies channels alone)"
        default: "the link goes on without it"
        }
    }

    static func message(_ c: Connection?, _ r: FeatureRefusal, count: Int) -> FindingMessage {
        let what: String
        let after: String
        switch r.procedure {
        case .phy: (what, after) = ("PHY update", "the link stays on its PHY")
        case .dataLength: (what, after) = ("data length update", "link-layer PDUs stay at their length (27 bytes unless changed)")
        case let .control(op):
            let name = LinkLayerDisplay.controlNames.name(UInt64(op)).map { "\($0) (LL opcode 0x\(Format.hex(op)))" } ?? "LL opcode 0x\(Format.hex(op))"
            (what, after) = ("\(name) procedure", Self.without(op))
        }
        let status = r.status.map { "\($0.name) (0x\(Format.hex($0.rawValue)))" }
        let how: String
        switch r.source {
        case let .unknownResponse(p): how = "the \(p ? "peripheral" : "central") does not support it (LL_UNKNOWN_RSP)"
        case let .rejected(p): how = "the \(p ? "peripheral" : "central") rejected it (LL_REJECT_EXT_IND: \(status ?? "no reason"))"
        case .updateComplete: how = "LE PHY Update Complete carries \(status ?? "an error")"
        case let .command(op): how = "the controller refused \(HCIDecoder.commandName(op)): \(status ?? "an error")"
        }
        let on: FindingMessage = c.map { " on the link to \(peer: $0)" } ?? ""
        let times = count > 1 ? " (\(count) times)" : ""
        let verb = if case .unknownResponse = r.source { "was not carried out" } else { "was refused" }
        return "The \(what)\(on) \(verb)\(times): \(how); \(after)"
    }
}

/// `link.role-switch-failed`: a BR/EDR Role Change with an error (Core v5.4 Vol 4 Part E 7.7.18; Vol 2
/// Part C 4.4.2): the link keeps its roles. Information: the host asked (or accepted) a switch the peer or
/// the controller refused — Role Change Not Allowed (0x21), Role Switch Failed (0x35), Encryption Mode Not
/// Acceptable (0x25) — and a scatternet that needed it may then refuse the next link. Collisions (0x23) are
/// `link.procedure-collision`'s.
final class RoleSwitchFailed: Detector {
    static let rule = RuleInfo(
        id: "link.role-switch-failed", severity: .info, title: "Role switch failed",
        explanation: """
        A BR/EDR role switch (central and peripheral swapping) failed: the peer or the controller refused it, or it \
        timed out. The link keeps its roles and goes on; a phone that must be central of several links (scatternet) \
        may then fail to connect the next device. The controller and the peer's firmware decide; nothing for the app.
        """, actor: .none,
        doc: .init(
            firesWhen: #"""
                a BR/EDR Role Change with an error (Vol 4 Part E 7.7.18): Role Change Not Allowed (0x21), Role \#
                Switch Failed (0x35), Encryption Mode Not Acceptable (0x25)…; the link keeps its roles. A \#
                collision (0x23) is `link.procedure-collision`'s
                """#,
            evidence: "the Role Change"))
    let kinds: [SessionEvent.Kind] = [.controller]

    func observe(_ event: SessionEvent, _ context: DetectorContext, _ findings: inout [Finding]) {
        guard case let .procedureFailed(c, _, frame, time, status, .roleSwitch(address, role)) = event,
              !LLProcedure.collisionStatuses.contains(status.rawValue) else { return }
        // Before its Connection Complete (a switch asked when accepting the link) the link has no connection yet.
        let with: FindingMessage = c.map { " of the link to \(peer: $0)" } ?? " with \(address.description)"
        var f = Finding(rule: Self.rule.id, severity: .info, connection: c, time: time, frames: [frame],
                        message: "The role switch\(with) failed: \(status.name) (0x\(Format.hex(status.rawValue))); this side stays \(role == 0 ? "central" : "peripheral")")
        f.status = status.rawValue
        findings.append(f)
    }
}

/// `link.few-channels`: on air, a CONNECT_IND or LL_CHANNEL_MAP_IND leaves the link fewer than `channels`
/// (default 10) of the 37 data channels. The spec allows 2 (Core v5.4 Vol 6 Part B 4.5.8: at least 2 used
/// channels). Why 10: one Wi-Fi channel (22 MHz) covers about 10 LE data channels, so a central avoiding
/// even two busy Wi-Fi channels keeps 15 or more; fewer than 10 means the band is crowded or the central
/// uses a fixed small map, and each loss on a channel comes back every few events. Information: the map
/// is the central's answer to its environment, not a failure. One finding per map.
final class FewChannels: Detector {
    static let rule = RuleInfo(
        id: "link.few-channels", severity: .info, title: "Few data channels",
        explanation: """
        The central set the link to hop on few of the 37 LE data channels (the spec allows as few as 2). The \
        central's controller excluded the others, usually because it found interference there (Wi-Fi, another \
        link), or it uses a fixed map. With few channels a link has less room to escape interference: packets \
        lost on one channel are lost again each time the hop returns to it. Nothing to do in the app; move away \
        from busy Wi-Fi or check the central's channel classification.
        """, thresholds: [.init(name: "channels", defaultValue: 10, unit: "channels", meaning: "maps with fewer used data channels are reported")],
        actor: .none,
        doc: .init(
            firesWhen: #"""
                on air, a CONNECT_IND or LL_CHANNEL_MAP_IND leaves fewer than `channels` (10) of the 37 data \#
                channels (the spec allows 2, Vol 6 Part B 4.5.8; one Wi-Fi channel covers about 10 LE \#
                channels, so fewer than 10 is a crowded band or a fixed map); names the channels
                """#,
            evidence: "the CONNECT_IND or LL_CHANNEL_MAP_IND"))
    let kinds: [SessionEvent.Kind] = [.link]

    func observe(_ event: SessionEvent, _ context: DetectorContext, _ findings: inout [Finding]) {
        guard case let .airChannelMap(c, frame, time, map, indication) = event else { return }
        let used = map & (1 << 37 - 1)   // bits 37–39 are reserved (Vol 6 Part B 2.3.3.1)
        guard used.nonzeroBitCount < Int(threshold("channels", context)) else { return }
        let pdu = indication ? "An LL_CHANNEL_MAP_IND" : "The CONNECT_IND"
        findings.append(Finding(rule: Self.rule.id, severity: .info, connection: c, time: time, frames: [frame],
                                message: "\(pdu) set the link to \(peer: c) to hop on \(used.nonzeroBitCount) of the 37 data channels: "
                                    + "\(LinkLayerDisplay.channelList(used)); few channels leave little room to escape interference"))
    }
}

/// `link.retransmission-burst`: on air, one side sent the same PDU (same SN, same bytes) at least
/// `copies` (default 10) times more in a row: the other side did not acknowledge it for that many
/// tries (Core v5.4 Vol 6 Part B 4.5.9), from interference or a peer that does not listen. Ten copies is
/// ten connection events or more without progress on that side's data, far beyond the one or two resends
/// of a busy band. Information with the count, the copies and the longest burst; the why says when the
/// link was lost before a new PDU came (its loss is the disconnect rules' finding). One per link.
final class RetransmissionBurst: Detector {
    static let rule = RuleInfo(
        id: "link.retransmission-burst", severity: .info, title: "Retransmission burst on air",
        explanation: """
        One side of the link sent the same packet again and again: the other side did not acknowledge it (it did \
        not hear it, or its answer was not heard). Data on the link stopped meanwhile, so throughput and latency \
        suffer. Interference, distance or a peer that is busy and misses connection events cause it; a sniffer sees \
        the copies, so they are the devices', not the capture's.
        """, thresholds: [.init(name: "copies", defaultValue: 10, unit: "copies", meaning: "shortest run of copies of one PDU reported")],
        actor: .none,
        doc: .init(
            firesWhen: #"""
                on air, one side sent the same PDU (same SN, same bytes) `copies` (10) more times in a row, \#
                unacknowledged (Vol 6 Part B 4.5.9); one per link with the bursts, the copies and the longest, \#
                and whether the link was lost before a new PDU
                """#,
            evidence: "the original PDU, the last copy of the longest burst"))
    let kinds: [SessionEvent.Kind] = [.link]
    /// Per link: the finding (its index), bursts, copies in them, the longest.
    private var seen = ConnectionState<(finding: Int, count: Int, copies: Int, longest: AirRetransmissionBurst)>()
    func findingsMoved(_ moves: FindingMoves) { seen.updateAll { $0.finding = moves($0.finding) } }

    func observe(_ event: SessionEvent, _ context: DetectorContext, _ findings: inout [Finding]) {
        guard case let .airRetransmissionBurst(c, b) = event, b.copies >= Int(threshold("copies", context)) else { return }
        if var s = seen[c] {
            s.count += 1
            s.copies += b.copies
            if b.copies > s.longest.copies {
                s.longest = b
                findings[s.finding].frames = Self.frames(b)
            }
            seen[c] = s
            findings[s.finding].message = Self.message(c, s.count, s.copies, s.longest)
            return
        }
        findings.append(Finding(rule: Self.rule.id, severity: .info, connection: c, time: b.firstTime, frames: Self.frames(b),
                                message: Self.message(c, 1, b.copies, b)))
        seen[c] = (findings.count - 1, 1, b.copies, b)
    }

    private static func frames(_ b: AirRetransmissionBurst) -> [Int] { b.first > 0 && b.first != b.last ? [b.first, b.last] : [b.last] }

    static func message(_ c: Connection, _ count: Int, _ copies: Int, _ l: AirRetransmissionBurst) -> FindingMessage {
        let who = l.byPeripheral ? "peripheral" : "central"
        let span = l.first > 0 ? " (frames \(l.first)–\(l.last), \(Format.duration(l.lastTime - l.firstTime)))" : " (to frame \(l.last))"
        let bursts = count > 1 ? "\(count) bursts of resent packets, \(copies) copies in all; the longest: " : ""
        let then = l.lost ? "; the link was lost before it sent a new one" : ""
        return "On the link to \(peer: c), \(bursts)the \(who) sent the same PDU \(l.copies) more times in a row\(span), "
            + "unacknowledged\(then)"
    }
}
