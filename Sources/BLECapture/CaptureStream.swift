import BLEBytes
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A capture read as its bytes arrive (a pipe, a file still being written, a socket): the format is
/// detected from the first bytes, and every whole record is handed on as a `Frame`, as
/// `CaptureFile.read` hands the records of the same bytes saved to a file — same numbers, times,
/// kinds and file offsets (counted from the stream's first byte), same `ReadSummary` at the end.
/// Memory: the bytes of the record being assembled and one chunk (a record is at most
/// `CaptureLimits.maxRecord`).
///
/// ```swift
/// let stream = CaptureStream(name: "(standard input)")
/// while let n = stream.receive({ read(fd, $0.baseAddress, $0.count) }), n > 0 {
///     try stream.drain { frame in analyzer.consume(frame) }
/// }
/// let summary = stream.finish { frame in analyzer.consume(frame) }
/// ```
///
/// btsnoop, PacketLogger, pcap and pcapng; not gzip or field-log containers (inflate or extract first).
public final class CaptureStream {
    /// How errors name the stream.
    public let name: String
    /// Known once the header has arrived (`fileSize`: the bytes received so far).
    public var info: CaptureInfo? {
        guard var info = detected else { return nil }
        info.fileSize = received
        return info
    }
    public private(set) var summary = ReadSummary()
    /// Every byte received so far.
    public private(set) var received = 0

    private enum Parser {
        case undetected
        case btsnoop(BTSnoopReader)
        case packetLogger(PacketLoggerReader)
        case pcap(PcapRecords)
        case pcapng(PcapNGRecords)
        /// A record header could not be believed: what follows is counted, not read.
        case stopped(needs: Int, at: Int)
    }
    private var parser = Parser.undetected
    private var detected: CaptureInfo?
    /// `buffer[0]` is the stream's byte `base`; bytes before `start` are parsed.
    private var buffer: UnsafeMutableRawBufferPointer
    private var count = 0
    private var start = 0
    private var base = 0
    /// Bytes PacketLogger's byte-order guess looks at before it is made (it has no magic number).
    static let sniffBytes = 64 * 1024
    static let chunk = 256 * 1024

