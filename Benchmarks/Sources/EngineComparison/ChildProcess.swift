import Foundation
import Workload

/// Scenarios 7 and 10 run in a child process per measurement (the comparison executable re-invoked with the
/// hidden subcommand `open-store`), so that each engine's peak resident memory is its own.
enum ChildProcess {
    struct OpenResult: Codable {
        var seconds: Double
        var peakResidentBytes: Int
        var title: String
        /// Pages of the store's files in the page cache just before the open, and their total.
        var cachedPages: Int
        var totalPages: Int
    }

    /// What the child does after opening the store.
    enum Work: String {
        /// Fetch one post by its unique key (`open-1m`, `memory-1m`); its title is the result's `title`.
        case firstFetch = "first-fetch"
        /// Nothing: open and close (`memory-open`).
        case openOnly = "open-only"
        /// Fetch every post, reading every attribute (`memory-fetch-all`); the checksum is the result's `title`.
        case fetchAll = "fetch-all"
    }

    /// Runs in the child: opens the store, does `work`, prints an `OpenResult` as JSON.
    static func openStore(
        engine: any StoreEngine.Type, path: String, identity: Int64, cold: Bool, work: Work = .firstFetch
    )
        throws
    {
        let files = engine.storeFiles(at: path)
        if cold { dropFromPageCache(files) }
        let (cachedPages, totalPages) = cachedPageCounts(files)
        let seconds: Double
        let title: String
        switch work {
        case .firstFetch: (seconds, title) = try engine.openAndFirstFetch(path: path, identity: identity)
        case .openOnly: (seconds, title) = (try engine.openOnly(path: path), "")
        case .fetchAll:
            let result = try engine.openAndFetchAll(path: path)
            (seconds, title) = (result.seconds, String(result.checksum))
        }
        let result = OpenResult(
            seconds: seconds, peakResidentBytes: peakResidentBytes(), title: title, cachedPages: cachedPages,
            totalPages: totalPages)
        let data = try JSONEncoder().encode(result)
        FileHandle.standardOutput.write(data + Data("\n".utf8))
    }

    /// Runs in the parent: starts the child and decodes its result.
    static func measureOpen(
        engine: any StoreEngine.Type, path: String, identity: Int64, cold: Bool, work: Work = .firstFetch
    ) throws -> OpenResult {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        process.arguments =
            ["open-store", "--engine", engine.name, "--path", path, "--identity", String(identity)]
            + (cold ? ["--cold"] : []) + ["--work", work.rawValue]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw WorkloadError("the open-store child for \(engine.name) exited with \(process.terminationStatus)")
        }
        return try JSONDecoder().decode(OpenResult.self, from: data)
    }
}

func engine(named name: String) -> (any StoreEngine.Type)? {
    [EventGraphEngine.self, GRDBEngine.self].first { $0.name.lowercased() == name.lowercased() }
}
