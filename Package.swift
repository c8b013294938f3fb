// swift-tools-version: 6.0
// bleanalyze — Bluetooth HCI captures turned into answers. See README.md and docs/ARCHITECTURE.md (the targets and what each holds).
import PackageDescription

// No unsafe flags on any target: a package that depends on BLEProtocol by version must be able to
// build it. The analysis pass's hot class properties opt out of dynamic exclusivity checks one by one
// (`@exclusivity(unchecked)`; docs/PERFORMANCE.md "Exclusivity checks").

let package = Package(
    name: "bleanalyze",
    platforms: [.macOS(.v13)],
    products: [
        .executable(name: "bleanalyze", targets: ["bleanalyze"]),
        .library(name: "BLEProtocol", targets: ["BLEProtocol"]),
        .library(name: "BLECapture", targets: ["BLECapture"]),
        .library(name: "BLEAnalysis", targets: ["BLEAnalysis"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
    ],
    targets: [
        .systemLibrary(name: "CPcap", pkgConfig: "libpcap",
                       providers: [.apt(["libpcap-dev"]), .brew(["libpcap"])]),
        .systemLibrary(name: "CZlib", pkgConfig: "zlib",
                       providers: [.apt(["zlib1g-dev"]), .brew(["zlib"])]),
        // Field logs (bugreport zip, sysdiagnose tar.gz): read through libarchive, never hand-written inflate.
        .systemLibrary(name: "CArchive", pkgConfig: "libarchive",
                       providers: [.apt(["libarchive-dev"]), .brew(["libarchive"])]),
        // Linux-only (HCI user channel sockets): depended on with `condition: .when(platforms: [.linux])`
        // so the package also builds on macOS, where libpcap and zlib exist but libbluetooth does not.
        .systemLibrary(name: "CBluetooth", pkgConfig: "bluez",
                       providers: [.apt(["libbluetooth-dev"])]),
        // Linux: OpenSSL's libcrypto for the twin's pairing (AES-128; P-256 ECDH and AES-CMAC for LE Secure
        // Connections) and SHA-256 of capture files (`check --jsonl`); macOS uses CommonCrypto for AES and
        // SHA-256 and has no Secure Connections pairing.
        .systemLibrary(name: "CCrypto", pkgConfig: "libcrypto",
                       providers: [.apt(["libssl-dev"])]),

        // SIGBUS guard for memory-mapped captures that shrink while read (C: a signal handler).
        .target(name: "CFileGuard"),
        .target(name: "BLEBytes", dependencies: ["CFileGuard"]),
        .target(name: "BLECapture", dependencies: ["BLEBytes", "CPcap", "CZlib", "CArchive"]),
        .target(name: "BLEProtocol", dependencies: ["BLEBytes"]),
        .target(name: "BLEAnalysis", dependencies: ["BLEBytes", "BLECapture", "BLEProtocol"]),
        .target(name: "BLEReport", dependencies: ["BLEBytes", "BLECapture", "BLEProtocol", "BLEAnalysis"]),
        .target(name: "BLEReplay", dependencies: [
            "BLEBytes", "BLECapture", "BLEProtocol", "BLEAnalysis",
            .target(name: "CBluetooth", condition: .when(platforms: [.linux])),
            .target(name: "CCrypto", condition: .when(platforms: [.linux])),
        ]),
        .executableTarget(name: "bleanalyze", dependencies: [
            "BLEBytes", "BLECapture", "BLEProtocol", "BLEAnalysis", "BLEReport", "BLEReplay",
            .target(name: "CCrypto", condition: .when(platforms: [.linux])),
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
        ]),
        // Fuzz harnesses: a corpus-replay runner in normal builds, a libFuzzer binary with
        // `-sanitize=fuzzer,address -DFUZZ_DRIVER` (scripts/fuzz.sh, `make fuzz`).
        .executableTarget(name: "Fuzz", dependencies: ["BLEBytes", "BLECapture", "BLEProtocol", "BLEAnalysis", "BLEReport"]),

        // Shared by every test target: repository paths, running tools and the project's binaries, a seeded
        // generator, the one builder of HCI captures (CaptureBuilder).
        .target(name: "TestSupport", dependencies: ["BLECapture"], path: "Tests/TestSupport"),
        .testTarget(name: "BLEBytesTests", dependencies: ["BLEBytes"]),
        .testTarget(name: "BLECaptureTests", dependencies: ["TestSupport", "BLECapture", "BLEBytes"]),
        .testTarget(name: "BLEProtocolTests", dependencies: ["TestSupport", "BLEProtocol", "BLEBytes"]),
        .testTarget(name: "BLEAnalysisTests", dependencies: ["TestSupport", "BLEAnalysis", "BLECapture", "BLEProtocol", "BLEBytes"]),
        .testTarget(name: "BLEReplayTests", dependencies: ["TestSupport", "BLEReplay", "BLECapture", "BLEProtocol", "BLEBytes"]),
        .testTarget(name: "CLITests", dependencies: ["TestSupport", "BLECapture", "BLEBytes"]),
        .testTarget(name: "ReportTests", dependencies: ["TestSupport", "BLEReport", "BLEAnalysis", "BLECapture", "BLEProtocol", "BLEBytes"]),
        .testTarget(name: "FuzzRegressionTests", dependencies: ["TestSupport", "BLEAnalysis", "BLECapture", "BLEProtocol", "BLEBytes"]),
        // Redaction (`redact`, its oracle over every capture) and `export`.
        .testTarget(name: "RedactionTests", dependencies: ["TestSupport", "BLEAnalysis", "BLECapture", "BLEProtocol", "BLEBytes"]),
    ]
)
