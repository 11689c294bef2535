// swift-tools-version: 6.1

import PackageDescription

// Upcoming features enabled for every Swift target in one place.
let swiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("InternalImportsByDefault"),
    .enableUpcomingFeature("MemberImportVisibility"),
]

let package = Package(
    name: "EventGraph",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "EventGraph", targets: ["EventGraph"]),
        .library(name: "LogFormat", targets: ["LogFormat"]),
        .executable(name: "egctl", targets: ["egctl"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0")
    ],
    targets: [
        // liblz4 from the system (Debian: liblz4-dev; Homebrew: lz4).
        .systemLibrary(
            name: "CLZ4",
            pkgConfig: "liblz4",
            providers: [.apt(["liblz4-dev"]), .brew(["lz4"])]
        ),
        // CRC32C (Castagnoli) with SSE4.2 where the CPU has it and a table fallback.
        .target(name: "CCRC32C"),
        .target(
            name: "LogFormat",
            dependencies: ["CLZ4", "CCRC32C"],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "EventGraph",
            dependencies: ["LogFormat"],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "egctl",
            dependencies: [
                "EventGraph",
                "LogFormat",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "LogFormatTests",
            dependencies: ["LogFormat"],
            resources: [.copy("Golden")],
            swiftSettings: swiftSettings
        ),
        // The seed applications (blog, photos) as library code that EventGraphTests exercises.
        .target(
            name: "EventGraphExamples",
            dependencies: ["EventGraph"],
            path: "Examples",
            swiftSettings: swiftSettings
        ),
        // A second process for tests that need a fresh launch of an app, a library open that must not trap, or a
        // child's own peak memory (not a product).
        .executableTarget(
            name: "StoreProbe",
            dependencies: ["EventGraph", "EventGraphExamples"],
            path: "Tests/StoreProbe",
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "EventGraphTests",
            dependencies: ["EventGraph", "EventGraphExamples", "StoreProbe"],
            swiftSettings: swiftSettings
        ),
        // End-to-end tests of the built `egctl` and `StoreProbe` (the dependencies make SwiftPM build them first).
        .testTarget(
            name: "EgctlTests",
            dependencies: ["egctl", "StoreProbe", "EventGraph", "EventGraphExamples", "LogFormat"],
            swiftSettings: swiftSettings
        ),
    ],
    swiftLanguageModes: [.v6]
)