    public init(name: String) {
        self.name = name
        buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: Self.chunk * 2, alignment: 8)
    }

    deinit { buffer.deallocate() }

    /// Lets `fill` write up to one chunk of new bytes at the end of the buffer; `fill` returns how
    /// many it wrote (0: end of stream, negative: an error, both passed back untouched).
    public func receive(_ fill: (UnsafeMutableRawBufferPointer) -> Int) -> Int {
        makeRoom(Self.chunk)
        let n = fill(UnsafeMutableRawBufferPointer(rebasing: buffer[count ..< count + Self.chunk]))
        if n > 0 {
            count += n
            received += n
        }
        return n
    }

    /// Copies `bytes` in (for sources that already hold them).
    public func receive(copying bytes: UnsafeRawBufferPointer) {
        var done = 0
        while done < bytes.count {
            let n = min(Self.chunk, bytes.count - done)
            _ = receive { space in
                space.copyMemory(from: UnsafeRawBufferPointer(rebasing: bytes[done ..< done + n]))
                return n
            }
            done += n
        }
    }

    /// Hands every whole record received so far to `body`, in order.
    /// - Throws: `CaptureError` when the first bytes are not a capture this reads.
    public func drain(_ body: (inout Frame) -> Void) throws(CaptureError) {
        if case .undetected = parser {
            guard try detect(final: false) else { return }
        }
        parse(body)
    }

    /// The stream ended: what `drain` can still hand on, then the summary (a record cut off by the
    /// end is reported as `CaptureFile.read` reports it).
    public func finish(_ body: (inout Frame) -> Void) throws(CaptureError) -> ReadSummary {
        if case .undetected = parser {
            guard try detect(final: true) else { return summary }
        }
        parse(body)
        let number = summary.frames + 1
        let remaining = count - start
        switch parser {
        case let .stopped(needs, at):
            summary.truncated = needs > received - at
        case .pcap, .pcapng:
            if remaining > 0 {   // as libpcap says it: "truncated dump file"
                summary.truncated = true
                summary.issues.append(CaptureIssue(kind: .truncatedRecord(needed: 0, available: 0), frameNumber: number, offset: base + start))
            }
        case .btsnoop, .packetLogger:
            if remaining > 0, case let .short(needed, available) = step(number: number) {
                summary.truncated = true
                summary.issues.append(CaptureIssue(kind: .truncatedRecord(needed: needed, available: available),
                                                   frameNumber: number, offset: base + start))
            }
        case .undetected:
            break
        }
        return summary
    }

    // MARK: - Parsing

    private var bytes: UnsafeRawBufferPointer { UnsafeRawBufferPointer(rebasing: buffer[0 ..< count]) }

    @inline(__always)
    private func step(number: Int) -> RecordStep {
        switch parser {
        case let .btsnoop(r): r.record(bytes, at: start, base: base, number: number)
        case let .packetLogger(r): r.record(bytes, at: start, base: base, number: number)
        case let .pcap(r): r.record(bytes, at: start, base: base, number: number)
        case .pcapng: pcapngStep(number: number)
        case .undetected, .stopped: .short(needed: 0, available: 0)
        }
    }

    private func pcapngStep(number: Int) -> RecordStep {
        guard case var .pcapng(r) = parser else { return .short(needed: 0, available: 0) }
        let result = r.record(bytes, at: start, base: base, number: number)
        parser = .pcapng(r)
        return result
    }

    private func parse(_ body: (inout Frame) -> Void) {
        while start < count {
            let number = summary.frames + 1
            switch step(number: number) {
            case let .frame(f, next):
                var frame = f
                summary.noteTimestamp(frame.timestamp)
                summary.frames = number
                start = next
                body(&frame)
            case .short:
                return
            case let .corrupt(why, needs):
                summary.issues.append(CaptureIssue(kind: .corruptRecord(why), frameNumber: number, offset: base + start))
                parser = .stopped(needs: needs, at: base + start)
                start = count
                return
            }
        }
    }

    /// Decides the format from the first bytes; false while too few have come.
    private func detect(final: Bool) throws(CaptureError) -> Bool {
        let head = UnsafeRawBufferPointer(rebasing: buffer[start ..< count])
        if head.isEmpty, final { throw CaptureError(path: name, offset: 0, reason: "empty: no capture came") }
        let guess = FormatSniffer.guess(head)
        switch guess {
        case .gzip:
            throw CaptureError(path: name, offset: 0, reason: "gzip-compressed: inflate it first (zcat FILE | bleanalyze live -)")
        case .btsnoop:
            guard head.count >= BTSnoopReader.headerSize || final else { return false }
            let datalink = try BTSnoopReader.readHeader(head, path: name)
            let known = [Datalink.btsnoopH1, Datalink.btsnoopH4, Datalink.btsnoopMonitor].contains(datalink)
            detected = CaptureInfo(format: .btsnoop, datalink: datalink, notDecodedReason: known ? nil : "btsnoop datalink \(datalink): not decoded",
                                   fileSize: 0)
            parser = .btsnoop(BTSnoopReader(datalink: datalink))
            start = BTSnoopReader.headerSize
        case .pcap:
            guard head.count >= PcapRecords.headerSize else {
                if final { throw CaptureError(path: name, offset: head.count, reason: "pcap header cut short (\(head.count) of 24 bytes)") }
                return false
            }
            let r = PcapRecords(header: head)
            detected = CaptureInfo(format: .pcap, datalink: r.datalink, notDecodedReason: Datalink.notDecoded(r.datalink), fileSize: 0)
            parser = .pcap(r)
            start = PcapRecords.headerSize
        case .pcapng:
            var r = PcapNGRecords()
            switch r.header(head) {
            case let .ready(next):
                detected = CaptureInfo(format: .pcapng, datalink: r.datalink, notDecodedReason: Datalink.notDecoded(r.datalink), fileSize: 0)
                parser = .pcapng(r)
                start = next
            case .more:
                if final { throw CaptureError(path: name, offset: head.count, reason: "pcapng: the stream ended before its first interface description") }
                return false
            case let .bad(reason, offset):
                throw CaptureError(path: name, offset: offset, reason: "pcapng: " + reason)
            }
        case let .packetlogger(bigEndian):
            guard head.count >= Self.sniffBytes || final else { return false }
            detected = CaptureInfo(format: .packetlogger, datalink: Datalink.packetLogger, bigEndian: bigEndian, fileSize: 0)
            parser = .packetLogger(PacketLoggerReader(bigEndian: bigEndian))
        case .unknown:
            guard head.count >= Self.sniffBytes || final else { return false }
            throw CaptureError(path: name, offset: 0, reason: "not a capture: no btsnoop, pcap, pcapng or PacketLogger header")
        }
        return true
    }

    /// Keeps the unparsed bytes, moved to the front, and room for `more` after them.
    private func makeRoom(_ more: Int) {
        if start > 0 {
            let kept = count - start
            if kept > 0, let to = buffer.baseAddress {
                memmove(to, to + start, kept)
            }
            base += start
            count = kept
            start = 0
        }
        if buffer.count - count < more {
            let grown = UnsafeMutableRawBufferPointer.allocate(byteCount: max(buffer.count * 2, count + more), alignment: 8)
            grown.copyMemory(from: UnsafeRawBufferPointer(rebasing: buffer[0 ..< count]))
            buffer.deallocate()
            buffer = grown
        }
    }
}

