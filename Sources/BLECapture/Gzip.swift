import CZlib
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Transparent gzip input: the stream is inflated by zlib into an unlinked temporary file, which is
/// then read like any capture (memory-mapped or by libpcap), so memory stays bounded.
enum Gzip {
    /// Inflates `path` into a new temporary file and returns its path (the caller unlinks it).
    /// The corresponding C functions are `gzopen`, `gzread` and `mkstemp`.
    static func inflateToTemporaryFile(_ path: String) throws(CaptureError) -> String {
        guard let gz = gzopen(path, "rb") else {
            throw CaptureError(path: path, offset: 0, reason: "cannot open gzip stream")
        }
        defer { gzclose(gz) }
        let dir = getenv("TMPDIR").map { String(cString: $0) } ?? "/tmp"
        var template = Array((dir + "/bleanalyze-gz-XXXXXX").utf8CString)
        let fd = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }   // safe: non-empty array
        guard fd >= 0 else { throw CaptureError(path: path, reason: "cannot create a temporary file in \(dir)") }
        let tempPath = String(cString: template)
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        var total = 0
        while true {
            let n = buffer.withUnsafeMutableBytes { gzread(gz, $0.baseAddress, UInt32($0.count)) }
            if n < 0 {
                // A damaged or cut stream: keep what inflated, the capture reader reports the cut record.
                break
            }
            if n == 0 { break }
            let written = buffer.withUnsafeBytes { write(fd, $0.baseAddress, Int(n)) }
            guard written == Int(n) else {
                unlink(tempPath)
                throw CaptureError(path: path, offset: total, reason: "cannot write the inflated capture to \(dir)")
            }
            total += Int(n)
        }
        return tempPath
    }
}
