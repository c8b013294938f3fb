import BLEBytes
import BLECapture
import BLEProtocol
import BLEAnalysis

/// The report a person reads (`bleanalyze FILE`): a summary readable in ten seconds (capture, span,
/// devices, connections, findings by severity), then one story per connection, then the findings
/// grouped by rule with advice and evidence frames. Colour and width come from `TerminalStyle`.
public enum ReportText {
    /// - Parameter all: every instance of every finding; by default each rule shows its first
    ///   `shownPerRule` instances and counts the rest (`bleanalyze FILE --all` prints them).
    public static func render(_ facts: CaptureFacts, model: SessionModel, findings: [Finding],
                              style: TerminalStyle = .plain, all: Bool = false) -> String {
        var s = summary(facts, model: model, findings: findings, style: style)
        if !model.connections.isEmpty || !model.attempts.isEmpty {
            s += style.paint("Connections", .bold) + "\n\n" + stories(model, style: style, all: all)
        }
        guard !findings.isEmpty else { return s + "No findings.\n" }
        return s + style.paint("Findings", .bold) + "\n" + findingGroups(findings, style: style, all: all)
    }

    /// Instances of one rule shown before "… N more" (without --all).
    static let shownPerRule = 3

    /// The top block: what the capture is and what went wrong, in a few lines.
    static func summary(_ facts: CaptureFacts, model: SessionModel, findings: [Finding], style: TerminalStyle) -> String {
        var s = style.paint("bleanalyze report: " + Terminal.clean(facts.path), .bold) + "\n\n"
        var capture = "\(facts.info.format.rawValue), \(facts.info.datalinkName), \(facts.summary.frames) frames"
        if let a = facts.summary.firstTimestamp, let b = facts.summary.lastTimestamp {
            if let jump = facts.statistics.clockJump {
                // The logger's clock was set during the capture: the traffic spans the rest.
                capture += ", \(TimeFormat.duration(b - a - jump.micros)) of traffic from \(TimeFormat.dateTime(a)) UTC"
                    + " (the clock jumps \(TimeFormat.duration(jump.micros)) at frame \(jump.frame))"
            } else {
                capture += ", \(TimeFormat.duration(b - a)) from \(TimeFormat.dateTime(a)) UTC"
            }
        }
        if facts.statistics.malformed > 0 { capture += ", \(facts.statistics.malformed) malformed" }
        for (indicator, n) in facts.statistics.h4Diagnostics.sorted(by: { $0.key < $1.key }) {
            capture += ", \(n) \(FrameKind.h4DiagnosticName(indicator) ?? "vendor diagnostic") (H4 0x\(Hex.pad(indicator, 2)))"
        }
        if facts.summary.truncated { capture += ", file cut inside a record" }
        s += row("Capture", capture, style)
        if let filtered = model.filteredExport { s += row("Contents", filtered.text, style) }
        if let reason = facts.info.notDecodedReason { s += row("Decoding", reason, style) }
        let peers = Set(model.connections.compactMap(\.peerAddress) + model.summarised.compactMap(\.peerAddress)).union(model.foldedRows.peers).count
        let advertisers = model.advertisers.all.count
        s += row("Devices", "\(plural(advertisers, "advertiser")), \(plural(peers, "connected peer"))", style)
        let open = model.connections.filter(\.isOpen).count
        s += row("Connections", "\(model.connectionCount)" + (open > 0 ? " (\(open) still open at the end)" : "")
            + (model.attempts.isEmpty ? "" : ", " + plural(model.attempts.count, "attempt")), style)
        let count = { (sev: Severity) in findings.filter { $0.severity == sev }.count }
        let parts = [(Severity.error, plural(count(.error), "error")), (.warning, plural(count(.warning), "warning")),
                     (.info, "\(count(.info)) info")]
        s += "  " + style.paint("Findings", .bold) + "     "
            + parts.map { count($0.0) > 0 ? style.paint($0.1, style.ink(for: $0.0)) : $0.1 }.joined(separator: ", ") + "\n"
        let pad = String(repeating: " ", count: 15)
        // One line per rule with a problem: how many, and the first one's message.
        var order: [String] = []
        for f in findings where f.severity != .info && !order.contains(f.rule) { order.append(f.rule) }
        for rule in order {
            let group = findings.filter { $0.rule == rule && $0.severity != .info }
            guard let f = group.first else { continue }
            let label = f.severity.rawValue.uppercased()
            let times = group.count > 1 ? " (\(group.count)×, first:)" : ""
            var headline = Terminal.clean(f.text)
            // Several of one rule with causes: what caused them, counted (the first's sentence is below).
            let kinds = group.compactMap(\.cause?.kind)
            if group.count > 1, kinds.count == group.count {
                var counts: [(FindingCause.Kind, Int)] = []
                for k in kinds { if let i = counts.firstIndex(where: { $0.0 == k }) { counts[i].1 += 1 } else { counts.append((k, 1)) } }
                headline = "\(group.count)× — why: " + counts.map { "\($0.1)× \($0.0.rawValue)" }.joined(separator: ", ")
            }
            let text = wrap(label + " " + f.rule + (kinds.count == group.count && group.count > 1 ? "" : times) + " " + headline, indent: pad, width: style.width)
            s += pad + style.paint(label, style.ink(for: f.severity)) + text.dropFirst(pad.count + label.count)
        }
        return s + "\n"
    }

