import BLEReplay
import Testing

/// Placeholder until the replay engineer's tests land: the target must compile.
@Suite struct BLEReplayPlaceholderTests {
    @Test func targetBuilds() { #expect(Bool(true)) }
}
