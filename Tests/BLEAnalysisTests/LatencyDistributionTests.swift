@testable import BLEAnalysis
import Testing

/// `LatencyDistribution` (the answer times `diff` compares): median and p95 within the 5 % of a
/// bucket against the exact nearest-rank quantiles of the same values, the maximum exact.
@Suite struct LatencyDistributionTests {
    static func exact(_ sorted: [Int64], _ q: Double) -> Int64 {
        sorted[max(1, Int((q * Double(sorted.count)).rounded(.up))) - 1]
    }

    @Test("median and p95 within 5 %, max and its frame exact, on skewed values")
    func quantiles() {
        var d = LatencyDistribution()
        var values: [Int64] = []
        var x: UInt64 = 0x9E37_79B9_7F4A_7C15
        for frame in 1...1000 {
            x = x &* 6364136223846793005 &+ 1442695040888963407
            // Mostly a connection event (7.5 ms), a tail up to ~0.5 s.
            let v = Int64(7_500 + (x >> 33) % 3_000) * (frame % 20 == 0 ? Int64(1 + (x >> 60)) * 4 : 1)
            values.append(v)
            d.add(v, frame: frame)
        }
        let sorted = values.sorted()
        for q in [0.5, 0.95] {
            let got = Double(d.quantile(q) ?? 0), want = Double(Self.exact(sorted, q))
            #expect(abs(got - want) <= 0.05 * want, "q \(q): \(got) vs \(want)")
        }
        #expect(d.max == sorted.last && d.count == 1000)
        #expect(values[d.maxFrame - 1] == d.max)
        #expect(LatencyDistribution().median == nil)
        var zero = LatencyDistribution()
        zero.add(0, frame: 3)
        #expect(zero.median == 0 && zero.maxFrame == 3)
    }
}
