import BLECapture
import Foundation
import TestSupport
import Testing

/// The same traffic in every container must read as the same frames. The pcap, ns-pcap, pcapng and
/// gzip variants of `captures/healthy.btsnoop` were written by Wireshark's editcap and gzip (independent tools).
@Suite struct FormatEquivalenceTests {
    static let reference = CaptureTestPaths.capture("healthy.btsnoop")

    @Test(arguments: [
        ("healthy.pcap", CaptureFormat.pcap, UInt32(201), false),
        ("healthy_ns.pcap", .pcap, 201, false),
        ("healthy.pcapng", .pcapng, 201, false),
        ("healthy.btsnoop.gz", .btsnoop, 1002, true),
    ])
    func sameFramesAsBTSnoop(name: String, format: CaptureFormat, datalink: UInt32, compressed: Bool) throws {
        let (expected, _, _) = try FrameFingerprint.of(Self.reference)
        let (frames, summary, info) = try FrameFingerprint.of(CaptureTestPaths.capture(name))
        #expect(info.format == format)
        #expect(info.datalink == datalink)
        #expect(info.compressed == compressed)
        #expect(!summary.truncated)
        #expect(frames.count == expected.count)
        for (a, b) in zip(frames, expected) {
            #expect(a.kind == b.kind)
            #expect(a.direction == b.direction)
            #expect(a.payload == b.payload)
            #expect(a.timestamp == b.timestamp, "timestamps keep microseconds in every container")
        }
    }

    /// PacketLogger in both byte orders, written from the same frames, reads back identically.
    @Test(arguments: [true, false])
    func packetLoggerByteOrders(bigEndian: Bool) throws {
        let source = try CaptureFile(path: Self.reference).records()
        var w = PacketLoggerWriter(bigEndian: bigEndian)
        for r in source.records { w.append(r) }
        w.append(RecordToWrite(timestamp: 1_763_000_000_000_000, direction: .unknown, kind: .syslog,
                               payload: [1, 0, 0, 0, 5] + Array("bluetoothd\0sender\0com.apple.bluetooth\0CoreBluetooth\0didConnect\0".utf8)))
        let path = try CaptureTestPaths.temporaryFile(bigEndian ? "be.pklg" : "le.pklg", w.bytes)
        let (frames, summary, info) = try FrameFingerprint.of(path)
        #expect(info.format == .packetlogger)
        #expect(info.bigEndian == bigEndian)
        #expect(summary.frames == source.records.count + 1)
        #expect(frames.last?.kind == .syslog)
        for (a, b) in zip(frames, source.records) {
            #expect(a.kind == b.kind)
            #expect(a.direction == b.direction)
            #expect(a.payload == b.payload)
            #expect(a.timestamp == b.timestamp)
        }
    }

    /// gzip of a PacketLogger file (made by the `gzip` tool) is read transparently.
    @Test(.enabled(if: CaptureTestPaths.sharedReal != nil, "../shared/captures/real is absent"),
          .enabled(if: CaptureTestPaths.run("gzip", ["--version"]) != nil, "gzip is not installed"))
    func gzipPacketLogger() throws {
        let real = try #require(CaptureTestPaths.sharedReal)
        let original = real.appendingPathComponent("macos_packetlogger_bigendian_hci.pklg").path
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("bleanalyze-gz-\(getpid())")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let copy = dir.appendingPathComponent("trace.log").path
        try? FileManager.default.removeItem(atPath: copy)
        try? FileManager.default.removeItem(atPath: copy + ".gz")
        try FileManager.default.copyItem(atPath: original, toPath: copy)
        try #require(CaptureTestPaths.run("gzip", ["-n", copy]) != nil, "gzip failed")
        let (a, _, _) = try FrameFingerprint.of(original)
        let (b, _, info) = try FrameFingerprint.of(copy + ".gz")
        #expect(info.compressed)
        #expect(info.format == .packetlogger)
        #expect(a == b)
    }

    /// tshark's frame count equals ours on every capture of the project (when tshark is installed).
    @Test(.enabled(if: Tool.available("tshark", ["-v"]), "tshark is not installed"))
    func frameCountsMatchTshark() throws {
        let dir = CaptureTestPaths.repoRoot.appendingPathComponent("captures")
        let files = try FileManager.default.contentsOfDirectory(atPath: dir.path)
            .filter { [".btsnoop", ".pcap", ".pcapng", ".gz"].contains(where: $0.hasSuffix) }.sorted()
        #expect(files.count >= 5)
        for name in files {
            let path = dir.appendingPathComponent(name).path
            guard let out = CaptureTestPaths.run("tshark", ["-r", path, "-T", "fields", "-e", "frame.number"]) else {
                Issue.record("tshark failed on \(name)"); continue
            }
            let theirs = out.split(separator: "\n").count
            let ours = try CaptureFile(path: path).read { _ in }.frames
            #expect(ours == theirs, "\(name)")
        }
    }
}
