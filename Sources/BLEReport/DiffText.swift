import BLEAnalysis
import BLEBytes
import BLEProtocol

/// `bleanalyze diff` as text at 80 columns: per peer, how it was matched, what changed in set-up and
/// parameters, the GATT table, traffic and answer times; then the findings and the verdict. Every
/// value names its frames: `#12 → #15` (before → after).
public enum DiffText {
    public static func render(_ d: CaptureComparison, before: String, after: String, width: Int = 80) -> String {
        var s = "before: \(before)\nafter:  \(after)\n"
        if d.peers.isEmpty { s += "\nNo connection in either capture: nothing to compare but the findings.\n" }
        for p in d.peers {
            s += "\n" + peerHeader(p) + "\n"
            guard p.before != nil, p.after != nil else { continue }
            for (i, c) in p.connections.enumerated() {
                let b = c.before.map { "conn \($0.index)" } ?? "—", a = c.after.map { "conn \($0.index)" } ?? "—"
                s += "  connection \(i + 1) (before \(b), after \(a))\n"
                guard c.before != nil, c.after != nil else { s += "    only in the \(c.before == nil ? "after" : "before") capture\n"; continue }
                let changed = c.changes.filter { $0.verdict != .same }
                for ch in changed { s += wrap(changeLine(ch), width: width) }
                if changed.isEmpty && !c.changes.isEmpty { s += "    set-up and parameters: the same\n" }
                for t in c.traffic { s += wrap(trafficLine(t), width: width) }
                for l in c.latencies { s += wrap(latencyLine(l), width: width) }
                if c.traffic.contains(where: { $0.rateVerdict == .worse }), !c.trafficReasons.isEmpty {
                    s += wrap("why slower: " + c.trafficReasons.map(reason).joined(separator: "; "), width: width)
                }
            }
            if let g = p.gatt {
                if g.isEmpty { s += "  GATT table: the same\n" }
                for ch in g { s += wrap("GATT " + gattLine(ch), width: width) }
            } else {
                s += "  GATT table: not compared (\(p.before?.gatt == nil ? "before" : "after") shows no discovery)\n"
            }
        }
        let changed = d.findings.filter { $0.kind != .same }
        s += "\nFindings: \(count(d.findings, .new)) new, \(count(d.findings, .gone)) gone, \(count(d.findings, .changed)) changed, "
            + "\(count(d.findings, .same)) the same\n"
        for f in changed { s += findingLines(f, width: width) }
        s += "\n" + verdict(d, width: width)
        return s
    }

    static func count(_ f: [CaptureComparison.FindingChange], _ k: CaptureComparison.FindingChange.Kind) -> Int { f.filter { $0.kind == k }.count }

    static func wrap(_ text: String, width: Int) -> String { ReportText.wrap(text, indent: "    ", width: width, hanging: 6) }

    static func peerHeader(_ p: CaptureComparison.PeerPair) -> String {
        switch (p.before, p.after) {
        case let (b?, a?):
            let how = matchWords(p.match)
            let names = b.label == a.label ? a.label : "\(b.label) → \(a.label)"
            return "Peer \(names) (matched by \(how))"
        case let (b?, nil): return "Peer \(b.label): only before (\(ReportText.plural(b.connections.count, "connection")))"
        case let (nil, a?): return "Peer \(a.label): only after (\(ReportText.plural(a.connections.count, "connection")))"
        default: return "Peer ?"
        }
    }

    static func matchWords(_ m: CaptureComparison.Match) -> String {
        switch m {
        case .identityAddress: "identity address"
        case .name: "name"
        case .address: "public or static address"
        case .gatt: "GATT table"
        case .manufacturer: "manufacturer data"
        case .onlyPeer: "being the only peer on each side"
        case .none: "nothing"
        }
    }

    static func frames(_ b: Int?, _ a: Int?) -> String {
        "[" + (b.map { "#\($0)" } ?? "—") + " → " + (a.map { "#\($0)" } ?? "—") + "]"
    }

    static func metricName(_ m: CaptureComparison.Metric) -> String {
        switch m {
        case .connect: "time to connect"
        case .discover: "time to discover"
        case .subscribe: "time to subscribe"
        case .encrypt: "time to encrypt"
        case .mtu: "ATT MTU"
        case .interval: "interval"
        case .latency: "peripheral latency"
        case .timeout: "supervision timeout"
        case .finalInterval: "interval at the end"
        case .finalLatency: "latency at the end"
        case .finalTimeout: "timeout at the end"
        case .phy: "PHY"
        case .dataLength: "data length (tx)"
        case .pairing: "pairing"
        case .secureConnections: "pairing kind"
        case .keySize: "key size"
        case .disconnect: "disconnect reason"
        }
    }

