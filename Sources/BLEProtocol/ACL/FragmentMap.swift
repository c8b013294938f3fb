import BLEBytes

/// Where the bytes of a reassembled L2CAP PDU lie in the capture file: one segment per ACL
/// fragment that carried bytes, in PDU order (Core v5.4 Vol 4 Part E 5.4.2: a PDU's fragments are
/// contiguous in the PDU, not in the file — other packets lie between them).
///
/// The reader `L2CAPReassembler` delivers is contiguous, so its offsets (`base + position`) are
/// file offsets only for a PDU that came in one fragment. `fileOffset(_:)` and `fileError(_:)`
/// turn a reader offset into the file offset of that byte for any PDU.
///
/// A PDU in one fragment (nearly all of them) is one inline segment: no heap allocation. A
/// fragmented PDU shares the reassembler's segment list (reused from PDU to PDU); its length is
/// bounded by the PDU's bytes, since a fragment without data adds no segment.
public struct FragmentMap: Sendable, RandomAccessCollection {
    public struct Segment: Sendable, Equatable {
        /// Offset in the PDU (0 = first byte of the L2CAP basic header) of the segment's first byte.
        public var pduStart: Int
        /// File offset of that byte.
        public var fileOffset: Int
        /// Bytes of the PDU in this fragment.
        public var length: Int
        /// Frame number of the ACL packet that carried the fragment.
        public var frame: Int

        public init(pduStart: Int, fileOffset: Int, length: Int, frame: Int) {
            (self.pduStart, self.fileOffset, self.length, self.frame) = (pduStart, fileOffset, length, frame)
        }
    }

    /// The `base` of the delivered reader: reader offset of the PDU's first byte.
    public let readerBase: Int
    /// The segment of a one-fragment PDU (`list` empty).
    private let single: Segment
    /// All segments of a fragmented PDU.
    private let list: [Segment]

    /// A PDU carried whole by one fragment: reader offsets are file offsets.
    public init(single segment: Segment) {
        readerBase = segment.fileOffset
        single = segment
        list = []
    }

    /// A PDU reassembled from `segments` (in PDU order, the first at `pduStart` 0), delivered in a
    /// reader whose `base` is `readerBase`.
    public init(readerBase: Int, segments: [Segment]) {
        self.readerBase = readerBase
        single = segments.first ?? Segment(pduStart: 0, fileOffset: readerBase, length: 0, frame: 0)
        list = segments.count > 1 ? segments : []
    }

    /// True when the PDU came in more than one fragment (reader offsets are not file offsets).
    public var isFragmented: Bool { !list.isEmpty }

    public var startIndex: Int { 0 }
    public var endIndex: Int { list.isEmpty ? 1 : list.count }
    public subscript(i: Int) -> Segment { list.isEmpty ? single : list[i] }

    /// The file offset of the byte at `readerOffset` (an offset from the delivered reader, e.g. a
    /// `DecodeError`'s). An offset just past the PDU maps just past its last byte; one outside the
    /// PDU is returned unchanged.
    public func fileOffset(_ readerOffset: Int) -> Int {
        guard isFragmented else { return readerOffset }
        let p = readerOffset &- readerBase   // safe: offsets fit in Int
        guard p >= 0 else { return readerOffset }
        for s in list where p < s.pduStart &+ s.length { return s.fileOffset &+ (p &- s.pduStart) }
        guard let last = list.last, p == last.pduStart &+ last.length else { return readerOffset }
        return last.fileOffset &+ last.length
    }

    /// `error` with its offset made a file offset.
    public func fileError(_ error: DecodeError) -> DecodeError {
        guard isFragmented else { return error }
        var e = error
        e.offset = fileOffset(error.offset)
        return e
    }

    /// Makes the errors of `layers[from...]` (decoded from the delivered reader) name file offsets.
    public func fileErrors(_ layers: inout [Layer], from: Int = 0) {
        guard isFragmented, from < layers.count else { return }
        for i in from ..< layers.count {
            if let e = layers[i].error { layers[i].error = fileError(e) }
        }
    }
}
