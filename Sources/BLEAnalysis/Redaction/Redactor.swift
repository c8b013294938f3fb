import BLEBytes
import BLECapture
import BLEProtocol
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What `bleanalyze redact` may keep.
public struct RedactionOptions: Sendable {
    /// Keep device names and log text (PacketLogger syslog, BlueZ user logging).
    public var keepNames: Bool
    /// Replace every ATT value the analysis does not read (app data) by a number of the same length
    /// (`ValueMap`; `ATTValueSpans` says which are read: GATT discovery, CCCDs, the Device Name).
    public var dropValues: Bool
    public init(keepNames: Bool = false, dropValues: Bool = false) {
        self.keepNames = keepNames
        self.dropValues = dropValues
    }
}

/// Printable text (6 characters or more) left in the copy's ATT values: app data the redaction
/// cannot judge (a serial number, an account name), for the user to read before sharing.
public struct KeptString: Sendable {
    public var text: String
    /// The attribute whose value holds it (nil: a Read Multiple response).
    public var handle: UInt16?
    /// Its UUID and name from the rebuilt GATT table, when discovery showed it.
    public var uuid: String?
    public var attribute: String?
    /// The first frame that carried it (the PDU's first fragment), and how many values held it.
    public var firstFrame: Int
    public var occurrences: Int
}

/// What a redaction did.
public struct RedactionSummary: Sendable {
    public var format: CaptureFormat
    public var datalink: UInt32
    /// Frames read (and written: the copy has exactly these records).
    public var frames: Int
    /// The input was gzip-compressed; the output is not.
    public var inputWasCompressed: Bool
    /// Distinct addresses replaced, and address fields rewritten.
    public var distinctAddresses = 0
    public var addressFields = 0
    /// Key fields zeroed (link keys, LTKs, IRKs, CSRKs, SMP values, passkeys, OOB data).
    public var keyFields = 0
    /// Name fields replaced (HCI Local/Remote Name, AD Local Name, GATT Device Name).
    public var nameFields = 0
    public var distinctNames = 0
    /// Identifiers taken from replaced names (a serial number inside `NOVA_O38240700268`) replaced
    /// in application data (ATT values, advertising data).
    public var identifierFields = 0
    /// Air captures: access addresses and CRC initial values replaced (distinct, and fields).
    public var distinctAccessAddresses = 0
    public var distinctCRCInits = 0
    public var linkFields = 0
    /// ATT values left in the copy (app data), and replaced by zeros (`dropValues`).
    public var keptValues = 0
    public var droppedValues = 0
    /// Printable text in the kept ATT values, in order of first appearance (at most 1000).
    public var keptStrings: [KeptString] = []
    /// Log records whose text was replaced, and BlueZ mgmt records whose parameters were zeroed.
    public var logRecords = 0
    public var controlRecords = 0
    /// Frames with at least one byte changed.
    public var framesChanged = 0
    /// Bytes after the last readable record written as zeros (a cut or corrupt file).
    public var zeroedTailBytes = 0
    public var issues: [CaptureIssue] = []
}

