#if canImport(CCrypto)
import CCrypto
#elseif canImport(CommonCrypto)
import CommonCrypto
#endif

/// AES-128 encryption of one block (FIPS-197), the security function `e` of Bluetooth LE legacy
/// pairing (Core v5.4 Vol 3 Part H 2.2.1), from the system's crypto library — OpenSSL's libcrypto on
/// Linux, CommonCrypto on macOS — never hand-written. Byte arrays in the spec's order (most
/// significant byte first). For a twin's pairing answers, not for protecting anything.
enum AES128 {
    /// Encrypts one 16-byte block with a 16-byte key (ECB of a single block, no padding).
    static func encrypt(key: [UInt8], _ block: [UInt8]) -> [UInt8] {
        precondition(key.count == 16 && block.count == 16)
        var out = [UInt8](repeating: 0, count: 32)
        #if canImport(CCrypto)
        guard let ctx = EVP_CIPHER_CTX_new() else { fatalError("libcrypto: no cipher context") }
        defer { EVP_CIPHER_CTX_free(ctx) }
        var written: Int32 = 0
        let ok = EVP_EncryptInit_ex(ctx, EVP_aes_128_ecb(), nil, key, nil) == 1
            && EVP_CIPHER_CTX_set_padding(ctx, 0) == 1
            && EVP_EncryptUpdate(ctx, &out, &written, block, 16) == 1
        precondition(ok && written == 16, "libcrypto AES-128 failed")
        #elseif canImport(CommonCrypto)
        var written = 0
        let status = CCCrypt(CCOperation(kCCEncrypt), CCAlgorithm(kCCAlgorithmAES), CCOptions(kCCOptionECBMode),
                             key, 16, nil, block, 16, &out, out.count, &written)
        precondition(status == kCCSuccess && written == 16, "CommonCrypto AES-128 failed")
        #else
        #error("AES-128 needs OpenSSL's libcrypto (Linux) or CommonCrypto (macOS)")
        #endif
        return Array(out.prefix(16))
    }
}

/// The legacy pairing functions (Core v5.4 Vol 3 Part H 2.2.3, 2.2.4), on values as SMP carries
/// them: little-endian byte arrays (least significant byte first).
enum LegacyPairing {
    /// `e(k, x)` with little-endian values: AES works on the most significant byte first.
    static func e(_ key: [UInt8], _ x: [UInt8]) -> [UInt8] {
        AES128.encrypt(key: key.reversed(), x.reversed()).reversed()
    }

    /// c1 (2.2.3): the confirm value of `r`. `preq`/`pres`: the 7-byte Pairing Request/Response
    /// PDUs as sent; `iat`/`rat`: 0 public, 1 random; `ia`/`ra`: addresses.
    static func c1(k: [UInt8], r: [UInt8], preq: [UInt8], pres: [UInt8], iat: UInt8, ia: BDAddrBytes, rat: UInt8, ra: BDAddrBytes) -> [UInt8] {
        // p1 = pres || preq || rat' || iat' (iat' least significant); p2 = padding || ia || ra.
        let p1: [UInt8] = [iat, rat] + preq + pres
        let p2: [UInt8] = ra + ia + [0, 0, 0, 0]
        let first = e(k, zip(r, p1).map { $0 ^ $1 })
        return e(k, zip(first, p2).map { $0 ^ $1 })
    }

    /// s1 (2.2.4): the STK from the responder's random `r1` and the initiator's `r2`:
    /// r' = r1' || r2', the least significant 64 bits of each (r2' least significant).
    static func s1(k: [UInt8], r1: [UInt8], r2: [UInt8]) -> [UInt8] {
        e(k, Array(r2.prefix(8)) + Array(r1.prefix(8)))
    }
}

/// An address as 6 little-endian bytes.
typealias BDAddrBytes = [UInt8]
