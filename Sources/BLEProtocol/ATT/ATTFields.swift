import BLEBytes

extension ATT {
    /// The parameters' names in Core v5.4 Vol 3 Part F 3.4: the keys by which `ATTEncoding` builds a
    /// PDU from its row and `ATTLayout` locates a field in it. `ATTParam.label` is display text only.
    public enum Key {
        /// Error Response (3.4.1.1).
        public static let requestOpcodeInError = ParamKey("Request_Opcode_In_Error")
        public static let attributeHandleInError = ParamKey("Attribute_Handle_In_Error")
        public static let errorCode = ParamKey("Error_Code")
        /// Exchange MTU (3.4.2).
        public static let clientRxMTU = ParamKey("Client_Rx_MTU")
        public static let serverRxMTU = ParamKey("Server_Rx_MTU")
        /// Discovery (3.4.3, 3.4.4.1–2, 3.4.4.9–10).
        public static let startingHandle = ParamKey("Starting_Handle")
        public static let endingHandle = ParamKey("Ending_Handle")
        public static let format = ParamKey("Format")
        public static let informationData = ParamKey("Information_Data")
        public static let attributeType = ParamKey("Attribute_Type")
        public static let attributeGroupType = ParamKey("Attribute_Group_Type")
        public static let handlesInformationList = ParamKey("Handles_Information_List")
        public static let length = ParamKey("Length")
        public static let attributeDataList = ParamKey("Attribute_Data_List")
        /// Reads, writes, notifications (3.4.4–3.4.7).
        public static let attributeHandle = ParamKey("Attribute_Handle")
        public static let attributeValue = ParamKey("Attribute_Value")
        public static let valueOffset = ParamKey("Value_Offset")
        public static let partAttributeValue = ParamKey("Part_Attribute_Value")
        public static let setOfHandles = ParamKey("Set_Of_Handles")
        public static let setOfValues = ParamKey("Set_Of_Values")
        public static let lengthValueTupleList = ParamKey("Length_Value_Tuple_List")
        public static let handleLengthValueTupleList = ParamKey("Handle_Length_Value_Tuple_List")
        public static let flags = ParamKey("Flags")
        /// Signed Write Command (3.4.5.4): the Authentication Signature is the Sign Counter and the
        /// MAC (Core v5.4 Vol 3 Part H 2.4.5).
        public static let signCounter = ParamKey("Sign_Counter")
        public static let mac = ParamKey("MAC")
    }
}

/// One parameter of an ATT PDU (Core v5.4 Vol 3 Part F 3.4): the field list of a row drives the
/// display and JSON (`ATTDisplay`), the size rule, the typed decoder's offsets (`ATTLayout`) and
/// encoding (`ATTEncoding`). ATT needs its own parameter kinds beside `FieldSpec` because its
/// display depends on the session: a handle is named from the attribute database and a value
/// decoded by the type of the attribute it belongs to.
struct ATTParam: Sendable {
    enum Kind: Sendable {
        /// 1 byte, an opcode shown by name (Request Opcode In Error).
        case opcode
        /// 2 bytes in hex, then `Attribute` when the session knows the handle; later values are decoded by it.
        case handle
        /// 2 bytes in hex (range bounds, Group End Handle).
        case hex16
        case uint(Int)
        case named(Int, NameTable)
        /// A 2-byte UUID; a later `.value(.type)` is decoded by it.
        case uuid16
        /// A 2- or 16-byte UUID filling the rest of the PDU.
        case uuidRest
        /// An attribute value: the rest of the PDU less the fixed parameters after it.
        case value(ValueUUID)
        case bytes(Int)
        /// Elements to the end of the PDU, read by the list's own element reader (`ATTList`); a
        /// parameter before it (Format, Length) is the list's header.
        case list(ATTList)
    }

    /// What a value is decoded as.
    enum ValueUUID: Sendable {
        /// The attribute at the PDU's handle.
        case handle
        /// The attribute of the request answered (Read Response); `Attribute` names it first.
        case request
        /// As `.request`, but only a part of the value: shown raw.
        case requestPart
        /// The UUID read before it (Find By Type Value Request).
        case type
        /// Not decoded (a fragment, a concatenation).
        case none
    }

    let id: FieldID
    let label: StaticString
    /// The spec's name for the field, as a decoding error names it.
    let spec: StaticString
    let key: ParamKey
    let kind: Kind

