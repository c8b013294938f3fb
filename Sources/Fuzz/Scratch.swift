#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One scratch file per process for harnesses whose entry point takes a path (the capture readers
/// map files, libpcap reads a FILE). In /dev/shm when it exists, so no disk is touched.
enum Scratch {
    static let directory: String = {
        var isDir = stat()
        if stat("/dev/shm", &isDir) == 0, (isDir.st_mode & S_IFMT) == S_IFDIR, access("/dev/shm", W_OK) == 0 { return "/dev/shm" }
        return getenv("TMPDIR").map { String(cString: $0) } ?? "/tmp"
    }()

    /// `directory/blefuzz-PID-name`.
    static func path(_ name: String) -> String { "\(directory)/blefuzz-\(getpid())-\(name)" }

    /// Replaces the file at `path` with `data`. Returns false when it cannot be written.
    @discardableResult
    static func write(_ data: UnsafeRawBufferPointer, to path: String) -> Bool {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var offset = 0
        while offset < data.count {
            let n = systemWrite(fd, data.baseAddress! + offset, data.count - offset)   // safe: offset < count, so non-empty
            if n <= 0 { return false }
            offset += n
        }
        return true
    }

    static func write(_ bytes: [UInt8], to path: String) -> Bool {
        bytes.withUnsafeBytes { write($0, to: path) }
    }

    static func remove(_ path: String) { unlink(path) }
}

/// The C `write`, named apart from the method above.
@inline(__always)
func systemWrite(_ fd: Int32, _ p: UnsafeRawPointer, _ n: Int) -> Int {
    #if canImport(Glibc)
    Glibc.write(fd, p, n)
    #else
    Darwin.write(fd, p, n)
    #endif
}

/// Writes a line to standard error (the C `stderr` global is not concurrency-safe in Swift 6).
func printError(_ message: String) {
    var text = message.hasSuffix("\n") ? message : message + "\n"
    text.withUTF8 { p in _ = systemWrite(2, p.baseAddress!, p.count) }   // safe: a non-empty string
}
