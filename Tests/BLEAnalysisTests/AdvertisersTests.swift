@testable import BLEAnalysis
import Testing

/// `Advertisers.sameToAbsorb`: a report is parsed again unless it differs from the kept data only
/// inside the opaque part of Manufacturer Specific Data (after the Company Identifier).
@Suite struct AdvertisersTests {
    // Flags 0x06 | Complete Local Name "Dev" | 16-bit UUIDs 0x180F | Manufacturer 0x00FE + 4 payload bytes
    static let kept: [UInt8] = [0x02, 0x01, 0x06, 0x04, 0x09, 0x44, 0x65, 0x76, 0x03, 0x03, 0x0F, 0x18,
                                0x07, 0xFF, 0xFE, 0x00, 0x01, 0x02, 0x03, 0x04]

    static func same(_ new: [UInt8], _ kept: [UInt8] = kept) -> Bool {
        new.withUnsafeBytes { Advertisers.sameToAbsorb(kept, $0) }
    }

    static func changed(_ at: Int, in data: [UInt8] = kept) -> [UInt8] {
        var d = data
        d[at] ^= 0x55
        return d
    }

    @Test func onlyTheManufacturerPayloadMayDiffer() {
        #expect(Self.same(Self.kept))
        for at in 16 ..< 20 { #expect(Self.same(Self.changed(at)), "payload byte \(at)") }
        // Every other byte — lengths, types, flags, name, UUID, company — is read by absorb.
        for at in 0 ..< 16 { #expect(!Self.same(Self.changed(at)), "byte \(at)") }
        #expect(!Self.same(Array(Self.kept.dropLast())))
    }

    @Test func malformedDataIsComparedWhole() {
        // A structure running past the data (Length 9, 3 bytes left): no opaque part.
        let past: [UInt8] = [0x02, 0x01, 0x06, 0x09, 0xFF, 0xFE, 0x00]
        #expect(Self.same(past, past))
        #expect(!Self.same(Self.changed(6, in: past), past))
        // After a zero Length (padding), the rest counts too.
        let padded: [UInt8] = [0x02, 0x01, 0x06, 0x00, 0x00, 0x00]
        #expect(!Self.same(Self.changed(5, in: padded), padded))
        // A Manufacturer Specific Data too short for its Company Identifier.
        let short: [UInt8] = [0x02, 0xFF, 0xFE]
        #expect(!Self.same(Self.changed(2, in: short), short))
        #expect(Self.same([], []))
    }
}