    static func row(_ key: String, _ value: String, _ style: TerminalStyle) -> String {
        let pad = String(repeating: " ", count: 15)
        let body = wrap(Terminal.clean(value), indent: pad, width: style.width).dropFirst(pad.count)
        return "  " + style.paint(key, .bold) + String(repeating: " ", count: 13 - key.count) + body
    }

    static func plural(_ n: Int, _ word: String) -> String { "\(n) \(word)\(n == 1 ? "" : "s")" }

    /// A long session's summarised connections in one paragraph: how many, their span, how they
    /// ended, and the info findings counted rather than listed (`SummaryPolicy`).
    static func summarisedLine(_ model: SessionModel, style: TerminalStyle) -> String {
        let rows = model.summarised, folded = model.foldedRows
        guard let first = rows.first, let last = rows.last else { return "" }
        var ends: [String: Int] = [:]
        for (code, n) in folded.ends { ends[code == 0xFF ? "handle reused" : ReasonText.short(HCIStatus(rawValue: code)), default: 0] += n }
        for r in rows { ends[r.disconnectReason.map { ReasonText.short($0) } ?? "handle reused", default: 0] += 1 }
        let endText = ends.sorted { ($0.value, $1.key) > ($1.value, $0.key) }.map { "\($0.key) ×\($0.value)" }.joined(separator: ", ")
        let all = rows.count + folded.count
        var text = "\(plural(all, "finished connection")) (#\(folded.count > 0 ? 1 : first.index)–#\(last.index)) summarised, without their stories"
            + (folded.count > 0 ? " (JSON rows for the newest \(rows.count))" : "")
            + "; \(model.connections.count) kept whole. Ended: \(endText)."
        let counted = model.engine?.summarisedInfo ?? [:], problems = model.engine?.summarisedProblems ?? [:]
        if !problems.isEmpty {
            let listed = model.engine?.summaryPolicy.problemsPerRule ?? 0
            text += " Warnings and errors past the first \(listed) of a rule counted, not listed: " + problems.sorted { $0.key < $1.key }.map { "\($0.key) ×\($0.value)" }.joined(separator: ", ") + "."
        }
        if !counted.isEmpty {
            text += " Info findings counted, not listed: " + counted.sorted { $0.key < $1.key }.map { "\($0.key) ×\($0.value)" }.joined(separator: ", ") + "."
        }
        return wrap(Terminal.clean(text), indent: "  ", width: style.width)
    }

