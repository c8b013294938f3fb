import BLEBytes
import BLECapture
import BLEProtocol
import BLEReplay
import Foundation
import Testing

/// `bleanalyze replay` against Bumble's virtual controller with a peripheral on its link: a
/// session recorded once (`Golden.session`) replays without divergence on a fresh instance, and
/// each change of the peripheral gives exactly the divergences it causes.
@Suite(.enabled(if: Golden.sessionStarted), .liveThreads, .timeLimit(.minutes(1)))
struct BumbleReplayTests {
    static func replay(_ recording: URL, _ controller: BumbleController, _ extra: [String] = []) async throws -> CLIRun.Result {
        try await CLIRun.run(["replay", recording.path, "--hci", controller.uri, "--timeout", "4", "--json"] + extra)
    }

    @Test func sameSessionOnAFreshControllerHasNoDivergence() async throws {
        let golden = try await Golden.session()
        let controller = try await BumbleController()
        let dir = try ReplayEnvironment.temporaryDirectory("fresh")
        let live = dir.appendingPathComponent("live.btsnoop"), junit = dir.appendingPathComponent("replay.xml")
        let result = try await Self.replay(golden, controller, ["-w", live.path, "--junit", junit.path])
        #expect(result.status == 0, "\(result.stdout.prefix(3000))")
        let json = try result.json()
        #expect(try result.divergences().isEmpty)
        #expect(json["replayed"] as? Int == json["total"] as? Int)
        #expect((json["notCompared"] as? Int ?? 0) > 0)   // Number Of Completed Packets

        // The live capture is a recording like any other: readable, and it replays again.
        let capture = try CaptureFile(path: live.path)
        var hci = 0
        _ = capture.read { if $0.kind.isHCI { hci += 1 } }
        #expect(hci >= (json["total"] as? Int ?? 0))
        let again = try await Self.replay(live, controller)
        #expect(again.status == 0, "\(again.stdout.prefix(3000))")

        let xml = try String(contentsOf: junit, encoding: .utf8)
        #expect(xml.contains("failures=\"0\" errors=\"0\""))
        #expect(xml.contains("step 1 #1: HCI Command: Reset"))
    }

    @Test func characteristicThatNowNeedsEncryption() async throws {
        let golden = try await Golden.session()
        let frame = try #require(RecordingFacts(golden).readResponseFrame(value: Array("golden".utf8)))
        let result = try await Self.replay(golden, try await BumbleController(variant: "encrypted-char"))
        #expect(result.status == 1)
        let divergences = try result.divergences()
        #expect(divergences.map { "\($0["kind"] ?? "") #\($0["frame"] ?? "")" } == ["mismatch #\(frame)"])
        let difference = try #require((divergences.first?["differences"] as? [[String: Any]])?.first)
        #expect(difference["field"] as? String == "ATT")
        #expect(difference["expected"] as? String == "Read Response (0x0b)")
        #expect((difference["actual"] as? String)?.contains("Error Response (0x01)") == true)
        #expect((difference["actual"] as? String)?.contains("Insufficient Encryption (0x0f)") == true)
    }

    @Test func characteristicWithAnotherValue() async throws {
        let golden = try await Golden.session()
        let frame = try #require(RecordingFacts(golden).readResponseFrame(value: Array("golden".utf8)))
        let controller = try await BumbleController(variant: "other-value")
        let result = try await Self.replay(golden, controller)
        #expect(result.status == 1)
        let divergences = try result.divergences()
        #expect(divergences.map { "\($0["kind"] ?? "") #\($0["frame"] ?? "")" } == ["mismatch #\(frame)"])
        let differences = divergences.first?["differences"] as? [[String: Any]] ?? []
        #expect(differences.map { $0["field"] as? String } == ["ATT.Value"])
        #expect((differences.first?["expected"] as? String)?.contains("\"golden\"") == true)
        #expect((differences.first?["actual"] as? String)?.contains("\"changed\"") == true)
        // --ignore att-value accepts it
        let relaxed = try await Self.replay(golden, controller, ["--ignore", "att-value"])
        #expect(relaxed.status == 0, "\(relaxed.stdout.prefix(2000))")
    }

    @Test func missingService() async throws {
        let golden = try await Golden.session()
        let facts = try RecordingFacts(golden)
        let battery = try #require(facts.serviceStart(0x180F))
        let expected = facts.serverPDUs(touchingHandlesFrom: battery).map { "\($0.opcode == 0x1B ? "missing" : "mismatch") #\($0.frame)" }
        #expect(expected.count >= 5)   // discovery, characteristic, read, descriptor, subscription, notification
        let result = try await Self.replay(golden, try await BumbleController(variant: "missing-service"))
        #expect(result.status == 1)
        let divergences = try result.divergences()
        #expect(divergences.map { "\($0["kind"] ?? "") #\($0["frame"] ?? "")" } == expected)
        // The first one is the discovery response that no longer lists the service.
        let first = divergences.first?["differences"] as? [[String: Any]] ?? []
        #expect(first.first?["expected"] as? String == "Read By Group Type Response (0x11)")
    }