    init(_ id: FieldID, _ label: StaticString, spec: StaticString, _ kind: Kind, key: ParamKey) {
        (self.id, self.label, self.spec, self.kind, self.key) = (id, label, spec, kind, key)
    }

    init(_ label: StaticString, spec: StaticString, _ kind: Kind, key: ParamKey) {
        self.init(.unspecified, label, spec: spec, kind, key: key)
    }

    /// The parameter's width when it is fixed.
    var width: Int? {
        switch kind {
        case .opcode: 1
        case .handle, .hex16, .uuid16: 2
        case let .uint(n), let .named(n, _), let .bytes(n): n
        case .uuidRest, .value, .list: nil
        }
    }

    /// The fewest bytes the parameter takes.
    var minimum: Int {
        switch kind {
        case .uuidRest: 2
        case .value: 0
        case let .list(list): list.minimum
        default: width ?? 0
        }
    }

    /// The size rule of a row: the sum of the widths, at least when a parameter runs to the end.
    static func size(_ params: [ATTParam]) -> PDUSize {
        let least = params.reduce(0) { $0 + $1.minimum }
        return params.allSatisfy { $0.width != nil } ? .exactly(least) : .atLeast(least)
    }
}

/// The ATT parameters with a variable number of elements (Core v5.4 Vol 3 Part F 3.4.3.2,
/// 3.4.3.4, 3.4.4.2, 3.4.4.7, 3.4.4.10–12, 3.4.7.4). Each has its own element reader here, in
/// BLEProtocol, for display (`show`) and for the typed decoder (`ATTDecoding`'s list readers).
enum ATTList: Sendable {
    case informationData, handlesInformation, attributeData, groupData, handleSet, lengthValueTuples, handleLengthValueTuples

    var minimum: Int {
        switch self {
        case .informationData, .handlesInformation, .handleSet, .handleLengthValueTuples: 4
        case .lengthValueTuples: 2
        case .attributeData, .groupData: 0   // the Length header checks the list (`checkList`)
        }
    }

    typealias D = ATTDecoding

    /// Appends the list's fields. `header` is the parameter before the list (Format, Length) and
    /// `headerOffset` where it lies.
    func show(_ r: inout ByteReader, header: UInt64, headerOffset: Int, _ ctx: ATTDisplayContext, _ f: inout [Field]) throws(DecodeError) {
        switch self {
        case .informationData:
            let width = try D.uuidWidth(format: UInt8(truncatingIfNeeded: header), &r)
            try D.evenList(r, element: 2 + width, "Information Data")
            var items: [[Field]] = []
            while !r.isAtEnd {
                var item: [Field] = []
                try ATTShow.handle(&r, ctx, &item)
                item.append(Field("UUID", ATTShow.uuid(try r.uuid(width: width))))
                items.append(item)
            }
            f.append(Field("Information Data", .list(items)))
        case .handlesInformation:
            try D.evenList(r, element: 4, "Handles Information List")
            var items: [[Field]] = []
            while !r.isAtEnd {
                var item: [Field] = []
                try ATTShow.handle(&r, ctx, &item, "Found Handle")
                item.append(Field("Group End Handle", .integer(UInt64(try r.u16le("Group End Handle")), .hex(bytes: 2))))
                items.append(item)
            }
            f.append(Field("Handles Information", .list(items)))
        case .attributeData:
            let length = UInt8(truncatingIfNeeded: header)
            try D.checkList(r, length: length, at: headerOffset, minimum: 2, "Length")
            var items: [[Field]] = []
            while !r.isAtEnd {
                var item: [Field] = []
                let h = try ATTShow.handle(&r, ctx, &item)
                let value = try r.slice(Int(length) &- 2, "Attribute Value")   // safe: length >= 2
                ATTShow.value(value, uuid: ctx.requestedType ?? ctx.valueUUID(h) ?? D.guessDeclaration(handle: h, value), &item)
                items.append(item)
            }
            f.append(Field("Attribute Data", .list(items)))
        case .groupData:
            let length = UInt8(truncatingIfNeeded: header)
            try D.checkList(r, length: length, at: headerOffset, minimum: 4, "Length")
            var items: [[Field]] = []
            while !r.isAtEnd {
                var item: [Field] = []
                try ATTShow.handle(&r, ctx, &item)
                item.append(Field("End Group Handle", .integer(UInt64(try r.u16le("End Group Handle")), .hex(bytes: 2))))
                let value = try r.slice(Int(length) &- 4, "Attribute Value")   // safe: length >= 4
                // Group types are service declarations in practice (Core v5.4 Vol 3 Part G 4.4.1).
                let type = ctx.requestedType ?? ((value.remaining == 2 || value.remaining == 16) ? BluetoothUUID.primaryService : nil)
                ATTShow.value(value, uuid: type, &item)
                items.append(item)
            }
            f.append(Field("Attribute Data", .list(items)))
        case .handleSet:
            try D.evenList(r, element: 2, "Set Of Handles")
            while !r.isAtEnd { try ATTShow.handle(&r, ctx, &f) }
        case .lengthValueTuples:
            var items: [[Field]] = []
            while r.remaining >= 2 {
                let length = try r.u16le("Value Length")
                var item = [Field("Length", .integer(UInt64(length), .decimal(bytes: 2)))]
                let present = min(Int(length), r.remaining)
                item.append(Field(.attValue, "Value", .bytes(try r.copy(present, "Attribute Value"))))
                if present < Int(length) {
                    item.append(Field("Truncated", .note("\(present) of \(length) bytes (cut at ATT_MTU - 1)")))
                }
                items.append(item)
            }
            f.append(Field(.attValue, "Length Value Tuple List", .list(items)))
            if r.remaining > 0 {
                _ = r.rest()
                f.append(Field("Truncated", .note("1 byte of a Value Length (cut at ATT_MTU - 1)")))
            }
        case .handleLengthValueTuples:
            var items: [[Field]] = []
            defer { f.append(Field(.attValue, "Handle Length Value Tuple List", .list(items))) }
            while !r.isAtEnd {
                var item: [Field] = []
                let h = try ATTShow.handle(&r, ctx, &item)
                let length = try r.u16le("Value Length")
                item.append(Field("Length", .integer(UInt64(length), .decimal(bytes: 2))))
                items.append(item)
                let value = try r.slice(Int(length), "Attribute Value")
                ATTShow.value(value, uuid: ctx.valueUUID(h), &items[items.count &- 1])   // safe: just appended
            }
        }
    }
}