/// Classic pcap records (the tcpdump format): a 24-byte header with the byte order in its magic
/// number, then per record u32 seconds, u32 micro- (or nano-)seconds, u32 captured and u32 original
/// length. Times are read as libpcap reads them for `PcapReader` (microseconds, nanoseconds cut).
struct PcapRecords {
    static let headerSize = 24
    static let recordHeaderSize = 16
    let bigEndian: Bool
    let nanoseconds: Bool
    let datalink: UInt32

    init(header: UnsafeRawBufferPointer) {
        let magic = header.loadBE32(at: 0)
        bigEndian = magic == 0xa1b2c3d4 || magic == 0xa1b23c4d
        nanoseconds = magic == 0xa1b23c4d || magic == 0x4d3cb2a1
        let link = bigEndian ? header.loadBE32(at: 20) : header.loadLE32(at: 20)
        datalink = link & 0x03FF_FFFF   // the upper bits carry FCS information (pcap-linktype)
    }

    @inline(__always)
    func record(_ bytes: UnsafeRawBufferPointer, at offset: Int, base: Int, number: Int) -> RecordStep {
        let remaining = bytes.count - offset
        guard remaining >= Self.recordHeaderSize else { return .short(needed: Self.recordHeaderSize, available: remaining) }
        func u32(_ at: Int) -> UInt32 { bigEndian ? bytes.loadBE32(at: offset + at) : bytes.loadLE32(at: offset + at) }
        let captured = Int(u32(8))
        guard captured <= CaptureLimits.maxRecord else {
            return .corrupt("captured length \(captured) exceeds any record", needs: Self.recordHeaderSize + captured)
        }
        guard captured <= remaining - Self.recordHeaderSize else { return .short(needed: Self.recordHeaderSize + captured, available: remaining) }
        let fraction = Int64(u32(4))
        let timestamp = CaptureLimits.clampTimestamp(Int64(u32(0)) &* 1_000_000 &+ (nanoseconds ? fraction / 1000 : fraction))
        let dataOffset = offset + Self.recordHeaderSize
        let data = UnsafeRawBufferPointer(rebasing: bytes[dataOffset ..< dataOffset + captured])
        let frame = PcapReader.frame(datalink: datalink, number: number, timestamp: timestamp, recordOffset: base + offset,
                                     payloadBase: base + dataOffset, bytes: data, originalLength: Int(u32(12)))
        return .frame(frame, next: dataOffset + captured)
    }
}

