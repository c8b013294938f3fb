import BLEBytes
import BLEProtocol
import Testing

/// The include and characteristic declaration values (Core v5.4 Vol 3 Part G 3.2 Table 3.2, 3.3.1
/// Table 3.3), read as the analysis reads discovery and written as the twin serves it.
@Suite struct GATTDeclarationTests {
    static func read<T>(_ hex: String, _ body: (inout ByteReader) throws(DecodeError) -> T) throws -> T {
        try HCITest.bytes(hex).withUnsafeBytes { raw throws(DecodeError) in
            var r = ByteReader(raw, base: 0)
            let value = try body(&r)
            #expect(r.remaining == 0)
            return value
        }
    }

    @Test func characteristicWithA16BitUUID() throws {
        // Read | Notify (0x12), value handle 0x0003, Heart Rate Measurement 0x2A37, little-endian.
        let d = try Self.read("12 03 00 37 2a") { r throws(DecodeError) in try GATTDeclaration.Characteristic.read(&r) }
        #expect(d == GATTDeclaration.Characteristic(properties: 0x12, valueHandle: 0x0003, uuid: BluetoothUUID(uuid16: 0x2A37)))
        #expect(d.bytes == HCITest.bytes("12 03 00 37 2a"))
    }

    @Test func characteristicWithA128BitUUID() throws {
        // Nordic UART TX 6E400003-B5A3-F393-E0A9-E50E24DCCA9E: the wire carries it least significant byte first.
        let hex = "10 0c 00 9e ca dc 24 0e e5 a9 e0 93 f3 a3 b5 03 00 40 6e"
        let d = try Self.read(hex) { r throws(DecodeError) in try GATTDeclaration.Characteristic.read(&r) }
        #expect(d.properties == 0x10 && d.valueHandle == 0x000C)
        #expect(d.uuid.description.lowercased() == "6e400003-b5a3-f393-e0a9-e50e24dcca9e")
        #expect(d.bytes == HCITest.bytes(hex))
    }

    @Test func characteristicWithAnImpossibleUUIDWidthThrows() {
        #expect(throws: DecodeError.self) {
            _ = try Self.read("02 05 00 aa") { r throws(DecodeError) in try GATTDeclaration.Characteristic.read(&r) }
        }
    }

    @Test func includeWithAndWithoutItsUUID() throws {
        // 3.2: the Service UUID is present only when it is a 16-bit UUID.
        let short = try Self.read("05 00 08 00 0f 18") { r throws(DecodeError) in try GATTDeclaration.Include.read(&r) }
        #expect(short == GATTDeclaration.Include(range: ATT.HandleRange(start: 5, end: 8), uuid: BluetoothUUID(uuid16: 0x180F)))
        #expect(short.bytes == HCITest.bytes("05 00 08 00 0f 18"))
        let long = try Self.read("10 00 20 00") { r throws(DecodeError) in try GATTDeclaration.Include.read(&r) }
        #expect(long.uuid == nil && long.range == ATT.HandleRange(start: 0x10, end: 0x20))
        #expect(long.bytes == HCITest.bytes("10 00 20 00"))
    }
}
