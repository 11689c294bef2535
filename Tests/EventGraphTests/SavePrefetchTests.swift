import Foundation
import LogFormat
import Testing

@testable import EventGraph

final class PrefetchNote: ManagedObject {
    @Attribute(.unique) var number: Int64 = 0
    @Attribute(.length(1...)) var title: String = "Untitled"
    @Attribute var body: String = ""
    @Attribute var link: URL = URL(string: "https://example.com")!
    @Relationship(inverse: "notes") var labels: Set<PrefetchLabel>
}

final class PrefetchLabel: ManagedObject {
    @Attribute(.unique) var name: String = ""
    @Relationship var notes: Set<PrefetchNote>
}

/// A bulk save's passes ask for each new object's values some objects ahead (`SavePrefetch`): the prefetches read
/// the arrays and strings they ask for in place, at every position of a pass up to its end, and change nothing the
/// passes compute.
@Suite("A save's passes prefetch its new objects' values")
struct SavePrefetchTests {
    static let model = try! ObjectModel(name: "Notes", version: "1", types: [PrefetchNote.self, PrefetchLabel.self])

    private static func link(_ number: Int) -> URL {
        URL(string: "https://example.com/notes/\(number)/a-long-enough-path")!
    }

    /// Values of every kind a prefetch looks at: small and long strings (ASCII and not), a URL, lists.
    private static func changes(_ number: Int) -> [PropertyChange] {
        [
            PropertyChange(propertyIndex: 0, value: .attribute(.int64(Int64(number)))),
            PropertyChange(propertyIndex: 1, value: .attribute(.string("short \(number)"))),
            PropertyChange(
                propertyIndex: 2, value: .attribute(.string(String(repeating: "é long text ", count: number % 40)))),
            PropertyChange(propertyIndex: 3, value: .attribute(.url("https://example.com/\(number)/long/path/x"))),
            PropertyChange(
                propertyIndex: 4,
                value: .toMany((0..<number % 5).map { ObjectReference(entityIndex: 1, key: UInt64($0)) })),
            PropertyChange(propertyIndex: 5, value: .toOne(nil)),
        ]
    }

    /// Operation counts below, at and past the prefetch distances (17 = `firstLinkDistance` + 5).
    @Test(arguments: [0, 1, 3, 4, 17])
    func everyPositionOfAPassMayAskIncludingTheLastOnesAndEmptyArrays(count: Int) {
        let operations: [ChangeOperation] = (0..<count).map { number in
            let reference = ObjectReference(entityIndex: 0, key: UInt64(number))
            if number % 3 == 2 { return .delete(reference) }
            return .insert(reference, number % 4 == 1 ? [] : Self.changes(number))
        }
        let elements = SavePrefetch.elements(of: operations)
        for position in 0..<count + 2 {
            SavePrefetch.prefetchAhead(in: elements, from: position, lists: true, strings: true)
        }
        var staged = StagedChanges()
        for case .insert(let reference, let values) in operations {
            let row = Row(
                entityIndex: 0, key: reference.key, version: 1, changes: values,
                defaults: Array(repeating: .attribute(.null), count: 6))
            staged.put(key: reference.key, entityIndex: 0, row: reference.key % 5 == 0 ? nil : row)
        }
        staged.put(key: 1000, entityIndex: 0, row: Row(entityIndex: 0, key: 1000, version: 1, values: []))
        let stagedElements = SavePrefetch.elements(of: staged.changes)
        for position in 0..<staged.count + 2 {
            SavePrefetch.prefetchAhead(in: stagedElements, from: position, lists: true, strings: true)
            SavePrefetch.prefetchAhead(in: stagedElements, from: position, lists: false, strings: false)
        }
        #expect(staged.count == operations.count(where: { if case .insert = $0 { true } else { false } }) + 1)
    }

    @Test func aBulkSaveOfMoreObjectsThanThePrefetchDistanceSavesEveryValue() throws {
        let container = try ModelContainer(inMemoryWith: Self.model)
        let context = container.newBackgroundContext(name: "writer")
        let labels = (0..<3).map { index in
            let label = PrefetchLabel()
            context.insert(label)
            label.name = "label \(index)"
            return label
        }
        let count = SavePrefetch.firstLinkDistance * 3 + 1
        for number in 0..<count {
            let note = PrefetchNote()
            context.insert(note)
            note.number = Int64(number)
            note.title = number % 2 == 0 ? "t\(number)" : String(repeating: "Titel ü \(number) ", count: 6)
            note.body = String(repeating: "body \(number) ", count: number % 50)
            if number % 3 == 0 { note.link = Self.link(number) }
            note.labels = Set(labels.prefix(number % 4))
        }
        try context.save()
        #expect(context.insertedObjects.isEmpty && !context.hasChanges)
        let reader = container.newBackgroundContext(name: "reader")
        let notes = try reader.fetch(FetchDescriptor<PrefetchNote>()).sorted { $0.number < $1.number }
        #expect(notes.count == count)
        for (number, note) in notes.enumerated() {
            let title = number % 2 == 0 ? "t\(number)" : String(repeating: "Titel ü \(number) ", count: 6)
            #expect(note.number == Int64(number) && note.title == title)
            #expect(note.body == String(repeating: "body \(number) ", count: number % 50))
            #expect(note.link == (number % 3 == 0 ? Self.link(number) : URL(string: "https://example.com")!))
            #expect(Set(note.labels.map(\.name)) == Set((0..<number % 4).map { "label \($0)" }))
        }
        for label in try reader.fetch(FetchDescriptor<PrefetchLabel>()) {
            let index = try #require(Int(label.name.dropFirst("label ".count)))
            #expect(label.notes.count == (0..<count).count(where: { $0 % 4 > index }))
        }
    }
}
