#if canImport(CCrypto)
import CCrypto
#endif

/// Whether this build can do LE Secure Connections pairing: P-256 and AES-CMAC come from OpenSSL's
/// libcrypto (Linux); CommonCrypto (macOS) has neither, so there the twin refuses SC pairing and says so.
enum SecureConnectionsSupport {
    #if canImport(CCrypto)
    static let available = true
    #else
    static let available = false
    #endif
    static let unavailable = "LE Secure Connections pairing needs P-256 and AES-CMAC from OpenSSL's libcrypto (the Linux build)"
}

/// AES-CMAC (RFC 4493), the MAC under the LE Secure Connections functions (Core v5.4 Vol 3 Part H
/// 2.2.5), from libcrypto's EVP_MAC "CMAC" with AES-128-CBC. Byte arrays most significant byte first.
enum AESCMAC {
    static func mac(key: [UInt8], _ message: [UInt8]) -> [UInt8]? {
        precondition(key.count == 16)
        #if canImport(CCrypto)
        var out = [UInt8](repeating: 0, count: 16)
        return ccrypto_aes_cmac(key, message, message.count, &out) == 1 ? out : nil
        #else
        return nil
        #endif
    }
}

/// A P-256 key pair (Core v5.4 Vol 3 Part H 2.3.5.6.1) held by libcrypto: generated fresh for each
/// pairing, or made from known values (the spec's sample data). Coordinates and the DHKey are
/// big-endian here, as the spec prints them; SMP carries them little-endian.
final class P256KeyPair {
    #if canImport(CCrypto)
    private let key: OpaquePointer
    #endif
    /// The public key's X and Y, 32 bytes each, most significant byte first.
    let x: [UInt8]
    let y: [UInt8]

    /// A new key pair; nil when the build has no libcrypto or it fails.
    convenience init?() {
        #if canImport(CCrypto)
        guard let key = ccrypto_p256_generate() else { return nil }
        self.init(key)
        #else
        return nil
        #endif
    }

    /// A key pair from its private scalar and public point (each coordinate big-endian).
    convenience init?(privateKey: [UInt8], x: [UInt8], y: [UInt8]) {
        #if canImport(CCrypto)
        guard privateKey.count == 32, x.count == 32, y.count == 32, let key = ccrypto_p256_from([0x04] + x + y, privateKey) else { return nil }
        self.init(key)
        #else
        return nil
        #endif
    }

    #if canImport(CCrypto)
    private init?(_ key: OpaquePointer) {
        var point = [UInt8](repeating: 0, count: 65)
        guard ccrypto_p256_public(key, &point) == 1 else { EVP_PKEY_free(key); return nil }
        self.key = key
        x = Array(point[1 ..< 33])
        y = Array(point[33 ..< 65])
    }

    deinit { EVP_PKEY_free(key) }
    #else
    private init(x: [UInt8], y: [UInt8]) { (self.x, self.y) = (x, y) }
    #endif

    /// The DHKey with the peer's public key (the X coordinate of the shared point, big-endian); nil
    /// when the peer's key is not a point of the curve (libcrypto checks it).
    func dhKey(peerX: [UInt8], peerY: [UInt8]) -> [UInt8]? {
        #if canImport(CCrypto)
        guard peerX.count == 32, peerY.count == 32, let peer = ccrypto_p256_from([0x04] + peerX + peerY, nil) else { return nil }
        defer { EVP_PKEY_free(peer) }
        var out = [UInt8](repeating: 0, count: 32)
        return ccrypto_ecdh(key, peer, &out) == 1 ? out : nil
        #else
        return nil
        #endif
    }
}

/// The LE Secure Connections functions (Core v5.4 Vol 3 Part H 2.2.6–2.2.9) on values as SMP
/// carries them: little-endian byte arrays (least significant byte first), like `LegacyPairing`.
/// Each concatenates its inputs most significant first (the spec's `||`) and MACs with AES-CMAC;
/// nil only when the build has no AES-CMAC.
enum SecureConnections {
    /// The spec's order (most significant byte first) of a little-endian value.
    private static func be(_ v: [UInt8]) -> [UInt8] { v.reversed() }

    /// f4(U, V, X, Z) = AES-CMAC_X(U || V || Z): the confirm value (2.2.6). U, V: 256-bit public
    /// key X coordinates; X: 128-bit nonce; Z: one byte (0 for Just Works / Numeric Comparison).
    static func f4(u: [UInt8], v: [UInt8], x: [UInt8], z: UInt8) -> [UInt8]? {
        AESCMAC.mac(key: be(x), be(u) + be(v) + [z]).map(be)
    }

    /// f5(W, N1, N2, A1, A2) (2.2.7): T = AES-CMAC_SALT(W), then MacKey = AES-CMAC_T(0 || keyID ||
    /// N1 || N2 || A1 || A2 || 256) and LTK the same with counter 1. A1, A2: 56 bits, the address
    /// type in the most significant byte (so 7 little-endian bytes: address, then type).
    static func f5(w: [UInt8], n1: [UInt8], n2: [UInt8], a1: [UInt8], a2: [UInt8]) -> (macKey: [UInt8], ltk: [UInt8])? {
        let salt: [UInt8] = [0x6C, 0x88, 0x83, 0x91, 0xAA, 0xF5, 0xA5, 0x38, 0x60, 0x37, 0x0B, 0xDB, 0x5A, 0x60, 0x83, 0xBE]
        let keyID: [UInt8] = [0x62, 0x74, 0x6C, 0x65]   // "btle"
        guard let t = AESCMAC.mac(key: salt, be(w)) else { return nil }
        func part(_ counter: UInt8) -> [UInt8]? {
            AESCMAC.mac(key: t, [counter] + keyID + be(n1) + be(n2) + be(a1) + be(a2) + [0x01, 0x00]).map(be)
        }
        guard let macKey = part(0), let ltk = part(1) else { return nil }
        return (macKey, ltk)
    }

    /// f6(W, N1, N2, R, IOcap, A1, A2) = AES-CMAC_W(N1 || N2 || R || IOcap || A1 || A2): the DHKey
    /// check (2.2.8). IOcap: 3 bytes, AuthReq most significant, then OOB flag, then IO capability.
    static func f6(w: [UInt8], n1: [UInt8], n2: [UInt8], r: [UInt8], ioCap: [UInt8], a1: [UInt8], a2: [UInt8]) -> [UInt8]? {
        AESCMAC.mac(key: be(w), be(n1) + be(n2) + be(r) + be(ioCap) + be(a1) + be(a2)).map(be)
    }

    /// g2(U, V, X, Y) = AES-CMAC_X(U || V || Y) mod 2^32 (2.2.9); the six digits a Numeric
    /// Comparison shows are this value mod 10^6.
    static func g2(u: [UInt8], v: [UInt8], x: [UInt8], y: [UInt8]) -> UInt32? {
        guard let m = AESCMAC.mac(key: be(x), be(u) + be(v) + be(y)) else { return nil }
        return m[12...].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
    }
}
