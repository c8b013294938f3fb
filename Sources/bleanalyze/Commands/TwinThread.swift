import BLEProtocol
import BLEReplay
import Foundation

/// A twin (`PeerEngine`) running on a thread of its own beside a replay (`replay --peer`): the
/// replay waits until it advertises, runs, then lets the twin finish (it ends when the central
/// disconnects) or stops it.
final class TwinThread: @unchecked Sendable {   // safe: the engine is touched by its thread only until `outcome` is read after it ended
    private let engine: PeerEngine
    private let condition = NSCondition()
    private var advertised: String?
    private var stopRequested = false
    private var result: ReplayOutcome?
    private var allowed = 0

    init(_ engine: PeerEngine) { self.engine = engine }

    func start() {
        engine.announce = { [self] line in condition.lock(); advertised = line; condition.broadcast(); condition.unlock() }
        engine.shouldStop = { [self] in condition.lock(); defer { condition.unlock() }; return stopRequested }
        engine.connectionsAllowed = { [self] in condition.lock(); defer { condition.unlock() }; return allowed }
        let thread = Thread { [self] in
            let outcome = engine.run()
            condition.lock(); result = outcome; condition.broadcast(); condition.unlock()
        }
        thread.start()
    }

    /// Waits until the twin advertises (its line) or ended (nil).
    func waitAdvertising(timeout: Double) -> String? {
        let deadline = Date().addingTimeInterval(timeout)
        condition.lock(); defer { condition.unlock() }
        while advertised == nil && result == nil { if !condition.wait(until: deadline) { break } }
        return advertised
    }

    /// Lets the twin end by itself for `grace` seconds, then stops it; returns its outcome.
    func finish(grace: Double) -> ReplayOutcome? {
        condition.lock(); defer { condition.unlock() }
        let deadline = Date().addingTimeInterval(grace)
        while result == nil { if !condition.wait(until: deadline) { break } }
        stopRequested = true
        let hard = Date().addingTimeInterval(5)
        while result == nil { if !condition.wait(until: hard) { break } }
        return result
    }

    /// The replayed host is about to make the recorded connection `n` (1-based) to the device.
    func allowConnection(_ n: Int) { condition.lock(); allowed = max(allowed, n); condition.unlock() }

    var address: BDAddr? { engine.advertisedAddress }
    var addressType: LEAddressType? { engine.advertisedAddressType }
}
