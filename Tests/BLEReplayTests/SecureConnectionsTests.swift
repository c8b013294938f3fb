@testable import BLEReplay
import Testing
import BLEProtocol

/// The twin's LE Secure Connections arithmetic (libcrypto's P-256 and AES-CMAC under f4/f5/f6/g2)
/// against published sample data, written most significant byte first as printed:
/// - AES-CMAC: RFC 4493 section 4 (also Core v5.4 Vol 3 Part H D.1);
/// - ECDH: Core v5.4 Vol 2 Part G 7.1.2.1 P-256 data set 1, whose private key A and public key A are
///   the debug key pair of Vol 3 Part H 2.3.5.6.1 (the same values are in BlueZ unit/test-ecc.c
///   test_sample_1 and Bumble tests/smp_test.py test_ecc);
/// - f4, f5, f6, g2: Core v5.4 Vol 3 Part H D.2–D.5 (also in Bumble tests/smp_test.py).
/// Values SMP carries go in little-endian (`le`), as the twin uses them.
@Suite(.enabled(if: SecureConnectionsSupport.available))
struct SecureConnectionsTests {
    static func bytes(_ hex: String) -> [UInt8] { LegacyPairingTests.bytes(hex.filter { $0 != " " }) }
    static func le(_ hex: String) -> [UInt8] { bytes(hex).reversed() }

    static let privateA = "3f49f6d4 a3c55f38 74c9b3e3 d2103f50 4aff607b eb40b799 5899b8a6 cd3c1abd"
    static let privateB = "55188b3d 32f6bb9a 900afcfb eed4e72a 59cb9ac2 f19d7cfb 6b4fdd49 f47fc5fd"
    static let publicAX = "20b003d2 f297be2c 5e2c83a7 e9f9a5b9 eff49111 acf4fddb cc030148 0e359de6"
    static let publicAY = "dc809c49 652aeb6d 63329abf 5a52155c 766345c2 8fed3024 741c8ed0 1589d28b"
    static let publicBX = "1ea1f0f0 1faf1d96 09592284 f19e4c00 47b58afd 8615a69f 559077b2 2faaa190"
    static let publicBY = "4c55f33e 429dad37 7356703a 9ab85160 472d1130 e28e3676 5f89aff9 15b1214a"
    static let dhKey = "ec0234a3 57c8ad05 341010a6 0a397d9b 99796b13 b4f866f1 868d34f3 73bfa698"
    // D.2–D.5 inputs.
    static let n1 = "d5cb8454 d177733e ffffb2ec 712baeab"
    static let n2 = "a6e8e7cc 25a75f6e 216583f7 ff3dc4cf"
    static let a1 = "00561237 37bfce", a2 = "00a71370 2dcfc1"

    @Test func aesCMACMatchesRFC4493() {
        let key = Self.bytes("2b7e1516 28aed2a6 abf71588 09cf4f3c")
        let m = "6bc1bee2 2e409f96 e93d7e11 7393172a ae2d8a57 1e03ac9c 9eb76fac 45af8e51 30c81c46 a35ce411 e5fbc119 1a0a52ef f69f2445 df4f9b17 ad2b417b e66c3710"
        let message = Self.bytes(m)
        #expect(AESCMAC.mac(key: key, []) == Self.bytes("bb1d6929 e9593728 7fa37d12 9b756746"))
        #expect(AESCMAC.mac(key: key, Array(message.prefix(16))) == Self.bytes("070a16b4 6b4d4144 f79bdd9d d04a287c"))
        #expect(AESCMAC.mac(key: key, Array(message.prefix(40))) == Self.bytes("dfa66747 de9ae630 30ca3261 1497c827"))
        #expect(AESCMAC.mac(key: key, message) == Self.bytes("51f0bebf 7e3b9d92 fc497417 79363cfe"))
    }

    @Test func ecdhOfTheDebugKeyPairGivesTheSampleDHKey() throws {
        let a = try #require(P256KeyPair(privateKey: Self.bytes(Self.privateA), x: Self.bytes(Self.publicAX), y: Self.bytes(Self.publicAY)))
        let b = try #require(P256KeyPair(privateKey: Self.bytes(Self.privateB), x: Self.bytes(Self.publicBX), y: Self.bytes(Self.publicBY)))
        #expect(a.dhKey(peerX: Self.bytes(Self.publicBX), peerY: Self.bytes(Self.publicBY)) == Self.bytes(Self.dhKey))
        #expect(b.dhKey(peerX: Self.bytes(Self.publicAX), peerY: Self.bytes(Self.publicAY)) == Self.bytes(Self.dhKey))
    }

    @Test func aPointOffTheCurveIsRefused() throws {
        let a = try #require(P256KeyPair(privateKey: Self.bytes(Self.privateA), x: Self.bytes(Self.publicAX), y: Self.bytes(Self.publicAY)))
        var y = Self.bytes(Self.publicBY)
        y[31] ^= 1
        #expect(a.dhKey(peerX: Self.bytes(Self.publicBX), peerY: y) == nil)
        #expect(P256KeyPair(privateKey: Self.bytes(Self.privateA), x: Self.bytes(Self.publicAX), y: y) == nil)
    }