    /// One block per connection: header, then one line per event (wrapped under its text).
    static func stories(_ model: SessionModel, style: TerminalStyle, all: Bool = false) -> String {
        var s = summarisedLine(model, style: style)
        for c in model.connections {
            let header = wrap(Terminal.clean(SessionText.header(c)), indent: "  ", width: style.width, hanging: 4)
            s += style.paint(String(header.dropLast()), .bold) + "\n"
            let events = SessionText.mergedEvents(c)
            let shown = all ? events : keyEvents(events)
            for e in shown {
                let head = "    " + TimeFormat.time(e.time) + "  " + ("#" + String(e.frame)).padding(7)
                // A disconnect says why in a few words (the finding and `timeline` give the sentence).
                var line = e.text
                if e.kind == .disconnected, e.frame == c.lifecycle.disconnectFrame, let end = c.endCause, let reason = c.lifecycle.disconnectReason {
                    line = "disconnected (0x\(Hex.pad(reason.rawValue, 2)) \(ReasonText.short(reason))): \(end.cause.short)"
                }
                let text = wrap(Terminal.clean(line), indent: String(repeating: " ", count: head.count), width: style.width)
                s += style.paint(head, .grey) + paintEvent(String(text.dropFirst(head.count)), e, style)
            }
            for line in TransferText.lines(c, all: all) {   // the application data per direction (TransferText.swift)
                let head = "    transfer  "
                s += style.paint(head, .grey) + wrap(Terminal.clean(line), indent: String(repeating: " ", count: head.count), width: style.width).dropFirst(head.count)
            }
            if c.droppedTimelineEvents > 0 { s += "    … \(c.droppedTimelineEvents) more events not kept\n" }
            if shown.count < events.count {
                let more = events.count - shown.count
                s += style.paint("    … \(more) more event\(more == 1 ? "" : "s") (bleanalyze timeline FILE --conn \(c.index), or bleanalyze FILE --all)", .grey) + "\n"
            }
            s += "\n"
        }
        let lines = background(model, all: all)
        for (text, ink) in lines { s += style.paint(wrap(text, indent: "    ", width: style.width).dropLast().description, ink) + "\n" }
        return s + (lines.isEmpty ? "" : "\n")
    }

    /// The events a summary keeps (without --all): what went wrong, first; then the end and the
    /// set-up (MTU, discovery) — at most `keptEvents`, in time order.
    static func keyEvents(_ events: [TimelineEvent]) -> [TimelineEvent] {
        func rank(_ e: TimelineEvent) -> Int? {
            switch e.kind {
            case .connectionFailed, .subscribeFailed, .attError: 0
            case .security where e.fields.security?.failed == true: 0
            case .security where e.fields.security == .pairingDeclined || (e.fields.keySize ?? 16) < 16: 0
            case .disconnected: 1
            // BR/EDR: what protects the link (the link key made, the cipher and key size).
            case .security where e.fields.security == .linkKey || e.fields.cipher != nil: 2
            case .discovery, .requests: 2   // the table found; what the app did, one line per direction
            default: nil   // MTU, parameters, values: `timeline` and --all tell them
            }
        }
        let ranked = events.enumerated().compactMap { i, e in rank(e).map { (i, $0) } }
        var kept = Set(ranked.sorted { $0.1 != $1.1 ? $0.1 < $1.1 : $0.0 < $1.0 }.prefix(keptEvents).map(\.0))
        // A story with little to say about set-up and failures shows what the app did (writes,
        // reads, subscriptions, values), up to `minimumEvents` lines.
        if kept.count < minimumEvents {
            let appKinds: Set<TimelineEvent.Kind> = [.write, .read, .subscribe, .notifications, .indications]
            for (i, e) in events.enumerated() where kept.count < minimumEvents && appKinds.contains(e.kind) { kept.insert(i) }
        }
        return events.enumerated().filter { kept.contains($0.offset) }.map(\.element)
    }
    static let keptEvents = 4
    static let minimumEvents = 2

    /// Red for what failed, yellow for a link that ended other than by a user or host (0x13, 0x16).
    static func paintEvent(_ text: String, _ e: TimelineEvent, _ style: TerminalStyle) -> String {
        switch e.kind {
        case .connectionFailed, .subscribeFailed, .attError: style.paint(text, .red)
        case .security where e.fields.security?.failed == true: style.paint(text, .red)
        case .disconnected where e.fields.reason != 0x13 && e.fields.reason != 0x16: style.paint(text, .yellow)
        default: text
        }
    }