    /// The device under test is another unit (another address) than the recorded one:
    /// `--map-address` makes the recording about it (scan, connect, reports compared on the new address).
    @Test func peerAddressMapped() async throws {
        let golden = try await Golden.session()
        let controller = try await BumbleController(peripheralAddress: "C0:5E:1A:00:00:42")
        let result = try await Self.replay(golden, controller, ["--map-address", "C0:5E:1A:00:00:02=C0:5E:1A:00:00:42"])
        #expect(result.status == 0, "\(result.stdout.prefix(3000))")
        #expect(try result.divergences().isEmpty)
    }

    /// Bumble's controller answers an asynchronous command it does not implement with nothing at
    /// all: the missing Command Status is a divergence after --timeout, not a hang, and the replay
    /// goes on (the next command is not held back for the credit that status would have returned).
    @Test func commandWithoutAnyAnswerTimesOut() async throws {
        func p(_ frame: Int, _ fromHost: Bool, _ type: HCIPacketType, _ hex: String) -> RecordedPacket {
            RecordedPacket(frame: frame, timestamp: 1_700_000_000_000_000 + Int64(frame) * 1000, fromHost: fromHost,
                           packet: H4Packet(type, Hex.bytes(hex) ?? []))
        }
        let dir = try ReplayEnvironment.temporaryDirectory("noanswer")
        let recording = dir.appendingPathComponent("noanswer.btsnoop")
        try ReplayEnvironment.writeRecording([
            p(1, true, .command, "03 0c 00"),                // Reset
            p(2, false, .event, "0e 04 01 03 0c 00"),        // Command Complete: Success
            p(3, true, .command, "1d 04 02 01 00"),          // Read Remote Version Information, handle 1
            p(4, false, .event, "0f 04 00 01 1d 04"),        // Command Status: Success (what a controller sends)
            p(5, true, .command, "03 0c 00"),                // Reset
            p(6, false, .event, "0e 04 01 03 0c 00"),        // Command Complete: Success
        ], to: recording)
        let controller = try await BumbleController()
        let result = try await CLIRun.run(["replay", recording.path, "--hci", controller.uri, "--timeout", "1", "--json"])
        // The controller's own shortcoming: environment, listed, not failing the run.
        #expect(result.status == 0)
        #expect(try result.divergences().first?["class"] as? String == "environment")
        let divergences = try result.divergences()
        #expect(divergences.map { "\($0["kind"] ?? "") #\($0["frame"] ?? "")" } == ["missing #4"])
        #expect((divergences.first?["message"] as? String)?.contains("Read Remote Version Information: not received within 1 s") == true)
        let json = try result.json()
        #expect(json["replayed"] as? Int == 5)
        #expect(json["total"] as? Int == 6)
        #expect(result.seconds < 15)   // bounded: one 1 s timeout, not a hang
    }

