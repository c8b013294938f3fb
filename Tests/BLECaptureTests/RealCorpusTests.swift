import BLECapture
import Foundation
import Testing

/// Real third-party captures in `../shared/captures/real/` (provenance in its PROVENANCE.md).
/// Record counts come from tshark 4.0.17 / btmon 5.66 as listed there; read by path, never copied.
@Suite struct RealCorpusTests {
    static let expected: [(String, CaptureFormat, UInt32, Int)] = [
        ("android_beewi_scan_malformed_adv.btsnoop", .btsnoop, 1002, 69),
        ("android_horizon_treadmill_notify.btsnoop", .btsnoop, 1002, 2572),
        ("android_oppo_empty_header_only.cfa", .btsnoop, 1002, 0),
        ("android_pongbot_prepwrite_indicate.btsnoop", .btsnoop, 1002, 8018),
        ("android_revcar_acl_only_no_hci.btsnoop", .btsnoop, 1002, 149),
        ("bluez_btmon_mgmt_realtek.btsnoop", .btsnoop, 2001, 554),
        ("macos_packetlogger_bigendian_hci.pklg", .packetlogger, 0, 2239),
        ("lell_phdr_connection_update.pcap", .pcap, 256, 288),
        ("lell_phdr_le_sc_gatt.pcapng", .pcapng, 256, 303),
    ]

    @Test func everyRealCaptureReadsWithTheExactRecordCount() throws {
        guard let dir = CaptureTestPaths.sharedReal else {
            print("notice: ../shared/captures/real absent; skipping the real-capture corpus test"); return
        }
        let present = try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { !$0.hasSuffix(".md") && $0 != "SHA256SUMS" }
        #expect(Set(present) == Set(Self.expected.map(\.0)), "a new capture in the corpus needs its expected count here")
        for (name, format, datalink, count) in Self.expected {
            let file = try CaptureFile(path: dir.appendingPathComponent(name).path)
            #expect(file.info.format == format, "\(name)")
            #expect(file.info.datalink == datalink, "\(name)")
            var kinds = Set<FrameKind>()
            let summary = file.read { kinds.insert($0.kind) }
            #expect(summary.frames == count, "\(name)")
            #expect(!summary.truncated, "\(name)")
            #expect(summary.issues.isEmpty, "\(name): \(summary.issues)")
            if Datalink.isAirCapture(datalink) {
                // Decoded by the LE link layer (BLEAnalysis/Air), every record an air packet.
                #expect(file.info.notDecodedReason == nil, "\(name)")
                #expect(kinds == [.airLE], "\(name)")
            } else {
                #expect(file.info.notDecodedReason == nil, "\(name): HCI formats are never 'unknown'")
                #expect(!kinds.contains(.unknown), "\(name)")
            }
        }
    }

    /// Cutting a real capture anywhere gives the complete records before the cut and a truncation issue.
    @Test func prefixesOfARealCapture() throws {
        guard let dir = CaptureTestPaths.sharedReal else { print("notice: corpus absent; skipping"); return }
        for name in ["macos_packetlogger_bigendian_hci.pklg", "bluez_btmon_mgmt_realtek.btsnoop"] {
            let bytes = [UInt8](try Data(contentsOf: dir.appendingPathComponent(name)))
            var g = SplitMix64Capture(seed: 42)
            for _ in 0..<60 {
                let n = 16 + Int(g.next() % UInt64(bytes.count - 16))
                let path = try CaptureTestPaths.temporaryFile("cut-" + name, Array(bytes.prefix(n)))
                let file = try CaptureFile(path: path)
                var lastEnd = 0
                let summary = file.read { f in lastEnd = f.payloadOffset + f.payload.count }
                if summary.truncated {
                    #expect(summary.issues.first?.offset == lastEnd || (summary.frames == 0), "\(name) cut at \(n)")
                } else {
                    #expect(lastEnd == n, "\(name) cut at \(n): clean end only on a record boundary")
                }
            }
        }
    }
}
