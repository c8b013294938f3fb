import BLEAnalysis
import BLECapture
import BLEProtocol
import BLEReport
import Foundation

/// The text packet list on two cores: the reading thread decodes (the session model is
/// sequential: ATT names and reassembly depend on every earlier frame), a second thread renders
/// and writes. Frames travel in batches through a bounded FIFO, so output order and memory are
/// those of a single pass (at most `depth` batches of `batchSize` decoded frames in flight).
///
/// A frame's payload points into the capture reader's buffer, which libpcap reuses for the next
/// record; the renderer only reads it for malformed or capture-truncated frames, so those are
/// copied and every other frame travels without it.
final class RenderPipeline {
    struct Item {
        var frame: Frame
        var layers: [Layer]
        var status: FrameStatus
        /// The payload, for the frames whose text shows it.
        var payload: [UInt8]?
    }

    /// Frames are not `Sendable` (they hold a pointer); a batch is handed over whole and never
    /// touched again by the reading thread.
    struct Batch: @unchecked Sendable { var items: [Item] }

    static let batchSize = 2048
    static let depth = 4

    private let pipe = BatchPipe<Batch>(depth: RenderPipeline.depth)
    /// Rendered batches come back to be freed on the reading thread, which allocated them
    /// (glibc frees across threads under a lock: a third of the time went there).
    private let done = BatchPipe<Batch>(depth: .max)
    private var current: [Item] = []
    private let finished = DispatchSemaphore(value: 0)

    /// Starts the rendering thread: `text` renders into a buffer written to stdout in 64 KiB pieces.
    init(text: PacketText) {
        current.reserveCapacity(Self.batchSize)
        let pipe = self.pipe, done = self.done, finished = self.finished
        let thread = Thread {
            var out = Output()
            var buffer = TextBuffer(capacity: 1 << 17)
            var clock = ClockCache()
            while let batch = pipe.take() {
                for i in batch.items.indices {   // by index: an item copy retains everything it holds
                    var frame = batch.items[i].frame
                    if let payload = batch.items[i].payload {
                        payload.withUnsafeBytes { raw in
                            frame.payload = raw
                            text.render(frame, layers: batch.items[i].layers, status: batch.items[i].status, into: &buffer, clock: &clock)
                        }
                    } else {
                        text.render(frame, layers: batch.items[i].layers, status: batch.items[i].status, into: &buffer, clock: &clock)
                    }
                    if buffer.count >= 1 << 16 { out.write(buffer.bytes); buffer.removeAll() }
                }
                done.put(batch)
            }
            out.write(buffer.bytes)
            out.flush()
            finished.signal()
        }
        thread.start()
    }

    /// Queues one decoded frame (called on the reading thread, in file order).
    func add(_ frame: Frame, layers: [Layer], status: FrameStatus) {
        var frame = frame
        var payload: [UInt8]? = nil
        if status.isMalformed || frame.isCaptureTruncated {
            payload = Array(frame.payload)
        } else {
            frame.originalLength = 0   // not truncated (`isCaptureTruncated` compares it with the payload's count)
        }
        frame.payload = UnsafeRawBufferPointer(start: nil, count: 0)
        current.append(Item(frame: frame, layers: layers, status: status, payload: payload))
        if current.count >= Self.batchSize { handOver() }
    }

    /// Sends what is queued, ends the rendering thread and waits until it has written everything.
    func finish() {
        handOver()
        pipe.close()
        finished.wait()
        _ = done.takeAll()
    }

    private func handOver() {
        guard !current.isEmpty else { return }
        pipe.put(Batch(items: current))
        current = []
        current.reserveCapacity(Self.batchSize)
        _ = done.takeAll()   // freed here, when this returns
    }
}

/// A bounded FIFO between one producer and one consumer thread.
final class BatchPipe<Element: Sendable>: @unchecked Sendable {   // safe: every access holds `condition`
    private let condition = NSCondition()
    private var queue: [Element] = []
    private var closed = false
    private let depth: Int

    init(depth: Int) { self.depth = depth }

    /// Waits while `depth` elements are queued, then queues `element`.
    func put(_ element: Element) {
        condition.lock()
        while queue.count >= depth { condition.wait() }
        queue.append(element)
        condition.broadcast()
        condition.unlock()
    }

    /// The oldest element, waiting for one; nil once closed and drained.
    func take() -> Element? {
        condition.lock()
        defer { condition.unlock() }
        while queue.isEmpty && !closed { condition.wait() }
        guard !queue.isEmpty else { return nil }
        let element = queue.removeFirst()
        condition.broadcast()
        return element
    }

    /// Everything queued, without waiting.
    func takeAll() -> [Element] {
        condition.lock()
        defer { condition.unlock() }
        let all = queue
        queue.removeAll()
        if !all.isEmpty { condition.broadcast() }
        return all
    }

    func close() {
        condition.lock()
        closed = true
        condition.broadcast()
        condition.unlock()
    }
}
