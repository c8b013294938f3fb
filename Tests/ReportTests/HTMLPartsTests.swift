import Testing
@testable import BLEReport
@testable import BLEAnalysis

/// The HTML report's building blocks: escaping, the folded time axis, number and time labels,
/// buffer series, and the terminal's clean-up of captured text.
@Suite struct HTMLPartsTests {
    @Test(arguments: [
        ("<script>alert(1)</script>", "&lt;script&gt;alert(1)&lt;/script&gt;"),
        ("\"><img src=x>", "&quot;&gt;&lt;img src=x&gt;"),
        ("a & b's", "a &amp; b&#39;s"),
        ("\u{1B}[31mred", "\u{FFFD}[31mred"),
        ("abc\u{202E}fed", "abc\u{FFFD}fed"),
        ("line\nnext", "line\nnext"),
        ("Pulsoxímetro ♥", "Pulsoxímetro ♥"),
    ])
    func escape(_ input: String, _ expected: String) {
        #expect(HTML.escape(input) == expected)
    }

    @Test func numbersAreShortAndStable() {
        #expect(HTML.num(12.34) == "12.3")
        #expect(HTML.num(-0.04) == "0")
        #expect(HTML.num(-0.06) == "-0.1")
        #expect(HTML.num(3) == "3")
        #expect(HTML.num(.nan) == "0")
        #expect(HTML.compact(2500) == "2.5k")
        #expect(HTML.compact(42) == "42")
    }

    @Test func offsetsUseTheTickPrecision() {
        #expect(HTML.offset(0, step: 1000) == "0")
        #expect(HTML.offset(179_150, step: 50) == "+179.15 ms")
        #expect(HTML.offset(179_200, step: 100) == "+179.2 ms")
        #expect(HTML.offset(2_000_000, step: 500_000) == "+2.0 s")
        #expect(HTML.offset(2_000_000, step: 1_000_000) == "+2 s")
        #expect(HTML.offset(95_000, step: 1) == "+95.0 ms")
        #expect(HTML.offset(6_000_000_000, step: 1) == "+1 h 40 min")
        #expect(HTML.offset(-500, step: 1) == "−500 µs")
    }

    /// 85 ms of controller set-up before a 5 ms connection is folded; the connection gets the width.
    @Test func longEmptyStretchesAreFolded() {
        let keys: [Int64] = [9_400, 94_700, 95_000, 96_000, 97_000, 98_000, 99_000, 99_700]
        let axis = TimeAxis(start: 0, end: 99_700, keyTimes: keys, protected: [], x0: 0, width: 1000)
        #expect(axis.foldedSegments.count == 2)
        let connection = axis.x(99_700) - axis.x(94_700)
        #expect(connection > 800, "the connection spans most of the axis, not 5 %")
        #expect(axis.x(0) == 0)
        #expect(abs(axis.x(99_700) - 1000) < 0.001)
        // Monotonic everywhere.
        var last = -1.0
        for t in stride(from: Int64(0), through: 99_700, by: 100) {
            #expect(axis.x(t) >= last)
            last = axis.x(t)
        }
    }

    /// A 2 s stall that is a finding's evidence is never folded, even though nothing happens in it.
    @Test func findingSpansStayLinear() {
        let keys: [Int64] = [100_000, 150_000, 200_000, 2_200_000, 2_250_000]
        let protected = TimeAxis(start: 0, end: 2_300_000, keyTimes: keys, protected: [(200_000, 2_200_000)], x0: 0, width: 1000)
        #expect(protected.foldedSegments.isEmpty)
        let free = TimeAxis(start: 0, end: 2_300_000, keyTimes: keys, protected: [], x0: 0, width: 1000)
        #expect(free.foldedSegments.count == 1)
    }

