import BLEBytes
import BLEProtocol
import BLEAnalysis

/// The swimlane timeline: one lane for the host's radio (scanning, advertising, connection
/// attempts summarized into counted runs) and one per peer (a bar per connection with traffic
/// inside, buffers in use below, markers for MTU, discovery, subscriptions, errors and the
/// disconnect reason), findings as coloured bands and flags on their lane. Every label goes
/// through a `LabelPlacer`, so none overlaps another or leaves the plot; a lane has as many label
/// rows as its labels need. Elements positioned in time carry `data-x` so the inline script can
/// zoom and pan without distorting text.
struct TimelineSVG {
    let model: SessionModel
    let findings: [Finding]
    let extras: ReportExtras
    let start: Int64
    let end: Int64
    let lanes: [TimelineLane]
    let layout: PageLayout
    /// A summarised page (`PageLayout`): each lane's marks merged into pixel columns.
    var summarised: Bool { layout.summarised }

    init(model: SessionModel, findings: [Finding], extras: ReportExtras, start: Int64, end: Int64, layout: PageLayout) {
        self.model = model
        self.findings = findings
        self.extras = extras
        self.start = start
        self.end = end
        self.layout = layout
        lanes = layout.lanes(model)
    }

    static let width = 1320.0
    static let left = 196.0
    static let right = 16.0
    static let axisHeight = 34.0
    /// Lanes drawn; later ones are listed below the picture.
    static let maxLanes = 60
    static var plotWidth: Double { width - left - right }

    var hiddenConnections: Int { model.connections.count - lanes.reduce(0) { $0 + $1.connections.count } }

    func render() -> String {
        let axis = makeAxis()
        // Each lane is laid out once with every row available to learn how many rows its labels
        // use, then drawn with that many (placement is relative to the bar, so it is the same).
        var scratch = SVGOut()
        let radioRows = radioLane(axis, &scratch, LaneGeometry(y0: 0, rows: LaneGeometry.maxRows, radio: true))
        var geometry = [LaneGeometry(y0: Self.axisHeight, rows: radioRows, radio: true)]
        for (i, lane) in lanes.enumerated() {
            let rows = connectionLane(lane, i, axis, &scratch, LaneGeometry(y0: 0, rows: LaneGeometry.maxRows))
            geometry.append(LaneGeometry(y0: geometry[i].y0 + geometry[i].height, rows: rows))
        }
        let height = (geometry.last.map { $0.y0 + $0.height } ?? Self.axisHeight) + 2
        var out = SVGOut()
        out += "<svg id=\"timeline\" class=\"timeline\" viewBox=\"0 0 \(HTML.num(Self.width)) \(HTML.num(height))\" "
        out += "data-left=\"\(HTML.num(Self.left))\" data-plot=\"\(HTML.num(Self.plotWidth))\" role=\"img\" "
        out += "aria-label=\"Timeline: \(lanes.count + 1) lanes\" xmlns=\"http://www.w3.org/2000/svg\">\n"
        out += "<defs><clipPath id=\"plot\"><rect x=\"\(HTML.num(Self.left))\" y=\"0\" width=\"\(HTML.num(Self.plotWidth))\" height=\"\(HTML.num(height))\"/></clipPath>"
        out += "<pattern id=\"hatch\" width=\"6\" height=\"6\" patternUnits=\"userSpaceOnUse\" patternTransform=\"rotate(45)\">"
        out += "<rect width=\"6\" height=\"6\" fill=\"#eef2f6\"/><line x1=\"0\" y1=\"0\" x2=\"0\" y2=\"6\" stroke=\"#9aa7b4\" stroke-width=\"2\"/></pattern></defs>\n"
        laneBackgrounds(&out, geometry, height: height)
        out += "<g clip-path=\"url(#plot)\">\n"
        ticks(axis, &out, height: height)
        _ = radioLane(axis, &out, geometry[0])
        for (i, lane) in lanes.enumerated() { _ = connectionLane(lane, i, axis, &out, geometry[i + 1]) }
        folds(axis, &out, height: height)
        out.flushOverlay()
        out += "</g>\n</svg>\n"
        return out.text
    }

    // MARK: Axis

