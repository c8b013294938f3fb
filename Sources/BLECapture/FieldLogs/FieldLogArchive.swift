import CArchive
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One streaming pass over a zip or (compressed) tar archive through libarchive: the containers
/// field logs arrive in (`adb bugreport` zip, iOS/macOS sysdiagnose `.tar.gz`).
/// The corresponding C functions are `archive_read_new`, `archive_read_support_format_zip`,
/// `archive_read_support_format_tar`, `archive_read_support_filter_all`, `archive_read_open_filename`,
/// `archive_read_next_header`, `archive_read_data` and `archive_read_free`.
final class ArchiveReader {
    private let handle: OpaquePointer
    let path: String

    /// A regular file inside the archive, valid until the next call to `next()`.
    struct Entry {
        var name: String
        /// Declared size, when the archive header gives it.
        var size: Int?
        var index: Int
    }

    init(path: String) throws(CaptureError) {
        guard let a = archive_read_new() else { throw CaptureError(path: path, reason: "libarchive: out of memory") }
        archive_read_support_filter_all(a)
        archive_read_support_format_zip(a)
        archive_read_support_format_tar(a)
        archive_read_support_format_gnutar(a)
        guard archive_read_open_filename(a, path, 1 << 16) == ARCHIVE_OK else {
            let why = archive_error_string(a).map { String(cString: $0) } ?? "cannot open"
            archive_read_free(a)
            throw CaptureError(path: path, offset: 0, reason: "archive: \(why)")
        }
        handle = a
        self.path = path
    }

    deinit { archive_read_free(handle) }

    private var index = 0
    /// Set when the archive ended with an error (a cut or damaged archive): what was read is kept.
    private(set) var problem: String?

    /// The next regular file, or nil at the end (or at damage, see `problem`).
    func next() -> Entry? {
        while true {
            var entry: OpaquePointer? = nil
            let rc = archive_read_next_header(handle, &entry)
            if rc == ARCHIVE_EOF { return nil }
            guard rc == ARCHIVE_OK || rc == ARCHIVE_WARN, let entry else {
                problem = archive_error_string(handle).map { String(cString: $0) } ?? "damaged archive"
                return nil
            }
            index += 1
            guard archive_entry_filetype(entry) == 0o100000 else { continue }   // AE_IFREG
            let name = archive_entry_pathname(entry).map { String(cString: $0) } ?? "entry \(index)"
            let size = archive_entry_size_is_set(entry) != 0 ? Int(archive_entry_size(entry)) : nil
            return Entry(name: name, size: size, index: index)
        }
    }

    /// Reads up to `count` bytes of the current entry (fewer at its end).
    func read(upTo count: Int) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: count)
        var filled = 0
        while filled < count {
            let n = out.withUnsafeMutableBytes { archive_read_data(handle, $0.baseAddress! + filled, count - filled) }   // safe: filled < count
            if n <= 0 { break }
            filled += n
        }
        out.removeSubrange(filled...)
        return out
    }

    /// Streams the rest of the current entry in chunks; `body` returns false to stop early.
    func stream(_ body: (UnsafeRawBufferPointer) -> Bool) {
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let keepGoing = chunk.withUnsafeMutableBytes { buf -> Bool in
                let n = archive_read_data(handle, buf.baseAddress, buf.count)
                if n <= 0 { return false }
                return body(UnsafeRawBufferPointer(rebasing: buf[0 ..< n]))
            }
            if !keepGoing { return }
        }
    }

    /// Writes the rest of the current entry to a new temporary file and returns its path.
    func extractToTemporaryFile() throws(CaptureError) -> String {
        let (fd, tempPath) = try TemporaryFile.create(path: path)
        defer { close(fd) }
        var failed = false
        var total = 0
        let limit = InflationLimit.bytes(compressedPath: path)
        stream { bytes in
            let written = write(fd, bytes.baseAddress, bytes.count)
            if written != bytes.count { failed = true; return false }
            total += bytes.count
            return total <= limit
        }
        if total > limit {
            unlink(tempPath)
            throw CaptureError(path: path, offset: total, reason: InflationLimit.message(limit))
        }
        if failed {
            unlink(tempPath)
            throw CaptureError(path: path, reason: "cannot write the extracted log to a temporary file")
        }
        return tempPath
    }
}

