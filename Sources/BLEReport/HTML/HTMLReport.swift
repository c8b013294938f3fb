import BLEBytes
import BLECapture
import BLEAnalysis

/// The self-contained HTML report (`bleanalyze report FILE -o OUT.html`): one file with inline CSS,
/// SVG and a few lines of script, no network, no external fonts; deterministic (no generation
/// time, stable ordering), so a committed report can be compared byte for byte.
///
/// ```swift
/// let collector = EvidenceCollector(analyzer: analyzer)      // in the one analysis pass
/// let summary = capture.read { collector.consume($0) }
/// let findings = analyzer.finish()
/// let extras = collector.finish(findings: findings, captureEnd: summary.lastTimestamp)
/// let html = HTMLReport.render(facts, model: model, findings: findings, extras: extras)
/// ```
public enum HTMLReport {
    public static func render(_ facts: CaptureFacts, model: SessionModel, findings: [Finding], extras: ReportExtras) -> String {
        let start = facts.summary.firstTimestamp ?? findings.map(\.time).min() ?? 0
        let end = max(facts.summary.lastTimestamp ?? start, start)
        let name = facts.path.split(separator: "/").last.map(String.init) ?? facts.path
        var s = "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
        s += "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:\">\n"
        s += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
        s += "<meta name=\"generator\" content=\"bleanalyze \(ToolVersion.current)\">\n"
        s += "<title>bleanalyze: \(HTML.escape(name))</title>\n"
        s += "<script>\(HTMLAssets.errorRecorder)</script>\n<style>\(HTMLAssets.css)</style>\n</head>\n<body>\n"
        s += header(facts, name: name, model: model, findings: findings)
        s += "<section id=\"timeline-section\"><h2>Timeline</h2>\n"
        s += "<div class=\"toolbar\"><button type=\"button\" id=\"zoom-in\">+</button><button type=\"button\" id=\"zoom-out\">−</button>"
        s += "<button type=\"button\" id=\"zoom-fit\">Fit</button><span id=\"zoomlevel\"></span>"
        s += "<span class=\"hint\">Ctrl+wheel or double-click to zoom, drag to pan, Esc to fit. ⋯ marks a stretch with no events, folded. "
        s += "Click a flag for the finding, a dot for its frame.</span></div>\n"
        let layout = PageLayout(model: model, findings: findings)
        let timeline = TimelineSVG(model: model, findings: findings, extras: extras, start: start, end: end, layout: layout)
        s += "<div class=\"timeline-wrap\">" + timeline.render() + "</div>\n"
        if timeline.hiddenConnections > 0, layout.summarised {
            s += "<p class=\"hint\">\(timeline.hiddenConnections) more connections (to peers with fewer findings than the \(timeline.lanes.count) drawn) are not drawn; they are counted under Connections.</p>\n"
        } else if timeline.hiddenConnections > 0 {
            s += "<p class=\"hint\">\(timeline.hiddenConnections) more connections (to peers after the first \(TimelineSVG.maxLanes)) are not drawn; they are listed under Connections.</p>\n"
        }
        s += HTMLAssets.timelineLegend + "</section>\n"
        s += "<section id=\"findings\"><h2>Findings</h2>\n" + FindingsHTML(findings: findings, extras: extras, captureStart: start, layout: layout).render() + "</section>\n"
        s += "<section id=\"connections\"><h2>Connections</h2>\n"
        s += ConnectionsHTML(model: model, findings: findings, extras: extras, captureStart: start, captureEnd: end, layout: layout).render()
        s += attempts(model, start: start) + "</section>\n"
        s += "<section id=\"frames\"><h2>Evidence frames</h2>\n" + FramesHTML(findings: findings, extras: extras, layout: layout).render() + "</section>\n"
        s += "<section id=\"gatt\"><h2>GATT databases</h2>\n" + TablesHTML.gatt(model) + "</section>\n"
        s += "<section id=\"advertisers\"><h2>Advertisers</h2>\n" + TablesHTML.advertisers(model) + "</section>\n"
        s += "<section id=\"capture\"><h2>Capture</h2>\n" + TablesHTML.capture(facts) + "</section>\n"
        s += "<footer>bleanalyze \(ToolVersion.current) · self-contained report: no network, no external files</footer>\n"
        s += "<script>\(HTMLAssets.zoomScript)\(HTMLAssets.findingsScript)</script>\n</body></html>\n"
        return s
    }

