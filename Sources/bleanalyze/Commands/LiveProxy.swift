import BLEBytes
import BLECapture
import BLEProtocol
import BLEReplay
import Dispatch

/// `live --proxy LISTEN --to CONTROLLER`: a host stack and its controller talk through us. Two
/// threads pass packets on, one per direction, each the moment its H4 framing is complete (the
/// bytes unchanged, in order); the analysis runs on the main thread from a queue, off that path.
/// What the host sends that is not H4 framing is skipped (never passed to the controller) and told;
/// when either side goes, the other is closed and the session ends, told with why.
enum LiveProxy {
    /// A packet passed on, with the time it arrived; or what happened to a side.
    enum Item {
        case packet(H4Packet, received: Bool, time: Int64)
        case garbage(String)
        case closed(String)
    }

    /// Items from the two forwarding threads to the analysis.
    final class Queue: @unchecked Sendable {   // safe: every access holds the lock
        private let lock = NSLockLike()
        private var items: [Item] = []
        let signal = DispatchSemaphore(value: 0)

        func push(_ item: Item) {
            lock.locked { items.append(item) }
            signal.signal()
        }

        /// A packet with the time it arrived, taken under the lock: the records' times never go back.
        func push(packet: H4Packet, received: Bool) {
            lock.locked { items.append(.packet(packet, received: received, time: Clock.wallMicros())) }
            signal.signal()
        }

        func take() -> [Item] {
            lock.locked {
                let all = items
                items.removeAll(keepingCapacity: true)
                return all
            }
        }
    }

    /// Runs until a side closes, the deadline or a signal. Returns why the session ended early (a side
    /// that could not be opened), nil otherwise.
    static func run(listen: TransportURI, to controllerURI: TransportURI, _ session: LiveSession, until deadline: Double?) throws(CaptureError) -> String? {
        // The controller first: one that cannot be reached is said before any host waits for it.
        let controller: HCITransport
        do { controller = try Transports.open(controllerURI) } catch { return "proxy: the controller: \(error.message)" }
        let listener: HCIListener
        do { listener = try Transports.listen(listen) } catch {
            controller.close()
            return "proxy: \(error.message)"
        }
        defer { listener.close() }
        if !session.events.jsonl { Diagnostics.message("live: proxy waiting for the host on \(listener.address), for \(controllerURI)") }
        session.events.started(source: "proxy:\(controllerURI)", listening: listener.address)
        var hostOrNil: HCITransport?
        while hostOrNil == nil {
            if LiveStop.stop || LiveSources.past(deadline) {
                controller.close()
                return "proxy: no host connected on \(listener.address) before the session ended: nothing was checked"
            }
            do { hostOrNil = try listener.accept(timeout: LiveStop.tick) } catch {
                if error.kind == .timeout { continue }
                controller.close()
                return "proxy: \(error.message)"
            }
        }
        guard let host = hostOrNil else { return nil }
        try session.take(BTSnoopWriter(datalink: Datalink.btsnoopH4).bytes)
        let queue = Queue()
        let stopping = Flag()
        let group = DispatchGroup()
        for direction in [OneWay(from: host, to: controller, received: false), OneWay(from: controller, to: host, received: true)] {
            DispatchQueue.global().async(group: group) {
                pass(direction, queue: queue, stopping: stopping)
                // Either side gone: close both, so the other thread ends too.
                stopping.set()
                direction.from.close()
                direction.to.close()
            }
        }
        var ended: String?
        /// Makes btsnoop records of the packets taken and analyses them; notes why a side went.
        func process(_ items: [Item]) throws(CaptureError) {
            var w = ByteWriter()
            for item in items {
                switch item {
                case let .packet(p, received, time):
                    let commandOrEvent = p.type == .command || p.type == .event
                    BTSnoopWriter.record(flags: BTSnoopWriter.h4Flags(received: received, commandOrEvent: commandOrEvent), timestamp: time,
                                         CollectionOfOne(p.type.rawValue) + p.bytes, into: &w)
                case let .garbage(text):
                    session.events.sourceProblem("host-garbage", "proxy: the host sent bytes that are not HCI packets: \(text); skipped, the controller was not sent them")
                case let .closed(text):
                    if ended == nil { ended = text }
                }
            }
            if !w.bytes.isEmpty { try session.take(w.bytes) }
        }
        while ended == nil, !stopping.isSet {
            _ = queue.signal.wait(timeout: .now() + LiveStop.tick)
            try process(queue.take())
            session.status()
            if LiveStop.stop || LiveSources.past(deadline) { break }
        }
        // Either side went, or the session was ended: both sides closed, both threads done, and
        // what they queued last analysed.
        stopping.set()
        host.close()
        controller.close()
        group.wait()
        try process(queue.take())
        if let ended {
            session.events.sourceProblem("proxy-closed", "proxy: \(ended); both sides closed, the session ends",
                                         counts: [("frames", session.stream.summary.frames)])
        }
        return nil
    }

    /// One way through the proxy, handed to its thread (each transport is read by one thread only
    /// and written by the other).
    final class OneWay: @unchecked Sendable {   // safe: see above; `close` is idempotent
        let from: HCITransport, to: HCITransport, received: Bool
        init(from: HCITransport, to: HCITransport, received: Bool) { (self.from, self.to, self.received) = (from, to, received) }
    }

    /// Passes packets one way until one side fails or `stopping` is set.
    private static func pass(_ direction: OneWay, queue: Queue, stopping: Flag) {
        let (from, into, received) = (direction.from, direction.to, direction.received)
        var problems = 0
        while !stopping.isSet {
            do throws(TransportError) {
                if let packet = try from.receive(timeout: LiveStop.tick) {
                    // Queued (and timed) before it is passed on: the queue's order is the order the
                    // proxy received packets in, whichever side the other end answers first.
                    queue.push(packet: packet, received: received)
                    try into.send(packet)
                }
                let seen = from.framingProblems
                if seen.count > problems {
                    for p in seen[problems...] { queue.push(.garbage(p.description)) }
                    problems = seen.count
                }
            } catch {
                if !stopping.isSet {
                    let side = received ? "the controller" : "the host"
                    queue.push(.closed(error.kind == .disconnected ? "\(side) closed the link (\(error.message))" : "\(side): \(error.message)"))
                }
                return
            }
        }
    }

    /// A flag set once, read from any thread.
    final class Flag: @unchecked Sendable {   // safe: every access holds the lock
        private let lock = NSLockLike()
        private var value = false
        func set() { lock.locked { value = true } }
        var isSet: Bool { lock.locked { value } }
    }
}
