import BLEBytes
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A capture file opened for one streaming pass: the format is detected from the bytes, gzip is
/// inflated transparently, and `read` hands every record to the caller as a `Frame` view.
///
/// ```swift
/// let capture = try CaptureFile(path: "btsnoop_hci.log")
/// let summary = capture.read { frame in … }
/// ```
public final class CaptureFile {
    public let path: String
    public private(set) var info: CaptureInfo

    private enum Source {
        case btsnoop(MappedFile, BTSnoopReader)
        case packetLogger(MappedFile, PacketLoggerReader)
        case pcap(PcapReader)
    }
    private let source: Source
    /// The inflated copy of a gzip input, removed when the capture is closed.
    private let temporaryPath: String?

    /// Opens `path` and detects its format.
    /// - Throws: `CaptureError` when the file cannot be opened or is not a capture we know (exit code 2).
    public init(path: String) throws(CaptureError) {
        self.path = path
        // `archive.zip#member` selects one log inside a field-log container (FieldLogs).
        let (filePath, member) = FieldLogs.splitMemberSelector(path)
        var readPath = filePath
        var compressed = false
        var temporary: String? = nil
        var mapped = try Self.map(filePath)
        if mapped.withBytes({ FormatSniffer.guess($0) }) == .gzip, !FieldLogs.gzipHoldsArchive(filePath) {
            let inflated = try Gzip.inflateToTemporaryFile(filePath)
            temporary = inflated
            readPath = inflated
            compressed = true
            do { mapped = try Self.map(inflated) } catch { unlink(inflated); throw error }
        }
        // Field logs (bugreport zip, sysdiagnose tar.gz, btsnooz text): the chosen log is extracted.
        var fieldLog: FieldLogOrigin? = nil
        if member != nil || [.unknown, .gzip].contains(mapped.withBytes({ FormatSniffer.guess($0) })) {
            do throws(CaptureError) {
                let source = readPath
                if let (extracted, origin) = try mapped.withBytes({ (b) throws(CaptureError) in
                    try FieldLogs.resolve(readPath: source, bytes: b, displayPath: path, member: member) }) {
                    if let temporary { unlink(temporary) }
                    temporary = extracted
                    readPath = extracted
                    fieldLog = origin
                    mapped = try Self.map(extracted)
                    if mapped.withBytes({ FormatSniffer.guess($0) }) == .gzip {   // a `.pklg.gz` member
                        let inflated = try Gzip.inflateToTemporaryFile(extracted)
                        unlink(extracted)
                        temporary = inflated
                        readPath = inflated
                        mapped = try Self.map(inflated)
                    }
                }
            } catch {
                if let temporary { unlink(temporary) }
                throw error
            }
        }
        temporaryPath = temporary
        let size = mapped.size
        do throws(CaptureError) {
            switch mapped.withBytes({ FormatSniffer.guess($0) }) {
            case .btsnoop:
                let datalink = try mapped.withBytes { (b) throws(CaptureError) in try BTSnoopReader.readHeader(b, path: path) }
                let known = [Datalink.btsnoopH1, Datalink.btsnoopH4, Datalink.btsnoopMonitor].contains(datalink)
                info = CaptureInfo(format: .btsnoop, datalink: datalink, compressed: compressed,
                                   notDecodedReason: known ? nil : "btsnoop datalink \(datalink): not decoded", fileSize: size)
                source = .btsnoop(mapped, BTSnoopReader(datalink: datalink))
            case let .packetlogger(bigEndian):
                info = CaptureInfo(format: .packetlogger, datalink: Datalink.packetLogger, compressed: compressed,
                                   bigEndian: bigEndian, fileSize: size)
                source = .packetLogger(mapped, PacketLoggerReader(bigEndian: bigEndian))
            case .pcap, .pcapng:
                let format: CaptureFormat = mapped.withBytes({ FormatSniffer.guess($0) }) == .pcap ? .pcap : .pcapng
                let reader = try PcapReader(path: readPath, format: format)
                let dlt = reader.datalink
                let reason = Datalink.notDecoded(dlt)   // air link types: BLEAnalysis/Air
                info = CaptureInfo(format: format, datalink: dlt, compressed: compressed, notDecodedReason: reason, fileSize: size)
                source = .pcap(reader)
            case .gzip:
                throw CaptureError(path: path, offset: 0, reason: "gzip inside gzip is not supported")
            case .unknown:
                if size == 0 { throw CaptureError(path: path, offset: 0, reason: "empty file: not a capture") }
                throw CaptureError(path: path, offset: 0,
                                   reason: "not a capture: no btsnoop, pcap, pcapng or PacketLogger header")
            }
        } catch {
            if let temporary { unlink(temporary) }
            throw error
        }
        info.fieldLog = fieldLog
    }

    deinit {
        if let temporaryPath { unlink(temporaryPath) }
    }

    /// True when `head` (a file's first bytes, 4 KiB is enough) starts like something `init(path:)`
    /// reads: a capture (btsnoop, pcap, pcapng, PacketLogger), gzip, or a field-log container (zip,
    /// tar, a text with a btsnooz summary in it). For directory walks: from the bytes, never the name.
    public static func recognises(_ head: UnsafeRawBufferPointer) -> Bool {
        FormatSniffer.guess(head) != .unknown || FieldLogs.container(head) != nil
    }

    private static func map(_ path: String) throws(CaptureError) -> MappedFile {
        do { return try MappedFile(path: path) } catch { throw CaptureError(path: path, reason: error.reason) }
    }

    /// Reads every record once, in file order. Frames are views valid only inside `body`.
    public func read(_ body: (inout Frame) -> Void) -> ReadSummary {
        switch source {
        case let .btsnoop(file, reader):
            return file.withBytes { reader.read($0, mapped: file, body) }
        case let .packetLogger(file, reader):
            return file.withBytes { reader.read($0, mapped: file, body) }
        case let .pcap(reader):
            return reader.read(body)
        }
    }
}
