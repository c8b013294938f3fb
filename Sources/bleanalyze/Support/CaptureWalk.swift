import BLECapture
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The files `check` analyses: each PATH that is a file, and every capture found in each PATH that
/// is a directory (recursively, in name order, without following symbolic links to directories,
/// skipping names that start with a dot).
///
/// In a directory, a file is analysed when its first bytes look like a capture or a field-log
/// container (`CaptureFile.recognises`: format from the bytes, never the name). A file that does not
/// but whose name says it should (`.btsnoop`, `.pklg`, `.pcap`, `btsnoop_hci.log`, `.zip`…) is
/// analysed too, so that a damaged capture becomes an error row instead of vanishing; anything else
/// (README.md, SHA256SUMS, `.json`) is skipped and counted.
struct CaptureWalk {
    private(set) var files: [String] = []
    private(set) var skipped: [String] = []
    /// Directories that could not be listed (an error row each).
    private(set) var unreadableDirectories: [(path: String, reason: String)] = []

    /// Names that promise a capture or field log, lowercased.
    static let captureSuffixes = [".btsnoop", ".snoop", ".log", ".cfa", ".pklg", ".pcap", ".pcapng", ".cap",
                                  ".gz", ".tgz", ".zip", ".tar", ".last", ".btsnooz"]
    static let captureWords = ["btsnoop", "btsnooz", "hci", "bugreport", "packetlogger", "sysdiagnose"]
    static let headBytes = 4096
    /// Deeper than this is a loop or a mistake.
    static let maxDepth = 64

    /// - Parameter filterFiles: apply the rule for files found in directories to the files named too
    ///   (`check --only-captures`: a fleet job hands over every file of a listing).
    init(_ paths: [String], filterFiles: Bool = false) {
        for path in paths {
            if Self.isDirectory(path) {
                walk(path, depth: 0)
            } else if filterFiles {
                consider(path, name: String(path.split(separator: "/").last ?? ""))
            } else {
                files.append(path)
            }
        }
    }

    private mutating func walk(_ directory: String, depth: Int) {
        guard depth < Self.maxDepth else { skipped.append(directory); return }
        guard let dir = opendir(directory) else {
            unreadableDirectories.append((directory, "cannot read directory: \(String(cString: strerror(errno)))"))
            return
        }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
            }
            if !name.hasPrefix(".") { names.append(name) }
        }
        closedir(dir)
        let base = directory.hasSuffix("/") ? directory : directory + "/"
        for name in names.sorted() {
            let path = base + name
            var st = stat()
            guard lstat(path, &st) == 0 else { files.append(path); continue }   // vanished: its row says why
            switch st.st_mode & S_IFMT {
            case S_IFDIR: walk(path, depth: depth + 1)
            case S_IFLNK:
                // A link to a file is followed; a link to a directory is not (loops).
                if Self.isDirectory(path) { skipped.append(path) } else { consider(path, name: name) }
            case S_IFREG: consider(path, name: name)
            default: skipped.append(path)   // sockets, FIFOs, devices
            }
        }
    }

    private mutating func consider(_ path: String, name: String) {
        if Self.startsLikeCapture(path) || Self.namedLikeCapture(name) { files.append(path) } else { skipped.append(path) }
    }

    static func namedLikeCapture(_ name: String) -> Bool {
        let lower = name.lowercased()
        return captureSuffixes.contains { lower.hasSuffix($0) } || captureWords.contains { lower.contains($0) }
    }

    /// Reads the first `headBytes` bytes. An unreadable file counts as a capture: its row tells why.
    static func startsLikeCapture(_ path: String) -> Bool {
        let fd = open(path, O_RDONLY)
        guard fd >= 0 else { return true }
        defer { close(fd) }
        var head = [UInt8](repeating: 0, count: headBytes)
        let n = head.withUnsafeMutableBytes { read(fd, $0.baseAddress, headBytes) }
        guard n > 0 else { return n < 0 }
        return head.withUnsafeBytes { CaptureFile.recognises(UnsafeRawBufferPointer(rebasing: $0[0 ..< n])) }
    }

    static func isDirectory(_ path: String) -> Bool {
        var st = stat()
        return stat(path, &st) == 0 && st.st_mode & S_IFMT == S_IFDIR
    }
}
