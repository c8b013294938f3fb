import TestSupport
import Foundation
import Testing

/// `make install` of the static release binary, checked by `make install-check`'s script: installed
/// under a temporary DESTDIR, run with an empty environment (no Swift on PATH or LD_LIBRARY_PATH),
/// ldd showing no Swift library, the frame count right from a file and from a pipe, then
/// `make uninstall`. The release build takes minutes, so this test uses one that exists
/// (`make static`) and is skipped without it.
@Suite struct InstallTests {
    static let staticBinary = Repo.root.appendingPathComponent(".build-static/release/bleanalyze").path

    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: staticBinary), "no static release build: `make static` (minutes) enables this test"),
          .enabled(if: Tool.available("ldd", ["--version"]) && Tool.available("make", ["--version"]), "needs ldd and make (Linux)"))
    func installedBinaryRunsWithoutSwift() throws {
        let (status, text) = try Tool.outcome(URL(fileURLWithPath: "/bin/bash"),
                                              [Repo.root.appendingPathComponent("scripts/install-check.sh").path], in: Repo.root)
        #expect(status == 0, "\(text)")
        #expect(text.contains("install-check: OK"), "\(text)")
        #expect(text.contains("libpcap"), "libpcap stays a shared library: \(text)")
    }
}
