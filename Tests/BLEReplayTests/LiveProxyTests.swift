import Foundation
import Testing
import TestSupport

/// `bleanalyze live --proxy` between a Bumble host (the app under test: `host_against.py`, the replay
/// tests' central session) and RootCanal 1.10.0, with a Bumble peripheral (`scripts/live/
/// proxy_peripheral.py`) on a second controller of the same RootCanal. A healthy session exits 0;
/// a peripheral that notifies before the central subscribed fails `--fail-on warning` with
/// `gatt.unsubscribed-notification`, read independently from the saved capture with tshark; one that
/// never answers a read fails with `att.timeout`, told at its timer while the link is still up; garbage
/// from the host is told and the controller keeps answering; a controller that dies ends the session
/// with the host side closed and a report.
@Suite(.serialized) struct LiveProxyTests {
    static let ready = ReplayEnvironment.hasBumble && ReplayEnvironment.rootCanal != nil
    static let hasTshark = Tool.available("tshark", ["-v"])

    static func peripheralScript() -> String { ReplayEnvironment.repoRoot.appendingPathComponent("scripts/live/proxy_peripheral.py").path }

    struct Session {
        var status: Int32
        var lines: [String]
        var stderr: String
        var saved: URL
        var central: String
        var centralStatus: Int32
    }

