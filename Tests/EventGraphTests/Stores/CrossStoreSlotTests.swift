import Foundation
import LogFormat
import Synchronization
import Testing

@testable import EventGraph

/// Whether an object holds a chunk slot (no ``Row`` made for it).
private func holdsSlot(_ object: ManagedObject) -> Bool {
    if case .slot? = object.committed { return true }
    return false
}

/// `pupilCount` pupils (private store) and `lectureCount` lectures (public store), each lecture with the pupils whose
/// number is its index modulo 3, and every third lecture with a guest tutor (staff store) whose key repeats a pupil's.
private func enrol(pupilCount: Int, lectureCount: Int, in container: ModelContainer) throws {
    let context = container.newBackgroundContext()
    var pupils: [Pupil] = []
    for number in 0..<pupilCount {
        let pupil = Pupil()
        context.insert(pupil)
        pupil.name = "pupil \(number)"
        pupil.number = Int64(number)
        pupils.append(pupil)
    }
    let tutor = Tutor()
    context.insert(tutor)
    tutor.name = "tutor"
    for index in 0..<lectureCount {
        let lecture = Lecture()
        context.insert(lecture)
        lecture.code = "L\(index)"
        for pupil in pupils where Int(pupil.number) % 3 == index % 3 { lecture.pupils.insert(pupil) }
        if index % 3 == 0 { lecture.guests.insert(tutor) }
    }
    try context.save()
}

/// The pupils' numbers a lecture of ``enrol(pupilCount:lectureCount:in:)`` holds.
private func expectedPupils(ofLecture index: Int, pupilCount: Int) -> Set<Int64> {
    Set((0..<pupilCount).filter { $0 % 3 == index % 3 }.map(Int64.init))
}

/// Objects read through a coordinator of several stores hold chunk slots, as objects of one store do: a store's
/// references are renumbered into the coordinator's numbering once per chunk version, not on a `Row` per object.
@Suite("Objects read across stores hold their chunk slot, not a Row")
struct CrossStoreSlotTests {
    @Test("a fetched or faulted object across stores that is never changed never makes a Row")
    func unchangedObjectsAcrossStoresMakeNoRow() throws {
        let directory = TemporaryDirectory()
        let container = try SeveralStoresModels.container(in: directory)
        defer { try? container.close() }
        try enrol(pupilCount: 30, lectureCount: 12, in: container)
        let context = container.newBackgroundContext()
        let lectures = try context.fetch(FetchDescriptor<Lecture>(sortBy: [SortDescriptor(\.code)]))
        #expect(lectures.count == 12)
        #expect(lectures.allSatisfy(holdsSlot), "a fetch of objects with references into other stores")
        for lecture in lectures {
            let index = Int(lecture.code.dropFirst())!
            // The references are in the coordinator's numbering: each names the pupil of the private store.
            #expect(Set(lecture.pupils.map(\.number)) == expectedPupils(ofLecture: index, pupilCount: 30))
            #expect(lecture.pupils.allSatisfy { $0.name == "pupil \($0.number)" })
            #expect(lecture.guests.map(\.name) == (index % 3 == 0 ? ["tutor"] : []))
        }
        #expect(lectures.allSatisfy(holdsSlot), "reading relationships makes no Row")
        let pupils = lectures.flatMap(\.pupils)
        #expect(pupils.allSatisfy(holdsSlot), "faults fired through the coordinator hold slots")
        // The inverse, from the private store into the public one, through faults of lectures already registered.
        let first = try #require(pupils.first)
        #expect(first.lectures.count == 4 && first.lectures.allSatisfy { $0.pupils.contains(first) })
        // A lookup by ID, in a new context.
        let other = container.newBackgroundContext()
        let third = try #require(lectures.first { $0.code == "L3" })
        let looked = try #require(other.object(with: third.objectID) as? Lecture)
        #expect(holdsSlot(looked) && Set(looked.pupils.map(\.number)) == expectedPupils(ofLecture: 3, pupilCount: 30))
        #expect(looked.guests.first?.name == "tutor" && holdsSlot(looked))
        // Filtered and indexed fetches.
        let filtered = try other.fetch(FetchDescriptor<Lecture>(filter: .equal("code", .string("L7"))))
        #expect(filtered.count == 1 && holdsSlot(filtered[0]))
        #expect(Set(filtered[0].pupils.map(\.number)) == expectedPupils(ofLecture: 7, pupilCount: 30))
        let named = try other.fetch(FetchDescriptor<Pupil>(filter: .equal("name", .string("pupil 4"))))
        #expect(named.count == 1 && holdsSlot(named[0]) && named[0].lectures.count == 4)
    }

