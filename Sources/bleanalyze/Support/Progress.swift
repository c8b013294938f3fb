#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A progress bar on stderr for long work: a capture over `threshold` bytes, or several files in
/// `check`. Shown only when stderr is a terminal; safe to update from several threads.
///
/// `[██████████░░░░░░░░░░]  52%  reading trace.log`
final class ProgressBar: @unchecked Sendable {   // safe: every mutable access holds the lock
    /// Captures smaller than this finish too quickly for a bar (about a second).
    static let threshold = 50_000_000
    /// Frames between two progress checks (a check is one division and a comparison).
    static let frameInterval = 65_536

    private let lock = NSLockLike()
    private var fractions: [Double]
    private var label: String
    private var shownPercent = -1
    private var visible = false
    private let width = 24

    private init(slots: Int, label: String) {
        fractions = Array(repeating: 0, count: max(slots, 1))
        self.label = label
    }

    static var stderrIsTerminal: Bool { isatty(STDERR_FILENO) != 0 }

    /// A bar for one capture of `size` bytes; nil when it is small or stderr is not a terminal.
    static func forCapture(size: Int, label: String) -> ProgressBar? {
        guard stderrIsTerminal, size >= threshold else { return nil }
        return ProgressBar(slots: 1, label: label)
    }

    /// A bar for `check` over `paths`: one slot per file; nil for a single small file or when
    /// stderr is not a terminal.
    static func forFiles(_ paths: [String]) -> ProgressBar? {
        guard stderrIsTerminal else { return nil }
        if paths.count == 1 {
            var st = stat()
            guard stat(paths[0], &st) == 0, Int(st.st_size) >= threshold else { return nil }
        }
        return ProgressBar(slots: paths.count, label: paths.count == 1 ? "checking" : "checking \(paths.count) files")
    }

    /// Reports `offset` of `size` bytes read in `slot`.
    func update(slot: Int = 0, offset: Int, size: Int) {
        guard size > 0 else { return }
        set(slot, min(max(Double(offset) / Double(size), 0), 1))
    }

    /// Marks `slot` done.
    func complete(slot: Int = 0) { set(slot, 1) }

    /// Clears the bar's line.
    func finish() {
        lock.locked {
            if visible { Self.emit("\r\u{1B}[K") }
            visible = false
        }
    }

    private func set(_ slot: Int, _ value: Double) {
        lock.locked {
            guard fractions.indices.contains(slot) else { return }
            fractions[slot] = value
            let total = fractions.reduce(0, +) / Double(fractions.count)
            let percent = Int(total * 100)
            guard percent != shownPercent else { return }
            shownPercent = percent
            let filled = min(width, Int(total * Double(width)))
            let done = fractions.filter { $0 >= 1 }.count
            let files = fractions.count > 1 ? "  \(done)/\(fractions.count)" : ""
            Self.emit("\r[" + String(repeating: "█", count: filled) + String(repeating: "░", count: width - filled) + "] "
                      + (percent < 10 ? "  " : percent < 100 ? " " : "") + "\(percent)%\(files)  \(label)\u{1B}[K")
            visible = true
        }
    }

    private static func emit(_ s: String) {
        var text = s
        text.withUTF8 { writeAll(STDERR_FILENO, $0) }
    }
}