extension ATTParam {
    /// Shows a row's parameters, appending fields as they are read so an error keeps the partial
    /// decode. `tails[i]` is the width of the fixed parameters after parameter `i`.
    static func show(_ params: [ATTParam], tails: [Int], _ r: inout ByteReader, _ ctx: ATTDisplayContext,
                     _ f: inout [Field]) throws(DecodeError) {
        var handle: UInt16?
        var type: BluetoothUUID?
        var header: UInt64 = 0
        var headerOffset = 0
        for i in params.indices {
            // Read in place: a copy of the parameter (`let p = params[i]`) was an outlined copy and
            // destroy of its key and kind per parameter of every PDU `packets` shows.
            let (id, label, spec) = (params[i].id, params[i].label, params[i].spec)
            switch params[i].kind {
            case .opcode:
                f.append(Field(id, label, .integer(UInt64(try r.u8(spec)), .named(bytes: 1, ATTDecoding.opcodeNames))))
            case .handle:
                handle = try ATTShow.handle(&r, ctx, &f, label)
            case .hex16:
                f.append(Field(id, label, .integer(UInt64(try r.u16le(spec)), .hex(bytes: 2))))
            case let .uint(n):
                headerOffset = r.absoluteOffset
                header = try FieldDecoder.integer(n, &r, spec)
                f.append(Field(id, label, .integer(header, .decimal(bytes: n))))
            case let .named(n, table):
                headerOffset = r.absoluteOffset
                header = try FieldDecoder.integer(n, &r, spec)
                f.append(Field(id, label, .integer(header, .named(bytes: n, table))))
            case .uuid16:
                let u = try r.uuid(width: 2, spec)
                type = u
                f.append(Field(id, label, ATTShow.uuid(u)))
            case .uuidRest:
                f.append(Field(id, label, ATTShow.uuid(try ATTDecoding.restUUID(&r, spec))))
            case let .value(of):
                // safe: the size rule guarantees the fixed parameters after the value
                let value = try r.slice(r.remaining &- tails[i], spec)
                // `{ ctx.valueUUID($0) }`, not `ctx.valueUUID` as a function value, which copied the
                // context (its attribute source existential) per value shown.
                switch of {
                case .handle: ATTShow.value(value, uuid: handle.flatMap { ctx.valueUUID($0) }, &f, label)
                case .type: ATTShow.value(value, uuid: type, &f, label)
                case .none: ATTShow.value(value, uuid: nil, &f, label)
                case .request, .requestPart:
                    if let h = ctx.requestHandle, let d = ctx.attribute(h) { f.append(Field("Attribute", .text(d))) }
                    let uuid = if case .request = of { ctx.requestHandle.flatMap { ctx.valueUUID($0) } } else { BluetoothUUID?.none }
                    ATTShow.value(value, uuid: uuid, &f, label)
                }
            case let .bytes(n):
                f.append(Field(id, label, .bytes(try r.copy(n, spec))))
            case let .list(list):
                try list.show(&r, header: header, headerOffset: headerOffset, ctx, &f)
            }
        }
    }