    /// The background activity (`BackgroundActivity`) as terminal lines: the first few LE attempts
    /// without --all, and a hint at --all for the rest.
    static func background(_ model: SessionModel, all: Bool) -> [(String, TerminalStyle.Ink)] {
        var lines: [(String, TerminalStyle.Ink)] = []
        let b = BackgroundActivity(model)
        if let line = b.autoConnectLine { lines.append(("  " + line, .grey)) }
        if let line = b.pagesLine { lines.append(("  " + line, .grey)) }
        let shown = all ? b.direct : Array(b.direct.prefix(5))
        for a in shown { lines.append(("  " + BackgroundActivity.line(a), a.outcome == .pending ? .red : .yellow)) }
        if b.direct.count > shown.count {
            lines.append(("  … \(b.direct.count - shown.count) more LE attempts that did not connect (--all lists them)", .grey))
        }
        return lines
    }

    static func shortOutcome(_ o: ConnectionAttempt.Outcome) -> String {
        switch o {
        case .pending: "still pending"
        case .connected: "connected"
        case let .failed(status): "failed (\(status.name))"
        case .cancelled: "cancelled by the host"
        case .superseded: "replaced"
        }
    }

    static func failedAttempts(_ model: SessionModel) -> [ConnectionAttempt] {
        model.attempts.filter { if case .connected = $0.outcome { false } else { true } }
    }

    static func describe(_ o: ConnectionAttempt.Outcome) -> String {
        switch o {
        case .pending: "never completed"
        case let .connected(i): "connected (connection \(i))"
        case let .failed(status): "failed: \(status.name) (0x\(Hex.pad(status.rawValue, 2)))"
        case .cancelled: "cancelled by the host"
        case .superseded: "replaced by a new attempt (no completion in the capture)"
        }
    }

    /// Findings grouped by rule (in the order the rules first appear), each with the rule's advice.
    static func findingGroups(_ findings: [Finding], style: TerminalStyle, all: Bool = false) -> String {
        var s = ""
        let infos = Dictionary(uniqueKeysWithValues: Rules.infos.map { ($0.id, $0) })
        var order: [String] = []
        for f in findings where !order.contains(f.rule) { order.append(f.rule) }
        if !all {
            // Information, one line for all its rules: the facts are in --all, the JSON and the HTML.
            let infoOnly = order.filter { id in findings.allSatisfy { $0.rule != id || $0.severity == .info } }
            order.removeAll { infoOnly.contains($0) }
            if !infoOnly.isEmpty {
                let counts = infoOnly.map { id in "\(id) ×\(findings.filter { $0.rule == id }.count)" }.joined(separator: ", ")
                s += "\n" + wrap("  Information: " + counts + " (--all prints them)", indent: "    ", width: style.width)
            }
        }
        for id in order {
            let group = findings.filter { $0.rule == id }
            let worst = group.map(\.severity).max() ?? .info
            s += "\n  " + style.paint(worst.rawValue.uppercased(), style.ink(for: worst)) + "  "
                + style.paint("\(id) — \(infos[id]?.title ?? "")", .bold) + "\n"
            let shown = all ? group : Array(group.prefix(shownPerRule))
            for f in shown {
                var line = "    \(f.severity == worst ? "" : "(\(f.severity.rawValue)) ")"
                line += TimeFormat.time(f.time)
                if let i = f.connectionIndex { line += "  conn \(i)" + (f.connection.map { " (handle \($0))" } ?? "") }
                let listed = f.frames.prefix(8).map { "#\($0)" }.joined(separator: ", ")
                line += "  frames " + listed + (f.frames.count > 8 ? ", … (\(f.frames.count) in all)" : "")
                s += style.paint(wrap("    " + line, indent: "      ", width: style.width).dropLast().description, .grey) + "\n"
                s += wrap(Terminal.clean(f.text), indent: "      ", width: style.width)
                if let why = f.causeText, let cause = f.cause {
                    let frames = cause.frames.prefix(4).map { "#\($0)" }.joined(separator: ", ")
                    s += wrap("why: " + Terminal.clean(why) + " [\(cause.kind.rawValue); " + frames + "]", indent: "      ", width: style.width)
                }
                if f.severity != .info, f.actor != .none {
                    s += style.paint(wrap("who acts: " + f.actor.phrase, indent: "      ", width: style.width).dropLast().description, .grey) + "\n"
                }
                for line in f.logContext { s += wrap("log: " + Terminal.clean(line), indent: "      ", width: style.width) }
            }
            if group.count > shown.count {
                let rest = group.dropFirst(shown.count)
                let frames = rest.prefix(12).compactMap { $0.frames.first }.map { "#\($0)" }.joined(separator: ", ")
                let bySeverity = Severity.allCases.reversed().compactMap { sev -> String? in
                    let n = rest.filter { $0.severity == sev }.count
                    return n == 0 ? nil : "\(n) \(sev == .info ? "info" : sev.rawValue + (n == 1 ? "" : "s"))"
                }
                let kinds = bySeverity.count == 1 ? "" : bySeverity.joined(separator: ", ") + "; "
                s += style.paint(wrap("… \(rest.count) more (\(kinds)frames \(frames)\(rest.count > 12 ? ", …" : "")); --all prints them",
                                      indent: "      ", width: style.width).dropLast().description, .grey) + "\n"
            }
            if let explanation = infos[id]?.explanation {
                let text = wrap(explanation, indent: "    What to do: ", width: style.width)
                s += "    " + style.paint("What to do:", .green) + text.dropFirst("    What to do:".count)
            }
        }
        return s
    }

