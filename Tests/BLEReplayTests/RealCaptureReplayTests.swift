import TestSupport
import Foundation
import Testing

/// The CI recipe of docs/REPLAY.md on real field logs: each capture of `../shared/captures/real/`
/// with an LE GATT peer that replays cleanly today is replayed with `replay --peer` on one
/// RootCanal (the host side to one controller, the recorded device as a twin on another of the
/// same radio). Each must replay ≥ 90 % of its steps, with no behaviour divergence in ATT (exit 0:
/// no behaviour divergence at all), every recorded connection of the device up, in under 60 s.
/// The captures that do not get there yet are listed in docs/REPLAY.md ("Real captures"), not here.
/// Skipped, with a notice, without RootCanal or without the captures.
enum RealReplayCaptures {
    static let names = [
        "android_govee_ledstrip_gatt.btsnoop",
        "android_horizon_treadmill_notify.btsnoop",
        "android_bj_led_ll_timeout_conn_cancel.btsnoop",
        "android_ledble_supervision_timeout_reconnect_loop.btsnoop",
        "android_accuchek_glucose_smp_confirm_failed_rebond.btsnoop",
        "android_blockbluelight_repeated_conn_failures.btsnoop",
        "android_xenopixel_saber_mtu517_enc_change_v2.btsnoop",
    ]

    static let available: Bool = {
        guard let dir = Repo.sharedReal else { print("notice: ../shared/captures/real is missing: real-capture replay tests skipped"); return false }
        let missing = names.filter { !FileManager.default.fileExists(atPath: dir.appendingPathComponent($0).path) }
        if !missing.isEmpty { print("notice: real captures missing (\(missing.joined(separator: ", "))): real-capture replay tests skipped") }
        return missing.isEmpty
    }()

    static func path(_ name: String) -> String { Repo.sharedReal?.appendingPathComponent(name).path ?? "/nonexistent" }
}

@Suite(.enabled(if: ReplayEnvironment.rootCanal != nil && RealReplayCaptures.available), .serialized, .liveThreads,
       .timeLimit(.minutes(3)))
struct RealCaptureReplayTests {
    @Test(arguments: RealReplayCaptures.names)
    func replaysAgainstItsTwinOnRootCanal(_ name: String) async throws {
        let rootCanal = try await RootCanal(binary: try #require(ReplayEnvironment.rootCanal))
        let result = try await CLIRun.run(["replay", RealReplayCaptures.path(name), "--hci", rootCanal.uri, "--peer", rootCanal.uri,
                                           "--timing", "fast", "--json"], timeout: 120)
        let json = try result.json()
        let divergences = try result.divergences()
        let behaviour = divergences.filter { $0["class"] as? String == "behaviour" }
        #expect(result.status == 0, "\(name): \(behaviour.prefix(3).map { $0["message"] as? String ?? "" })")
        #expect(divergences.allSatisfy { ["environment", "behaviour"].contains($0["class"] as? String ?? "") })
        let att = behaviour.filter { d in
            ["expected", "actual"].contains { ((d[$0] as? [String: Any])?["summary"] as? String ?? "").contains("ATT") }
        }
        #expect(att.isEmpty, "\(name): \(att.prefix(3).map { $0["message"] as? String ?? "" })")
        let replayed = json["replayed"] as? Int ?? 0, total = json["total"] as? Int ?? 1
        #expect(Double(replayed) >= 0.9 * Double(total), "\(name): replayed \(replayed)/\(total)")
        let seconds = json["seconds"] as? Double ?? .infinity
        #expect(seconds < 60, "\(name): \(seconds) s")
        let connections = json["connections"] as? [[String: Any]] ?? []
        #expect(!connections.isEmpty)
        for c in connections where c["peer"] as? String != nil {
            // Every connection of the twin's device came up (others' are not played: notes).
            if c["replayed"] as? Bool != true {
                let notes = json["notes"] as? [String] ?? []
                #expect(notes.contains { $0.contains("connection #\(c["index"] as? Int ?? 0) ") && $0.contains("not the twin's device") },
                        "\(name): connection \(c) did not come up")
            }
        }
        // Exit 1 on an environment divergence only when asked.
        if !divergences.isEmpty, behaviour.isEmpty {
            #expect(json["environmentDivergenceCount"] as? Int == divergences.count)
        }
    }
}
