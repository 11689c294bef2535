import Foundation
import Synchronization
import Testing

@testable import EventGraph

@Suite("Readers look objects up by ID and fetch while a writer inserts, updates and deletes")
struct ReadPathConcurrencyTests {
    @Test("lookups by ID and fetches see whole saves, never a torn key directory or column")
    func readersSeeWholeSaves() throws {
        let container = try ModelContainer(inMemoryWith: TestModels.school)
        let setup = container.newBackgroundContext()
        var ids: [ObjectID] = []
        for index in 0..<400 {
            let lesson = Lesson()
            setup.insert(lesson)
            lesson.title = "lesson \(index)"
        }
        try setup.save()
        ids = try setup.fetch(FetchDescriptor<Lesson>()).map(\.objectID)
        let stableIDs = ids
        let failures = Mutex<[String]>([])
        let done = Atomic<Bool>(false)
        onThreads(4) { thread in
            if thread == 0 {
                // The writer: grows the directory (new keys), rewrites titles and deletes, one save at a time.
                let writer = container.newBackgroundContext()
                for round in 0..<30 {
                    for index in 0..<40 {
                        let lesson = Lesson()
                        writer.insert(lesson)
                        lesson.title = "new \(round) \(index)"
                    }
                    let some = (try? writer.fetch(FetchDescriptor<Lesson>())) ?? []
                    for lesson in some.prefix(20) { lesson.title = "round \(round)" }
                    if let last = some.last, !stableIDs.contains(last.objectID) { writer.delete(last) }
                    do { try writer.save() } catch { failures.withLock { $0.append("save: \(error)") } }
                }
                done.store(true, ordering: .releasing)
                return
            }
            // Readers: every saved lesson is found by ID in a fresh context and reads a title of one save or another.
            while !done.load(ordering: .acquiring) {
                let reader = container.newBackgroundContext()
                for id in stableIDs where Int(id.key) % 3 == thread - 1 {
                    guard let lesson = reader.object(with: id) as? Lesson else {
                        failures.withLock { $0.append("\(id) not found") }
                        continue
                    }
                    let title = lesson.title
                    if !(title.hasPrefix("lesson ") || title.hasPrefix("round ")) {
                        failures.withLock { $0.append("\(id) reads '\(title)'") }
                    }
                }
                let all = (try? reader.fetch(FetchDescriptor<Lesson>())) ?? []
                if all.count < stableIDs.count { failures.withLock { $0.append("a fetch found \(all.count)") } }
                if Set(all.map(\.objectID)).count != all.count { failures.withLock { $0.append("a duplicate object") } }
            }
        }
        #expect(failures.withLock { $0 }.isEmpty, "\(failures.withLock { $0.prefix(5) })")
    }
}
