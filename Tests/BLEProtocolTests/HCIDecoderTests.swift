import Testing
import BLEBytes
@testable import BLEProtocol

/// What a decoded field must be.
enum HCIExpect: Sendable {
    case int(UInt64)
    /// The name a named integer shows.
    case name(String)
    case flags([String])
    case address(String)
    case bytes(String)
    case text(String)
    /// A scaled integer's value in display units (ms, µs, s).
    case scaled(Double)
    /// Number of items of a list.
    case count(Int)
}

/// One hex vector (H4 packet body, without the H4 type byte), its layer name and field checks.
struct HCIVector: Sendable, CustomTestStringConvertible {
    let type: HCIPacketType
    let hex: String
    let name: String
    let checks: [(String, HCIExpect)]
    init(_ type: HCIPacketType, _ name: String, _ hex: String, _ checks: [(String, HCIExpect)] = []) {
        (self.type, self.name, self.hex, self.checks) = (type, name, hex, checks)
    }
    var testDescription: String { "\(name) [\(hex.prefix(24))…]" }
    var bytes: [UInt8] { HCITest.bytes(hex) }
}

/// Representative packets, Core v5.4 Vol 4 Part E 7.1–7.8. Addresses: C0:FF:EE:00:00:01 (random),
/// 11:22:33:44:55:66 (public). Handles 0x0040/0x0041 (LE ACL), 0x000b (BR/EDR ACL), 0x0060 (CIS).
enum HCIVectors {
    static let decoded: [HCIVector] = [
        // LE Set Scan Parameters: Active, Interval 60 ms (0x0060), Window 30 ms (0x0030), Public, Accept all
        HCIVector(.command, "LE Set Scan Parameters", "0b 20 07 01 60 00 30 00 00 00", [
            ("Type", .name("Active")), ("Interval", .scaled(60)), ("Window", .scaled(30)),
            ("Own Address Type", .name("Public")), ("Filter Policy", .name("Accept all"))]),
        // LE Create Connection: scan 60/60 ms, peer address, Random C0:FF:EE:00:00:01, own Public,
        // interval 30–50 ms, latency 0, supervision timeout 5000 ms, CE length 0
        HCIVector(.command, "LE Create Connection",
                  "0d 20 19 60 00 60 00 00 01 01 00 00 ee ff c0 00 18 00 28 00 00 00 f4 01 00 00 00 00", [
            ("Filter Policy", .name("Peer address")), ("Peer Address Type", .name("Random")),
            ("Peer Address", .address("C0:FF:EE:00:00:01")), ("Min Connection Interval", .scaled(30)),
            ("Max Connection Interval", .scaled(50)), ("Max Latency", .int(0)), ("Supervision Timeout", .scaled(5000))]),
        // Disconnect: handle 0x0040, Remote User Terminated Connection (0x13)
        HCIVector(.command, "Disconnect", "06 04 03 40 00 13", [
            ("Handle", .int(0x40)), ("Reason", .int(0x13)), ("Reason", .name("Remote User Terminated Connection"))]),
        // Command Complete: Reset, ncmd 1, Success
        HCIVector(.event, "Command Complete", "0e 04 01 03 0c 00", [
            ("Num HCI Command Packets", .int(1)), ("Opcode", .name("Reset")), ("Status", .name("Success"))]),
        // Command Complete: LE Read Buffer Size, Success, 251 bytes × 15 packets
        HCIVector(.event, "Command Complete", "0e 07 01 02 20 00 fb 00 0f", [
            ("Opcode", .name("LE Read Buffer Size")), ("Data Packet Length", .int(251)), ("Num Data Packets", .int(15))]),
        // Command Complete: Read Local Version Information, HCI 5.3 rev 0x000e, LMP 5.3, Nordic (0x0059), subversion 0x010b
        HCIVector(.event, "Command Complete", "0e 0c 01 01 10 00 0c 0e 00 0c 59 00 0b 01", [
            ("Opcode", .name("Read Local Version Information")), ("HCI Version", .name("5.3")), ("HCI Revision", .int(0x0e)),
            ("Manufacturer", .int(0x59)), ("Manufacturer", .name("Nordic Semiconductor ASA")), ("LMP Subversion", .int(0x010b))]),
        // Command Status: Success, ncmd 1, LE Create Connection
        HCIVector(.event, "Command Status", "0f 04 00 01 0d 20", [
            ("Status", .name("Success")), ("Num HCI Command Packets", .int(1)), ("Opcode", .name("LE Create Connection"))]),
        // Disconnection Complete: Success, handle 0x0040, reason Remote User Terminated Connection
        HCIVector(.event, "Disconnect Complete", "05 04 00 40 00 13", [
            ("Status", .name("Success")), ("Handle", .int(0x40)), ("Reason", .int(0x13)),
            ("Reason", .name("Remote User Terminated Connection"))]),
        // Number Of Completed Packets: 2 handles, 0x0040 × 1, 0x0041 × 2
        HCIVector(.event, "Number of Completed Packets", "13 09 02 40 00 01 00 41 00 02 00", [
            ("Handles", .count(2)), ("Handles[0].Handle", .int(0x40)), ("Handles[0].Count", .int(1)),
            ("Handles[1].Handle", .int(0x41)), ("Handles[1].Count", .int(2))]),
        // Encryption Change: Success, handle 0x0040, encryption on
        HCIVector(.event, "Encryption Change", "08 04 00 40 00 01", [
            ("Handle", .int(0x40)), ("Encryption", .name("On (AES-CCM for LE, E0 for BR/EDR)"))]),
        // LE Connection Complete: Success, handle 0x0040, Central, Random C0:FF:EE:00:00:01, 30 ms, latency 0,
        // timeout 5000 ms, clock accuracy 50 ppm
        HCIVector(.event, "LE Meta Event", "3e 13 01 00 40 00 00 01 01 00 00 ee ff c0 18 00 00 00 f4 01 05", [
            ("Subevent", .name("LE Connection Complete")), ("Status", .name("Success")), ("Handle", .int(0x40)),
            ("Role", .name("Central")), ("Peer Address Type", .name("Random")), ("Peer Address", .address("C0:FF:EE:00:00:01")),
            ("Connection Interval", .scaled(30)), ("Supervision Timeout", .scaled(5000)), ("Central Clock Accuracy", .name("50 ppm"))]),
        // LE Enhanced Connection Complete v1: handle 0x0041, Peripheral, Public Identity 11:22:33:44:55:66,
        // local RPA 5A:4B:3C:2D:1E:0F, peer RPA zero, 45 ms, latency 4, timeout 2000 ms, 500 ppm
        HCIVector(.event, "LE Meta Event",
                  "3e 1f 0a 00 41 00 01 02 66 55 44 33 22 11 0f 1e 2d 3c 4b 5a 00 00 00 00 00 00 24 00 04 00 c8 00 00", [
            ("Subevent", .name("LE Enhanced Connection Complete")), ("Role", .name("Peripheral")),
            ("Peer Address Type", .name("Public Identity")), ("Peer Address", .address("11:22:33:44:55:66")),
            ("Local Resolvable Private Address", .address("5A:4B:3C:2D:1E:0F")), ("Connection Interval", .scaled(45)),
            ("Peripheral Latency", .int(4)), ("Supervision Timeout", .scaled(2000)), ("Central Clock Accuracy", .name("500 ppm"))]),
        // LE Enhanced Connection Complete v2: as v1, plus advertising handle 1 and sync handle 0xffff (none)
        HCIVector(.event, "LE Meta Event",
                  "3e 22 29 00 41 00 01 02 66 55 44 33 22 11 0f 1e 2d 3c 4b 5a 00 00 00 00 00 00 24 00 04 00 c8 00 00 01 ff ff", [
            ("Subevent", .name("LE Enhanced Connection Complete v2")), ("Peer Address", .address("11:22:33:44:55:66")),
            ("Connection Interval", .scaled(45)), ("Advertising Handle", .int(1)), ("Sync Handle", .int(0xFFFF))]),
        // LE Advertising Report, 2 reports (the PureSwift bug: both must decode):
        //   ADV_IND, Random C0:FF:EE:00:00:01, data "02 01 06" (Flags), RSSI -60 dBm
        //   SCAN_RSP, Public 11:22:33:44:55:66, data "05 09 54 65 73 74" (Complete Local Name "Test"), RSSI -80 dBm
        HCIVector(.event, "LE Meta Event",
                  "3e 1f 02 02 00 01 01 00 00 ee ff c0 03 02 01 06 c4 04 00 66 55 44 33 22 11 06 05 09 54 65 73 74 b0", [
            ("Subevent", .name("LE Advertising Report")), ("Reports", .count(2)),
            ("Reports[0].Event Type", .name("Connectable undirected - ADV_IND")), ("Reports[0].Address Type", .name("Random")),
            ("Reports[0].Address", .address("C0:FF:EE:00:00:01")), ("Reports[0].Data", .count(1)), ("Reports[0].RSSI", .int(0xc4)),
            ("Reports[1].Event Type", .name("Scan response - SCAN_RSP")), ("Reports[1].Address", .address("11:22:33:44:55:66")),
            ("Reports[1].Data", .count(1)), ("Reports[1].RSSI", .int(0xb0))]),
        // LE Extended Advertising Report, 1 report: legacy connectable scannable (0x0013), Random C0:FF:EE:00:00:01,
        // LE 1M / no secondary, SID 0xff, TX power 127 (n/a), RSSI -56 dBm, no periodic, no direct address, Flags AD
        HCIVector(.event, "LE Meta Event",
                  "3e 1d 0d 01 13 00 01 01 00 00 ee ff c0 01 00 ff 7f c8 00 00 00 00 00 00 00 00 00 03 02 01 06", [
            ("Subevent", .name("LE Extended Advertising Report")), ("Reports", .count(1)),
            ("Reports[0].Event Type", .flags(["Connectable", "Scannable", "Use legacy advertising PDUs"])),
            ("Reports[0].Address", .address("C0:FF:EE:00:00:01")), ("Reports[0].Primary PHY", .name("LE 1M")),
            ("Reports[0].Secondary PHY", .name("No packets")), ("Reports[0].RSSI", .int(0xc8)), ("Reports[0].Data", .count(1))]),
        // LE Data Length Change: handle 0x0040, TX 251 bytes / 2120 µs, RX 251 bytes / 2120 µs
        HCIVector(.event, "LE Meta Event", "3e 0b 07 40 00 fb 00 48 08 fb 00 48 08", [
            ("Subevent", .name("LE Data Length Change")), ("Max TX Octets", .int(251)), ("Max TX Time", .int(2120)),
            ("Max RX Octets", .int(251)), ("Max RX Time", .int(2120))]),
        // LE PHY Update Complete: Success, handle 0x0040, TX LE 2M, RX LE 2M
        HCIVector(.event, "LE Meta Event", "3e 06 0c 00 40 00 02 02", [
            ("Subevent", .name("LE PHY Update Complete")), ("TX PHY", .name("LE 2M")), ("RX PHY", .name("LE 2M"))]),
        // LE Connection Update Complete: Success, handle 0x0040, 7.5 ms, latency 0, timeout 420 ms
        HCIVector(.event, "LE Meta Event", "3e 0a 03 00 40 00 06 00 00 00 2a 00", [
            ("Subevent", .name("LE Connection Update Complete")), ("Connection Interval", .scaled(7.5)),
            ("Supervision Timeout", .scaled(420))]),
        // Vendor command (OGF 0x3f, OCF 0x001) and vendor event: shown raw, no error
        HCIVector(.command, "Vendor 0xFC01", "01 fc 03 aa bb cc", [("Parameters", .bytes("aa bb cc"))]),
        HCIVector(.event, "Vendor", "ff 03 01 02 03", [("Data", .bytes("01 02 03"))]),
        // Unknown opcode (0x08|0x03ff), unknown event (0x7f), unknown LE subevent (0x7f): raw, no error
        HCIVector(.command, "Unknown", "ff 23 02 01 02", [("Parameters", .bytes("01 02"))]),
        HCIVector(.event, "Unknown", "7f 02 01 02", [("Parameters", .bytes("01 02"))]),
        HCIVector(.event, "LE Meta Event", "3e 03 7f 01 02", [("Subevent", .int(0x7f)), ("Parameters", .bytes("01 02"))]),
        // Command Complete with only the Status (Read BD ADDR, Command Disallowed): accepted, as btmon does
        HCIVector(.event, "Command Complete", "0e 04 01 09 10 0c", [
            ("Opcode", .name("Read BD ADDR")), ("Status", .name("Command Disallowed"))]),
        // Command Complete for an unknown opcode: Status, then the return parameters raw
        HCIVector(.event, "Command Complete", "0e 06 01 ff 23 00 aa bb", [
            ("Opcode", .name("Unknown")), ("Status", .name("Success")), ("Return Parameters", .bytes("aa bb"))]),

        // BR/EDR
        // Sniff Mode: handle 0x000b, max 500 ms (0x0320), min 11.25 ms (0x0012), attempt 5 ms (4), timeout 1.25 ms (1)
        HCIVector(.command, "Sniff Mode", "03 08 0a 0b 00 20 03 12 00 04 00 01 00", [
            ("Handle", .int(0x0b)), ("Max Interval", .scaled(500)), ("Min Interval", .scaled(11.25)), ("Attempt", .scaled(5)),
            ("Timeout", .scaled(1.25))]),
        HCIVector(.command, "Exit Sniff Mode", "04 08 02 0b 00", [("Handle", .int(0x0b))]),
        // Write Link Policy Settings: handle 0x000b, role switch + sniff (0x0005)
        HCIVector(.command, "Write Link Policy Settings", "0d 08 04 0b 00 05 00", [
            ("Link Policy", .flags(["Enable Role Switch", "Enable Sniff Mode"]))]),
        // Write Page Scan Activity: interval 1280 ms (0x0800), window 11.25 ms (0x0012)
        HCIVector(.command, "Write Page Scan Activity", "1c 0c 04 00 08 12 00", [("Interval", .scaled(1280)), ("Window", .scaled(11.25))]),
        // IO Capability Request Reply: 11:22:33:44:55:66, DisplayYesNo, no OOB, MITM general bonding
        HCIVector(.command, "IO Capability Request Reply", "2b 04 09 66 55 44 33 22 11 01 00 05", [
            ("Address", .address("11:22:33:44:55:66")), ("IO Capability", .name("DisplayYesNo")),
            ("OOB Data", .name("OOB authentication data not present")),
            ("Authentication", .name("MITM Protection Required - General Bonding"))]),
        // Command Complete: Read Encryption Key Size, Success, handle 0x000b, 16 bytes
        HCIVector(.event, "Command Complete", "0e 07 01 08 14 00 0b 00 10", [
            ("Opcode", .name("Read Encryption Key Size")), ("Handle", .int(0x0b)), ("Key Size", .int(16))]),
        // Command Complete: Read AFH Channel Map, handle 0x000b, AFH enabled, 79 channels used
        HCIVector(.event, "Command Complete", "0e 11 01 06 14 00 0b 00 01 ff ff ff ff ff ff ff ff ff 7f", [
            ("Opcode", .name("Read AFH Channel Map")), ("Mode", .name("Enabled")), ("Channel Map", .bytes("ff ff ff ff ff ff ff ff ff 7f"))]),
        // Inquiry Result, 2 responses: 11:22:33:44:55:66 R1 class 0x5a020c clock offset 0x1234;
        // C0:FF:EE:00:00:01 R0 class 0x240404 clock offset 0
        HCIVector(.event, "Inquiry Result",
                  "02 1d 02 66 55 44 33 22 11 01 00 00 0c 02 5a 34 12 01 00 00 ee ff c0 00 00 00 04 04 24 00 00", [
            ("Responses", .count(2)), ("Responses[0].Address", .address("11:22:33:44:55:66")),
            ("Responses[0].Page Scan Repetition Mode", .name("R1")), ("Responses[0].Class", .int(0x5a020c)),
            ("Responses[0].Clock Offset", .int(0x1234)), ("Responses[1].Address", .address("C0:FF:EE:00:00:01")),
            ("Responses[1].Class", .int(0x240404))]),
        // Synchronous Connection Complete: Success, handle 6, 11:22:33:44:55:66, eSCO, interval 12 slots, window 2,
        // RX/TX 60 bytes, Transparent Data
        HCIVector(.event, "Synchronous Connect Complete", "2c 11 00 06 00 66 55 44 33 22 11 02 0c 02 3c 00 3c 00 03", [
            ("Handle", .int(6)), ("Link Type", .name("eSCO")), ("Transmission Interval", .int(12)),
            ("RX Packet Length", .int(60)), ("Air Mode", .name("Transparent Data"))]),
        // Mode Change: Success, handle 0x000b, Sniff, interval 500 ms
        HCIVector(.event, "Mode Change", "14 06 00 0b 00 02 20 03", [("Mode", .name("Sniff")), ("Interval", .scaled(500))]),
        // Sniff Subrating: Success, handle 0x000b, max TX/RX latency 500 ms, timeouts 0
        HCIVector(.event, "Sniff Subrating", "2e 0b 00 0b 00 20 03 20 03 00 00 00 00", [
            ("Handle", .int(0x0b)), ("Max TX Latency", .scaled(500)), ("Max RX Latency", .scaled(500))]),
        // Keypress Notification: 11:22:33:44:55:66, Passkey digit entered
        HCIVector(.event, "Keypress Notification", "3c 07 66 55 44 33 22 11 01", [("Type", .name("Passkey digit entered"))]),
        // Link Key Notification: key type 7 (unauthenticated P-256); the key is kept as secret
        HCIVector(.event, "Link Key Notification",
                  "18 17 66 55 44 33 22 11 00 11 22 33 44 55 66 77 88 99 aa bb cc dd ee ff 07", [
            ("Key Type", .name("Unauthenticated Combination Key from P-256")),
            ("Link Key", .bytes("00 11 22 33 44 55 66 77 88 99 aa bb cc dd ee ff"))]),
        // Number Of Completed Data Blocks: 16 blocks total, handle 0x0040: 1 packet, 2 blocks
        HCIVector(.event, "Number of Completed Data Blocks", "48 09 10 00 01 40 00 01 00 02 00", [
            ("Total Num Data Blocks", .int(16)), ("Handles[0].Num Completed Packets", .int(1)),
            ("Handles[0].Num Completed Blocks", .int(2))]),
        // Encryption Change v2: Success, handle 0x0040, on, key size 16
        HCIVector(.event, "Encryption Change v2", "59 05 00 40 00 01 10", [("Key Size", .int(16))]),

        // LE, Core 5.1–5.4
        // LE Set Host Feature: bit 32 (Isochronous Channels (Host Support)) = 1
        HCIVector(.command, "LE Set Host Feature", "74 20 02 20 01", [
            ("Bit Number", .name("Isochronous Channels (Host Support)")), ("Bit Value", .name("Enabled"))]),
        // LE Set CIG Parameters: CIG 1, SDU interval 10000 µs both ways, SCA 251-500 ppm, sequential, unframed,
        // latency 10 ms both ways, 2 CIS: #0 40/40 bytes LE 2M RTN 2; #1 40/0 bytes
        HCIVector(.command, "LE Set CIG Parameters",
                  "62 20 21 01 10 27 00 10 27 00 00 00 00 0a 00 0a 00 02 00 28 00 28 00 02 02 02 02 01 28 00 00 00 02 02 02 02", [
            ("CIG ID", .int(1)), ("SDU Interval C To P", .scaled(10000)), ("Worst Case SCA", .name("251-500 ppm")),
            ("Max Transport Latency C To P", .scaled(10)), ("CIS", .count(2)), ("CIS[0].Max SDU C To P", .int(40)),
            ("CIS[0].PHY C To P", .flags(["LE 2M"])), ("CIS[1].CIS ID", .int(1)), ("CIS[1].Max SDU P To C", .int(0))]),
        // Command Complete: LE Set CIG Parameters, Success, CIG 1, handles 0x0060 and 0x0061
        HCIVector(.event, "Command Complete", "0e 0a 01 62 20 00 01 02 60 00 61 00", [
            ("Opcode", .name("LE Set CIG Parameters")), ("CIG ID", .int(1)), ("Handles", .count(2)), ("Handles[1].Handle", .int(0x61))]),
        // LE Extended Create Connection v2: no advertising handle (0), subevent 0, peer address, Public
        // 11:22:33:44:55:66, LE 1M: scan 60/60 ms, interval 30–50 ms, timeout 5000 ms
        HCIVector(.command, "LE Extended Create Connection v2",
                  "85 20 1c 00 00 00 00 00 66 55 44 33 22 11 01 60 00 60 00 18 00 28 00 00 00 f4 01 00 00 00 00", [
            ("Advertising Handle", .int(0)), ("Peer Address", .address("11:22:33:44:55:66")), ("PHYs", .count(2)),
            ("PHYs[0].Initiating PHYs", .flags(["LE 1M"])), ("PHYs[1].Min Connection Interval", .scaled(30)),
            ("PHYs[1].Supervision Timeout", .scaled(5000))]),
        // LE Set Extended Advertising Parameters v2: handle 0, legacy connectable scannable, 100 ms, channels 37–39,
        // Random, no TX power preference, LE 1M/LE 1M, no PHY options
        HCIVector(.command, "LE Set Extended Advertising Parameters v2",
                  "7f 20 1b 00 13 00 a0 00 00 a0 00 00 07 01 00 00 00 00 00 00 00 00 7f 01 00 01 00 00 00 00", [
            ("Properties", .flags(["Connectable", "Scannable", "Use legacy advertising PDUs"])),
            ("Min Advertising Interval", .scaled(100)), ("Channel Map", .flags(["37", "38", "39"])),
            ("Own Address Type", .name("Random")), ("Primary PHY Options", .name("No preference"))]),
        // LE Periodic Advertising Create Sync: use list, SID 2, Random C0:FF:EE:00:00:01, skip 0, timeout 1000 ms
        HCIVector(.command, "LE Periodic Advertising Create Sync", "44 20 0e 01 02 01 01 00 00 ee ff c0 00 00 64 00 00", [
            ("Options", .flags(["Use Periodic Advertiser List"])), ("SID", .int(2)), ("Sync Timeout", .scaled(1000))]),
        // LE Subrate Request: handle 0x0040, subrate 1–4, latency 0, continuation 2, timeout 5000 ms
        HCIVector(.command, "LE Subrate Request", "7e 20 0c 40 00 01 00 04 00 00 00 02 00 f4 01", [
            ("Subrate Max", .int(4)), ("Supervision Timeout", .scaled(5000))]),
        // LE Periodic Advertising Report: sync handle 1, TX power n/a, -60 dBm, no CTE, complete, Flags AD
        HCIVector(.event, "LE Meta Event", "3e 0b 0f 01 00 7f c4 ff 00 03 02 01 06", [
            ("Subevent", .name("LE Periodic Advertising Report")), ("Sync Handle", .int(1)),
            ("CTE Type", .name("No Constant Tone Extension")), ("Data Status", .name("Complete")), ("Data", .count(1))]),
        // LE CIS Established: Success, handle 0x0060, CIG/CIS sync delay 1000 µs, latency 10000 µs both ways,
        // LE 2M both ways, NSE 2, BN 1/1, FT 1/1, max PDU 40/40, ISO interval 10 ms (8)
        HCIVector(.event, "LE Meta Event",
                  "3e 1d 19 00 60 00 e8 03 00 e8 03 00 10 27 00 10 27 00 02 02 02 01 01 01 01 28 00 28 00 08 00", [
            ("Subevent", .name("LE CIS Established")), ("Handle", .int(0x60)), ("CIG Sync Delay", .scaled(1000)),
            ("Transport Latency C To P", .scaled(10000)), ("PHY C To P", .name("LE 2M")), ("Max PDU C To P", .int(40)),
            ("ISO Interval", .scaled(10))]),
        // LE Create BIG Complete: Success, BIG 1, sync delay 1000 µs, latency 10000 µs, LE 2M, NSE 4, BN 2, PTO 0,
        // IRC 2, max PDU 40, ISO interval 10 ms, BIS handles 0x0010 and 0x0011
        HCIVector(.event, "LE Meta Event",
                  "3e 17 1b 00 01 e8 03 00 10 27 00 02 04 02 00 02 28 00 08 00 02 10 00 11 00", [
            ("Subevent", .name("LE Create BIG Complete")), ("BIG Handle", .int(1)), ("PHY", .name("LE 2M")),
            ("BIS Handles", .count(2)), ("BIS Handles[1].Handle", .int(0x11))]),
        // LE BIGInfo Advertising Report: sync handle 1, 2 BIS, NSE 4, ISO 10 ms, BN 2, PTO 0, IRC 2, PDU 40,
        // SDU interval 10000 µs, SDU 40, LE 2M, unframed, encrypted
        HCIVector(.event, "LE Meta Event", "3e 14 22 01 00 02 04 08 00 02 00 02 28 00 10 27 00 28 00 02 00 01", [
            ("Subevent", .name("LE BIGInfo Advertising Report")), ("Num BIS", .int(2)), ("ISO Interval", .scaled(10)),
            ("SDU Interval", .scaled(10000)), ("PHY", .name("LE 2M")), ("Encryption", .name("Encrypted"))]),
        // LE Transmit Power Reporting: Success, handle 0x0040, remote changed, LE 1M, 4 dBm, no flags, delta -2 dB
        HCIVector(.event, "LE Meta Event", "3e 09 21 00 40 00 01 01 04 00 fe", [
            ("Subevent", .name("LE Transmit Power Reporting")), ("Reason", .name("Remote transmit power changed")),
            ("PHY", .name("LE 1M")), ("TX Power", .int(4)), ("Delta", .int(0xfe))]),
        // LE Subrate Change: Success, handle 0x0040, factor 4, latency 0, continuation 2, timeout 5000 ms
        HCIVector(.event, "LE Meta Event", "3e 0c 23 00 40 00 04 00 00 00 02 00 f4 01", [
            ("Subevent", .name("LE Subrate Change")), ("Subrate Factor", .int(4)), ("Continuation Number", .int(2)),
            ("Supervision Timeout", .scaled(5000))]),
    ]
}

