import Foundation
import TestSupport
import Testing

@testable import EventGraph

/// The per-row stages of a fetch run without the fetched class (``FetchCollector``); these check that what the class
/// decided before still holds: sub-entities, the dynamic API, untranslated predicates, windows and pending changes.
@Suite("Fetches collect rows without their class and return the same objects")
struct FetchScopeTests {
    /// Saves `count` students and teachers with random names, then changes, inserts and deletes a few unsaved.
    private func makePeople(_ generator: inout SeededGenerator) throws -> (ModelContainer, ObjectContext) {
        let container = try ModelContainer(inMemoryWith: TestModels.school)
        let writer = container.newBackgroundContext()
        let names = ["ada", "bo", "cy", "dee", "eve", "flo"]
        for index in 0..<300 {
            let person: Person = generator.next() % 2 == 0 ? Student() : Teacher()
            writer.insert(person)
            person.name = names[Int(generator.next() % UInt64(names.count))] + String(index % 17)
            if let student = person as? Student { student.year = Int16(generator.next() % 5) }
        }
        try writer.save()
        let context = container.newBackgroundContext()
        let all = try context.fetch(FetchDescriptor<Person>())
        for person in all where generator.next() % 10 == 0 { person.name = "changed" + String(generator.next() % 5) }
        for person in all where generator.next() % 20 == 0 { context.delete(person) }
        for index in 0..<10 {
            let student = Student()
            context.insert(student)
            student.name = names[index % names.count] + "new"
        }
        return (container, context)
    }

    @Test("results equal a filter over every object, for typed, sub-entity and dynamic fetches, on random data")
    func resultsEqualAFilterOverEveryObject() throws {
        let seed = TestSeed.make()
        var generator = SeededGenerator(seed: seed)
        let (container, context) = try makePeople(&generator)
        _ = container
        let everyone = try context.fetch(FetchDescriptor<Person>())
        #expect(Set(everyone.map(ObjectIdentifier.init)).count == everyone.count, "seed \(seed)")
        func names<T: ManagedObject>(_ objects: [T]) -> [String] { objects.map { ($0 as! Person).name }.sorted() }
        for _ in 0..<20 {
            let prefix = ["a", "b", "c", "changed", "e"][Int(generator.next() % 5)]
            let length = Int(generator.next() % 6)
            // A translated part (`starts(with:)`) and one that only objects can answer (`count`).
            let mixed = #Predicate<Person> { $0.name.starts(with: prefix) && $0.name.count > length }
            let expected = everyone.filter { $0.name.hasPrefix(prefix) && $0.name.count > length }
            #expect(names(try context.fetch(FetchDescriptor(predicate: mixed))) == names(expected), "seed \(seed)")
            let students = try context.fetch(
                FetchDescriptor<Student>(predicate: #Predicate { $0.name.starts(with: prefix) }))
            #expect(
                names(students) == names(everyone.filter { $0 is Student && $0.name.hasPrefix(prefix) }),
                "seed \(seed)")
            let dynamic = try context.fetch(
                FetchDescriptor<ManagedObject>(
                    entityName: "Teacher", filter: .compare("name", .beginsWith, .string(prefix))))
            #expect(
                names(dynamic) == names(everyone.filter { $0 is Teacher && $0.name.hasPrefix(prefix) }),
                "seed \(seed)")
            #expect(dynamic.allSatisfy { $0 is Teacher })
        }
    }

    @Test("the collected array is returned as the class's array: typed, changeable, and only of the class")
    func resultsAreAnArrayOfTheClass() throws {
        var generator = SeededGenerator(seed: TestSeed.make())
        let (container, context) = try makePeople(&generator)
        _ = container
        // The family of Person holds students and teachers: a fetch of students by that entity keeps the students.
        var byPerson = FetchDescriptor<Student>(sortBy: [SortDescriptor(\.name)])
        byPerson.entityName = "Person"
        var students = try context.fetch(byPerson)
        let everyone = try context.fetch(FetchDescriptor<Person>())
        #expect(students.count == everyone.filter { $0 is Student }.count && students.count > 0)
        #expect(students.map(\.name) == students.map(\.name).sorted())
        // The array is a `[Student]` like any other: its elements read as students, and it grows and sorts.
        #expect(students.allSatisfy { $0.year >= 0 })
        let added = Student()
        students.append(added)
        students.sort { $0.name > $1.name }
        #expect(students.contains { $0 === added })
        let people: [Person] = students
        #expect(people.count == students.count)
        let named = try context.fetch(FetchDescriptor<Person>(predicate: #Predicate { $0.name.count > 0 }))
        #expect(named.count == everyone.filter { $0.name.count > 0 }.count)
    }

    @Test("a window over an unordered and an ordered fetch, with an untranslated predicate")
    func windows() throws {
        let seed = TestSeed.make()
        var generator = SeededGenerator(seed: seed)
        let (container, context) = try makePeople(&generator)
        _ = container
        let long = #Predicate<Person> { $0.name.count > 3 }
        var ordered = FetchDescriptor<Person>(predicate: long, sortBy: [SortDescriptor(\.name)])
        let all = try context.fetch(ordered)
        #expect(all.map(\.name) == all.map(\.name).sorted())
        #expect(all.allSatisfy { $0.name.count > 3 })
        ordered.fetchOffset = 5
        ordered.fetchLimit = 7
        #expect(try context.fetch(ordered).map(ObjectIdentifier.init) == all[5..<12].map(ObjectIdentifier.init))
        var unordered = FetchDescriptor<Person>(predicate: long)
        unordered.fetchLimit = 9
        let window = try context.fetch(unordered)
        #expect(window.count == 9 && window.allSatisfy { $0.name.count > 3 }, "seed \(seed)")
    }
}
