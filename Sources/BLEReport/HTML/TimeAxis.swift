/// The swimlane timeline's time axis: linear, except that long stretches where nothing happens
/// (no event, no traffic, no finding) are folded into a fixed-width break, so a 5 ms connection
/// after 90 ms of controller set-up is not a sliver at the right edge. Stretches that are the
/// evidence of a finding (a 2 s flow stall, a 21 s idle link) are never folded: they are the point.
struct TimeAxis {
    struct Segment {
        var t0: Int64, t1: Int64
        var x0: Double, x1: Double
        var folded: Bool
    }

    private(set) var segments: [Segment] = []
    let start: Int64
    let end: Int64
    /// Pixels per microsecond in the linear segments.
    private(set) var scale: Double = 0
    static let breakWidth = 34.0
    static let maxBreaks = 6

    /// - Parameters:
    ///   - keyTimes: times where something is drawn; gaps between them may be folded.
    ///   - protected: intervals that must stay linear (finding evidence spans).
    ///   - x0, width: where the axis is drawn.
    init(start: Int64, end: Int64, keyTimes: consuming [Int64], protected: [(Int64, Int64)], x0: Double, width: Double) {
        self.start = start
        self.end = max(end, start)
        // In place: a capture of many connections gives millions of key times.
        var unique = keyTimes
        unique.removeAll { !($0 > start && $0 < end) }
        unique.append(start)
        unique.append(self.end)
        unique.sort()
        var kept = 0
        for i in unique.indices where kept == 0 || unique[kept - 1] != unique[i] {
            unique[kept] = unique[i]
            kept += 1
        }
        unique.removeLast(unique.count - kept)
        // gaps[i] spans unique[i] ... unique[i+1]
        var folded = [Bool](repeating: false, count: max(unique.count - 1, 0))
        let gaps = (0 ..< folded.count).map { unique[$0 + 1] - unique[$0] }
        let guarded = (0 ..< folded.count).map { i in
            protected.contains { p in p.0 < unique[i + 1] && p.1 > unique[i] }
        }
        var linear = gaps.reduce(0, +)
        var breaks = 0
        // Every gap between distinct times is > 0.
        let median: Int64 = {
            var sorted = gaps
            sorted.sort()
            return sorted.isEmpty ? 0 : sorted[sorted.count / 2]
        }()
        while breaks < Self.maxBreaks {
            var best = -1
            for i in gaps.indices where !folded[i] && !guarded[i] && (best < 0 || gaps[i] > gaps[best]) { best = i }
            // Fold a gap only when a fifth or more of what is left is that one empty stretch.
            // …only when it is at least 2 % of the whole capture (no folding of sub-millisecond gaps),
            // stands out from the usual gap between events (4× the median: evenly spaced events stay
            // linear), and something is left to draw.
            guard best >= 0, gaps[best] * 5 > linear, gaps[best] * 50 >= self.end - start, gaps[best] > 4 * median,
                  linear - gaps[best] > 0 else { break }
            folded[best] = true
            linear -= gaps[best]
            breaks += 1
        }
        let linearWidth = max(width - Double(breaks) * Self.breakWidth, 1)
        scale = linear > 0 ? linearWidth / Double(linear) : 0
        var x = x0
        var i = 0
        while i < gaps.count {
            if folded[i] {
                segments.append(Segment(t0: unique[i], t1: unique[i + 1], x0: x, x1: x + Self.breakWidth, folded: true))
                x += Self.breakWidth
                i += 1
                continue
            }
            var j = i
            while j + 1 < gaps.count && !folded[j + 1] { j += 1 }
            let w = Double(unique[j + 1] - unique[i]) * scale
            segments.append(Segment(t0: unique[i], t1: unique[j + 1], x0: x, x1: x + w, folded: false))
            x += w
            i = j + 1
        }
        if segments.isEmpty { segments.append(Segment(t0: start, t1: self.end, x0: x0, x1: x0 + width, folded: false)) }
    }

    /// The x of time `t` (clamped to the axis).
    func x(_ t: Int64) -> Double {
        guard let first = segments.first, let last = segments.last else { return 0 }
        if t <= first.t0 { return first.x0 }
        if t >= last.t1 { return last.x1 }
        // Binary search for the segment holding t.
        var lo = 0, hi = segments.count - 1
        while lo < hi {
            let mid = (lo + hi) / 2
            if segments[mid].t1 < t { lo = mid + 1 } else { hi = mid }
        }
        let s = segments[lo]
        guard s.t1 > s.t0 else { return s.x0 }
        return s.x0 + (s.x1 - s.x0) * Double(t - s.t0) / Double(s.t1 - s.t0)
    }

    var foldedSegments: [Segment] { segments.filter(\.folded) }

    /// Tick times per linear segment, about `spacing` pixels apart, on steps a person counts in
    /// (`niceStep`), at whole multiples of the step from the capture's start.
    func ticks(spacing: Double = 110) -> [(time: Int64, step: Int64)] {
        var out: [(Int64, Int64)] = []
        for s in segments where !s.folded && s.x1 - s.x0 >= 40 {
            let step = Self.niceStep(Double(s.t1 - s.t0) * spacing / max(s.x1 - s.x0, 1))
            var t = ((s.t0 - start) / step + 1) * step + start
            if s.t0 == start { t = start }
            while t <= s.t1 {
                out.append((t, step))
                t += step
            }
        }
        return out
    }

    /// Steps between ticks (µs): 1-2-5 below a second, then 1, 2, 5, 10, 15, 30 s and min, then
    /// 1, 2, 3, 6, 12 h and days, so a 1 h 40 min log reads +20 min, +40 min … rather than
    /// +16 min 40 s, +33 min 20 s.
    static let steps: [Int64] = {
        var s: [Int64] = []
        var m: Int64 = 1
        while m < 1_000_000 { s += [m, 2 * m, 5 * m]; m *= 10 }
        let second: Int64 = 1_000_000, minute = 60 * second, hour = 60 * minute
        s += [1, 2, 5, 10, 15, 30].map { $0 * second } + [1, 2, 5, 10, 15, 30].map { $0 * minute }
        s += [1, 2, 3, 6, 12, 24, 48].map { $0 * hour } + [7 * 24 * hour, 14 * 24 * hour, 28 * 24 * hour]
        return s
    }()

    /// The smallest step of `steps` at least `raw` µs.
    static func niceStep(_ raw: Double) -> Int64 {
        steps.first { Double($0) >= raw } ?? Int64((raw / Double(steps[steps.count - 1])).rounded(.up)) * steps[steps.count - 1]
    }
}
