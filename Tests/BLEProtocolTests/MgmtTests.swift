import Testing
import BLEBytes
@testable import BLEProtocol

/// BlueZ mgmt records of a Linux monitor capture. The vectors are records of
/// `../shared/captures/real/bluez_btmon_mgmt_realtek.btsnoop` (frames 6, 12, 24) and records built
/// from `doc/mgmt-api.txt`; the expected values are what btmon 5.66 prints for them and what the
/// document defines, not our output.
@Suite struct MgmtTests {
    static func decode(_ hex: String, _ decoder: (inout ByteReader) -> Layer) -> Layer {
        HCITest.bytes(hex).withUnsafeBytes { raw in
            var r = ByteReader(raw)
            return decoder(&r)
        }
    }

    /// Frame 6. btmon: `@ MGMT Open: bluetoothctl (privileged) version 1.22  {0x0002}`.
    @Test func controlOpenIsOneLine() {
        let layer = Self.decode("02000000 0200 01 1600 01000000 10 626c7565746f6f746863746c00000000", Mgmt.open)
        #expect(layer.error == nil)
        #expect(layer.notes.isEmpty)
        #expect(layer.line == "MGMT Open: bluetoothctl (privileged) version 1.22 {0x0002}")
        #expect(layer.hciValue("Ident")?.hciText == "bluetoothctl")
    }

    /// Frame 12. btmon: `@ MGMT Command: Set Powered (0x0005) plen 1 {0x0001} [hci0]`, `Powered: Disabled (0x00)`.
    @Test func setPoweredCommand() {
        let layer = Self.decode("01000000 0500 00", Mgmt.command)
        #expect(layer.protocolName.description == "MGMT Command")
        #expect(layer.name == "Set Powered")
        #expect(layer.code == "0x0005")
        #expect(layer.length == 1)
        #expect(layer.hciValue("Cookie")?.hciInteger == 1)
        #expect(layer.hciValue("Powered")?.hciName == "Disabled")
        #expect(layer.error == nil && layer.notes.isEmpty)
    }

    /// Frame 24. btmon: `Command Complete (0x0001) plen 7`, `Set Powered (0x0005) plen 4`,
    /// `Status: Success (0x00)`, `Current settings: 0x00000ad0` = Bondable, Secure Simple Pairing,
    /// BR/EDR, Low Energy, Secure Connections.
    @Test func commandCompleteDecodesTheCommandsReturn() {
        let layer = Self.decode("01000000 0100 0500 00 d00a0000", Mgmt.event)
        #expect(layer.name == "Command Complete")
        #expect(layer.length == 7)
        #expect(layer.hciValue("Command")?.hciName == "Set Powered")
        #expect(layer.hciValue("Command")?.hciInteger == 5)
        #expect(layer.hciValue("Status")?.hciName == "Success")
        #expect(layer.hciValue("Current Settings")?.hciInteger == 0x0AD0)
        #expect(layer.hciValue("Current Settings")?.hciFlagNames == ["Bondable", "Secure Simple Pairing", "BR/EDR", "Low Energy", "Secure Connections"])
    }

    /// Device Connected (0x000B): Address, Address_Type (1 = LE Public), Flags (4), EIR_Data_Length (2), EIR_Data.
    /// The EIR here is one AD structure, Complete Local Name "ab".
    @Test func deviceConnectedNamesTheAddressTypeAndEIR() {
        let layer = Self.decode("07000000 0b00 665544332211 01 00000000 0400 03096162", Mgmt.event)
        #expect(layer.name == "Device Connected")
        #expect(layer.error == nil && layer.notes.isEmpty)
        #expect(layer.hciValue("Address")?.hciAddress == "11:22:33:44:55:66")
        #expect(layer.hciValue("Address Type")?.hciName == "LE Public")
        #expect(layer.hciValue("EIR Data")?.hciList?.count == 1)
    }

    /// Device Disconnected (0x000C), LE Random address, reason 3 = "Connection terminated by remote host".
    @Test func deviceDisconnectedReasonAndRandomAddress() {
        let layer = Self.decode("07000000 0c00 6655443322c1 02 03", Mgmt.event)
        #expect(layer.name == "Device Disconnected")
        #expect(layer.hciValue("Reason")?.hciName == "Connection terminated by remote host")
        guard case let .address(_, type)? = layer.hciValue("Address") else { Issue.record("no address"); return }
        #expect(type?.isRandom == true)
    }

    /// New Long Term Key (0x000A): Store_Hint, then `mgmt_ltk_info` (address, type, key type, central,
    /// encryption size, EDIV, Rand, Value): the key material is kept as a secret.
    @Test func newLongTermKeyKeepsKeysSecret() {
        let layer = Self.decode("01000000 0a00 01 665544332211 01 03 00 10 3412 0102030405060708 " + String(repeating: "ab", count: 16), Mgmt.event)
        #expect(layer.name == "New Long Term Key")
        #expect(layer.error == nil && layer.notes.isEmpty)
        #expect(layer.hciValue("Key Type")?.hciName == "Authenticated key from P-256")
        #expect(layer.hciValue("Encryption Size")?.hciInteger == 16)
        #expect(layer.hciValue("Diversifier")?.hciInteger == 0x1234)
        guard case .secret? = layer.hciValue("Value") else { Issue.record("Value is not a secret"); return }
    }

