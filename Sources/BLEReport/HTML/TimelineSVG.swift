import BLEBytes
import BLEProtocol
import BLEAnalysis

/// The swimlane timeline: one lane for the host's radio (scanning, advertising, connection
/// attempts) and one per connection (lifetime bar with traffic inside, buffers in use below,
/// markers for MTU, discovery, subscriptions, errors and the disconnect reason), findings as
/// coloured bands and flags on their lane. Elements positioned in time carry `data-x` so the
/// inline script can zoom and pan without distorting text.
struct TimelineSVG {
    let model: SessionModel
    let findings: [Finding]
    let extras: ReportExtras
    let start: Int64
    let end: Int64

    static let width = 1320.0
    static let left = 196.0
    static let right = 16.0
    static let axisHeight = 34.0
    static let radioLaneHeight = 62.0
    static let laneHeight = 70.0
    /// Connections drawn as lanes; later ones are listed below the picture.
    static let maxLanes = 60
    static var plotWidth: Double { width - left - right }

    var lanes: [Connection] { Array(model.connections.prefix(Self.maxLanes)) }

    func render() -> String {
        let axis = makeAxis()
        let height = Self.axisHeight + Self.radioLaneHeight + Double(lanes.count) * Self.laneHeight + 6
        var out = SVGOut()
        out += "<svg id=\"timeline\" class=\"timeline\" viewBox=\"0 0 \(HTML.num(Self.width)) \(HTML.num(height))\" "
        out += "data-left=\"\(HTML.num(Self.left))\" data-plot=\"\(HTML.num(Self.plotWidth))\" role=\"img\" "
        out += "aria-label=\"Timeline: \(lanes.count + 1) lanes\" xmlns=\"http://www.w3.org/2000/svg\">\n"
        out += "<defs><clipPath id=\"plot\"><rect x=\"\(HTML.num(Self.left))\" y=\"0\" width=\"\(HTML.num(Self.plotWidth))\" height=\"\(HTML.num(height))\"/></clipPath>"
        out += "<pattern id=\"hatch\" width=\"6\" height=\"6\" patternUnits=\"userSpaceOnUse\" patternTransform=\"rotate(45)\">"
        out += "<rect width=\"6\" height=\"6\" fill=\"#eef2f6\"/><line x1=\"0\" y1=\"0\" x2=\"0\" y2=\"6\" stroke=\"#9aa7b4\" stroke-width=\"2\"/></pattern></defs>\n"
        laneBackgrounds(&out, height: height)
        out += "<g clip-path=\"url(#plot)\">\n"
        ticks(axis, &out, height: height)
        findingBands(axis, &out)
        radioLane(axis, &out, y0: Self.axisHeight)
        for (i, c) in lanes.enumerated() {
            connectionLane(c, axis, &out, y0: Self.axisHeight + Self.radioLaneHeight + Double(i) * Self.laneHeight)
        }
        folds(axis, &out, height: height)
        findingFlags(axis, &out)
        out += "</g>\n</svg>\n"
        return out.text
    }

    // MARK: Axis

    func makeAxis() -> TimeAxis {
        var keys: [Int64] = []
        for c in model.connections {
            keys += [c.attemptTime, c.completeTime, c.firstDataTime, c.lastDataTime, c.disconnectTime].compactMap { $0 }
            keys += c.timeline.map(\.time)
            if let t = extras.traffic[c.index] { keys += t.sent.times + t.received.times }
        }
        for a in model.attempts { keys += [a.time, a.endTime].compactMap { $0 } }
        for r in extras.radio { keys += [r.start, r.end] }
        keys += extras.advertisingReports.times
        var guarded: [(Int64, Int64)] = []
        for f in findings {
            let span = extras.span(f)
            keys += [span.0, span.1]
            // A long evidence span (a stall, an idle link) is the problem itself: never folded.
            if f.severity >= .warning, (span.1 - span.0) * 50 >= end - start { guarded.append(span) }
        }
        // An attempt that never completed: its wait is the problem.
        for a in model.attempts where a.outcome == .pending { guarded.append((a.time, a.endTime ?? end)) }
        return TimeAxis(start: start, end: end, keyTimes: keys, protected: guarded, x0: Self.left, width: Self.plotWidth)
    }

