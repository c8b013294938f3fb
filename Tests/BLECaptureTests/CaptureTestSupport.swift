import TestSupport
import BLECapture
import Foundation
import Testing

/// Paths and helpers shared by the capture tests.
enum CaptureTestPaths {
    /// The repository root (where Package.swift is), found from this file's path.
    static let repoRoot: URL = Repo.root

    static func capture(_ name: String) -> String { repoRoot.appendingPathComponent("captures/\(name)").path }

    /// `../shared/captures/real/` beside the repository, or nil (tests then skip with a notice).
    static let sharedReal: URL? = Repo.sharedReal

    /// Memory-backed on Linux (/dev/shm): PropertyReaderTests writes ~130 000 small files.
    static let temporaryRoot: URL = FileManager.default.fileExists(atPath: "/dev/shm")
        ? URL(fileURLWithPath: "/dev/shm") : FileManager.default.temporaryDirectory

    static func temporaryFile(_ name: String, _ bytes: [UInt8]) throws -> String {
        let dir = temporaryRoot.appendingPathComponent("bleanalyze-tests-\(getpid())")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let url = dir.appendingPathComponent(name)
        try Data(bytes).write(to: url)
        return url.path
    }

    /// Runs a command and returns its stdout, or nil when it is not installed or fails.
    static func run(_ executable: String, _ arguments: [String]) -> String? { Tool.run(executable, arguments) }
}

/// A frame reduced to what must survive any container format.
struct FrameFingerprint: Equatable, CustomStringConvertible {
    var kind: FrameKind
    var direction: Direction
    var payload: [UInt8]
    var timestamp: Int64

    var description: String { "\(kind.name) \(direction.name) \(payload.count)B @\(timestamp)" }

    static func of(_ path: String) throws -> (frames: [FrameFingerprint], summary: ReadSummary, info: CaptureInfo) {
        let file = try CaptureFile(path: path)
        var frames: [FrameFingerprint] = []
        let summary = file.read { f in
            frames.append(FrameFingerprint(kind: f.kind, direction: f.direction, payload: Array(f.payload), timestamp: f.timestamp))
        }
        return (frames, summary, file.info)
    }
}