    /// Wraps a paragraph at `width` columns; the first line starts with `indent`, the others are
    /// indented as far, or by `hanging` spaces when given. Words longer than a line stay whole, and a
    /// number never parts from its unit ("30 s", "1 h 23 min", "20 bytes").
    public static func wrap(_ text: String, indent: String, width: Int, hanging: Int? = nil) -> String {
        var out = "", line = indent
        let pad = String(repeating: " ", count: hanging ?? indent.count)
        for word in unbreakableWords(text) {
            if line.count + word.count + 1 > width, line.count > pad.count {
                out += line + "\n"
                line = pad
            }
            line += (line.hasSuffix(" ") || line.isEmpty ? "" : " ") + word
        }
        return out + line + "\n"
    }

    /// Units a number keeps on its line.
    static let units: Set<Substring> = ["days", "h", "min", "s", "ms", "µs", "bytes", "byte", "dBm", "dB", "kB", "MB", "frames", "%"]

    /// A unit, with the punctuation that may follow it ("30 s,", "(20 bytes)").
    static func isUnit(_ word: Substring) -> Bool {
        var w = word
        while let last = w.last, last == "," || last == ")" { w = w.dropLast() }
        return units.contains(w)
    }

    /// The words of `text`, with each number glued to the unit after it, and durations ("1 h 23 min") whole.
    static func unbreakableWords(_ text: String) -> [String] {
        func isNumber(_ w: Substring) -> Bool {
            let digits = w.drop { $0 == "(" || $0 == "~" }
            return !digits.isEmpty && digits.allSatisfy { $0.isNumber || $0 == "." }
        }
        var words: [String] = []
        var lastPiece: Substring = "", lastWasUnitAfterNumber = false
        for word in text.split(separator: " ") {
            let glue: Bool
            if isNumber(lastPiece) { glue = isUnit(word) }
            else if lastWasUnitAfterNumber && (lastPiece == "h" || lastPiece == "min") { glue = isNumber(word) }
            else { glue = false }
            if glue, let last = words.last { words[words.count - 1] = last + " " + word } else { words.append(String(word)) }
            lastWasUnitAfterNumber = glue && isUnit(word)
            lastPiece = word
        }
        return words
    }
}

/// Terminal helpers for renderers in this module.
enum Terminal {
    static func clean(_ s: String) -> String { TerminalStyle.clean(s) }
}

/// The report as one JSON document (`bleanalyze FILE --json`), described by docs/report-schema.json
/// and docs/REPORT.md. Interface other tools rely on: a `findings` array whose items have `rule`,
/// `severity`, `connection`, `time`, `frames`, `message`.
public enum ReportJSON {
    /// Raised when a field is renamed or removed, or its meaning changes (not when one is added).
    public static let schemaVersion = 1

    public static func render(_ facts: CaptureFacts, model: SessionModel, findings: [Finding]) -> String {
        String(decoding: utf8(facts, model: model, findings: findings), as: UTF8.self)
    }

    /// `render`'s document as UTF-8 bytes (what `bleanalyze FILE --json` writes to stdout).
    public static func utf8(_ facts: CaptureFacts, model: SessionModel, findings: [Finding]) -> [UInt8] {
        var out: [UInt8] = []
        write(facts, model: model, findings: findings) { out.append(contentsOf: $0) }
        return out
    }

