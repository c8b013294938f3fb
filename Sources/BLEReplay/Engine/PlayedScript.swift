// What both engines (ReplayEngine, EmulateEngine) hold of a recording they play, and of the
// packets that come in live, made once here.

/// A recording as an engine plays it: its units with their decoded views and steps, the
/// comparator of its rules, where each unit is in the run, and the pacer of its sends.
struct PlayedScript<UnitState> {
    let script: Script
    /// `script.units`, decoded (`UnitView`), index for index.
    let views: [UnitView]
    let comparator: Comparator
    /// Step of each unit: the number of host units before it.
    let stepOf: [Int]
    /// Each unit's state in the run (the engine's own states), all `initial` at the start.
    var state: [UnitState]
    var pacer: Pacer

    init(_ script: Script, options: ReplayOptions, initial: UnitState) {
        self.script = script
        views = script.units.map(UnitView.init)
        comparator = Comparator(rules: options.rules)
        stepOf = script.steps
        state = Array(repeating: initial, count: script.units.count)
        pacer = Pacer(options, origin: script.units.first?.timestamp)
    }

    var units: [LinkUnit] { script.units }

    /// The steps of the outcome: the start, then one per host unit.
    func steps() -> [ReplayStep] {
        var out = [ReplayStep(index: 0, frame: nil, title: "start: controller packets before the first host packet")]
        for (i, u) in script.units.enumerated() where u.fromHost {
            out.append(ReplayStep(index: out.count, frame: u.frame, title: views[i].title))
        }
        return out
    }
}

/// The packets that arrive live from one side (the controller in a replay, the host in an
/// emulation): numbered from 1 as frames and built into units, ACL reassembled per handle.
struct LiveUnits {
    /// The side they come from: the host (`emulate`) or the controller (`replay`).
    let fromHost: Bool
    private var builder = UnitBuilder()
    /// Packets received so far (the frame number of the last).
    private(set) var count = 0

    init(fromHost: Bool) { self.fromHost = fromHost }

    /// The units `packet` completes (none while an ACL PDU is still partial), stamped now.
    mutating func push(_ packet: H4Packet) -> [UnitView] {
        count += 1
        return builder.push(packet, fromHost: fromHost, frame: count, timestamp: Clock.wallMicros()).map(UnitView.init)
    }

    /// A link is gone: its partial PDUs are dropped.
    mutating func disconnected(handle: UInt16) { builder.disconnected(handle: handle) }
}
