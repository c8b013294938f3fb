import BLEBytes
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Writes a copy of a capture, byte for byte, in which chosen frames' bytes are replaced by edited
/// bytes of the same length: the container (btsnoop header and datalink, PacketLogger byte order,
/// pcap link type and µs/ns magic, pcapng blocks and `if_tsresol`), record headers, timestamps and
/// frame count are the input's own. A gzip input is written uncompressed.
///
/// Frames must be given in file order (as `CaptureFile.read` delivers them). Each replaced frame is
/// located in the source and checked byte for byte before it is patched; a frame that cannot be
/// located stops the rewrite with an error rather than leave its bytes unredacted.
///
/// What cannot be read cannot be redacted: when the reader stopped early (a cut or corrupt record),
/// the record header where it stopped is kept, so the copy reports the same issue at the same
/// offset, and the bytes after it are written as zeros.
///
/// The output is written to a temporary file beside `output` and renamed into place by `finish`.
public final class CaptureRewriter {
    public let format: CaptureFormat
    /// The input was gzip-compressed; the copy is not.
    public let inputWasCompressed: Bool
    /// Bytes after the last readable record that were zeroed (see the type's documentation).
    public private(set) var zeroedTailBytes = 0

    private let source: MappedFile
    private let inflatedPath: String?
    private let outputPath: String
    private let partialPath: String
    private var fd: Int32
    /// Source bytes up to here are written.
    private var written = 0
    /// End of the last frame's bytes (where an unreadable tail starts).
    private var lastFrameEnd: Int
    private var pcapng = PcapngBlocks()
    private var pcapngPacketsSeen = 0
    private var finished = false

