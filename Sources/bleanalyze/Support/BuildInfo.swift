/// What `bleanalyze --version` prints: the release version and the commit the binary was built from.
///
/// `version` is the one place the version lives (the Makefile reads it for `make dist`). The commit
/// comes from `BuildInfo.generated.swift`, which `make static`/`make release` write from
/// `git describe --always --dirty` and compile with `-D BLEANALYZE_BUILDINFO` (the file is gitignored,
/// so a build never dirties the tree). A plain `swift build` ignores that file and says `unknown`.
enum BuildInfo {
    static let version = "0.1.0"
    static var versionLine: String { "\(version) (commit \(commit))" }
}

#if !BLEANALYZE_BUILDINFO
extension BuildInfo {
    static let commit = "unknown"
}
#endif
