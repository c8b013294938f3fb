import BLEProtocol

/// A connection attempt (LE Create Connection, LE Extended Create Connection, Create Connection)
/// and how it ended. Controllers allow one pending LE attempt at a time.
public struct ConnectionAttempt: Sendable {
    public enum Outcome: Sendable, Equatable {
        case pending
        case connected(connection: Int)
        /// Command Status or Connection Complete with an error.
        case failed(HCIStatus)
        /// Ended by Create Connection Cancel (Connection Complete with 0x02/0x44).
        case cancelled
        /// A new attempt started while this one was pending: it ended with no event in the capture.
        case superseded
    }
    public var adapter: UInt16
    public var isLE: Bool
    public var peerAddress: BDAddr?
    public var peerAddressType: LEAddressType?
    public var frame: Int
    public var time: Int64
    public var statusFrame: Int?
    public var cancelFrame: Int?
    public var endFrame: Int?
    public var endTime: Int64?
    public var outcome: Outcome = .pending
    /// The attempt of the same transport that was still pending when this one was issued (a second
    /// create while one is pending: controllers answer Command Disallowed, Core v5.4 Vol 4 Part E 7.8.12).
    public var issuedWhilePending: Int?
    /// Connecting through the filter accept list (background auto-connect) rather than to one address.
    public var usesFilterAcceptList: Bool { peerAddress == nil }
}
