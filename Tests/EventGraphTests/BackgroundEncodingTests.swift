import LogFormat
import Testing

@testable import EventGraph

/// A large save's payload is encoded on a thread of its own while the save is staged (h83): the bytes must be those
/// the calling thread would have encoded, its errors the same, and a save refused meanwhile must leave nothing.
@Suite("A large save's payload encoded beside its staging")
struct BackgroundEncodingTests {
    private typealias Encoding = BackgroundWork<[UInt8], LogFormatError>

    private static func encodeAside(_ changeset: Changeset) -> Encoding {
        Encoding("test encoding") { () throws(LogFormatError) in try changeset.encoded() }
    }

    private static func changeset(inserts: Int, storeIndex: UInt32 = 0) -> Changeset {
        Changeset(
            transactionID: 7, commitTimeMicroseconds: 1_700_000_000_000_000, author: "bulk",
            nextKey: UInt64(inserts + 1),
            operations: (0..<inserts).map { index in
                .insert(
                    ObjectReference(storeIndex: storeIndex, entityIndex: 0, key: UInt64(index + 1)),
                    [
                        PropertyChange(propertyIndex: 0, value: .attribute(.string("object \(index)"))),
                        PropertyChange(propertyIndex: 1, value: .attribute(.int32(Int32(index % 30)))),
                    ])
            })
    }

    /// Inserts `count` courses with the codes (and credits, when given) of their positions.
    private static func insertCourses(
        _ count: Int, into context: ObjectContext, credits: ((Int) -> Int32)? = nil, code: (Int) -> String
    ) {
        for index in 0..<count {
            let course = Course()
            context.insert(course)
            course.code = code(index)
            if let credits { course.credits = credits(index) }
        }
    }

    @Test("the payload is the one the calling thread encodes")
    func sameBytes() throws {
        let changeset = Self.changeset(inserts: 3 * Encoding.minimumObjectCount)
        #expect(try Self.encodeAside(changeset).value() == changeset.encoded())
    }

    @Test("an encoding error is thrown to the save, as the calling thread throws it")
    func sameError() {
        // A reference into a foreign store the changeset does not name.
        let changeset = Self.changeset(inserts: 2, storeIndex: 3)
        var direct: LogFormatError?
        do throws(LogFormatError) { _ = try changeset.encoded() } catch { direct = error }
        var aside: LogFormatError?
        do throws(LogFormatError) { _ = try Self.encodeAside(changeset).value() } catch { aside = error }
        #expect(direct != nil && aside?.code == direct?.code && aside?.message == direct?.message)
    }

    @Test("a large save whose payload takes several frames, encoded by two threads, reads back after reopening")
    func severalFramesReadBack() throws {
        let directory = TemporaryDirectory()
        let count = Encoding.minimumObjectCount + 100
        // ≈ 2.5 MB of payload: three fragments of 1 MiB, each compressed by whichever thread takes it.
        let text = String(repeating: "a course about frames and threads ", count: 70)
        do {
            let container = try ModelContainer(path: directory.file(), model: TestModels.school)
            let context = container.newBackgroundContext()
            Self.insertCourses(count, into: context) { "\(text)\($0)" }
            try context.save()
            try container.close()
        }
        let container = try ModelContainer(path: directory.file(), model: TestModels.school)
        let courses = try container.newBackgroundContext().fetch(FetchDescriptor<Course>())
        #expect(Set(courses.map(\.code)) == Set((0..<count).map { "\(text)\($0)" }))
        try container.close()
    }

    @Test("a large save is installed when it returns and reads back after reopening; one refused leaves nothing")
    func largeSavesRoundTrip() throws {
        let directory = TemporaryDirectory()
        let count = Encoding.minimumObjectCount + 500
        do {
            let container = try ModelContainer(path: directory.file(), model: TestModels.school)
            let context = container.newBackgroundContext()
            Self.insertCourses(count, into: context, credits: { Int32($0 % 31) }) { "C\($0)" }
            try context.save()
            // Installed when the save returns (another context sees every object), and the context's objects are
            // saved ones with permanent IDs.
            let other = container.newBackgroundContext()
            #expect(try other.fetch(FetchDescriptor<Course>()).count == count)
            let saved = context.insertedObjects.isEmpty && context.registeredObjects.allSatisfy { !$0.isInserted }
            #expect(saved && context.registeredObjects.allSatisfy { !$0.objectID.isTemporary })
            // As large, but one code is taken: refused by the uniqueness check while its payload is encoded.
            let refused = container.newBackgroundContext()
            Self.insertCourses(count, into: refused) { $0 == count - 1 ? "C0" : "D\($0)" }
            #expect(throws: EventGraphError.self) { try refused.save() }
            try container.close()
        }
        let container = try ModelContainer(path: directory.file(), model: TestModels.school)
        let context = container.newBackgroundContext()
        let courses = try context.fetch(FetchDescriptor<Course>())
        #expect(courses.count == count)
        #expect(Set(courses.map(\.code)) == Set((0..<count).map { "C\($0)" }))
        #expect(courses.allSatisfy { $0.credits == Int32(Int($0.code.dropFirst())! % 31) })
        try container.close()
    }
}
