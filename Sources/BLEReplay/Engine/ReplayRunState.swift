import BLEProtocol

// The state a replay run keeps besides its script (`PlayedScript`), link maps and flow control,
// grouped by what it is about (ReplayEngine holds one of each).

/// Where a replay run is in the script, and the packets it counted (`ReplayOutcome`'s replayed,
/// total and not compared).
struct ReplayProgress {
    /// The unit being worked on: a live packet that comes early is looked for after it.
    var cursor = 0
    /// The host units sent or skipped so far: the step the run is at.
    var step = 0
    /// An expected unit has matched live. Until then whatever arrives is stale (an earlier
    /// session's) and ignored.
    var firstMatched = false
    /// Packets sent, or received as expected.
    var replayed = 0
    /// Packets the run expected: each host packet it sent, each controller packet when its turn
    /// came (one in flight only when it came), each packet of a link that did not come up.
    var total = 0
    /// Packets neither played nor compared (the rules, devices not there, in flight and not come).
    var notCompared = 0
}

/// What a replay awaits from the live controller: the expected units reached and not yet
/// matched, and which of them may not come at all.
struct Awaited {
    /// Expected units reached and not yet matched, in recorded order.
    var pending: [Int] = []
    /// Sightings still awaited, per pending advertising unit (rule `advertising`).
    var sightings: [Int: Set<Sighting>] = [:]
    /// Expected units whose coming is timing (advertising reports recorded between a scan
    /// disable command and the next enable, the recorded controller's power-on events, data the
    /// disconnection cut, …): matched if they come, otherwise not compared, never `missing`, and
    /// never awaited beyond the other expected units of the same step. A controller may still
    /// deliver reports it had queued before it handles a scan disable (Core v5.4 Vol 4 Part E
    /// 7.8.11: scanning stops when the command completes).
    var inFlight: Set<Int> = []
    /// The host has sent LE Set (Extended) Scan Enable with Enable = 0 and not re-enabled since.
    var scanStopped = false

    /// Forgets the pending units that are no longer pending (matched, missing, skipped).
    mutating func dropSettled(_ state: [ReplayEngine.State]) {
        pending.removeAll { state[$0] != .pending }
    }
}

/// The recorded connections of a replay and how each fares live: the connection each unit is
/// on, their outcomes, those that did not come up or whose device is not there, what of them
/// was skipped, and when the run worked on them.
struct ReplayConnections {
    /// The recorded connection each unit belongs to (index into `outcomes`), from its
    /// connection complete (success) to its disconnection complete: its ACL, events with its
    /// handle, commands naming its handle and their Command Status/Complete.
    let of: [Int?]
    /// Each connection's recorded peer (nil for a link open before the log starts).
    let peers: [BDAddr?]
    var outcomes: [ConnectionOutcome]
    /// Recorded connections that did not come up live: their units are skipped at once.
    var down: Set<Int> = []
    /// Under `--peer`: recorded connections to other devices than the twin's (not on its radio):
    /// not played, their packets not compared.
    var absent: Set<Int> = []
    /// Links open before the log starts that the run connects itself (the twin's device's).
    var openedByRun: Set<Int> = []
    /// Per connection, the recorded frames skipped on it.
    var skippedFrames: [Int: [Int]] = [:]
    /// Units skipped because their connection was down, counted among its steps.
    var skippedUnits: Set<Int> = []
    /// Per connection, when the run first and last worked on one of its units (`Clock.now()`).
    var times: [Int: (first: Double, last: Double)] = [:]

    /// The connections of `views` (`ReplayEngine.connections`). Under `--peer`, those to other
    /// devices are absent. A link open before the log starts cannot be made live (who and how
    /// is not recorded): not played beside a twin (which plays the connections it can see made),
    /// skipped otherwise; unless it is the link of the twin's device, which the run makes itself.
    init(_ views: [UnitView], options: ReplayOptions) {
        (of, outcomes, peers) = ReplayEngine.connections(views)
        if let only = options.advertisers {
            for (k, peer) in peers.enumerated() where peer.map({ !only.contains($0) }) ?? false { absent.insert(k); down.insert(k) }
        }
        for (k, c) in outcomes.enumerated() where c.openBeforeLog {
            if let t = options.twinOpenBeforeLog, t.handle == c.recordedHandle, !outcomes.contains(where: { $0.openBeforeLog && openedByRun.contains($0.index - 1) }) {
                openedByRun.insert(k)
                outcomes[k].peer = t.address.description
                continue
            }
            down.insert(k)
            if options.advertisers != nil { absent.insert(k) }
        }
    }

    /// Unit `i` is on a connection to a device that is not there (`--peer`).
    func isAbsent(_ i: Int) -> Bool { of[i].map { absent.contains($0) } ?? false }

    /// Connection `k`'s number (1-based) among those to a device that is there (`--peer`).
    func number(_ k: Int) -> Int { (0 ... k).filter { !absent.contains($0) }.count }

    /// The run works on a unit of connection `k` now.
    mutating func touch(_ k: Int) {
        let now = Clock.now()
        times[k] = (times[k]?.first ?? now, now)
    }

    /// Connection `k` came up live as `handle`.
    mutating func cameUp(_ k: Int, liveHandle handle: UInt16) {
        outcomes[k].replayed = true
        outcomes[k].liveHandle = handle
    }

    /// Unit `i` (`unit`) of connection `k` is skipped; `asStep`: it counts among the connection's
    /// steps (its connection was down, not absent or relaxed).
    mutating func skipped(_ i: Int, _ unit: LinkUnit, on k: Int, asStep: Bool) {
        outcomes[k].skipped += unit.packets.count
        skippedFrames[k, default: []].append(unit.frame)
        if asStep { skippedUnits.insert(i) }
    }
}

/// The live side of connection attempts in a replay: what the run itself sent or cancelled, and the
/// filter accept list and random address it set up.
struct LiveAttempts {
    /// The run's own LE Create Connection for that connection is under way.
    var ownConnecting: Int?
    /// An LE connection attempt the run sent is still open live (no connection complete yet).
    var leOpen = false
    /// The run cancelled an attempt itself; its connection complete is swallowed.
    var cancelled = false
    /// The filter accept list as the run filled it (recorded addresses): the recording's adds,
    /// removes and clears sent so far, and the devices the run added itself.
    var acceptListed: Set<BDAddr> = []
    /// Connection commands (opcodes) whose last one sent named another device than the twin's.
    var absentTargets: Set<UInt16> = []
    /// The live controller has a random address (the recording set one, or the run did).
    var randomAddressSet = false
}

/// Commands a replay sent itself (not recorded) or did not send (rules `configuration`, `vendor`),
/// and the notes it made about them.
struct OwnCommands {
    /// A command the run sent itself (not recorded) whose answer is awaited and swallowed.
    var awaited: UInt16?
    var notes: [String] = []
    var fastIntervalNoted = false
    var eventMasksChecked = false
    /// Commands not sent under rule `configuration` (opcode → recorded frames), and how many
    /// answers of commands not sent (that rule and `vendor`) are still to come in the recording
    /// (not compared).
    var withheld: [UInt16: [Int]] = [:]
    var withheldAnswers: [UInt16: Int] = [:]
    /// Vendor commands not sent (rule `vendor`).
    var withheldVendor = 0
}
