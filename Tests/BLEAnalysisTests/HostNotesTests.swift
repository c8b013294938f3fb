import Testing
@testable import BLEAnalysis

/// PacketLogger note records (type 0xFC) as iOS writes them at the start of a log; the texts are those
/// of ios_packetlogger_peripage_printer_le.pklg as tshark shows them (`packetlogger.info`).
@Suite struct HostNotesTests {
    static func notes(_ texts: [[UInt8]]) -> HostNotes {
        var n = HostNotes()
        for t in texts { t.withUnsafeBytes { n.consume($0) } }
        return n
    }

    @Test func keepsTheHeaderFacts() {
        let n = Self.notes([
            Array("Product: iPhone17,1".utf8), Array("Firmware Version: 23.5.218.1220".utf8),
            Array("Chipset: BCM_4399, Revision: s=C2".utf8), Array("Transport: PCIe".utf8),
            Array("Bluetooth Host: MobileBluetooth-195.7.1.2".utf8), Array("Software: Version 26.5 (Build 23F77)".utf8),
            Array("iOS Device connection has been lost".utf8) + [UInt8](repeating: 0, count: 200),   // NUL-padded
            Array("Product: iPad".utf8),   // a later note does not replace the first
        ])
        #expect(n.product == "iPhone17,1")
        #expect(n.software == "Version 26.5 (Build 23F77)")
        #expect(n.chipset == "BCM_4399, Revision: s=C2")
        #expect(n.controllerFirmware == "23.5.218.1220")
        #expect(n.bluetoothHost == "MobileBluetooth-195.7.1.2")
        #expect(n.transport == "PCIe")
    }

    @Test func ignoresOtherNotesAndOddBytes() {
        let n = Self.notes([
            Array("hci.c.3278: hci_power_control: 1, current mode 0".utf8),   // BTstack debug line
            Array("Product: ".utf8),                                         // no value
            [0xFF, 0xFE, 0x00, 0x50],                                        // not text
            Array("Product: ".utf8) + [UInt8](repeating: 0x41, count: 600),  // longer than a header note
            [],
        ])
        #expect(n.isEmpty)
    }
}