@Suite("HCI decoder")
struct HCIDecoderTests {
    @Test(arguments: HCIVectors.decoded)
    func decodes(_ v: HCIVector) {
        let layer = HCITest.decode(v.type, v.bytes)
        #expect(layer.name == v.name)
        #expect(layer.error == nil, "\(String(describing: layer.error))")
        #expect(layer.notes.isEmpty, "\(layer.notes)")
        for (path, expected) in v.checks {
            guard let value = layer.hciValue(path) else {
                Issue.record("no field \(path) in \(layer.fields.map(\.nameString))")
                continue
            }
            switch expected {
            case let .int(n): #expect(value.hciInteger == n, "\(path)")
            case let .name(s): #expect(value.hciName == s, "\(path)")
            case let .flags(names): #expect(value.hciFlagNames == names, "\(path)")
            case let .address(s): #expect(value.hciAddress == s, "\(path)")
            case let .bytes(hex): #expect(value.hciBytes == HCITest.bytes(hex), "\(path)")
            case let .text(s): #expect(value.hciText == s, "\(path)")
            case let .scaled(d): #expect(value.hciScaled.map { abs($0 - d) < 1e-9 } == true, "\(path): \(String(describing: value.hciScaled))")
            case let .count(n): #expect(value.hciList?.count == n, "\(path)")
            }
        }
    }

