import BLEAnalysis

/// Per connection, over its life (linear time): controller ACL buffers this link holds against the
/// controller's total (a stuck pool or a burst that fills it shows as a red block), and packets,
/// notifications and writes per second (a stall shows as a flat line), with the findings shaded.
struct ConnectionChartSVG {
    let connection: Connection
    let findings: [(number: Int, finding: Finding)]
    let extras: ReportExtras
    let captureEnd: Int64
    let layout: PageLayout

    static let width = 1320.0
    static let left = 196.0
    static let plotWidth = width - left - 16
    static let panelHeight = 70.0
    static let buffersTop = 24.0
    static let ratesTop = 24.0 + panelHeight + 22
    static let transferTop = ratesTop + panelHeight + 22
    static let height = transferTop + panelHeight + 26

    var begin: Int64 { connection.barStart ?? 0 }
    var finish: Int64 { max(connection.lifecycle.disconnectTime ?? captureEnd, begin + 1) }

    func x(_ t: Int64) -> Double {
        Self.left + Self.plotWidth * Double(min(max(t, begin), finish) - begin) / Double(finish - begin)
    }

    func render() -> String {
        var s = "<svg class=\"chart\" viewBox=\"0 0 \(HTML.num(Self.width)) \(HTML.num(Self.height))\" role=\"img\" "
        s += "aria-label=\"Buffers and throughput of connection \(connection.index)\" xmlns=\"http://www.w3.org/2000/svg\">\n"
        s += panelFrame(top: Self.buffersTop, title: "ACL buffers in use",
                        sub: connection.activity.buffers?.capacity.map { "controller has \($0)" } ?? "controller size unknown")
        s += panelFrame(top: Self.ratesTop, title: "Per second", sub: "packets · values · writes")
        s += panelFrame(top: Self.transferTop, title: "Application data", sub: "bytes/s · the link's ceiling")
        s += bands()
        s += buffers()
        s += rates()
        s += TransferChart(chart: self).render()
        s += axis()
        return s + "</svg>\n"
    }

    func panelFrame(top: Double, title: String, sub: String) -> String {
        "<rect x=\"\(HTML.num(Self.left))\" y=\"\(HTML.num(top))\" width=\"\(HTML.num(Self.plotWidth))\" height=\"\(HTML.num(Self.panelHeight))\" class=\"panel\"/>"
            + "<text x=\"10\" y=\"\(HTML.num(top + 16))\" class=\"lanetitle\">\(HTML.escape(title))</text>"
            + "<text x=\"10\" y=\"\(HTML.num(top + 31))\" class=\"lanesub\">\(HTML.escape(sub))</text>\n"
    }

    /// Findings on this connection as shaded spans over both panels, labelled above.
    func bands() -> String {
        let titles = Dictionary(uniqueKeysWithValues: Rules.infos.map { ($0.id, $0.title) })
        var s = ""
        var labelEnd = -1.0
        for (n, f) in findings where f.severity >= .warning {
            let (t0, t1) = extras.span(f)
            let x0 = x(t0) - 2, x1 = max(x(t1) + 2, x(t0) + 3)
            let sev = f.severity.rawValue
            s += "<a href=\"\(layout.findingHref(n))\"><rect x=\"\(HTML.num(x0))\" y=\"\(HTML.num(Self.buffersTop))\" width=\"\(HTML.num(x1 - x0))\" "
            s += "height=\"\(HTML.num(Self.transferTop + Self.panelHeight - Self.buffersTop))\" class=\"band band-\(sev)\">"
            s += "<title>\(HTML.escape(f.text))</title></rect>"
            let label = (titles[f.rule] ?? f.rule) + (t1 > t0 ? " (" + TimeFormat.duration(t1 - t0) + ")" : "")
            let w = LabelFont.flag.width(label)
            let lx = max(min(x0, Self.width - w - 4), 2)
            if lx > labelEnd {
                s += "<text x=\"\(HTML.num(lx))\" y=\"\(HTML.num(Self.buffersTop - 8))\" class=\"flaglabel flag-\(sev)\">\(HTML.escape(label))</text>"
                labelEnd = lx + w
            }
            s += "</a>\n"
        }
        return s
    }

