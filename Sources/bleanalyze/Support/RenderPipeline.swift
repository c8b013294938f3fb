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
/// What crosses is plain values: each frame's layers are flattened into the batch's `FlatLayers`
/// on the reading thread, which then frees them itself. Handing the `Layer` trees over instead cost
/// more than the second core gave: the renderer's reference counting and the frees moved every
/// object's cache line between the cores. Batches go back to the reading thread and are reused.
///
/// A frame's payload points into the capture reader's buffer, which libpcap reuses for the next
/// record. It is copied into the batch for the frames whose text shows it (malformed or
/// capture-truncated) and those whose own layer the rendering thread decodes; the others travel
/// without it.
final class RenderPipeline {
    struct Item {
        var frame: Frame
        /// The frame's layers (after the HCI one when `decodeHCI`): entries of the batch's `flat`.
        var entries: Range<Int>
        var status: FrameStatus
        /// The payload, in the batch's byte store, for the frames whose text shows it or whose HCI
        /// layer the rendering thread decodes.
        var payload: FlatLayers.Text?
        /// The frame's own layer (HCI packet or log record) is decoded on the rendering thread.
        var decodeHCI: Bool
    }

    /// Frames are not `Sendable` (they hold a pointer); a batch is handed over whole and not
    /// touched by the reading thread until it comes back.
    struct Batch: @unchecked Sendable {
        var items: [Item] = []
        var flat = FlatLayers()
        /// The capture's first timestamp, for relative times (`packets -t`).
        var timeOrigin: Int64?
    }

    static let batchSize = 512
    static let depth = 4

    private let pipe = BatchPipe<Batch>(depth: RenderPipeline.depth)
    /// Rendered batches come back to be reused (and finally freed) on the reading thread.
    private let done = BatchPipe<Batch>(depth: .max)
    @exclusivity(unchecked) private var current = Batch()
    @exclusivity(unchecked) private var spare: [Batch] = []
    /// Set on the reading thread before the first `add` for relative times; travels in each batch.
    var timeOrigin: Int64?
    private let finished = DispatchSemaphore(value: 0)

    /// Starts the rendering thread: `text` renders into a buffer written to stdout in 64 KiB pieces.
    init(text: PacketText) {
        current.items.reserveCapacity(Self.batchSize)
        let pipe = self.pipe, done = self.done, finished = self.finished
        let thread = Thread {
            var out = Output()
            var buffer = TextBuffer(capacity: 1 << 17)
            var clock = ClockCache()
            var head = FlatLayers()
            while let batch = pipe.take() {
                clock.origin = batch.timeOrigin
                batch.flat.withView { view in
                    batch.items.withUnsafeBufferPointer { items in
                        for i in items.indices {
                            var frame = items[i].frame
                            if let payload = items[i].payload { frame.payload = UnsafeRawBufferPointer(view[payload]) }
                            if items[i].decodeHCI {
                                // Stateless, so it can be done here: the other half of the work.
                                head.removeAll()
                                let own = head.append(FrameLayers.decode(frame))
                                head.withView { headView in
                                    text.render(frame, head: (headView, own), view, entries: items[i].entries, status: items[i].status,
                                                into: &buffer, clock: &clock)
                                }
                            } else {
                                text.render(frame, view, entries: items[i].entries, status: items[i].status, into: &buffer, clock: &clock)
                            }
                            if buffer.count >= 1 << 16 { out.write(buffer.bytes); buffer.removeAll() }
                        }
                    }
                }
                done.put(batch)
            }
            out.write(buffer.bytes)
            out.flush()
            finished.signal()
        }
        thread.start()
    }

    /// Queues one frame (called on the reading thread, in file order). `layers` are all its layers,
    /// or, with `decodeHCI`, those after its own (HCI or log record) layer, which the rendering
    /// thread then decodes from the payload.
    func add(_ frame: Frame, layers: [Layer], decodeHCI: Bool, status: FrameStatus) {
        var frame = frame
        var payload: FlatLayers.Text? = nil
        if decodeHCI || status.isMalformed || frame.isCaptureTruncated {
            payload = current.flat.appendBytes(frame.payload)
        } else {
            frame.originalLength = 0   // not truncated (`isCaptureTruncated` compares it with the payload's count)
        }
        frame.payload = UnsafeRawBufferPointer(start: nil, count: 0)
        let entries = current.flat.append(layers)
        current.items.append(Item(frame: frame, entries: entries, status: status, payload: payload, decodeHCI: decodeHCI))
        if current.items.count >= Self.batchSize { handOver() }
    }

    /// Sends what is queued, ends the rendering thread and waits until it has written everything.
    func finish() {
        handOver()
        pipe.close()
        finished.wait()
        _ = done.takeAll()
    }

    private func handOver() {
        guard !current.items.isEmpty else { return }
        spare += done.takeAll()
        var next = spare.popLast() ?? Batch()
        next.items.removeAll(keepingCapacity: true)
        next.flat.removeAll()
        next.items.reserveCapacity(Self.batchSize)
        current.timeOrigin = timeOrigin
        pipe.put(current)
        current = next
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