    /// The ten-second summary: verdict, counts by severity, capture, span, devices, connections.
    static func header(_ facts: CaptureFacts, name: String, model: SessionModel, findings: [Finding]) -> String {
        let count = { (sev: Severity) in findings.filter { $0.severity == sev }.count }
        var s = "<header><h1>\(HTML.escape(name))</h1>\n<div class=\"verdict\">"
        for sev in Severity.allCases.reversed() {
            let n = count(sev)
            s += "<a href=\"#findings\" class=\"count count-\(sev.rawValue)\(n == 0 ? " zero" : "")\"><b>\(n)</b> "
            s += sev == .info ? "info" : sev.rawValue + (n == 1 ? "" : "s")
            s += "</a>"
        }
        let top = findings.filter { $0.severity >= .warning }.prefix(3)
        let titles = Dictionary(uniqueKeysWithValues: Rules.infos.map { ($0.id, $0.title) })
        if top.isEmpty {
            s += "<span class=\"headline ok\">No problems found</span>"
        } else {
            s += "<span class=\"headline\">" + top.map { f in
                "<a class=\"sev-\(f.severity.rawValue)\" href=\"#finding-\((findings.firstIndex { $0.rule == f.rule && $0.time == f.time && $0.frames == f.frames } ?? 0) + 1)\">"
                    + HTML.escape(titles[f.rule] ?? f.rule) + "</a>"
            }.joined(separator: " · ") + "</span>"
        }
        s += "</div>\n<dl class=\"summary\">"
        var capture = "\(facts.info.format.rawValue), \(facts.info.datalinkName), \(facts.summary.frames) frames"
        if facts.statistics.malformed > 0 { capture += ", \(facts.statistics.malformed) malformed" }
        if facts.summary.truncated { capture += ", file cut inside a record" }
        s += item("Capture", capture)
        if let a = facts.summary.firstTimestamp, let b = facts.summary.lastTimestamp {
            s += item("Span", TimeFormat.duration(b - a) + " from " + TimeFormat.dateTime(a) + " UTC")
        }
        if let reason = facts.info.notDecodedReason { s += item("Decoding", reason) }
        let peers = Set(model.connections.compactMap(\.peerAddress) + model.summarised.compactMap(\.peerAddress)).union(model.foldedRows.peers).count
        s += item("Devices", "\(model.advertisers.all.count) advertiser\(model.advertisers.all.count == 1 ? "" : "s"), \(peers) connected peer\(peers == 1 ? "" : "s")")
        let open = model.connections.filter(\.isOpen).count
        s += item("Connections", "\(model.connectionCount)" + (open > 0 ? " (\(open) still open at the end)" : "")
                  + ", \(model.attempts.count) attempt\(model.attempts.count == 1 ? "" : "s")")
        return s + "</dl></header>\n"
    }

    static func item(_ k: String, _ v: String) -> String { "<div><dt>\(HTML.escape(k))</dt><dd>\(HTML.escape(v))</dd></div>" }

    static func attempts(_ model: SessionModel, start: Int64) -> String {
        let failed = ReportText.failedAttempts(model)
        guard !failed.isEmpty else { return "" }
        // The background (OS auto-connect, BR/EDR pages) one line per kind with counts, as the text
        // report has it; every attempt below (LE attempts to one device among them), folded when there are many.
        let background = BackgroundActivity(model)
        var s = "<h3>Attempts that did not connect</h3>\n<ul class=\"background\">"
        for line in [background.autoConnectLine, background.pagesLine].compactMap({ $0 }) {
            s += "<li>" + HTML.escape(line) + "</li>"
        }
        if !background.direct.isEmpty {
            s += "<li>" + HTML.escape(ReportText.plural(background.direct.count, "LE attempt") + " to a single device, each listed below") + "</li>"
        }
        s += "</ul>\n<details\(failed.count <= 10 ? " open" : "")><summary>All \(failed.count) attempt\(failed.count == 1 ? "" : "s") that did not connect</summary>\n"
        s += "<table class=\"events\"><tbody>\n"
        for a in failed.prefix(500) {
            s += "<tr class=\"m-bad\"><td class=\"when\">\(HTML.escape(HTML.offset(a.time - start, step: 1)))</td><td class=\"frame\">#\(a.frame)</td><td>"
            s += HTML.escape("to \(a.peerAddress?.description ?? "filter accept list"): " + ReportText.describe(a.outcome)
                             + (a.endFrame.map { " (frame \($0))" } ?? "")) + "</td></tr>\n"
        }
        if failed.count > 500 { s += "<tr><td></td><td></td><td>… \(failed.count - 500) more</td></tr>\n" }
        return s + "</tbody></table></details>\n"
    }
}