    static func value(_ m: CaptureComparison.Metric, _ v: CaptureComparison.Value?) -> String {
        guard let v else { return "none" }
        switch (m, v) {
        case let (_, .micros(x)): return TimeFormat.duration(x)
        case let (.interval, .number(x)), let (.finalInterval, .number(x)): return ms(Double(x) * 1.25)
        case let (.timeout, .number(x)), let (.finalTimeout, .number(x)): return "\(x * 10) ms"
        case let (.latency, .number(x)), let (.finalLatency, .number(x)): return ReportText.plural(x, "event")
        case let (.phy, .number(x)): return ["1": "LE 1M", "2": "LE 2M", "3": "LE Coded"]["\(x)"] ?? "PHY \(x)"
        case let (.dataLength, .number(x)): return "\(x) octets"
        case let (.keySize, .number(x)): return "\(x) octets"
        case let (.disconnect, .number(x)): return HCIStatus(rawValue: UInt8(truncatingIfNeeded: x)).name
        case let (_, .number(x)): return "\(x)"
        case let (_, .text(t)): return t
        }
    }

    static func ms(_ v: Double) -> String { v == v.rounded() ? "\(Int(v)) ms" : "\(v) ms" }

    static func changeLine(_ c: CaptureComparison.Change) -> String {
        let mark = c.verdict == .worse ? " (worse)" : c.verdict == .better ? " (better)" : ""
        return "\(metricName(c.metric)): \(value(c.metric, c.before)) → \(value(c.metric, c.after))\(mark) \(frames(c.beforeFrame, c.afterFrame))"
    }

    static func trafficLine(_ t: CaptureComparison.TrafficChange) -> String {
        func side(_ d: TransferDirection) -> String {
            var s = "\(d.pdus) PDUs, \(d.bytes) B"
            if let r = d.bytesPerSecond { s += ", \(TransferText.number(r)) B/s" }
            if let c = d.ceilingBytesPerSecond { s += " (link \(TransferText.number(c)))" }
            if let l = d.limitedBy.first { s += " by \(l.rawValue)" }
            return s
        }
        let mark = t.rateVerdict == .worse ? " (slower)" : t.rateVerdict == .better ? " (faster)" : ""
        let f = frames(t.before.pdus > 0 ? t.before.firstFrame : nil, t.after.pdus > 0 ? t.after.firstFrame : nil)
        return "\(t.sentByHost ? "sent" : "received"): \(side(t.before)) → \(side(t.after))\(mark) \(f)"
    }

    static func latencyLine(_ l: CaptureComparison.LatencyChange) -> String {
        let what: String
        switch l.kind {
        case .hostReads: what = "host's reads"
        case .hostWrites: what = "host's write completions"
        case .peerReads: what = "peer's reads"
        case .peerWrites: what = "peer's write completions"
        }
        func side(_ d: LatencyDistribution) -> String {
            guard let m = d.median, let p = d.p95 else { return "none" }
            return "\(d.count)× median \(TimeFormat.duration(m)), p95 \(TimeFormat.duration(p)), max \(TimeFormat.duration(d.max))"
        }
        var s = "\(what): \(side(l.before)) → \(side(l.after))"
        if l.slower { s += " (slower)" }
        s += " " + frames(l.before.count > 0 ? l.before.maxFrame : nil, l.after.count > 0 ? l.after.maxFrame : nil)
        if !l.because.isEmpty { s += "; why: " + l.because.map(reason).joined(separator: "; ") }
        return s
    }

    public static func reason(_ r: CaptureComparison.Reason) -> String {
        switch r {
        case let .interval(b, a): "interval \(ms(Double(b) * 1.25)) → \(ms(Double(a) * 1.25))"
        case let .latency(b, a): "peripheral latency \(b) → \(a)"
        case let .phy(b, a): "PHY \(b) → \(a)"
        case let .mtu(b, a): "ATT MTU \(b) → \(a)"
        case let .dataLength(b, a): "data length \(b) → \(a) octets"
        case let .writeRequests(b, a): "Write Requests (one round trip each) \(b) → \(a)"
        case let .limitedBy(b, a): "limited by \(b.isEmpty ? "nothing" : b.map(\.rawValue).joined(separator: ", ")) → \(a.map(\.rawValue).joined(separator: ", "))"
        }
    }

    static func props(_ p: UInt8) -> String {
        GATTNames.characteristicProperties.flagNames(UInt64(p)).names.joined(separator: ", ")
    }

    static func gattLine(_ g: CaptureComparison.GATTChange) -> String {
        switch g {
        case let .serviceAdded(u, f): "service added: \(u.gattLabel(.service)) [after #\(f)]"
        case let .serviceRemoved(u, f): "service removed: \(u.gattLabel(.service)) [before #\(f)]"
        case let .characteristicAdded(s, u, p, f): "characteristic added: \(u.gattLabel(.characteristic)) [\(props(p))] in \(s.gattLabel(.service)) [after #\(f)]"
        case let .characteristicRemoved(s, u, p, f): "characteristic removed: \(u.gattLabel(.characteristic)) [\(props(p))] from \(s.gattLabel(.service)) [before #\(f)]"
        case let .propertiesChanged(_, u, b, a, bf, af): "properties of \(u.gattLabel(.characteristic)): [\(props(b))] → [\(props(a))] \(frames(bf, af))"
        case let .descriptorAdded(_, c, u, f): "descriptor added: \(u.gattLabel(.descriptor)) of \(c.gattLabel(.characteristic)) [after #\(f)]"
        case let .descriptorRemoved(_, c, u, f): "descriptor removed: \(u.gattLabel(.descriptor)) of \(c.gattLabel(.characteristic)) [before #\(f)]"
        }
    }

