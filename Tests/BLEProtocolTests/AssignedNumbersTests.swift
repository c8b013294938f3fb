import Testing
import BLEProtocol

@Suite("AssignedNumbers")
struct AssignedNumbersTests {
    typealias AN = AssignedNumbers

    @Test func knownSixteenBitUUIDs() {
        #expect(AN.uuid16Name(0x180D) == "Heart Rate")
        #expect(AN.uuid16Category(0x180D) == .service)
        #expect(AN.uuid16Name(0x2A37) == "Heart Rate Measurement")
        #expect(AN.uuid16Category(0x2A37) == .characteristic)
        #expect(AN.uuid16Name(0x2A19) == "Battery Level")
        #expect(AN.uuid16Name(0x2902) == "Client Characteristic Configuration")
        #expect(AN.uuid16Category(0x2902) == .descriptor)
        #expect(AN.uuid16Name(0x2901) == "Characteristic User Description")
    }

    @Test func declarations() {
        #expect(AN.uuid16Name(0x2800) == "Primary Service")
        #expect(AN.uuid16Name(0x2801) == "Secondary Service")
        #expect(AN.uuid16Name(0x2802) == "Include")
        #expect(AN.uuid16Name(0x2803) == "Characteristic")
        for value: UInt16 in 0x2800...0x2803 {
            #expect(AN.uuid16Category(value) == .declaration)
        }
    }

    @Test func memberServicesAndSDP() {
        #expect(AN.uuid16Category(0xFEAA) == .memberService)
        #expect(AN.uuid16Name(0xFEAA)?.contains("Google") == true)
        #expect(AN.uuid16Category(0xFE59) == .memberService)
        #expect(AN.uuid16Name(0xFE59)?.contains("Nordic") == true)
        #expect(AN.uuid16Category(0x0100) == .other)  // L2CAP protocol UUID
        #expect(AN.uuid16Name(0x0100) == "L2CAP")
    }

    @Test func unknownSixteenBitUUIDs() {
        #expect(AN.uuid16Name(0x0000) == nil)
        #expect(AN.uuid16Category(0x0000) == nil)
        #expect(AN.uuid16Name(0xFFFF) == nil)
        #expect(AN.uuid16Name(0x2A00 - 1) == nil)
    }

    @Test func companies() {
        #expect(AN.companyName(0x004C) == "Apple, Inc.")
        #expect(AN.companyName(0x0059) == "Nordic Semiconductor ASA")
        #expect(AN.companyName(0x0006) == "Microsoft")
        #expect(AN.companyName(0x0000) == "Ericsson AB")
        #expect(AN.companyName(0xFFFE) == nil)
        // Upstream mojibake ("GerÃ¤te") is repaired by the generator.
        #expect(AN.companyName(0x024F) == "Schneider Schreibgeräte GmbH")
    }

    @Test func appearance() {
        #expect(AN.appearanceName(0x0000) == "Unknown")
        #expect(AN.appearanceName(0x0340) == "Heart Rate Sensor")
        #expect(AN.appearanceName(0x0341) == "Heart Rate Sensor: Heart Rate Belt")
        #expect(AN.appearanceName(0x03C1) == "Human Interface Device: Keyboard")
        #expect(AN.appearanceName(0x0345) == "Heart Rate Sensor (subcategory 5)")
        #expect(AN.appearanceName(0xFFFF) == nil)
    }

    @Test func uuid128() {
        func bytes(_ text: String) -> [UInt8] {
            let hex = Array(text.filter { $0 != "-" })
            return stride(from: 0, to: hex.count, by: 2).map { UInt8(String(hex[$0...$0 + 1]), radix: 16)! }
        }
        #expect(AN.uuid128Name(bytes("6E400001-B5A3-F393-E0A9-E50E24DCCA9E")) == "Nordic UART Service")
        #expect(AN.uuid128Name(bytes("6e400002-b5a3-f393-e0a9-e50e24dcca9e")) == "UART RX Characteristic")
        // Bluetooth Base UUID form resolves through the 16-bit table.
        #expect(AN.uuid128Name(bytes("0000180D-0000-1000-8000-00805F9B34FB")) == "Heart Rate")
        #expect(AN.uuid128Name(bytes("00000000-0000-0000-0000-000000000001")) == nil)
        #expect(AN.uuid128Name([0x01, 0x02]) == nil)
    }

    @Test func tablesAreNotTiny() {
        var companies = 0
        var byCategory: [AN.UUIDCategory: Int] = [:]
        var appearances = 0
        for value in UInt16.min...UInt16.max {
            if AN.companyName(value) != nil { companies += 1 }
            if let category = AN.uuid16Category(value) {
                byCategory[category, default: 0] += 1
                #expect(AN.uuid16Name(value)?.isEmpty == false)
            }
            if value & 0x3F == 0, AN.appearanceName(value) != nil { appearances += 1 }
        }
        #expect(companies > 2000)
        #expect(byCategory[.characteristic, default: 0] > 200)
        #expect(byCategory[.service, default: 0] > 50)
        #expect(byCategory[.descriptor, default: 0] >= 16)
        #expect(byCategory[.memberService, default: 0] > 300)
        #expect(appearances > 40)  // appearance categories
    }
}
