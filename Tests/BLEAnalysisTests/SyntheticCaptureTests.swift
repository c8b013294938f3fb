import TestSupport
import BLEAnalysis
import BLECapture
import Foundation
import Testing

/// Captures Bumble cannot produce, written by this documented test-support writer (captures/README.md
/// says so): a well-behaved host never sends more than 31 bytes of legacy advertising data, and
/// Bumble's snooper always records whole packets. The committed files must equal what this code
/// writes (`BLEANALYZE_RECORD=1` rewrites them and fails, so the diff gets read).
@Suite struct SyntheticCaptureTests {
    static let t0: Int64 = 1_763_700_000_000_000   // 2025-11-21 04:40:00 UTC, fixed for byte-identical output

    /// `adv_oversize.btsnoop`:
    /// 1. LE Set Advertising Data, declared length 31, but its second AD structure (Complete Local
    ///    Name, length 30) runs past the 31 bytes → `adv.oversize` (host side);
    /// 2. its Command Complete;
    /// 3. an LE Advertising Report (ADV_IND) carrying 38 bytes of legacy advertising data → `adv.oversize`;
    /// 4. a well-formed report (counter-example: no finding).
    static func advOversize() -> [UInt8] {
        var b = CaptureBuilder(start: t0)
        let name = Array("bleanalyze-oversized-name-xx".utf8)   // 28 bytes
        var adv: [UInt8] = [0x02, 0x01, 0x06, 0x1E, 0x09] + name   // 3 + 2 + 28 = 33 bytes: runs past 31
        adv = Array(adv.prefix(31))
        b.leSetAdvertisingData(0, declared: 31, adv)
        b.commandComplete(200, 0x2008, [0x00])
        let long: [UInt8] = [0x02, 0x01, 0x06, 0x21, 0x09] + Array("bleanalyze-far-too-long-name-xyz".utf8)   // 37 + … = 38 bytes
        b.advertisingReport(99_800, long)      // ADV_IND from C0:FF:EE:00:00:01 (static random)
        let ok: [UInt8] = [0x02, 0x01, 0x06, 0x05, 0x09] + Array("ok-1".utf8)
        b.advertisingReport(100_000, ok)
        return b.bytes
    }

    /// `capture_truncated.btsnoop`: `healthy.btsnoop` with every ACL record cut to 14 bytes, as
    /// Android's btsnooz keeps them (original lengths kept) → one `mtu.capture-truncated`, no `mtu.*` warning.
    static func captureTruncated() throws -> [UInt8] {
        let source = try CaptureFile(path: AnalysisFixtures.capture("healthy.btsnoop")).records().records
        var w = BTSnoopWriter()
        for var r in source {
            if r.kind == .aclData, r.payload.count > 14 {
                r.originalLength = r.payload.count
                r.payload = Array(r.payload.prefix(14))
            }
            r.rawType = nil
            w.append(r)
        }
        return w.bytes
    }

    @Test(arguments: ["adv_oversize.btsnoop", "capture_truncated.btsnoop"])
    func committedCaptureEqualsTheWriter(name: String) throws {
        let bytes = name == "adv_oversize.btsnoop" ? Self.advOversize() : try Self.captureTruncated()
        let url = AnalysisFixtures.repoRoot.appendingPathComponent("captures/\(name)")
        if ProcessInfo.processInfo.environment["BLEANALYZE_RECORD"] != nil {
            try Data(bytes).write(to: url)
            Issue.record("wrote \(name): read it with `bleanalyze packets`, then run without BLEANALYZE_RECORD")
            return
        }
        let committed = [UInt8](try Data(contentsOf: url))
        #expect(committed == bytes, "captures/\(name) differs from what the documented writer produces")
    }
}