    /// For each parameter, the width of the fixed parameters after it (the Authentication
    /// Signature after a Signed Write's value).
    static func tails(_ params: [ATTParam]) -> [Int] {
        params.indices.map { i in params[(i + 1)...].reduce(0) { $0 + ($1.width ?? 0) } }
    }
}

/// A fixed-width ATT parameter located in its row by key: its offset from the first byte after the
/// opcode (the widths before it) and its width. The typed decoders read through these, so a layout
/// is spelled once, in its row. A parameter after a variable one is located from the end.
/// The readers are inlined into the typed decoders: called, a notification's handle and value cost
/// ~90 instructions more per PDU (its arguments spilled, the checks not folded into the decoder's).
struct ATTRowField: Sendable {
    let offset: Int
    let width: Int
    let name: StaticString
    /// Counted back from the end of the PDU (the Authentication Signature).
    let fromEnd: Bool

    /// `key` in `params`; a row without it is a programming error in a static table: it traps when
    /// the layout is first used, and `ATTTests` uses every layout.
    init(_ params: [ATTParam], _ key: ParamKey) {
        guard let i = params.firstIndex(where: { $0.key == key }) else { preconditionFailure("no ATT parameter \(key) in the row") }
        let before = params[..<i]
        let after = params[(i + 1)...]
        if before.allSatisfy({ $0.width != nil }) {
            (offset, fromEnd) = (before.reduce(0) { $0 + ($1.width ?? 0) }, false)
        } else {
            precondition(after.allSatisfy { $0.width != nil }, "ATT parameter \(key) lies between variable ones")
            (offset, fromEnd) = (after.reduce(0) { $0 + ($1.width ?? 0) } + (params[i].width ?? 0), true)
        }
        (width, name) = (params[i].width ?? 0, params[i].spec)
    }

    /// Where the field starts, from the reader's cursor.
    @inline(__always) func start(_ r: ByteReader) -> Int { fromEnd ? r.remaining &- offset : offset }   // safe: offset <= size rule

    @inline(never)
    func truncated(_ r: ByteReader) -> DecodeError {
        DecodeError(kind: .truncated(needed: width, available: max(0, r.remaining - offset)), offset: r.absoluteOffset + offset, field: name)
    }

    @inline(__always)
    func u8(_ r: ByteReader) throws(DecodeError) -> UInt8 {
        guard let v = r.peekU8(at: start(r)) else { throw truncated(r) }
        return v
    }

    @inline(__always)
    func u16(_ r: ByteReader) throws(DecodeError) -> UInt16 {
        guard let v = r.peekU16le(at: start(r)) else { throw truncated(r) }
        return v
    }

    /// A variable parameter (width 0 in the row): from its offset to the end less `tail` bytes.
    @inline(__always)
    func range(_ r: ByteReader, tail: Int = 0) throws(DecodeError) -> ByteRange {
        let count = width > 0 ? width : r.remaining &- offset &- tail   // safe: non-negative under the size rule
        guard count >= 0, r.remaining - start(r) >= count else { throw truncated(r) }
        return ByteRange(offset: r.absoluteOffset &+ start(r), count: count)   // safe: within the reader
    }

    /// From the field's start to the end of the PDU.
    @inline(__always)
    func toEnd(_ r: ByteReader) throws(DecodeError) -> ByteRange {
        let at = start(r)
        guard at >= 0, at <= r.remaining else { throw truncated(r) }
        return ByteRange(offset: r.absoluteOffset &+ at, count: r.remaining &- at)   // safe: checked
    }

    /// A reader from the field's start to the end of the PDU (a UUID that is the rest of it).
    @inline(__always)
    func reader(_ r: ByteReader) throws(DecodeError) -> ByteReader {
        let at = start(r)
        guard at >= 0, let sub = r.getSlice(at: r.position &+ at, count: r.remaining &- at) else { throw truncated(r) }   // safe: checked by getSlice
        return sub
    }
}