    func makeAxis() -> TimeAxis {
        var keys: [Int64] = []
        // A summarised page draws the traffic of its lanes only: the others' times would only fold the same gaps.
        let drawn = summarised ? Set(lanes.flatMap { $0.connections.map(\.index) }) : []
        for c in model.connections {
            keys += [c.lifecycle.attemptTime, c.lifecycle.completeTime, c.traffic.firstDataTime, c.traffic.lastDataTime, c.lifecycle.disconnectTime].compactMap { $0 }
            for e in c.timeline { keys.append(e.time) }
            if !summarised || drawn.contains(c.index) {
                keys.append(contentsOf: c.activity.sent.times)
                keys.append(contentsOf: c.activity.received.times)
            }
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
        for (t, _) in axis.ticks() {
            out.at(axis.x(t), 0, "<line x1=\"0\" y1=\"\(HTML.num(Self.axisHeight - 6))\" x2=\"0\" y2=\"\(HTML.num(height))\" class=\"grid\"/>")
        }
        // Labels of the axis: the folds' lengths first (they explain the breaks), then the ticks.
        var labels = LabelPlacer(bounds: LabelBox(x0: Self.left + 1, x1: Self.width - Self.right - 1, y0: 0, y1: Self.axisHeight))
        out.onTop { out in
            for s in axis.foldedSegments {
                let text = "⋯" + TimeFormat.duration(s.t1 - s.t0)
                if let spot = labels.place(text, .fold, [LabelSpot(x: s.x0 + 1, y: 11), LabelSpot(x: s.x1 - 1, y: 11, anchorEnd: true)]) {
                    out.label(text, spot, cls: "foldlabel")
                }
            }
            for (t, step) in axis.ticks() {
                let text = HTML.offset(t - start, step: step)
                if let spot = labels.place(text, .tick, [LabelSpot(x: axis.x(t) + 3, y: Self.axisHeight - 10)]) {
                    out.label(text, spot, cls: "tick")
                }
            }
        }
    }

    func folds(_ axis: TimeAxis, _ out: inout SVGOut, height: Double) {
        for s in axis.foldedSegments {
            out.span(s.x0 + 3, s.x1 - 3, Self.axisHeight - 4, height - Self.axisHeight + 4, cls: "fold",
                     title: TimeFormat.duration(s.t1 - s.t0) + " without events, folded")
        }
    }

    // MARK: Lanes

    func laneBackgrounds(_ out: inout SVGOut, _ geometry: [LaneGeometry], height: Double) {
        let radio = geometry[0]
        out += "<rect x=\"0\" y=\"\(HTML.num(radio.y0))\" width=\"\(HTML.num(Self.width))\" height=\"\(HTML.num(radio.height))\" class=\"lane lane-radio\" data-lane=\"radio\"/>\n"
        let failed = ReportText.failedAttempts(model).count
        let attempts = model.attempts.isEmpty ? "no connection attempts"
            : "\(model.attempts.count) attempt\(model.attempts.count == 1 ? "" : "s")" + (failed > 0 ? " · \(failed) failed" : "")
        out += laneTitle(radio, title: "Host radio", lines: ["scanning · advertising", attempts], href: nil)
        for (i, lane) in lanes.enumerated() {
            let g = geometry[i + 1]
            out += "<rect x=\"0\" y=\"\(HTML.num(g.y0))\" width=\"\(HTML.num(Self.width))\" height=\"\(HTML.num(g.height))\" "
                + "class=\"lane \(i % 2 == 0 ? "lane-even" : "lane-odd")\" data-lane=\"\(lane.connections[0].index)\"/>\n"
            out += laneTitle(g, title: lane.title, lines: lane.lines, href: layout.href(lane.connections[0].index))
        }
        out += "<line x1=\"\(HTML.num(Self.left))\" y1=\"0\" x2=\"\(HTML.num(Self.left))\" y2=\"\(HTML.num(height))\" class=\"divider\"/>\n"
    }

    /// The lane's name left of the plot, each line cut to the space there, as many lines as fit.
    func laneTitle(_ g: LaneGeometry, title: String, lines: [String], href: String?) -> String {
        let y0 = g.y0
        let lines = lines.prefix(max(0, Int((g.height - 39) / 14) + 1))
        let room = Self.left - 16
        var s = href.map { "<a href=\"\(HTML.escape($0))\">" } ?? ""
        // The full name in a tooltip beside the text (a <title> inside <text> would join its textContent).
        s += "<g><title>\(HTML.escape(title))</title>"
        s += "<text x=\"10\" y=\"\(HTML.num(y0 + 20))\" class=\"lanetitle\">\(HTML.escape(Self.fit(title, LabelFont(size: 13, bold: true), room)))</text></g>"
        for (i, l) in lines.enumerated() {
            s += "<text x=\"10\" y=\"\(HTML.num(y0 + 35 + Double(i) * 14))\" class=\"lanesub\">\(HTML.escape(Self.fit(l, LabelFont(size: 11, bold: false), room)))</text>"
        }
        return s + (href == nil ? "" : "</a>") + "\n"
    }

    /// `text`, cut with "…" to `width`.
    static func fit(_ text: String, _ font: LabelFont, _ width: Double) -> String {
        guard font.width(text) > width else { return text }
        var cut = Substring(text)
        while !cut.isEmpty && font.width(cut + "…") > width { cut = cut.dropLast() }
        return cut + "…"
    }

    func connectionLane(_ lane: TimelineLane, _ laneIndex: Int, _ axis: TimeAxis, _ out: inout SVGOut, _ g: LaneGeometry) -> Int {
        var labels = LabelPlacer(bounds: g.bounds)
        var used = 0
        findingBands(laneIndex, axis, &out, g)
        var groups: [MarkerGroup] = []
        if summarised {
            summarisedBars(lane, axis, &out, g)
            groups = markerGroups(lane.connections.flatMap(\.timeline), axis)
        }
        for c in lane.connections where !summarised {
            let begin = c.barStart ?? start
            let finish = c.lifecycle.disconnectTime ?? end
            if let a = c.lifecycle.attemptTime, let done = c.lifecycle.completeTime, done > a {
                out.span(axis.x(a), axis.x(done), g.barY + 4, LaneGeometry.barHeight - 8, cls: "connecting", title: "connecting: \(TimeFormat.duration(done - a))")
            }
            out += "<a href=\"\(layout.href(c.index))\">"
            out.span(axis.x(begin), axis.x(finish), g.barY, LaneGeometry.barHeight, cls: c.isOpen ? "bar open" : "bar", min: 3,
                     title: "Connection \(c.index): " + SessionText.header(c))
            out += "</a>"
            activity([c], axis, &out, barY: g.barY, barH: LaneGeometry.barHeight)
            buffers(c, axis, &out, y: g.barY + LaneGeometry.barHeight + 2)
            groups += markerGroups(c.timeline, axis)
        }
        used = max(used, findingFlags(laneIndex, axis, &out, g, &labels))
        // Inside the bars: which connection (when the lane has several), that it began before the
        // capture or was still open at its end.
        out.onTop { out in
            for c in lane.connections where !summarised {
                let x0 = axis.x(c.barStart ?? start), x1 = axis.x(c.lifecycle.disconnectTime ?? end)
                var name = lane.connections.count > 1 ? "connection \(c.index)" : ""
                if c.lifecycle.inferred { name = "⋯ " + name }
                let inside = LabelSpot(x: x0 + 3, y: g.barY + 12)
                if !name.isEmpty, labels.box(name, .mark, inside).x1 <= x1 - 2, let spot = labels.place(name, .mark, [inside]) {
                    out.label(name, spot, cls: "barlabel")
                }
                if c.isOpen, let spot = labels.place("still open ▸", .mark, [LabelSpot(x: x1 - 3, y: g.barY + 12, anchorEnd: true)]) {
                    out.label("still open ▸", spot, cls: "barlabel")
                }
            }
        }
        // Labels by importance (failures, then milestones, then data, then the disconnect), so the
        // important ones win the space; failures are drawn last, so their dots are on top.
        let rank = ["m-bad": 0, "m-ok": 1, "m-discovery": 1, "m-mtu": 1, "m-data": 2, "m-end": 3]
        for m in groups.enumerated().sorted(by: { ($0.1.cls == "m-bad" ? 1 : 0, $0.0) < ($1.1.cls == "m-bad" ? 1 : 0, $1.0) }) {
            marker(m.1, &out, g)
        }
        out.onTop { out in
            for m in groups.enumerated().sorted(by: { (rank[$0.1.cls] ?? 4, $0.0) < (rank[$1.1.cls] ?? 4, $1.0) }).map(\.1) {
                guard let text = m.label else { continue }
                let spots = (0 ..< g.rows).flatMap { r in
                    // Kept inside the plot: a mark at its very edge (the capture's last frame) still gets its label.
                    [LabelSpot(x: max(m.x - 4, labels.bounds.x0), y: g.row(r)), LabelSpot(x: min(m.x + 4, labels.bounds.x1), y: g.row(r), anchorEnd: true)]
                }
                if let spot = labels.place(text, m.cls == "m-bad" ? .markBold : .mark, spots) {
                    out.label(text, spot, cls: "marklabel \(m.cls)")
                    used = max(used, (spots.firstIndex { $0.y == spot.y && $0.anchorEnd == spot.anchorEnd } ?? 0) / 2 + 1)
                }
            }
        }
        return max(used, 1)
    }

    /// A summarised lane's connections: bars closer than 2 pixels merged (the tooltip counts them),
    /// then its traffic and buffers in use in 2-pixel columns over the whole lane.
    func summarisedBars(_ lane: TimelineLane, _ axis: TimeAxis, _ out: inout SVGOut, _ g: LaneGeometry) {
        var runs: [(x0: Double, x1: Double, members: [Connection])] = []
        for c in lane.connections {
            let x0 = axis.x(c.barStart ?? start), x1 = axis.x(c.lifecycle.disconnectTime ?? end)
            if let last = runs.indices.last, x0 - runs[last].x1 < 2 {
                runs[last].x1 = max(runs[last].x1, x1)
                runs[last].members.append(c)
            } else {
                runs.append((x0, x1, [c]))
            }
        }
        for run in runs {
            let first = run.members[0]
            let title = run.members.count == 1 ? "Connection \(first.index): " + SessionText.header(first)
                : "\(run.members.count) connections: " + TimelineLane.ranges(run.members.map(\.index))
            out += "<a href=\"\(layout.href(first.index))\">"
            out.span(run.x0, run.x1, g.barY, LaneGeometry.barHeight, cls: run.members.contains(where: \.isOpen) ? "bar open" : "bar", min: 3, title: title)
            out += "</a>"
        }
        activity(lane.connections, axis, &out, barY: g.barY, barH: LaneGeometry.barHeight)
        var columns: [Int: (v: Int, full: Bool, capacity: Int?)] = [:]
        for c in lane.connections {
            guard let series = c.activity.buffers, series.peak > 0 else { continue }
            let bucket = Double(series.end - series.start) / Double(series.buckets)
            for (i, v) in series.link.lazy.map(Int.init).enumerated() where v > 0 {
                let column = Int(axis.x(series.start + Int64(Double(i) * bucket)) / 2)
                let full = series.capacity.map { v >= $0 } ?? false
                if let old = columns[column], old.v >= v { continue }
                columns[column] = (v, full, series.capacity)
            }
        }
        let y = g.barY + LaneGeometry.barHeight + 2
        var peak = 1
        for c in columns.values { peak = max(peak, c.capacity ?? c.v) }
        for (column, c) in columns.sorted(by: { $0.key < $1.key }) {
            let h = 11 * min(Double(c.v) / Double(peak), 1)
            out.span(Double(column) * 2, Double(column) * 2 + 2, y + 11 - h, h, cls: c.full ? "credits-full" : "credits", min: 1,
                     title: "\(c.v) of \(c.capacity.map(String.init) ?? "?") controller buffers in use")
        }
    }

    /// ACL packets (both directions) binned into 2-pixel columns, height by the square root of the count.
    func activity(_ connections: [Connection], _ axis: TimeAxis, _ out: inout SVGOut, barY: Double, barH: Double) {
        var bins: [Int: Int] = [:]
        for c in connections {
            let t = c.activity
            for (samples, weight) in [(t.sent, t.sent.stride), (t.received, t.received.stride)] {
                for time in samples.times { bins[Int(axis.x(time) / 2), default: 0] += weight }
            }
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
        guard let series = c.activity.buffers, series.peak > 0 else { return }
        let full = Double(max(series.capacity ?? series.peak, 1))
        let bucket = Double(series.end - series.start) / Double(series.buckets)
        let link = series.link.map(Int.init)
        var i = 0
        while i < link.count {
            let v = link[i]
            var j = i
            while j + 1 < link.count && link[j + 1] == v { j += 1 }
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

    /// Story events of one kind that fall within a few pixels of each other: one dot, one label
    /// (with the count), every event in the tooltip.
    struct MarkerGroup {
        var x: Double
        var cls: String
        var label: String?
        var events: [TimelineEvent]
    }

    static let groupDistance = 5.0

    func markerGroups(_ timeline: [TimelineEvent], _ axis: TimeAxis) -> [MarkerGroup] {
        var groups: [MarkerGroup] = []
        for e in timeline {
            let (cls, label) = Self.markerStyle(e)
            guard let cls else { continue }
            let x = axis.x(e.time)
            if let i = groups.lastIndex(where: { $0.cls == cls }), x - groups[i].x < Self.groupDistance {
                groups[i].events.append(e)
                if groups[i].label == nil { groups[i].label = label }
                continue
            }
            groups.append(MarkerGroup(x: x, cls: cls, label: label, events: [e]))
        }
        for i in groups.indices where groups[i].events.count > 1 {
            let labels = Set(groups[i].events.compactMap { Self.markerStyle($0).1 })
            if let l = groups[i].label, labels.count == 1 { groups[i].label = l + " ×\(groups[i].events.count)" }
        }
        return groups
    }

    /// A group's dot on the bar, linked to its first decoded frame, with every event in its tooltip.
    func marker(_ m: MarkerGroup, _ out: inout SVGOut, _ g: LaneGeometry) {
        let first = m.events[0]
        let link = extras.frames.contains { $0.number == first.frame } ? "#" + HTML.frameID(first.frame) : nil
        var tip = m.events.prefix(12).map { "#\($0.frame) \(TimeFormat.time($0.time))  \($0.text)" }.joined(separator: "\n")
        if m.events.count > 12 { tip += "\n… \(m.events.count - 12) more" }
        var s = link.map { "<a href=\"\($0)\">" } ?? ""
        if m.cls == "m-bad" {
            s += "<circle r=\"7\" class=\"mark m-bad\"><title>\(HTML.escape(tip))</title></circle>"
            s += "<path d=\"M-1.2,-4.5 L1.2,-4.5 L0.7,1.2 L-0.7,1.2 Z M-1.2,2.4 L1.2,2.4 L1.2,4.6 L-1.2,4.6 Z\" class=\"bang\"/>"
        } else {
            s += "<circle r=\"4.5\" class=\"mark \(m.cls)\"><title>\(HTML.escape(tip))</title></circle>"
        }
        s += link == nil ? "" : "</a>"
        out.at(m.x, g.barY + 8, s)
    }

    /// Class and short label per event kind; nil class: not drawn.
    static func markerStyle(_ e: TimelineEvent) -> (String?, String?) {
        switch e.kind {
        case .mtu:
            return ("m-mtu", e.fields.mtu.map { "MTU \($0)" } ?? "MTU")
        case .discovery: return ("m-discovery", "discovery")
        case .subscribe: return ("m-ok", "subscribed")
        case .subscribeFailed: return ("m-bad", "subscribe failed")
        case .attError: return ("m-bad", "ATT error")
        case .connectionFailed: return ("m-bad", "failed")
        case .security:
            if e.fields.security?.failed == true { return ("m-bad", "security failed") }
            return ("m-ok", e.fields.security == .encryptionOn ? "encrypted" : nil)
        case .disconnected:
            let reason = e.fields.reason
            let bad = reason.map { LinkLoss.reasons.contains($0) } ?? false
            return (bad ? "m-bad" : "m-end", "✕ " + (reason.map { ReasonText.short(HCIStatus(rawValue: $0)) } ?? "disconnected"))
        case .notifications, .indications:
            return ("m-data", e.fields.firstOfHandle ? (e.kind == .notifications ? "notifications" : "indications") : nil)
        case .read, .write, .requests: return ("m-data", nil)
        case .parameters, .dataLength, .phy, .signaling: return ("m-minor", nil)
        case .connected, .attempt: return (nil, nil)
        }
    }

    // MARK: Findings

    /// Findings (numbered as in the table) on lane `lane` (nil: the radio lane, for findings of no
    /// connection; those of connections not drawn are only in the table), most severe first.
    func findings(on lane: Int?) -> [(number: Int, finding: Finding)] {
        var laneOf: [Int: Int] = [:]
        for (i, l) in lanes.enumerated() { for c in l.connections { laneOf[c.index] = i } }
        return findings.enumerated().filter { f in
            guard let c = f.element.connectionIndex else { return lane == nil }
            return lane != nil && laneOf[c] == lane
        }
            .sorted { ($0.element.severity, -$0.offset) > ($1.element.severity, -$1.offset) }
            .map { ($0.offset + 1, $0.element) }
    }

    /// Warnings and errors as shaded spans behind their lane's content.
    func findingBands(_ lane: Int?, _ axis: TimeAxis, _ out: inout SVGOut, _ g: LaneGeometry) {
        for (n, f) in findings(on: lane) where f.severity >= .warning {
            let (t0, t1) = extras.span(f)
            out.span(axis.x(t0) - 2, axis.x(t1) + 2, g.y0 + 3, g.height - 6, cls: "band band-\(f.severity.rawValue)", min: 5,
                     title: "#\(n) \(f.severity.rawValue.uppercased()) \(f.rule): \(f.text)")
        }
    }

    /// Flags for warnings and errors: those of one severity within a few pixels of each other share
    /// a flag whose label counts them (the rule's title ×n, or "n findings") and whose tooltip lists
    /// them; info findings are small diamonds on the bar's edge. Returns the label rows used.
    func findingFlags(_ lane: Int?, _ axis: TimeAxis, _ out: inout SVGOut, _ g: LaneGeometry, _ labels: inout LabelPlacer) -> Int {
        let titles = Dictionary(uniqueKeysWithValues: Rules.infos.map { ($0.id, $0.title) })
        func tip(_ n: Int, _ f: Finding) -> String { "#\(n) \(f.severity.rawValue.uppercased()) \(f.rule): \(f.text)" }
        var clusters: [(x: Double, items: [(number: Int, finding: Finding)])] = []
        var infos: [(x: Double, items: [(number: Int, finding: Finding)])] = []
        for (n, f) in findings(on: lane) {
            let x = axis.x(extras.span(f).0)
            if f.severity == .info, summarised {
                // One diamond per few pixels, every finding in its tooltip.
                if let i = infos.lastIndex(where: { abs($0.x - x) < 4 }) { infos[i].items.append((n, f)) } else { infos.append((x, [(n, f)])) }
                continue
            }
            if f.severity == .info {
                out.onTop { out in
                    out += "<a href=\"\(layout.findingHref(n))\">"
                    out.at(x, g.barY, "<path d=\"M0,-4 L4,0 L0,4 L-4,0 Z\" class=\"flag-info\"><title>\(HTML.escape(tip(n, f)))</title></path>")
                    out += "</a>\n"
                }
                continue
            }
            if let i = clusters.firstIndex(where: { abs($0.x - x) < 14 && $0.items[0].finding.severity == f.severity }) {
                clusters[i].items.append((n, f))
            } else {
                clusters.append((x, [(n, f)]))
            }
        }
        for cluster in infos {
            let (n, _) = cluster.items[0]
            let tips = cluster.items.prefix(12).map { tip($0.number, $0.finding) }.joined(separator: "\n")
                + (cluster.items.count > 12 ? "\n… \(cluster.items.count - 12) more" : "")
            out.onTop { out in
                out += "<a href=\"\(layout.findingHref(n))\">"
                out.at(cluster.x, g.barY, "<path d=\"M0,-4 L4,0 L0,4 L-4,0 Z\" class=\"flag-info\"><title>\(HTML.escape(tips))</title></path>")
                out += "</a>\n"
            }
        }
        var used = 0
        for cluster in clusters {
            let (n, f) = cluster.items[0]
            let x = cluster.x
            let rules = Set(cluster.items.map(\.finding.rule))
            var text = titles[f.rule] ?? f.rule
            if cluster.items.count > 1 {
                text = rules.count == 1 ? text + " ×\(cluster.items.count)" : "\(cluster.items.count) findings"
            } else {
                let (t0, t1) = extras.span(f)
                if t1 - t0 >= 1000 && axis.x(t1) - x > 30 { text += " · " + TimeFormat.duration(t1 - t0) }
            }
            // Right of the flag, then left of it (the pennant then points left), nearest row first;
            // the pennant and the pole below it are kept clear of other labels.
            var placed: (spot: LabelSpot, row: Int)? = nil
            for r in 0 ..< g.rows {
                for left in [false, true] {
                    let spot = LabelSpot(x: left ? x - 11 : x + 11, y: g.row(r), anchorEnd: left)
                    let box = labels.box(text, .flag, spot)
                    var pennant = LabelBox(x0: left ? x - 10 : x - 1, x1: left ? x + 1 : x + 10, y0: box.y0, y1: g.barY)
                    pennant.x0 = max(pennant.x0, labels.bounds.x0)
                    pennant.x1 = min(pennant.x1, labels.bounds.x1)
                    if labels.free(box) && labels.free(pennant) {
                        labels.reserve(box)
                        labels.reserve(pennant)
                        placed = (spot, r)
                        break
                    }
                }
                if placed != nil { break }
            }
            let top = placed.map { $0.spot.y - 10 } ?? g.row(0) - 10
            let left = placed?.spot.anchorEnd ?? false
            let tips = cluster.items.prefix(12).map { tip($0.number, $0.finding) }.joined(separator: "\n")
                + (cluster.items.count > 12 ? "\n… \(cluster.items.count - 12) more" : "")
            out.onTop { out in
                out += "<a href=\"\(layout.findingHref(n))\">"
                out.at(x, top, "<path d=\"M0,0 L0,\(HTML.num(g.barY - top)) M0,0 L\(left ? -9 : 9),4 L0,8 Z\" class=\"flag flag-\(f.severity.rawValue)\">"
                    + "<title>\(HTML.escape(tips))</title></path>")
                if let placed {
                    out.label(text, placed.spot, cls: "flaglabel flag-\(f.severity.rawValue)")
                    used = max(used, placed.row + 1)
                }
                out += "</a>\n"
            }
        }
        return used
    }
}

/// SVG text built by appending; `at` and `span` emit the zoomable elements. Labels and flags go to an overlay, drawn after every shape (`flushOverlay`), so no bar or
/// fold covers them.
struct SVGOut {
    private(set) var text = ""
    private var overlay = ""
    private var toOverlay = false

    static func += (o: inout SVGOut, s: String) {
        if o.toOverlay { o.overlay += s } else { o.text += s }
    }

    /// Appends what `body` emits to the overlay.
    mutating func onTop(_ body: (inout SVGOut) -> Void) {
        let was = toOverlay
        toOverlay = true
        body(&self)
        toOverlay = was
    }

    mutating func flushOverlay() {
        text += overlay
        overlay = ""
    }

    /// A group at (x, y) whose x follows the zoom.
    mutating func at(_ x: Double, _ y: Double, _ body: String) {
        self += "<g class=\"t\" data-x=\"\(HTML.num(x))\" data-y=\"\(HTML.num(y))\" transform=\"translate(\(HTML.num(x)),\(HTML.num(y)))\">" + body + "</g>\n"
    }

    /// A rectangle from x0 to x1 (at least `min` wide) whose ends follow the zoom.
    mutating func span(_ x0: Double, _ x1: Double, _ y: Double, _ h: Double, cls: String, min: Double = 0, title: String? = nil) {
        let w = max(x1 - x0, min)
        self += "<rect class=\"s \(cls)\" data-x=\"\(HTML.num(x0))\" data-x2=\"\(HTML.num(x1))\"" + (min > 0 ? " data-min=\"\(HTML.num(min))\"" : "")
            + " x=\"\(HTML.num(x0))\" y=\"\(HTML.num(y))\" width=\"\(HTML.num(w))\" height=\"\(HTML.num(h))\""
        self += title.map { "><title>\(HTML.escape($0))</title></rect>\n" } ?? "/>\n"
    }
}
