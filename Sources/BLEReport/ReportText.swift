import BLEBytes
import BLECapture
import BLEProtocol
import BLEAnalysis

/// The report a person reads (`bleanalyze FILE`): a summary readable in ten seconds, then one story
/// per connection, then the findings grouped by rule with advice and evidence frames.
public enum ReportText {
    public static func render(_ facts: CaptureFacts, model: SessionModel, findings: [Finding]) -> String {
        var s = ""
        let counts = Dictionary(grouping: findings, by: \.severity).mapValues(\.count)
        s += "bleanalyze report: \(facts.path)\n\n"
        var capture = "\(facts.info.format.rawValue), \(facts.info.datalinkName), \(facts.summary.frames) frames"
        if let a = facts.summary.firstTimestamp, let b = facts.summary.lastTimestamp {
            capture += ", \(TimeFormat.duration(b - a)) from \(TimeFormat.dateTime(a)) UTC"
        }
        if facts.statistics.malformed > 0 { capture += ", \(facts.statistics.malformed) malformed" }
        if facts.summary.truncated { capture += ", file cut inside a record" }
        s += "  Capture      " + capture + "\n"
        if let reason = facts.info.notDecodedReason { s += "  Decoding     " + reason + "\n" }
        let peers = Set(model.connections.compactMap(\.peerAddress)).count
        s += "  Devices      \(model.advertisers.all.count) advertiser\(model.advertisers.all.count == 1 ? "" : "s"), \(peers) connected peer\(peers == 1 ? "" : "s")\n"
        let open = model.connections.filter(\.isOpen).count
        s += "  Connections  \(model.connections.count)" + (open > 0 ? " (\(open) still open at the end)" : "")
            + (model.attempts.isEmpty ? "" : ", \(model.attempts.count) attempt\(model.attempts.count == 1 ? "" : "s")") + "\n"
        s += "  Findings     \(counts[.error] ?? 0) error\((counts[.error] ?? 0) == 1 ? "" : "s"), \(counts[.warning] ?? 0) warning\((counts[.warning] ?? 0) == 1 ? "" : "s"), \(counts[.info] ?? 0) info\n"
        for f in findings.filter({ $0.severity != .info }).prefix(5) {
            s += "               \(f.severity.rawValue.uppercased()) \(f.rule): \(f.message)\n"
        }
        s += "\n"
        if !model.connections.isEmpty {
            s += "Connections\n\n"
            s += SessionText.timeline(model).split(separator: "\n", omittingEmptySubsequences: false).map { $0.isEmpty ? "" : "  " + $0 }
                .joined(separator: "\n")
            s += "\n"
        }
        guard !findings.isEmpty else { return s + "No findings.\n" }
        s += "Findings\n"
        let infos = Dictionary(uniqueKeysWithValues: Rules.infos.map { ($0.id, $0) })
        var order: [String] = []
        for f in findings where !order.contains(f.rule) { order.append(f.rule) }
        for id in order {
            let group = findings.filter { $0.rule == id }
            let worst = group.map(\.severity).max() ?? .info
            s += "\n  \(worst.rawValue.uppercased())  \(id) — \(infos[id]?.title ?? "")\n"
            for f in group {
                var line = "    \(f.severity == worst ? "" : "(\(f.severity.rawValue)) ")"
                line += TimeFormat.time(f.time)
                if let i = f.connectionIndex { line += "  conn \(i)" + (f.connection.map { " (handle \($0))" } ?? "") }
                line += "  frames " + f.frames.map { "#\($0)" }.joined(separator: ", ")
                s += line + "\n      " + f.message + "\n"
            }
            if let explanation = infos[id]?.explanation { s += wrap(explanation, indent: "    What to do: ", width: 100) }
        }
        return s
    }

    /// Wraps a paragraph at `width` columns; the first line starts with `indent`.
    static func wrap(_ text: String, indent: String, width: Int) -> String {
        var out = "", line = indent
        let pad = String(repeating: " ", count: indent.count)
        for word in text.split(separator: " ") {
            if line.count + word.count + 1 > width, line.count > pad.count {
                out += line + "\n"
                line = pad
            }
            line += (line.hasSuffix(" ") ? "" : " ") + word
        }
        return out + line + "\n"
    }
}

/// The report as one JSON document (`bleanalyze FILE --json`). Interface other tools rely on:
/// a `findings` array whose items have `rule`, `severity`, `connection`, `time`, `frames`, `message`.
public enum ReportJSON {
    public static let schemaVersion = 1

    public static func render(_ facts: CaptureFacts, model: SessionModel, findings: [Finding]) -> String {
        var w = JSONWriter()
        w.beginObject()
        w.int("schemaVersion", schemaVersion)
        w.beginObject("tool"); w.string("name", "bleanalyze"); w.string("version", ToolVersion.current); w.endObject()
        w.raw("capture", InfoRenderer.json(facts))
        w.beginObject("summary")
        w.int("connections", model.connections.count)
        w.int("openConnections", model.connections.filter(\.isOpen).count)
        w.int("attempts", model.attempts.count)
        w.int("advertisers", model.advertisers.all.count)
        w.beginObject("findings")
        for sev in Severity.allCases.reversed() { w.int(sev.rawValue, findings.filter { $0.severity == sev }.count) }
        w.endObject()
        w.endObject()
        w.beginArray("connections")
        for c in model.connections { SessionJSON.connection(c, &w) }
        w.endArray()
        w.beginArray("findings")
        for f in findings { finding(f, &w) }
        w.endArray()
        w.endObject()
        return w.output
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
        w.string("message", f.message)
        w.endObject()
    }
}

/// The tool's version, shown by `--version` and written into JSON documents.
public enum ToolVersion {
    public static let current = "0.1.0"
}
