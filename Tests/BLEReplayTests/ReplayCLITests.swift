import BLEBytes
import BLEProtocol
import BLEReplay
import Foundation
import Testing

/// Exit code 2 and a clear message for what cannot be replayed at all (no live component needed).
@Suite(.liveThreads) struct ReplayCLITests {
    static let recording: URL = {
        let dir = (try? ReplayEnvironment.temporaryDirectory("cli")) ?? FileManager.default.temporaryDirectory
        let url = dir.appendingPathComponent("reset.btsnoop")
        try? ReplayEnvironment.writeRecording([
            RecordedPacket(frame: 1, timestamp: 1_700_000_000_000_000, fromHost: true, packet: H4Packet(.command, [0x03, 0x0C, 0x00])),
            RecordedPacket(frame: 2, timestamp: 1_700_000_000_001_000, fromHost: false, packet: H4Packet(.event, [0x0E, 0x04, 0x01, 0x03, 0x0C, 0x00])),
        ], to: url)
        return url
    }()

    @Test func hciWithoutKernelBluetooth() async throws {
        let result = try await CLIRun.run(["replay", Self.recording.path, "--hci", "hci:0"])
        #expect(result.status == 2)
        #if os(Linux)
        #expect(result.stderr.contains("hci:0: "))
        if access("/sys/class/bluetooth", F_OK) != 0 {
            #expect(result.stderr.contains("kernel has no Bluetooth: use tcp: or tty:"), "\(result.stderr)")
        }
        #endif
    }

    @Test func nothingListening() async throws {
        let dir = try ReplayEnvironment.temporaryDirectory("refused")
        let junit = dir.appendingPathComponent("out.xml")
        let port = try ReplayEnvironment.freePort()
        let result = try await CLIRun.run(["replay", Self.recording.path, "--hci", "tcp:127.0.0.1:\(port)", "--junit", junit.path, "--json"])
        #expect(result.status == 2)
        #expect(result.stderr.contains("cannot connect"))
        #expect(try result.json()["error"] as? String != nil)
        #expect(try String(contentsOf: junit, encoding: .utf8).contains("<error message="))
    }

    @Test(arguments: [
        ["replay", "/nonexistent/rec.btsnoop", "--hci", "tcp:127.0.0.1:1"],
        ["replay", "REC", "--hci", "bogus:1"],
        ["replay", "REC", "--hci", "tcp:127.0.0.1:1", "--strict", "no-such-rule"],
        ["replay", "REC", "--hci", "tcp:127.0.0.1:1", "--timing", "slow"],
        ["replay", "REC", "--hci", "tcp:127.0.0.1:1", "--map-address", "nope"],
        ["emulate", "REC", "--listen", "tty:/dev/null"],
    ])
    func usageAndInputErrors(_ arguments: [String]) async throws {
        let result = try await CLIRun.run(arguments.map { $0 == "REC" ? Self.recording.path : $0 })
        #expect(result.status == 2, "\(result.stderr)")
        #expect(!result.stderr.isEmpty)
    }
}
