import TestSupport
import BLEBytes
import BLECapture
import BLEReplay
import Foundation

/// Where the real components are: the repository, its `.venv` (Bumble, RootCanal), the
/// `bleanalyze` binary. Tests that need the venv are skipped with a printed notice when it is
/// missing (`make test` creates it, so in CI they run).
enum ReplayEnvironment {
    static let repoRoot: URL = Repo.root

    static let venv: URL = Repo.venv

    static var python: String { venv.appendingPathComponent("bin/python").path }

    static func script(_ name: String) -> String { repoRoot.appendingPathComponent("scripts/replay/\(name)").path }

    /// True when Bumble is importable; prints a notice once otherwise.
    static let hasBumble: Bool = {
        let ok = FileManager.default.fileExists(atPath: venv.appendingPathComponent("bin/python").path)
            && (try? FileManager.default.contentsOfDirectory(atPath: venv.appendingPathComponent("lib").path))?
                .contains { FileManager.default.fileExists(atPath: venv.appendingPathComponent("lib/\($0)/site-packages/bumble").path) } == true
        if !ok { print("notice: \(venv.path) with Bumble is missing (run `make venv`): live replay tests skipped") }
        return ok
    }()

    /// RootCanal's binary inside the venv (`rootcanal==1.10.0`, see ../shared/NOTES.md).
    static let rootCanal: String? = {
        let lib = venv.appendingPathComponent("lib")
        for dir in (try? FileManager.default.contentsOfDirectory(atPath: lib.path)) ?? [] {
            let path = lib.appendingPathComponent("\(dir)/site-packages/rootcanal/bin/linux-x86_64/rootcanal").path
            if FileManager.default.isExecutableFile(atPath: path) { return path }
        }
        print("notice: RootCanal is not in \(venv.path) (pip install rootcanal==1.10.0): RootCanal replay tests skipped")
        return nil
    }()

    /// The `bleanalyze` binary built with the tests (next to the test bundle), or `BLEANALYZE_BIN`.
    static let binary: String = {
        if let env = ProcessInfo.processInfo.environment["BLEANALYZE_BIN"] { return env }
        let bundleDir = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        for candidate in [bundleDir.appendingPathComponent("bleanalyze"), bundleDir.deletingLastPathComponent().appendingPathComponent("bleanalyze"),
                          repoRoot.appendingPathComponent(".build/debug/bleanalyze")]
        where FileManager.default.isExecutableFile(atPath: candidate.path) {
            return candidate.path
        }
        return repoRoot.appendingPathComponent(".build/debug/bleanalyze").path
    }()

    /// A fresh directory for one test's files.
    static func temporaryDirectory(_ name: String) throws -> URL {
        let url = FileManager.default.temporaryDirectory
            .appendingPathComponent("bleanalyze-replay-\(getpid())-\(name)-\(UInt32.random(in: 0 ... .max))")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    /// A TCP port nobody listens on right now (bound to 0, then released).
    static func freePort() throws -> UInt16 {
        #if os(Linux)
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
        let fd = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard fd >= 0 else { throw Failure("socket failed") }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let ok = withUnsafeMutablePointer(to: &address) { p in
            p.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        guard ok else { throw Failure("bind failed") }
        return UInt16(bigEndian: address.sin_port)
    }

    /// Writes packets as a btsnoop H4 recording.
    static func writeRecording(_ packets: [RecordedPacket], to url: URL) throws {
        var writer = BTSnoopWriter(datalink: Datalink.btsnoopH4)
        for p in packets {
            let kind: FrameKind = switch p.packet.type {
            case .command: .command
            case .event: .event
            case .acl: .aclData
            case .sco: .scoData
            case .iso: .isoData
            }
            writer.append(RecordToWrite(timestamp: p.timestamp, direction: p.fromHost ? .sent : .received, kind: kind, payload: p.packet.bytes))
        }
        try Data(writer.bytes).write(to: url)
    }
}

/// Runs the real `bleanalyze` binary.
enum CLIRun {
    struct Result {
        var status: Int32
        var stdout: String
        var stderr: String
        var seconds: Double
        /// The `--json` document.
        func json() throws -> [String: Any] {
            guard let object = try JSONSerialization.jsonObject(with: Data(stdout.utf8)) as? [String: Any] else {
                throw Failure("not a JSON object: \(stdout.prefix(500))")
            }
            return object
        }
        func divergences() throws -> [[String: Any]] { (try json()["divergences"] as? [[String: Any]]) ?? [] }
    }

    /// Runs `bleanalyze arguments…`, bounded by `timeout` seconds.
    static func run(_ arguments: [String], timeout: Double = 60) async throws -> Result {
        let start = Date()
        let p = try LiveProcess("bleanalyze \(arguments.first ?? "")", executable: ReplayEnvironment.binary, arguments: arguments)
        let status = try await p.wait(timeout: timeout)
        return Result(status: status, stdout: p.stdout, stderr: p.stderr, seconds: Date().timeIntervalSince(start))
    }
}
