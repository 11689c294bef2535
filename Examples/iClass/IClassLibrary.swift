public import EventGraph
import Foundation

/// The seed's application delegate: the model, its two stores, and what the app does with them.
public enum IClassLibrary {
    /// The configuration of the public store (courses); people live in the default one, the private store.
    public static let publicConfiguration = "Public"
    /// The counter that numbers students (the seed's IDGenerator), kept in the private store.
    public static let studentIDSequence = "studentID"

    /// The iClass model: Person (abstract) → Student / Teacher in the private store, Course in the public one.
    public static let model: ObjectModel = {
        do {
            return try ObjectModel(
                name: "iClass", version: "1", types: [Student.self, Teacher.self, Course.self],
                abstractTypes: [Person.self], configurations: [publicConfiguration: [Course.self]])
        } catch {
            fatalError("the iClass model is invalid: \(error)")
        }
    }()

    /// Opens (or creates) the private and the public store as one container.
    ///
    /// - Parameter publicMounting: ``StoreDescription/Mounting/never`` (or `.ifPresent` with the file away) opens
    ///   the private store alone: students and teachers keep their courses as unresolved references until the
    ///   public store is mounted again.
    public static func open(
        privatePath: String, publicPath: String, publicMounting: StoreDescription.Mounting = .always
    ) throws(EventGraphError) -> ModelContainer {
        try ModelContainer(
            model: model,
            stores: [
                StoreDescription(path: privatePath),
                StoreDescription(path: publicPath, configuration: publicConfiguration, mounting: publicMounting),
            ])
    }

    /// The course with a title, created in the public store when there is none.
    ///
    /// - Throws: ``EventGraphError`` when the lookup cannot read the store (see
    ///   ``ObjectContext/fetchOrInsert(_:unique:equals:configure:)``).
    @discardableResult
    public static func course(titled title: String, in context: ObjectContext) throws(EventGraphError) -> Course {
        try context.fetchOrInsert(Course.self, unique: \.title, equals: title)
    }

    /// A new student, numbered by the `studentID` counter (a number is never handed out twice, even if this
    /// student is never saved).
    public static func enrolStudent(
        named name: String, in courses: [Course], context: ObjectContext, container: ModelContainer
    ) throws(EventGraphError) -> Student {
        let student = Student()
        context.insert(student)
        student.name = name
        student.studentNumber = try container.nextValue(of: studentIDSequence)
        student.courses.formUnion(courses)
        return student
    }

    /// A new teacher, teaching `courses` (each course's previous teacher loses it).
    public static func hireTeacher(named name: String, for courses: [Course], context: ObjectContext) -> Teacher {
        let teacher = Teacher()
        context.insert(teacher)
        teacher.name = name
        for course in courses { course.teacher = teacher }
        return teacher
    }

    /// Every student, by number.
    public static func students(in context: ObjectContext) throws(EventGraphError) -> [Student] {
        try context.fetch(FetchDescriptor<Student>(sortBy: [SortDescriptor(\.studentNumber)]))
    }

    /// Every course, by title (none while the public store is not mounted).
    public static func courses(in context: ObjectContext) throws(EventGraphError) -> [Course] {
        try context.fetch(FetchDescriptor<Course>(sortBy: [SortDescriptor(\.title)]))
    }
}