    func ticks(_ axis: TimeAxis, _ out: inout SVGOut, height: Double) {
        for (t, step) in axis.ticks() {
            let x = axis.x(t)
            guard x < Self.width - Self.right - 36 else { continue }
            out.at(x, 0, "<line x1=\"0\" y1=\"\(HTML.num(Self.axisHeight - 6))\" x2=\"0\" y2=\"\(HTML.num(height))\" class=\"grid\"/>"
                + "<text x=\"3\" y=\"\(HTML.num(Self.axisHeight - 10))\" class=\"tick\">\(HTML.escape(HTML.offset(t - start, step: step)))</text>")
        }
    }

    func folds(_ axis: TimeAxis, _ out: inout SVGOut, height: Double) {
        var labels = LabelRow()
        for s in axis.foldedSegments {
            let text = Self.duration(s.t1 - s.t0)
            out.span(s.x0 + 3, s.x1 - 3, Self.axisHeight - 4, height - Self.axisHeight + 4, cls: "fold",
                     title: text + " without events, folded")
            _ = labels.place(s.x0 + 1, "⋯" + text, &out, y: 12, cls: "foldlabel", left: false)
        }
    }

    /// `TimeFormat.duration`, with microseconds below a millisecond.
    static func duration(_ micros: Int64) -> String { micros < 1000 ? "\(micros) µs" : TimeFormat.duration(micros) }

    // MARK: Lanes

    func laneBackgrounds(_ out: inout SVGOut, height: Double) {
        out += "<rect x=\"0\" y=\"\(HTML.num(Self.axisHeight))\" width=\"\(HTML.num(Self.width))\" height=\"\(HTML.num(Self.radioLaneHeight))\" class=\"lane lane-radio\" data-lane=\"radio\"/>\n"
        out += label(y0: Self.axisHeight, title: "Host radio", lines: ["scanning · advertising", "connection attempts"], href: nil)
        for (i, c) in lanes.enumerated() {
            let y0 = Self.axisHeight + Self.radioLaneHeight + Double(i) * Self.laneHeight
            out += "<rect x=\"0\" y=\"\(HTML.num(y0))\" width=\"\(HTML.num(Self.width))\" height=\"\(HTML.num(Self.laneHeight))\" "
                + "class=\"lane \(i % 2 == 0 ? "lane-even" : "lane-odd")\" data-lane=\"\(c.index)\"/>\n"
            var sub = "handle \(c.handle) · \(c.isLE ? "LE" : "BR/EDR")"
            if c.role != .unknown { sub += " · " + c.role.rawValue }
            if c.adapter != 0 { sub += " · hci\(c.adapter)" }
            out += label(y0: y0, title: "Connection \(c.index)", lines: [sub, c.peerAddress?.description ?? "peer unknown"],
                         href: "#conn-\(c.index)")
        }
        out += "<line x1=\"\(HTML.num(Self.left))\" y1=\"0\" x2=\"\(HTML.num(Self.left))\" y2=\"\(HTML.num(height))\" class=\"divider\"/>\n"
    }

    func label(y0: Double, title: String, lines: [String], href: String?) -> String {
        var s = href.map { "<a href=\"\(HTML.escape($0))\">" } ?? ""
        s += "<text x=\"10\" y=\"\(HTML.num(y0 + 20))\" class=\"lanetitle\">\(HTML.escape(title))</text>"
        for (i, l) in lines.enumerated() {
            s += "<text x=\"10\" y=\"\(HTML.num(y0 + 35 + Double(i) * 13))\" class=\"lanesub\">\(HTML.escape(l))</text>"
        }
        return s + (href == nil ? "" : "</a>") + "\n"
    }