/// Redacts a capture: a copy of the same format in which Bluetooth addresses are replaced
/// consistently, key material is zeroed and names and log text are replaced, with every other byte,
/// every timestamp and every record kept, so the copy gives the same findings.
///
/// Two passes over the input: the first finds edits that land in frames before the one that
/// reveals them (an L2CAP PDU reassembled from several ACL fragments), the second writes the copy.
public enum Redactor {
    /// - Throws: `CaptureError` when the input cannot be read or is a kind of capture whose private
    ///   data we cannot find (unknown datalinks, field-log containers), or the output cannot be
    ///   written. Nothing is left at `output` on error.
    @discardableResult
    public static func redact(input: String, output: String, options: RedactionOptions = RedactionOptions()) throws(CaptureError) -> RedactionSummary {
        let first = try CaptureFile(path: input)
        let info = first.info
        if let reason = info.notDecodedReason {
            throw CaptureError(path: input, reason: "\(reason); redaction supports HCI and LE Link Layer captures only")
        }
        guard !samePath(input, output) else {
            throw CaptureError(path: output, reason: "the output would overwrite the input")
        }
        // Pass 1: edits for earlier frames, and every address and name (so both passes use the same
        // fakes). Its session model is dropped before the second pass.
        let (deferred, addressMap, nameMap, aaMap, crcMap, valueMap) = { () -> ([Int: [RedactionEdit]], AddressMap, NameMap, AccessAddressMap, CRCInitMap, ValueMap) in
            let collector = RedactionScanner(options: options, collectDeferred: true)
            _ = first.read { frame in _ = collector.scan(frame) }
            return (collector.deferred, collector.addresses, collector.names, collector.accessAddresses, collector.crcInits, collector.values)
        }()

        // Pass 2: the copy.
        let rewriter = try CaptureRewriter(source: input, output: output)
        guard rewriter.format == info.format else {
            throw CaptureError(path: input, reason: "the input is not a plain \(info.format.rawValue) file (a field-log container?): extract the capture first")
        }
        let second = try CaptureFile(path: input)
        // The maps of the first pass: the same fakes in both passes, and every address known up front.
        let scanner = RedactionScanner(options: options, addresses: addressMap, names: nameMap, accessAddresses: aaMap, crcInits: crcMap,
                                       values: valueMap, collectDeferred: false, sweep: true)
        let air = AirCopyFixer()
        var summary = RedactionSummary(format: info.format, datalink: info.datalink, frames: 0, inputWasCompressed: info.compressed)
        var failure: CaptureError? = nil
        var edited: [UInt8] = []
        let read = second.read { frame in
            guard failure == nil else { return }
            var edits = scanner.scan(frame)
            if let more = deferred[frame.number] {
                // Deferred edits name file offsets (see `RedactionScanner.deferred`).
                edits += more.map { RedactionEdit(offset: $0.offset - frame.payloadOffset, bytes: $0.bytes, what: $0.what) }
            }
            do throws(CaptureError) {
                guard !edits.isEmpty || frame.kind == .airLE else { try rewriter.pass(frame); return }
                edited.removeAll(keepingCapacity: true)
                edited.append(contentsOf: frame.payload)
                for e in edits where e.offset >= 0 && e.bytes.count <= edited.count - e.offset {
                    edited.replaceSubrange(e.offset ..< e.offset + e.bytes.count, with: e.bytes)
                    switch e.what {
                    case .address: summary.addressFields += 1
                    case .key: summary.keyFields += 1
                    case .name: summary.nameFields += 1
                    case .identifier: summary.identifierFields += 1
                    case .log: summary.logRecords += 1
                    case .control: summary.controlRecords += 1
                    case .link: summary.linkFields += 1
                    case .value: break
                    }
                }
                if frame.kind == .airLE {
                    air.fix(frame, scanner.scannedAir, edited: &edited, crcInitDelta: scanner.crcInitDelta)
                }
                if edited.elementsEqual(frame.payload) { try rewriter.pass(frame); return }
                summary.framesChanged += 1
                try rewriter.replace(frame, with: edited)
            } catch {
                failure = error
            }
        }
        if let failure { throw failure }
        try rewriter.finish(readToEnd: read.issues.isEmpty && !read.truncated)
        summary.frames = read.frames
        summary.issues = read.issues
        summary.distinctAddresses = scanner.addresses.count
        summary.distinctNames = scanner.names.count
        summary.distinctAccessAddresses = scanner.accessAddresses.count
        summary.distinctCRCInits = scanner.crcInits.count
        summary.keptValues = scanner.keptValues
        summary.droppedValues = scanner.droppedValues
        summary.keptStrings = scanner.keptStrings
        summary.zeroedTailBytes = rewriter.zeroedTailBytes
        return summary
    }

    /// True when both paths name the same file (or the output is the input through a link).
    static func samePath(_ a: String, _ b: String) -> Bool {
        if a == b { return true }
        guard let ra = realPath(a), let rb = realPath(b) else { return false }
        return ra == rb
    }

    static func realPath(_ p: String) -> String? {
        guard let r = realpath(p, nil) else { return nil }
        defer { free(r) }
        return String(cString: r)
    }
}
