import Testing
import BLEBytes
@testable import BLEProtocol

/// Malformed input through `HCIDecoder.decode` (STYLE.md 6.5, 6.7): every prefix of every vector,
/// lying length fields, seeded random buffers. Decoded, unknown or malformed — never a trap.
@Suite("HCI decoder robustness")
struct HCIRobustnessTests {
    /// Index of the parameter length field in each packet type's header, and its width.
    static func lengthField(_ type: HCIPacketType) -> (index: Int, width: Int) {
        switch type {
        case .command: (2, 1)
        case .event: (1, 1)
        case .acl, .iso: (2, 2)
        case .sco: (2, 1)
        }
    }

    @Test(arguments: HCIVectors.decoded)
    func everyPrefixDecodesWithoutTrapping(_ v: HCIVector) {
        let bytes = v.bytes
        for n in 0..<bytes.count {
            let prefix = Array(bytes[..<n])
            let cut = HCITest.decode(v.type, prefix)
            #expect(cut.error != nil, "prefix of \(n) bytes decoded without error")
            if let offset = cut.error?.offset { #expect((0...n).contains(offset)) }
            // The capture kept only `n` bytes of a longer packet: a note, never a trap.
            let snapped = HCITest.decode(v.type, prefix, originalLength: bytes.count)
            let header = Self.lengthField(v.type).index + Self.lengthField(v.type).width
            if n >= header {
                #expect(snapped.notes.contains { $0.hasPrefix("capture kept") }, "prefix \(n): \(snapped.notes)")
                #expect(snapped.error?.kind != .lengthMismatch(declared: bytes.count - header, actual: n - header))
            } else {
                #expect(snapped.error != nil)
            }
        }
    }

    /// A length field that lies (larger or smaller than the bytes) gives an error or a trailing-bytes note.
    @Test(arguments: HCIVectors.decoded)
    func lyingLengthsAreReported(_ v: HCIVector) {
        let bytes = v.bytes
        let (index, _) = Self.lengthField(v.type)
        let actual = Int(bytes[index])
        for declared in Set([0, 1, actual / 2, max(0, actual - 1), actual + 1, actual + 2, 255]) where declared != actual && declared <= 255 {
            var lying = bytes
            lying[index] = UInt8(declared)
            let layer = HCITest.decode(v.type, lying)
            #expect(layer.error != nil || !layer.notes.isEmpty, "plen \(declared) for \(actual) bytes went unnoticed")
            if declared > actual {
                #expect(layer.error?.kind == .lengthMismatch(declared: declared, actual: actual))
            } else {
                #expect(layer.notes.contains { $0.contains("after the packet") }, "plen \(declared): \(layer.notes)")
            }
        }
    }

    /// 10 000 seeded random buffers per packet type through the dispatcher: decoded, unknown or
    /// malformed, never a trap, and any error points inside the buffer.
    @Test(arguments: [HCIPacketType.command, .event, .acl, .sco, .iso])
    func randomBuffersNeverTrap(_ type: HCIPacketType) {
        var rng = HCITestSplitMix64(seed: 0xB1E_A4A1 &+ UInt64(type.rawValue))
        for _ in 0..<10_000 {
            let count = Int(rng.next() % 300)
            let bytes = (0..<count).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
            let layer = HCITest.decode(type, bytes, originalLength: rng.next() % 4 == 0 ? count + 10 : nil)
            if let offset = layer.error?.offset { #expect((0...count).contains(offset)) }
        }
    }

    /// Random parameters behind a coherent header for every table row, so each row's specs see
    /// garbage: counts that overrun, lengths that lie, truncated structures.
    @Test func randomParametersForEveryRowNeverTrap() {
        var rng = HCITestSplitMix64(seed: 0x5EED)
        func random(_ n: Int) -> [UInt8] { (0..<n).map { _ in UInt8(truncatingIfNeeded: rng.next()) } }
        for _ in 0..<10 {
            for e in HCIDecoder.commands.entries {
                let n = Int(rng.next() % 64)
                _ = HCITest.decode(.command, [UInt8(e.code & 0xFF), UInt8(e.code >> 8), UInt8(n)] + random(n))
                let m = Int(rng.next() % 64)
                _ = HCITest.decode(.event, [0x0E, UInt8(m + 3), 1, UInt8(e.code & 0xFF), UInt8(e.code >> 8)] + random(m))
            }
            for e in HCIDecoder.events.entries {
                let n = Int(rng.next() % 255)
                _ = HCITest.decode(.event, [UInt8(e.code), UInt8(n)] + random(n))
            }
            for e in HCIDecoder.leMeta.entries {
                let n = Int(rng.next() % 254)
                let layer = HCITest.decode(.event, [0x3E, UInt8(n + 1), UInt8(e.code)] + random(n))
                if let offset = layer.error?.offset { #expect((0...(n + 3)).contains(offset)) }
            }
        }
    }
}
