import BLEBytes

/// Where the bytes of a reassembled L2CAP PDU lie in the capture file: one segment per ACL
/// fragment that carried bytes, in PDU order (Core v5.4 Vol 4 Part E 5.4.2: a PDU's fragments are
/// contiguous in the PDU, not in the file — other packets lie between them).
///
/// The reader `L2CAPReassembler` delivers is contiguous, so its offsets (`base + position`) are
/// file offsets only for a PDU that came in one fragment. `fileOffset(_:)` and `fileError(_:)`
/// turn a reader offset into the file offset of that byte for any PDU.
///
/// A PDU in one fragment (nearly all of them) is one inline segment. A fragmented PDU's segments
/// are the reassembler's list (reused from PDU to PDU, bounded by the PDU's bytes: a fragment
/// without data adds no segment), seen through a pointer: the map is trivially copied (no
/// reference counting on the analysis's hot path) and, like the `ByteReader` it comes with, is
/// valid only inside the delivery; copy out (`Array(map)`) what must outlive it.
public struct FragmentMap: RandomAccessCollection {
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

    /// The `base` of the delivered reader: reader offset of the PDU's first byte (for a PDU in one
    /// fragment, its file offset).
    public let readerBase: Int
    /// Length and frame of a one-fragment PDU (`list` empty); kept this small because every PDU
    /// the analysis decodes carries a map.
    private let singleLength: Int
    private let singleFrame: Int
    /// All segments of a fragmented PDU (empty for one fragment); valid during the delivery only.
    private let list: UnsafeBufferPointer<Segment>

    /// A PDU carried whole by one fragment: reader offsets are file offsets.
    public init(single segment: Segment) {
        readerBase = segment.fileOffset
        singleLength = segment.length
        singleFrame = segment.frame
        list = UnsafeBufferPointer(start: nil, count: 0)
    }

    /// A PDU reassembled from `segments` (in PDU order, the first at `pduStart` 0), delivered in a
    /// reader whose `base` is `readerBase`. The map reads `segments` in place: use it only while
    /// that memory lives.
    public init(readerBase: Int, segments: UnsafeBufferPointer<Segment>) {
        self.readerBase = readerBase
        let first = segments.first ?? Segment(pduStart: 0, fileOffset: readerBase, length: 0, frame: 0)
        singleLength = first.length
        singleFrame = first.frame
        list = segments
    }

    /// True when the PDU was reassembled (reader offsets are not file offsets).
    public var isFragmented: Bool { !list.isEmpty }

    public var startIndex: Int { 0 }
    public var endIndex: Int { list.isEmpty ? 1 : list.count }
    public subscript(i: Int) -> Segment {
        list.isEmpty ? Segment(pduStart: 0, fileOffset: readerBase, length: singleLength, frame: singleFrame) : list[i]
    }

    /// The file offset of the byte at `readerOffset` (an offset from the delivered reader, e.g. a
    /// `DecodeError`'s). An offset just past the PDU maps just past its last byte; one outside the
    /// PDU is returned unchanged.
    public func fileOffset(_ readerOffset: Int) -> Int {
        guard isFragmented else { return readerOffset }
        let p = readerOffset &- readerBase   // safe: offsets fit in Int
        guard p >= 0 else { return readerOffset }
        for s in list where p < s.pduStart &+ s.length { return s.fileOffset &+ (p &- s.pduStart) }
        let last = list[list.count &- 1]   // safe: fragmented, so not empty
        guard p == last.pduStart &+ last.length else { return readerOffset }
        return last.fileOffset &+ last.length
    }

    /// `error` with its offset made a file offset.
    public func fileError(_ error: DecodeError) -> DecodeError {
        guard isFragmented else { return error }
        var e = error
        e.offset = fileOffset(error.offset)
        return e
    }

    /// Makes the errors of `layers[from...]` (decoded from the delivered reader) name file offsets:
    /// each layer's error and the `.problem` notes among its fields (a GATT value or K-frame that
    /// does not decode).
    public func fileErrors(_ layers: inout [Layer], from: Int = 0) {
        guard isFragmented, from < layers.count else { return }
        for i in from ..< layers.count {
            if let e = layers[i].error { layers[i].error = fileError(e) }
            fileProblems(&layers[i].fields)
        }
    }

    private func fileProblems(_ fields: inout [Field]) {
        for j in fields.indices {
            let f = fields[j]
            switch f.value {
            case let .problem(e): fields[j] = Field(f.id, f.name, .problem(fileError(e)))
            case var .group(children):
                fileProblems(&children)
                fields[j] = Field(f.id, f.name, .group(children))
            case var .list(items):
                for k in items.indices { fileProblems(&items[k]) }
                fields[j] = Field(f.id, f.name, .list(items))
            default: break
            }
        }
    }
}