    /// A recording that does not begin with HCI_Reset, against a controller still scanning from
    /// an earlier session (Bumble's HCI_Reset is a no-op, so scanning survives it): the stale
    /// advertising reports that arrive before the first expected packet are no divergence, even
    /// with advertising reports compared strictly (where any other report would be unexpected).
    ///
    /// Bumble's TCP server drops controller packets while no host is connected, so the stale
    /// reports have to arrive after the connection: the second recording begins with a vendor
    /// event (not compared under the default `vendor` rule) 300 ms before its first command, and
    /// `--timing original` keeps that pause.
    @Test func stalePacketsBeforeTheFirstExpectedOneAreIgnored() async throws {
        let golden = try await Golden.session()
        let packets = try RecordingFacts.packets(golden)
        func isScanEnable(_ p: RecordedPacket, _ enable: UInt8) -> Bool {
            p.fromHost && p.packet.type == .command && p.packet.bytes.starts(with: [0x0C, 0x20, 0x02, enable])
        }
        func answer(after i: Int) -> Int? {
            packets.indices.first { $0 > i && !packets[$0].fromHost && packets[$0].packet.bytes.starts(with: [0x0E, 0x04, 0x01, 0x0C, 0x20]) }
        }
        let enable = try #require(packets.firstIndex { isScanEnable($0, 1) })
        let enabled = try #require(answer(after: enable))
        let disable = try #require(packets.firstIndex { isScanEnable($0, 0) })
        let disabled = try #require(answer(after: disable))
        let dir = try ReplayEnvironment.temporaryDirectory("stale")
        let start = dir.appendingPathComponent("start-scanning.btsnoop"), stop = dir.appendingPathComponent("stop-scanning.btsnoop")
        try ReplayEnvironment.writeRecording(Array(packets[...enabled]), to: start)
        var disableCommand = packets[disable], disableAnswer = packets[disabled]
        let vendorEvent = RecordedPacket(frame: 1, timestamp: disableCommand.timestamp - 300_000, fromHost: false,
                                         packet: H4Packet(.event, [0xFF, 0x01, 0x00]))
        disableCommand.frame = 2
        disableAnswer.frame = 3
        try ReplayEnvironment.writeRecording([vendorEvent, disableCommand, disableAnswer], to: stop)

        let controller = try await BumbleController()
        let first = try await CLIRun.run(["replay", start.path, "--hci", controller.uri, "--json"])
        #expect(first.status == 0, "\(first.stdout.prefix(2000))")
        let live = dir.appendingPathComponent("live.btsnoop")
        let second = try await CLIRun.run(["replay", stop.path, "--hci", controller.uri, "--json", "--timing", "original",
                                     "--strict", "advertising", "-w", live.path])
        #expect(second.status == 0, "\(second.stdout.prefix(2000))")
        var reports = 0
        _ = try CaptureFile(path: live.path).read { f in
            if f.kind == .event, f.payload.count > 2, f.payload[0] == 0x3E, f.payload[2] == 0x02 { reports += 1 }
        }
        #expect(reports > 0, "the controller sent no stale advertising report: the test proves nothing")
    }

    /// Advertising reports recorded after the host sent LE Set Scan Enable (disable) and before its
    /// Command Complete were in flight: a live controller may or may not deliver them. Replaying
    /// such a recording (a live capture of an earlier replay, here made deterministic by moving
    /// two recorded reports behind the disable) is no divergence, relaxed or strict.
    @Test func reportsInFlightWhenScanningStopsAreOptional() async throws {
        var packets = try RecordingFacts.packets(try await Golden.session())
        let disable = try #require(packets.firstIndex {
            $0.fromHost && $0.packet.type == .command && $0.packet.bytes.starts(with: [0x0C, 0x20, 0x02, 0x00])
        })
        let reports = packets[..<disable].filter { !$0.fromHost && $0.packet.bytes.starts(with: [0x3E]) && $0.packet.bytes.count > 2 && $0.packet.bytes[2] == 0x02 }
        #expect(reports.count >= 2)
        let late = reports.suffix(2).map { p in
            var p = p
            p.timestamp = packets[disable].timestamp + 1
            return p
        }
        packets.insert(contentsOf: late, at: disable + 1)
        for i in packets.indices { packets[i].frame = i + 1 }
        let dir = try ReplayEnvironment.temporaryDirectory("inflight")
        let recording = dir.appendingPathComponent("inflight.btsnoop")
        try ReplayEnvironment.writeRecording(packets, to: recording)
        let controller = try await BumbleController()
        for extra in [[], ["--strict", "advertising"]] {
            let result = try await Self.replay(recording, controller, extra)
            #expect(result.status == 0, "\(extra): \(result.stdout.prefix(3000))")
            let json = try result.json()
            #expect(json["replayed"] as? Int == json["total"] as? Int)
            // Awaited like any expected unit, the two would take 2 × --timeout.
            #expect((json["seconds"] as? Double ?? 99) < 8, "in-flight reports are not awaited for --timeout")
        }
    }

    /// H4 over a pty (Bumble's `pty:` transport, `tty:` here), with the recorded gaps at twice the speed.
    @Test func overTTYWithOriginalTiming() async throws {
        let golden = try await Golden.session()
        let packets = try RecordingFacts.packets(golden)
        let span = Double((packets.last?.timestamp ?? 0) - (packets.first?.timestamp ?? 0)) / 1e6
        let dir = try ReplayEnvironment.temporaryDirectory("tty")
        let controller = try await BumbleController(ptyLink: dir.appendingPathComponent("controller").path)
        #expect(controller.uri.hasPrefix("tty:"))
        let result = try await CLIRun.run(["replay", golden.path, "--hci", controller.uri, "--timing", "original", "--speed", "2", "--json"])
        #expect(result.status == 0, "\(result.stdout.prefix(3000))")
        #expect(try result.divergences().isEmpty)
        #expect(try result.json()["seconds"] as? Double ?? 0 >= span / 2 * 0.8)
    }
}
