import BLEBytes
import BLEAnalysis

/// Per connection: the facts, the buffers/throughput chart and the story, one row per event.
struct ConnectionsHTML {
    let model: SessionModel
    let findings: [Finding]
    let extras: ReportExtras
    let captureStart: Int64
    let captureEnd: Int64

    let layout: PageLayout

    func render() -> String {
        guard !model.connections.isEmpty else { return "<p class=\"none\">No connections in this capture.</p>\n" }
        var s = summarisedNote() + (layout.summarised ? summary() : "")
        let numbered = findings.enumerated().map { (number: $0.offset + 1, finding: $0.element) }
        var mineOf: [Int: [(number: Int, finding: Finding)]] = [:]
        for n in numbered { if let c = n.finding.connectionIndex { mineOf[c, default: []].append(n) } }
        for c in layout.sections {
            let mine = mineOf[c.index] ?? []
            s += "<section class=\"connection\" id=\"conn-\(c.index)\">\n"
            s += "<h3>Connection \(c.index)" + (c.peerAddress.map { " — " + HTML.escape($0.description) } ?? "") + "</h3>\n"
            s += "<p class=\"facts\">" + facts(c).map { "<span>\(HTML.escape($0))</span>" }.joined(separator: " ") + "</p>\n"
            if !mine.isEmpty {
                s += "<p class=\"facts\">Findings: " + mine.map { n, f in
                    "<a class=\"badge badge-\(f.severity.rawValue)\" href=\"\(layout.findingHref(n))\">#\(n) \(HTML.escape(f.rule))</a>"
                }.joined(separator: " ") + "</p>\n"
            }
            // Charts for the first connections and every connection with a problem (bounded page size).
            guard layout.summarised || c.index <= Self.maxCharts || mine.contains(where: { $0.finding.severity >= .warning }) else {
                s += story(c) + "</section>\n"
                continue
            }
            s += ConnectionChartSVG(connection: c, findings: mine, extras: extras, captureEnd: captureEnd, layout: layout).render()
            s += "<p class=\"legend\"><i class=\"sw credits\"></i>buffers this link holds <i class=\"sw full\"></i>all buffers in use "
            s += "<i class=\"sw cap\"></i>controller buffers <i class=\"sw tx\"></i>ACL sent/s <i class=\"sw rx\"></i>ACL received/s "
            s += "<i class=\"sw values\"></i>notifications+indications/s <i class=\"sw writes\"></i>writes/s "
            s += "<i class=\"sw tx\"></i>/<i class=\"sw rx\"></i>values sent/received, bytes/s <i class=\"sw ceil\"></i>the link's ceiling</p>\n"
            s += story(c)
            s += "</section>\n"
        }
        return s
    }

    /// A long session's connections summarised during the pass (`SessionModel.summarised`).
    func summarisedNote() -> String {
        guard let last = model.summarised.last else { return "" }
        let first = model.foldedRows.count > 0 ? 1 : model.summarised[0].index
        return "<p class=\"hint\" id=\"summarised\">\(model.summarised.count + model.foldedRows.count) older finished connections (#\(first)–#\(last.index)) were summarised "
            + "during the pass (<code>--keep-connections</code>, docs/LIVE.md \"Memory\"): their findings are listed, their stories "
            + "and charts are not; <code>bleanalyze FILE --json</code> lists each as a row. What follows shows the \(model.connections.count) kept whole.</p>\n"
    }

