import BLECapture
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `-` as the capture argument: the capture comes from standard input (`adb shell cat … | bleanalyze -`,
/// `zcat log.gz | bleanalyze info -`). The readers map files and the report reads its capture twice,
/// so a pipe is first copied, 1 MiB at a time, into a temporary file; memory stays bounded and the
/// format is still detected from the bytes (gzip, zip, pcap … all work). Regular files redirected with
/// `<` are read in place on Linux. The copy lives as long as the process.
enum StandardInput {
    /// How messages and reports name the capture.
    static let name = "(standard input)"

    private static let lock = NSLockLike()
    nonisolated(unsafe) private static var resolved: String?   // guarded by `lock`
    nonisolated(unsafe) private static var namedCopy: String?  // removed at exit (not Linux)

    /// A path the readers can open and re-open, holding what standard input delivers.
    /// - Throws: `CaptureError` (exit code 2) when standard input is a terminal or cannot be copied.
    static func path() throws(CaptureError) -> String {
        let result: Result<String, CaptureError> = lock.locked {
            if let resolved { return .success(resolved) }
            do throws(CaptureError) {
                let path = try spool()
                resolved = path
                return .success(path)
            } catch { return .failure(error) }
        }
        return try result.get()
    }

    private static func spool() throws(CaptureError) -> String {
        if isatty(STDIN_FILENO) != 0 {
            throw CaptureError(path: name, reason: "a terminal, not a capture: pipe one in (bleanalyze info - < btsnoop_hci.log)")
        }
        #if os(Linux)
        // `bleanalyze - < file`: a regular file at its start is re-opened through /proc, no copy.
        var st = stat()
        if fstat(STDIN_FILENO, &st) == 0, st.st_mode & S_IFMT == S_IFREG, lseek(STDIN_FILENO, 0, SEEK_CUR) == 0 {
            return "/proc/self/fd/\(STDIN_FILENO)"
        }
        #endif
        let dir = getenv("TMPDIR").map { String(cString: $0) } ?? "/tmp"
        var template = Array((dir + "/bleanalyze-stdin-XXXXXX").utf8CString)
        let fd = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }   // safe: non-empty array
        guard fd >= 0 else { throw CaptureError(path: name, reason: "cannot create a temporary file in \(dir)") }
        let tempPath = String(cString: template)
        #if os(Linux)
        // Unlinked at once: the copy disappears with the process however it ends; /proc re-opens it.
        unlink(tempPath)
        let path = "/proc/self/fd/\(fd)"
        #else
        namedCopy = tempPath
        atexit { if let copy = StandardInput.namedCopy { unlink(copy) } }
        let path = tempPath
        #endif
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        var total = 0
        while true {
            let n = buffer.withUnsafeMutableBytes { read(STDIN_FILENO, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            if n < 0 { throw CaptureError(path: name, offset: total, reason: "cannot read standard input (errno \(errno))") }
            if n == 0 { break }
            var done = 0
            while done < n {
                let w = buffer.withUnsafeBytes { write(fd, $0.baseAddress! + done, n - done) }   // safe: done < n ≤ count
                if w < 0 && errno == EINTR { continue }
                guard w > 0 else {
                    throw CaptureError(path: name, offset: total + done, reason: "cannot copy standard input to \(dir) (disk full?)")
                }
                done += w
            }
            total += n
        }
        #if !os(Linux)
        close(fd)
        #endif
        return path
    }
}
