import BLEProtocol

/// `adv.oversize`: advertising data over its size limit or with a broken AD structure.
/// The host's own data (LE Set Advertising/Scan Response Data) is always a warning: the app or OS
/// advertises it. Reports *heard* from other devices are a warning only for a device the host
/// connected to or tried to connect to in the capture (its firmware is part of the story), once per
/// advertiser; a stranger's broken advertising is information.
final class AdvertisingOversize: Detector {
    static let rule = RuleInfo(
        id: "adv.oversize", severity: .warning, title: "Advertising data too long or malformed",
        explanation: """
        Legacy advertising and scan response data hold at most 31 bytes, and each AD structure's length must fit in \
        them. Longer data is rejected by the controller or cut, and scanners drop malformed structures (iOS shows no \
        name or services). Move data to the scan response, shorten the local name, or use extended advertising.
        """, actor: .peripheralFirmware,
        doc: .init(
            severity: "warning / info",
            firesWhen: #"""
                the host's own legacy advertising/scan response data over 31 bytes or with an AD structure \#
                running past its data (warning: the app advertises it); a report heard from a device the host \#
                connected or tried to connect to (warning, its firmware), from any other device (info) — once \#
                per advertiser, with the number of reports
                """#,
            evidence: "the frame"))
    let kinds: [SessionEvent.Kind] = [.advertising]
    /// First problem report per advertiser, with how many reports had one.
    private var heard: [BDAddr: (frame: Int, time: Int64, problem: String, count: Int)] = [:]
    private var order: [BDAddr] = []

    func observe(_ event: SessionEvent, _ context: DetectorContext, _ findings: inout [Finding]) {
        switch event {
        case let .advertisingData(frame, time, declared, problem?):
            findings.append(Finding(rule: Self.rule.id, severity: .warning, connection: nil, time: time, frames: [frame],
                                    message: "Advertising data set by the host (\(declared) bytes): \(problem)", actor: .app))
        case let .advertisingReportProblem(frame, time, problem, address):
            if var h = heard[address] { h.count += 1; heard[address] = h; return }
            guard heard.count < 1000 else { return }
            heard[address] = (frame, time, problem, 1)
            order.append(address)
        default:
            break
        }
    }

    func finish(_ context: DetectorContext, _ findings: inout [Finding]) {
        let m = context.model
        let peers = Set(m.connections.compactMap(\.peerAddress) + m.summarised.compactMap(\.peerAddress) + m.attempts.compactMap(\.peerAddress))
            .union(m.foldedRows.peers)
        for address in order {
            guard let h = heard[address] else { continue }
            let involved = peers.contains(address)
            let name = m.advertisers.name(of: address).map { "\($0) (\(address))" } ?? address.description
            let times = h.count == 1 ? "" : " (\(h.count) reports)"
            findings.append(Finding(rule: Self.rule.id, severity: involved ? .warning : .info, connection: nil, time: h.time, frames: [h.frame],
                                    message: "Advertising from \(name): \(h.problem)\(times)"
                                        + (involved ? "" : "; the host never connected to it, so this is a nearby device's problem, not this session's")))
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
        """,
        doc: .init(
            firesWhen: "a local peripheral keeps (or re-enables) advertising while a connection it accepted is open",
            evidence: "the enable command (or the Connection Complete when it stays enabled)"))
    let kinds: [SessionEvent.Kind] = [.advertising]

    func observe(_ event: SessionEvent, _ context: DetectorContext, _ findings: inout [Finding]) {
        guard case let .advertisingEnable(frame, time, adapter, true) = event else { return }
        guard let c = context.model.live.values.filter({ $0.adapter == adapter && $0.role == .peripheral }).min(by: { $0.index < $1.index })
        else { return }
        findings.append(Finding(rule: Self.rule.id, severity: .info, connection: c, time: time, frames: [frame],
                                message: "Advertising enabled while connection \(c.index) (as peripheral) is open"))
    }
}

/// Disconnection reasons that mean the link was lost, not closed (Connection Timeout 0x08, LL Response
/// Timeout 0x22, MIC Failure 0x3D, Connection Failed to be Established 0x3E): `link.disconnect` warns on
/// them and the report's timeline marks them.
public enum LinkLoss {
    public static let reasons: Set<UInt8> = [0x08, 0x22, 0x3D, 0x3E]
}

/// `link.disconnect`: every disconnection with its reason; link-loss reasons are warnings.
final class Disconnects: Detector {
    static let rule = RuleInfo(
        id: "link.disconnect", severity: .warning, title: "Disconnection",
        explanation: """
        Why each connection ended; the why line is the cause found in the frames (docs/RULES.md "Causes"). Links \
        lost (0x08, 0x3E, 0x22, 0x3D) and ends a problem caused are warnings; closes someone asked for are information.
        """, actor: .none,
        doc: .init(
            severity: "warning / info",
            firesWhen: #"""
                warning for 0x08 supervision timeout, 0x3E failed to be established, 0x22 LL response timeout, \#
                0x3D MIC failure, and for any reason whose cause is a problem (an ATT or SMP transaction \#
                timeout, key missing); info for the others, once per (connection). On LE air captures also a \#
                link that vanished without LL_TERMINATE_IND when a new CONNECT_IND to the same peripheral \#
                follows, or whose **peripheral went silent**: the central resent the same unacknowledged PDU \#
                (SN and NESN frozen) with no answer for ≥ 6 connection events in a row and then stopped while \#
                the capture went on, or for longer than the supervision timeout (Connection Timeout inferred, \#
                the message names the silent frames). Nothing of either side while the capture goes on is the \#
                sniffer losing the link: a timeline note, no finding; the central's NESN moving without a \#
                peripheral packet seen is the sniffer missing the peripheral. Every one carries its `cause` \#
                (below); a disconnect caused by a finding's problem (ATT/SMP timeout, key missing) is folded \#
                into that finding
                """#,
            evidence: "the Disconnection Complete"))
    let kinds: [SessionEvent.Kind] = [.connection]
    static let warnings = LinkLoss.reasons

    func observe(_ event: SessionEvent, _ context: DetectorContext, _ findings: inout [Finding]) {
        guard case let .disconnected(c, _) = event, let frame = c.lifecycle.disconnectFrame, let reason = c.lifecycle.disconnectReason else { return }
        let severity: Severity = Self.warnings.contains(reason.rawValue) ? .warning : .info
        let who = c.lifecycle.localDisconnectReason != nil ? "the host" : "the peer or the controller"
        let message: FindingMessage = c.snifferLoss.lossInferred.map { "Link to \(peer: c) lost (\($0))" }
            ?? (Self.warnings.contains(reason.rawValue) && c.lifecycle.localDisconnectReason == nil
                ? "Link to \(peer: c) lost: \(reason.name) (0x\(Format.hex(reason.rawValue)))"
                : "Disconnected from \(peer: c): \(reason.name) (0x\(Format.hex(reason.rawValue))), initiated by \(who)")
        findings.append(Finding(rule: Self.rule.id, severity: severity, connection: c, time: c.lifecycle.disconnectTime ?? 0, frames: [frame],
                                message: message))
    }
}

/// `link.disconnect-summary`: disconnect reasons over the whole capture.
final class DisconnectSummary: Detector {
    static let rule = RuleInfo(
        id: "link.disconnect-summary", severity: .info, title: "Disconnect reasons",
        explanation: "How many connections ended for each reason over the whole capture.", actor: .none,
        doc: .init(
            firesWhen: "once per capture: disconnect reasons with counts",
            evidence: "the Disconnection Completes"))
    let kinds: [SessionEvent.Kind] = []

    func observe(_ event: SessionEvent, _ context: DetectorContext, _ findings: inout [Finding]) {}

    func finish(_ context: DetectorContext, _ findings: inout [Finding]) {
        // Summarised connections are closed ones too.
        let m = context.model
        let closed = (m.connections.compactMap { c in c.lifecycle.disconnectReason.map { (reason: $0, frame: c.lifecycle.disconnectFrame, time: c.lifecycle.disconnectTime) } }
            + m.summarised.compactMap { s in s.disconnectReason.map { (reason: $0, frame: s.disconnectFrame, time: s.disconnectTime) } })
        // The oldest summarised, only counted, kept their first ends.
        let first = (m.foldedRows.firstEnds.map { (frame: Optional($0.frame), time: $0.time) } + closed.map { (frame: $0.frame, time: $0.time) })
            .sorted { ($0.frame ?? 0) < ($1.frame ?? 0) }
        guard !first.isEmpty else { return }
        var counts: [UInt8: Int] = [:]
        for (code, n) in m.foldedRows.ends where code != 0xFF { counts[code, default: 0] += n }
        for c in closed { counts[c.reason.rawValue, default: 0] += 1 }
        let text = counts.sorted { ($0.value, $1.key) > ($1.value, $0.key) }.map { "\($0.value)× \(HCIStatus(rawValue: $0.key).name) (0x\(Format.hex($0.key)))" }
        findings.append(Finding(rule: Self.rule.id, severity: .info, connection: nil, time: first[0].time ?? 0,
                                frames: first.prefix(50).compactMap(\.frame),
                                message: "Disconnect reasons: \(text.joined(separator: ", "))"))
    }
}

/// `link.parameter-update-refused`: the host asked the controller to change a connection's
/// parameters (LE Connection Update) and the controller refused in its Command Status, so the
/// parameters never change — typically after the host *accepted* the peer's L2CAP Connection
/// Parameter Update Request (Core v5.4 Vol 3 Part A 4.20/4.21), which leaves the peer believing
/// the new parameters will come.
final class ParameterUpdateRefused: Detector {
    static let rule = RuleInfo(
        id: "link.parameter-update-refused", severity: .warning, title: "Connection update refused by the controller",
        explanation: """
        The host sent LE Connection Update and the controller answered Command Status with an error (often Command \
        Disallowed 0x0C: another LL procedure was in progress, or the local role may not start it). The connection \
        keeps its old interval, latency and supervision timeout. When the peer asked for the change and the host \
        accepted, the peripheral waits for parameters that never come: its firmware should retry the request later, \
        and the host stack should not accept a request it cannot carry out (report it to the phone's stack vendor).
        """, actor: .hostStack,
        doc: .init(
            firesWhen: #"""
                an LE Connection Update refused in its Command Status (typically 0x0C), or accepted and then \#
                failed in its LE Connection Update Complete (e.g. 0x20 Unsupported LL Parameter Value, 0x3B): \#
                the parameters never change — after the host accepted the peer's L2CAP Connection Parameter \#
                Update Request the peer waits in vain. A Complete with a link-loss status (0x22, 0x08, 0x28) \#
                is the loss's: its disconnect's cause is `ll-procedure`. Cause `controller-refused`
                """#,
            evidence: "the Command Status or the Complete, the LE Connection Update, the accepted response"))
    let kinds: [SessionEvent.Kind] = [.link]
    /// The last accepted peer request per connection (frame).
    private var accepted = ConnectionState<Int>()

    func observe(_ event: SessionEvent, _ context: DetectorContext, _ findings: inout [Finding]) {
        switch event {
        case let .parameterResponse(c, frame, _, sent, true) where sent:
            accepted[c] = frame
        case let .parameterUpdateRefused(c, commandFrame, frame, time, status, completed):
            let after = accepted[c]
            accepted[c] = nil
            let why = after.map { " after the host accepted the peer's parameter request (frame \($0))" } ?? ""
            // Refused in its Command Status (the local controller would not start it), or failed in its
            // LE Connection Update Complete (the procedure ran and was rejected, Core v5.4 Vol 6 Part B 5.1.1/5.1.7).
            let how = completed ? "failed in the link layer" : "refused by the controller"
            var f = Finding(rule: Self.rule.id, severity: .warning, connection: c, time: time,
                            frames: [frame, commandFrame] + (after.map { [$0] } ?? []),
                            message: "LE Connection Update for \(peer: c) \(how): \(status.name) (0x\(Format.hex(status.rawValue)))\(why); the parameters stay unchanged")
            f.status = status.rawValue
            f.cause = FindingCause(.controllerRefused, frames: [frame], completed
                ? "the connection update procedure ran and failed: LE Connection Update Complete at frame \(frame) carries \(status.name) (0x\(Format.hex(status.rawValue))), so the parameters of LE Connection Update (frame \(commandFrame)) never applied"
                : "the controller refused LE Connection Update (frame \(commandFrame)) in its Command Status at frame \(frame): \(status.name) (0x\(Format.hex(status.rawValue)))")
            findings.append(f)
        default:
            break
        }
    }
}

/// `link.command-refused`: the controller refused the same command with the same status again and
/// again (Command Status or Command Complete with an error, ≥ `count` times): one finding per
/// (adapter, command, status) with the count, instead of one line per refusal. Information: a stack
/// that rotates its random address while advertising (Command Disallowed, Core v5.4 Vol 4 Part E
/// 7.8.4/7.8.52) or enables a scan already enabled is not broken, but each refusal is work the
/// stack then retries.
final class CommandRefused: Detector {
    static let rule = RuleInfo(
        id: "link.command-refused", severity: .info, title: "Commands the controller refused repeatedly",
        explanation: """
        The controller answered the same command with the same error several times. Command Disallowed (0x0C) means \
        the command is not allowed in the controller's current state (e.g. setting a random address or parameters \
        while advertising or scanning is on); Unknown HCI Command (0x01) means this controller does not have it. The \
        host stack (not the app) sends these: report it to the phone's stack vendor when it causes a visible problem.
        """, thresholds: [.init(name: "count", defaultValue: 3, unit: "refusals", meaning: "refusals of one command with one status before it is reported")],
        actor: .hostStack,
        doc: .init(
            firesWhen: #"""
                the controller refused the same command with the same status ≥ `count` (default 3) times \#
                (Command Status or Command Complete with an error): one finding per (adapter, command, status) \#
                with the count (configuration commands are `hci.config-refused`'s, from the first) — e.g. LE \#
                Set Advertising Set Random Address refused with Command Disallowed while advertising
                """#,
            evidence: "the first refusal, the last"))
    let kinds: [SessionEvent.Kind] = []

    func observe(_ event: SessionEvent, _ context: DetectorContext, _ findings: inout [Finding]) {}

    func finish(_ context: DetectorContext, _ findings: inout [Finding]) {
        let minimum = Int(threshold("count", context))
        // Connection attempts the controller refuses are the pool rules' (pool.rejected-attempt, pool.full).
        let creates: Set<HCIOpcode> = [.leCreateConnection, .leExtendedCreateConnection, .leExtendedCreateConnectionV2, .createConnection]
        // Configuration refusals are `hci.config-refused`'s, from the first.
        for r in context.model.refusals where r.count >= minimum && !creates.contains(r.key.opcode) && ConfigRefused.deprives[r.key.opcode] == nil {
            let name = HCIDecoder.commandName(r.key.opcode)
            let span = r.last.time - r.first.time
            var f = Finding(rule: Self.rule.id, severity: .info, connection: nil, time: r.first.time, frames: [r.first.frame, r.last.frame],
                            message: "\(name) (0x\(Format.hex(r.key.opcode.rawValue, 4))) refused \(r.count) times with \(r.key.status.name) (0x\(Format.hex(r.key.status.rawValue)))"
                                + (span >= 1_000_000 ? ", over \(Format.duration(span))" : ", within a second"))
            f.status = r.key.status.rawValue
            findings.append(f)
        }
    }
}

/// `adv.periodic-sync-lost`: LE Periodic Advertising Sync Lost (Core v5.4 Vol 4 Part E 7.7.65.16): the
/// controller received no AUX_SYNC_IND of a periodic advertising train for its sync timeout and stopped
/// following it (Vol 6 Part B 4.3.5). Information: the capture shows the loss, not that the data was
/// needed (a broadcast the user walked away from). One finding per adapter with the count.
final class PeriodicSyncLost: Detector {
    static let rule = RuleInfo(
        id: "adv.periodic-sync-lost", severity: .info, title: "Periodic advertising sync lost",
        explanation: """
        The controller stopped following a periodic advertising train (LE Periodic Advertising Sync Lost): nothing \
        was received from it for its sync timeout — the advertiser stopped, moved away, or interference. Data or \
        broadcast audio carried on it stops until the host synchronises again (a new LE Periodic Advertising Create \
        Sync); a sync timeout set too short for the train's interval loses it often.
        """, actor: .none,
        doc: .init(
            firesWhen: #"""
                LE Periodic Advertising Sync Lost (Vol 4 Part E 7.7.65.16): the controller heard no \#
                AUX_SYNC_IND of a periodic train for its sync timeout and stopped following it (Vol 6 Part B \#
                4.3.5); what the train carried (data, broadcast audio) stops until the host syncs again. \#
                Information: the loss is seen, not that anyone needed the data. One finding per adapter with \#
                the count
                """#,
            evidence: "the first Sync Lost, the second"))
    let kinds: [SessionEvent.Kind] = [.advertising]
    private var seen: [UInt16: (finding: Int, count: Int)] = [:]
    func findingsMoved(_ moves: FindingMoves) { seen = seen.mapValues { (moves($0.finding), $0.count) } }

    func observe(_ event: SessionEvent, _ context: DetectorContext, _ findings: inout [Finding]) {
        guard case let .periodicSyncLost(adapter, frame, time, syncHandle) = event else { return }
        if var s = seen[adapter] {
            s.count += 1
            seen[adapter] = s
            if s.count == 2 { findings[s.finding].frames.append(frame) }
            findings[s.finding].message = "The controller lost \(s.count) periodic advertising syncs (LE Periodic Advertising Sync Lost), the last of sync handle 0x\(Format.hex(syncHandle, 4)); what they carried stopped until the host synchronised again"
            return
        }
        findings.append(Finding(rule: Self.rule.id, severity: .info, connection: nil, time: time, frames: [frame],
                                message: "The controller lost the periodic advertising sync of sync handle 0x\(Format.hex(syncHandle, 4)) (LE Periodic Advertising Sync Lost); what it carried stopped until the host synchronises again"))
        seen[adapter] = (findings.count - 1, 1)
    }
}

/// `adv.scan-response-missing`: on air, an advertiser left at least `unanswered` (default 16) scan requests
/// in a row without a SCAN_RSP, each heard by the sniffer right after that advertiser's ADV_IND or
/// ADV_SCAN_IND on the same channel (so the sniffer hears the advertiser there, and a SCAN_RSP would have
/// been captured; see `AirCaptureAdapter.scanExchange`). Why 16: a scanner doubles its backoff upper limit on
/// every two consecutive failures, from 1 to at most 256 (Core v5.4 Vol 6 Part B 4.4.3.2), so 16 failures in
/// a row take a compliant scanner to its longest backoff; collisions between scanners, which the backoff
/// exists to resolve, do not leave that many. The advertiser is busy (its link layer has no time between
/// other radio activity), deaf, or ignores those scanners by its filter policy (4.3.2): information, with
/// how many requests it answered over the capture. One finding per advertiser, its longest run.
final class ScanResponseMissing: Detector {
    static let rule = RuleInfo(
        id: "adv.scan-response-missing", severity: .info, title: "Scan requests left unanswered (air)",
        explanation: """
        Scanners asked this advertiser for its scan response (SCAN_REQ) again and again and it never answered \
        (no SCAN_RSP), although the sniffer heard its advertising on the same channel just before each request. \
        Scanners then do not get the data in its scan response (often the name or service UUIDs), and they back \
        off. The advertiser is busy (its radio serves a connection or other advertising sets), does not hear the \
        scanners, or its filter policy answers only known scanners. Check the peripheral firmware's advertising \
        set-up (scannable type, filter policy) and its radio schedule.
        """, thresholds: [.init(name: "unanswered", defaultValue: 16, unit: "requests", meaning: "shortest run of unanswered scan requests reported")],
        actor: .peripheralFirmware,
        doc: .init(
            firesWhen: #"""
                on air, an advertiser left ≥ `unanswered` (default 16) SCAN_REQs in a row without a SCAN_RSP, \#
                each heard right after its ADV_IND / ADV_SCAN_IND on the same channel (within 2 ms: the \#
                sniffer hears the advertiser there, so its answer, T_IFS after the request, would be \#
                captured); a request followed within 2 ms by another packet (it may have hidden the answer), a \#
                bad CRC or a data packet is not decided, and SCAN_REQs to an advertiser the sniffer does not \#
                hear prove nothing (in the real nRF captures 316 SCAN_REQs to one faint advertiser drew no \#
                SCAN_RSP the sniffer could hear). Why 16: a scanner doubles its backoff upper limit on every \#
                two consecutive failures, from 1 to 256 (Vol 6 Part B 4.4.3.2), so 16 in a row take a \#
                compliant scanner to its longest backoff; collisions, which the backoff resolves, do not leave \#
                that many. The advertiser is busy, deaf, or filters scanners (4.3.2): information with how \#
                many it answered. Actor: the peripheral firmware. One finding per advertiser, its longest run
                """#,
            evidence: "the first and last request of the longest run"))
    let kinds: [SessionEvent.Kind] = [.advertising]
    private struct Run {
        var count = 0
        var first = 0, firstTime: Int64 = 0
        var last = 0, lastTime: Int64 = 0
        var scanners: Set<BDAddr> = []
    }
    private struct State {
        var heard = 0, answered = 0
        var run = Run(), longest = Run()
    }
    /// Per advertiser, in the order first heard; bounded (a busy air capture has a few hundred advertisers).
    private var advertisers: [BDAddr: State] = [:]
    private var order: [BDAddr] = []
    static let maxAdvertisers = 4096

    func observe(_ event: SessionEvent, _ context: DetectorContext, _ findings: inout [Finding]) {
        guard case let .airScanRequest(advertiser, scanner, frame, time, answered) = event else { return }
        guard var s = advertisers[advertiser] ?? (advertisers.count < Self.maxAdvertisers ? State() : nil) else { return }
        if s.heard == 0 { order.append(advertiser) }
        s.heard += 1
        if answered {
            s.answered += 1
            s.run = Run()
        } else {
            if s.run.count == 0 { (s.run.first, s.run.firstTime) = (frame, time) }
            s.run.count += 1
            (s.run.last, s.run.lastTime) = (frame, time)
            if s.run.scanners.count < 16 { s.run.scanners.insert(scanner) }
            if s.run.count > s.longest.count { s.longest = s.run }
        }
        advertisers[advertiser] = s
    }

    func finish(_ context: DetectorContext, _ findings: inout [Finding]) {
        let least = Int(threshold("unanswered", context))
        for address in order {
            guard let s = advertisers[address], s.longest.count >= least else { continue }
            let l = s.longest
            let name = context.model.advertisers.name(of: address).map { "\($0) (\(address))" } ?? address.description
            let scanners = l.scanners.count == 1 ? "one scanner" : "\(l.scanners.count)\(l.scanners.count >= 16 ? "+" : "") scanners"
            let overall = s.answered == 0 ? "it answered none of the \(s.heard) requests heard" : "over the capture it answered \(s.answered) of \(s.heard)"
            findings.append(Finding(rule: Self.rule.id, severity: .info, connection: nil, time: l.firstTime, frames: [l.first, l.last],
                                    message: "\(name) left \(l.count) scan requests in a row unanswered (frames \(l.first)–\(l.last), "
                                        + "\(Format.duration(l.lastTime - l.firstTime)), from \(scanners)), each heard right after its advertising "
                                        + "on the same channel; \(overall)"))
        }
    }
}

/// `adv.scan-backoff-ignored`: on air, a scanner sent a SCAN_REQ after every scannable advertising PDU the
/// sniffer heard from one advertiser while at least `failures` (default 8) of its requests in a row went
/// unanswered. A scanner shall run the backoff procedure (Core v5.4 Vol 6 Part B 4.4.3.2): after each
/// failure it skips a random 0 … upperLimit − 1 opportunities, upperLimit doubling every two consecutive
/// failures (1, 2, 4 … 256), so a compliant scanner sends at every opportunity after 8 failures in a row
/// with probability (1/2 · 1/2 · 1/4 · 1/4 · 1/8 · 1/8) = 1/4096. An opportunity the scanner did not hear
/// (another channel, its scan window closed) counts as skipped, so the rule can only stay silent wrongly,
/// never fire wrongly on that; a failure is a request the sniffer heard unanswered right after the
/// advertiser's PDU (`adv.scan-response-missing`'s test). The scanner's link layer crowds the advertising
/// channels: information, for its controller. One finding per scanner and advertiser.
final class ScanBackoffIgnored: Detector {
    static let rule = RuleInfo(
        id: "adv.scan-backoff-ignored", severity: .info, title: "Scanner does not back off (air)",
        explanation: """
        A scanner whose scan requests go unanswered must back off: after each failure it lets a random number of \
        advertising events pass before it asks again, up to 256 after repeated failures (Core v5.4 Vol 6 Part B \
        4.4.3.2). This one asked at every advertising event the sniffer heard, failure after failure. It wastes air \
        time and collides with the other scanners' requests, which the backoff exists to spread out. The scanning \
        device's controller (its link-layer firmware) should run the backoff procedure.
        """, thresholds: [.init(name: "failures", defaultValue: 8, unit: "requests",
                                meaning: "fewest unanswered requests in a row, none of the opportunities skipped")],
        actor: .controller,
        doc: .init(
            firesWhen: #"""
                on air, a scanner sent a SCAN_REQ after every ADV_IND / ADV_SCAN_IND the sniffer heard from one \#
                advertiser while ≥ `failures` (default 8) of its requests in a row went unanswered (each heard \#
                right after the advertiser's PDU on its channel, as `adv.scan-response-missing` decides). The \#
                backoff (Vol 6 Part B 4.4.3.2) skips a random 0 … upperLimit − 1 opportunities after each \#
                failure, upperLimit doubling every two failures in a row: a compliant scanner asks at every \#
                opportunity through 8 failures with probability 1/4096. An opportunity the scanner may not have \#
                heard (another channel, scan window closed) counts as skipped: the rule can stay silent \#
                wrongly, not fire wrongly. Actor: the scanner's controller. One finding per scanner and \#
                advertiser, its count updated while the run goes on
                """#,
            evidence: "the request that reached `failures`, the run's first request"))
    let kinds: [SessionEvent.Kind] = [.advertising]
    private struct Run {
        var failures = 0
        var first = 0
        /// An opportunity of the advertiser passed without this scanner's request since the run began.
        var skipped = false
        /// The finding (kept across runs) and the longest run it states.
        var finding: Int?
        var reported = 0
    }
    /// Runs per advertiser and scanner; bounded like `adv.scan-response-missing`'s advertisers.
    private var runs: [BDAddr: [BDAddr: Run]] = [:]
    func findingsMoved(_ moves: FindingMoves) {
        runs = runs.mapValues { $0.mapValues { r in var r = r; r.finding = r.finding.map(moves.callAsFunction); return r } }
    }

    func observe(_ event: SessionEvent, _ context: DetectorContext, _ findings: inout [Finding]) {
        switch event {
        case let .airScanOpportunity(advertiser, requester, _):
            guard var scanners = runs[advertiser] else { return }
            for (scanner, run) in scanners where run.failures > 0 && scanner != requester { scanners[scanner]?.skipped = true }
            runs[advertiser] = scanners
        case let .airScanRequest(advertiser, scanner, frame, time, answered):
            guard runs[advertiser] != nil || runs.count < ScanResponseMissing.maxAdvertisers else { return }
            var run = runs[advertiser]?[scanner] ?? Run()
            if answered {
                run = Run(finding: run.finding, reported: run.reported)
            } else {
                if run.failures == 0 { run.first = frame }
                run.failures += 1
                if !run.skipped, run.failures >= Int(threshold("failures", context)) {
                    let message = Self.message(scanner, advertiser, run.failures, context)
                    if let i = run.finding {
                        if run.failures > run.reported { findings[i].message = message }
                    } else {
                        run.finding = findings.count
                        findings.append(Finding(rule: Self.rule.id, severity: .info, connection: nil, time: time, frames: [frame, run.first],
                                                message: message))
                    }
                    run.reported = max(run.reported, run.failures)
                }
            }
            runs[advertiser, default: [:]][scanner] = run
        default:
            break
        }
    }

    private static func message(_ scanner: BDAddr, _ advertiser: BDAddr, _ failures: Int, _ context: DetectorContext) -> FindingMessage {
        let name = context.model.advertisers.name(of: advertiser).map { "\($0) (\(advertiser))" } ?? advertiser.description
        let text = "Scanner \(scanner) asked \(name) for its scan response after all \(failures) of its advertising events the sniffer heard, "
            + "each request unanswered, without the backoff a scanner runs after failures (it would have skipped some with probability "
            + "above 4095/4096): it crowds the advertising channels"
        return "\(text)"
    }
}

/// `adv.interval-short`: on air, an advertiser sent the same legacy advertising PDU (ADV_IND, ADV_NONCONN_IND,
/// ADV_SCAN_IND: type, address and data) on the same primary channel less than 20 ms after the last one, by
/// the sniffer's own clock, at least `count` (default 6: two doubled events heard on three channels) times. One advertising set's events are advInterval
/// (≥ 20 ms) + advDelay (0–10 ms) apart and use each channel once (Core v5.4 Vol 6 Part B 4.4.2.2.1), so one
/// set cannot do it; a device running several advertising sets with the same PDU can (Vol 4 Part E 7.8.53),
/// and the air cannot tell them apart: information, naming both. Only captures whose header carries the
/// sniffer's clock (nRF Sniffer protocol 3) are judged: their file timestamps are the host's reception
/// times. One finding per advertiser with the count and the shortest gap.
final class AdvertisingIntervalShort: Detector {
    static let rule = RuleInfo(
        id: "adv.interval-short", severity: .info, title: "Advertising events closer than 20 ms (air)",
        explanation: """
        The device sent the same advertising packet on the same channel again less than 20 ms later. One \
        advertising set may not advertise faster than every 20 ms (plus a random 0–10 ms delay), so either the \
        device runs several advertising sets with the same data, or its firmware breaks the minimum interval. \
        Either way it takes more air time and battery than one set would, and crowds the advertising channels \
        for everyone nearby. Check the peripheral firmware's advertising sets and intervals.
        """, thresholds: [.init(name: "count", defaultValue: 6, unit: "gaps", meaning: "fewest gaps under 20 ms reported")],
        actor: .peripheralFirmware,
        doc: .init(
            firesWhen: #"""
                on air, an advertiser sent the same legacy advertising PDU (ADV_IND, ADV_NONCONN_IND, \#
                ADV_SCAN_IND: type, address, data) on the same primary channel less than 20 ms after the last \#
                one, by the sniffer's own clock, ≥ `count` (default 6: two doubled events heard on three \#
                channels) times. One advertising set's events are advInterval (≥ 20 ms) + advDelay (0–10 ms) \#
                apart and use each channel once (Vol 6 Part B 4.4.2.2.1); several sets with the same PDU can \#
                do it and the air cannot tell them apart, so information naming both. Only headers with the \#
                sniffer's clock (nRF Sniffer protocol 3) are judged: the file timestamps of nRF captures are \#
                the host's reception times (surplife frames 92–116: 0.27 ms apart in the file, 0.1–11 ms by \#
                the sniffer clock). Interval far above an advertised Advertising Interval (AD 0x1A): not \#
                judged (a sniffer misses events). One finding per advertiser with the count and the shortest \#
                gap
                """#,
            evidence: "the PDU whose gap reached `count`, the one before it, then the same two of the shortest gap"))
    let kinds: [SessionEvent.Kind] = [.advertising]
    private struct State {
        var count = 0
        var shortest: (gap: Int64, channel: UInt8, previous: Int, frame: Int, time: Int64)
        /// The finding, added when the count reached the threshold (its frames, the gap that reached
        /// it, are then among the recent ones the HTML report decodes); completed at the end.
        var finding: Int?
    }
    private var advertisers: [BDAddr: State] = [:]
    func findingsMoved(_ moves: FindingMoves) {
        advertisers = advertisers.mapValues { s in var s = s; s.finding = s.finding.map(moves.callAsFunction); return s }
    }

    func observe(_ event: SessionEvent, _ context: DetectorContext, _ findings: inout [Finding]) {
        guard case let .airAdvertisingGap(advertiser, channel, previous, frame, time, gap) = event else { return }
        guard var s = advertisers[advertiser] ?? (advertisers.count < ScanResponseMissing.maxAdvertisers
            ? State(shortest: (gap, channel, previous, frame, time)) : nil) else { return }
        s.count += 1
        if gap < s.shortest.gap { s.shortest = (gap, channel, previous, frame, time) }
        if s.finding == nil, s.count >= Int(threshold("count", context)) {
            s.finding = findings.count
            findings.append(Finding(rule: Self.rule.id, severity: .info, connection: nil, time: time, frames: [frame, previous],
                                    message: Self.message(advertiser, s, context)))
        }
        advertisers[advertiser] = s
    }

    func finish(_ context: DetectorContext, _ findings: inout [Finding]) {
        for (address, s) in advertisers {
            guard let i = s.finding else { continue }
            findings[i].message = Self.message(address, s, context)
            // The shortest gap's frames after the pair that reached the threshold.
            for n in [s.shortest.frame, s.shortest.previous] where !findings[i].frames.contains(n) { findings[i].frames.append(n) }
        }
    }

    private static func message(_ address: BDAddr, _ s: State, _ context: DetectorContext) -> FindingMessage {
        let l = s.shortest
        let name = context.model.advertisers.name(of: address).map { "\($0) (\(address))" } ?? address.description
        let gap = "\(l.gap / 1000).\(l.gap % 1000 / 100) ms"
        let text = "\(name) sent the same advertising packet on the same channel less than 20 ms after the last one "
            + "\(s.count) times (the shortest: \(gap) on channel \(l.channel), frames \(l.previous) and \(l.frame), by the "
            + "sniffer's clock): one advertising set may not (advInterval ≥ 20 ms), so it runs several sets with the "
            + "same data or breaks the interval"
        return "\(text)"
    }
}
