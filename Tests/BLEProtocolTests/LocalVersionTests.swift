import Testing
import BLEBytes
@testable import BLEProtocol

/// Read Local Version Information return parameters (Core v5.4 Vol 4 Part E 7.4.1), after the status.
@Suite struct LocalVersionTests {
    // The Command Complete of android_govee_ledstrip_gatt.btsnoop, as tshark decodes it:
    // HCI Version 0x09 (5.0), HCI Revision 0x0000, LMP Version 0x09, Company 0x001d (Qualcomm), LMP Subversion 702 (0x02be).
    static let govee: [UInt8] = [0x09, 0x00, 0x00, 0x09, 0x1d, 0x00, 0xbe, 0x02]

    @Test func decodesTheFields() throws {
        let v = try Self.govee.withUnsafeBytes { b throws(DecodeError) -> LocalVersion in
            var r = ByteReader(b, base: 100)
            return try LocalVersion.decode(&r)
        }
        #expect(v == LocalVersion(hciVersion: 9, hciRevision: 0, lmpVersion: 9, manufacturer: 0x001D, lmpSubversion: 702))
        #expect(LocalVersion.versionName(v.lmpVersion) == "5.0")
        #expect(LocalVersion.versionName(0xEE) == nil)
    }

    /// Every prefix is truncated at the field it cuts, with the absolute offset.
    @Test(arguments: 0 ..< 8)
    func everyPrefixIsTruncated(_ length: Int) {
        let fieldStart = [0, 1, 1, 3, 4, 4, 6, 6][length]
        let want = DecodeError(kind: .truncated(needed: [1, 2, 2, 1, 2, 2, 2, 2][length], available: length - fieldStart),
                               offset: 100 + fieldStart, field: "")
        let outcome: Result<LocalVersion, DecodeError> = Array(Self.govee.prefix(length)).withUnsafeBytes { b in
            var r = ByteReader(b, base: 100)
            do throws(DecodeError) { return .success(try LocalVersion.decode(&r)) } catch { return .failure(error) }
        }
        #expect(outcome == .failure(want))
    }
}
