// A tiny program for tests that check what opening a store costs, in a child process. Not a product.
//
//   OpenProbe open STORE [insert]
//     Opens STORE with the model recorded in its log and prints `opened last-transaction N`; with `insert`, also
//     inserts an object of the first concrete entity, saves, and prints `saved last-transaction N`. Exit status:
//     0 when everything asked worked, 1 when the library threw (the error is printed), 2 for bad usage.
//
//   OpenProbe measure REPORT PROGRAM [ARGUMENT…]
//     Runs PROGRAM, waits for it with `wait4`, and writes `exit N` or `signal N`, then `peak-resident-bytes N`,
//     to the file REPORT. The test process cannot measure its children itself: a child's `ru_maxrss` starts at
//     the high-water mark of the process that executed it, and the test process is large; this one is small
//     (what it adds is its own size, a few megabytes, so the figure is an upper bound).
import EventGraph
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

func usage() -> Never {
    FileHandle.standardError.write(Data("usage: OpenProbe open STORE [insert] | measure REPORT PROGRAM [ARG…]\n".utf8))
    exit(2)
}

func open(_ path: String, insert: Bool) -> Int32 {
    do {
        let container = try ModelContainer(path: path)
        print("opened last-transaction \(container.lastTransactionID)")
        if insert, let entity = container.model.entities.first(where: { !$0.isAbstract }) {
            let context = container.newBackgroundContext()
            context.insert(entityNamed: entity.name)
            try context.save()
            print("saved last-transaction \(container.lastTransactionID)")
        }
        try container.close()
        return 0
    } catch {
        print("error \(error.code): \(error.message)")
        return 1
    }
}

func measure(report: String, _ program: [String]) -> Int32 {
    let argv = program.map { strdup($0) } + [nil]
    defer { for pointer in argv { free(pointer) } }
    var pid: pid_t = 0
    let spawned = posix_spawn(&pid, program[0], nil, nil, argv, environ)
    guard spawned == 0 else {
        FileHandle.standardError.write(Data("OpenProbe: cannot run \(program[0]): error \(spawned)\n".utf8))
        return 2
    }
    var status: Int32 = 0
    var usage = rusage()
    while wait4(pid, &status, 0, &usage) < 0 && errno == EINTR {}
    let signal = status & 0x7F
    let end = signal != 0 ? "signal \(signal)" : "exit \((status >> 8) & 0xFF)"
    let text = "\(end)\npeak-resident-bytes \(Int(usage.ru_maxrss) * 1024)\n"  // Linux reports kilobytes
    FileManager.default.createFile(atPath: report, contents: Data(text.utf8))
    return 0
}

let arguments = Array(CommandLine.arguments.dropFirst())
switch arguments.first {
case "open" where arguments.count >= 2:
    exit(open(arguments[1], insert: arguments.dropFirst(2).contains("insert")))
case "measure" where arguments.count >= 3:
    exit(measure(report: arguments[1], Array(arguments.dropFirst(2))))
default:
    usage()
}