    /// Command Status (0x0002) with status 0x0D Invalid Parameters for Pair Device (0x0019).
    @Test func commandStatus() {
        let layer = Self.decode("01000000 0200 1900 0d", Mgmt.event)
        #expect(layer.name == "Command Status")
        #expect(layer.hciValue("Command")?.hciName == "Pair Device")
        #expect(layer.hciValue("Status")?.hciName == "Invalid Parameters")
    }

    @Test func unknownCodesKeepTheirParameters() {
        let layer = Self.decode("01000000 ff7f 0102", Mgmt.command)
        #expect(layer.name == "Unknown")
        #expect(layer.code == "0x7fff")
        #expect(layer.hciValue("Parameters")?.hciBytes == [1, 2])
    }

    /// Every prefix of every vector decodes without a crash; the short ones say where they stopped.
    @Test func everyPrefixDecodes() {
        let vectors: [(String, (inout ByteReader) -> Layer)] = [
            ("02000000 0200 01 1600 01000000 10 626c7565746f6f746863746c00000000", Mgmt.open),
            ("01000000 0100 0400 00 0020c8b848e8 0a 5d00 ffbf0300 d00a0000 000000", Mgmt.event),
            ("01000000 0a00 01 665544332211 01 03 00 10 3412 0102030405060708 00", Mgmt.event),
            ("01000000 3500 0100 665544332211 01 0600 0c00 0000 c800", Mgmt.command),
        ]
        for (hex, decoder) in vectors {
            let bytes = HCITest.bytes(hex)
            for n in 0 ..< bytes.count {
                let layer = Array(bytes.prefix(n)).withUnsafeBytes { raw in
                    var r = ByteReader(raw)
                    return decoder(&r)
                }
                if n < 6 { #expect(layer.error != nil, "\(hex) cut at \(n)") }
            }
        }
    }

    @Test func tablesHaveNoDuplicateCodes() {
        #expect(Mgmt.commands.duplicateCodes.isEmpty)
        #expect(Mgmt.events.duplicateCodes.isEmpty)
    }
}

/// Vendor command names by the controller's maker. Expected names: BlueZ `monitor/broadcom.c`,
/// `monitor/intel.c` (what btmon prints), Linux `btqca.h`; the Opcode field of a Command Complete
/// uses the same table.
@Suite struct VendorCommandTests {
    @Test func makersFromCompanyIdentifiers() {
        #expect(HCIVendor(manufacturer: 0x000F) == .broadcom)
        #expect(HCIVendor(manufacturer: 0x0002) == .intel)
        #expect(HCIVendor(manufacturer: 0x001D) == .qualcomm)
        #expect(HCIVendor(manufacturer: 0x005D) == nil)   // Realtek: no table
    }

    static func command(_ hex: String, _ vendor: HCIVendor?) -> Layer {
        HCITest.bytes(hex).withUnsafeBytes { raw in
            var r = ByteReader(raw)
            return HCIDecoder.decode(.command, &r, vendor: vendor)
        }
    }

    @Test func namesByMaker() {
        #expect(Self.command("4e fc 04 00 00 00 00", .broadcom).name == "Launch RAM")       // btmon: 0x04e
        #expect(Self.command("18 fc 06 00 00 00 10 0e 00", .broadcom).name == "Update UART Baud Rate")
        #expect(Self.command("05 fc 00", .intel).name == "Read Version")                    // btmon: 0x005
        #expect(Self.command("01 fc 08 00 01 00 01 00 08 04 00", .intel).name == "Reset")
        #expect(Self.command("00 fc 01 19", .qualcomm).name == "EDL Patch")                 // EDL_PATCH_CMD_OPCODE
        #expect(Self.command("4e fc 04 00 00 00 00", nil).name == "Vendor 0xFC4E")
        #expect(Self.command("7d fd 00", .broadcom).name == "Vendor 0xFD7D")                // in no table
        #expect(Self.command("4e fc 04 00 00 00 00", .broadcom).code == "0x3f|0x004e")
    }

    @Test func commandCompleteNamesTheVendorOpcode() {
        let layer = HCITest.bytes("0e 04 01 4e fc 00").withUnsafeBytes { raw in
            var r = ByteReader(raw)
            return HCIDecoder.decode(.event, &r, vendor: .broadcom)
        }
        #expect(layer.hciValue("Opcode")?.hciName == "Launch RAM")
        #expect(layer.hciValue("Status")?.hciName == "Success")
        let standard = HCITest.bytes("0e 04 01 03 0c 00").withUnsafeBytes { raw in
            var r = ByteReader(raw)
            return HCIDecoder.decode(.event, &r, vendor: .broadcom)
        }
        #expect(standard.hciValue("Opcode")?.hciName == "Reset")
    }

    /// Read Local Version Information's Command Complete: event code, plen, ncmd, opcode (2), status,
    /// HCI version, HCI revision (2), LMP version, then the Company_Identifier.
    @Test func manufacturerFromReadLocalVersion() {
        let event: [UInt8] = [0x0E, 0x0C, 0x01, 0x01, 0x10, 0x00, 0x09, 0x00, 0x00, 0x09, 0x0F, 0x00, 0x00, 0x00]
        #expect(event.withUnsafeBytes { HCIVendor.manufacturer(inEvent: $0) } == 0x000F)
        var failed = event
        failed[5] = 0x01
        #expect(failed.withUnsafeBytes { HCIVendor.manufacturer(inEvent: $0) } == nil)
    }
}
