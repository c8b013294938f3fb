import Testing
import BLEBytes
@testable import BLEProtocol

/// Log records print on one line, as btmon prints user logging (`= bluetoothd: Terminating`) and
/// system notes (`= Note: Linux version …`); the fields stay for JSON.
@Suite struct LogRecordTests {
    static func decode(_ bytes: [UInt8], _ decoder: (inout ByteReader) -> Layer) -> Layer {
        bytes.withUnsafeBytes { raw in
            var r = ByteReader(raw)
            return decoder(&r)
        }
    }

    /// Monitor User Logging (`hci_mon.h`): priority, ident length, ident (NUL-terminated), message.
    /// Frame 8 of bluez_btmon_mgmt_realtek.btsnoop; btmon prints `= bluetoothd: Terminating`.
    @Test func userLoggingLine() {
        let layer = Self.decode([6, 11] + Array("bluetoothd\0".utf8) + Array("Terminating\0".utf8), LogRecords.userLogging)
        #expect(layer.line == "bluetoothd: Terminating")
        #expect(layer.fields.map(\.nameString) == ["Priority", "Ident", "Message"])
    }

    @Test func innerLineBreaksBecomeSpaces() {
        let layer = Self.decode([6, 2] + Array("d\0".utf8) + Array("two\nlines\n".utf8), LogRecords.userLogging)
        #expect(layer.line == "d: two lines")
    }

    /// PacketLogger syslog (0xF7): u32 PID, level, process, sender, subsystem, category, message.
    @Test func syslogLine() {
        let strings = ["bluetoothd", "sender", "com.apple.bluetooth", "Server.LE", "Connected to device"]
        let bytes: [UInt8] = [0x39, 0x05, 0x00, 0x00, 0x01] + strings.flatMap { Array($0.utf8) + [0] }
        let layer = Self.decode(bytes, LogRecords.syslog)
        #expect(layer.line == "bluetoothd[1337]: Connected to device")
        #expect(layer.fields.count == 7)
    }

    @Test func noteLines() {
        #expect(Self.decode(Array("Linux version 6.1.19\0".utf8), { LogRecords.text("System Note", &$0) }).line == "Note: Linux version 6.1.19")
        #expect(Self.decode(Array("OFF->ON\n".utf8), { LogRecords.text("Power", &$0) }).line == "Power: OFF->ON")
        #expect(Self.decode(Array("BTRS took 261000 microseconds".utf8), { LogRecords.raw("Vendor record 0xf8", &$0) }).line
                == "Vendor record 0xf8: BTRS took 261000 microseconds")
        // Binary data is not a line: it keeps its hex dump.
        #expect(Self.decode([0xF0, 0x01], { LogRecords.raw("Vendor record 0x0a", &$0) }).line == nil)
    }

    /// Monitor New Index: type, bus, BD_ADDR (little-endian), name[8]. btmon: `New Index: E8:48:B8:C8:20:00 (Primary,USB,hci0)`.
    @Test func newIndexLine() {
        let layer = Self.decode([0x00, 0x01, 0x00, 0x20, 0xC8, 0xB8, 0x48, 0xE8] + Array("hci0\0\0\0\0".utf8), LogRecords.newIndex)
        #expect(layer.line == "New Index: E8:48:B8:C8:20:00 (Primary,USB,hci0)")
    }
}
