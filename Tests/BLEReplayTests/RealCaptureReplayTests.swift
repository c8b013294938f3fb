import TestSupport
import Foundation
import Testing

/// The CI recipe of docs/REPLAY.md on real field logs: each capture of `../shared/captures/real/`
/// with an LE GATT peer (the others are refused: no LE connection, no HCI packets, or the host
/// was the peripheral; docs/REPLAY.md lists them) is replayed with `replay --peer` on one
/// RootCanal (the host side to one controller, the recorded device as a twin on another of the
/// same radio). Each must replay ≥ 99.9 % of its steps, with no behaviour divergence in ATT (exit 0:
/// no behaviour divergence at all), every recorded connection of the device up, in under 60 s.
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
        "android_domyos_treadmill_supervision_timeout_pending_write.btsnoop",
        "android_page_timeouts_supervision_timeout_writecmd.btsnoop",
        "android_dott_badge_bulk_writecmd_mtu517_dle251.btsnoop",
        "android_okin_bed_broadcom_vendor.btsnoop",
        "android_jkbms_long_session_reconnects.btsnoop",
        "android_miband2_legacy_pairing_gatt.btsnoop",
        "android_pongbot_prepwrite_indicate.btsnoop",
        "android_magicblue_bulb_conn_failed_0x3e.btsnoop",
        "android_lolan_bms_acl_continuations_0edc.btsnoop",
        "android_irunning_treadmill_0edc_vendor_acl.cfa",
        "btstack_packetlogger_govee_btled.pklg",
        "android_nexxtender_charger_smp_passkey_prepwrite.cfa",
        "android_lightsapp_bulb_four_connections.btsnoop",
        "android_darkelf_laser_projector_writecmd.btsnoop",
        "ios_packetlogger_bikego_ekd01_multidevice_connfail.pklg",
        "bluez_btmon_ble_keyboard_hid_legacy_pairing.btsnoop",
        // ATT only, on a link open before the log starts: the run connects to the twin itself.
        "android_ant_bms_commands_att_only.btsnoop",
        "android_jbd_bms_v13_repeated_discovery_att_only.btsnoop",
        "android_lumentree_inverter_att_only.btsnoop",
        "android_tianpower_bms_att_only_4h_gap.btsnoop",
        "android_treadmill_f15_att_only.btsnoop",
        "android_jkbms_b5a24s_att_app_error.btsnoop",
        "android_revcar_acl_only_no_hci.btsnoop",
        "jbd_bms_auth_datalink1001_att.btsnoop",
        "ios_packetlogger_peripage_printer_le.pklg",
        "android_seplos_bms_v2_notify_mtu512.btsnoop",
        "android_daly_balancer_mtu512_writecmd.btsnoop",
        "android_votronic_att_only_indications.btsnoop",
    ]

    static let available: Bool = {
        guard let dir = Repo.sharedReal else { print("notice: ../shared/captures/real is missing: real-capture replay tests skipped"); return false }
        let missing = names.filter { !FileManager.default.fileExists(atPath: dir.appendingPathComponent($0).path) }
        if !missing.isEmpty { print("notice: real captures missing (\(missing.joined(separator: ", "))): real-capture replay tests skipped") }
        return missing.isEmpty
    }()

    static func path(_ name: String) -> String { Repo.sharedReal?.appendingPathComponent(name).path ?? "/nonexistent" }

    /// Every other capture of the directory (the corpus's own files aside) has no LE GATT peer:
    /// `replay --peer` must refuse it (exit 2) with one of these reasons.
    static var others: [String] {
        let all = (try? FileManager.default.contentsOfDirectory(atPath: Repo.sharedReal?.path ?? "/nonexistent")) ?? []
        return all.filter { !names.contains($0) && !["PROVENANCE.md", "SHA256SUMS"].contains($0) && !$0.hasPrefix(".") }.sorted()
    }
    static let refusals = ["no LE connection in the recording", "the recording's host was the peripheral", "no HCI packets to replay"]
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
        #expect(Double(replayed) >= 0.999 * Double(total), "\(name): replayed \(replayed)/\(total)")
        let seconds = json["seconds"] as? Double ?? .infinity
        #expect(seconds < 60, "\(name): \(seconds) s")
        let connections = json["connections"] as? [[String: Any]] ?? []
        #expect(!connections.isEmpty)
        let notes = json["notes"] as? [String] ?? []
        for c in connections where c["replayed"] as? Bool != true {
            // Every connection of the twin's device came up; the others are not played, each
            // with a note saying why (another device, or a link open before the log starts).
            let why = c["openBeforeLog"] as? Bool == true ? "was open before the log starts" : "not the twin's device"
            #expect(notes.contains { $0.contains("connection #\(c["index"] as? Int ?? 0) ") && $0.contains(why) },
                    "\(name): connection \(c) did not come up")
        }
        // Exit 1 on an environment divergence only when asked.
        if !divergences.isEmpty, behaviour.isEmpty {
            #expect(json["environmentDivergenceCount"] as? Int == divergences.count)
        }
    }

    /// The captures not in `names` are refused, each with its reason, on a live RootCanal (so the
    /// refusal is the recording's, not a transport failure): the test covers every capture.
    @Test func everyOtherCaptureIsRefusedWithItsReason() async throws {
        let others = RealReplayCaptures.others
        try #require(!others.isEmpty)
        let rootCanal = try await RootCanal(binary: try #require(ReplayEnvironment.rootCanal))
        for name in others {
            let result = try await CLIRun.run(["replay", RealReplayCaptures.path(name), "--hci", rootCanal.uri, "--peer", rootCanal.uri, "--json"],
                                              timeout: 60)
            #expect(result.status == 2, "\(name): exit \(result.status)")
            #expect(RealReplayCaptures.refusals.contains { result.stderr.contains($0) }, "\(name): \(result.stderr.suffix(300))")
        }
    }
}
