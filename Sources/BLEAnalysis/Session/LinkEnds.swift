import BLEBytes
import BLEProtocol

/// Why a connection ended, from what the capture holds (`LinkForensics`, the ATT bearer, the
/// pairings): each closed connection gets an `endCause` when the pass ends, read by the findings
/// (`Causes.link`), the story and the timeline alike.
public struct LinkEnd: Sendable {
    public var cause: FindingCause
    /// What the cause makes of the disconnect: a warning when the capture proves a problem.
    public var severity: Severity
    public var actor: Actor
    /// The ATT transaction or pairing whose timeout ended the link (its frame), for folding.
    public var timedOut: Int?
}

extension SessionModel {
    /// The supervision timeout below which a lost link is blamed on the parameters (ms): Apple's
    /// accessory guidelines ask for 2–6 s; a few hundred ms are lost to one burst of interference.
    static let shortSupervisionMillis = 500
    /// Parameters applied this shortly before a loss may not have been taken by the peer (µs).
    static let recentParameterChange: Int64 = 2_000_000
    /// A timer of 30 s (ATT, SMP) fired when the end came this close to it (µs).
    static let timerSlack: Int64 = 500_000
    /// …and no later than this after it (µs): a stack acts on its timer at once.
    static let timerWindow: Int64 = 1_000_000

    /// Ends every pairing that stalled and explains every closed connection not explained yet. Called
    /// once when the pass ends.
    func explainEnds(captureEnd: Int64) {
        for c in connections { closeStalledPairings(c, end: c.lifecycle.disconnectTime ?? captureEnd) }
        // Links lost, in time order: the others lost within a second of one are found by bisection (a
        // capture may hold thousands of connections; comparing each with each was quadratic).
        let lost = connections.filter(\.endedByLoss).sorted { ($0.lifecycle.disconnectTime ?? 0) < ($1.lifecycle.disconnectTime ?? 0) }
        let lostTimes = lost.map { $0.lifecycle.disconnectTime ?? 0 }
        for c in connections {
            // A live session (`DecidedFindings`) explained the links it decided already, with these inputs.
            guard c.endCause == nil, c.lifecycle.disconnectReason != nil, c.lifecycle.disconnectFrame != nil,
                  let time = c.lifecycle.disconnectTime else { continue }
            let n = c.lifecycle.establishFailureOrdinal
            let lo = lostTimes.prefixEnd { $0 < time - Self.lostTogetherWindow }
            explainEnd(c, lostNear: lost[lo...].prefix { ($0.lifecycle.disconnectTime ?? 0) <= time + Self.lostTogetherWindow }, establishFailures: n)
        }
    }

    /// Links lost within this of one another (µs) were lost together (one radio problem, not one peer's).
    public static let lostTogetherWindow: Int64 = 1_000_000

    /// Explains one closed connection's end (`endCause`), given the links lost near its end in time
    /// order (those of other peers on its adapter within `lostTogetherWindow` are its companions) and,
    /// for a connection that failed to be established, how many times that happened with its peer so
    /// far. `explainEnds` calls it for every connection when the pass ends; a live session
    /// (`DecidedFindings`) calls it earlier for a connection whose end is known, with the same inputs.
    func explainEnd(_ c: Connection, lostNear: some Sequence<Connection>, establishFailures n: Int) {
        guard let reason = c.lifecycle.disconnectReason, let frame = c.lifecycle.disconnectFrame, let time = c.lifecycle.disconnectTime else { return }
        var others: [Connection] = []
        if LinkLoss.reasons.contains(reason.rawValue) {
            for o in lostNear where o !== c && o.adapter == c.adapter && o.peerAddress != c.peerAddress { others.append(o) }
        }
        c.endCause = explain(c, reason: reason, frame: frame, time: time, lostTogether: others, establishFailures: n)
    }

