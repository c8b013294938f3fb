#if os(Linux)
import CCrypto
import Glibc
#elseif canImport(CommonCrypto)
import CommonCrypto
import Darwin
#endif

/// SHA-256 (FIPS 180-4) of a file's bytes as they are on disk (a compressed or archived log is
/// hashed as stored), read in 1 MiB pieces, so memory stays bounded whatever the size. The digest
/// comes from the system's library: OpenSSL's libcrypto on Linux (`EVP_DigestInit_ex`,
/// `EVP_DigestUpdate`, `EVP_DigestFinal_ex` with `EVP_sha256`), CommonCrypto on macOS
/// (`CC_SHA256_Init`, `CC_SHA256_Update`, `CC_SHA256_Final`).
enum FileDigest {
    static let chunkSize = 1 << 20

    /// Lowercase hex of the SHA-256 of `path`, or nil when the file cannot be read.
    static func sha256(path: String) -> String? {
        let fd = open(path, O_RDONLY)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var hasher = Hasher256()
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: chunkSize, alignment: 16)
        defer { buffer.deallocate() }
        while true {
            let n = read(fd, buffer.baseAddress, chunkSize)
            if n == 0 { break }
            if n < 0 {
                if errno == EINTR { continue }
                return nil   // a directory, or an I/O error
            }
            hasher.update(UnsafeRawBufferPointer(rebasing: buffer[0 ..< n]))
        }
        return hasher.finish().map { byte in (byte < 0x10 ? "0" : "") + String(byte, radix: 16) }.joined()
    }
}

#if os(Linux)
/// An EVP digest context for SHA-256 (libcrypto).
private struct Hasher256 {
    private let context: OpaquePointer?
    init() {
        context = EVP_MD_CTX_new()
        EVP_DigestInit_ex(context, EVP_sha256(), nil)
    }
    mutating func update(_ bytes: UnsafeRawBufferPointer) { EVP_DigestUpdate(context, bytes.baseAddress, bytes.count) }
    /// The 32-byte digest; frees the context.
    mutating func finish() -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        EVP_DigestFinal_ex(context, &digest, &length)
        EVP_MD_CTX_free(context)
        return Array(digest.prefix(Int(length)))
    }
}
#elseif canImport(CommonCrypto)
/// A CommonCrypto SHA-256 context.
private struct Hasher256 {
    private var context = CC_SHA256_CTX()
    init() { CC_SHA256_Init(&context) }
    mutating func update(_ bytes: UnsafeRawBufferPointer) { CC_SHA256_Update(&context, bytes.baseAddress, CC_LONG(bytes.count)) }
    mutating func finish() -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: Int(CC_SHA256_DIGEST_LENGTH))
        CC_SHA256_Final(&digest, &context)
        return digest
    }
}
#endif
