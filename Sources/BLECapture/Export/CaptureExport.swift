#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `bleanalyze export`: any supported capture converted to pcap with link type 201 (H4 with the
/// 4-byte direction word) through libpcap, for Wireshark and tshark.
public enum CaptureExport {
    public struct Summary: Sendable {
        public var format: CaptureFormat
        /// Frames read from the input.
        public var frames: Int
        /// Frames written (every HCI packet).
        public var written: Int
        /// Log records link type 201 cannot carry (BlueZ index/log records, PacketLogger syslog…), by kind.
        public var skipped: [FrameKind: Int]
        public var issues: [CaptureIssue]
        /// The first written frame whose number differs from its number in the input (the frames
        /// before it were all written), nil when every frame was written: input and output numbers.
        public var firstRenumbered: (input: Int, output: Int)?
    }

    /// The input opened for export, and whether it is H4 (btsnoop 1002, pcap 187/201: a record with an
    /// unknown packet indicator is written with it, so every record of the source is exported).
    /// - Throws: `CaptureError` for a file with no HCI packets to convert (over-the-air or unknown link types).
    static func hciInput(_ input: String) throws(CaptureError) -> (CaptureFile, h4Source: Bool) {
        let file = try CaptureFile(path: input)
        let info = file.info
        if let reason = info.notDecodedReason {
            throw CaptureError(path: input, reason: "\(reason); export writes HCI packets only")
        }
        if Datalink.isAirCapture(info.datalink), info.format == .pcap || info.format == .pcapng {
            throw CaptureError(path: input, reason: "link type \(info.datalink) (over-the-air capture): export writes HCI packets only")
        }
        let h4Source = (info.format == .btsnoop && info.datalink == Datalink.btsnoopH4)
            || ((info.format == .pcap || info.format == .pcapng) && (info.datalink == Datalink.pcapH4 || info.datalink == Datalink.pcapH4WithPHDR))
        return (file, h4Source)
    }

    /// - Throws: `CaptureError` when the input cannot be read or holds no HCI packets to convert
    ///   (over-the-air or unknown link types), or the output cannot be written.
    @discardableResult
    public static func toPcap(input: String, output: String) throws(CaptureError) -> Summary {
        let (file, h4Source) = try hciInput(input)
        let exporter = try PcapExporter(path: output, keepUnknownH4: h4Source)
        var skipped: [FrameKind: Int] = [:]
        var firstRenumbered: (input: Int, output: Int)? = nil
        let summary = file.read { frame in
            if !exporter.append(frame) {
                skipped[frame.kind, default: 0] += 1
            } else if firstRenumbered == nil, exporter.written != frame.number {
                firstRenumbered = (frame.number, exporter.written)
            }
        }
        try exporter.finish()
        return Summary(format: file.info.format, frames: summary.frames, written: exporter.written, skipped: skipped, issues: summary.issues,
                       firstRenumbered: firstRenumbered)
    }

    /// The same conversion to pcapng (link type 201), with packet comments (`opt_comment`) on the
    /// frames `comments` names by input frame number: `export --annotate` puts each finding and its
    /// cause on its key frame, so Wireshark shows them (`frame.comment`). Written in pieces: memory
    /// stays bounded by one packet and its comments.
    @discardableResult
    public static func toPcapng(input: String, output: String, comments: [Int: [String]]) throws(CaptureError) -> Summary {
        let (file, h4Source) = try hciInput(input)
        guard let out = fopen(output, "wb") else { throw CaptureError(path: output, reason: "cannot create the output") }
        var failed = false
        func flush(_ w: inout PcapngWriter) {
            let bytes = w.drain()
            if !bytes.isEmpty, bytes.withUnsafeBytes({ fwrite($0.baseAddress, 1, $0.count, out) }) != bytes.count { failed = true }
        }
        var w = PcapngWriter(linkType: UInt16(Datalink.pcapH4WithPHDR), snapLength: UInt32(PcapExporter.snapLength))
        var written = 0
        var skipped: [FrameKind: Int] = [:]
        var firstRenumbered: (input: Int, output: Int)? = nil
        var packet: [UInt8] = []
        let summary = file.read { frame in
            guard let indicator = PcapExporter.indicator(frame, keepUnknownH4: h4Source) else { skipped[frame.kind, default: 0] += 1; return }
            packet.removeAll(keepingCapacity: true)
            packet += [0, 0, 0, PcapExporter.received(frame) ? 1 : 0, indicator]
            packet.append(contentsOf: frame.payload)
            w.append(micros: frame.timestamp, data: packet, originalLength: max(packet.count, frame.originalLength + 5),
                     comments: comments[frame.number] ?? [])
            written += 1
            if firstRenumbered == nil, written != frame.number { firstRenumbered = (frame.number, written) }
            if w.writer.bytes.count > 1 << 16 { flush(&w) }
        }
        flush(&w)
        if fclose(out) != 0 || failed { throw CaptureError(path: output, reason: "cannot write the output") }
        return Summary(format: file.info.format, frames: summary.frames, written: written, skipped: skipped, issues: summary.issues,
                       firstRenumbered: firstRenumbered)
    }
}
