/// Something a reader noticed about the file (not about one frame's protocol content): a record cut
/// off by the end of the file, a length field that cannot be believed, garbage after the header.
public struct CaptureIssue: Sendable, Equatable, CustomStringConvertible {
    public enum Kind: Sendable, Equatable {
        /// The file ends inside a record: `available` of `needed` bytes are present.
        case truncatedRecord(needed: Int, available: Int)
        /// A record header cannot be right (length beyond limits, beyond the file); reading stops.
        case corruptRecord(String)
        /// libpcap reported an error while reading.
        case readerError(String)
        /// The file shrank under the reader (a log still being written, truncated or rotated): its
        /// bytes from this file offset on were gone when read; reading stopped.
        case fileShrank(at: Int)
    }
    public var kind: Kind
    /// The number the record would have had.
    public var frameNumber: Int
    /// File offset of the record header.
    public var offset: Int

    public init(kind: Kind, frameNumber: Int, offset: Int) {
        (self.kind, self.frameNumber, self.offset) = (kind, frameNumber, offset)
    }

    public var description: String {
        switch kind {
        case let .truncatedRecord(needed, available):
            "frame \(frameNumber) at offset \(offset): file ends inside the record (\(available) of \(needed) bytes present)"
        case let .corruptRecord(why):
            "frame \(frameNumber) at offset \(offset): \(why); reading stopped"
        case let .readerError(why):
            "frame \(frameNumber) at offset \(offset): \(why)"
        case let .fileShrank(at):
            "frame \(frameNumber) at offset \(offset): the file shrank while it was read (still being written?): bytes from offset \(at) on are gone; reading stopped"
        }
    }
}

/// Why a file could not be read as a capture at all (exit code 2).
public struct CaptureError: Error, Sendable, CustomStringConvertible {
    public var path: String
    public var offset: Int?
    public var reason: String

    public init(path: String, offset: Int? = nil, reason: String) {
        (self.path, self.offset, self.reason) = (path, offset, reason)
    }

    public var description: String {
        if let offset { return "\(path): \(reason) (at byte offset \(offset))" }
        return "\(path): \(reason)"
    }
}

/// What one pass over a capture found, besides the frames themselves.
public struct ReadSummary: Sendable {
    /// Every complete record read, decoded or not.
    public var frames = 0
    /// The file ends inside a record.
    public var truncated = false
    public var issues: [CaptureIssue] = []
    public var firstTimestamp: Int64?
    public var lastTimestamp: Int64?

    public init() {}

    @inlinable
    mutating func noteTimestamp(_ t: Int64) {
        if firstTimestamp == nil { firstTimestamp = t }
        lastTimestamp = t
    }
}
