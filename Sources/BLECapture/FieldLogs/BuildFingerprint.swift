/// The Android build a bugreport was taken on. `dumpstate` writes it in the header of the main text
/// file, a few lines in: `Build fingerprint: 'google/husky/husky:14/AP1A.240305.019/11413474:user/release-keys'`
/// (brand/product/device:release/build id/incremental:type/tags).
enum BuildFingerprint {
    static let marker = Array("Build fingerprint: '".utf8)
    /// Bytes of a text file searched (the header is within its first few hundred bytes).
    static let searchedBytes = 8192
    /// Longer values are not a fingerprint.
    static let maxLength = 256

    /// The fingerprint in the first `searchedBytes` of `text`, or nil.
    static func find(in text: UnsafeRawBufferPointer) -> String? {
        let head = UnsafeRawBufferPointer(rebasing: text[0 ..< min(text.count, searchedBytes)])
        guard let at = Btsnooz.find(marker, in: head, from: 0) else { return nil }
        let start = at + marker.count   // safe: the marker was found inside `head`
        var end = start
        while end < head.count, head[end] != UInt8(ascii: "'"), head[end] != UInt8(ascii: "\n") { end += 1 }
        guard end < head.count, head[end] == UInt8(ascii: "'"), end > start, end - start <= maxLength else { return nil }
        return String(decoding: UnsafeRawBufferPointer(rebasing: head[start ..< end]), as: UTF8.self)
    }

    static func find(in text: [UInt8]) -> String? { text.withUnsafeBytes { find(in: $0) } }
}
