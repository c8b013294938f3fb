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
        // Second round (PROVENANCE.md "Added in the second round"): counts from tshark 4.0.17.
        ("android_ant_bms_commands_att_only.btsnoop", .btsnoop, 1002, 3334),
        ("android_bj_led_ll_timeout_conn_cancel.btsnoop", .btsnoop, 1002, 1220),
        ("android_dsp408_spp_a2dp_broadcom_vendor.btsnoop", .btsnoop, 1002, 16928),
        ("android_govee_ledstrip_gatt.btsnoop", .btsnoop, 1002, 557),
        ("android_jbd_bms_v13_repeated_discovery_att_only.btsnoop", .btsnoop, 1002, 551),
        ("android_jkbms_b5a24s_att_app_error.btsnoop", .btsnoop, 1002, 2496),
        ("android_jkbms_long_session_reconnects.btsnoop", .btsnoop, 1002, 16246),
        ("android_leafspy_obd_spp_page_timeout.btsnoop", .btsnoop, 1002, 10754),
        ("android_lumentree_inverter_att_only.btsnoop", .btsnoop, 1002, 1304),
        ("android_miband2_legacy_pairing_gatt.btsnoop", .btsnoop, 1002, 14598),
        ("android_okin_bed_broadcom_vendor.btsnoop", .btsnoop, 1002, 2352),
        ("android_page_timeouts_supervision_timeout_writecmd.btsnoop", .btsnoop, 1002, 7250),
        ("android_treadmill_f15_att_only.btsnoop", .btsnoop, 1002, 218),
        ("jbd_bms_auth_datalink1001_att.btsnoop", .btsnoop, 1001, 214),
        ("blueheron_packetlogger_six_reconnects.pklg", .packetlogger, 0, 418),
        ("btstack_packetlogger_govee_btled.pklg", .packetlogger, 0, 374),
        ("ios_packetlogger_peripage_printer_le.pklg", .packetlogger, 0, 721),
        ("nrf_sniffer_elk_bledob_att_only.pcapng", .pcapng, 272, 197),
        ("nrf_sniffer_idealled_set_collection.pcapng", .pcapng, 272, 9646),
        ("nrf_sniffer_surplife_led_long.pcapng", .pcapng, 272, 31131),
        // Third round: counts from tshark 4.0.17 (`tshark -r F -T fields -e frame.number | wc -l`).
        ("android_accuchek_glucose_smp_confirm_failed_rebond.btsnoop", .btsnoop, 1002, 28624),
        ("android_blockbluelight_repeated_conn_failures.btsnoop", .btsnoop, 1002, 2124),
        ("android_carkit_classic_hfp_pbap_0edc_acl.btsnoop", .btsnoop, 1002, 4960),
        ("android_domyos_treadmill_supervision_timeout_pending_write.btsnoop", .btsnoop, 1002, 5218),
        ("android_dott_badge_bulk_writecmd_mtu517_dle251.btsnoop", .btsnoop, 1002, 9569),
        ("android_irunning_treadmill_0edc_vendor_acl.cfa", .btsnoop, 1002, 10396),
        ("android_ledble_supervision_timeout_reconnect_loop.btsnoop", .btsnoop, 1002, 1354),
        ("android_lolan_bms_acl_continuations_0edc.btsnoop", .btsnoop, 1002, 927),
        ("android_magicblue_bulb_conn_failed_0x3e.btsnoop", .btsnoop, 1002, 321),
        ("android_tianpower_bms_att_only_4h_gap.btsnoop", .btsnoop, 1002, 3321),
        ("android_xenopixel_saber_mtu517_enc_change_v2.btsnoop", .btsnoop, 1002, 29126),
        ("lell_phdr_whad_btmesh_pbadv_provisioning.pcap", .pcap, 256, 257),
        ("lell_phdr_whad_legacy_pairing_encrypted.pcap", .pcap, 256, 1604),
        ("lell_phdr_whad_ltk_reconnect_encrypted.pcap", .pcap, 256, 315),
        // Fourth round: counts from tshark 4.0.17 (`tshark -r F -T fields -e frame.number | wc -l`, = capinfos -c).
        ("android_nexxtender_charger_smp_passkey_prepwrite.cfa", .btsnoop, 1002, 10931),
        ("android_lightsapp_bulb_four_connections.btsnoop", .btsnoop, 1002, 1147),
        ("android_seplos_bms_v2_notify_mtu512.btsnoop", .btsnoop, 1002, 596),
        ("android_daly_balancer_mtu512_writecmd.btsnoop", .btsnoop, 1002, 273),
        ("android_votronic_att_only_indications.btsnoop", .btsnoop, 1002, 842),
        ("android_darkelf_laser_projector_writecmd.btsnoop", .btsnoop, 1002, 695),
        ("ios_packetlogger_bikego_ekd01_multidevice_connfail.pklg", .packetlogger, 0, 50027),
        ("bluez_btmon_ble_keyboard_hid_legacy_pairing.btsnoop", .btsnoop, 2001, 1795),
        ("lell_phdr_bsniffhub_phy_update_no_att.pcap", .pcap, 256, 697),
    ]

    @Test(.enabled(if: CaptureTestPaths.sharedReal != nil, "../shared/captures/real is absent"))

    func everyRealCaptureReadsWithTheExactRecordCount() throws {
        let dir = try #require(CaptureTestPaths.sharedReal)
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
    @Test(.enabled(if: CaptureTestPaths.sharedReal != nil, "../shared/captures/real is absent"))
    func prefixesOfARealCapture() throws {
        let dir = try #require(CaptureTestPaths.sharedReal)
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
