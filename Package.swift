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
        // The seed applications' models (blog, photos) and a seeded generator, for egctl's demo store and the
        // nested Benchmarks package: a package can use another's targets only through a product, and a library
        // product is built only by packages that name it, so apps that use `EventGraph` never build this one.
        .library(name: "EventGraphExamples", targets: ["EventGraphExamples"]),
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
        // A prefetch hint (`__builtin_prefetch`), which Swift does not expose: lookups by ID overlap their misses.
        .target(name: "CPrefetch"),
        // The C heap's top chunk (`mallinfo2`, whose struct Swift cannot take by value): egctl prefaults it.
        .target(name: "CHeap"),
        // `sync_file_range` (a GNU extension Swift's Glibc module hides): a rewrite starts its new file's writeback
        // as it writes, so that the sync at its end waits for less.
        .target(name: "CWriteback"),
        .target(
            name: "LogFormat",
            dependencies: ["CLZ4", "CCRC32C", "CWriteback"],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "EventGraph",
            dependencies: ["LogFormat", "CPrefetch"],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "egctl",
            dependencies: [
                "CHeap",
                "EventGraph",
                "EventGraphExamples",
                "LogFormat",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: swiftSettings
        ),
        // What every test target and harness shares: the seeded generator.
        .target(name: "TestSupport", path: "Tests/TestSupport", swiftSettings: swiftSettings),
        .testTarget(
            name: "LogFormatTests",
            dependencies: ["LogFormat", "TestSupport"],
            resources: [.copy("Golden")],
            swiftSettings: swiftSettings
        ),
        // The seed applications (blog, photos) as library code that EventGraphTests exercises.
        .target(
            name: "EventGraphExamples",
            dependencies: ["EventGraph"],
            path: "Examples",
            exclude: ["Contacts/Samples", "ContactsApp"],
            swiftSettings: swiftSettings
        ),
        // Seed 002 as a command: imports XML feeds through worker contexts (`swift run contacts-import`).
        .executableTarget(
            name: "contacts-import",
            dependencies: ["EventGraph", "EventGraphExamples"],
            path: "Examples/ContactsApp",
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
            dependencies: ["EventGraph", "EventGraphExamples", "KillNine", "LogFormat", "StoreProbe", "TestSupport"],
            swiftSettings: swiftSettings
        ),
        // End-to-end tests of the built `egctl` and `StoreProbe` (the dependencies make SwiftPM build them first).
        .testTarget(
            name: "EgctlTests",
            dependencies: ["egctl", "StoreProbe", "EventGraph", "EventGraphExamples", "LogFormat"],
            swiftSettings: swiftSettings
        ),
        // Harnesses that keep issue 9 fixed (Docs/Testing.md); none is a product, so apps never build them.
        // kill -9 cycles through the library: `KillNine save` writes, `KillNine drive` kills it and checks.
        .executableTarget(
            name: "KillNine",
            dependencies: ["EventGraph", "LogFormat", "TestSupport"],
            path: "Tests/KillNine",
            swiftSettings: swiftSettings
        ),
        // The fuzz entry points, compiled by every build without the fuzzer; `scripts/fuzz` links them with libFuzzer
        // through `EventGraphFuzz`, and `FuzzCorpusTests` replays the checked-in corpus and findings through them.
        .target(
            name: "FuzzTargets",
            dependencies: ["EventGraph", "LogFormat"],
            path: "Tests/Fuzz/Targets",
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "EventGraphFuzz",
            dependencies: ["FuzzTargets"],
            path: "Tests/Fuzz/Main",
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "FuzzCorpusTests",
            dependencies: ["FuzzTargets"],
            swiftSettings: swiftSettings
        ),
    ],
    swiftLanguageModes: [.v6]
)