    func radioLane(_ axis: TimeAxis, _ out: inout SVGOut, y0: Double) {
        for r in extras.radio {
            let y = r.kind == .scanning ? y0 + 18 : y0 + 28
            out.span(axis.x(r.start), axis.x(r.end), y, 8, cls: "\(r.kind.rawValue)", min: 2,
                     title: "\(r.kind.rawValue) from frame \(r.frame), \(TimeFormat.duration(r.end - r.start))")
        }
        // Advertising reports heard, as ticks (each stands for `stride` reports).
        var lastX = -10.0
        for t in extras.advertisingReports.times {
            let x = axis.x(t)
            if x - lastX < 1.5 { continue }
            lastX = x
            out.at(x, y0 + 17, "<line x1=\"0\" y1=\"0\" x2=\"0\" y2=\"10\" class=\"advtick\"/>")
        }
        var labels = LabelRow()
        if let first = extras.radio.first(where: { $0.kind == .scanning }) {
            _ = labels.place(axis.x(first.start) + 4, "scanning", &out, y: y0 + 25, cls: "radiolabel")
        }
        if let first = extras.radio.first(where: { $0.kind == .advertising }) {
            var adv = LabelRow()
            _ = adv.place(axis.x(first.start) + 4, "advertising", &out, y: y0 + 35, cls: "radiolabel")
        }
        var failures = LabelRow()
        for a in model.attempts {
            let endTime = a.endTime ?? end
            let x0 = axis.x(a.time), x1 = axis.x(endTime)
            let (cls, text): (String, String?)
            switch a.outcome {
            case .connected: (cls, text) = ("attempt-ok", nil)
            case let .failed(status): (cls, text) = ("attempt-failed", status.name)
            case .cancelled: (cls, text) = ("attempt-cancelled", nil)
            case .pending: (cls, text) = ("attempt-pending", "never completed")
            case .superseded: (cls, text) = ("attempt-superseded", nil)
            }
            let who = a.peerAddress?.description ?? "filter accept list"
            out.span(x0, x1, y0 + 42, 10, cls: "\(cls)", min: 3,
                     title: "Connection attempt to \(who) (frame \(a.frame)): " + ReportText.describe(a.outcome))
            if let text {
                out.at(x1, y0 + 47, "<text class=\"xmark \(cls)\" text-anchor=\"middle\" dy=\"4\">✕</text>")
                _ = failures.place(x1 + 7, text, &out, y: y0 + 57, cls: "faillabel")
            }
        }
    }

    func connectionLane(_ c: Connection, _ axis: TimeAxis, _ out: inout SVGOut, y0: Double) {
        let barY = y0 + 34, barH = 16.0
        let begin = c.completeTime ?? c.firstDataTime ?? c.startTime ?? start
        let finish = c.disconnectTime ?? end
        if let a = c.attemptTime, let done = c.completeTime, done > a {
            out.span(axis.x(a), axis.x(done), barY + 4, barH - 8, cls: "connecting", title: "connecting: \(TimeFormat.duration(done - a))")
        }
        out.span(axis.x(begin), axis.x(finish), barY, barH, cls: c.isOpen ? "bar open" : "bar", min: 3,
                 title: SessionText.header(c))
        if c.inferred { out.at(axis.x(begin), barY + 12, "<text class=\"marklabel\" text-anchor=\"end\" dx=\"-3\">⋯</text>") }
        activity(c, axis, &out, barY: barY, barH: barH)
        buffers(c, axis, &out, y: barY + barH + 2)
        var labels = LabelRow()
        // Labels by importance (failures, then milestones, then data, then the disconnect), so the
        // important ones win the space; failures are drawn last, so their dots are on top.
        let rank = ["m-bad": 0, "m-ok": 1, "m-discovery": 1, "m-mtu": 1, "m-data": 2, "m-end": 3]
        let byRank = c.timeline.enumerated().sorted { (rank[Self.markerStyle($0.1).0 ?? ""] ?? 4, $0.0) < (rank[Self.markerStyle($1.1).0 ?? ""] ?? 4, $1.0) }
        for (_, e) in byRank { marker(e, axis, &out, y0: y0, barY: barY, labels: &labels, draw: false) }
        for (_, e) in byRank.reversed() { marker(e, axis, &out, y0: y0, barY: barY, labels: &labels, draw: true) }
        if c.isOpen {
            out.at(axis.x(finish), barY + 12, "<text class=\"marklabel\" text-anchor=\"end\" dx=\"-4\">still open ▸</text>")
        }
    }