    static func findingLines(_ f: CaptureComparison.FindingChange, width: Int) -> String {
        let sev = { (s: Severity?) in s?.rawValue ?? "—" }
        let attr = f.handle.map { " 0x" + Hex.pad($0, 4) } ?? ""
        var head = "\(f.kind.rawValue.uppercased()) \(f.rule) (\(f.peer)\(attr)): "
        switch f.kind {
        case .new: head += "\(f.after.count)× \(sev(f.afterSeverity))"
        case .gone: head += "was \(f.before.count)× \(sev(f.beforeSeverity))"
        default: head += "\(f.before.count)× \(sev(f.beforeSeverity)) → \(f.after.count)× \(sev(f.afterSeverity))"
        }
        let bf = f.before.first?.frames.first.map { "#\($0)" } ?? "—", af = f.after.first?.frames.first.map { "#\($0)" } ?? "—"
        head += " [\(bf) → \(af)]"
        var s = ReportText.wrap(head, indent: "  ", width: width, hanging: 6)
        if let x = (f.after.first ?? f.before.first) {
            s += ReportText.wrap(Terminal.clean(x.text), indent: "      ", width: width)
        }
        let causes = { (fs: [Finding]) in Set(fs.compactMap { $0.cause?.kind.rawValue }).sorted().joined(separator: ", ") }
        if f.kind == .changed, causes(f.before) != causes(f.after) {
            s += ReportText.wrap("cause: \(causes(f.before)) → \(causes(f.after))", indent: "      ", width: width)
        } else if let x = f.after.first ?? f.before.first, let why = x.causeText {
            s += ReportText.wrap("why: " + Terminal.clean(why), indent: "      ", width: width)
        }
        return s
    }

    public static func verdict(_ d: CaptureComparison, width: Int = 80) -> String {
        guard !d.regressions.isEmpty else { return "No regression.\n" }
        var s = "Regressions: \(d.regressions.count)\n"
        for r in d.regressions {
            let line: String
            switch r {
            case let .newFinding(f): line = "new \(f.afterSeverity?.rawValue ?? "") \(f.rule) (\(f.peer))"
            case let .findingGrew(f):
                line = "\(f.rule) (\(f.peer)): \(f.before.count)× \(f.beforeSeverity?.rawValue ?? "") → \(f.after.count)× \(f.afterSeverity?.rawValue ?? "")"
            case let .slower(peer, conn, l):
                line = "slower \(l.kind.rawValue) on conn \(conn) (\(peer)): median \(TimeFormat.duration(l.before.median ?? 0)) → \(TimeFormat.duration(l.after.median ?? 0))"
            case let .gattChanged(peer, g): line = "GATT (\(peer)): \(gattLine(g))"
            }
            s += ReportText.wrap(line, indent: "  ", width: width, hanging: 4)
        }
        return s
    }
}

/// `bleanalyze diff --html`: one self-contained page, the text comparison with each section as a
/// heading, regressions coloured.
public enum DiffHTML {
    public static func render(_ d: CaptureComparison, before: String, after: String) -> String {
        let text = DiffText.render(d, before: before, after: after, width: 100)
        var body = ""
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            let l = HTML.escape(String(line))
            if line.hasPrefix("Peer ") || line.hasPrefix("Findings:") || line.hasPrefix("Regressions:") || line.hasPrefix("No regression") {
                body += "</pre><h2>\(l)</h2><pre>"
            } else if line.contains("(worse)") || line.contains("(slower)") || line.hasPrefix("  NEW ") {
                body += "<span class=\"worse\">\(l)</span>\n"
            } else if line.contains("(better)") || line.contains("(faster)") || line.hasPrefix("  GONE ") {
                body += "<span class=\"better\">\(l)</span>\n"
            } else {
                body += l + "\n"
            }
        }
        return """
            <!DOCTYPE html>
            <html lang="en"><head><meta charset="utf-8"><title>bleanalyze diff</title>
            <style>body{font-family:system-ui,sans-serif;margin:2em;max-width:70em}pre{font-size:13px;white-space:pre-wrap}\
            h2{font-size:16px;margin:1.2em 0 0}.worse{color:#b00020}.better{color:#1b7d2b}</style></head>
            <body><h1>Before and after</h1><pre>\(body)</pre></body></html>

            """
    }
}
