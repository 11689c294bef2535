// A second launch of an app, for tests that must cross a process boundary (a model's dynamic defaults are computed
// once per process). Not a product: `swift build` builds it for the tests only.
//
//   StoreProbe write-dynamic|read-dynamic|write-photos|read-photos PATH
//     Each command prints one line per object (its values) and exits 0, or prints the error and exits 1.
//
//   StoreProbe open|open-insert PATH
//     Opens PATH with the model recorded in its log (as a tool would) and prints `opened last-transaction N`
//     and `state-digest D` (the library's digest, which `egctl replay --summary` must agree with);
//     `open-insert` also inserts an object of the first concrete entity, saves, and prints `saved …`. Exits 0, or
//     prints the error and exits 1. Crafted-file tests use it: the library must answer, never trap.
//
//   StoreProbe migrate-blog|migrate-blog-live|migrate-blog-dry|migrate-blog-dry-strict PATH
//     Migrates a blog store (`egctl demo`) to `BlogV2` (a renamed and an added attribute), with history, live state
//     only, or as a dry run, and prints the seconds it took (the migration benchmark in BENCHMARKS.md), then the
//     validation failures a dry run found; `-dry-strict` is a dry run to `BlogV2Strict`, whose rule every post breaks.
//
//   StoreProbe changes-after-N PATH
//     Opens PATH with its recorded model and prints one line per transaction of the change feed after N:
//     `transaction ID AUTHOR` and, per change, `  KIND Entity/key key=old→new …` (sorted keys). Exits 0, or prints
//     the error and exits 1.
//
//   StoreProbe measure REPORT PROGRAM [ARGUMENT…]
//     Runs PROGRAM, waits for it with `wait4`, and writes `exit N` or `signal N`, then `peak-resident-bytes N`, to
//     the file REPORT. A test process cannot measure its children itself: a child's `ru_maxrss` starts at the
//     high-water mark of the process that executed it, and a test process is large. This one is small (it adds
//     its own few megabytes, so the figure is an upper bound).
import EventGraph
import EventGraphExamples
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// One attribute of every type whose default is computed anew for each object.
final class DynamicDefaults: ManagedObject {
    @Attribute var int16 = Int16.random(in: .min ... .max)
    @Attribute var int32 = Int32.random(in: .min ... .max)
    @Attribute var int64 = Int64.random(in: .min ... .max)
    @Attribute var double = Double.random(in: -1e9...1e9)
    @Attribute var float = Float.random(in: -1e9...1e9)
    @Attribute var bool = Bool.random()
    @Attribute var string = UUID().uuidString
    @Attribute var date = Date()
    @Attribute var uuid = UUID()
    @Attribute var url = URL(string: "https://example.com/\(UUID().uuidString)")!
    @Attribute var decimal = Decimal(Int.random(in: 0 ... .max)) / 1000
    @Attribute var data = Data(UUID().uuidString.utf8)
    @Attribute var optionalDate: Date? = Date()

    var line: String {
        "\(int16) \(int32) \(int64) \(double) \(float) \(bool) \(string) \(date.timeIntervalSinceReferenceDate) "
            + "\(uuid) \(url) \(decimal) \(data.base64EncodedString()) "
            + "\(optionalDate.map { "\($0.timeIntervalSinceReferenceDate)" } ?? "nil")"
    }
}