    /// Explains `c`'s end with the links of `lost` that ended within `lostTogetherWindow` of it, in
    /// time order: before the pass ends, when its window has passed (`DecidedFindings`,
    /// `ConnectionRetirement`), as `explainEnds` does at the end.
    func explainEnd(_ c: Connection, lostAmong lost: [Connection]) {
        let time = c.lifecycle.disconnectTime ?? 0
        let near = lost.filter { abs(($0.lifecycle.disconnectTime ?? 0) - time) <= Self.lostTogetherWindow }
            .sorted { ($0.lifecycle.disconnectTime ?? 0, $0.index) < ($1.lifecycle.disconnectTime ?? 0, $1.index) }
        explainEnd(c, lostNear: near, establishFailures: c.lifecycle.establishFailureOrdinal)
    }

    /// A pairing with no SMP PDU for 30 s after its last one, and no end, timed out (Core v5.4 Vol 3
    /// Part H 3.4): "the SMP procedure shall be considered failed", with no Pairing Failed sent.
    private func closeStalledPairings(_ c: Connection, end: Int64) {
        for i in c.pairings.indices where c.pairings[i].outcome == .open {
            let next = i + 1 < c.pairings.count ? c.pairings[i + 1].requestTime : end
            if next - c.pairings[i].last.time >= SMP.timeout - Self.timerSlack {
                c.pairings[i].outcome = .timedOut
                let s = c.pairings[i]
                c.note(s.last.time + SMP.timeout, s.last.frame, .security, .pairingTimedOut(after: s.lastCode), .init(security: .pairingFailed))
            }
        }
    }

    private func explain(_ c: Connection, reason: HCIStatus, frame: Int, time: Int64, lostTogether: [Connection],
                         establishFailures: Int) -> LinkEnd {
        let f = c.forensics
        let code = "\(reason.name) (0x\(Hex.pad(reason.rawValue, 2)))"
        // A transaction timer that ran out: the host (or the peer) must drop the bearer.
        if let t = expiredTransaction(c, at: f.localDisconnect?.time ?? time, frame: frame) { return t }
        if reason == .micFailure {
            return LinkEnd(cause: .init(.micFailure, frames: [frame], """
                a received packet failed its integrity check (MIC): the two sides' keys disagree (a stale bond on one \
                side) or the link was corrupted; the link is dropped at once (Core v5.4 Vol 6 Part B 5.1.3.1)
                """), severity: .warning, actor: .user)
        }
        if let e = f.encryptionFailure, e.status == .pinOrKeyMissing {
            return LinkEnd(cause: .init(.keyMissing, frames: [e.mark.frame, frame], """
                encryption failed with PIN or Key Missing (frame \(e.mark.frame)): the peer no longer has the key of this \
                bond (it was reset or bonded with another phone); remove the bond on the phone and pair again
                """), severity: .warning, actor: .user)
        }
        if reason == .connectionFailedToBeEstablished {
            let times = establishFailures > 1 ? "; the \(ordinal(establishFailures)) time with this peer in the capture" : ""
            return LinkEnd(cause: .init(.establishment, frames: (c.lifecycle.completeFrame.map { [$0] } ?? []) + [frame], """
                never established: the peer did not answer its first packets (interference, or it stopped advertising or \
                connected elsewhere)\(times)
                """), severity: .warning, actor: .none)
        }
        if LinkLoss.reasons.contains(reason.rawValue) || [0x23, 0x28, 0x2A].contains(reason.rawValue) {
            return lost(c, reason: reason, code: code, frame: frame, time: time, together: lostTogether)
        }
        if let d = f.localDisconnect {
            let who = f.localDisconnectOnAir ? "the central sent LL_TERMINATE_IND at frame \(d.frame): its app or OS"
                : "the host sent Disconnect at frame \(d.frame): the app or the OS"
            return LinkEnd(cause: .init(.localRequest, frames: [d.frame, frame], "\(who) closed the link\(outstandingNote(c))"),
                           severity: .info, actor: .none)
        }
        if reason == .localHostTerminated {
            return LinkEnd(cause: .init(.localRequest, frames: [frame], """
                the phone's Bluetooth stack ended the link itself (\(code)); the capture holds no HCI Disconnect from it
                """), severity: .info, actor: .none)
        }
        if [0x13, 0x14, 0x15, 0x1A, 0x3B].contains(reason.rawValue) {
            return LinkEnd(cause: .init(.peerRequest, frames: [frame], "the peer terminated the link (\(code))\(outstandingNote(c))"),
                           severity: .info, actor: .none)
        }
        return LinkEnd(cause: .init(.none, frames: [frame], """
            the capture holds no cause: no HCI Disconnect from the host, no transaction or pairing left 30 s, no advertising \
            from the peer, no parameter or encryption procedure pending
            """), severity: .info, actor: .none)
    }

