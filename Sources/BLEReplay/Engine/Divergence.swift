import BLEProtocol

/// A place where the live run differs from the recording.
public struct Divergence: Sendable {
    public enum Kind: String, Sendable {
        /// The expected packet came, with different content (`differences`).
        case mismatch
        /// The expected packet did not come within the timeout.
        case missing
        /// A live packet the recording does not have (rule `unexpected`).
        case unexpected
        /// The peer (emulate: the host) went away with recorded packets still to come.
        case endedEarly = "ended-early"
        /// Recorded packets that could not come because an earlier step failed (their connection
        /// never came up): not sent, not waited for.
        case skipped
    }

    public var kind: Kind
    /// The recorded frame (the first packet of the unit); nil for unexpected packets.
    public var frame: Int?
    /// The step it belongs to: 0 before the first recorded host packet, n after the n-th.
    public var step: Int
    /// True when the packet in question goes host → controller.
    public var fromHost: Bool
    public var message: String
    public var differences: [Difference]
    /// The recorded unit and the live one, when there are.
    public var expected: LinkUnit?
    public var actual: LinkUnit?
    /// Set where the class is not the packet's (`DivergenceClass.of`).
    public var classOverride: DivergenceClass? = nil
    /// The recorded connection it belongs to (1-based, `ConnectionOutcome.index`), if any.
    public var connection: Int? = nil
}

/// One recorded connection of a replay: did it come up live, how much of it was replayed.
public struct ConnectionOutcome: Sendable {
    /// 1-based, in the recording's order of successful connection complete events (and of the
    /// first packets of links already open when the log starts).
    public var index: Int
    public var recordedHandle: UInt16
    public var liveHandle: UInt16?
    public var frame: Int
    public var peer: String?
    /// The connection came up live (its connection complete matched, with success).
    public var replayed: Bool
    /// Recorded packets on it (its connection complete, its ACL, its events) the run acts on, and
    /// how many were sent or received.
    public var steps: Int
    public var stepsReplayed: Int
    public var skipped: Int
    public var divergences: Int
    public var behaviourDivergences: Int
    /// Wall time from its connection complete's turn to its last packet.
    public var seconds: Double
    /// The link was open when the log starts (no connection complete recorded; `frame` is its
    /// first packet): the run cannot make it.
    public var openBeforeLog = false
}

/// One recorded host packet (a command, a host L2CAP PDU): the JUnit test cases of a run.
public struct ReplayStep: Sendable {
    /// 0 is the start (what the controller sends before any host packet).
    public var index: Int
    public var frame: Int?
    public var title: String

    public init(index: Int, frame: Int?, title: String) { (self.index, self.frame, self.title) = (index, frame, title) }
}

/// The result of `replay` or `emulate`.
public struct ReplayOutcome: Sendable {
    public var recording: String
    /// The transport's name: `tcp:127.0.0.1:6402`.
    public var peer: String
    public var steps: [ReplayStep]
    public var divergences: [Divergence]
    /// Recorded packets sent, or received and matched (with or without differences).
    public var replayed: Int
    /// Recorded packets the run acts on (sent or checked).
    public var total: Int
    /// Recorded packets not compared under the rules (flow control, vendor, link-layer events).
    public var notCompared: Int
    /// Set when the transport failed: the run stopped there (exit code 2).
    public var error: TransportError?
    public var notes: [String]
    public var seconds: Double
    /// The step the run was at when it ended (where a transport failure happened).
    public var lastStep = 0
    /// The recorded connections (replay).
    public var connections: [ConnectionOutcome] = []
    /// `--strict environment`: environment divergences fail the run too.
    public var strictEnvironment = false

    public init(recording: String, peer: String, steps: [ReplayStep], divergences: [Divergence], replayed: Int, total: Int,
                notCompared: Int, error: TransportError?, notes: [String], seconds: Double) {
        (self.recording, self.peer, self.steps, self.divergences) = (recording, peer, steps, divergences)
        (self.replayed, self.total, self.notCompared, self.error, self.notes, self.seconds) = (replayed, total, notCompared, error, notes, seconds)
    }

    /// 0 no behaviour divergence, 1 behaviour divergences (or any, with `strictEnvironment`), 2
    /// transport failure.
    public var exitCode: Int32 {
        if error != nil { return 2 }
        return divergences.contains { strictEnvironment || $0.divergenceClass == .behaviour } ? 1 : 0
    }
}

extension LinkUnit {
    /// The unit decoded for display: the HCI layer, or L2CAP and the layer above it.
    public var layers: [Layer] { UnitView(self).layers }
    /// A one-line title: `HCI Event: Command Complete (0x0e) for Reset`.
    public var title: String { UnitView(self).title }
}