    @Test("an object across stores later changed, merged, refreshed or in conflict behaves as before")
    func changedMergedRefreshedAndConflictingObjects() throws {
        let directory = TemporaryDirectory()
        let container = try SeveralStoresModels.container(in: directory)
        defer { try? container.close() }
        try enrol(pupilCount: 9, lectureCount: 3, in: container)
        let reader = container.newBackgroundContext()
        reader.automaticallyMergesChangesFromParent = true
        let lecture = try #require(
            try reader.fetch(FetchDescriptor<Lecture>(filter: .equal("code", .string("L1")))).first)
        #expect(holdsSlot(lecture) && lecture.pupils.count == 3)

        // Merged: another context adds a pupil of the private store to the lecture.
        let writer = container.newBackgroundContext()
        let theirs = try #require(
            try writer.fetch(FetchDescriptor<Lecture>(filter: .equal("code", .string("L1")))).first)
        let newcomer = Pupil()
        writer.insert(newcomer)
        newcomer.name = "newcomer"
        theirs.pupils.insert(newcomer)
        try writer.save()
        reader.processPendingChanges()
        #expect(Set(lecture.pupils.map(\.name)) == ["pupil 1", "pupil 4", "pupil 7", "newcomer"])

        // Changed and saved across stores: a pupil of the private store related to the fetched lecture.
        let pupil = try #require(
            try reader.fetch(FetchDescriptor<Pupil>(filter: .equal("name", .string("pupil 0")))).first)
        lecture.pupils.insert(pupil)
        try reader.save()
        let check = container.newBackgroundContext()
        let saved = try #require(check.object(with: lecture.objectID) as? Lecture)
        #expect(Set(saved.pupils.map(\.name)) == ["pupil 0", "pupil 1", "pupil 4", "pupil 7", "newcomer"])
        #expect(try #require(check.object(with: pupil.objectID) as? Pupil).lectures.count == 2)

        // In conflict: both change the lecture; the later save is refused, then succeeds after a refresh.
        let late = container.newBackgroundContext()
        let mine = try #require(late.object(with: lecture.objectID) as? Lecture)
        #expect(holdsSlot(mine) && mine.pupils.count == 5)
        let early = try #require(check.object(with: lecture.objectID) as? Lecture)
        early.code = "L1-early"
        try check.save()
        mine.code = "L1-late"
        #expect(throws: EventGraphError.self, "the save sees that the lecture changed since its slot was read") {
            try late.save()
        }
        late.rollback()
        late.refresh(mine)
        #expect(mine.code == "L1-early" && mine.pupils.count == 5)
        mine.pupils.remove(try #require(mine.pupils.first { $0.name == "pupil 0" }))
        try late.save()
        let final = container.newBackgroundContext()
        let result = try #require(final.object(with: lecture.objectID) as? Lecture)
        #expect(result.code == "L1-early" && !result.pupils.map(\.name).contains("pupil 0"))
        #expect(try #require(final.object(with: pupil.objectID) as? Pupil).lectures.count == 1)
    }

    @Test("a reader keeps its version across commits of both stores, also after a store's table grows")
    func readerKeepsItsVersionAcrossCommitsOfTheOtherStore() throws {
        let directory = TemporaryDirectory()
        let container = try SeveralStoresModels.container(in: directory)
        defer { try? container.close() }
        // Lectures that name only pupils at first: the public store's table holds the private store alone.
        let setup = container.newBackgroundContext()
        var pupils: [Pupil] = []
        for number in 0..<6 {
            let pupil = Pupil()
            setup.insert(pupil)
            pupil.name = "pupil \(number)"
            pupils.append(pupil)
        }
        for index in 0..<4_200 {  // more than one chunk
            let lecture = Lecture()
            setup.insert(lecture)
            lecture.code = "L\(index)"
            lecture.pupils.insert(pupils[index % 6])
        }
        try setup.save()

        let reader = container.newBackgroundContext()
        let held = try reader.fetch(FetchDescriptor<Lecture>())
        #expect(held.count == 4_200 && held.allSatisfy(holdsSlot))
        #expect(held[4_100].pupils.map(\.name) == ["pupil \(4_100 % 6)"])

        // Commits of the private store (names) and of the public store, one of which names the staff store first.
        let writer = container.newBackgroundContext()
        let all = try writer.fetch(FetchDescriptor<Lecture>())
        let writerPupils = try writer.fetch(FetchDescriptor<Pupil>())
        for round in 0..<10 {
            writerPupils[round % 6].name = "renamed \(round)"
            try writer.save()
        }
        let tutor = Tutor()
        writer.insert(tutor)
        tutor.name = "tutor"
        for lecture in all where lecture.code.hasSuffix("0") {
            lecture.guests.insert(tutor)
            lecture.pupils.removeAll()
        }
        try writer.save()

        // The reader's lectures keep their version: the same pupils, no guests (the pupils' names are read from
        // their own, newer, slots).
        for (index, lecture) in held.enumerated() where index % 500 == 0 || index == 4_199 {
            #expect(lecture.pupils.count == 1 && lecture.guests.isEmpty)
        }
        #expect(held.allSatisfy(holdsSlot))
        // A refetch sees the last version, renumbered with the grown table.
        let fresh = container.newBackgroundContext()
        let latest = try fresh.fetch(FetchDescriptor<Lecture>(filter: .equal("code", .string("L4190"))))
        #expect(latest.count == 1 && holdsSlot(latest[0]))
        #expect(latest[0].guests.map(\.name) == ["tutor"] && latest[0].pupils.isEmpty)
        let untouched = try #require(
            try fresh.fetch(FetchDescriptor<Lecture>(filter: .equal("code", .string("L4191")))).first)
        #expect(untouched.pupils.map(\.name).count == 1 && untouched.guests.isEmpty)
        let refetched = try reader.fetch(FetchDescriptor<Lecture>())
        #expect(refetched.count == 4_200)
        let changed = try #require(refetched.first { $0.code == "L4190" })
        #expect(changed === held[4_190] && changed.guests.map(\.name) == ["tutor"] && holdsSlot(changed))
    }

    @Test("readers on several threads fetch and fire faults across stores while a writer commits in both")
    func readersAcrossStoresWhileCommitsInstall() throws {
        let directory = TemporaryDirectory()
        let container = try SeveralStoresModels.container(in: directory)
        defer { try? container.close() }
        try enrol(pupilCount: 30, lectureCount: 60, in: container)
        let failures = LockedValue<[String]>([])
        let done = Atomic<Bool>(false)
        onThreads(3) { thread in
            if thread == 0 {
                // The writer: renames pupils (private store) and moves pupils between lectures (public store).
                let writer = container.newBackgroundContext()
                for round in 0..<25 {
                    let lectures = (try? writer.fetch(FetchDescriptor<Lecture>())) ?? []
                    let pupils = (try? writer.fetch(FetchDescriptor<Pupil>())) ?? []
                    pupils[round % pupils.count].name = "renamed \(round)"
                    let lecture = lectures[round % lectures.count]
                    if let moved = lecture.pupils.first {
                        lecture.pupils.remove(moved)
                        lectures[(round + 1) % lectures.count].pupils.insert(moved)
                    }
                    do { try writer.save() } catch { failures.withLock { $0.append("save: \(error)") } }
                }
                done.store(true, ordering: .releasing)
                return
            }
            // Readers: every lecture's pupils resolve to pupils of the private store.
            while !done.load(ordering: .acquiring) {
                let reader = container.newBackgroundContext()
                let lectures = (try? reader.fetch(FetchDescriptor<Lecture>())) ?? []
                if lectures.count != 60 { failures.withLock { $0.append("a fetch found \(lectures.count)") } }
                var total = 0
                for lecture in lectures {
                    for pupil in lecture.pupils {
                        total += 1
                        if !(pupil.name.hasPrefix("pupil ") || pupil.name.hasPrefix("renamed ")) {
                            failures.withLock { $0.append("\(pupil.objectID) reads '\(pupil.name)'") }
                        }
                    }
                }
                // 600 enrolments; a move onto a lecture that already has the pupil drops one (25 moves at most).
                if total > 600 || total < 600 - 25 {
                    failures.withLock { $0.append("\(total) enrolments in one fetch") }
                }
            }
        }
        #expect(failures.withLock { $0 }.isEmpty, "\(failures.withLock { $0.prefix(5) })")
    }
}
