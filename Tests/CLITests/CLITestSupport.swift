import TestSupport
import Foundation
import Testing

/// Runs the real `bleanalyze` binary built by SwiftPM.
enum CLI {
    static let repoRoot: URL = Repo.root

    /// The binary next to the test bundle (same build configuration), or `.build/debug`.
    static let binary: String = ProcessInfo.processInfo.environment["BLEANALYZE_BIN"] ?? Built.binary("bleanalyze")

    struct Result { var status: Int32; var stdout: String; var stderr: String }

    /// What the binary reads on standard input: nothing (the test runner's), bytes written into a
    /// real pipe by another thread, or a file opened for reading (as the shell's `< file`).
    enum Input {
        case inherited
        case pipe(Data)
        case file(String)
    }

    static func run(_ arguments: [String], environment: [String: String] = [:], stdin: Input = .inherited) throws -> Result {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: binary)
        p.arguments = arguments
        if !environment.isEmpty { p.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 } }
        let out = Pipe()
        // stderr goes to a file, so a large stdout and stderr cannot block each other.
        let errURL = FileManager.default.temporaryDirectory.appendingPathComponent("bleanalyze-stderr-\(getpid())-\(UInt64.random(in: 0...UInt64.max))")
        FileManager.default.createFile(atPath: errURL.path, contents: nil)
        let err = try FileHandle(forWritingTo: errURL)
        defer { try? FileManager.default.removeItem(at: errURL) }
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
        try p.run()
        try pipeReadEnd?.close()   // the child holds its own copy; ours would keep a blocked writer waiting
        feeder?.start()
        let outData = out.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        try err.close()
        let errData = (try? Data(contentsOf: errURL)) ?? Data()
        return Result(status: p.terminationStatus, stdout: String(decoding: outData, as: UTF8.self),
                      stderr: String(decoding: errData, as: UTF8.self))
    }

    static func capture(_ name: String) -> String { repoRoot.appendingPathComponent("captures/\(name)").path }

    /// True when `tool` runs (for `.enabled(if:)`: a test without its tool shows as skipped).
    static func tool(_ tool: String, _ arguments: [String]) -> Bool { Tool.available(tool, arguments) }

    static let sharedReal: URL? = Repo.sharedReal

    /// The before/after pairs of `diff` (captures/diff/, DiffTests): a walk of captures/ finds them too.
    static func diffPairs() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: repoRoot.appendingPathComponent("captures/diff").path)
            .filter { $0.hasSuffix(".btsnoop") }.map { capture("diff/" + $0) }.sorted()
    }

    static func allCaptures() throws -> [String] {
        let own = try FileManager.default.contentsOfDirectory(atPath: repoRoot.appendingPathComponent("captures").path)
            .filter { $0.hasSuffix(".btsnoop") || $0.hasSuffix(".pcap") || $0.hasSuffix(".pcapng") || $0.hasSuffix(".gz") }
            .map(capture)
        guard let dir = sharedReal else {
            print("notice: ../shared/captures/real absent; CLI tests use only the project's captures")
            return own.sorted()
        }
        let real = try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { !$0.hasSuffix(".md") && $0 != "SHA256SUMS" }
            .map { dir.appendingPathComponent($0).path }
        return (own + real).sorted()
    }

    static func json(_ text: String) throws -> [String: Any] {
        let object = try JSONSerialization.jsonObject(with: Data(text.utf8))
        return try #require(object as? [String: Any])
    }

    static func temporaryFile(_ name: String, _ bytes: [UInt8]) throws -> String {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("bleanalyze-cli-\(getpid())")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let url = dir.appendingPathComponent(name)
        try Data(bytes).write(to: url)
        return url.path
    }
}
