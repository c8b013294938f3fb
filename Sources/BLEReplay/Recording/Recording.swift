import BLEAnalysis
import BLECapture
import BLEProtocol

/// One HCI packet of a recording, copied out of the capture.
public struct RecordedPacket: Sendable {
    /// Frame number in the capture file (1-based), for reports.
    public var frame: Int
    /// Microseconds since the Unix epoch.
    public var timestamp: Int64
    /// True for host → controller (commands, host ACL), false for controller → host.
    public var fromHost: Bool
    public var packet: H4Packet

    public init(frame: Int, timestamp: Int64, fromHost: Bool, packet: H4Packet) {
        (self.frame, self.timestamp, self.fromHost, self.packet) = (frame, timestamp, fromHost, packet)
    }
}

/// The HCI packets of a capture that a replay or an emulation acts on, in file order.
///
/// Any format `CaptureFile` reads will do. Only one controller is replayed: with a BlueZ monitor
/// capture (several adapters) the first adapter that carries HCI packets is used. Frames that
/// cannot be replayed (cut by the capture, unknown direction, non-HCI records) are skipped and
/// counted in `notes`. The packets are copied: recordings for CI are sessions, not field logs.
public struct Recording: Sendable {
    public var path: String
    public var packets: [RecordedPacket]
    /// What was skipped and why, for the report.
    public var notes: [String]

    public init(path: String = "", packets: [RecordedPacket], notes: [String] = []) {
        (self.path, self.packets, self.notes) = (path, packets, notes)
    }

    /// Reads `path`.
    /// - Throws: `CaptureError` when the file is not a capture (exit code 2).
    public static func load(path: String) throws(CaptureError) -> Recording {
        let file = try CaptureFile(path: path)
        var packets: [RecordedPacket] = []
        var adapter: UInt16?
        var otherAdapters = 0, cut = 0, undirected = 0, unusable = 0
        let summary = file.read { frame in
            guard frame.kind.isHCI else { return }
            if adapter == nil { adapter = frame.adapter }
            guard frame.adapter == adapter else { otherAdapters += 1; return }
            guard frame.problem == nil, let type = frame.kind.hciPacketType else { unusable += 1; return }
            guard !frame.isCaptureTruncated else { cut += 1; return }
            let fromHost: Bool
            switch (frame.kind, frame.direction) {
            case (.command, _): fromHost = true
            case (.event, _): fromHost = false
            case (_, .sent): fromHost = true
            case (_, .received): fromHost = false
            default: undirected += 1; return
            }
            packets.append(RecordedPacket(frame: frame.number, timestamp: frame.timestamp, fromHost: fromHost,
                                          packet: H4Packet(type, Array(frame.payload))))
        }
        var notes: [String] = []
        if otherAdapters > 0 { notes.append("\(otherAdapters) packets of other adapters than hci\(adapter ?? 0) are not replayed") }
        if cut > 0 { notes.append("\(cut) packets cut by the capture (snap length) are not replayed") }
        if undirected > 0 { notes.append("\(undirected) data packets without a direction are not replayed") }
        if unusable > 0 { notes.append("\(unusable) unreadable HCI records are not replayed") }
        for issue in summary.issues { notes.append("capture: \(issue)") }
        return Recording(path: path, packets: packets, notes: notes)
    }
}