/// pcapng blocks (draft-ietf-opsawg-pcapng): u32 type, u32 total length, body, u32 total length,
/// in the byte order the Section Header Block's magic gives. Enhanced (6), Simple (3) and obsolete
/// Packet (2) blocks carry packets; Interface Description Blocks (1) give the link type and the
/// time resolution (`if_tsresol`, option 9) and offset (`if_tsoffset`, 14); the rest is skipped.
/// As `PcapReader` (libpcap) numbers them, a packet's record offset is where the reading of the
/// blocks before it began (after the previous packet), its payload 28 bytes further.
struct PcapNGRecords {
    struct Interface { var linktype: UInt32; var units: Int64 = 1_000_000; var offsetSeconds: Int64 = 0; var snaplen: Int }
    enum Header { case ready(next: Int), more, bad(String, Int) }
    private(set) var bigEndian = false
    private(set) var interfaces: [Interface] = []
    var datalink: UInt32 { interfaces.first?.linktype ?? 0 }

    private func u32(_ b: UnsafeRawBufferPointer, _ at: Int) -> UInt32 { bigEndian ? b.loadBE32(at: at) : b.loadLE32(at: at) }
    private func u16(_ b: UnsafeRawBufferPointer, _ at: Int) -> UInt16 {
        let r = ByteReader(b)
        return (bigEndian ? r.getU16be(at: at) : r.getU16le(at: at)) ?? 0
    }

    /// Reads the Section Header Block and the blocks up to the first Interface Description, as
    /// libpcap does when it opens the file.
    mutating func header(_ b: UnsafeRawBufferPointer) -> Header {
        guard b.count >= 12 else { return .more }
        let magic = b.loadBE32(at: 8)
        guard magic == 0x1A2B3C4D || magic == 0x4D3C2B1A else { return .bad("byte-order magic 0x\(String(magic, radix: 16)) is not 0x1a2b3c4d", 8) }
        bigEndian = magic == 0x1A2B3C4D
        var offset = 0
        while true {
            guard b.count - offset >= 12 else { return .more }
            let type = u32(b, offset), length = Int(u32(b, offset + 4))
            guard length >= 12, length % 4 == 0, length <= CaptureLimits.maxRecord else { return .bad("block length \(length) is impossible", offset + 4) }
            guard b.count - offset >= length else { return .more }
            if type == 1 { interface(b, offset, length) }
            if [2, 3, 6].contains(type) { return .bad("a packet block before any interface description", offset) }
            offset += length
            if type == 1 { return .ready(next: offset) }
        }
    }

    private mutating func interface(_ b: UnsafeRawBufferPointer, _ offset: Int, _ length: Int) {
        var i = Interface(linktype: UInt32(u16(b, offset + 8)), snaplen: Int(u32(b, offset + 12)))
        var o = offset + 16
        let end = offset + length - 4
        while o + 4 <= end {
            let code = u16(b, o), len = Int(u16(b, o + 2))
            if code == 0 || o + 4 + len > end { break }
            if code == 9, len >= 1 {
                let v = b[o + 4]
                let exponent = Int64(v & 0x7F)
                if exponent < 63 {
                    var units: Int64 = 1
                    for _ in 0 ..< exponent { units = v & 0x80 != 0 ? units * 2 : units.multipliedReportingOverflow(by: 10).partialValue }
                    if units > 0 { i.units = units }
                }
            }
            if code == 14, len >= 8 {
                i.offsetSeconds = Int64(bitPattern: bigEndian ? b.loadBE64(at: o + 4) : b.loadLE64(at: o + 4))
            }
            o += 4 + (len + 3) & ~3
        }
        interfaces.append(i)
    }

