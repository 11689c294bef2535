import EventGraph
import Foundation
import Synchronization
import TestSupport

#if canImport(Glibc)
    import Glibc
#endif

/// The process that `KillNine drive` kills: opens the store through ``ModelContainer`` and saves until it dies.
///
/// Several writer threads, each with its own context, save concurrently with `.full` durability (so their syncs are
/// grouped), the main thread compacts the store now and then, and the store checkpoints itself on its own thread
/// every few dozen transactions (a seeded ``Saver/automaticCheckpointTransactionCount``), beside the saves. Every
/// line on stdout is one `write(2)`, so a line the driver reads was complete before the kill:
///
///     open                                   opening (and recovering) the store
///     ready TXN                              opened; TXN is the last committed transaction
///     ack WRITER SEQUENCE TXN FINGERPRINT    a save returned: it is durable and must survive
///     compact-begin / compact-end TXN        a compaction started / returned
///     checkpoint-begin / checkpoint-end TXN  an automatic checkpoint started / is in place
struct Saver {
    var storePath: String
    var writerCount: Int
    var seed: UInt64

    /// The automatic checkpoint's threshold, 20 to 120 transactions by the seed: small, so that checkpoints run
    /// beside the saves many times a cycle and kills land in them.
    var automaticCheckpointTransactionCount: Int {
        var random = SeededGenerator(seed: seed ^ 0x6368_6563_6b70_7431)
        return Int.random(in: 20...120, using: &random)
    }

    func run() -> Never {
        Output.line("open")
        let container: ModelContainer
        do {
            var configuration = ModelContainer.Configuration(durability: .full)
            configuration.automaticCheckpointTransactionCount = automaticCheckpointTransactionCount
            container = try ModelContainer(path: storePath, model: Ledger.model, configuration: configuration)
        } catch {
            Output.fail("cannot open \(storePath): \(error)")
        }
        container.observeAutomaticCheckpoints { event in
            switch event {
            case .began: Output.line("checkpoint-begin")
            case .ended(let lastTransactionID): Output.line("checkpoint-end \(lastTransactionID)")
            case .cancelled: Output.fail("the automatic checkpoint was cancelled, but the store never closes")
            case .failed(let error): Output.fail("the automatic checkpoint failed: \(error)")
            }
        }
        Output.line("ready \(container.lastTransactionID)")
        for writer in 1...writerCount {
            let thread = Thread { Self.save(writer: Int32(writer), in: container) }
            thread.start()
        }
        compactForever(container)
    }

    /// Saves writer `writer`'s next entries, one per transaction, until the process is killed.
    private static func save(writer: Int32, in container: ModelContainer) {
        let context = container.newBackgroundContext(name: "writer \(writer)")
        let tally: Tally
        do {
            tally = try context.fetchOrInsert(Tally.self, unique: \.writer, equals: writer)
        } catch {
            Output.fail("writer \(writer) cannot find its tally: \(error)")
        }
        var sequence = tally.lastSequence
        var previous: Entry?
        if sequence > 0 {
            let key = Ledger.key(writer: writer, sequence: sequence)
            do {
                previous = try context.fetch(FetchDescriptor<Entry>(predicate: #Predicate { $0.key == key })).first
            } catch {
                Output.fail("writer \(writer) cannot fetch entry \(sequence): \(error)")
            }
            guard previous != nil else {
                Output.fail("writer \(writer)'s tally says \(sequence) but its entry \(sequence) is missing")
            }
        }
        while true {
            sequence += 1
            let entry = Entry()
            context.insert(entry)
            entry.key = Ledger.key(writer: writer, sequence: sequence)
            entry.writer = writer
            entry.sequence = sequence
            entry.text = Ledger.text(writer: writer, sequence: sequence)
            entry.payload = Ledger.payload(writer: writer, sequence: sequence)
            entry.previous = previous
            tally.lastSequence = sequence
            do {
                try context.save()
            } catch {
                Output.fail("writer \(writer) cannot save entry \(sequence): \(error)")
            }
            // The transaction is at most the store's last one now (the bound the driver needs for power loss).
            let fingerprint = Ledger.fingerprint(writer: writer, sequence: sequence)
            Output.line("ack \(writer) \(sequence) \(container.lastTransactionID) \(fingerprint)")
            previous = entry
        }
    }

    /// Compacts the store at seeded random intervals; exits when the driver is gone (the saver is re-parented).
    private func compactForever(_ container: ModelContainer) -> Never {
        var random = SeededGenerator(seed: seed)
        let driver = getppid()
        while true {
            usleep(UInt32.random(in: 100_000...1_000_000, using: &random))
            if getppid() != driver { exit(0) }
            Output.line("compact-begin")
            do {
                let report = try container.compact()
                Output.line("compact-end \(report.lastTransactionID)")
            } catch {
                Output.fail("compaction failed: \(error)")
            }
        }
    }
}

/// Unbuffered output: each line is one `write(2)` (atomic on a pipe below `PIPE_BUF`), so nothing is lost in a
/// buffer when the process is killed and lines of several threads never interleave.
enum Output {
    static func line(_ text: String, to descriptor: Int32 = 1) {
        var bytes = Array((text + "\n").utf8)
        var written = 0
        while written < bytes.count {
            let result = bytes.withUnsafeMutableBytes {
                write(descriptor, $0.baseAddress! + written, $0.count - written)
            }
            if result < 0 && errno == EINTR { continue }
            guard result > 0 else { exit(5) }
            written += result
        }
    }

    static func fail(_ message: String) -> Never {
        line("KillNine save: \(message)", to: 2)
        exit(4)
    }
}