    /// ACL packets (both directions) binned into 2-pixel columns, height by the square root of the count.
    func activity(_ c: Connection, _ axis: TimeAxis, _ out: inout SVGOut, barY: Double, barH: Double) {
        guard let t = extras.traffic[c.index] else { return }
        var bins: [Int: Int] = [:]
        for (samples, weight) in [(t.sent, t.sent.stride), (t.received, t.received.stride)] {
            for time in samples.times { bins[Int(axis.x(time) / 2), default: 0] += weight }
        }
        let peak = Double(bins.values.max() ?? 0)
        guard peak > 0 else { return }
        for (bin, n) in bins.sorted(by: { $0.key < $1.key }) {
            let h = max(3, (barH - 2) * (Double(n) / peak).squareRoot())
            out.span(Double(bin) * 2, Double(bin) * 2 + 2, barY + barH - 1 - h, h, cls: "traffic", min: 1.5,
                     title: "\(n) ACL packet\(n == 1 ? "" : "s")")
        }
    }

    func buffers(_ c: Connection, _ axis: TimeAxis, _ out: inout SVGOut, y: Double) {
        guard let series = extras.buffers[c.index], series.peak > 0 else { return }
        let full = Double(max(series.capacity ?? series.peak, 1))
        let bucket = Double(series.end - series.start) / Double(BufferSeries.count)
        var i = 0
        while i < series.link.count {
            let v = series.link[i]
            var j = i
            while j + 1 < series.link.count && series.link[j + 1] == v { j += 1 }
            if v > 0 {
                let t0 = series.start + Int64(Double(i) * bucket), t1 = series.start + Int64(Double(j + 1) * bucket)
                let atCapacity = series.capacity.map { v >= $0 } ?? false
                let h = 11 * min(Double(v) / full, 1)
                out.span(axis.x(t0), axis.x(t1), y + 11 - h, h, cls: atCapacity ? "credits-full" : "credits", min: 1,
                         title: "\(v) of \(series.capacity.map(String.init) ?? "?") controller buffers in use")
            }
            i = j + 1
        }
    }

    /// One story event: a dot on the bar, a short label above it when there is room.
    func marker(_ e: TimelineEvent, _ axis: TimeAxis, _ out: inout SVGOut, y0: Double, barY: Double, labels: inout LabelRow, draw: Bool) {
        let (cls, label) = Self.markerStyle(e)
        guard let cls else { return }
        let x = axis.x(e.time)
        if !draw {
            if let label { _ = labels.place(x - 4, label, &out, y: y0 + 28, cls: "marklabel \(cls)") }
            return
        }
        let link = extras.frames.contains { $0.number == e.frame } ? "#" + HTML.frameID(e.frame) : nil
        var g = link.map { "<a href=\"\($0)\">" } ?? ""
        let tip = "<title>#\(e.frame) \(HTML.escape(TimeFormat.time(e.time)))  \(HTML.escape(e.text))</title>"
        if cls == "m-bad" {
            g += "<circle r=\"7\" class=\"mark m-bad\">\(tip)</circle><text class=\"bang\" text-anchor=\"middle\" dy=\"4\">!</text>"
        } else {
            g += "<circle r=\"4.5\" class=\"mark \(cls)\">\(tip)</circle>"
        }
        g += link == nil ? "" : "</a>"
        out.at(x, barY + 8, g)
    }

