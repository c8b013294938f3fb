import BLEProtocol
import BLEReplay
import Foundation

/// `scripts/replay/bumble_controller.py`: Bumble's virtual controller with the peripheral, on
/// 127.0.0.1 (a free port picked by the script) or on a pty linked at a path.
final class BumbleController {
    let process: LiveProcess
    /// `tcp:127.0.0.1:PORT` or `tty:LINK`: what `--hci` takes.
    let uri: String

    init(variant: String = "default", ptyLink: String? = nil, peripheralAddress: String? = nil) async throws {
        let transport = ptyLink.map { "pty:\($0)" } ?? "tcp-server:127.0.0.1:0"
        process = try LiveProcess("bumble_controller \(variant)", executable: ReplayEnvironment.python,
                                  arguments: [ReplayEnvironment.script("bumble_controller.py"), "--transport", transport, "--variant", variant]
                                      + (peripheralAddress.map { ["--peripheral-address", $0] } ?? []))
        // Bumble starts in ~4 s alone; a test run starts several at once on 2 cores (seen > 20 s).
        let ready = try await process.line(startingWith: "READY ", timeout: 90)
        let value = String(ready.dropFirst("READY ".count))
        uri = ptyLink == nil ? "tcp:127.0.0.1:\(value)" : "tty:\(value)"
    }

    deinit { process.stop() }
}

/// RootCanal (`rootcanal==1.10.0`) on four free ports; every connection to the HCI port is a new
/// controller speaking H4.
final class RootCanal {
    let process: LiveProcess
    let uri: String

    init(binary: String) async throws {
        let ports = try (0..<4).map { _ in try ReplayEnvironment.freePort() }
        process = try LiveProcess("rootcanal", executable: binary, arguments: [
            "--hci_port=\(ports[0])", "--test_port=\(ports[1])", "--link_port=\(ports[2])", "--link_ble_port=\(ports[3])",
        ])
        uri = "tcp:127.0.0.1:\(ports[0])"
        // Ready when the HCI port accepts a connection (the probe's controller is discarded on close).
        let deadline = Date().addingTimeInterval(15)
        while true {
            if let probe = try? Transports.open(.tcp(host: "127.0.0.1", port: ports[0]), timeout: 1) { probe.close(); break }
            guard Date() < deadline else { throw Failure("RootCanal did not listen on \(ports[0]): \(process.stderr.suffix(1000))") }
            try await Task.sleep(for: .milliseconds(50))
        }
    }

    deinit { process.stop() }
}

/// Recordings made once per test run with Bumble (`record_central.py` against a fresh
/// `bumble_controller.py`): the "record once" half of the CI recipe. Every test awaits the same one.
/// A recording starts when Swift Testing plans the run (`.enabled(if: Golden.sessionStarted)`,
/// evaluated for selected tests only), on `LiveExecutor`, so it is ready when the first test
/// that needs it starts, whatever the order tests start in.
enum Golden {
    /// The central session: scan, connect, MTU, discovery, reads, subscribe + notification, disconnect.
    static func session() async throws -> URL { try await sessionRecording.value }
    /// Controller set-up only (reset, buffer sizes, version, advertising and scanning on/off).
    static func setup() async throws -> URL { try await setupRecording.value }

    /// True when Bumble is there; starts the session recording (for `.enabled(if:)`).
    static let sessionStarted: Bool = ReplayEnvironment.hasBumble && { _ = sessionRecording; return true }()
    /// True when Bumble is there; starts the set-up recording (for `.enabled(if:)`).
    static let setupStarted: Bool = ReplayEnvironment.hasBumble && { _ = setupRecording; return true }()

    private static let sessionRecording = Task(executorPreference: LiveExecutor.shared) { try await record(scenario: "session") }
    private static let setupRecording = Task(executorPreference: LiveExecutor.shared) { try await record(scenario: "setup") }

    static func record(scenario: String) async throws -> URL {
        let dir = try ReplayEnvironment.temporaryDirectory("golden-\(scenario)")
        let out = dir.appendingPathComponent("\(scenario).btsnoop")
        let controller = try await BumbleController()
        let recorder = try LiveProcess("record_central", executable: ReplayEnvironment.python, arguments: [
            ReplayEnvironment.script("record_central.py"), "--transport", controller.uri.replacingOccurrences(of: "tcp:", with: "tcp-client:"),
            "--out", out.path, "--scenario", scenario,
        ])
        let status = try await recorder.wait(timeout: 40)
        guard status == 0, recorder.stdout.contains("RESULT ") else {
            throw Failure("record_central.py failed (\(status)): \(recorder.stdout.suffix(500)) \(recorder.stderr.suffix(1500))")
        }
        return out
    }

    /// The recorded units of a recording (for computing what a test expects).
    static func units(_ url: URL) throws -> [LinkUnit] { Script(try Recording.load(path: url.path)).units }
}
