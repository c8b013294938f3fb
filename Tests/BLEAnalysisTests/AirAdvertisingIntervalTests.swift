import BLEAnalysis
import BLECapture
import BLEProtocol
import Foundation
import TestSupport
import Testing

/// `adv.interval-short` on advertising captures built here with the nRF Sniffer header (link type 272,
/// protocol 3), whose Timestamp field is the sniffer's clock: one advertiser (C6:05:04:03:02:01) sends
/// ADV_IND on channels 37, 38 and 39, 1 ms apart, in each advertising event. The file's timestamps are
/// 300 µs apart whatever the sniffer clock says, as the host received them in the real nRF captures.
@Suite struct AirAdvertisingIntervalTests {
    static let advertiser: [UInt8] = [0x01, 0x02, 0x03, 0x04, 0x05, 0xC6]

    /// `starts`: each event's start by the sniffer's clock (µs).
    static func capture(_ starts: [UInt32], name: String) throws -> [Finding] {
        let t0: Int64 = 1_700_000_000_000_000
        var packets: [AirCaptureBuilder.Packet] = []
        for start in starts {
            for (k, channel) in [UInt8(37), 38, 39].enumerated() {
                packets.append(.init(time: t0 + Int64(packets.count) * 300, bytes: AirCaptureBuilder.packet(
                    linkType: 272, aa: LinkLayer.advertisingAccessAddress, crcInit: LinkLayer.advertisingCRCInit, header0: 0x40,
                    payload: Self.advertiser + [0x02, 0x01, 0x06], direction: .advertising, channel: channel,
                    snifferTime: start + UInt32(k) * 1_000)))
            }
        }
        let path = try AirCaptureTests.temporary("air_interval_\(name).pcap", AirCaptureBuilder.pcap(linkType: 272, packets))
        return try AirCaptureTests.analyze(path, detect: true).1.filter { $0.rule == "adv.interval-short" }
    }

    @Test func eventsCloserThan20ms() throws {
        // Pairs of events 5 ms apart every 100 ms (as three LEDnetWF controllers in nrf_sniffer_surplife_led_long
        // do, frames 337–343): events at 0, 5, 100, 105, 200, 205 ms: 3 short gaps per channel, 9 in all.
        let f = try Self.capture([0, 5_000, 100_000, 105_000, 200_000, 205_000], name: "pairs")
        #expect(f.count == 1, "\(f.map(\.message))")
        // The gap that reached the threshold (6): the third pair's on channel 39 (frames 9 and 12, events at
        // 100/105 ms), so the report has them decoded; then the shortest: the first 5.0 ms gap, on channel 37
        // (frames 1 and 4).
        #expect(f.first?.frames == [12, 9, 4, 1], "\(f.map(\.message))")
        #expect(f.first?.severity == .info)
        let text = f.first?.message.description ?? ""
        #expect(text.contains("C6:05:04:03:02:01 sent the same advertising packet on the same channel less than 20 ms after the last one 9 times"), "\(text)")
        #expect(text.contains("the shortest: 5.0 ms on channel 37, frames 1 and 4"), "\(text)")
    }

    @Test func counterExamples() throws {
        // Every 20 ms (the least advInterval with no delay): in spec, although the file's timestamps are 300 µs apart.
        #expect(try Self.capture((0 ..< 10).map { UInt32($0) * 20_000 }, name: "twenty").isEmpty)
        // One pair of events 5 ms apart: 3 short gaps (one per channel), fewer than `count` (6): a one-off.
        #expect(try Self.capture([0, 5_000, 100_000], name: "onepair").isEmpty)
        // Events 100 ms apart.
        #expect(try Self.capture([0, 100_000, 200_000], name: "hundred").isEmpty)
    }
}
