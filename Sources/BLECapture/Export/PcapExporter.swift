import BLEBytes
import CPcap
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Writes HCI frames as a pcap file of link type 201 (`BLUETOOTH_HCI_H4_WITH_PHDR`: a 4-byte
/// big-endian direction word, bit 0 set = received, then the H4 packet) through libpcap, for
/// Wireshark and tshark. The corresponding C functions are `pcap_open_dead_with_tstamp_precision`,
/// `pcap_dump_open`, `pcap_dump` and `pcap_dump_close`.
public final class PcapExporter {
    /// LINKTYPE_BLUETOOTH_HCI_H4_WITH_PHDR (https://www.tcpdump.org/linktypes.html).
    public static let linkType = Int32(Datalink.pcapH4WithPHDR)
    /// Snap length: the longest HCI record (`CaptureLimits.maxHCIRecord`) plus the direction word.
    public static let snapLength = Int32(CaptureLimits.maxHCIRecord + 4)

    private let pcap: OpaquePointer
    private let dumper: OpaquePointer
    private let path: String
    private var buffer: [UInt8] = []
    private var closed = false
    private let keepUnknownH4: Bool
    /// Frames written.
    public private(set) var written = 0

    /// Creates `path` (microsecond timestamps: what the readers deliver).
    /// - Parameter keepUnknownH4: the source is H4 (btsnoop 1002, pcap 187/201): a record with an
    ///   unknown packet indicator is written with it, so every record of the source is exported.
    public init(path: String, keepUnknownH4: Bool = false) throws(CaptureError) {
        self.path = path
        self.keepUnknownH4 = keepUnknownH4
        guard let p = pcap_open_dead_with_tstamp_precision(Self.linkType, Self.snapLength, UInt32(PCAP_TSTAMP_PRECISION_MICRO)) else {
            throw CaptureError(path: path, reason: "libpcap: cannot create a pcap handle")
        }
        guard let d = pcap_dump_open(p, path) else {
            let message = String(cString: pcap_geterr(p))
            pcap_close(p)
            throw CaptureError(path: path, reason: "libpcap: " + message)
        }
        pcap = p
        dumper = d
        buffer.reserveCapacity(Int(Self.snapLength))
    }

    deinit { close() }

    /// The H4 packet indicator for an HCI frame, or the record's own type code for a record the
    /// reader kept raw (an unknown indicator); nil for log records, which link type 201 cannot carry.
    public func indicator(_ frame: Frame) -> UInt8? { Self.indicator(frame, keepUnknownH4: keepUnknownH4) }

    /// The same for any writer of link type 201 (pcap here, pcapng in `CaptureExport.toPcapng`).
    static func indicator(_ frame: Frame, keepUnknownH4: Bool) -> UInt8? {
        if frame.kind.isHCI { return BTSnoopWriter.h4Indicator(frame.kind) }
        // An unknown H4 indicator from an H4 source: keep it, so the frame count is the same.
        if keepUnknownH4, frame.kind == .unknown, case .unknownType? = frame.problem, let code = UInt8(exactly: frame.rawType) { return code }
        return nil
    }

    /// Link type 201's direction bit: received, or (direction unknown) an event.
    static func received(_ frame: Frame) -> Bool {
        switch frame.direction {
        case .received: true
        case .sent: false
        case .unknown: frame.kind == .event
        }
    }

    /// Writes one frame; returns false (and writes nothing) for a record link type 201 cannot carry.
    @discardableResult
    public func append(_ frame: Frame) -> Bool {
        guard let indicator = indicator(frame) else { return false }
        let received = Self.received(frame)
        buffer.removeAll(keepingCapacity: true)
        buffer += [0, 0, 0, received ? 1 : 0, indicator]
        buffer.append(contentsOf: frame.payload)
        var header = pcap_pkthdr()
        var seconds = frame.timestamp / 1_000_000
        var micros = frame.timestamp % 1_000_000
        if micros < 0 { seconds -= 1; micros += 1_000_000 }
        header.ts = timeval(tv_sec: .init(truncatingIfNeeded: seconds), tv_usec: .init(truncatingIfNeeded: micros))
        header.caplen = UInt32(min(buffer.count, Int(Self.snapLength)))
        header.len = UInt32(clamping: max(buffer.count, frame.originalLength + 5))
        buffer.withUnsafeBytes { b in
            pcap_dump(UnsafeMutableRawPointer(dumper).assumingMemoryBound(to: UInt8.self), &header,
                      b.baseAddress!.assumingMemoryBound(to: UInt8.self))   // safe: buffer holds at least 5 bytes
        }
        written += 1
        return true
    }

    /// Flushes and closes the file.
    public func finish() throws(CaptureError) {
        guard !closed else { return }
        let flushed = pcap_dump_flush(dumper) == 0
        close()
        if !flushed { throw CaptureError(path: path, reason: "libpcap: cannot write the output") }
    }

    private func close() {
        guard !closed else { return }
        closed = true
        pcap_dump_close(dumper)
        pcap_close(pcap)
    }
}