    @Test func ticksAreRound() {
        #expect(TimeAxis.niceStep(3_700) == 5_000)
        #expect(TimeAxis.niceStep(120) == 200)
        #expect(TimeAxis.niceStep(1_000_000) == 1_000_000)
        // Past a second, steps a person counts in: 15 s, 20 min, 1 h — not 16 min 40 s.
        #expect(TimeAxis.niceStep(12_000_000) == 15_000_000)
        #expect(TimeAxis.niceStep(545_000_000) == 600_000_000)
        #expect(TimeAxis.niceStep(1_000_000_000) == 1_800_000_000)
        #expect(TimeAxis.niceStep(2_500_000_000) == 3_600_000_000)
        let hours = TimeAxis(start: 0, end: 6_000_000_000, keyTimes: [], protected: [], x0: 0, width: 1100)
        #expect(hours.ticks().map { HTML.offset($0.time, step: $0.step) }
            == ["0", "+10 min", "+20 min", "+30 min", "+40 min", "+50 min", "+1 h", "+1 h 10 min", "+1 h 20 min", "+1 h 30 min", "+1 h 40 min"])
        let axis = TimeAxis(start: 0, end: 1_000_000, keyTimes: [], protected: [], x0: 0, width: 1100)
        let steps = Set(axis.ticks().map(\.step))
        #expect(steps == [100_000])
    }

    /// A label goes to the first free spot inside the bounds, or nowhere.
    @Test func labelsNeverOverlapOrLeaveTheBounds() {
        var placer = LabelPlacer(bounds: LabelBox(x0: 100, x1: 400, y0: 0, y1: 40))
        let font = LabelFont.mark
        let a = placer.place("discovery", font, [LabelSpot(x: 120, y: 20)])
        #expect(a?.x == 120)
        // Same spot taken: the second spot (the row above) is used.
        let b = placer.place("MTU 247", font, [LabelSpot(x: 125, y: 20), LabelSpot(x: 125, y: 35)])
        #expect(b?.y == 35)
        // Near the right edge a label goes left of its mark; past the left edge, nowhere.
        let c = placer.place("subscribed", font, [LabelSpot(x: 390, y: 20), LabelSpot(x: 386, y: 20, anchorEnd: true)])
        #expect(c?.anchorEnd == true)
        #expect(placer.place("x", font, [LabelSpot(x: 90, y: 20)]) == nil)
        // Every pair of placed boxes is apart.
        for (i, p) in placer.placed.enumerated() {
            #expect(p.inside(placer.bounds))
            for q in placer.placed[(i + 1)...] { #expect(!p.intersects(q)) }
        }
        #expect(LabelFont.flag.width("Disconnection") > LabelFont.mark.width("Disconnection"), "bold 12 px is wider than 11 px")
    }

    @Test func lanesGroupConnectionsByPeer() {
        #expect(TimelineLane.ranges([1, 2, 3, 7, 9, 10]) == "1–3, 7, 9–10")
        #expect(TimelineLane.ranges([4]) == "4")
        #expect(TimelineSVG.fit("a very long peripheral name that does not fit", LabelFont(size: 13, bold: true), 120).hasSuffix("…"))
        #expect(TimelineSVG.fit("short", LabelFont(size: 13, bold: true), 120) == "short")
    }

    /// Buffers held stay held until they come back: empty buckets carry the last value.
    @Test func bufferSeriesCarriesTheLastValue() {
        var s = BufferSeries(start: 0, end: 480)
        s.record(10, link: 4, pool: 4)
        s.record(300, link: 0, pool: 0)
        #expect(s.link[10] == 4)
        #expect(s.link[200] == 4, "still held between the send and the completion")
        #expect(s.link[300] == 0)
        #expect(s.peak == 4)
    }

    @Test func samplesThinEvenly() {
        var t = TimeSamples()
        for i in 0 ..< 10_000 { t.add(Int64(i)) }
        #expect(t.total == 10_000)
        #expect(t.times.count < TimeSamples.capacity)
        #expect(t.times.count * t.stride >= 9_000)
    }

    @Test func terminalTextIsCleaned() {
        #expect(TerminalStyle.clean("name\u{1B}]0;pwned\u{07}") == "name?]0;pwned?")
        #expect(TerminalStyle.clean("ok\nnext") == "ok\nnext")
        #expect(TerminalStyle(colour: false).paint("x", .red) == "x")
        #expect(TerminalStyle(colour: true).paint("x", .red) == "\u{1B}[31mx\u{1B}[0m")
        #expect(TerminalStyle(width: 10).width == 60, "never narrower than 60 columns")
    }

    @Test func wrapKeepsTheIndent() {
        let text = ReportText.wrap("one two three four five six", indent: "  > ", width: 14)
        #expect(text == "  > one two\n    three four\n    five six\n")
        #expect(ReportText.wrap("word", indent: "", width: 10) == "word\n")
    }
}
