import Foundation

/// A child process a test starts and always stops: Bumble's controller, RootCanal, a Bumble host.
/// Output lines are collected as they come; every wait has a deadline; `stop()` (also on deinit)
/// sends SIGTERM, then SIGKILL after two seconds.
final class LiveProcess: @unchecked Sendable {   // safe: the buffers and `finished` are guarded by `condition`
    let name: String
    private let process = Process()
    private let condition = NSLock()
    private var stdoutLines: [String] = []
    private var stderrText = ""
    private var partial = ""
    private var finished = false
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
        out.fileHandleForReading.readabilityHandler = { [weak self] h in self?.append(stdout: h.availableData) }
        err.fileHandleForReading.readabilityHandler = { [weak self] h in self?.append(stderr: h.availableData) }
        process.terminationHandler = { [weak self] _ in
            guard let self else { return }
            self.condition.lock(); self.finished = true; self.condition.unlock()
        }
        try process.run()
    }

    deinit { stop() }

    private func append(stdout data: Data) {
        guard !data.isEmpty else { return }
        condition.lock()
        partial += String(decoding: data, as: UTF8.self)
        while let newline = partial.firstIndex(of: "\n") {
            stdoutLines.append(String(partial[..<newline]))
            partial = String(partial[partial.index(after: newline)...])
        }
        condition.unlock()
    }

    private func append(stderr data: Data) {
        guard !data.isEmpty else { return }
        condition.lock(); stderrText += String(decoding: data, as: UTF8.self); condition.unlock()
    }

    /// The first stdout or stderr line starting with `prefix`, waiting up to `timeout` seconds
    /// (polling, so the waiting test does not hold a thread of the cooperative pool).
    func line(startingWith prefix: String, timeout: Double) async throws -> String {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            let (lines, done) = snapshot()
            if let line = lines.first(where: { $0.hasPrefix(prefix) }) { return line }
            if done { throw Failure("\(name) exited before printing \"\(prefix)\"; stderr: \(stderr.suffix(2000))") }
            guard Date() < deadline else { throw Failure("\(name) printed no \"\(prefix)\" within \(timeout) s; stderr: \(stderr.suffix(2000))") }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    private func snapshot() -> (lines: [String], finished: Bool) {
        condition.lock()
        defer { condition.unlock() }
        return (stdoutLines + stderrText.split(separator: "\n").map(String.init), finished)
    }

    /// Waits for the process to end by itself; returns its status. Stops it and throws after `timeout`.
    func wait(timeout: Double) async throws -> Int32 {
        let deadline = Date().addingTimeInterval(timeout)
        while !snapshot().finished {
            guard Date() < deadline else {
                stop()
                throw Failure("\(name) did not finish within \(timeout) s; stderr: \(stderr.suffix(2000))")
            }
            try await Task.sleep(for: .milliseconds(20))
        }
        process.waitUntilExit()
        drain()
        return process.terminationStatus
    }

    /// Reads what is left in the pipes once the process has ended.
    private func drain() {
        out.fileHandleForReading.readabilityHandler = nil
        err.fileHandleForReading.readabilityHandler = nil
        append(stdout: out.fileHandleForReading.readDataToEndOfFile())
        append(stderr: err.fileHandleForReading.readDataToEndOfFile())
        condition.lock()
        if !partial.isEmpty { stdoutLines.append(partial); partial = "" }
        condition.unlock()
    }

    var stdout: String { condition.lock(); defer { condition.unlock() }; return (stdoutLines + [partial]).joined(separator: "\n") }
    var stdoutLinesSoFar: [String] { condition.lock(); defer { condition.unlock() }; return stdoutLines }
    var stderr: String { condition.lock(); defer { condition.unlock() }; return stderrText }

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

/// A test failure with a message (thrown from helpers).
struct Failure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
