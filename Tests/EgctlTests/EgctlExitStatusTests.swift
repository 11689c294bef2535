import EventGraph
import Foundation
import LogFormat
import Testing

/// An object whose one value is larger than a frame.
final class Manuscript: ManagedObject {
    @Attribute var text: String = ""
}

@Suite("egctl exit statuses")
struct EgctlExitStatusTests {
    /// An object over 16 MiB encoded goes into a checkpoint split over several frames (issue 9 item 13): the store
    /// compacts, and verifies intact afterwards.
    @Test func aStoreWithAnObjectLargerThanAFrameCompacts() throws {
        let scratch = Scratch()
        let path = scratch.file("large.eglog")
        let container = try ModelContainer(path: path, model: try ObjectModel(types: [Manuscript.self]))
        let context = container.newBackgroundContext()
        let manuscript = Manuscript()
        context.insert(manuscript)
        manuscript.text = String(repeating: "0123456789abcdef", count: 20 << 16)  // 20 MiB
        try context.save()
        try container.close()

        let result = try Egctl.run("compact", path)
        #expect(result.status == 0, "\(result.stderr)")
        let verify = try Egctl.run("verify", path)
        #expect(verify.status == 0, "\(verify.stderr)")
        #expect(verify.stdout.contains("result       intact"), "\(verify.stdout)")
        let reopened = try ModelContainer(path: path, model: try ObjectModel(types: [Manuscript.self]))
        let texts = try reopened.newBackgroundContext().fetch(FetchDescriptor<Manuscript>()).map(\.text)
        #expect(texts == [manuscript.text])
        try reopened.close()
        #expect(try Egctl.run("compact", scratch.file("missing.eglog")).status == 2)
    }

    /// A limit met while compacting a valid store is a failure on that store (1), not a usage error (2): here the
    /// file records a transaction limit of 1 MiB, and egctl's checkpoint chunk of 2,000 objects of 1 KB exceeds it.
    @Test func aLimitMetWhileCompactingIsNotAUsageError() throws {
        let scratch = Scratch()
        let path = scratch.file("limited.eglog")
        var options = LogWriter.Options()
        options.maxTransactionByteCount = 1 << 20
        try LogWriter(path: path, options: options).close()
        let container = try ModelContainer(path: path, model: try ObjectModel(types: [Manuscript.self]))
        let context = container.newBackgroundContext()
        for batch in 0..<4 {
            for index in 0..<500 {
                let manuscript = Manuscript()
                context.insert(manuscript)
                manuscript.text = String(repeating: "\(batch)-\(index) ", count: 200).prefix(1000).description
            }
            try context.save()
        }
        try container.close()

        let result = try Egctl.run("compact", path)
        #expect(result.status == 1, "\(result.stderr)")
        #expect(result.stderr.contains("limit of 1048576"), "\(result.stderr)")
        #expect(try Egctl.run("verify", path).status == 0, "the store was left unchanged")
    }
}
