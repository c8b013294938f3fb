import BLEBytes
import BLEProtocol

/// Display layers written out as plain values: the tree of `Layer`s and `Field`s depth-first, with
/// every string and byte value copied into one byte store. Nothing in it is reference-counted.
///
/// This is the form the text renderer reads. The packet list decodes on one thread and renders on
/// another; reading the decoded `Layer` trees from the second thread retained and released each
/// of their arrays and strings, and every such count moved a cache line between the cores. That
/// made two cores slower than one. Now the decoding thread flattens each frame (and frees its tree
/// while it is still in cache), and only these values cross.
public struct FlatLayers {
    /// One layer, field, list item or note.
    public enum Entry {
        /// A layer. Its `fields` fields follow, each with its nested entries, then `notes` notes.
        case layer(protocolName: StaticString, name: Text, code: Text, length: Int?, fields: Int, notes: Int, error: Text?)
        /// A field (its label and what it is); a `.group` or `.list` value is followed by its nested entries.
        case field(name: StaticString, id: FieldID, value: Value)
        /// One structure of a `.list`: its `fields` fields follow.
        case item(fields: Int)
        /// A note of the layer before.
        case note(Text)
    }

    /// A `FieldValue` with its bytes in the store.
    public enum Value {
        case integer(UInt64, FieldFormat)
        case address(BDAddr, type: LEAddressType?)
        case bytes(Text)
        case text(Text)
        case secret(Text)
        case note(Text)
        /// `fields` field entries follow.
        case group(fields: Int)
        /// `items` `.item` entries follow.
        case list(items: Int)
    }

    /// A range of `bytes`.
    public struct Text {
        public var start: Int
        public var count: Int
    }

    public private(set) var entries: [Entry] = []
    public private(set) var bytes: [UInt8] = []

    public init() {}

    /// Empties the store, keeping its capacity (the packet list reuses one per batch).
    public mutating func removeAll() {
        entries.removeAll(keepingCapacity: true)
        bytes.removeAll(keepingCapacity: true)
    }

    /// Appends `layers`; returns the range of `entries` they took.
    @discardableResult
    public mutating func append(_ layers: [Layer]) -> Range<Int> {
        let start = entries.count
        for i in layers.indices { append(layers[i]) }
        return start ..< entries.count
    }

    /// Appends `fields` (without a layer); returns the range of `entries` they took.
    @discardableResult
    public mutating func append(_ fields: [Field]) -> Range<Int> {
        let start = entries.count
        appendFields(fields)
        return start ..< entries.count
    }

    /// Keeps `raw` in the byte store (a frame's payload, for the renderer to read).
    public mutating func appendBytes(_ raw: UnsafeRawBufferPointer) -> Text {
        let start = bytes.count
        bytes.append(contentsOf: raw)
        return Text(start: start, count: raw.count)
    }

    private mutating func append(_ layer: Layer) {
        if let line = layer.line {   // one line: no protocol name, no fields (`PacketText.title`)
            entries.append(.layer(protocolName: "", name: text(line), code: Text(start: 0, count: 0), length: nil, fields: 0,
                                  notes: layer.notes.count, error: layer.error.map { text($0.description) }))
            for note in layer.notes { entries.append(.note(text(note))) }
            return
        }
        entries.append(.layer(protocolName: layer.protocolName, name: text(layer.name), code: text(layer.code),
                              length: layer.length, fields: layer.fields.count, notes: layer.notes.count,
                              error: layer.error.map { text($0.description) }))
        appendFields(layer.fields)
        for note in layer.notes { entries.append(.note(text(note))) }
    }

    private mutating func appendFields(_ fields: [Field]) {
        for field in fields {
            let value: Value
            switch field.value {
            case let .integer(v, format): value = .integer(v, format)
            case let .address(a, type): value = .address(a, type: type)
            case let .bytes(b): value = .bytes(text(b))
            case let .text(t): value = .text(text(t))
            case let .secret(b): value = .secret(text(b))
            case let .note(t): value = .note(text(t))
            case let .problem(e): value = .note(text(e.description))
            case let .group(children):
                entries.append(.field(name: field.name, id: field.id, value: .group(fields: children.count)))
                appendFields(children)
                continue
            case let .list(items):
                entries.append(.field(name: field.name, id: field.id, value: .list(items: items.count)))
                for item in items {
                    entries.append(.item(fields: item.count))
                    appendFields(item)
                }
                continue
            }
            entries.append(.field(name: field.name, id: field.id, value: value))
        }
    }

    private mutating func text(_ b: [UInt8]) -> Text {
        let t = Text(start: bytes.count, count: b.count)
        b.withUnsafeBufferPointer { bytes.append(contentsOf: $0) }
        return t
    }

    private mutating func text(_ s: String) -> Text {
        let start = bytes.count
        if s.utf8.withContiguousStorageIfAvailable({ bytes.append(contentsOf: $0) }) == nil { bytes += s.utf8 }
        return Text(start: start, count: bytes.count - start)
    }

    /// The index after the entry at `i` and everything nested in it.
    public func next(after i: Int) -> Int { withView { $0.next(after: i) } }

    /// Calls `body` with the entries and bytes in place.
    public func withView<R>(_ body: (View) -> R) -> R {
        entries.withUnsafeBufferPointer { e in bytes.withUnsafeBufferPointer { b in body(View(entries: e, bytes: b)) } }
    }

    /// The store read in place: what the renderer walks (plain pointers, no reference counts).
    public struct View {
        public let entries: UnsafeBufferPointer<Entry>
        public let bytes: UnsafeBufferPointer<UInt8>

        public subscript(t: Text) -> UnsafeBufferPointer<UInt8> {
            UnsafeBufferPointer(rebasing: bytes[t.start ..< t.start + t.count])
        }

        /// The index after the entry at `i` and everything nested in it.
        public func next(after i: Int) -> Int {
            var j = i + 1
            switch entries[i] {
            case let .layer(_, _, _, _, fields, notes, _):
                for _ in 0 ..< fields { j = next(after: j) }
                j += notes
            case let .field(_, _, .group(fields)), let .item(fields):
                for _ in 0 ..< fields { j = next(after: j) }
            case let .field(_, _, .list(items)):
                for _ in 0 ..< items { j = next(after: j) }
            case .field, .note:
                break
            }
            return j
        }
    }
}
