import BLEBytes
import BLEProtocol
import BLEReport

/// L2CAP reassembly and the upper-layer decoders: ACL fragments go through `L2CAPReassembler`;
/// every delivered PDU is decoded by the typed decoders (L2CAP basic/K-frame, ATT, SMP,
/// signalling) and for display (`L2CAPDisplay` with an ATT context that names handles, so the
/// GATT value decoders run), and its payload is also read as advertising data.
///
/// Input: fragments of `flags` (bit 0 start, bit 1 received, bits 2–3 handle), `length`, then up to
/// `length` bytes. A flags byte with bits 4–7 all set starts a display context instead: the next
/// two bytes pick the UUID that every handle's value is decoded as.
enum L2CAPHarness {
    static let uuids: [UInt16] = [0x2800, 0x2801, 0x2802, 0x2803, 0x2900, 0x2901, 0x2902, 0x2903, 0x2904, 0x2A00, 0x2A01,
                                  0x2A04, 0x2A05, 0x2A19, 0x2A29, 0x2A37, 0x2A1C, 0x2A50, 0x2AA6, 0x2B29, 0x2B2A]

    static func run(_ data: UnsafeRawBufferPointer, _ check: inout Invariants) {
        var input = InputCursor(data)
        var reassembler = L2CAPReassembler()
        var uuid: BluetoothUUID? = nil
        var requested: BluetoothUUID? = nil
        var frame = 0
        var delivered = 0
        while !input.isAtEnd {
            let flags = input.u8()
            if flags & 0xF0 == 0xF0 {
                let pick = Int(input.u16())
                uuid = BluetoothUUID(uuid16: uuids[pick % uuids.count])
                requested = pick & 0x8000 != 0 ? BluetoothUUID(uuid16: 0x2803) : uuid
                continue
            }
            frame += 1
            let length = Int(input.u8())
            let base = input.position
            let fragment = ByteReader(input.bytes(length), base: base)
            let key = L2CAPReassembler.Key(adapter: 0, handle: UInt16(flags >> 2 & 3), received: flags & 2 != 0)
            let context = ATTDisplayContext(describeHandle: { _ in nil }, valueUUID: { [uuid] _ in uuid },
                                            requestHandle: flags & 0x40 != 0 ? 3 : nil, requestedType: requested)
            reassembler.push(key, isStart: flags & 1 != 0, data: fragment, frame: frame) { pdu, origin in
                delivered += 1
                check.expect(pdu.remaining <= L2CAPReassembler.maxPDU, "PDU of \(pdu.remaining) bytes beyond the L2CAP maximum")
                check.expect(origin.firstFrame <= frame, "PDU from a future frame")
                decode(pdu, context: context, firstKFrame: flags & 0x80 != 0)
            }
        }
        _ = delivered
    }

    static func decode(_ pdu: ByteReader, context: ATTDisplayContext, firstKFrame: Bool) {
        var display = pdu
        let layers = L2CAPDisplay.decode(pdu: &display, context: context, isFirstKFrame: firstKFrame)
        var text = ""
        let fields = FieldText(options: RenderOptions(showKeys: firstKFrame))
        for layer in layers { fields.render(layer.fields, indent: 8, into: &text) }

        var typed = pdu
        _ = try? L2CAP.decode(&typed)
        guard pdu.remaining >= 4 else { return }
        var payload = pdu
        _ = try? payload.skip(4, "L2CAP header")
        for decoder in 0..<7 {
            var r = payload
            switch decoder {
            case 0: _ = try? ATT.decode(&r)
            case 1: _ = try? SMP.decode(&r)
            case 2: _ = try? L2CAP.decodeSignaling(&r)
            case 3: _ = try? L2CAP.decodeKFrame(&r, isFirstKFrame: firstKFrame)
            case 4: _ = AdvertisingData.parse(r)
            case 5: if case let .list(items) = ADFieldSpec.structures(&r) { for item in items { fields.render(item, indent: 8, into: &text) } }
            default: _ = ATTDisplay.decode(&r, context: context)
            }
        }
    }
}
