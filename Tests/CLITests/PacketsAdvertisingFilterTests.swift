import TestSupport
import Foundation
import Testing

/// `packets --adv` selects advertising by code (`AdvertisingTraffic`: command opcodes and the
/// Command Complete/Status answering them, LE Meta subevents, mgmt codes, air packets on the
/// advertising access address), never by display name. Checked against tshark, which names every
/// advertising command, answer and report "…Advertis…": our frames must hold all of tshark's, and
/// every frame we add must be one tshark names otherwise for a reason read from the frames.
@Suite struct PacketsAdvertisingFilterTests {
    static let hasTshark = CLI.tool("tshark", ["--version"])

    /// What tshark does not call advertising but is: scan response data (Core v5.4 Vol 4 Part E
    /// 7.8.8, 7.8.55: the advertiser's second payload) and its Command Complete; Android's vendor
    /// advertising commands (OGF 0x3F OCF 0x154/0x157/0x158) that tshark names only for Broadcom;
    /// BlueZ mgmt records (tshark shows them as control commands and events).
    static let explained = ["Scan Response Data", "opcode 0xFD54", "opcode 0xFD57", "opcode 0xFD58",
                            "Opcode: Control Command", "Opcode: Control Event"]

    func ours(_ capture: String) throws -> Set<Int> {
        let r = try CLI.run(["packets", capture, "--adv", "--json"])
        #expect(r.status == 0, "\(capture): \(r.stderr)")
        return Set(r.stdout.split(separator: "\n").compactMap { line in
            (try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])?["frame"] as? Int
        })
    }

    /// Frame number → tshark's Info column.
    func tsharkInfo(_ capture: String) throws -> [Int: String] {
        let out = try #require(Tool.run("tshark", ["-r", capture, "-T", "fields", "-e", "frame.number", "-e", "_ws.col.Info"]))
        var info: [Int: String] = [:]
        for line in out.split(separator: "\n") {
            let parts = line.split(separator: "\t", maxSplits: 1, omittingEmptySubsequences: false)
            if let n = Int(parts[0]) { info[n] = parts.count > 1 ? String(parts[1]) : "" }
        }
        return info
    }

    @Test(.enabled(if: CLI.sharedReal != nil && hasTshark, "needs ../shared/captures/real and tshark"),
          arguments: ["android_dsp408_spp_a2dp_broadcom_vendor.btsnoop",   // extended advertising, Broadcom APCF
                      "android_miband2_legacy_pairing_gatt.btsnoop",       // legacy scanning, vendor APCF
                      "android_horizon_treadmill_notify.btsnoop",
                      "android_beewi_scan_malformed_adv.btsnoop",          // malformed reports
                      "bluez_btmon_mgmt_realtek.btsnoop"])                 // BlueZ mgmt advertising
    func advertisingFramesAreTsharks(_ name: String) throws {
        let capture = try #require(CLI.sharedReal).appendingPathComponent(name).path
        let info = try tsharkInfo(capture)
        let theirs = Set(info.filter { $0.value.contains("Advertis") }.keys)
        try #require(!theirs.isEmpty, "tshark names no advertising frame in \(name)")
        let ours = try ours(capture)
        let missing = theirs.subtracting(ours).sorted()
        #expect(missing.isEmpty, "\(missing.count) advertising frames (tshark) missing from packets --adv: \(missing.prefix(20))")
        let unexplained = ours.subtracting(theirs).filter { n in !Self.explained.contains { info[n]?.contains($0) == true } }.sorted()
        #expect(unexplained.isEmpty, "\(unexplained.count) frames packets --adv shows that tshark does not call advertising: \(unexplained.prefix(20))")
    }

    /// The project's legacy advertiser: Set Advertising Parameters/Data/Scan Response Data/Enable
    /// and their Command Completes, and nothing of the connection that follows.
    @Test(.enabled(if: hasTshark, "needs tshark"))
    func legacyAdvertiser() throws {
        let capture = CLI.capture("adv_not_stopped.btsnoop")
        let info = try tsharkInfo(capture)
        let ours = try ours(capture)
        let expected = Set(info.filter { $0.value.contains("Advertis") || $0.value.contains("Scan Response Data") }.keys)
        #expect(ours == expected)
        #expect(ours.allSatisfy { !(info[$0] ?? "").contains("ATT") })
    }
}