    /// Class and short label per event kind; nil class: not drawn.
    static func markerStyle(_ e: TimelineEvent) -> (String?, String?) {
        switch e.kind {
        case .mtu:
            let mtu = e.text.split(separator: " ").last.map(String.init) ?? ""
            return ("m-mtu", e.text.contains("ATT_MTU") ? "MTU " + mtu : "MTU")
        case .discovery: return ("m-discovery", "discovery")
        case .subscribe: return ("m-ok", "subscribed")
        case .subscribeFailed: return ("m-bad", "subscribe failed")
        case .attError: return ("m-bad", "ATT error")
        case .connectionFailed: return ("m-bad", "failed")
        case .security:
            if e.text.contains("failed") { return ("m-bad", "security failed") }
            return ("m-ok", e.text.hasPrefix("encryption on") ? "encrypted" : nil)
        case .disconnected:
            let bad = ["(0x08)", "(0x3e)", "(0x22)", "(0x3d)"].contains { e.text.lowercased().contains($0) }
            let reason = e.text.split(separator: ":").dropFirst().first.map { String($0.split(separator: "(").first ?? "") } ?? ""
            return (bad ? "m-bad" : "m-end", "✕" + reason.trimmingCharacters())
        case .notifications, .indications:
            return ("m-data", e.text.hasPrefix("first") ? (e.kind == .notifications ? "notifications" : "indications") : nil)
        case .read, .write, .requests: return ("m-data", nil)
        case .parameters, .dataLength, .phy, .signaling: return ("m-minor", nil)
        case .connected, .attempt: return (nil, nil)
        }
    }

    // MARK: Findings

    /// Findings in time order by severity (most severe first, so they win the label space), with their lane.
    func placedFindings() -> [(number: Int, finding: Finding, lane: Int?)] {
        let laneOf = Dictionary(uniqueKeysWithValues: lanes.enumerated().map { ($1.index, $0) })
        return findings.enumerated().sorted { ($0.1.severity, -$0.0) > ($1.1.severity, -$1.0) }
            .map { ($0.offset + 1, $0.element, $0.element.connectionIndex.flatMap { laneOf[$0] }) }
    }

    func laneTop(_ lane: Int?) -> (Double, Double) {
        guard let lane else { return (Self.axisHeight, Self.radioLaneHeight) }
        return (Self.axisHeight + Self.radioLaneHeight + Double(lane) * Self.laneHeight, Self.laneHeight)
    }

    /// Warnings and errors as shaded spans behind their lane's content.
    func findingBands(_ axis: TimeAxis, _ out: inout SVGOut) {
        for (n, f, lane) in placedFindings() where f.severity >= .warning {
            let (y0, h) = laneTop(lane)
            let (t0, t1) = extras.span(f)
            out.span(axis.x(t0) - 2, axis.x(t1) + 2, y0 + 16, h - 18, cls: "band band-\(f.severity.rawValue)", min: 5,
                     title: "#\(n) \(f.severity.rawValue.uppercased()) \(f.rule): \(f.message)")
        }
    }