func run(_ command: String, path: String) throws {
    switch command {
    case "write-dynamic", "read-dynamic":
        let model = try ObjectModel(name: "Dynamic", version: "1", types: [DynamicDefaults.self])
        let container = try ModelContainer(path: path, model: model)
        let context = container.newBackgroundContext()
        if command == "write-dynamic" {
            context.insert(DynamicDefaults())
            try context.save()
        }
        for object in try context.fetch(FetchDescriptor<DynamicDefaults>()) { print(object.line) }
        try container.close()
    case "write-photos", "read-photos":
        let container = try PhotoLocations.open(path: path)
        let context = container.newBackgroundContext()
        if command == "write-photos" {
            PhotoLocations.addEvent(
                latitude: 48.85, longitude: 2.35, image: .filled(width: 64, height: 64, level: 7), in: context)
            let plain = Event()
            context.insert(plain)  // keeps its default time stamp, the `Date()` of this process
            try context.save()
        }
        for event in try PhotoLocations.events(in: context) {
            print(
                "\(event.timeStamp.timeIntervalSinceReferenceDate) \(event.latitude) \(event.longitude) "
                    + "\(event.photo?.image?.pixels.count ?? 0)")
        }
        try container.close()
    case "open", "open-insert":
        let container = try ModelContainer(path: path)
        print("opened last-transaction \(container.lastTransactionID)")
        print("state-digest \(try container.stateDigest())")
        if command == "open-insert", let entity = container.model.entities.first(where: { !$0.isAbstract }) {
            let context = container.newBackgroundContext()
            context.insert(entityNamed: entity.name)
            try context.save()
            print("saved last-transaction \(container.lastTransactionID)")
        }
        try container.close()
    case "migrate-blog", "migrate-blog-live", "migrate-blog-dry", "migrate-blog-dry-strict":
        // The migration benchmark (BENCHMARKS.md): a blog store (`egctl demo`) to blog version 2.
        let started = DispatchTime.now().uptimeNanoseconds
        let options = StoreMigration.Options(historyMode: command == "migrate-blog-live" ? .liveState : .full)
        let report =
            command == "migrate-blog-dry-strict"
            ? try StoreMigration.dryRun(path: path, to: BlogV2Strict.model, options: options)
            : command == "migrate-blog-dry"
                ? try StoreMigration.dryRun(path: path, to: BlogV2.model, options: options)
                : try StoreMigration.migrate(path: path, to: BlogV2.model, options: options)
        let seconds = Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9
        print("\(command) \(report.transactionCount) transactions \(report.targetByteCount) bytes \(seconds) s")
        for failure in report.validationFailures { print("invalid: \(failure)") }
    case _ where command.hasPrefix("changes-after-"):
        guard let after = UInt64(command.dropFirst("changes-after-".count)) else {
            throw EventGraphError(.invalidArgument, "'\(command)' does not end in a transaction ID")
        }
        let container = try ModelContainer(path: path)
        for transaction in try container.changes(after: after) {
            print("transaction \(transaction.transactionID) \(transaction.author)")
            for change in transaction.changes {
                let values = change.changedKeys.union(change.oldValues.keys).sorted().map { key in
                    "\(key)=\(change.oldValues[key]?.description ?? "-")→\(change.values[key]?.description ?? "-")"
                }
                let object = "\(change.objectID.entityName)/\(change.objectID.key)"
                print("  \(change.kind) \(object) " + values.joined(separator: " "))
            }
        }
        try container.close()
    default:
        throw EventGraphError(.invalidArgument, "unknown command '\(command)'")
    }
}

/// `measure REPORT PROGRAM [ARGUMENT…]`: the child's exit and its own peak resident memory, written to REPORT.
func measure(report: String, _ program: [String]) -> Int32 {
    let argv = program.map { strdup($0) } + [nil]
    defer { for pointer in argv { free(pointer) } }
    var pid: pid_t = 0
    let spawned = posix_spawn(&pid, program[0], nil, nil, argv, environ)
    guard spawned == 0 else {
        FileHandle.standardError.write(Data("StoreProbe: cannot run \(program[0]): error \(spawned)\n".utf8))
        return 2
    }
    var status: Int32 = 0
    var usage = rusage()
    while wait4(pid, &status, 0, &usage) < 0 && errno == EINTR {}
    let signal = status & 0x7F
    let end = signal != 0 ? "signal \(signal)" : "exit \((status >> 8) & 0xFF)"
    let text = "\(end)\npeak-resident-bytes \(Int(usage.ru_maxrss) * 1024)\n"  // Linux reports kilobytes
    return FileManager.default.createFile(atPath: report, contents: Data(text.utf8)) ? 0 : 2
}

let arguments = CommandLine.arguments
if arguments.count >= 4, arguments[1] == "measure" {
    exit(measure(report: arguments[2], Array(arguments.dropFirst(3))))
}
guard arguments.count == 3 else {
    FileHandle.standardError.write(Data("usage: StoreProbe COMMAND PATH\n".utf8))
    exit(2)
}
do {
    try run(arguments[1], path: arguments[2])
} catch {
    print("error: \(error)")
    exit(1)
}