    func buffers() -> String {
        guard let series = connection.activity.buffers else { return "" }
        let top = Self.buffersTop + 6, h = Self.panelHeight - 6
        let maxValue = Double(max(series.capacity ?? 0, series.peak, 1))
        let bucket = Double(series.end - series.start) / Double(series.buckets)
        let link = series.link.map(Int.init), pool = series.pool.map(Int.init)
        func y(_ v: Int) -> Double { top + h - h * Double(v) / maxValue }
        func bx(_ i: Int) -> Double { x(series.start + Int64(Double(i) * bucket)) }
        var s = ""
        if series.peak > 0 {
            s += "<path class=\"credits-area\" d=\"" + stepArea(link.count, value: { Double(link[$0]) }, x: bx, y: { y(Int($0)) }, base: top + h) + "\"/>"
            if let cap = series.capacity {
                var i = 0
                while i < link.count {
                    guard link[i] >= cap else { i += 1; continue }
                    var j = i
                    while j + 1 < link.count && link[j + 1] >= cap { j += 1 }
                    s += "<rect x=\"\(HTML.num(bx(i)))\" y=\"\(HTML.num(y(cap)))\" width=\"\(HTML.num(max(bx(j + 1) - bx(i), 1.5)))\" "
                        + "height=\"\(HTML.num(top + h - y(cap)))\" class=\"credits-full\"><title>all \(cap) controller buffers in use</title></rect>"
                    i = j + 1
                }
            }
            if pool != link, (pool.max() ?? 0) > series.peak {
                s += "<path class=\"pool-line\" d=\"" + stepLine(pool.count, value: { Double(pool[$0]) }, x: bx, y: { y(Int($0)) }) + "\"/>"
            }
        }
        if let cap = series.capacity {
            s += "<line x1=\"\(HTML.num(Self.left))\" x2=\"\(HTML.num(Self.left + Self.plotWidth))\" y1=\"\(HTML.num(y(cap)))\" y2=\"\(HTML.num(y(cap)))\" class=\"capacity\"/>"
            s += "<text x=\"\(HTML.num(Self.left + Self.plotWidth - 4))\" y=\"\(HTML.num(y(cap) - 3))\" text-anchor=\"end\" class=\"caplabel\">\(cap) buffers</text>"
        } else if series.peak == 0 {
            s += "<text x=\"\(HTML.num(Self.left + 8))\" y=\"\(HTML.num(top + h - 8))\" class=\"lanesub\">no ACL packets sent by the host</text>"
        }
        return s + "\n"
    }

    func rates() -> String {
        let a = connection.activity
        guard let s0 = a.start, !a.buckets.isEmpty else {
            return "<text x=\"\(HTML.num(Self.left + 8))\" y=\"\(HTML.num(Self.ratesTop + 40))\" class=\"lanesub\">no data traffic on this connection</text>\n"
        }
        let seconds = Double(a.width) / 1e6
        let series: [(String, (ActivitySeries.Bucket) -> Int)] = [
            ("rate-tx", { $0.aclSent }), ("rate-rx", { $0.aclReceived }), ("rate-values", { $0.values }), ("rate-writes", { $0.writes }),
        ]
        let peak = series.flatMap { s in a.buckets.map { Double(s.1($0)) / seconds } }.max() ?? 0
        guard peak > 0 else { return "" }
        let top = Self.ratesTop + 6, h = Self.panelHeight - 6
        func bx(_ i: Int) -> Double { x(s0 + Int64(i) * a.width) }
        var s = ""
        for (cls, value) in series where a.buckets.contains(where: { value($0) > 0 }) {
            s += "<path class=\"\(cls)\" d=\"" + stepLine(a.buckets.count, value: { Double(value(a.buckets[$0])) / seconds }, x: bx,
                                                         y: { top + h - h * $0 / peak }) + "\"/>"
        }
        s += "<text x=\"\(HTML.num(Self.left + 4))\" y=\"\(HTML.num(top + 9))\" class=\"caplabel\">\(HTML.compact(peak))/s</text>"
        s += "<text x=\"\(HTML.num(Self.left + 4))\" y=\"\(HTML.num(top + h - 3))\" class=\"caplabel\">bucket \(HTML.escape(TimeFormat.duration(a.width)))</text>\n"
        return s
    }

    func axis() -> String {
        let span = finish - begin
        let step = TimeAxis.niceStep(Double(span) * 110 / Self.plotWidth)
        var s = ""
        var t: Int64 = 0
        let y = Self.transferTop + Self.panelHeight
        while t <= span {
            let px = x(begin + t)
            let text = HTML.offset(t, step: step)
            s += "<line x1=\"\(HTML.num(px))\" x2=\"\(HTML.num(px))\" y1=\"\(HTML.num(Self.buffersTop))\" y2=\"\(HTML.num(y + 4))\" class=\"grid\"/>"
            t += step
            // A label that would run past the right edge is left out (its grid line stays).
            guard px + 3 + LabelFont.tick.width(text) <= Self.width else { continue }
            s += "<text x=\"\(HTML.num(px + 3))\" y=\"\(HTML.num(y + 16))\" class=\"tick\">\(HTML.escape(text))</text>"
        }
        return s + "\n"
    }

    /// `M…` path of a step function filled down to `base`.
    func stepArea(_ n: Int, value: (Int) -> Double, x: (Int) -> Double, y: (Double) -> Double, base: Double) -> String {
        var d = "M\(HTML.num(x(0))),\(HTML.num(base))"
        for i in 0 ..< n {
            let v = y(value(i))
            d += " L\(HTML.num(x(i))),\(HTML.num(v)) L\(HTML.num(x(i + 1))),\(HTML.num(v))"
        }
        return d + " L\(HTML.num(x(n))),\(HTML.num(base)) Z"
    }

    func stepLine(_ n: Int, value: (Int) -> Double, x: (Int) -> Double, y: (Double) -> Double) -> String {
        var d = ""
        var last: String? = nil
        for i in 0 ..< n {
            let v = HTML.num(y(value(i)))
            if v == last { continue }
            d += (d.isEmpty ? "M" : " L") + "\(HTML.num(x(i))),\(last ?? v)" + " L\(HTML.num(x(i))),\(v)"
            last = v
        }
        if let last { d += " L\(HTML.num(x(n))),\(last)" }
        return d
    }
}
