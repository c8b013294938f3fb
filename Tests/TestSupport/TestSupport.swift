import Foundation

/// What every test target needs, written once: where the repository, its captures and the shared real
/// corpus are; running an external tool (tshark, gzip, python); a seeded generator. Test targets keep
/// their own small names for these (`AnalysisFixtures.repoRoot`, `CLI.repoRoot` …), which forward here.
public enum Repo {
    /// The directory holding Package.swift, found upwards from this file (or the working directory).
    public static let root: URL = {
        var url = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        while url.path != "/" {
            if FileManager.default.fileExists(atPath: url.appendingPathComponent("Package.swift").path) { return url }
            url.deleteLastPathComponent()
        }
        return URL(fileURLWithPath: FileManager.default.currentDirectoryPath)
    }()

    /// The Python venv (Bumble, RootCanal, jsonschema, pyspark): `BLEANALYZE_VENV` (as `make test` sets
    /// it), else `.venv` in the repository.
    public static let venv: URL = ProcessInfo.processInfo.environment["BLEANALYZE_VENV"].map { URL(fileURLWithPath: $0) }
        ?? root.appendingPathComponent(".venv")

    /// A capture of the project (`captures/NAME`).
    public static func capture(_ name: String) -> String { root.appendingPathComponent("captures/\(name)").path }

    /// `../shared/captures/real/` beside the repository, or nil (tests that need it are `.enabled(if:)`).
    /// `BLEANALYZE_SHARED_REAL=DIR` puts it elsewhere; a missing DIR shows what a fresh clone sees
    /// (`BLEANALYZE_SHARED_REAL=/nonexistent swift test`: every suite that needs the corpus skips).
    public static let sharedReal: URL? = {
        let url = ProcessInfo.processInfo.environment["BLEANALYZE_SHARED_REAL"].map { URL(fileURLWithPath: $0) }
            ?? root.deletingLastPathComponent().appendingPathComponent("shared/captures/real")
        return FileManager.default.fileExists(atPath: url.path) ? url : nil
    }()

    /// The capture files of the shared corpus (not its PROVENANCE.md or SHA256SUMS), sorted; empty when absent.
    public static func realCaptures() -> [String] {
        guard let dir = sharedReal, let names = try? FileManager.default.contentsOfDirectory(atPath: dir.path) else { return [] }
        return names.filter { !$0.hasSuffix(".md") && $0 != "SHA256SUMS" && !$0.hasPrefix(".") }.sorted()
            .map { dir.appendingPathComponent($0).path }
    }
}

/// External tools.
public enum Tool {
    /// Runs `executable` (looked up on PATH) and returns its standard output when it exits 0, else nil.
    public static func run(_ executable: String, _ arguments: [String]) -> String? {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        p.arguments = [executable] + arguments
        let pipe = Pipe()
        p.standardOutput = pipe
        p.standardError = FileHandle.nullDevice
        do { try p.run() } catch { return nil }
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        return p.terminationStatus == 0 ? String(decoding: data, as: UTF8.self) : nil
    }

    /// Runs `executable` (a path) in `directory` and returns its exit status and its standard output
    /// and error, interleaved as written (for messages that explain a failure).
    public static func outcome(_ executable: URL, _ arguments: [String], in directory: URL? = nil) throws -> (status: Int32, output: String) {
        let p = Process()
        p.executableURL = executable
        p.arguments = arguments
        if let directory { p.currentDirectoryURL = directory }
        let out = Pipe()
        p.standardOutput = out
        p.standardError = out
        try p.run()
        let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        p.waitUntilExit()
        return (p.terminationStatus, text)
    }

    /// True when the tool runs and exits 0 with these arguments (for `.enabled(if:)`). Asked once per
    /// run: while Swift Testing plans, a dozen conditions ask for tshark alone (~0.25 s each).
    public static func available(_ executable: String, _ arguments: [String] = ["--version"]) -> Bool {
        let key = ([executable] + arguments).joined(separator: " ")
        if let known = availability.withLock({ $0[key] }) { return known }
        let answer = run(executable, arguments) != nil
        availability.withLock { $0[key] = answer }
        return answer
    }

    private static let availability = Locked<[String: Bool]>([:])
}

/// A value behind a lock.
final class Locked<Value>: @unchecked Sendable {   // safe: `value` is only reached inside `withLock`
    private let lock = NSLock()
    private var value: Value
    init(_ value: Value) { self.value = value }
    func withLock<T>(_ body: (inout Value) -> T) -> T { lock.lock(); defer { lock.unlock() }; return body(&value) }
}

/// `Tool.outcome` started at once on a thread of its own and awaited later, without holding one of
/// the few threads Swift Testing runs tests on (as many as cores; the order it starts tests in is not
/// fixed, so a minutes-long run started by its test could begin last).
public final class StartedRun: @unchecked Sendable {   // safe: `result` is guarded by `condition`
    private let condition = NSCondition()
    private var result: Result<(status: Int32, output: String), Error>?

    public init(_ executable: URL, _ arguments: [String]) {
        Thread { [self] in
            let outcome = Result { try Tool.outcome(executable, arguments) as (status: Int32, output: String) }
            condition.lock(); result = outcome; condition.broadcast(); condition.unlock()
        }.start()
    }

