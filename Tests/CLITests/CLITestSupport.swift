import TestSupport
import Foundation
import Testing

/// Runs the real `bleanalyze` binary built by SwiftPM.
enum CLI {
    static let repoRoot: URL = Repo.root

    /// The binary next to the test bundle (same build configuration), or `.build/debug`.
    static let binary: String = ProcessInfo.processInfo.environment["BLEANALYZE_BIN"] ?? Built.binary("bleanalyze")

    struct Result { var status: Int32; var stdout: String; var stderr: String }

    typealias Input = Built.Input

    /// The binary with `arguments` (through `Built.run`, the tests' one subprocess runner).
    static func run(_ arguments: [String], environment: [String: String] = [:], stdin: Input = .inherited) throws -> Result {
        let r = try Built.run(binary, arguments, environment: environment, stdin: stdin, scratch: Built.scratch("cli"))
        return Result(status: r.status, stdout: r.stdout, stderr: r.stderr)
    }

    static func capture(_ name: String) -> String { repoRoot.appendingPathComponent("captures/\(name)").path }

    /// True when `tool` runs (for `.enabled(if:)`: a test without its tool shows as skipped).
    static func tool(_ tool: String, _ arguments: [String]) -> Bool { Tool.available(tool, arguments) }

    static let sharedReal: URL? = Repo.sharedReal

    /// The captures in captures/'s subdirectories (`diff/` pairs, `gate/` for the CI gate): a walk of
    /// captures/ finds them beside the per-capture ones.
    static func subdirectoryCaptures() throws -> [String] {
        try ["diff", "gate"].flatMap { dir in
            try FileManager.default.contentsOfDirectory(atPath: repoRoot.appendingPathComponent("captures/" + dir).path)
                .filter { $0.hasSuffix(".btsnoop") }.map { capture(dir + "/" + $0) }
        }.sorted()
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
