import BLEBytes
import BLECapture
import Foundation
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// `live --uart`: a firmware's BlueZ monitor protocol on a serial line (Zephyr
/// CONFIG_BT_DEBUG_MONITOR_UART, NimBLE), here written into a pty as the documented layout says
/// (Zephyr subsys/bluetooth/host/monitor.h): data_len u16, opcode u16, flags u8, hdr_len u8, the
/// extended header (type 8: u32 timestamp in 1/10 ms; types 1–7: u8 drop counters), the packet.
/// The frames of a real capture go through; the session's report holds the capture's findings and
/// its frames, the drop counters and the bytes that were no packet are told with their counts, and
/// the saved file's report is live's.
@Suite struct LiveUARTTests {
    /// One monitor packet as a firmware writes it.
    static func packet(opcode: UInt16, ticks: UInt32, drops: [(UInt8, UInt8)] = [], _ payload: [UInt8]) -> [UInt8] {
        var ext = ByteWriter()
        ext.u8(8)            // BT_MONITOR_TS32
        ext.u32le(ticks)
        for (type, count) in drops { ext.u8(type); ext.u8(count) }
        var w = ByteWriter()
        w.u16le(UInt16(4 + ext.bytes.count + payload.count))
        w.u16le(opcode)
        w.u8(0)              // flags
        w.u8(UInt8(ext.bytes.count))
        w.append(ext.bytes)
        w.append(payload)
        return w.bytes
    }

    /// The capture's HCI frames as a firmware's monitor stream: 2 command, 3 event, 4/5 ACL sent/received.
    static func stream(_ path: String, dropsAt: Int, garbageAt: Int) throws -> (bytes: [UInt8], frames: Int) {
        let file = try CaptureFile(path: path)
        var out: [UInt8] = []
        var first: Int64?
        var n = 0
        _ = file.read { frame in
            let opcode: UInt16
            switch frame.kind {
            case .command: opcode = 2
            case .event: opcode = 3
            case .aclData: opcode = frame.direction == .sent ? 4 : 5
            default: return
            }
            let start = first ?? frame.timestamp
            first = start
            let ticks = UInt32((frame.timestamp - start) / 100)
            if n == garbageAt { out += [0xFF, 0xFF, 0xFF] }
            // Zephyr's order: event drops (type 2) 2, ACL drops (type 3) 3.
            out += Self.packet(opcode: opcode, ticks: ticks, drops: n == dropsAt ? [(2, 2), (3, 3)] : [], Array(frame.payload))
            n += 1
        }
        return (out, n)
    }

    @Test func aFirmwareStreamThroughAPtyIsAnalysedWithItsDrops() throws {
        let capture = CLI.capture("unsubscribed_notification.btsnoop")   // one warning: gatt.unsubscribed-notification
        let (bytes, frames) = try Self.stream(capture, dropsAt: 5, garbageAt: 9)
        #expect(frames > 10)
        // A pty (Glibc does not export posix_openpt): /dev/ptmx, unlocked (TIOCSPTLCK), its number (TIOCGPTN).
        let master = open("/dev/ptmx", O_RDWR | O_NOCTTY)
        try #require(master >= 0)
        defer { close(master) }
        var unlock: Int32 = 0, number: UInt32 = 0
        try #require(ioctl(master, UInt(0x4004_5431), &unlock) == 0 && ioctl(master, UInt(0x8004_5430), &number) == 0)
        let slave = "/dev/pts/\(number)"
        // Raw on the master side too, so nothing is translated on the way.
        var tio = termios()
        tcgetattr(master, &tio); cfmakeraw(&tio); tcsetattr(master, TCSANOW, &tio)
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("bleanalyze-uart-\(getpid())-\(UInt32.random(in: 0 ... .max))")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let saved = dir.appendingPathComponent("uart.btsnoop").path
        let live = try LiveTests.Session(["live", "--uart", slave, "--jsonl", "--write", saved])
        var offset = 0
        while offset < bytes.count {   // in pieces, as a line delivers them
            let n = min(61, bytes.count - offset)
            let written = bytes[offset ..< offset + n].withUnsafeBytes { write(master, $0.baseAddress, n) }
            try #require(written > 0)
            offset += written
            usleep(500)
        }
        usleep(300_000)
        let r = try live.end(signal: SIGTERM)
        let lines = r.stdout.split(separator: "\n").map(String.init)
        let events = try lines.dropLast().map { try CLI.json($0) }
        let sources = events.filter { $0["type"] as? String == "source" }
        let dropped = try #require(sources.first { $0["event"] as? String == "dropped" }, "\(r.stdout) \(r.stderr)")
        #expect(dropped["event"] as? String == "dropped" && dropped["aclDrops"] as? Int == 3 && dropped["eventDrops"] as? Int == 2 && dropped["totalDrops"] as? Int == 5, "\(dropped)")
        let garbage = try #require(sources.first { $0["event"] as? String == "garbage" })
        #expect(garbage["bytes"] as? Int == 3)
        let total = try #require(sources.first { $0["event"] as? String == "dropped-total" })
        #expect(total["totalDrops"] as? Int == 5)
        // The report: every frame, the capture's warning at the same frame, and report's on the saved file.
        let document = try CLI.json(try #require(lines.last))
        #expect((document["capture"] as? [String: Any]).flatMap { $0["frames"] as? Int } == frames, "\(document["capture"] ?? "")")
        let original = try CLI.json(try CLI.run([capture, "--json"]).stdout)
        func warnings(_ d: [String: Any]) -> [String] {
            (d["findings"] as? [[String: Any]] ?? []).filter { $0["severity"] as? String != "info" }
                .map { "\($0["rule"] ?? "") \(($0["frames"] as? [Int]) ?? [])" }
        }
        #expect(warnings(document) == warnings(original) && !warnings(original).isEmpty, "\(warnings(document)) vs \(warnings(original))")
        let onSaved = try CLI.run([saved, "--json"])
        #expect(lines.last == onSaved.stdout.trimmingCharacters(in: .newlines))
        // Every line as docs/live-schema.json says (where the venv has jsonschema; LiveTests needs it too).
        if FileManager.default.isExecutableFile(atPath: SchemaTests.python.path) {
            var documents: [String] = []
            for (i, line) in lines.enumerated() {
                let file = dir.appendingPathComponent("\(i).json")
                try Data(line.utf8).write(to: file)
                documents.append("live=" + file.path)
            }
            let (status, text) = try Tool.outcome(SchemaTests.python, ["-c", SchemaTests.validator, CLI.repoRoot.appendingPathComponent("docs").path] + documents)
            #expect(status == 0 && text.contains("validated \(documents.count) documents, 0 errors"), "\(text)")
        }
    }

    @Test func aLineThatIsNoMonitorStreamIsSaid() throws {
        let r = try CLI.run(["live", "--uart", "serial:/nonexistent/tty@115200"])
        #expect(r.status == 2 && r.stderr.contains("/nonexistent/tty"), "\(r.stderr)")
        let bad = try CLI.run(["live", "--uart", "tcp:localhost:1"])
        #expect(bad.status != 0 && bad.stderr.contains("--uart"), "\(bad.stderr)")
    }
}
