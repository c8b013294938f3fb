import BLEAnalysis

/// The connection chart's "Application data" panel: attribute-value bytes per second sent and
/// received over the connection's life (`ActivitySeries` buckets), each direction's ceiling
/// (`TransferDirection.ceilingBytesPerSecond`) as a dashed line, and the link's parameter changes
/// (interval and latency, data length, PHY, ATT_MTU: the typed timeline events) marked where they
/// happened. A ceiling far above the data is written, not drawn (the data would flatten to nothing).
struct TransferChart {
    let chart: ConnectionChartSVG

    func render() -> String {
        let c = chart.connection, a = c.activity
        let top = ConnectionChartSVG.transferTop + 6, h = ConnectionChartSVG.panelHeight - 6
        let left = ConnectionChartSVG.left, right = ConnectionChartSVG.left + ConnectionChartSVG.plotWidth
        var s = marks(top: top - 6, bottom: top + h)
        guard let s0 = a.start, !a.buckets.isEmpty, c.transfer.sent.pdus + c.transfer.received.pdus > 0 else {
            return s + "<text x=\"\(HTML.num(left + 8))\" y=\"\(HTML.num(top + 34))\" class=\"lanesub\">no attribute values on this connection</text>\n"
        }
        let seconds = Double(a.width) / 1e6
        let series: [(String, (ActivitySeries.Bucket) -> Int, TransferDirection)] = [
            ("tx", { $0.valueBytesSent }, c.transfer.sent), ("rx", { $0.valueBytesReceived }, c.transfer.received),
        ]
        let peak = series.flatMap { s in a.buckets.map { Double(s.1($0)) / seconds } }.max() ?? 0
        guard peak > 0 else { return s }
        // The scale reaches a ceiling within 4× of the data, so the data stays readable.
        let ceilings: [(ceiling: Double, direction: TransferDirection)] = series.compactMap { entry in
            entry.2.ceilingBytesPerSecond.map { (ceiling: $0, direction: entry.2) }
        }
        let scale = max(peak, ceilings.map { $0.ceiling }.filter { $0 <= 4 * peak }.max() ?? 0)
        func y(_ v: Double) -> Double { top + h - h * min(v, scale) / scale }
        func bx(_ i: Int) -> Double { chart.x(s0 + Int64(i) * a.width) }
        for (cls, value, d) in series where d.pdus > 0 {
            s += "<path class=\"app-\(cls)\" d=\"" + chart.stepLine(a.buckets.count, value: { Double(value(a.buckets[$0])) / seconds }, x: bx, y: y) + "\"/>"
        }
        var offScale: [String] = []
        for (ceiling, d) in ceilings {
            let name = d.sentByHost ? "sent" : "received"
            let limits = d.limitedBy.prefix(2).map { $0.rawValue }.joined(separator: ", ")
            let text = "\(name): link allows \(HTML.compact(ceiling)) B/s" + (limits.isEmpty ? "" : " (\(limits))")
            guard ceiling <= scale else { offScale.append(text); continue }
            let cy = y(ceiling)
            s += "<line x1=\"\(HTML.num(left))\" x2=\"\(HTML.num(right))\" y1=\"\(HTML.num(cy))\" y2=\"\(HTML.num(cy))\" class=\"ceiling ceiling-\(d.sentByHost ? "tx" : "rx")\"><title>\(HTML.escape(text))</title></line>"
            s += "<text x=\"\(HTML.num(right - 4))\" y=\"\(HTML.num(cy - 3))\" text-anchor=\"end\" class=\"caplabel\">\(HTML.escape(text))</text>"
        }
        if !offScale.isEmpty {
            s += "<text x=\"\(HTML.num(right - 4))\" y=\"\(HTML.num(top + 9))\" text-anchor=\"end\" class=\"caplabel\">\(HTML.escape(offScale.joined(separator: " · ")))</text>"
        }
        s += "<text x=\"\(HTML.num(left + 4))\" y=\"\(HTML.num(top + 9))\" class=\"caplabel\">\(HTML.compact(scale)) B/s</text>\n"
        return s
    }

    /// The link's parameter changes as dotted vertical lines with a short label (from typed events).
    func marks(top: Double, bottom: Double) -> String {
        var s = ""
        var labelEnd = -1.0
        for e in chart.connection.timeline {
            let label: String
            switch e.kind {
            case .parameters: label = "interval"
            case .dataLength: label = "data length"
            case .phy: label = "PHY"
            case .mtu: label = e.fields.mtu.map { "MTU \($0)" } ?? "MTU"
            default: continue
            }
            let px = chart.x(e.time)
            s += "<line x1=\"\(HTML.num(px))\" x2=\"\(HTML.num(px))\" y1=\"\(HTML.num(top))\" y2=\"\(HTML.num(bottom))\" class=\"linkmark\"><title>\(HTML.escape(e.text))</title></line>"
            let w = LabelFont.tick.width(label)
            if px + 2 > labelEnd, px + 2 + w <= ConnectionChartSVG.width {
                s += "<text x=\"\(HTML.num(px + 2))\" y=\"\(HTML.num(bottom - 3))\" class=\"linklabel\">\(HTML.escape(label))</text>"
                labelEnd = px + 2 + w + 4
            }
        }
        return s
    }
}
