import EventGraph
import EventGraphExamples
import Foundation

// Issue 13's two measurements, on seed 002's contacts model (a unique email, an indexed last name):
// 1. a child context's save of 10,000 inserted contacts into its parent, against a root context's save of the same
//    into the store (the child's save encodes and syncs nothing, so the goal is at least 3 times faster);
// 2. a results controller over 10k / 100k / 1M contacts, sectioned by last-name initial and sorted by last name,
//    after another context's save that changes one contact: the time from that save's return to the diff (goal: a
//    median of at most 1 ms, whatever the size of the results).
//
// Usage: NestedContexts [--runs N] [--sizes 10000,100000,1000000] [--changes N]

struct Options {
    var runs = 5
    var sizes = [10_000, 100_000, 1_000_000]
    var changes = 101

    init(_ arguments: [String]) {
        var remaining = arguments.makeIterator()
        while let argument = remaining.next() {
            guard let value = remaining.next() else { fatalError("\(argument) needs a value") }
            switch argument {
            case "--runs": runs = Int(value) ?? runs
            case "--changes": changes = Int(value) ?? changes
            case "--sizes": sizes = value.split(separator: ",").compactMap { Int($0) }
            default: fatalError("unknown option \(argument)")
            }
        }
    }
}

/// The seconds `body` takes, on the monotonic clock.
func seconds(_ body: () throws -> Void) rethrows -> Double {
    let start = ContinuousClock.now
    try body()
    let elapsed = ContinuousClock.now - start
    return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
}

/// Writes a figure at once (`print` to a pipe is buffered until exit, and lost with a crash).
func report(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    return sorted[sorted.count / 2]
}

/// A fresh store file in a temporary directory, removed by `body`'s end.
func withStore<Result>(_ body: (ModelContainer) throws -> Result) throws -> Result {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("nested-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    let container = try ModelContainer(
        path: directory.appendingPathComponent("contacts.eglog").path, model: ContactsModel.model)
    defer { try? container.close() }
    return try body(container)
}

/// Inserts `count` contacts, numbered from `first`, into `context`.
func insertContacts(_ count: Int, from first: Int = 0, into context: ObjectContext) {
    for number in first..<(first + count) {
        let contact = Contact()
        context.insert(contact)
        contact.firstName = "First\(number % 997)"
        contact.lastName = lastName(number)
        contact.lastNameInitial = String(contact.lastName.prefix(1))
        contact.email = "contact\(number)@example.com"
        contact.company = "Company \(number % 101)"
    }
}

/// A last name spread over the alphabet, so that sections and rows are spread too.
func lastName(_ number: Int) -> String {
    let letters = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ")
    var value = UInt64(truncatingIfNeeded: number) &* 0x9E37_79B9_7F4A_7C15
    var name = ""
    for _ in 0..<8 {
        name.append(letters[Int(value % 26)])
        value /= 26
    }
    return name.prefix(1) + name.dropFirst().lowercased()
}

// MARK: - Child save against root save

func childAgainstRootSave(objectCount: Int, runs: Int) throws {
    var childTimes: [Double] = []
    var rootTimes: [Double] = []
    for _ in 0..<runs {
        // Alternating, each on a fresh store, so that neither profits from the other's warm-up.
        try withStore { container in
            let root = container.newBackgroundContext(name: "root")
            let child = root.makeChildContext(name: "worker")
            insertContacts(objectCount, into: child)
            childTimes.append(try seconds { try child.save() })
        }
        try withStore { container in
            let root = container.newBackgroundContext(name: "root")
            insertContacts(objectCount, into: root)
            rootTimes.append(try seconds { try root.save() })
        }
    }
    let child = median(childTimes)
    let root = median(rootTimes)
    report(
        String(
            format: "child save of %d inserts: median %.1f ms; root save (durability .full): median %.1f ms; "
                + "root / child = %.1fx (goal >= 3x)", objectCount, child * 1e3, root * 1e3, root / child))
}

// MARK: - One change reaching a results controller

func resultsControllerLatency(resultCount: Int, changes: Int) throws {
    try withStore { container in
        let writer = container.newBackgroundContext(name: "writer")
        var inserted = 0
        while inserted < resultCount {
            // Batches keep the writer's registered objects (and the benchmark's memory) bounded.
            let batch = min(100_000, resultCount - inserted)
            insertContacts(batch, from: inserted, into: writer)
            try writer.save()
            writer.reset()
            inserted += batch
        }
        let viewer = container.newBackgroundContext(name: "main")
        let descriptor = FetchDescriptor<Contact>(sortBy: [SortDescriptor(\.lastName)])
        let controller = try FetchedResultsController(descriptor, in: viewer, sectionedBy: \.lastNameInitial)
        precondition(controller.fetchedObjects.count == resultCount)
        var generator = SystemRandomNumberGenerator()
        var moveTimes: [Double] = []
        var updateTimes: [Double] = []
        for change in 0..<changes {
            let number = Int.random(in: 0..<resultCount, using: &generator)
            let filter = FetchFilter.equal("email", .string("contact\(number)@example.com"))
            guard let contact = try writer.fetch(FetchDescriptor<Contact>(filter: filter)).first else {
                fatalError("contact \(number) is missing")
            }
            let moves = change % 2 == 0
            if moves {
                // A new last name: the row moves (often to another section).
                contact.lastName = lastName(resultCount + change)
                contact.lastNameInitial = String(contact.lastName.prefix(1))
            } else {
                // Never a company a contact already has: a save that changes nothing is no change.
                contact.company = "Changed \(change)"
            }
            try writer.save()
            var difference: FetchedResultsDifference?
            let elapsed = try seconds { difference = try controller.processPendingChanges() }
            precondition(
                moves ? difference?.movedRows.count == 1 : difference?.updatedRows.count == 1,
                "unexpected difference \(String(describing: difference))")
            if moves { moveTimes.append(elapsed) } else { updateTimes.append(elapsed) }
        }
        report(
            String(
                format: "results controller over %d contacts, one changed object per save: save return -> diff "
                    + "median %.3f ms (row moves), %.3f ms (row updated in place); max %.3f ms", resultCount,
                median(moveTimes) * 1e3, median(updateTimes) * 1e3, (moveTimes + updateTimes).max()! * 1e3))
    }
}

let options = Options(Array(CommandLine.arguments.dropFirst()))
try childAgainstRootSave(objectCount: 10_000, runs: options.runs)
for size in options.sizes {
    try resultsControllerLatency(resultCount: size, changes: options.changes)
}