    /// Starts `live --proxy` towards `controller` and returns it with the port the host must use.
    static func startLive(to controller: String, saved: URL, extra: [String] = []) async throws -> (LiveProcess, UInt16) {
        let live = try LiveProcess("live", executable: ReplayEnvironment.binary, arguments: [
            "live", "--proxy", "tcp:127.0.0.1:0", "--to", controller, "--jsonl", "-w", saved.path,
        ] + extra)
        let started = try await live.line(startingWith: "{\"type\":\"started\"", timeout: 30)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(started.utf8)) as? [String: Any])
        let listening = try #require(object["listening"] as? String)
        let port = try #require(UInt16(listening.split(separator: ":").last ?? ""))
        return (live, port)
    }

    /// - Parameters:
    ///   - fault: the peripheral's `--broken` fault, nil for a healthy one.
    ///   - readTimeout: how long the app waits for a read's answer (`host_against.py --read-timeout`).
    static func run(fault: String?, readTimeout: Double? = nil) async throws -> Session {
        let rootCanal = try await RootCanal(binary: try #require(ReplayEnvironment.rootCanal))
        let bumbleURI = rootCanal.uri.replacingOccurrences(of: "tcp:", with: "tcp-client:")
        let peripheral = try LiveProcess("proxy_peripheral", executable: ReplayEnvironment.python,
                                         arguments: [peripheralScript(), "--transport", bumbleURI] + (fault.map { ["--broken", $0] } ?? []))
        defer { peripheral.stop() }
        _ = try await peripheral.line(startingWith: "READY", timeout: 30)
        let dir = try ReplayEnvironment.temporaryDirectory("live-proxy")
        let saved = dir.appendingPathComponent("session.btsnoop")
        let (live, port) = try await startLive(to: rootCanal.uri, saved: saved, extra: ["--fail-on", "warning"])
        let central = try LiveProcess("host_against", executable: ReplayEnvironment.python, arguments: [
            ReplayEnvironment.script("host_against.py"), "--transport", "tcp-client:127.0.0.1:\(port)", "--scenario", "session", "--extended-scan",
        ] + (readTimeout.map { ["--read-timeout", String($0)] } ?? []))
        let centralStatus = try await central.wait(timeout: 90)
        // The host closed its transport when it exited: the proxy's session ends with its report.
        let status = try await live.wait(timeout: 30)
        return Session(status: status, lines: live.stdout.split(separator: "\n").map(String.init), stderr: live.stderr,
                       saved: saved, central: central.stdout + central.stderr, centralStatus: centralStatus)
    }

    static func json(_ line: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
    }

    /// The last line is `report --json` on the saved capture, and the session's events agree with it.
    static func reportAgrees(_ s: Session) throws -> [String: Any] {
        let last = try #require(s.lines.last)
        let onSaved = try #require(Tool.run(ReplayEnvironment.binary, [s.saved.path, "--json"]))
        #expect(last == onSaved.trimmingCharacters(in: .newlines), "live's report is not report's on the saved capture")
        let events = try s.lines.dropLast().map(json)
        let document = try json(last)
        let connections = document["connections"] as? [[String: Any]] ?? []
        #expect(events.filter { $0["type"] as? String == "connection-opened" }.count == connections.count)
        #expect(events.contains { $0["type"] as? String == "source" && $0["event"] as? String == "proxy-closed" })
        return document
    }

    @Test(.enabled(if: ready, "needs Bumble and RootCanal in the venv"))
    func aHealthySessionThroughTheProxyPasses() async throws {
        let s = try await Self.run(fault: nil)
        #expect(s.centralStatus == 0, "the app's session through the proxy: \(s.central)")
        #expect(s.central.contains("RESULT "), "\(s.central)")
        #expect(s.status == 0, "\(s.lines.suffix(3)) \(s.stderr)")
        let document = try Self.reportAgrees(s)
        let connections = document["connections"] as? [[String: Any]] ?? []
        #expect(connections.count == 1)
        let warnings = (document["findings"] as? [[String: Any]] ?? []).filter { $0["severity"] as? String != "info" }
        #expect(warnings.isEmpty, "\(warnings)")
    }

    @Test(.enabled(if: ready, "needs Bumble and RootCanal in the venv"))
    func aNotificationBeforeSubscriptionFailsWithTheFindingAndTheCapture() async throws {
        let s = try await Self.run(fault: "notify-early")
        #expect(s.status == 1, "\(s.lines.suffix(3)) \(s.stderr)")
        let document = try Self.reportAgrees(s)
        let found = (document["findings"] as? [[String: Any]] ?? []).filter { $0["rule"] as? String == "gatt.unsubscribed-notification" }
        let finding = try #require(found.first, "\(document["findings"] ?? [])")
        #expect(finding["severity"] as? String == "warning")
        let told = try s.lines.dropLast().map(Self.json).filter { $0["type"] as? String == "finding" }
        #expect(told.contains { ($0["finding"] as? [String: Any])?["rule"] as? String == "gatt.unsubscribed-notification" })
        if Self.hasTshark {
            // Read from the frames: the first notification comes before any write to a descriptor.
            let out = try #require(Tool.run("tshark", ["-r", s.saved.path, "-Y", "btatt.opcode == 0x1b || btatt.opcode == 0x12",
                                                        "-T", "fields", "-e", "frame.number", "-e", "btatt.opcode"]))
            let rows = out.split(separator: "\n").map { $0.split(separator: "\t").map(String.init) }
            let firstNotification = try #require(rows.first { $0.last == "0x1b" }?.first.flatMap { Int($0) })
            let firstWrite = rows.first { $0.last == "0x12" }?.first.flatMap { Int($0) } ?? Int.max
            #expect(firstNotification < firstWrite)
            #expect((finding["frames"] as? [Int])?.first == firstNotification)
        }
    }

    /// A server that never answers a read: the app waits as a phone's stack does (30 s, then Bumble's
    /// client gives up), keeps the link 3 s more and closes it. `att.timeout` (error) is told while the
    /// link is still up, decided at its timer (request + 30 s + the 1 s in which a link end would be
    /// blamed on it), and fails the session; the request is read from the saved capture with tshark.
    @Test(.enabled(if: ready, "needs Bumble and RootCanal in the venv"))
    func anUnansweredRequestFailsAtItsTimerWithTheFinding() async throws {
        let s = try await Self.run(fault: "unanswered", readTimeout: 40)
        #expect(s.centralStatus == 1, "the app's read must time out: \(s.central)")
        #expect(s.status == 1, "\(s.lines.suffix(3)) \(s.stderr)")
        let document = try Self.reportAgrees(s)
        let found = (document["findings"] as? [[String: Any]] ?? []).filter { $0["rule"] as? String == "att.timeout" }
        let finding = try #require(found.first, "\(document["findings"] ?? [])")
        #expect(finding["severity"] as? String == "error")
        let events = try s.lines.dropLast().map(Self.json)
        let toldAt = try #require(events.firstIndex { ($0["finding"] as? [String: Any])?["rule"] as? String == "att.timeout" })
        #expect(events[toldAt]["decided"] as? String == "timer")
        let closedAt = events.firstIndex { $0["type"] as? String == "connection-closed" } ?? Int.max
        #expect(toldAt < closedAt, "told while the link was up: \(events.map { $0["type"] ?? "" })")
        if Self.hasTshark {
            // Read from the frames: the last Read Request, with no ATT PDU from the server after it.
            let out = try #require(Tool.run("tshark", ["-r", s.saved.path, "-Y", "btatt", "-T", "fields",
                                                        "-e", "frame.number", "-e", "btatt.opcode"]))
            let rows = out.split(separator: "\n").map { $0.split(separator: "\t").map(String.init) }
            let read = try #require(rows.last { $0.last == "0x0a" }?.first.flatMap { Int($0) })
            #expect(rows.last?.first.flatMap { Int($0) } == read, "nothing answered the Read Request: \(rows.suffix(3))")
            #expect((finding["frames"] as? [Int])?.first == read)
        }
    }

    /// Garbage from the host is told, never passed on; the controller still answers the next command.
    @Test(.enabled(if: ready, "needs Bumble and RootCanal in the venv"))
    func hostGarbageIsToldAndTheControllerKeepsWorking() async throws {
        let rootCanal = try await RootCanal(binary: try #require(ReplayEnvironment.rootCanal))
        let dir = try ReplayEnvironment.temporaryDirectory("live-garbage")
        let (live, port) = try await Self.startLive(to: rootCanal.uri, saved: dir.appendingPathComponent("g.btsnoop"))
        // 0xFF 0xFE are no H4 packet type; then HCI_Reset (0x0C03): its Command Complete must come back.
        let client = try LiveProcess("garbage", executable: ReplayEnvironment.python, arguments: ["-c", """
            import socket, sys
            s = socket.create_connection(("127.0.0.1", \(port)))
            s.sendall(bytes([0xFF, 0xFE, 0xFD]) + bytes([0x01, 0x03, 0x0C, 0x00]))
            s.settimeout(10)
            got = b""
            while len(got) < 7:
                got += s.recv(64)
            print("GOT " + got.hex(), flush=True)
            s.close()
            """])
        let got = try await client.line(startingWith: "GOT ", timeout: 30)
        #expect(got.hasPrefix("GOT 040e04"), "\(got)")
        #expect(got.contains("030c00"), "Command Complete of HCI_Reset, status 0: \(got)")
        _ = try await live.wait(timeout: 30)
        let events = try live.stdout.split(separator: "\n").dropLast().map { try Self.json(String($0)) }
        let garbage = try #require(events.first { $0["event"] as? String == "host-garbage" }, "\(live.stdout)")
        #expect((garbage["message"] as? String)?.contains("skipped 3 bytes") == true, "\(garbage)")
    }

    /// The controller dies mid-session: the host side is closed, the session ends with its report.
    @Test(.enabled(if: ready, "needs Bumble and RootCanal in the venv"))
    func aDeadControllerClosesTheHostSideAndIsReported() async throws {
        var rootCanal: RootCanal? = try await RootCanal(binary: try #require(ReplayEnvironment.rootCanal))
        let uri = try #require(rootCanal?.uri)
        let dir = try ReplayEnvironment.temporaryDirectory("live-dead")
        let (live, port) = try await Self.startLive(to: uri, saved: dir.appendingPathComponent("d.btsnoop"))
        let client = try LiveProcess("host", executable: ReplayEnvironment.python, arguments: ["-c", """
            import socket, sys
            s = socket.create_connection(("127.0.0.1", \(port)))
            s.sendall(bytes([0x01, 0x03, 0x0C, 0x00]))
            s.settimeout(30)
            got = s.recv(64)
            print("ANSWERED " + got.hex(), flush=True)
            rest = s.recv(64)
            print("CLOSED " + rest.hex(), flush=True)
            """])
        _ = try await client.line(startingWith: "ANSWERED ", timeout: 30)
        rootCanal = nil   // stops RootCanal
        let closed = try await client.line(startingWith: "CLOSED", timeout: 30)
        #expect(closed == "CLOSED ", "the host side is closed (end of stream): \(closed)")
        let status = try await live.wait(timeout: 30)
        #expect(status == 0)
        let lines = live.stdout.split(separator: "\n").map(String.init)
        let events = try lines.dropLast().map(Self.json)
        let end = try #require(events.first { $0["event"] as? String == "proxy-closed" }, "\(live.stdout)")
        #expect((end["message"] as? String)?.contains("the controller") == true, "\(end)")
        let report = try Self.json(try #require(lines.last))
        #expect((report["capture"] as? [String: Any])?["frames"] as? Int == 2, "the reset and its Command Complete")
    }
}