    /// The next packet from `offset`, past the other blocks before it. What those blocks tell (an
    /// interface, a new section) is kept only once the packet has come: a block cut short is read
    /// again with the bytes that complete it.
    mutating func record(_ b: UnsafeRawBufferPointer, at offset: Int, base: Int, number: Int) -> RecordStep {
        var state = self
        let step = state.advance(b, at: offset, base: base, number: number)
        if case .frame = step { self = state }
        return step
    }

    private mutating func advance(_ b: UnsafeRawBufferPointer, at offset: Int, base: Int, number: Int) -> RecordStep {
        var o = offset
        while true {
            let remaining = b.count - o
            guard remaining >= 12 else { return .short(needed: 12, available: remaining) }
            let type = u32(b, o), length = Int(u32(b, o + 4))
            guard length >= 12, length <= CaptureLimits.maxRecord else {
                return .corrupt("block length \(length) is impossible", needs: o - offset + max(length, 12))
            }
            guard length <= remaining else { return .short(needed: length, available: remaining) }
            switch type {
            case 1:
                interface(b, o, length)
            case 2, 3, 6:
                let recordOffset = base + offset
                guard let frame = packet(b, o, length, type: type, number: number, recordOffset: recordOffset) else { break }
                return .frame(frame, next: o + length)
            case 0x0A0D0D0A:
                let magic = b.loadBE32(at: o + 8)
                bigEndian = magic == 0x1A2B3C4D
                interfaces = []
            default:
                break
            }
            o += length
        }
    }

    private func packet(_ b: UnsafeRawBufferPointer, _ o: Int, _ length: Int, type: UInt32, number: Int,
                        recordOffset: Int) -> Frame? {
        let interfaceID: Int, high: UInt32, low: UInt32, captured: Int, original: Int, data: Int
        switch type {
        case 6:
            guard length >= 32 else { return nil }
            (interfaceID, high, low) = (Int(u32(b, o + 8)), u32(b, o + 12), u32(b, o + 16))
            (captured, original, data) = (Int(u32(b, o + 20)), Int(u32(b, o + 24)), o + 28)
        case 2:
            guard length >= 32 else { return nil }
            (interfaceID, high, low) = (Int(u16(b, o + 8)), u32(b, o + 12), u32(b, o + 16))
            (captured, original, data) = (Int(u32(b, o + 20)), Int(u32(b, o + 24)), o + 28)
        default:
            guard length >= 16 else { return nil }
            original = Int(u32(b, o + 8))
            (interfaceID, high, low, data) = (0, 0, 0, o + 12)
            captured = min(original, length - 16, interfaces.first.map { $0.snaplen > 0 ? $0.snaplen : original } ?? original)
        }
        guard interfaceID < interfaces.count, captured >= 0, data + captured <= o + length else { return nil }
        let i = interfaces[interfaceID]
        let t = Int64(bitPattern: UInt64(high) << 32 | UInt64(low))
        let seconds = t / i.units, fraction = t % i.units
        let micros = i.units == 1_000_000 ? fraction
            : i.units > 1_000_000 && i.units % 1_000_000 == 0 ? fraction / (i.units / 1_000_000)
            : fraction.multipliedReportingOverflow(by: 1_000_000).partialValue / i.units
        let timestamp = CaptureLimits.clampTimestamp((seconds &+ i.offsetSeconds) &* 1_000_000 &+ micros)
        let bytes = UnsafeRawBufferPointer(rebasing: b[data ..< data + captured])
        let frame = PcapReader.frame(datalink: i.linktype, number: number, timestamp: timestamp, recordOffset: recordOffset,
                                     payloadBase: recordOffset + 28, bytes: bytes, originalLength: original)
        return frame
    }
}