    /// A supervision timeout, LL response timeout or collision: what the capture shows before it.
    private func lost(_ c: Connection, reason: HCIStatus, code: String, frame: Int, time: Int64, together: [Connection]) -> LinkEnd {
        let f = c.forensics
        let lastHeard = c.traffic.lastReceivedTime ?? c.lifecycle.completeTime ?? c.traffic.firstDataTime
        // The last sign of life is the last packet received or completed (Number Of Completed Packets);
        // host packets the controller held to the end were never delivered (`LinkStall`).
        var silence = lastHeard.map { " its last data packet came \(Self.span(time - $0)) before" } ?? ""
        if let s = c.buffers.stallAtEnd {
            silence = " its last sign of life (a packet received or completed) was frame \(s.from.frame), \(Self.span(time - s.from.time)) before;"
                + " \(s.waiting) host packet\(s.waiting == 1 ? "" : "s") from frame \(s.oldest.frame) on were never completed"
        }
        // The peer advertising connectable after its last packet, while we still held the link.
        if let a = f.peerAdvertisedFirst, a.time <= time, a.time > (lastHeard ?? 0), a.time < (f.localDisconnect?.time ?? .max) {
            var frames = [a.frame]
            var after = ""
            if let p = c.att.outstanding(from: .host) {
                frames.append(p.frame)
                let what = p.handle.map { " to " + c.attributeName($0, serverIsHost: false) } ?? ""
                after = " and \(Self.span(a.time - p.time)) after the \(p.opcode.name)\(what) (frame \(p.frame)), which it never answered"
            } else if let sent = c.traffic.lastSentFrame, let t = c.traffic.lastSentTime, t <= a.time {
                frames.append(sent)
                after = " and \(Self.span(a.time - t)) after the host's last (frame \(sent))"
            }
            frames.append(frame)
            return LinkEnd(cause: .init(.peerReset, frames: frames, """
                the peer was heard advertising (connectable) at frame \(a.frame) while the link was still open — \
                \(lastHeard.map { Self.span(a.time - $0) + " after its last packet" } ?? "after connecting")\(after): it had \
                reset or dropped the link (look for a crash or watchdog reset in its firmware); \(Self.span(time - a.time)) later the \
                phone's controller gave up (\(code))
                """), severity: .warning, actor: .peripheralFirmware)
        }
        // The host had asked to disconnect and the peer never acknowledged LL_TERMINATE_IND: the
        // controller gave up on its own timer (Core v5.4 Vol 6 Part B 5.1.6).
        if let d = f.localDisconnect, d.time <= time {
            return LinkEnd(cause: .init(.localRequest, frames: [d.frame, frame], """
                the host asked to disconnect at frame \(d.frame); the peer never acknowledged the termination, so the link ended \
                \(Self.span(time - d.time)) later with \(code)\(lastHeard.map { "; its last data packet came \(Self.span(time - $0)) before" } ?? "")
                """), severity: .warning, actor: .none)
        }
        if !together.isEmpty {
            let frames = [frame] + together.compactMap(\.lifecycle.disconnectFrame).prefix(8)
            return LinkEnd(cause: .init(.phoneSide, frames: frames, """
                \(together.count + 1) links to different peers were lost within the same second (frames \
                \(frames.map(String.init).joined(separator: ", "))): the phone's side (its controller or radio), not this peer
                """), severity: .warning, actor: .controller)
        }
        if reason != .connectionTimeout || f.pendingEncryption != nil || f.pendingConnectionUpdate != nil || f.failedConnectionUpdate != nil {
            var what: [String] = []
            var frames: [Int] = []
            if let u = f.failedConnectionUpdate {
                what.append("a connection update was running (LE Connection Update at frame \(u.command.frame); its Complete at frame \(u.complete.frame) carries \(u.status.name))")
                frames.append(u.complete.frame)
            }
            if let e = f.pendingEncryption { what.append("encryption was starting (frame \(e.frame), no Encryption Change before the loss)"); frames.append(e.frame) }
            if let u = f.pendingConnectionUpdate { what.append("a connection update was pending (LE Connection Update at frame \(u.frame), no Complete)"); frames.append(u.frame) }
            if let e = f.encryptionFailure, e.mark.time >= time - 1_000_000 { frames.append(e.mark.frame) }
            frames.append(frame)
            let procedure = reason == .llResponseTimeout ? "the peer did not answer an LL control procedure within 40 s (Core v5.4 Vol 6 Part B 5.2)"
                : reason == .connectionTimeout ? "the link was lost" : "an LL procedure failed (\(code))"
            let text = what.isEmpty ? "\(procedure); the capture shows no host procedure pending, so it was one the controllers started"
                : "\(procedure) while \(what.joined(separator: " and "))"
            return LinkEnd(cause: .init(.llProcedure, frames: frames, FindingMessage(text + ";" + silence)), severity: .warning,
                           actor: what.isEmpty ? .none : .peripheralFirmware)
        }
        // The parameters in force: a short supervision timeout, or one changed just before.
        let timeoutMs = c.supervisionTimeoutMillis
        let eventMs = c.intervalMillis * Double(1 + Int(c.link.latency))
        let specFloor = eventMs * 2   // Core v5.4 Vol 6 Part B 4.5.2: timeout > (1 + latency) × interval × 2
        let recent = f.lastParameterChange.flatMap { time - $0.time <= Self.recentParameterChange ? $0 : nil }
        if timeoutMs > 0, timeoutMs < Self.shortSupervisionMillis || Double(timeoutMs) <= specFloor || recent != nil {
            var frames: [Int] = []
            var origin = ""
            if let p = f.lastParameterChange { frames.append(p.frame) }
            if let r = f.peerParameterRequest, f.requestedTimeoutUnits.map({ Int($0) * 10 == timeoutMs }) ?? false {
                frames.append(r.frame); origin = " asked for by the peer at frame \(r.frame)"
            }
            if let p = f.lastParameterChange { origin += (origin.isEmpty ? "" : " and") + " applied at frame \(p.frame)" }
            frames.append(frame)
            let text: String
            if let p = recent, timeoutMs >= Self.shortSupervisionMillis, Double(timeoutMs) > specFloor {
                text = "the connection parameters changed \(Self.span(time - p.time)) before the loss (frame \(p.frame)): the peer may not have taken the new ones;\(silence)"
            } else {
                text = "the supervision timeout in force was \(timeoutMs) ms\(origin) (interval \(Self.format(c.intervalMillis)) ms, latency \(c.link.latency)): "
                    + "a few missed connection events end the link (ask for a few seconds: Apple's accessory guidelines say 2–6 s);\(silence)"
            }
            return LinkEnd(cause: .init(.parameters, frames: frames, FindingMessage(text)), severity: .warning,
                           actor: origin.contains("peer") ? .peripheralFirmware : .hostStack)
        }
        let heard = c.traffic.lastReceivedFrame.map { [$0] } ?? []
        let timeout = c.isLE && timeoutMs > 0 ? " for its supervision timeout (\(timeoutMs) ms)" : ""
        // The controller's own Quality Report said it too: nothing received for half the timeout.
        let report = f.approachingLSTO.flatMap { q in
            q.time <= time && (timeoutMs == 0 || time - q.time <= Int64(timeoutMs) * 1000)
                ? "; the controller's Quality Report at frame \(q.frame) said Approaching LSTO \(Self.span(time - q.time)) before the loss" : nil
        } ?? ""
        let pending = c.att.outstanding(from: .host).map { "; the host's \($0.opcode.name) at frame \($0.frame) was waiting for its answer" } ?? ""
        return LinkEnd(cause: .init(.peerSilent, frames: heard + [frame], """
            the peer fell silent\(timeout), with no advertising, parameter change or pending procedure before: out of \
            range, powered off or hung (\(silence.isEmpty ? "nothing was received from it on this link" : silence.dropFirst()); \
            keep-alive packets are not in HCI)\(pending)\(report)
            """), severity: .warning, actor: .none)
    }

