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

    /// Runs in the child: opens the store, fetches one post, prints an `OpenResult` as JSON.
    /// With `openOnly`, it opens and closes the store without fetching (memory after open alone).
    static func openStore(
        engine: any StoreEngine.Type, path: String, identity: Int64, cold: Bool, openOnly: Bool = false
    )
        throws
    {
        let files = engine.storeFiles(at: path)
        if cold { dropFromPageCache(files) }
        let (cachedPages, totalPages) = cachedPageCounts(files)
        let (seconds, title) =
            openOnly
            ? (try engine.openOnly(path: path), "") : try engine.openAndFirstFetch(path: path, identity: identity)
        let result = OpenResult(
            seconds: seconds, peakResidentBytes: peakResidentBytes(), title: title, cachedPages: cachedPages,
            totalPages: totalPages)
        let data = try JSONEncoder().encode(result)
        FileHandle.standardOutput.write(data + Data("\n".utf8))
    }

    /// Runs in the parent: starts the child and decodes its result.
    static func measureOpen(
        engine: any StoreEngine.Type, path: String, identity: Int64, cold: Bool, openOnly: Bool = false
    ) throws -> OpenResult {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        process.arguments =
            ["open-store", "--engine", engine.name, "--path", path, "--identity", String(identity)]
            + (cold ? ["--cold"] : []) + (openOnly ? ["--open-only"] : [])
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
