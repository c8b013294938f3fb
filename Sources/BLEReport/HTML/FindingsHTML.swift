import BLEBytes
import BLEProtocol
import BLEAnalysis

/// The findings, grouped by rule (most severe rule first): a head row per rule with its count,
/// the connections it concerns and the rule's advice, then one row per finding (when, connection,
/// message, links to the decoded evidence frames; MTU findings get a picture of the value against
/// the MTU). Rules with many findings start folded (`folded`); a filter box and severity switches narrow
/// the table (script in `HTMLAssets.findingsScript`).
struct FindingsHTML {
    let findings: [Finding]
    let extras: ReportExtras
    let captureStart: Int64
    let layout: PageLayout

    /// Findings listed per rule; the rest are counted in a last row (the JSON report has them all).
    static let maxRows = 100

    /// A rule with more findings than this starts folded (its head row says how many): facts
    /// (info) above 5, problems above 20.
    static func folded(_ count: Int, _ severity: Severity) -> Bool { count > (severity >= .warning ? 20 : 5) }

    func render() -> String {
        guard !findings.isEmpty else { return "<p class=\"none\">No findings: nothing the rules look for happened in this capture.</p>\n" }
        let infos = Dictionary(uniqueKeysWithValues: Rules.infos.map { ($0.id, $0) })
        let shown = Set(extras.frames.map(\.number))
        var order: [String] = []
        var byRule: [String: [(number: Int, finding: Finding)]] = [:]
        for (i, f) in findings.enumerated() {
            if byRule[f.rule] == nil { order.append(f.rule) }
            byRule[f.rule, default: []].append((i + 1, f))
        }
        var s = "<div class=\"filter\"><input type=\"search\" id=\"finding-filter\" placeholder=\"Filter: rule, peer, words of the message\" aria-label=\"Filter findings\">"
        for sev in Severity.allCases.reversed() {
            let n = findings.filter { $0.severity == sev }.count
            s += "<label><input type=\"checkbox\" class=\"sev-switch\" value=\"\(sev.rawValue)\" checked\(n == 0 ? " disabled" : "")> "
            s += "\(sev == .info ? "info" : sev.rawValue + "s") (\(n))</label>"
        }
        s += "<span id=\"filter-count\" class=\"hint\"></span></div>\n"
        s += "<p class=\"hint\">\(findings.count) finding\(findings.count == 1 ? "" : "s") of \(order.count) rule\(order.count == 1 ? "" : "s"). "
        s += "Click a rule to fold or unfold its findings.</p>\n"
        s += "<table class=\"findings\">\n<thead><tr><th>#</th><th>Severity</th><th>When</th><th>Conn.</th>"
        s += "<th>What happened</th><th>Evidence</th></tr></thead>\n"
        for rule in order {
            let items = byRule[rule] ?? []
            let sev = items.map(\.finding.severity).max() ?? .info
            let folded = Self.folded(items.count, sev)
            s += "<tbody class=\"rule-group\(folded ? " folded" : "")\" id=\"rule-\(HTML.escape(rule))\" data-severity=\"\(sev.rawValue)\">\n"
            s += "<tr class=\"rule-head sev-\(sev.rawValue)\"><td colspan=\"6\"><button type=\"button\" class=\"fold-toggle\" aria-expanded=\"\(!folded)\">"
            s += "<span class=\"chevron\"></span><span class=\"badge badge-\(sev.rawValue)\">\(items.count)</span> "
            s += "<b>\(HTML.escape(infos[rule]?.title ?? rule))</b> <code>\(HTML.escape(rule))</code></button>"
            let connections = Set(items.compactMap(\.finding.connectionIndex)).sorted()
            if !connections.isEmpty {
                s += " <span class=\"hint\">connection\(connections.count == 1 ? "" : "s") " + HTML.escape(TimelineLane.ranges(connections)) + "</span>"
            }
            s += " <span class=\"hint matches\"></span>"
            if let advice = infos[rule]?.explanation {
                s += "<details><summary>What to do</summary><p>\(HTML.escape(advice))</p></details>"
            }
            s += "</td></tr>\n"
            for (n, f) in items.prefix(Self.maxRows) { s += row(n, f, shown: shown) }
            if items.count > Self.maxRows {
                s += "<tr class=\"more\"><td colspan=\"6\">… \(items.count - Self.maxRows) more findings of this rule, not listed "
                s += "(<code>bleanalyze FILE --json</code> has every one)</td></tr>\n"
            }
            s += "</tbody>\n"
        }
        return s + "</table>\n"
    }

