@testable import BLEReplay
import Testing

/// The twin's pairing arithmetic against the published vectors: FIPS-197 Appendix C.1 for AES-128,
/// Core v5.4 Vol 3 Part H 2.2.3 / 2.2.4 for c1 and s1 (values written most significant byte first,
/// as the spec prints them).
@Suite struct LegacyPairingTests {
    static func bytes(_ hex: String) -> [UInt8] {
        var out: [UInt8] = []
        var i = hex.startIndex
        while i < hex.endIndex { let j = hex.index(i, offsetBy: 2); out.append(UInt8(hex[i ..< j], radix: 16)!); i = j }
        return out
    }
    /// A spec value (most significant byte first) as SMP carries it (least significant first).
    static func le(_ hex: String) -> [UInt8] { bytes(hex).reversed() }

    @Test func aes128MatchesFIPS197() {
        let out = AES128.encrypt(key: Self.bytes("000102030405060708090a0b0c0d0e0f"), Self.bytes("00112233445566778899aabbccddeeff"))
        #expect(out == Self.bytes("69c4e0d86a7b0430d8cdb78070b4c55a"))
    }

    @Test func c1MatchesTheSpecExample() {
        let c = LegacyPairing.c1(k: [UInt8](repeating: 0, count: 16), r: Self.le("5783D52156AD6F0E6388274EC6702EE0"),
                                 preq: Self.le("07071000000101"), pres: Self.le("05000800000302"),
                                 iat: 1, ia: Self.le("A1A2A3A4A5A6"), rat: 0, ra: Self.le("B1B2B3B4B5B6"))
        #expect(c == Self.le("1e1e3fef878988ead2a74dc5bef13b86"))
    }

    @Test func s1MatchesTheSpecExample() {
        let stk = LegacyPairing.s1(k: [UInt8](repeating: 0, count: 16), r1: Self.le("000F0E0D0C0B0A091122334455667788"),
                                   r2: Self.le("010203040506070899AABBCCDDEEFF00"))
        #expect(stk == Self.le("9a1fe1f0e8b0f49b5b4216ae796da062"))
    }
}
