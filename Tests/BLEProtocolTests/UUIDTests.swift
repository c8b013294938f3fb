import Testing
import BLEBytes
@testable import BLEProtocol

private typealias S = ATTTestSupport

@Suite("BluetoothUUID")
struct UUIDTests {
    /// 0000180d-0000-1000-8000-00805f9b34fb, little-endian as ATT carries it.
    static let heartRateWire = "fb 34 9b 5f 80 00 00 80 00 10 00 00 0d 18 00 00"

    @Test func equalityAndHashingUseThe128BitValue() {
        let short = BluetoothUUID(uuid16: 0x180D)
        let long = S.run(Self.heartRateWire) { r throws(DecodeError) in try r.uuid(width: 16) }
        #expect(long == .success(short))
        guard case let .success(wide) = long else { return }
        #expect(wide.width == 16 && short.width == 2)
        #expect(Set([short]).contains(wide))
        #expect(BluetoothUUID(uuid32: 0x180D) == short)
        #expect(BluetoothUUID(uuid16: 0x180F) != short)
    }

    @Test(arguments: [
        (BluetoothUUID(uuid16: 0x2A37), "0x2A37"),
        (BluetoothUUID(uuid16: 0x000A), "0x000A"),
        (BluetoothUUID(uuid32: 0x0000_180D), "0x0000180D"),
        (BluetoothUUID(high: 0x0000_180D_0000_1000, low: 0x8000_0080_5F9B_34FB), "0000180d-0000-1000-8000-00805f9b34fb"),
        (BluetoothUUID(high: 0x6E40_0001_B5A3_F393, low: 0xE0A9_E50E_24DC_CA9E), "6e400001-b5a3-f393-e0a9-e50e24dcca9e"),
    ])
    func descriptions(uuid: BluetoothUUID, text: String) {
        #expect(uuid.description == text)
        #expect(BluetoothUUID(string: text) == uuid)
        #expect(BluetoothUUID(string: text)?.width == uuid.width)
    }

    @Test func readsEveryWidthLittleEndian() {
        #expect(S.run("37 2a") { r throws(DecodeError) in try r.uuid(width: 2) } == .success(BluetoothUUID(uuid16: 0x2A37)))
        #expect(S.run("78 56 34 12") { r throws(DecodeError) in try r.uuid(width: 4) } == .success(BluetoothUUID(uuid32: 0x1234_5678)))
        #expect(S.run("9e ca dc 24 0e e5 a9 e0 93 f3 a3 b5 01 00 40 6e") { r throws(DecodeError) in try r.uuid(width: 16) }
                == .success(BluetoothUUID(string: "6e400001-b5a3-f393-e0a9-e50e24dcca9e") ?? BluetoothUUID(uuid16: 0)))
        #expect(S.run("37 2a 00") { r throws(DecodeError) in try r.uuid(width: 3) }
                == .failure(DecodeError(kind: .invalidValue(3), offset: 0, field: "")))
        #expect(S.run("37") { r throws(DecodeError) in try r.uuid(width: 2) }
                == .failure(DecodeError(kind: .truncated(needed: 2, available: 1), offset: 0, field: "")))
        #expect(S.run("00 01 02 03 04 05 06 07 08 09") { r throws(DecodeError) in try r.uuid(width: 16) }
                == .failure(DecodeError(kind: .truncated(needed: 8, available: 2), offset: 8, field: "")))
    }

    @Test func shortForms() {
        #expect(BluetoothUUID(uuid16: 0x2A37).uuid16 == 0x2A37)
        #expect(BluetoothUUID(uuid32: 0x1234_5678).uuid16 == nil)
        #expect(BluetoothUUID(uuid32: 0x1234_5678).uuid32 == 0x1234_5678)
        let vendor = BluetoothUUID(string: "6e400001-b5a3-f393-e0a9-e50e24dcca9e")
        #expect(vendor?.uuid16 == nil && vendor?.uuid32 == nil && vendor?.isOnBase == false)
        // 0x2A37 sent as 128 bits is still 0x2A37.
        #expect(BluetoothUUID(string: "00002a37-0000-1000-8000-00805f9b34fb")?.uuid16 == 0x2A37)
    }

    @Test func names() {
        #expect(BluetoothUUID(uuid16: 0x2A37).name == "Heart Rate Measurement")
        #expect(BluetoothUUID(uuid16: 0x180D).displayName == "Heart Rate (0x180D)")
        #expect(BluetoothUUID(uuid16: 0x2902).category == .descriptor)
        #expect(BluetoothUUID(uuid16: 0x180D).category == .service)
        #expect(BluetoothUUID(string: "0000180d-0000-1000-8000-00805f9b34fb")?.displayName
                == "Heart Rate (0000180d-0000-1000-8000-00805f9b34fb)")
        #expect(BluetoothUUID(string: "00001523-1212-efde-1523-785feabcd123")?.name == "Nordic LED and Button Service")
        #expect(BluetoothUUID(uuid16: 0x0000).name == nil)
        #expect(BluetoothUUID(uuid16: 0x0000).displayName == "0x0000")
        #expect(BluetoothUUID(uuid32: 0x1234_5678).name == nil)
        #expect(BluetoothUUID(string: "12345678-1234-1234-1234-123456789abc")?.name == nil)
    }

    @Test func parsing() {
        #expect(BluetoothUUID(string: "2a37") == BluetoothUUID(uuid16: 0x2A37))
        #expect(BluetoothUUID(string: "0X2A37") == BluetoothUUID(uuid16: 0x2A37))
        #expect(BluetoothUUID(string: "6E400001B5A3F393E0A9E50E24DCCA9E")?.width == 16)
        for bad in ["", "2a3", "xyz1", "0x", "6e400001-b5a3-f393-e0a9-e50e24dcca9", "+2a3"] {
            #expect(BluetoothUUID(string: bad) == nil, "\(bad)")
        }
    }

    @Test func bigEndianBytesRoundTrip() {
        let u = BluetoothUUID(string: "6e400001-b5a3-f393-e0a9-e50e24dcca9e")
        let bytes = u?.bigEndianBytes ?? []
        #expect(bytes.first == 0x6E && bytes.last == 0x9E && bytes.count == 16)
        #expect(BluetoothUUID(bigEndianBytes: bytes) == u)
        #expect(BluetoothUUID(bigEndianBytes: bytes.dropLast()) == nil)
    }

    /// Random bytes never trap: a width of 2, 4 or 16 reads a UUID exactly when that many bytes are
    /// left; any other width always throws.
    @Test func randomBytesNeverTrap() {
        var wrong = 0
        S.fuzz(seed: 0x0001D, maxLength: 20) { r in
            for width in [0, 2, 4, 16, 3] {
                var copy = r
                let read = (try? copy.uuid(width: width))
                _ = read?.displayName
                let fits = [2, 4, 16].contains(width) && r.remaining >= width
                if (read != nil) != fits { wrong += 1 }
            }
        }
        #expect(wrong == 0)
    }
}