    @Test func freshKeyPairsAgree() throws {
        let a = try #require(P256KeyPair()), b = try #require(P256KeyPair())
        #expect(a.x != b.x)
        let ab = try #require(a.dhKey(peerX: b.x, peerY: b.y))
        #expect(ab.count == 32 && ab == b.dhKey(peerX: a.x, peerY: a.y))
    }

    /// D.2 and D.5 print V as 55188b3d… (the bits of private key B), used here as printed.
    @Test func f4MatchesD2() {
        let value = SecureConnections.f4(u: Self.le(Self.publicAX), v: Self.le(Self.privateB), x: Self.le(Self.n1), z: 0)
        #expect(value == Self.le("f2c916f1 07a9bd1c f1eda1be a974872d"))
    }

    @Test func f5MatchesD3() throws {
        let keys = try #require(SecureConnections.f5(w: Self.le(Self.dhKey), n1: Self.le(Self.n1), n2: Self.le(Self.n2),
                                                     a1: Self.le(Self.a1), a2: Self.le(Self.a2)))
        #expect(keys.macKey == Self.le("2965f176 a1084a02 fd3f6a20 ce636e20"))
        #expect(keys.ltk == Self.le("69867911 69d7cd23 980522b5 94750a38"))
    }

    @Test func f6MatchesD4() {
        let value = SecureConnections.f6(w: Self.le("2965f176 a1084a02 fd3f6a20 ce636e20"), n1: Self.le(Self.n1), n2: Self.le(Self.n2),
                                         r: Self.le("12a3343b b453bb54 08da42d2 0c2d0fc8"), ioCap: Self.le("010102"),
                                         a1: Self.le(Self.a1), a2: Self.le(Self.a2))
        #expect(value == Self.le("e3c47398 9cd0e8c5 d26c0b09 da958f61"))
    }

    @Test func g2MatchesD5() {
        let value = SecureConnections.g2(u: Self.le(Self.publicAX), v: Self.le(Self.privateB), x: Self.le(Self.n1), y: Self.le(Self.n2))
        #expect(value == 0x2F9E_D5BA)
    }
}

/// The pairing method from the Pairing Request and Response, against Core v5.4 Vol 3 Part H
/// 2.3.5.1 Tables 2.6–2.8 (IO capabilities: 0 DisplayOnly, 1 DisplayYesNo, 2 KeyboardOnly,
/// 3 NoInputNoOutput, 4 KeyboardDisplay; AuthReq bit 2 MITM, bit 3 SC).
@Suite struct SecureConnectionsMethodTests {
    /// A Pairing Request (0x01) or Response (0x02) with these fields; `sc` sets AuthReq's SC bit.
    static func pdu(_ code: UInt8, io: UInt8, oob: UInt8 = 0, mitm: Bool, sc: Bool = true) -> [UInt8] {
        [code, io, oob, 0x01 | (sc ? 0x08 : 0) | (mitm ? 0x04 : 0), 16, 0x03, 0x03]
    }

    /// The twin chooses through BLEProtocol's `SMP.PairingMethod.select`, the table the analysis tells.
    @Test func tableEntries() {
        func method(_ i: UInt8, _ r: UInt8, sc: Bool, mitm: Bool = true) -> SMP.PairingMethod? {
            TwinPDU.pairingMethod(request: Self.pdu(1, io: i, mitm: mitm, sc: sc), response: Self.pdu(2, io: r, mitm: false, sc: sc))
        }
        // Neither side asks for MITM protection: Just Works whatever the IO (Table 2.6/2.7).
        #expect(method(4, 4, sc: true, mitm: false) == .justWorks)
        // DisplayYesNo with DisplayYesNo: Numeric Comparison with SC, Just Works legacy.
        #expect(method(1, 1, sc: true) == .numericComparison)
        #expect(method(1, 1, sc: false) == .justWorks)
        // KeyboardDisplay initiator, DisplayYesNo responder: Numeric Comparison (SC), Passkey Entry (legacy).
        #expect(method(4, 1, sc: true) == .numericComparison)
        #expect(method(4, 1, sc: false) == .passkeyEntry)
        // DisplayOnly initiator, KeyboardOnly responder: Passkey Entry (the responder inputs).
        #expect(method(0, 2, sc: true) == .passkeyEntry)
        // NoInputNoOutput on either side: Just Works.
        #expect(method(4, 3, sc: true) == .justWorks)
        #expect(method(3, 4, sc: false) == .justWorks)
        // Not a pairing request and response: no method.
        #expect(TwinPDU.pairingMethod(request: Self.pdu(2, io: 1, mitm: true), response: Self.pdu(2, io: 1, mitm: true)) == nil)
    }

    @Test func outOfBand() {
        // SC: OOB when either side has OOB data; legacy: only when both do (Tables 2.6, 2.7).
        #expect(TwinPDU.pairingMethod(request: Self.pdu(1, io: 3, oob: 1, mitm: false), response: Self.pdu(2, io: 3, mitm: false)) == .outOfBand)
        #expect(TwinPDU.pairingMethod(request: Self.pdu(1, io: 3, oob: 1, mitm: false, sc: false),
                                      response: Self.pdu(2, io: 3, mitm: false, sc: false)) == .justWorks)
    }
}
