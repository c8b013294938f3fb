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
        let limit = InflationLimit.bytes(compressedPath: path)
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
            if total > limit {
                unlink(tempPath)
                throw CaptureError(path: path, offset: total, reason: InflationLimit.message(limit))
            }
        }
        return tempPath
    }
}

/// A bound on how much a compressed input may inflate to (gzip, zip and tar members): a compression
/// bomb stops with a clear error instead of filling the disk. The bound is 200× the compressed size,
/// at least 1 GiB and at most 64 GiB; `BLEANALYZE_MAX_INFLATED` (bytes) sets it for one run.
public enum InflationLimit {
    static let ratio = 200
    static let floor = 1 << 30
    static let ceiling = 64 << 30

    public static func bytes(compressedPath: String) -> Int {
        if let v = getenv("BLEANALYZE_MAX_INFLATED"), let n = Int(String(cString: v)), n > 0 { return n }
        var st = stat()
        let size = stat(compressedPath, &st) == 0 ? Int(st.st_size) : 0
        return min(ceiling, max(floor, size.multipliedReportingOverflow(by: ratio).overflow ? ceiling : size * ratio))
    }

    static func message(_ limit: Int) -> String {
        "the compressed input inflates to more than \(limit) bytes (a compression bomb?); set BLEANALYZE_MAX_INFLATED=BYTES to read it anyway"
    }
}
