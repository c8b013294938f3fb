#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Buffered writes to stdout (the only place the tool prints, with `Diagnostics` for stderr).
struct Output {
    private var buffer = ""
    private let flushAt = 1 << 16

    init() { buffer.reserveCapacity(flushAt + 4096) }

    mutating func write(_ s: String) {
        buffer += s
        if buffer.utf8.count >= flushAt { flush() }
    }

    mutating func line(_ s: String) { write(s); write("\n") }

    /// Writes UTF-8 bytes, after whatever text is buffered.
    mutating func write(_ bytes: [UInt8]) {
        bytes.withUnsafeBufferPointer { write($0) }
    }

    mutating func write(_ bytes: UnsafeBufferPointer<UInt8>) {
        guard !bytes.isEmpty else { return }
        flush()
        writeAll(STDOUT_FILENO, bytes)
    }

    mutating func flush() {
        guard !buffer.isEmpty else { return }
        buffer.withUTF8 { p in writeAll(STDOUT_FILENO, p) }
        buffer.removeAll(keepingCapacity: true)
    }
}

/// Messages for the user on stderr.
enum Diagnostics {
    static func warn(_ s: String) {
        var text = "bleanalyze: " + s + "\n"
        text.withUTF8 { writeAll(STDERR_FILENO, $0) }
    }

    /// A message without the `bleanalyze:` prefix (usage errors).
    static func message(_ s: String) {
        var text = s + "\n"
        text.withUTF8 { writeAll(STDERR_FILENO, $0) }
    }

    /// True when stdout is a terminal (colours, widths).
    static var stdoutIsTerminal: Bool { isatty(STDOUT_FILENO) != 0 }

    /// Terminal width, or `fallback` when not a terminal.
    static func terminalWidth(fallback: Int = 110) -> Int {
        terminalColumns() ?? fallback
    }

    /// The columns of the terminal stdout is, or nil when it is not one (or reports under 40).
    static func terminalColumns() -> Int? {
        var ws = winsize()
        if isatty(STDOUT_FILENO) != 0, ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), &ws) == 0, ws.ws_col > 40 { return Int(ws.ws_col) }
        return nil
    }
}

/// Writes every byte, retrying short writes. The corresponding C function is `write`.
func writeAll(_ fd: Int32, _ bytes: UnsafeBufferPointer<UInt8>) {
    var offset = 0
    while offset < bytes.count {
        let n = write(fd, bytes.baseAddress! + offset, bytes.count - offset)   // safe: offset < count, non-empty
        if n <= 0 { return }   // a closed pipe: nothing more to do
        offset += n
    }
}

/// Ends the process with `code`. The corresponding C function is `exit`.
func terminate(_ code: Int32) -> Never {
    exit(code)
}
