import BLEBytes
import CPcap
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Reads pcap (µs and ns) and pcapng (any `if_tsresol`) through libpcap's `pcap_open_offline`, for
/// the Bluetooth link types: 187 H4, 201 H4 with a 4-byte big-endian direction word, 254 Linux
/// monitor (u16 adapter, u16 opcode, big-endian). Air-capture link types are counted, not decoded.
final class PcapReader {
    private let handle: OpaquePointer
    let datalink: UInt32
    let format: CaptureFormat

    /// The corresponding C function is `pcap_open_offline_with_tstamp_precision` (microseconds).
    init(path: String, format: CaptureFormat) throws(CaptureError) {
        var errbuf = [CChar](repeating: 0, count: Int(PCAP_ERRBUF_SIZE) + 1)
        guard let h = pcap_open_offline_with_tstamp_precision(path, UInt32(PCAP_TSTAMP_PRECISION_MICRO), &errbuf) else {
            throw CaptureError(path: path, offset: 0, reason: "libpcap: " + String(cString: errbuf))
        }
        handle = h
        datalink = UInt32(bitPattern: pcap_datalink(h))
        self.format = format
    }

    deinit { pcap_close(handle) }

    private var fileOffset: Int {
        guard let f = pcap_file(handle) else { return -1 }
        return ftell(f)
    }

    func read(_ body: (inout Frame) -> Void) -> ReadSummary {
        var summary = ReadSummary()
        var header: UnsafeMutablePointer<pcap_pkthdr>? = nil
        var data: UnsafePointer<UInt8>? = nil
        while true {
            let number = summary.frames + 1
            let recordOffset = fileOffset
            let rc = pcap_next_ex(handle, &header, &data)
            if rc == PCAP_ERROR_BREAK || rc == -2 { break }   // -2: end of file
            if rc != 1 {
                let message = String(cString: pcap_geterr(handle))
                let truncated = message.contains("truncated") || message.contains("cut short") || message.contains("short")
                summary.truncated = summary.truncated || truncated
                summary.issues.append(CaptureIssue(kind: truncated ? .truncatedRecord(needed: 0, available: 0) : .readerError(message),
                                                   frameNumber: number, offset: recordOffset))
                if truncated || summary.issues.count > 1 { break }
                continue
            }
            guard let header, let data else { break }
            let caplen = Int(header.pointee.caplen)
            let origlen = Int(header.pointee.len)
            // Wrapping arithmetic on garbage seconds, then clamped (CaptureLimits.clampTimestamp).
            let timestamp = CaptureLimits.clampTimestamp(Int64(header.pointee.ts.tv_sec) &* 1_000_000 &+ Int64(header.pointee.ts.tv_usec))
            let bytes = UnsafeRawBufferPointer(start: data, count: caplen)
            // pcap: 16-byte record header; pcapng: the EPB header is 28 bytes.
            let payloadBase = recordOffset + (format == .pcap ? 16 : 28)
            var frame = Self.frame(datalink: datalink, number: number, timestamp: timestamp, recordOffset: recordOffset,
                                   payloadBase: payloadBase, bytes: bytes, originalLength: origlen)
            summary.noteTimestamp(timestamp)
            summary.frames = number
            body(&frame)
        }
        return summary
    }

    /// The frame a pcap record of link type `datalink` holds (`bytes`: the record's captured data,
    /// at file offset `payloadBase`); also what `CaptureStream` makes of the records it parses.
    static func frame(datalink: UInt32, number: Int, timestamp: Int64, recordOffset: Int, payloadBase: Int,
                      bytes: UnsafeRawBufferPointer, originalLength: Int) -> Frame {
        func raw(_ kind: FrameKind, problem: RecordProblem? = nil) -> Frame {
            Frame(number: number, timestamp: timestamp, direction: .unknown, kind: kind, adapter: 0,
                  recordOffset: recordOffset, payloadOffset: payloadBase, payload: bytes,
                  originalLength: originalLength, rawType: 0, problem: problem)
        }
        switch datalink {
        case Datalink.pcapH4:
            guard let indicator = bytes.first else { return raw(.unknown, problem: .empty) }
            let kind = H4.kind(indicator)
            let direction: Direction = kind == .command ? .sent : kind == .event ? .received : .unknown
            return H4.frame(indicator: indicator, number: number, timestamp: timestamp, direction: direction, adapter: 0,
                            recordOffset: recordOffset, payloadOffset: payloadBase + 1,
                            payload: UnsafeRawBufferPointer(rebasing: bytes[1...]),
                            originalLength: max(0, originalLength - 1))
        case Datalink.pcapH4WithPHDR:
            guard bytes.count >= 5 else { return raw(.unknown, problem: .empty) }
            // Direction word: bit 0 set = received (incoming, controller → host).
            let direction: Direction = bytes.loadBE32(at: 0) & 1 != 0 ? .received : .sent
            return H4.frame(indicator: bytes[4], number: number, timestamp: timestamp, direction: direction, adapter: 0,
                            recordOffset: recordOffset, payloadOffset: payloadBase + 5,
                            payload: UnsafeRawBufferPointer(rebasing: bytes[5...]),
                            originalLength: max(0, originalLength - 5))
        case Datalink.pcapMonitor:
            guard bytes.count >= 4 else { return raw(.unknown, problem: .empty) }
            // DLT 254 pseudo-header: big-endian adapter index, then opcode.
            let header = ByteReader(bytes)
            guard let adapter = header.getU16be(at: 0), let opcode = header.getU16be(at: 2) else { return raw(.unknown, problem: .empty) }
            return Monitor.frame(opcode: opcode, adapter: adapter, number: number, timestamp: timestamp,
                                 recordOffset: recordOffset, payloadOffset: payloadBase + 4,
                                 payload: UnsafeRawBufferPointer(rebasing: bytes[4...]),
                                 originalLength: max(0, originalLength - 4))
        default:
            guard Datalink.isAirCapture(datalink) else { return raw(.unknown) }
            // Air captures: the link type travels in `rawType` so the link-layer decoder knows the header.
            var frame = raw(.airLE)
            frame.rawType = UInt16(truncatingIfNeeded: datalink)
            return frame
        }
    }
}
