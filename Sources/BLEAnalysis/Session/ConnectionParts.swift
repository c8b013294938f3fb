import BLEProtocol

// The parts of a `Connection`'s state, each written by one layer of the model (issue 26): the
// connection holds one of each, so who may change what is in the type, and a reader finds a fact
// by what it is about.

/// When the link began and ended, as the HCI events (or their absence) tell it: written by
/// `SessionModel+HCI` (and by `SessionModel+ACL` for sessions the capture did not see set up).
public struct ConnectionLifecycle: Sendable {
    public internal(set) var attemptFrame: Int?
    public internal(set) var attemptTime: Int64?
    public internal(set) var completeFrame: Int?
    public internal(set) var completeTime: Int64?
    /// True when the capture shows traffic but no connection set-up (it began mid-connection).
    public internal(set) var inferred = false
    public internal(set) var disconnectFrame: Int?
    public internal(set) var disconnectTime: Int64?
    public internal(set) var disconnectReason: HCIStatus?
    /// Ended with Connection Failed to be Established (0x3E): the how-manieth time with this peer
    /// address in the capture (1, 2, …), counted at its Disconnection Complete; 0 otherwise.
    public internal(set) var establishFailureOrdinal = 0
    /// The host asked for the disconnect (HCI Disconnect seen), with this reason.
    public internal(set) var localDisconnectReason: HCIStatus?
}

/// What an LE air capture's sniffer missed of the link: written by `AirCaptureAdapter`.
public struct SnifferLoss: Sendable {
    /// The last frame where the sniffer lost packets of this link (a response may be among them).
    public internal(set) var captureLossFrame = 0
    /// …and the first such frame.
    public internal(set) var firstCaptureLossFrame = 0
    /// How the end of a link that was lost without a disconnect on air is known.
    public internal(set) var lossInferred: String?
}

/// The link layer's parameters in force (LE Connection Complete, Connection Update Complete, Data
/// Length Change, PHY Update Complete): written by `SessionModel+HCI` (and the air adapter).
public struct LinkState: Sendable {
    /// Connection interval (1.25 ms units), peripheral latency (events), supervision timeout (10 ms units).
    public internal(set) var intervalUnits: UInt16 = 0
    public internal(set) var latency: UInt16 = 0
    public internal(set) var timeoutUnits: UInt16 = 0
    public internal(set) var parameterUpdates = 0
    public internal(set) var dataLength: (tx: UInt16, rx: UInt16)?
    public internal(set) var phy: (tx: UInt8, rx: UInt8)?
}

/// Encryption of the link (Encryption Change, Key Refresh): written by `SessionModel+HCI`.
public struct EncryptionState: Sendable {
    public internal(set) var encrypted = false
    /// Encryption was on at some point of the connection.
    public internal(set) var everEncrypted = false
    public internal(set) var encryptionFailures = 0
    /// The smallest encryption key size the capture shows for the link (Read Encryption Key Size's
    /// Command Complete, Core v5.4 Vol 4 Part E 7.5.7, or Encryption Change v2, 7.7.8.1), where first shown.
    public internal(set) var keySize: (size: UInt8, frame: Int, time: Int64)?
    /// BR/EDR: the cipher of the last Encryption Change on (E0 or AES-CCM, 7.7.8).
    public internal(set) var cipher: LinkCipher?
    /// BR/EDR: the first Encryption Change that turned E0 on (frame).
    public internal(set) var e0Frame: Int?
    /// BR/EDR: the link key made by pairing on this connection (Link Key Notification, 7.7.24), or, for
    /// a reconnection with a stored key, the type the capture showed for this peer earlier (`linkKeyFromEarlier`).
    public internal(set) var linkKey: LinkKeyType?
    public internal(set) var linkKeyFrame: Int?
    public internal(set) var linkKeyFromEarlier = false
    /// BR/EDR Secure Simple Pairing on this connection: the host's and the peer's IO capabilities
    /// (IO Capability Request Reply, IO Capability Response) and the association model they select.
    public internal(set) var hostCapabilities: SSPCapabilities?
    public internal(set) var peerCapabilities: SSPCapabilities?
    public internal(set) var method: SMP.PairingMethod?
    /// The host answered User Confirmation / Passkey Request with a negative reply (frame).
    public internal(set) var declinedFrame: Int?
    /// BR/EDR: the peer's Secure Connections support as its LMP feature pages show it (Read Remote Extended
    /// Features Complete, Core v5.4 Vol 4 Part E 7.7.34): host on page 1, controller on page 2, with the frame.
    public internal(set) var peerSecureConnections: (host: (Bool, Int)?, controller: (Bool, Int)?) = (nil, nil)

    mutating func keySizeShown(_ size: UInt8, frame: Int, time: Int64) {
        guard size > 0 else { return }   // 0: not reported (Apple's controllers, LE v2)
        if keySize.map({ size < $0.size }) ?? true { keySize = (size, frame, time) }
    }
}

/// ACL traffic both ways: written by `SessionModel+ACL`.
public struct TrafficCounts: Sendable {
    public internal(set) var aclSent = 0
    public internal(set) var aclReceived = 0
    public internal(set) var bytesSent = 0
    public internal(set) var bytesReceived = 0
    public internal(set) var firstDataTime: Int64?
    public internal(set) var lastDataTime: Int64?
    public internal(set) var lastReceivedFrame: Int?
    public internal(set) var lastReceivedTime: Int64?
    /// The packet received before the last one (`radio.scan-contention`: was the peer sending).
    public internal(set) var previousReceivedTime: Int64?
    public internal(set) var lastSentFrame: Int?
    public internal(set) var lastSentTime: Int64?
}

/// The host's ACL packets in the controller (Number Of Completed Packets, Core v5.4 Vol 4 Part E
/// 7.7.19): written by `FlowControl` through `SessionModel+ACL`/`+HCI`.
public struct ControllerBuffers: Sendable {
    /// Host ACL packets in the controller not yet reported completed.
    public internal(set) var buffersInFlight = 0
    /// Host packets the controller reported completed on this link.
    public internal(set) var packetsCompleted = 0
    /// The oldest of those packets first (bounded), for `flow.credits-lost`.
    var unacknowledged = SentQueue()
    /// The last Number Of Completed Packets that completed packets of this link.
    public internal(set) var lastCompleted: LinkForensics.Mark?
    /// The longest stretch in which the controller held host packets of this link and neither
    /// completed one nor delivered a packet from the peer (`LinkStall`), nil below half a second.
    public internal(set) var longestStall: LinkStall?
    /// The stall the link ended in: host packets the controller never completed before the end.
    public internal(set) var stallAtEnd: LinkStall?
}
