import Testing
@testable import BLECapture

/// dumpstate's header line `Build fingerprint: '…'` (bugreport main text file).
@Suite struct BuildFingerprintTests {
    static func find(_ text: String) -> String? { BuildFingerprint.find(in: Array(text.utf8)) }

    @Test func findsTheQuotedValueInTheHeader() {
        let header = "========================================================\n== dumpstate: 2024-03-20 10:00:00\n"
            + "========================================================\n\nBuild: AP1A.240305.019\n"
            + "Build fingerprint: 'google/husky/husky:14/AP1A.240305.019/11413474:user/release-keys'\nBootloader: ripcurrent\n"
        #expect(Self.find(header) == "google/husky/husky:14/AP1A.240305.019/11413474:user/release-keys")
    }

    @Test(arguments: [
        "",                                                   // nothing
        "Build fingerprint: '",                               // cut after the marker
        "Build fingerprint: 'google/husky/husky:14",          // no closing quote
        "Build fingerprint: 'google/husky\nnext line'",       // the quote is on another line
        "Build fingerprint: ''\n",                            // empty
        "Build fingerprint: '" + String(repeating: "x", count: 300) + "'\n",   // longer than any fingerprint
    ])
    func rejectsWhatIsNotAFingerprint(_ text: String) {
        #expect(Self.find(text) == nil)
    }

    @Test func looksOnlyAtTheStartOfTheFile() {
        let late = String(repeating: "log line\n", count: 1000) + "Build fingerprint: 'a/b/c:1/X/1:user/k'\n"
        #expect(Self.find(late) == nil, "beyond the first \(BuildFingerprint.searchedBytes) bytes")
    }
}