    /// A summarised page's table of peer groups, worst first: every connection counted, those with
    /// a section below linked.
    func summary() -> String {
        let peers = layout.groups.count
        var s = ""
        s += "<p class=\"hint\">\(model.connections.count) connections to \(peers) peer\(peers == 1 ? "" : "s"): more than a page shows one by one "
        s += "(\(PageLayout.maxSections)). Every connection is counted below by peer, the peers with the most serious findings first; "
        s += "the \(layout.sections.count) connections with the most serious findings (then failures, then the shortest) follow in full. "
        s += "<code>bleanalyze FILE --json</code> has every connection.</p>\n"
        s += "<table class=\"peers\"><thead><tr><th>Peer</th><th>Connections</th><th>Findings</th><th>Failed</th>"
        s += "<th>Shortest</th><th>Longest</th></tr></thead><tbody>\n"
        for g in layout.groups.prefix(PageLayout.maxGroups) {
            let sev = g.worst.map { " class=\"sev-\($0.rawValue)\"" } ?? ""
            s += "<tr id=\"peer-\(g.number)\"\(sev)><td>\(HTML.escape(g.title))</td><td>\(g.connections.count): "
            let listed = g.connections.prefix(PageLayout.maxListed).map { c in
                layout.href(c.index) == "#conn-\(c.index)" ? "<a href=\"#conn-\(c.index)\">\(c.index)</a>" : "\(c.index)"
            }
            s += listed.joined(separator: ", ")
            if g.connections.count > PageLayout.maxListed { s += " … \(g.connections.count - PageLayout.maxListed) more" }
            s += "</td><td>" + Self.badges(g.findings) + "</td>"
            s += "<td>\(g.failed)</td><td>\(g.shortest.map(TimeFormat.duration) ?? "")</td><td>\(g.longest.map(TimeFormat.duration) ?? "")</td></tr>\n"
        }
        let rest = layout.groups.dropFirst(PageLayout.maxGroups)
        if !rest.isEmpty {
            var findings: [Severity: Int] = [:]
            for g in rest { for (sev, n) in g.findings { findings[sev, default: 0] += n } }
            s += "<tr id=\"peers-more\"><td>… \(rest.count) more peers, not listed</td><td>\(rest.reduce(0) { $0 + $1.connections.count })</td><td>" + Self.badges(findings) + "</td><td>\(rest.reduce(0) { $0 + $1.failed })</td><td></td><td></td></tr>\n"
        }
        return s + "</tbody></table>\n<h3>The \(layout.sections.count) connections with the most serious findings</h3>\n"
    }

    static let maxCharts = 30

    /// Findings counted by severity, most severe first.
    static func badges(_ findings: [Severity: Int]) -> String {
        Severity.allCases.reversed().compactMap { sev in
            findings[sev].map { "<span class=\"badge badge-\(sev.rawValue)\">\($0) \(sev.rawValue)</span>" }
        }.joined(separator: " ")
    }

    func facts(_ c: Connection) -> [String] {
        var f: [String] = ["handle \(c.handle)", c.isLE ? "LE" : "BR/EDR"]
        if c.role != .unknown { f.append(c.role.rawValue) }
        if c.adapter != 0 { f.append("hci\(c.adapter)") }
        if let start = c.startTime {
            let end = c.lifecycle.disconnectTime ?? c.traffic.lastDataTime ?? start
            f.append("lasted " + TimeFormat.duration(end - start) + (c.isOpen ? " (still open at the end)" : ""))
        }
        if c.link.intervalUnits > 0 { f.append("interval \(HTML.num(c.intervalMillis)) ms") }
        f.append(c.att.mtuKnown ? "ATT_MTU \(c.att.mtu)" : "ATT_MTU ≥ \(c.att.mtu) (set before the capture)")
        f.append("ACL \(c.traffic.aclSent) sent / \(c.traffic.aclReceived) received")
        f.append("\(c.traffic.bytesSent + c.traffic.bytesReceived) bytes")
        if c.att.requests > 0 { f.append("\(c.att.requests) ATT requests") }
        if let avg = c.att.averageLatency { f.append("ATT latency avg \(TimeFormat.duration(avg)), max \(TimeFormat.duration(c.att.latencyMax))") }
        if c.encryption.encrypted { f.append("encrypted") }
        if let r = c.lifecycle.disconnectReason { f.append("ended: \(r.name) (0x\(Hex.pad(r.rawValue, 2)))") }
        return f
    }