    /// `utf8`'s document handed to `sink` in pieces of about 64 KiB (a connection at a time).
    public static func write(_ facts: CaptureFacts, model: SessionModel, findings: [Finding],
                             to sink: (UnsafeBufferPointer<UInt8>) -> Void) {
        let piece = 1 << 16
        var w = JSONWriter()
        w.beginObject()
        w.int("schemaVersion", schemaVersion)
        w.beginObject("tool"); w.string("name", "bleanalyze"); w.string("version", ToolVersion.current); w.endObject()
        w.raw("capture", InfoRenderer.json(facts))
        w.beginObject("summary")
        w.int("connections", model.connectionCount)
        w.int("openConnections", model.connections.filter(\.isOpen).count)
        w.int("attempts", model.attempts.count)
        w.int("advertisers", model.advertisers.all.count)
        w.beginObject("findings")
        for sev in Severity.allCases.reversed() { w.int(JSONKey(sev.rawValue), findings.filter { $0.severity == sev }.count) }
        w.endObject()
        w.endObject()
        w.beginArray("connections")
        // Summarised connections (a long session's oldest finished ones) in index order among the others.
        var rows = model.summarised.makeIterator(), row = rows.next()
        for c in model.connections {
            while let s = row, s.index < c.index { SessionJSON.summarised(s, &w); row = rows.next() }
            SessionJSON.connection(c, &w)
            w.drain(ifOver: piece, to: sink)
        }
        while let s = row { SessionJSON.summarised(s, &w); row = rows.next(); w.drain(ifOver: piece, to: sink) }
        w.endArray()
        w.beginArray("findings")
        for f in findings { finding(f, &w); w.drain(ifOver: piece, to: sink) }
        w.endArray()
        let counted = model.engine?.summarisedInfo ?? [:], problems = model.engine?.summarisedProblems ?? [:]
        if !model.summarised.isEmpty || model.foldedRows.count > 0 || !counted.isEmpty {
            w.beginObject("summarised")
            w.int("connections", model.summarised.count + model.foldedRows.count)
            w.int("rows", model.summarised.count)
            w.beginObject("infoFindings")
            for (rule, n) in counted.sorted(by: { $0.key < $1.key }) { w.int(JSONKey(rule), n) }
            w.endObject()
            w.beginObject("problemFindings")
            for (rule, n) in problems.sorted(by: { $0.key < $1.key }) { w.int(JSONKey(rule), n) }
            w.endObject()
            w.endObject()
        }
        w.endObject()
        w.drain(ifOver: 0, to: sink)
    }

    public static func finding(_ f: Finding, _ w: inout JSONWriter) {
        w.beginObject()
        w.string("rule", f.rule)
        w.string("severity", f.severity.rawValue)
        w.optional("connection", f.connection)
        w.optional("connectionIndex", f.connectionIndex)
        w.int("time", f.time)
        w.beginArray("frames")
        for n in f.frames { w.int(nil, n) }
        w.endArray()
        w.string("message", f.text)
        w.string("actor", f.actor.rawValue)
        if let peer = f.peer { w.string("peer", peer) }
        if let cause = f.cause, let text = f.causeText {
            w.beginObject("cause")
            w.string("kind", cause.kind.rawValue)
            w.beginArray("frames")
            for n in cause.frames { w.int(nil, n) }
            w.endArray()
            w.string("text", text)
            w.endObject()
        } else {
            w.null("cause")
        }
        if let handle = f.handle { w.int("handle", Int(handle)) }
        if let uuid = f.uuid { w.string("uuid", uuid.description) }
        if let status = f.status { w.int("status", Int(status)) }
        if !f.folded.isEmpty {
            // One entry per rule folded in: how many, and the key frame of each (where they are).
            w.beginArray("folded")
            for folded in f.folded.sorted(by: { $0.rule < $1.rule }) {
                w.beginObject(nil)
                w.string("rule", folded.rule)
                w.int("count", folded.count)
                w.beginArray("frames")
                for n in folded.frames { w.int(nil, n) }
                w.endArray()
                w.endObject()
            }
            w.endArray()
        }
        w.endObject()
    }
}

/// The tool's version, shown by `--version` and written into JSON documents and HTML reports.
public enum ToolVersion {
    public static let current = "0.1.0"
}
