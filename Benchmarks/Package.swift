// swift-tools-version: 6.1

import PackageDescription

// Benchmarks live in their own package so that users of EventGraph never build benchmark dependencies.
let package = Package(
    name: "EventGraphBenchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "EventGraph", path: ".."),
        .package(url: "https://github.com/ordo-one/benchmark", from: "1.38.1", traits: ["MallocInterposer"]),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
    ],
    targets: [
        // Plain timing of LogFormat's append, sync and scan paths (issue 2's measurements).
        .executableTarget(
            name: "LogThroughput",
            dependencies: [.product(name: "LogFormat", package: "EventGraph")],
            swiftSettings: [.unsafeFlags(["-Ounchecked"], .when(configuration: .release))]
        ),
        // The shared workload (generated data for the example blog model, which `EventGraphExamples` holds and
        // `egctl demo` also writes) and each engine's implementation of the scenarios: EventGraph through its
        // public API, SQLite through GRDB's records and cached statements, on the same tables and columns.
        .target(
            name: "Workload",
            dependencies: [
                .product(name: "EventGraph", package: "EventGraph"),
                .product(name: "EventGraphExamples", package: "EventGraph"),
                .product(name: "GRDB", package: "GRDB.swift"),
            ]
        ),
        // `Benchmarks/compare`: every scenario for both engines, alternating, medians, table / JSON / SVG.
        .executableTarget(
            name: "EngineComparison",
            dependencies: [
                "Workload", .product(name: "EventGraph", package: "EventGraph"),
                .product(name: "EventGraphExamples", package: "EventGraph"),
            ]
        ),
        // Issue 13: a child context's save against a root save, and a results controller's latency per change
        // (`swift run -c release --package-path Benchmarks NestedContexts`).
        .executableTarget(
            name: "NestedContexts",
            dependencies: [
                .product(name: "EventGraph", package: "EventGraph"),
                .product(name: "EventGraphExamples", package: "EventGraph"),
            ]
        ),
        // package-benchmark micro-benchmarks with allocation counts:
        // `swift package --package-path Benchmarks benchmark`.
        .executableTarget(
            name: "Persistence",
            dependencies: [
                "Workload",
                .product(name: "EventGraphExamples", package: "EventGraph"),
                .product(name: "Benchmark", package: "benchmark"),
            ],
            path: "Benchmarks/Persistence",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
    ],
    swiftLanguageModes: [.v6]
)
