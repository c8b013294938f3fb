import BLEAnalysis

/// A lane of the timeline: every connection to one peer (a phone log reconnecting to the same
/// device a dozen times is one lane with a dozen bars), or one connection whose peer is unknown.
struct TimelineLane {
    var connections: [Connection]
    var title: String
    var lines: [String]

    /// Lanes in the order of their first connection; peers are told apart by adapter and address.
    static func group(_ connections: [Connection]) -> [TimelineLane] {
        grouped(connections) { c in c.peerAddress.map { "\(c.adapter)/\($0.description)" } ?? "conn/\(c.index)" }.map(lane)
    }

    /// `connections` grouped by `key`, the groups in the order of their first connection.
    static func grouped(_ connections: [Connection], by key: (Connection) -> String) -> [[Connection]] {
        var order: [String] = []
        var members: [String: [Connection]] = [:]
        for c in connections {
            let k = key(c)
            if members[k] == nil { order.append(k) }
            members[k, default: []].append(c)
        }
        return order.compactMap { members[$0] }
    }

    static func lane(_ cs: [Connection]) -> TimelineLane {
        let c = cs[0]
        let name = cs.lazy.compactMap(\.peerName).first
        var kind = c.isLE ? "LE" : "BR/EDR"
        if c.role != .unknown { kind += " · " + c.role.rawValue }
        if c.adapter != 0 { kind += " · hci\(c.adapter)" }
        let numbers = cs.count == 1 ? "connection \(c.index)" : "connections " + ranges(cs.map(\.index))
        let title = name ?? c.peerAddress?.description ?? "Connection \(c.index)"
        var lines = [numbers, kind]
        if name != nil, let a = c.peerAddress { lines = [a.description, numbers, kind] }
        if c.peerAddress == nil { lines = ["handle \(c.handle) · " + kind, "peer unknown"] }
        return TimelineLane(connections: cs, title: title, lines: lines)
    }

    /// `1–3, 7, 9–12`.
    static func ranges(_ numbers: [Int]) -> String {
        var parts: [String] = []
        var i = 0
        while i < numbers.count {
            var j = i
            while j + 1 < numbers.count && numbers[j + 1] == numbers[j] + 1 { j += 1 }
            parts.append(j > i ? "\(numbers[i])–\(numbers[j])" : "\(numbers[i])")
            i = j + 1
        }
        return parts.joined(separator: ", ")
    }
}

/// Where things go inside one lane, top to bottom: label rows (flags, then event labels, nearest
/// the bar first), the bar (or the radio bands), the buffers strip. The number of label rows is what
/// the lane's labels need, up to `maxRows`.
struct LaneGeometry {
    var y0: Double
    var rows: Int
    var radio = false

    static let rowHeight = 16.0
    static let maxRows = 4
    static let barHeight = 16.0
    /// Below the bar: the buffers strip (connections) or the scanning/advertising/attempt bands (radio).
    var bodyHeight: Double { radio ? 32 : Self.barHeight + 15 }
    var barY: Double { y0 + 6 + Double(rows) * Self.rowHeight + 4 }
    var height: Double { barY - y0 + bodyHeight + 4 }
    /// Baseline of label row `r` (0 nearest the bar).
    func row(_ r: Int) -> Double { barY - 8 - Double(r) * Self.rowHeight }
    var labelTop: Double { row(rows - 1) - 13 }
    /// Where labels may go: the plot's width, from the top row to the bottom of the bar.
    var bounds: LabelBox {
        LabelBox(x0: TimelineSVG.left + 1, x1: TimelineSVG.width - TimelineSVG.right - 1, y0: labelTop, y1: barY + Self.barHeight)
    }
}