/// Temporary files for inflated or extracted logs (the caller unlinks them).
enum TemporaryFile {
    /// The corresponding C function is `mkstemp`.
    static func create(path: String) throws(CaptureError) -> (fd: Int32, path: String) {
        let dir = getenv("TMPDIR").map { String(cString: $0) } ?? "/tmp"
        var template = Array((dir + "/bleanalyze-log-XXXXXX").utf8CString)
        let fd = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }   // safe: non-empty array
        guard fd >= 0 else { throw CaptureError(path: path, reason: "cannot create a temporary file in \(dir)") }
        return (fd, String(cString: template))
    }

    static func write(_ bytes: [UInt8], for path: String) throws(CaptureError) -> String {
        let (fd, tempPath) = try create(path: path)
        defer { close(fd) }
        let written = bytes.withUnsafeBytes { Glibc_write(fd, $0.baseAddress, $0.count) }
        guard written == bytes.count else {
            unlink(tempPath)
            throw CaptureError(path: path, reason: "cannot write a temporary file")
        }
        return tempPath
    }
}

@inline(__always)
private func Glibc_write(_ fd: Int32, _ p: UnsafeRawPointer?, _ n: Int) -> Int { write(fd, p, n) }

/// Writes zip or tar.gz archives through libarchive: test fixtures (a bugreport zip, a sysdiagnose
/// tar.gz built from the project's own captures) and `export` of field logs.
/// The corresponding C functions are `archive_write_new`, `archive_write_set_format_zip`,
/// `archive_write_set_format_pax_restricted`, `archive_write_add_filter_gzip`,
/// `archive_write_open_filename`, `archive_write_header` and `archive_write_data`.
public struct FieldLogArchiveWriter {
    public enum Format: Sendable { case zip, tarGzip }
    public var members: [(name: String, bytes: [UInt8])] = []
    public let format: Format

    public init(format: Format) { self.format = format }

    public mutating func add(_ name: String, _ bytes: [UInt8]) { members.append((name, bytes)) }
    public mutating func add(_ name: String, text: String) { members.append((name, Array(text.utf8))) }

    /// Writes the archive to `path`.
    /// - Throws: `CaptureError` with libarchive's reason.
    public func write(to path: String) throws(CaptureError) {
        guard let a = archive_write_new() else { throw CaptureError(path: path, reason: "libarchive: out of memory") }
        defer { archive_write_free(a) }
        switch format {
        case .zip:
            archive_write_set_format_zip(a)
        case .tarGzip:
            archive_write_set_format_pax_restricted(a)
            archive_write_add_filter_gzip(a)
        }
        func fail() -> CaptureError {
            CaptureError(path: path, reason: "archive: " + (archive_error_string(a).map { String(cString: $0) } ?? "write failed"))
        }
        guard archive_write_open_filename(a, path) == ARCHIVE_OK else { throw fail() }
        for m in members {
            guard let e = archive_entry_new() else { throw fail() }
            defer { archive_entry_free(e) }
            archive_entry_set_pathname(e, m.name)
            archive_entry_set_size(e, la_int64_t(m.bytes.count))
            archive_entry_set_filetype(e, 0o100000)   // AE_IFREG
            archive_entry_set_perm(e, 0o644)
            archive_entry_set_mtime(e, 1_700_000_000, 0)
            guard archive_write_header(a, e) == ARCHIVE_OK else { throw fail() }
            let n = m.bytes.withUnsafeBytes { archive_write_data(a, $0.baseAddress, $0.count) }
            guard n == m.bytes.count else { throw fail() }
        }
        guard archive_write_close(a) == ARCHIVE_OK else { throw fail() }
    }
}
