import EventGraph
import Foundation

/// Every attribute type, for round trips.
final class Sample: ManagedObject {
    @Attribute var int16: Int16 = 0
    @Attribute var int32: Int32 = 0
    @Attribute var int64: Int64 = 0
    @Attribute var double: Double = 0
    @Attribute var float: Float = 0
    @Attribute var bool: Bool = false
    @Attribute var string: String = ""
    @Attribute var date: Date = Date(timeIntervalSinceReferenceDate: 0)
    @Attribute var uuid: UUID = UUID(uuidString: "00000000-0000-0000-0000-000000000000")!
    @Attribute var url: URL = URL(string: "https://example.com")!
    @Attribute var decimal: Decimal = 0
    @Attribute var data: Data = Data()
    @Attribute var optionalString: String? = nil
    @Attribute var optionalInt: Int? = nil
    @Attribute(.externalStorage(threshold: 64)) var large: Data? = nil
    @Transformable(by: CodableTransformer<Point>()) var point: Point?
    @Attribute(.transient) var scratch: String = ""
}

struct Point: Codable, Hashable {
    var x: Double
    var y: Double
}

/// Inheritance: Person is abstract; Student and Teacher are concrete.
class Person: ManagedObject {
    @Attribute(.indexed) var name: String = ""
    @Relationship(inverse: "members") var courses: Set<Course>
}

final class Student: Person {
    @Attribute var year: Int16 = 1
}

final class Teacher: Person {
    @Attribute var office: String = ""
}

final class Course: ManagedObject {
    @Attribute(.unique) var code: String = ""
    @Attribute(.range(0...30)) var credits: Int32 = 5
    @Relationship(deleteRule: .deny) var members: Set<Person>
    @Relationship(inverse: "course", deleteRule: .cascade) var lessons: [Lesson]
    @Relationship(inverse: "course", deleteRule: .noAction) var notes: [Note]
}

final class Lesson: ManagedObject {
    @Attribute(.length(1...40)) var title: String = "lesson"
    @Relationship var course: Course?
}

extension Lesson {
    /// Saves `count` lessons titled "`prefix` 0", "`prefix` 1", … one after another from a context of their own (so
    /// their keys follow each other), and returns their IDs in that order.
    static func saved(_ count: Int, in container: ModelContainer, titled prefix: String = "lesson") throws
        -> [ObjectID]
    {
        let setup = container.newBackgroundContext()
        let made = (0..<count).map { index in
            let lesson = Lesson()
            setup.insert(lesson)
            lesson.title = "\(prefix) \(index)"
            return lesson
        }
        try setup.save()
        return made.map(\.objectID)
    }
}

final class Note: ManagedObject {
    @Attribute var text: String = ""
    @Relationship var course: Course?

    override func validate() throws {
        if text == "forbidden" { throw NoteError.forbiddenText }
    }
}

enum NoteError: Error, CustomStringConvertible {
    case forbiddenText
    var description: String { "the text 'forbidden' is not allowed" }
}

enum TestModels {
    static let school = try! ObjectModel(
        name: "School", version: "1",
        types: [Student.self, Teacher.self, Course.self, Lesson.self, Note.self], abstractTypes: [Person.self])
    static let samples = try! ObjectModel(name: "Samples", version: "1", types: [Sample.self])
}