    /// A flag with the rule's title (and the span's length) for warnings and errors; a small
    /// diamond for facts (info).
    func findingFlags(_ axis: TimeAxis, _ out: inout SVGOut) {
        let titles = Dictionary(uniqueKeysWithValues: Rules.infos.map { ($0.id, $0.title) })
        var rows: [Int: LabelRow] = [:]
        for (n, f, lane) in placedFindings() {
            let (y0, _) = laneTop(lane)
            let (t0, t1) = extras.span(f)
            let x0 = axis.x(t0)
            let sev = f.severity.rawValue
            let title = "#\(n) \(f.severity.rawValue.uppercased()) \(f.rule): \(f.message)"
            out += "<a href=\"#finding-\(n)\">"
            if f.severity == .info {
                out.at(x0, y0 + 8, "<path d=\"M0,-4 L4,0 L0,4 L-4,0 Z\" class=\"flag-info\"><title>\(HTML.escape(title))</title></path>")
            } else {
                out.at(x0, y0 + 2, "<path d=\"M0,0 L0,16 M0,0 L9,4 L0,8 Z\" class=\"flag flag-\(sev)\"><title>\(HTML.escape(title))</title></path>")
                var label = titles[f.rule] ?? f.rule
                if t1 - t0 >= 1000 && (axis.x(t1) - x0) > 30 { label += " · " + TimeFormat.duration(t1 - t0) }
                var row = rows[lane ?? -1] ?? LabelRow()
                _ = row.place(x0 + 11, label, &out, y: y0 + 12, cls: "flaglabel flag-\(sev)", bold: true, leftOf: x0 - 3)
                rows[lane ?? -1] = row
            }
            out += "</a>\n"
        }
    }
}

/// Greedy placement of labels on one row: a label is drawn only where it does not overlap another
/// (its marker keeps a tooltip either way); near the right edge it goes left of its mark.
struct LabelRow {
    private var occupied: [(Double, Double)] = []

    mutating func place(_ x: Double, _ text: String, _ out: inout SVGOut, y: Double, cls: String, bold: Bool = false,
                        left: Bool = true, leftOf: Double? = nil) -> Bool {
        let w = Double(text.count) * (bold ? 7.0 : 6.1) + 6
        var start = x, anchor = ""
        if x + w > TimelineSVG.width - 2 {
            guard left else { return false }
            start = (leftOf ?? x - 6) - w
            anchor = " text-anchor=\"end\""
            guard start >= TimelineSVG.left else { return false }
        }
        guard !occupied.contains(where: { start < $0.1 && start + w > $0.0 }) else { return false }
        occupied.append((start, start + w))
        out.at(anchor.isEmpty ? start : start + w - 6, y, "<text class=\"\(cls)\"\(anchor)>\(HTML.escape(text))</text>")
        return true
    }
}

/// SVG text built by appending; `at` and `span` emit the zoomable elements.
struct SVGOut {
    private(set) var text = ""

    static func += (o: inout SVGOut, s: String) { o.text += s }

    /// A group at (x, y) whose x follows the zoom.
    mutating func at(_ x: Double, _ y: Double, _ body: String) {
        text += "<g class=\"t\" data-x=\"\(HTML.num(x))\" data-y=\"\(HTML.num(y))\" transform=\"translate(\(HTML.num(x)),\(HTML.num(y)))\">" + body + "</g>\n"
    }

    /// A rectangle from x0 to x1 (at least `min` wide) whose ends follow the zoom.
    mutating func span(_ x0: Double, _ x1: Double, _ y: Double, _ h: Double, cls: String, min: Double = 0, title: String? = nil) {
        let w = max(x1 - x0, min)
        text += "<rect class=\"s \(cls)\" data-x=\"\(HTML.num(x0))\" data-x2=\"\(HTML.num(x1))\"" + (min > 0 ? " data-min=\"\(HTML.num(min))\"" : "")
            + " x=\"\(HTML.num(x0))\" y=\"\(HTML.num(y))\" width=\"\(HTML.num(w))\" height=\"\(HTML.num(h))\""
        text += title.map { "><title>\(HTML.escape($0))</title></rect>\n" } ?? "/>\n"
    }
}

extension String {
    func trimmingCharacters() -> String {
        var s = Substring(self)
        while s.first == " " { s = s.dropFirst() }
        while s.last == " " { s = s.dropLast() }
        return String(s)
    }
}