    /// The ATT transaction (request or indication) or pairing whose 30 s timer ran out by `end`.
    private func expiredTransaction(_ c: Connection, at end: Int64, frame: Int) -> LinkEnd? {
        let limit = ATT.transactionTimeout - Self.timerSlack
        // (the pending PDU, an indication?, sent by the host?)
        var candidates: [(p: ATTBearer.Pending, indication: Bool, byHost: Bool)] = c.att.allOutstanding.map { ($0, false, $0.sentByHost) }
        if let i = c.att.unconfirmedIndication(from: .host) { candidates.append((i, true, true)) }
        if let i = c.att.unconfirmedIndication(from: .peer) { candidates.append((i, true, false)) }
        // The side whose transaction timed out drops the bearer when its 30 s timer fires: the end came
        // at that moment (not minutes later: then the timer did not end the link), from that side.
        let local = c.forensics.localDisconnect != nil || c.lifecycle.disconnectReason == .localHostTerminated
        let expired = candidates.filter { t in
            end - t.p.time >= limit && end - t.p.time <= ATT.transactionTimeout + Self.timerWindow && t.byHost == local
        }
        if let t = expired.min(by: { $0.p.frame < $1.p.frame }) {
            let p = t.p
            // The side that sent the request or indication waited for the other.
            let who: FindingMessage = t.byHost ? .peer(c) : "the host"
            let what = p.handle.map { " of " + c.attributeName($0, serverIsHost: t.indication ? t.byHost : !t.byHost) } ?? ""
            let verb = t.indication ? "was never confirmed by" : "was never answered by"
            let name = t.indication ? "indication" : p.opcode.name
            let text: FindingMessage = """
                the \(name)\(what) at frame \(p.frame) \(verb) \(who); \(Self.span(end - p.time)) later the ATT transaction \
                timeout (30 s, Core v5.4 Vol 3 Part F 3.3.3) made the stack drop the link
                """
            return LinkEnd(cause: .init(.attTimeout, frames: [p.frame, frame], text), severity: .warning,
                           actor: t.byHost ? .peripheralFirmware : .app, timedOut: p.frame)
        }
        if let s = c.pairings.last, s.outcome == .timedOut, end - s.last.time >= SMP.timeout - Self.timerSlack,
           end - s.last.time <= SMP.timeout + Self.timerWindow {
            let by: FindingMessage = s.lastSentByHost ? "the host" : .peer(c)
            let text: FindingMessage = """
                the pairing stalled after the \(s.lastCode.name) at frame \(s.last.frame) (sent by \(by)): no answer for 30 s, so \
                SMP timed out (Core v5.4 Vol 3 Part H 3.4) and the link was dropped
                """
            return LinkEnd(cause: .init(.smpTimeout, frames: [s.last.frame, frame], text), severity: .warning,
                           actor: s.lastSentByHost ? .peripheralFirmware : .hostStack, timedOut: s.last.frame)
        }
        return nil
    }

    /// "; a Write Request (frame N) was outstanding" — a peer that reboots after a control-point
    /// write closes the link with the write unanswered.
    private func outstandingNote(_ c: Connection) -> String {
        guard let p = c.att.outstanding(from: .host) else { return "" }
        return "; the host's \(p.opcode.name) at frame \(p.frame) was still unanswered"
    }

    private func ordinal(_ n: Int) -> String {
        switch n { case 1: "1st"; case 2: "2nd"; case 3: "3rd"; default: "\(n)th" }
    }

    static func span(_ micros: Int64) -> String {
        let ms = Double(micros) / 1000
        if ms < 1 { return "< 1 ms" }
        if ms < 1000 { return "\(Int(ms.rounded())) ms" }
        return format(ms / 1000) + " s"
    }

    static func format(_ v: Double) -> String {
        let r = (v * 10).rounded() / 10
        return r == r.rounded() ? String(Int(r)) : String(r)
    }
}