    func story(_ c: Connection) -> String {
        let shown = Set(extras.frames.map(\.number))
        var s = "<details class=\"story\"\(c.timeline.count <= 40 ? " open" : "")><summary>Story: \(SessionText.mergedEvents(c).count) events</summary>\n"
        s += "<table class=\"events\"><tbody>\n"
        for e in SessionText.mergedEvents(c) {
            let (cls, _) = TimelineSVG.markerStyle(e)
            let frame = shown.contains(e.frame) ? "<a href=\"#\(HTML.frameID(e.frame))\">#\(e.frame)</a>" : "#\(e.frame)"
            s += "<tr class=\"\(cls ?? "m-start")\"><td class=\"when\" title=\"\(HTML.escape(TimeFormat.time(e.time)))\">"
            s += HTML.escape(HTML.offset(e.time - captureStart, step: 1)) + "</td><td class=\"frame\">\(frame)</td>"
            s += "<td>\(HTML.escape(e.text))"
            if e.kind == .disconnected, e.frame == c.lifecycle.disconnectFrame, let end = c.endCause {
                s += "<div class=\"why\"><b>why</b> <code>\(HTML.escape(end.cause.kind.rawValue))</code> \(HTML.escape(end.cause.text.naming(c)))</div>"
            }
            s += "</td></tr>\n"
        }
        if c.droppedTimelineEvents > 0 { s += "<tr><td></td><td></td><td>… \(c.droppedTimelineEvents) more events not kept</td></tr>\n" }
        return s + "</tbody></table></details>\n"
    }
}

/// The decoded frames around the evidence, in runs of consecutive frames; evidence frames are
/// marked with the findings that cite them.
struct FramesHTML {
    let findings: [Finding]
    let extras: ReportExtras
    let layout: PageLayout

    func render() -> String {
        guard !extras.frames.isEmpty else { return "<p class=\"none\">No evidence frames to show.</p>\n" }
        var citedBy: [Int: [Int]] = [:]
        for (i, f) in findings.enumerated() {
            // A cause's frames cite their finding too: from the frame, the consequence it explains.
            for n in f.frames + (f.cause?.frames ?? []) where citedBy[n]?.last != i + 1 { citedBy[n, default: []].append(i + 1) }
        }
        var s = "<p class=\"hint\">Frames within ±\(extras.around) of each evidence frame, decoded as <code>bleanalyze packets</code> prints them "
        s += "(<code>&lt;</code> host → controller, <code>&gt;</code> controller → host).</p>\n"
        var i = 0
        let frames = extras.frames
        while i < frames.count {
            var j = i
            while j + 1 < frames.count && frames[j + 1].number == frames[j].number + 1 { j += 1 }
            let cites = Set(frames[i ... j].flatMap { citedBy[$0.number] ?? [] }).sorted()
            s += "<div class=\"run\"><h4>Frames \(frames[i].number)–\(frames[j].number)"
            if !cites.isEmpty {
                s += " <span class=\"cites\">evidence for " + cites.map { n in
                    "<a class=\"badge badge-\(findings[n - 1].severity.rawValue)\" href=\"\(layout.findingHref(n))\">#\(n) \(HTML.escape(findings[n - 1].rule))</a>"
                }.joined(separator: " ") + "</span>"
            }
            s += "</h4>\n"
            for f in frames[i ... j] {
                let cited = citedBy[f.number] ?? []
                s += "<pre id=\"\(HTML.frameID(f.number))\" class=\"frame\(cited.isEmpty ? "" : " evidence")\">"
                if !cited.isEmpty { s += "<span class=\"cite\">evidence for " + cited.map { "#\($0)" }.joined(separator: ", ") + "</span>" }
                s += HTML.escape(f.text) + "</pre>\n"
            }
            s += "</div>\n"
            i = j + 1
        }
        return s
    }
}
