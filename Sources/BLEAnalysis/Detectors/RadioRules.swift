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
        actor: .app)
    let kinds: [SessionEvent.Kind] = [.controller, .aclReceived, .credits]
    private struct Hit {
        var c: Connection
        var command: LinkForensics.Mark
        var answer: LinkForensics.Mark
        /// The link's last packet before the enable, and its first after the completion.
        var before: LinkForensics.Mark
        var after: LinkForensics.Mark?
        var held: Bool
    }
    private var hits: [UInt16: [Hit]] = [:]
    /// Hits waiting for the link's next packet, by connection index.
    private var open: [Int: (adapter: UInt16, index: Int)] = [:]

    func observe(_ event: SessionEvent, _ context: DetectorContext, _ findings: inout [Finding]) {
        switch event {
        case let .scanEnabled(adapter, command, answer) where answer.time - command.time >= micros("slow", context):
            for c in context.model.live.values.sorted(by: { $0.index < $1.index }) where c.adapter == adapter && c.isLE {
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
        case let .aclReceived(c, frame, time), let .creditsReturned(c, frame, time, _, _):
            guard !open.isEmpty, let o = open.removeValue(forKey: c.index) else { return }
            hits[o.adapter]?[o.index].after = .init(frame: frame, time: time)
        default:
            break
        }
    }

    func finish(_ context: DetectorContext, _ findings: inout [Finding]) {
        for (adapter, list) in hits.sorted(by: { $0.key < $1.key }) {
            _ = adapter
            guard let first = list.first else { continue }
            let gap: (Hit) -> Int64 = { ($0.after?.time ?? $0.answer.time) - $0.before.time }
            let worst = list.max { gap($0) < gap($1) } ?? first
            let slowest = list.map { $0.answer.time - $0.command.time }.max() ?? 0
            let links = Set(list.map(\.c.index)).count
            let what = first.held ? "host packets waited in the controller" : "the peer's data stopped"
            let message: FindingMessage = list.count == 1
                ? "The host enabled scanning while the link to \(peer: first.c) was busy: the enable took \(Format.duration(first.answer.time - first.command.time)) to complete and \(what) for \(Format.duration(gap(first)))"
                : "The host enabled scanning \(list.count) times while \(links == 1 ? "the link to \(first.c.peerLabel)" : "\(links) links") carried data: each enable took up to \(Format.duration(slowest)) to complete and the link stopped meanwhile, at worst for \(Format.duration(gap(worst))) (frame \(worst.command.frame))"
            var frames = [first.command.frame, first.answer.frame, first.before.frame] + (first.after.map { [$0.frame] } ?? [])
            frames += list.dropFirst().prefix(24).map(\.command.frame)
            var f = Finding(rule: Self.rule.id, severity: list.count >= Int(threshold("count", context)) ? .warning : .info, connection: first.c,
                            time: first.command.time, frames: frames.filter { $0 > 0 }, message: message)
            f.cause = FindingCause(.radioContention, frames: [first.command.frame, first.answer.frame],
                                   "LE Set Scan Enable at frame \(first.command.frame) completed only at frame \(first.answer.frame); the link's last packet before it is frame \(first.before.frame)"
                                   + (first.after.map { " and its next frame \($0.frame)" } ?? ""))
            findings.append(f)
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
        """, actor: .none)
    let kinds: [SessionEvent.Kind] = [.controller]
    /// The link (its index, or the handle when the link is unknown) and the report kind.
    private struct Key: Hashable { var link: Int; var handle: UInt16; var kind: UInt8 }
    private var reports: [Key: (c: Connection?, first: Int, time: Int64, count: Int, weakest: QualityReport.LinkQuality, frames: [Int])] = [:]
    private var order: [Key] = []

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
        for key in order {
            guard let r = reports[key] else { continue }
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
}