    func row(_ n: Int, _ f: Finding, shown: Set<Int>) -> String {
        let sev = f.severity.rawValue
        var s = "<tr id=\"finding-\(n)\" class=\"finding sev-\(sev)\" data-severity=\"\(sev)\"><td class=\"num\">\(n)</td>"
        s += "<td><span class=\"badge badge-\(sev)\">\(sev)</span></td>"
        s += "<td class=\"when\" title=\"\(HTML.escape(TimeFormat.dateTime(f.time))) UTC\">\(HTML.escape(HTML.offset(f.time - captureStart, step: 1)))"
        s += "<div class=\"clock\">\(HTML.escape(TimeFormat.time(f.time)))</div></td>"
        s += "<td>" + (f.connectionIndex.map { "<a href=\"\(layout.href($0))\">\($0)</a>" + (f.connection.map { "<div class=\"clock\">handle \($0)</div>" } ?? "") } ?? "—") + "</td>"
        s += "<td><div class=\"message\">\(HTML.escape(f.text))</div>"
        if let cause = f.cause, let why = f.causeText {
            // The cause beside its consequence, its frames linked where this report decoded them.
            let frames = cause.frames.map { n in
                shown.contains(n) ? "<a href=\"#\(HTML.frameID(n))\">#\(n)</a>" : "<span title=\"not decoded in this report\">#\(n)</span>"
            }.joined(separator: " ")
            s += "<div class=\"why\"><b>why</b> <code>\(HTML.escape(cause.kind.rawValue))</code> \(HTML.escape(why)) <span class=\"cause-frames\">\(frames)</span></div>"
        }
        s += picture(f)
        s += "</td><td class=\"frames\">"
        s += f.frames.map { n in
            shown.contains(n) ? "<a href=\"#\(HTML.frameID(n))\">#\(n)</a>" : "<span title=\"not decoded in this report\">#\(n)</span>"
        }.joined(separator: " ")
        return s + "</td></tr>\n"
    }

    /// A value drawn byte by byte against the limit the MTU sets, for the MTU rules.
    func picture(_ f: Finding) -> String {
        guard f.rule.hasPrefix("mtu."), let key = f.frames.first(where: { extras.values[$0] != nil }),
              let v = extras.values[key] else { return "" }
        let limit: Int, caption: String
        let opcode = ATTOpcode(v.opcode)
        let isRead = opcode == .readResponse || opcode == .readBlobResponse
        let isWrite = opcode == .writeRequest || opcode == .writeCommand
        switch f.rule {
        case "mtu.truncated-read" where isRead:
            limit = v.length
            caption = "Read Response: \(v.length) bytes = ATT_MTU \(v.length + 1) − 1. The rest of the value was never read (no Read Blob)."
        case "mtu.truncated-notification" where !isRead && !isWrite:
            limit = v.length
            caption = "Notification: \(v.length) bytes = ATT_MTU \(v.length + 3) − 3. Anything longer was cut by the peer's stack."
        case "mtu.write-too-long" where isWrite:
            limit = max(v.mtu - 3, 0)
            caption = "Write: \(v.length) bytes, but ATT_MTU \(v.mtu) − 3 = \(limit) fit in one PDU."
        default:
            return ""
        }
        return Self.bytes(v, limit: limit, ghost: f.rule == "mtu.write-too-long" ? 0 : 8, caption: caption)
    }

    /// Boxes for each byte (printable ones as characters), a red line at the limit, and hatched
    /// "?" boxes for what lies beyond it.
    static func bytes(_ v: ReportExtras.CapturedValue, limit: Int, ghost: Int, caption: String) -> String {
        let cell = 17.0, gap = 2.0
        let shown = min(v.bytes.count, 64)
        let total = shown + ghost
        let width = Double(total) * (cell + gap) + 20
        var s = "<figure class=\"bytes\"><svg viewBox=\"0 0 \(HTML.num(width)) 46\" width=\"\(HTML.num(width))\" height=\"46\" xmlns=\"http://www.w3.org/2000/svg\">"
        for i in 0 ..< total {
            let x = Double(i) * (cell + gap) + 2
            if i < shown {
                let b = v.bytes[i]
                let over = i >= limit
                let ch = b >= 0x21 && b < 0x7F ? String(UnicodeScalar(b)) : Hex.pad(b, 2)
                s += "<rect x=\"\(HTML.num(x))\" y=\"8\" width=\"\(HTML.num(cell))\" height=\"24\" class=\"\(over ? "byte-over" : "byte")\"/>"
                s += "<text x=\"\(HTML.num(x + cell / 2))\" y=\"24\" text-anchor=\"middle\" class=\"\(ch.count == 1 ? "bytechar" : "bytehex")\">\(HTML.escape(ch))</text>"
            } else {
                s += "<rect x=\"\(HTML.num(x))\" y=\"8\" width=\"\(HTML.num(cell))\" height=\"24\" class=\"byte-missing\"/>"
                s += "<text x=\"\(HTML.num(x + cell / 2))\" y=\"24\" text-anchor=\"middle\" class=\"bytemissing\">?</text>"
            }
        }
        let lx = Double(min(limit, total)) * (cell + gap) + 1
        s += "<line x1=\"\(HTML.num(lx))\" x2=\"\(HTML.num(lx))\" y1=\"2\" y2=\"40\" class=\"mtu-limit\"/>"
        s += "<text x=\"\(HTML.num(lx + 3))\" y=\"44\" class=\"caplabel\">limit: \(limit) bytes</text>"
        s += "</svg><figcaption>\(HTML.escape(caption))</figcaption></figure>"
        return s
    }
}