    /// Opens `sourcePath` (inflating gzip) and creates the output.
    /// - Throws: `CaptureError` when the source is not a plain capture of a known format (a
    ///   field-log container must be extracted first) or the output cannot be created.
    public init(source sourcePath: String, output: String) throws(CaptureError) {
        var inflated: String? = nil
        var mapped: MappedFile
        do { mapped = try MappedFile(path: sourcePath) } catch { throw CaptureError(path: sourcePath, reason: error.reason) }
        if mapped.withBytes({ FormatSniffer.guess($0) }) == .gzip {
            let p = try Gzip.inflateToTemporaryFile(sourcePath)
            inflated = p
            do { mapped = try MappedFile(path: p) } catch { unlink(p); throw CaptureError(path: sourcePath, reason: error.reason) }
        }
        let guess = mapped.withBytes { FormatSniffer.guess($0) }
        let format: CaptureFormat
        switch guess {
        case .btsnoop: format = .btsnoop
        case .pcap: format = .pcap
        case .pcapng: format = .pcapng
        case .packetlogger: format = .packetlogger
        case .gzip, .unknown:
            if let inflated { unlink(inflated) }
            throw CaptureError(path: sourcePath, offset: 0,
                               reason: "not a plain btsnoop, pcap, pcapng or PacketLogger file (extract a capture from a field-log archive first)")
        }
        self.format = format
        self.source = mapped
        self.inflatedPath = inflated
        self.inputWasCompressed = inflated != nil
        self.outputPath = output
        self.partialPath = output + ".partial-\(getpid())"
        self.lastFrameEnd = Self.headerSize(format, mapped)
        fd = open(partialPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        guard fd >= 0 else {
            if let inflated { unlink(inflated) }
            throw CaptureError(path: output, reason: "cannot create the output: " + String(cString: strerror(errno)))
        }
    }

    deinit {
        if fd >= 0 { close(fd) }
        if !finished { unlink(partialPath) }
        if let inflatedPath { unlink(inflatedPath) }
    }

    /// Bytes before the first record: the btsnoop file header, the pcap global header.
    static func headerSize(_ format: CaptureFormat, _ file: MappedFile) -> Int {
        switch format {
        case .btsnoop: min(16, file.size)
        case .pcap: min(24, file.size)
        case .pcapng, .packetlogger: 0
        }
    }

    /// Notes a frame that keeps its bytes (so the end of the readable records is known).
    public func pass(_ frame: Frame) throws(CaptureError) {
        if format == .pcapng {
            _ = try locate(frame)
        } else {
            lastFrameEnd = max(lastFrameEnd, frame.payloadOffset + frame.payload.count)
        }
    }

    /// Writes the source up to `frame`, then `edited` in place of the frame's bytes.
    public func replace(_ frame: Frame, with edited: [UInt8]) throws(CaptureError) {
        var failure: CaptureError? = nil
        edited.withUnsafeBytes { b in
            do throws(CaptureError) { try replace(frame, with: b) } catch { failure = error }
        }
        if let failure { throw failure }
    }

    /// Writes the source up to `frame`, then `edited` in place of the frame's bytes.
    /// - Precondition: `edited.count == frame.payload.count` (checked: throws otherwise).
    public func replace(_ frame: Frame, with edited: UnsafeRawBufferPointer) throws(CaptureError) {
        guard edited.count == frame.payload.count else {
            throw CaptureError(path: outputPath, reason: "frame \(frame.number): edited bytes change the length")
        }
        let at = try locate(frame)
        guard at >= written else {
            throw CaptureError(path: outputPath, offset: at, reason: "frame \(frame.number) lies before bytes already written")
        }
        try copySource(upTo: at)
        try writeAll(edited)
        written = at + edited.count
    }

    /// Copies the rest and moves the output into place.
    /// - Parameter readToEnd: the reader consumed the whole file without an issue. When false, the
    ///   bytes after the last readable record are zeroed, except the header of the record where
    ///   reading stopped.
    public func finish(readToEnd: Bool) throws(CaptureError) {
        let size = source.size
        if readToEnd {
            try copySource(upTo: size)
        } else {
            let keep = min(size, max(written, lastFrameEnd + Self.recordHeaderSize(format)))
            try copySource(upTo: keep)
            let zeros = [UInt8](repeating: 0, count: 1 << 16)
            var left = size - written
            zeroedTailBytes = max(0, left)
            while left > 0 {
                let n = min(left, zeros.count)
                try writeAll(zeros[0..<n])
                left -= n
            }
            written = size
        }
        guard fsync(fd) == 0 || errno == EINVAL, close(fd) == 0 else {
            fd = -1
            throw CaptureError(path: outputPath, reason: "cannot write the output")
        }
        fd = -1
        guard rename(partialPath, outputPath) == 0 else {
            throw CaptureError(path: outputPath, reason: "cannot move the output into place")
        }
        finished = true
    }

    static func recordHeaderSize(_ format: CaptureFormat) -> Int {
        switch format {
        case .btsnoop: 24
        case .packetlogger: 13
        case .pcap: 16
        case .pcapng: 8
        }
    }

    /// The file offset of the frame's bytes in the source, checked against them.
    private func locate(_ frame: Frame) throws(CaptureError) -> Int {
        let n = frame.payload.count
        var offset: Int
        switch format {
        case .btsnoop, .packetlogger, .pcap:
            offset = frame.payloadOffset
        case .pcapng:
            // The link-type header the reader skipped (H4 indicator, direction word, monitor header).
            let skip = frame.payloadOffset - frame.recordOffset - 28
            // libpcap returns packet blocks in order; one it rejected has no frame, so skip blocks
            // until the bytes match (the frame count tells which block should be next).
            var found: Int? = nil
            while found == nil, let packet = source.withBytes({ pcapng.nextPacket($0) }) {
                pcapngPacketsSeen += 1
                let candidate = packet.dataOffset + skip
                if skip >= 0, candidate + n <= packet.dataOffset + packet.capturedLength, matches(frame, at: candidate) {
                    found = candidate
                }
            }
            guard let found else {
                throw CaptureError(path: outputPath, reason: "frame \(frame.number): its packet block was not found in the pcapng file")
            }
            offset = found
        }
        guard offset >= 0, n <= source.size - offset, matches(frame, at: offset) else {
            throw CaptureError(path: outputPath, offset: frame.recordOffset,
                               reason: "frame \(frame.number): its bytes were not found at offset \(offset) of the input")
        }
        lastFrameEnd = max(lastFrameEnd, offset + n)
        return offset
    }

    private func matches(_ frame: Frame, at offset: Int) -> Bool {
        let n = frame.payload.count
        guard offset >= 0, n <= source.size - offset else { return false }
        if n == 0 { return true }
        return source.withBytes { b in memcmp(b.baseAddress! + offset, frame.payload.baseAddress!, n) == 0 }   // safe: n > 0, bounds checked
    }

    private func copySource(upTo end: Int) throws(CaptureError) {
        guard end > written else { return }
        let start = written
        try source.withBytes { (b) throws(CaptureError) in try writeAll(UnsafeRawBufferPointer(rebasing: b[start ..< end])) }
        written = end
    }

    private func writeAll(_ bytes: ArraySlice<UInt8>) throws(CaptureError) {
        var failure: CaptureError? = nil
        bytes.withUnsafeBytes { b in
            do throws(CaptureError) { try writeAll(b) } catch { failure = error }
        }
        if let failure { throw failure }
    }

    /// The corresponding C function is `write`.
    private func writeAll(_ bytes: UnsafeRawBufferPointer) throws(CaptureError) {
        var offset = 0
        while offset < bytes.count {
            let n = write(fd, bytes.baseAddress! + offset, bytes.count - offset)   // safe: offset < count, non-empty
            if n < 0, errno == EINTR { continue }
            guard n > 0 else { throw CaptureError(path: outputPath, reason: "cannot write the output") }
            offset += n
        }
    }
}