    @Test func statusNamesComeFromTheSpec() {
        #expect(HCIStatus.names.name(0x13) == "Remote User Terminated Connection")
        #expect(HCIStatus.names.name(0x3E) == "Connection Failed to be Established / Synchronization Timeout")
        let layer = HCITest.decode(.event, "05 04 00 40 00 13")
        guard case let .integer(reason, .named(bytes: 1, table))? = layer.hciValue("Reason") else {
            Issue.record("Reason is not a named integer: \(String(describing: layer.hciValue("Reason")))")
            return
        }
        #expect(reason == 0x13)
        #expect(table.name(reason) == "Remote User Terminated Connection")
    }

    /// Read Local Name: 248 bytes of NUL-padded UTF-8 in the return parameters.
    @Test func readLocalNameReturnsTheName() {
        var name = Array("bleanalyze".utf8)
        name += Array(repeating: 0, count: 248 - name.count)
        let layer = HCITest.decode(.event, [0x0E, 252, 1, 0x14, 0x0C, 0x00] + name)
        #expect(layer.error == nil)
        #expect(layer.hciValue("Name")?.hciText == "bleanalyze")
    }

    @Test func commandNamesForOpcodes() {
        #expect(HCIDecoder.commandName(HCIOpcode(rawValue: 0x0C03)) == "Reset")
        #expect(HCIDecoder.commandName(HCIOpcode(rawValue: 0x2074)) == "LE Set Host Feature")
        #expect(HCIDecoder.commandName(HCIOpcode(rawValue: 0xFC01)) == "Vendor 0xFC01")
        #expect(HCIDecoder.commandName(HCIOpcode(rawValue: 0x0000)) == "NOP")
        #expect(HCIDecoder.commandName(HCIOpcode(rawValue: 0x23FF)) == "Unknown")
        #expect(HCIDecoder.opcodeCode(HCIOpcode(rawValue: 0x200B)) == "0x08|0x000b")
    }

    /// The PureSwift crash vector (division by a wire value) has no HCI analogue, but the advertising
    /// report that PureSwift drops must keep both reports even when the first carries no data.
    @Test func advertisingReportWithEmptyFirstReport() {
        // 2 reports: ADV_NONCONN_IND Random C0:FF:EE:00:00:01 no data -70 dBm; ADV_IND Public 11:22:33:44:55:66 Flags -50 dBm
        let layer = HCITest.decode(.event, "3e 19 02 02 03 01 01 00 00 ee ff c0 00 ba 00 00 66 55 44 33 22 11 03 02 01 06 ce")
        #expect(layer.error == nil)
        #expect(layer.hciValue("Reports")?.hciList?.count == 2)
        #expect(layer.hciValue("Reports[1].Address")?.hciAddress == "11:22:33:44:55:66")
        #expect(layer.hciValue("Reports[0].Data")?.hciList?.isEmpty == true)
    }
}
