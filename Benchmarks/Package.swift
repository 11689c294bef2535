// swift-tools-version: 6.1

import PackageDescription

// Benchmarks live in their own package so that users of EventGraph never build benchmark dependencies.
let package = Package(
    name: "EventGraphBenchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "EventGraph", path: "..")
    ],
    targets: [
        // Plain timing of LogFormat's append, sync and scan paths (issue 2's measurements).
        .executableTarget(
            name: "LogThroughput",
            dependencies: [.product(name: "LogFormat", package: "EventGraph")],
            swiftSettings: [.unsafeFlags(["-Ounchecked"], .when(configuration: .release))]
        )
    ],
    swiftLanguageModes: [.v6]
)
