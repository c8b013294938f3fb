import BLEProtocol

/// `radio.scan-contention`: the host enabled LE scanning while an LE link was busy, the enable took ≥
/// `slow` (default 0.5 s) to complete, and the link stopped meanwhile: host packets sent before the
/// enable were still waiting in the controller (no Number Of Completed Packets) when it completed, or
/// the peer, which had sent twice in the second before, sent nothing until it completed. The gap runs
/// from the link's last packet before the enable to its first after the completion. Warning when it
/// happened ≥ `count` (default 2) times (a host restarting its scan while connected); information once.
/// One finding per adapter.
final class ScanContention: Detector {
    static let rule = RuleInfo(
        id: "radio.scan-contention", severity: .warning, title: "Scanning stopped a busy link",
        explanation: """
        The phone has one radio: while its controller sets scanning up and scans, connection events of its links \
        are skipped. Here each LE Set Scan Enable took long to complete and the link's traffic stopped until it did. \
        Do not restart scans while connected (Android restarts a scan on every startScan: keep one scan, with a \
        filter, or stop it once connected; iOS: stop scanForPeripherals after connecting).
        """, thresholds: [.init(name: "slow", defaultValue: 0.5, unit: "s", meaning: "time the scan enable took to complete"),
                          .init(name: "count", defaultValue: 2, unit: "times", meaning: "occurrences that make it a warning")],
        actor: .app,
        doc: .init(
            severity: "warning (≥ `count`, default 2, times) / info",
            firesWhen: #"""
                the host enabled LE scanning (LE Set (Extended) Scan Enable) while an LE link was busy, the \#
                enable took ≥ `slow` (default 0.5 s) to complete, and the link stopped meanwhile: host packets \#
                sent before the enable still waited in the controller (no Number Of Completed Packets) when it \#
                completed, or the peer, which had sent twice in the second before, sent nothing until then. \#
                One finding per adapter with the count and the longest gap (last packet before the enable to \#
                the first after its completion); cause `radio-contention`
                """#,
            evidence: #"""
                the first enable, its completion, the link's last packet before, its first after, the later \#
                enables
                """#))
    let kinds: [SessionEvent.Kind] = [.controller, .aclReceived, .credits]
    let onDemand = ContentionWatch.onDemand
    /// Touched on every received packet and credit return: no dynamic exclusivity check (the pass is
    /// single-threaded, as for the other per-packet detectors).
    @exclusivity(unchecked) private var watch = ContentionWatch()
    func keeps(_ c: Connection, _ context: DetectorContext) -> Bool { watch.holds(c) }

    func observe(_ event: SessionEvent, _ context: DetectorContext, _ findings: inout [Finding]) {
        if case let .scanEnabled(adapter, command, answer) = event {
            guard answer.time - command.time >= micros("slow", context) else { return }
            watch.radioTaken(adapter: adapter, from: command, to: answer, links: { $0.isLE }, context)
        } else {
            watch.observe(event, context)
        }
    }

    func finish(_ context: DetectorContext, _ findings: inout [Finding]) {
        findings += watch.findings(Self.rule.id, warningFrom: Int(threshold("count", context))) { s, first in
            s.list.count == 1
                ? "The host enabled scanning while the link to \(peer: first.c) was busy: the enable took \(Format.duration(first.answer.time - first.command.time)) to complete and \(s.what) for \(Format.duration(ContentionWatch.gap(first)))"
                : "The host enabled scanning \(s.list.count) times while \(s.linkText) carried data: each enable took up to \(Format.duration(s.longest)) to complete and the link stopped meanwhile, \(s.worstText)"
        } cause: { first in
            "LE Set Scan Enable at frame \(first.command.frame) completed only at frame \(first.answer.frame)"
        }
    }
}

/// `radio.inquiry-contention`: the host ran a BR/EDR inquiry (Inquiry or Periodic Inquiry Mode) while a
/// link of the same controller was busy, and the link stopped while it ran: the same test as
/// `radio.scan-contention`, over the inquiry's run (its command to its Inquiry Complete or cancel). An
/// inquiry hops over the inquiry channels for Inquiry_Length × 1.28 s and takes the radio time the link's
/// slots or connection events need (Core v5.4 Vol 2 Part B 8.4); a controller may keep some ACL slots
/// but many do not. Same thresholds and severity: warning when it happened ≥ `count` (default 2) times (a
/// host inquiring again and again while connected), information once. One finding per adapter.
final class InquiryContention: Detector {
    static let rule = RuleInfo(
        id: "radio.inquiry-contention", severity: .warning, title: "Inquiry stopped a busy link",
        explanation: """
        A BR/EDR inquiry (device discovery) takes the radio for its whole length, Inquiry_Length × 1.28 s (often \
        10 s): the controller hops over the inquiry channels and the links' slots and connection events are skipped. \
        Here the link's traffic stopped while the inquiry ran. Do not discover devices while connected (Android: \
        cancelDiscovery() before connecting and while transferring), or keep the inquiry short.
        """, thresholds: [.init(name: "slow", defaultValue: 0.5, unit: "s", meaning: "time the inquiry ran"),
                          .init(name: "count", defaultValue: 2, unit: "times", meaning: "occurrences that make it a warning")],
        actor: .app,
        doc: .init(
            severity: "warning (≥ `count`, default 2, times) / info",
            firesWhen: #"""
                the host ran a BR/EDR inquiry (Inquiry or Periodic Inquiry Mode, Vol 4 Part E 7.1.1, 7.1.3) \#
                for ≥ `slow` (default 0.5 s; from the command to its Inquiry Complete, or to Inquiry Cancel / \#
                Exit Periodic Inquiry Mode) while a link of the same controller was busy, and the link stopped \#
                meanwhile — the test and thresholds of `radio.scan-contention`: host packets sent before the \#
                inquiry still waited in the controller when it ended, or the peer, which had sent twice in the \#
                second before, sent nothing until then. An inquiry takes the radio for Inquiry_Length × 1.28 s \#
                (Vol 2 Part B 8.4); the why names the length asked. Of a periodic inquiry only the first run \#
                is timed. One finding per adapter with the count and the longest gap; cause `radio-contention`
                """#,
            evidence: "the first inquiry, its end, the link's last packet before, its first after, the later inquiries"))
    let kinds: [SessionEvent.Kind] = [.controller, .aclReceived, .credits]
    let onDemand = ContentionWatch.onDemand
    /// Touched on every received packet and credit return: no dynamic exclusivity check (the pass is
    /// single-threaded, as for the other per-packet detectors).
    @exclusivity(unchecked) private var watch = ContentionWatch()
    func keeps(_ c: Connection, _ context: DetectorContext) -> Bool { watch.holds(c) }
    private var lengths: [Int: (units: UInt8, periodic: Bool)] = [:]

    func observe(_ event: SessionEvent, _ context: DetectorContext, _ findings: inout [Finding]) {
        if case let .inquiryRan(adapter, command, end, length, periodic) = event {
            guard end.time - command.time >= micros("slow", context) else { return }
            if lengths.count < 500 { lengths[command.frame] = (length, periodic) }
            watch.radioTaken(adapter: adapter, from: command, to: end, links: { _ in true }, context)
        } else {
            watch.observe(event, context)
        }
    }

    func finish(_ context: DetectorContext, _ findings: inout [Finding]) {
        let asked = { (first: ContentionWatch.Hit) in
            self.lengths[first.command.frame].map { " (Inquiry_Length \($0.units) × 1.28 s\($0.periodic ? ", periodic" : ""))" } ?? ""
        }
        findings += watch.findings(Self.rule.id, warningFrom: Int(threshold("count", context))) { s, first in
            s.list.count == 1
                ? "The host ran an inquiry while the link to \(peer: first.c) was busy: it ran \(Format.duration(first.answer.time - first.command.time))\(asked(first)) and \(s.what) for \(Format.duration(ContentionWatch.gap(first)))"
                : "The host ran an inquiry \(s.list.count) times while \(s.linkText) carried data: each ran up to \(Format.duration(s.longest)) and the link stopped meanwhile, \(s.worstText)"
        } cause: { first in
            "Inquiry at frame \(first.command.frame)\(asked(first)) ran until frame \(first.answer.frame)"
        }
    }
}

/// `radio.audio-contention`: an LE link stalled (`LinkStall`: the controller held its host packets with no
/// sign of life for ≥ 0.5 s) while an SCO/eSCO link of the same controller was open (from its Synchronous
/// Connection Complete, Core v5.4 Vol 4 Part E 7.7.35, to its Disconnection Complete). Voice links reserve
/// slots every T_eSCO (Vol 2 Part B 8.6.2, 8.6.3) and a combined BR/EDR-LE controller gives them priority:
/// LE connection events are skipped. Information: the frames show the overlap, not that the voice link
/// caused it (a link may stall for other reasons). Shares `ContentionWatch` with the scan and inquiry rules;
/// one finding per adapter.
final class AudioContention: Detector {
    static let rule = RuleInfo(
        id: "radio.audio-contention", severity: .info, title: "LE link stalled beside a voice link",
        explanation: """
        A Classic voice link (SCO/eSCO: a call, a headset) was open on the same controller and the LE link's data \
        stopped: voice takes reserved slots every few milliseconds and the controller skips LE connection events for \
        them. Expect lower LE throughput during calls; use a longer LE connection interval or send less then.
        """, actor: .none,
        doc: .init(
            firesWhen: #"""
                an LE link stalled (the `link.stall` test: the controller held its host packets with no \#
                completion and nothing received for ≥ 0.5 s) while an SCO/eSCO link of the same controller was \#
                open — from its Synchronous Connection Complete (Vol 4 Part E 7.7.35) to its Disconnection \#
                Complete. Voice reserves slots every T_eSCO (Vol 2 Part B 8.6.2–8.6.3) and controllers give it \#
                priority over LE connection events. Information: the frames show the overlap, not the cause. \#
                A2DP (AVDTP over L2CAP) is not tracked. Shares `ContentionWatch` with the scan and inquiry \#
                rules; one finding per adapter; cause `radio-contention`
                """#,
            evidence: #"""
                the Synchronous Connection Complete, the link's last sign of life before the stall, its first \#
                after
                """#))
    let kinds: [SessionEvent.Kind] = [.controller]
    private var watch = ContentionWatch()
    func keeps(_ c: Connection, _ context: DetectorContext) -> Bool { watch.holds(c) }

    func observe(_ event: SessionEvent, _ context: DetectorContext, _ findings: inout [Finding]) {
        guard case let .linkStall(c, stall) = event, c.isLE, let audio = stall.audioLink else { return }
        watch.record(adapter: c.adapter, .init(c: c, command: audio, answer: audio, before: stall.from, after: stall.to, held: true))
    }

    func finish(_ context: DetectorContext, _ findings: inout [Finding]) {
        findings += watch.findings(Self.rule.id, warningFrom: nil) { s, first in
            s.list.count == 1
                ? "The link to \(peer: first.c) stalled for \(Format.duration(ContentionWatch.gap(first))) while a voice (SCO/eSCO) link was open: \(s.what)"
                : "\(s.linkText.prefix(1).uppercased() + s.linkText.dropFirst()) stalled \(s.list.count) times while a voice (SCO/eSCO) link was open, \(s.worstText)"
        } cause: { first in
            "the SCO/eSCO link opened at frame \(first.command.frame) was open"
        }
    }
}

/// The host's own radio use (a scan enable, an inquiry) from `command` to `answer`, and the busy links that
/// stopped meanwhile: host packets sent before it still waiting in the controller (no Number Of Completed
/// Packets) at its end, or a peer that had sent twice in the second before and sent nothing until then.
/// The gap runs from the link's last packet before to its first after. Bounded: 500 hits per adapter.
struct ContentionWatch {
    struct Hit {
        var c: Connection
        var command: LinkForensics.Mark
        var answer: LinkForensics.Mark
        /// The link's last packet before the command, and its first after the answer.
        var before: LinkForensics.Mark
        var after: LinkForensics.Mark?
        var held: Bool
    }
    private var hits: [UInt16: [Hit]] = [:]
    /// Hits waiting for the link's next packet, by connection index.
    private var open: [Int: (adapter: UInt16, index: Int)] = [:]

    /// The hits, one non-empty list per adapter, in adapter order.
    var byAdapter: [[Hit]] { hits.sorted { $0.key < $1.key }.map(\.value).filter { !$0.isEmpty } }
    /// Whether a hit is of `c` (its finding is made at the end).
    func holds(_ c: Connection) -> Bool { hits.values.contains { $0.contains { $0.c === c } } }

    /// One finding per adapter with hits: a warning from `warningFrom` hits on (nil: never), worded by
    /// `message` (the adapter's summary, its first hit), its `radio-contention` cause by `cause`.
    func findings(_ rule: String, warningFrom: Int?, message: (Summary, Hit) -> FindingMessage,
                  cause: (Hit) -> String) -> [Finding] {
        byAdapter.map { list in
            let s = Summary(list)
            return s.finding(rule, warning: warningFrom.map { list.count >= $0 } ?? false, message: message(s, s.first), cause: cause(s.first))
        }
    }

    /// The link's last packet before to its first after (or the end, when none came).
    static func gap(_ h: Hit) -> Int64 { (h.after?.time ?? h.answer.time) - h.before.time }

    /// What a finding of either rule says of one adapter's hits (the first, the worst gap, the longest
    /// run, the links, what stopped), and the finding itself with its `radio-contention` cause.
    struct Summary {
        let list: [Hit]
        let first: Hit
        let longest: Int64
        let what: String
        let linkText: String
        let worstText: String

        init(_ list: [Hit]) {
            self.list = list
            first = list[0]
            let worst = list.max { gap($0) < gap($1) } ?? list[0]
            longest = list.map { $0.answer.time - $0.command.time }.max() ?? 0
            let links = Set(list.map(\.c.index)).count
            what = first.held ? "host packets waited in the controller" : "the peer's data stopped"
            linkText = links == 1 ? "the link to \(first.c.peerLabel)" : "\(links) links"
            worstText = "at worst for \(Format.duration(gap(worst))) (frame \(worst.command.frame))"
        }

        /// `cause`: what took the radio, from when to when; the link's last packet before and next after follow.
        func finding(_ rule: String, warning: Bool, message: FindingMessage, cause: String) -> Finding {
            var f = Finding(rule: rule, severity: warning ? .warning : .info, connection: first.c,
                            time: first.command.time, frames: ContentionWatch.frames(list), message: message)
            f.cause = FindingCause(.radioContention, frames: [first.command.frame, first.answer.frame],
                                   FindingMessage(cause + "; the link's last packet before it is frame \(first.before.frame)"
                                                  + (first.after.map { " and its next frame \($0.frame)" } ?? "")))
            return f
        }
    }

    /// The first hit's command, answer, last and next packet, then the later commands.
    static func frames(_ list: [Hit]) -> [Int] {
        guard let first = list.first else { return [] }
        var frames = [first.command.frame, first.answer.frame, first.before.frame] + (first.after.map { [$0.frame] } ?? [])
        frames += list.dropFirst().prefix(24).map(\.command.frame)
        var seen = Set<Int>()
        return frames.filter { $0 > 0 && seen.insert($0).inserted }
    }

    /// The packets and credit returns the watch waits for: only while a hit is open (`open`), not at
    /// every received packet of the capture (~80 instructions each for the two rules).
    static let onDemand: [SessionEvent.Kind] = [.aclReceived, .credits]

    mutating func radioTaken(adapter: UInt16, from command: LinkForensics.Mark, to answer: LinkForensics.Mark,
                             links: (Connection) -> Bool, _ context: DetectorContext) {
        let wasWaiting = !open.isEmpty
        for c in context.model.live.values.sorted(by: { $0.index < $1.index }) where c.adapter == adapter && links(c) {
            let waiting = c.buffers.unacknowledged.first
            let held = waiting.map { $0.time < command.time } ?? false && (c.buffers.lastCompleted?.time ?? .min) < command.time
            let heard = c.traffic.lastReceivedTime ?? .min
            let receiving = heard < command.time && (c.traffic.previousReceivedTime ?? .min) >= command.time - 1_000_000
            guard held || receiving, (hits[adapter]?.count ?? 0) < 500 else { continue }
            var before = LinkForensics.Mark(frame: c.traffic.lastReceivedFrame ?? 0, time: heard)
            if held, let w = waiting, w.time > before.time || !receiving { before = .init(frame: w.frame, time: w.time) }
            if let done = c.buffers.lastCompleted, done.time > before.time, done.time < command.time { before = done }
            hits[adapter, default: []].append(Hit(c: c, command: command, answer: answer, before: before, after: nil, held: held))
            open[c.index] = (adapter, hits[adapter, default: []].count - 1)
        }
        if !wasWaiting, !open.isEmpty { for k in Self.onDemand { context.demand(k, true) } }
    }

    /// A hit already measured (the link's stall while a voice link was open): kept as it is.
    mutating func record(adapter: UInt16, _ hit: Hit) {
        guard (hits[adapter]?.count ?? 0) < 500 else { return }
        hits[adapter, default: []].append(hit)
    }

    /// A packet from the peer or credits returned: the link's first sign after a hit.
    mutating func observe(_ event: SessionEvent, _ context: DetectorContext) {
        switch event {
        case let .aclReceived(c, frame, time), let .creditsReturned(c, frame, time, _, _):
            guard !open.isEmpty, let o = open.removeValue(forKey: c.index) else { return }
            hits[o.adapter]?[o.index].after = .init(frame: frame, time: time)
            if open.isEmpty { for k in Self.onDemand { context.demand(k, false) } }
        default:
            break
        }
    }
}

/// `radio.quality-report`: Android's Bluetooth Quality Report from the controller (HCI Vendor Specific
/// event, sub-event 0x58; `QualityReport` in BLEProtocol). The choppy-audio reports are the controller's own
/// statement that the user heard gaps: warnings. Approaching LSTO (nothing received for half the supervision
/// timeout) on a link that then survived is information: a weak link the app cannot mend (distance,
/// interference); when the link is lost after it, its `link.disconnect` is the warning and folds the reports
/// in. Monitoring and Connect Fail reports are information. One finding per (link, report
/// kind) with the count, the first and the weakest RSSI; a link lost right after its Approaching LSTO is told by
/// its `link.disconnect` (cause `link-quality`), which folds the reports in.
final class QualityReports: Detector {
    static let rule = RuleInfo(
        id: "radio.quality-report", severity: .warning, title: "Controller link-quality report",
        explanation: """
        Android phones' controllers report link quality to the host (Bluetooth Quality Report): Approaching LSTO \
        when nothing was received from the peer for half the link supervision timeout, A2DP / SCO / LE Audio choppy \
        when audio packets were late or lost, with RSSI, SNR, unused AFH channels, retransmission and NAK counts. \
        Weak RSSI (below −80 dBm) or many unused channels mean distance or interference: move the devices closer, \
        away from Wi-Fi at 2.4 GHz.
        """, actor: .none,
        doc: .init(
            severity: #"""
                warning (A2DP / SCO / LE Audio choppy) / info (Approaching LSTO on a link that survived, \#
                monitoring, connect fail)
                """#,
            firesWhen: #"""
                Android's Bluetooth Quality Report (HCI Vendor Specific event 0xFF, sub-event 0x58, laid out \#
                as AOSP's `BqrLinkQualityEvent`: `QualityReport` in BLEProtocol): the controller's own \#
                statement that nothing was received for half the link supervision timeout, or audio packets \#
                were late or lost, with RSSI, SNR, unused AFH channels, retransmissions and NAKs. Approaching \#
                LSTO is information while the link survives (a weak link the app cannot mend); a link lost \#
                after it is the `link.disconnect` warning, which folds the reports in. One finding per (link, \#
                report kind) with the count and the weakest RSSI; cause `link-quality` (RSSI ≤ −80 dBm: \#
                distance; ≥ 55 unused channels: interference)
                """#,
            evidence: "the reports"))
    let kinds: [SessionEvent.Kind] = [.controller]
    /// The link (its index, or the handle when the link is unknown) and the report kind.
    private struct Key: Hashable { var link: Int; var handle: UInt16; var kind: UInt8 }
    private var reports: [Key: (c: Connection?, first: Int, time: Int64, count: Int, weakest: QualityReport.LinkQuality, frames: [Int])] = [:]
    private var order: [Key] = []
    func retire(_ c: Connection, _ context: DetectorContext, _ findings: inout [Finding]) {
        let mine = order.filter { reports[$0]?.c === c }
        guard !mine.isEmpty else { return }
        for key in mine { report(key, &findings); reports[key] = nil }
        order.removeAll { reports[$0] == nil }
    }

    func observe(_ event: SessionEvent, _ context: DetectorContext, _ findings: inout [Finding]) {
        guard case let .qualityReport(c, _, frame, time, report) = event else { return }
        let key = Key(link: c?.index ?? 0, handle: c == nil ? report.handle : 0, kind: report.kind.rawValue)
        if var r = reports[key] {
            r.count += 1
            if report.rssi < r.weakest.rssi { r.weakest = report }
            if r.frames.count < 16 { r.frames.append(frame) }
            reports[key] = r
        } else if reports.count < 500 {
            reports[key] = (c, frame, time, 1, report, [frame])
            order.append(key)
        }
    }

    func finish(_ context: DetectorContext, _ findings: inout [Finding]) {
        for key in order { report(key, &findings) }
    }

    /// A link's reports told: at the end, or when its connection is summarised.
    private func report(_ key: Key, _ findings: inout [Finding]) {
        guard let r = reports[key] else { return }
        let w = r.weakest
        let severe: Set<QualityReport.Kind> = [.a2dpChoppy, .scoChoppy, .leAudioChoppy]
        let explained: Set<QualityReport.Kind> = severe.union([.approachingLSTO])
        let name: String
        switch w.kind {
        case .approachingLSTO:
            let timeout = r.c.map { Int64($0.link.timeoutUnits) * 10_000 }.flatMap { $0 > 0 ? $0 : nil } ?? Int64(w.lstoMillis * 1000)
            name = "nothing received for half the \(Format.duration(timeout)) supervision timeout (Approaching LSTO)"
        case .a2dpChoppy: name = "A2DP audio choppy"
        case .scoChoppy: name = "voice (SCO) choppy"
        case .leAudioChoppy: name = "LE Audio choppy"
        case .connectFail: name = "connection failed"
        default: name = "monitoring"
        }
        let link = r.c.map { "the link to \($0.peerLabel)" } ?? "handle 0x\(Format.hex(w.handle, 4))"
        let times = r.count > 1 ? " (\(r.count) reports)" : ""
        var f = Finding(rule: Self.rule.id, severity: severe.contains(w.kind) ? .warning : .info, connection: r.c, time: r.time, frames: r.frames,
                        message: "The controller reported \(name) on \(link)\(times): RSSI \(w.rssi) dBm, SNR \(w.snr), \(w.unusedAFHChannels) unused AFH channels, \(w.retransmissions) retransmissions, \(w.naks) NAKs")
        f.handle = w.handle
        if explained.contains(w.kind) {
            f.cause = FindingCause(.linkQuality, frames: [r.first], w.rssi <= -80
                ? "the controller measured RSSI \(w.rssi) dBm: the peer is far or shielded"
                : w.unusedAFHChannels >= 55 ? "the controller left \(w.unusedAFHChannels) of 79 channels unused: heavy interference" : "the controller's report (frame \(r.first)) gives RSSI \(w.rssi) dBm and \(w.unusedAFHChannels) unused channels")
        }
        findings.append(f)
    }
}
