import BLEProtocol

/// How `replay` and `emulate` run.
public struct ReplayOptions: Sendable {
    public enum Timing: String, Sendable, CaseIterable {
        /// Send as soon as flow control and the expected answers allow.
        case fast
        /// Keep the recorded gaps between sent packets (divided by `speed`).
        case original
    }

    /// Seconds to wait for each expected packet.
    public var timeout: Double = 5
    public var timing: Timing = .fast
    /// `original` timing runs this many times faster than recorded.
    public var speed: Double = 1
    public var rules = RuleSet()
    /// `--map-address OLD=NEW`: recorded peer address → live.
    public var addressMap: [BDAddr: BDAddr] = [:]
    /// Recorded peer address → the live peer's address type (`replay --peer` with a twin that
    /// could not take a recorded public address).
    public var addressTypes: [BDAddr: UInt8] = [:]
    /// How far ahead (in units) a live packet may match an expectation not reached yet (a
    /// notification that comes before the host packet recorded ahead of it).
    public var lookahead = 256
    /// When set, only advertising reports from these (recorded) advertisers are expected; the
    /// others are not compared. `replay --peer` sets it to the twin's device: the rest of the
    /// recorded radio neighbourhood is not there to advertise.
    public var advertisers: Set<BDAddr>?
    /// `--passkey N` (0–999999): the passkey a twin uses in a Passkey Entry pairing with a live
    /// central (Core v5.4 Vol 3 Part H 2.3.5.3), instead of the one the recording shows.
    public var passkey: UInt32?
    /// `replay --peer` with a twin of a link open before the log starts: its recorded handle and
    /// the (recorded) address the twin stands at. The run makes that connection itself.
    public var twinOpenBeforeLog: (handle: UInt16, address: BDAddr)?

    public init() {}

    /// Parses `OLD=NEW` into `addressMap`.
    /// - Returns: false when the text is not two addresses.
    public mutating func mapAddress(_ text: String) -> Bool {
        guard let (old, new) = LinkMaps.parseAddressMapping(text) else { return false }
        addressMap[old] = new
        return true
    }
}

/// Waits between sent packets for `--timing original`. Gaps count from the recording's first
/// packet, which is taken to happen when the run starts: a recording that begins with controller
/// packets keeps the pause before the host's first packet.
struct Pacer {
    let timing: ReplayOptions.Timing
    let speed: Double
    private var last: (recorded: Int64, wall: Double)?

    init(_ options: ReplayOptions, origin: Int64?) {
        (timing, speed) = (options.timing, max(options.speed, 0.001))
        if let origin { last = (origin, Clock.now()) }
    }

    /// Restarts the clock (emulate: when the host's first packet arrived).
    mutating func start(origin: Int64?) {
        if let origin { last = (origin, Clock.now()) }
    }

    /// When the packet recorded at `timestamp` should go: now for `fast`.
    func due(_ timestamp: Int64) -> Double {
        guard timing == .original, let last else { return Clock.now() }
        return last.wall + Double(max(0, timestamp - last.recorded)) / 1e6 / speed
    }

    mutating func sent(_ timestamp: Int64) { last = (timestamp, Clock.now()) }
}
