import BLECapture
import BLEAnalysis

extension EvidenceCollector {
    /// The collector of the HTML report's extras (the analysis decides what is kept), with the
    /// evidence frames written as `bleanalyze packets` writes them (btmon style, 100 columns).
    public convenience init(analyzer: Analyzer, around: Int = 3, maxDecoded: Int = EvidenceCollector.maxDecodedFrames) {
        let text = PacketText(options: RenderOptions(), width: 100)
        self.init(analyzer: analyzer, around: around, maxDecoded: maxDecoded) { frame, layers, status in
            var s = ""
            text.render(frame, layers: layers, status: status, into: &s)
            return s
        }
    }
}
