import BLEAnalysis
import BLEBytes
import BLECapture

/// Capture-format detection and every reader, on the input as a file: btsnoop (H1/H4/monitor),
/// PacketLogger in both byte orders, pcap/pcapng through libpcap, gzip of any of them, field-log
/// containers; then the analysis pass with detectors on what was read (over-the-air link-layer
/// captures included, which only this harness reaches).
///
/// Beyond "no trap" it checks what the README promises: frames are numbered 1, 2, 3…, every frame's
/// bytes lie inside the file (memory-mapped formats), a record length never exceeds
/// `CaptureLimits.maxRecord`, and a truncated file reports the cut at the end of the last complete
/// record.
enum CaptureHarness {
    static let path = Scratch.path("capture")

    static func run(_ data: UnsafeRawBufferPointer, _ check: inout Invariants) {
        guard Scratch.write(data, to: path) else { return }
        defer { Scratch.remove(path) }
        guard let file = try? CaptureFile(path: path) else { return }
        let info = file.info
        // The file's own bytes are the records (not an inflated copy or a member of a field-log archive).
        let mapped = (info.format == .btsnoop || info.format == .packetlogger) && !info.compressed && info.fieldLog == nil
        var expectedNumber = 1
        var lastEnd = info.format == .btsnoop ? 16 : 0
        var checksum = 0
        let analyzer = Analyzer(detect: true)
        // SessionModel.engine ↔ DetectorContext.model is a retain cycle (reported): break it, or every
        // run leaks its session and a long fuzz run ends out of memory.
        defer { analyzer.session.engine = nil }
        let summary = file.read { frame in
            check.expect(frame.number == expectedNumber, "frame numbered \(frame.number), expected \(expectedNumber)")
            expectedNumber = frame.number + 1
            check.expect(frame.payload.count <= CaptureLimits.maxRecord, "frame \(frame.number): payload \(frame.payload.count) beyond the record limit")
            check.expect(frame.originalLength >= 0, "frame \(frame.number): negative original length")
            if mapped {
                check.expect(frame.recordOffset >= lastEnd, "frame \(frame.number): record at \(frame.recordOffset) before the previous end \(lastEnd)")
                check.expect(frame.payloadOffset >= frame.recordOffset, "frame \(frame.number): payload before its record")
                check.expect(frame.payloadOffset + frame.payload.count <= data.count,
                             "frame \(frame.number): payload \(frame.payloadOffset)+\(frame.payload.count) beyond the file (\(data.count))")
                // The view must be the file's bytes at that offset.
                if frame.payloadOffset >= 0, frame.payloadOffset + frame.payload.count <= data.count, let first = frame.payload.first {
                    check.expect(first == data[frame.payloadOffset], "frame \(frame.number): payload view does not match the file at its offset")
                }
                lastEnd = frame.payloadOffset + frame.payload.count
            }
            // Touch every byte so a view past the mapping faults here, in the reader's frame.
            for b in frame.payload { checksum &+= Int(b) }
            analyzer.consume(frame)
        }
        for f in analyzer.finish() {
            check.expect(f.frames.allSatisfy { $0 >= 0 }, "\(f.rule) cites a negative frame number")
        }
        _ = checksum
        check.expect(summary.frames == expectedNumber - 1, "summary counts \(summary.frames) frames, \(expectedNumber - 1) delivered")
        if let first = summary.firstTimestamp, let last = summary.lastTimestamp { _ = (first, last) }
        if mapped, summary.truncated, let issue = summary.issues.first {
            check.expect(issue.offset == lastEnd, "truncation reported at \(issue.offset), last complete record ends at \(lastEnd)")
            check.expect(issue.frameNumber == summary.frames + 1, "truncation reported for frame \(issue.frameNumber) after \(summary.frames) frames")
        }
        if mapped, !summary.truncated, summary.issues.isEmpty {
            check.expect(lastEnd == data.count, "clean end at \(lastEnd) but the file has \(data.count) bytes")
        }
    }
}