    /// The run's exit status and output, once it has ended.
    public func value() async throws -> (status: Int32, output: String) {
        try await withCheckedThrowingContinuation { continuation in
            Thread { [self] in
                condition.lock()
                while result == nil { condition.wait() }
                let outcome = result!
                condition.unlock()
                continuation.resume(with: outcome)
            }.start()
        }
    }
}

/// SplitMix64 (Steele, Lea, Flood 2014): a tiny seeded generator for reproducible random inputs.
public struct SplitMix64: RandomNumberGenerator {
    public var state: UInt64
    public init(seed: UInt64) { state = seed }
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// Running the project's own binaries (`bleanalyze`, `Fuzz`) as a user would, with what they printed,
/// how they ended and how long they took.
public enum Built {
    /// A binary built by SwiftPM next to the test bundle, or in `.build/debug`.
    public static func binary(_ name: String) -> String {
        let bundleDir = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        for candidate in [bundleDir.appendingPathComponent(name), bundleDir.deletingLastPathComponent().appendingPathComponent(name),
                          Repo.root.appendingPathComponent(".build/debug/\(name)")]
        where FileManager.default.isExecutableFile(atPath: candidate.path) {
            return candidate.path
        }
        return Repo.root.appendingPathComponent(".build/debug/\(name)").path
    }

    public struct RunResult: Sendable {
        public var status: Int32
        public var signaled: Bool
        public var stdout: String
        public var stderr: String
        public var seconds: Double
    }

    /// What a run reads on standard input: the test runner's, bytes written into a real pipe by
    /// another thread, or a file opened for reading (as the shell's `< file`).
    public enum Input: Sendable {
        case inherited
        case pipe(Data)
        case file(String)
    }

    /// Runs `executable` (a path) with `arguments`: the one subprocess runner of the tests (`CLI.run`
    /// calls it). With `limitVirtualKB` through `/bin/sh -c 'ulimit -v …; exec …'`; `environment` is
    /// added to this process's. Standard error goes to a file in `scratch`, so a large stdout and
    /// stderr cannot block each other.
    public static func run(_ executable: String, _ arguments: [String], limitVirtualKB: Int? = nil,
                           environment: [String: String] = [:], stdin: Input = .inherited, scratch: URL) throws -> RunResult {
        let p = Process()
        if let limit = limitVirtualKB {
            p.executableURL = URL(fileURLWithPath: "/bin/sh")
            let quoted = ([executable] + arguments).map { "'" + $0.replacingOccurrences(of: "'", with: "'\\''") + "'" }.joined(separator: " ")
            p.arguments = ["-c", "ulimit -v \(limit); exec \(quoted)"]
        } else {
            p.executableURL = URL(fileURLWithPath: executable)
            p.arguments = arguments
        }
        if !environment.isEmpty { p.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 } }
        let errURL = scratch.appendingPathComponent("stderr-\(UInt64.random(in: 0...UInt64.max))")
        FileManager.default.createFile(atPath: errURL.path, contents: nil)
        let err = try FileHandle(forWritingTo: errURL)
        defer { try? FileManager.default.removeItem(at: errURL) }
        let out = Pipe()
        p.standardOutput = out
        p.standardError = err
        var feeder: Thread? = nil
        var pipeReadEnd: FileHandle? = nil
        switch stdin {
        case .inherited: break
        case let .file(path): p.standardInput = try FileHandle(forReadingFrom: URL(fileURLWithPath: path))
        case let .pipe(data):
            let pipe = Pipe()
            p.standardInput = pipe
            let writer = pipe.fileHandleForWriting
            pipeReadEnd = pipe.fileHandleForReading
            signal(SIGPIPE, SIG_IGN)   // a binary that exits without reading must not end the test runner
            feeder = Thread {
                try? writer.write(contentsOf: data)   // fails with EPIPE if the binary stops reading early
                try? writer.close()
            }
        }
        let start = Date()
        try p.run()
        try pipeReadEnd?.close()   // the child holds its own copy; ours would keep a blocked writer waiting
        feeder?.start()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        try err.close()
        let errData = (try? Data(contentsOf: errURL)) ?? Data()
        return RunResult(status: p.terminationStatus, signaled: p.terminationReason == .uncaughtSignal,
                         stdout: String(decoding: data, as: UTF8.self), stderr: String(decoding: errData, as: UTF8.self),
                         seconds: Date().timeIntervalSince(start))
    }

    /// A scratch directory of this test process, made on first use.
    public static func scratch(_ label: String) -> URL {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("bleanalyze-\(label)-\(getpid())")
        try? FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        return dir
    }

    /// The project's captures (`captures/`), every format the readers take.
    public static let projectCaptures: [String] = {
        let dir = Repo.root.appendingPathComponent("captures")
        let names = (try? FileManager.default.contentsOfDirectory(atPath: dir.path)) ?? []
        return names.filter { n in [".btsnoop", ".pcap", ".pcapng", ".gz", ".pklg"].contains { n.hasSuffix($0) } }
            .sorted().map { dir.appendingPathComponent($0).path }
    }()
}
