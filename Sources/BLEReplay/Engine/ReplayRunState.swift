import BLEProtocol

// The state a replay run keeps besides its units and connections, grouped by what it is about
// (ReplayEngine holds one of each).

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
    /// Links open before the log starts that the run connects itself (the twin's device's).
    var openedByRun: Set<Int> = []
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
