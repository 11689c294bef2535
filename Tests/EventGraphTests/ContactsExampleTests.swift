import EventGraphExamples
import Foundation
import Testing

@testable import EventGraph

/// Seed 002 end to end: workers parse XML feeds into children of Main; one is discarded, one merged and saved
/// through Root; Main's results controller reports the merge as a difference; a reopened container has the rows.
@Suite("Seed 002: XML import through worker contexts")
struct ContactsExampleTests {
    /// The checked-in sample feed (six contacts, five last-name initials).
    static let sample: Data = {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Examples/Contacts/Samples/contacts.xml")
        return try! Data(contentsOf: url)
    }()

    @Test func aDiscardedWorkerLeavesMainUntouchedAndAMergedOneReachesTheLog() throws {
        let directory = TemporaryDirectory()
        do {
            let source = try ContactsDataSource(
                container: ModelContainer(path: directory.file(), model: ContactsModel.model))
            let discarded = try source.importFeed(Self.sample, source: "contacts.xml")
            #expect(try discarded.fetch(FetchDescriptor<Contact>()).count == 6)
            source.discard(discarded)
            #expect(!source.main.hasChanges)
            #expect(try source.main.fetch(FetchDescriptor<Contact>()).isEmpty)
            #expect(try source.contacts.processPendingChanges().isEmpty)

            let difference = try source.merge(try source.importFeed(Self.sample, source: "contacts.xml"))
            #expect(difference.insertedSections.map(\.name) == ["B", "D", "H", "L", "T"])
            #expect(difference.insertedRows.count == 6)
            #expect(difference.applied(to: []) == source.contacts.objectIDs)
            let sections = source.contacts.fetchedSections
            #expect(sections.map(\.name) == ["B", "D", "H", "L", "T"])
            #expect(sections[3].objects.map(\.lastName) == ["Liskov", "Lovelace"])
            #expect(source.container.lastTransactionID == 0, "a merge into Main reaches no log")
            let before = source.contacts.objectIDs
            let areTemporary = before.joined().allSatisfy { $0.isTemporary }
            #expect(areTemporary, "Main's merged rows are not saved yet")
            let saved = try source.save()
            #expect(saved.insertedRows.isEmpty && saved.movedRows.isEmpty && saved.updatedRows.count == 6)
            #expect(source.contacts.objectIDs == before.map { $0.map(\.permanentForm) })
            #expect(source.container.lastTransactionID == 1)
            try source.container.close()
        }
        let reopened = try ModelContainer(path: directory.file(), model: ContactsModel.model)
        let saved = try reopened.newBackgroundContext().fetch(
            FetchDescriptor<Contact>(sortBy: [SortDescriptor(\.email)]))
        #expect(saved.map(\.email).first == "ada@example.com")
        #expect(saved.count == 6)
        #expect(saved.first { $0.email == "grace@example.com" }?.company == "Navy & Remington Rand")
    }

    @Test func aSecondFeedFindsContactsByEmailAndMovesThemBetweenSections() throws {
        let source = try ContactsDataSource(container: ModelContainer(inMemoryWith: ContactsModel.model))
        try source.merge(try source.importFeed(Self.sample, source: "contacts.xml"))
        try source.save()
        let before = source.contacts.objectIDs
        let update = Data(
            """
            <contacts>
              <contact><firstName>Ada</firstName><lastName>King</lastName><email>ada@example.com</email></contact>
              <contact><firstName>Alan</firstName><lastName>Turing</lastName><email>alan@example.com</email>
                <company>Manchester</company></contact>
            </contacts>
            """.utf8)
        let difference = try source.merge(try source.importFeed(update, source: "update.xml"))
        #expect(difference.insertedRows.isEmpty, "contacts are found by email, not inserted again")
        #expect(difference.insertedSections.map(\.name) == ["K"])
        #expect(difference.movedRows.count == 1)
        #expect(difference.updatedRows.count == 1)
        #expect(difference.applied(to: before) == source.contacts.objectIDs)
        #expect(try source.main.fetch(FetchDescriptor<Contact>()).count == 6)
        try source.save()
        #expect(source.container.lastTransactionID == 2)
    }

    @Test func aMalformedFeedIsReportedWithLineAndColumnAndMainIsUntouched() throws {
        let source = try ContactsDataSource(container: ModelContainer(inMemoryWith: ContactsModel.model))
        try source.merge(try source.importFeed(Self.sample, source: "contacts.xml"))
        try source.save()
        let before = source.contacts.objectIDs
        let malformed = Data("<contacts>\n  <contact><email>x@example.com</email>\n  </contacts>\n".utf8)
        let error = try #require(throws: ContactsFeedError.self) {
            try source.importFeed(malformed, source: "broken.xml")
        }
        #expect(error.line == 3)
        #expect(error.column > 0)
        #expect("\(error)".hasPrefix("broken.xml: line 3, column "))
        #expect(!source.main.hasChanges)
        #expect(try source.contacts.processPendingChanges().isEmpty)
        #expect(source.contacts.objectIDs == before)
        #expect(try source.main.fetch(FetchDescriptor<Contact>()).count == 6)
    }
}
