import CFileGuard
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A read-only memory mapping of a whole file. Owns the mapping (`munmap` in `deinit`); pointers
/// handed out by `withBytes` must not escape the closure.
///
/// Mapped pages count in the process RSS once touched. A streaming reader calls `release(before:)`
/// as it moves on so a 600 MB capture does not keep 600 MB resident.
public final class MappedFile: @unchecked Sendable {   // safe: immutable mapping, read-only
    public let path: String
    public let size: Int
    private let base: UnsafeMutableRawPointer?
    @exclusivity(unchecked) private var releasedUpTo = 0

    public struct OpenError: Error, CustomStringConvertible {
        public let path: String
        public let reason: String
        public var description: String { "\(path): \(reason)" }
    }

    /// Opens and maps `path`. The corresponding C functions are `open`, `fstat` and `mmap`.
    public init(path: String) throws(OpenError) {
        self.path = path
        let fd = open(path, O_RDONLY)
        guard fd >= 0 else { throw OpenError(path: path, reason: String(cString: strerror(errno))) }
        defer { close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0 else { throw OpenError(path: path, reason: String(cString: strerror(errno))) }
        guard (st.st_mode & S_IFMT) == S_IFREG else { throw OpenError(path: path, reason: "not a regular file") }
        size = Int(st.st_size)
        if size == 0 {
            base = nil
            return
        }
        let p = mmap(nil, size, PROT_READ, MAP_PRIVATE, fd, 0)
        guard let p, p != MAP_FAILED else { throw OpenError(path: path, reason: String(cString: strerror(errno))) }
        #if canImport(Glibc)
        _ = madvise(p, size, MADV_SEQUENTIAL)
        #endif
        base = p
        // A file that shrinks while mapped (still being written) would kill the process with SIGBUS on
        // the next touch of a vanished page: the guard maps zeros there instead and notes the offset.
        _ = bleanalyze_fileguard_register(p, size)
    }

    deinit {
        if let base {
            bleanalyze_fileguard_unregister(base)
            munmap(base, size)
        }
    }

    /// True once any guarded mapping lost pages (a plain load: readers test it per record).
    @inline(__always)
    public static var anyFault: Bool { bleanalyze_fileguard_fault_count() != 0 }

    /// The lowest file offset whose page vanished while mapped (the file shrank), or nil.
    public var vanishedOffset: Int? {
        guard let base else { return nil }
        let at = bleanalyze_fileguard_fault_offset(base)   // size_t: (size_t)-1 arrives as -1
        return at < 0 ? nil : at
    }

    /// The whole file as bytes, valid only inside `body`.
    public func withBytes<R, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
        try body(UnsafeRawBufferPointer(start: base, count: size))
    }

    /// Tells the kernel the pages before `offset` are no longer needed, so they leave the RSS.
    /// Cheap to call often: it acts only every 32 MiB.
    public func release(before offset: Int) {
        #if canImport(Glibc)
        let chunk = 32 << 20
        guard let base, offset - releasedUpTo >= chunk else { return }
        let pageSize = Int(sysconf(Int32(_SC_PAGESIZE)))
        let end = (offset / pageSize) * pageSize
        guard end > releasedUpTo else { return }
        _ = madvise(base + releasedUpTo, end - releasedUpTo, MADV_DONTNEED)
        releasedUpTo = end
        #endif
    }
}
