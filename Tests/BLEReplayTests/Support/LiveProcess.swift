import Foundation

/// A child process a test starts and always stops: Bumble's controller, RootCanal, a Bumble host.
/// Output lines are collected as they come; every wait has a deadline; `stop()` (also on deinit)
/// sends SIGTERM, then SIGKILL after two seconds.
///
/// The pipes are read with blocking `read(2)` on two threads of their own, not with
/// `FileHandle.readabilityHandler`: tearing down those dispatch read sources while other tests set
/// theirs up crashes libdispatch on Linux (a use-after-free in its epoll bookkeeping,
/// swift-corelibs-libdispatch#949; seen here as SIGSEGV in `_dispatch_event_loop_drain`).
final class LiveProcess: @unchecked Sendable {   // safe: `process` is used by the test's task only
    let name: String
    private let process = Process()
    private let output = CollectedOutput()
    private let out = Pipe(), err = Pipe()

    init(_ name: String, executable: String, arguments: [String], environment: [String: String] = [:]) throws {
        self.name = name
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        var env = ProcessInfo.processInfo.environment
        env["PYTHONUNBUFFERED"] = "1"
        for (k, v) in environment { env[k] = v }
        process.environment = env
        process.standardOutput = out
        process.standardError = err
        let output = self.output
        process.terminationHandler = { _ in output.markFinished() }
        try process.run()
        // Each reader owns a duplicate of the read end, so closing the Pipe (on deinit) never pulls
        // the descriptor from under a blocked read.
        output.startReader(fd: dup(out.fileHandleForReading.fileDescriptor), stdout: true)
        output.startReader(fd: dup(err.fileHandleForReading.fileDescriptor), stdout: false)
    }

    deinit { stop() }

    /// The first stdout or stderr line starting with `prefix`, waiting up to `timeout` seconds
    /// (polling, so the waiting test does not hold a thread of the cooperative pool).
    func line(startingWith prefix: String, timeout: Double) async throws -> String {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            let (lines, done) = output.snapshot()
            if let line = lines.first(where: { $0.hasPrefix(prefix) }) { return line }
            if done { throw Failure("\(name) exited before printing \"\(prefix)\"; stderr: \(stderr.suffix(2000))") }
            guard Date() < deadline else { throw Failure("\(name) printed no \"\(prefix)\" within \(timeout) s; stderr: \(stderr.suffix(2000))") }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    /// Waits for the process to end by itself; returns its status. Stops it and throws after `timeout`.
    func wait(timeout: Double) async throws -> Int32 {
        let deadline = Date().addingTimeInterval(timeout)
        while !output.snapshot().finished {
            guard Date() < deadline else {
                stop()
                throw Failure("\(name) did not finish within \(timeout) s; stderr: \(stderr.suffix(2000))")
            }
            try await Task.sleep(for: .milliseconds(20))
        }
        process.waitUntilExit()
        // The readers reach end of file once the child's ends of the pipes are closed.
        let drained = Date().addingTimeInterval(10)
        while !output.readersDone, Date() < drained { try await Task.sleep(for: .milliseconds(5)) }
        return process.terminationStatus
    }

    var stdout: String { output.stdout }
    var stdoutLinesSoFar: [String] { output.stdoutLines }
    var stderr: String { output.stderr }

    /// SIGTERM, then SIGKILL if it is still there after two seconds. Only this process is signalled.
    func stop() {
        guard process.isRunning else { return }
        process.terminate()
        let deadline = Date().addingTimeInterval(2)
        while process.isRunning, Date() < deadline { usleep(20_000) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }
}

/// What a child printed, filled by the two reader threads (which hold this, not the `LiveProcess`,
/// so a test that drops its process still stops it on deinit).
private final class CollectedOutput: @unchecked Sendable {   // safe: every field is guarded by `lock`
    private let lock = NSLock()
    private var lines: [String] = []
    private var partial = ""
    private var errText = ""
    private var finished = false
    private var openReaders = 2

    func startReader(fd: Int32, stdout: Bool) {
        let thread = Thread { [self] in
            var buffer = [UInt8](repeating: 0, count: 1 << 16)
            while fd >= 0 {
                let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
                if n > 0 {
                    let text = String(decoding: buffer[..<n], as: UTF8.self)
                    if stdout { append(stdout: text) } else { append(stderr: text) }
                } else if n < 0, errno == EINTR {
                    continue
                } else {
                    break
                }
            }
            if fd >= 0 { close(fd) }
            lock.lock()
            openReaders -= 1
            if openReaders == 0, !partial.isEmpty { lines.append(partial); partial = "" }
            lock.unlock()
        }
        thread.start()
    }

    private func append(stdout text: String) {
        lock.lock()
        partial += text
        while let newline = partial.firstIndex(of: "\n") {
            lines.append(String(partial[..<newline]))
            partial = String(partial[partial.index(after: newline)...])
        }
        lock.unlock()
    }

    private func append(stderr text: String) {
        lock.lock(); errText += text; lock.unlock()
    }

    func markFinished() { lock.lock(); finished = true; lock.unlock() }

    var readersDone: Bool { lock.lock(); defer { lock.unlock() }; return openReaders == 0 }

    func snapshot() -> (lines: [String], finished: Bool) {
        lock.lock()
        defer { lock.unlock() }
        return (lines + errText.split(separator: "\n").map(String.init), finished)
    }

    var stdout: String { lock.lock(); defer { lock.unlock() }; return (lines + [partial]).joined(separator: "\n") }
    var stdoutLines: [String] { lock.lock(); defer { lock.unlock() }; return lines }
    var stderr: String { lock.lock(); defer { lock.unlock() }; return errText }
}

/// A test failure with a message (thrown from helpers).
struct Failure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
