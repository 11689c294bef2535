import Foundation
import LogFormat
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
        let failures = LockedValue<[String]>([])
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

    @Test("a reader that keeps its context finds each object right after another thread's save of it returned")
    func keptContextSeesFinishedSaves() throws {
        let container = try ModelContainer(inMemoryWith: TestModels.school)
        let setup = container.newBackgroundContext()
        let first = Lesson()
        setup.insert(first)
        first.title = "saved 0"
        try setup.save()
        // The ID of the last lesson whose save returned, published after the save (a reader that reads it must find it).
        let published = LockedValue<(count: Int, id: ObjectID)>((1, first.objectID))
        let failures = LockedValue<[String]>([])
        let done = Atomic<Bool>(false)
        onThreads(3) { thread in
            if thread == 0 {
                let writer = container.newBackgroundContext()
                for index in 1...150 {
                    let lesson = Lesson()
                    writer.insert(lesson)
                    lesson.title = "saved \(index)"
                    do { try writer.save() } catch { failures.withLock { $0.append("save: \(error)") } }
                    published.withLock { $0 = (index + 1, lesson.objectID) }
                }
                done.store(true, ordering: .releasing)
                return
            }
            // One context for the whole run: its version is read without the lock between saves.
            let reader = container.newBackgroundContext()
            var lookups = 0
            while !done.load(ordering: .acquiring) || lookups == 0 {
                let (count, id) = published.withLock { $0 }
                lookups += 1
                guard let lesson = reader.object(with: id) as? Lesson else {
                    failures.withLock { $0.append("the lesson of save \(count - 1) is not found") }
                    continue
                }
                if lesson.title != "saved \(count - 1)" {
                    failures.withLock { $0.append("the lesson of save \(count - 1) reads '\(lesson.title)'") }
                }
            }
        }
        #expect(failures.withLock { $0 }.isEmpty, "\(failures.withLock { $0.prefix(5) })")
    }
}
