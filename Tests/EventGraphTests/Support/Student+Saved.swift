@testable import EventGraph

extension Student {
    /// Inserts a student named `name` into `context` and saves it: one committed transaction per call, which the
    /// notification and change-feed suites count on.
    @discardableResult
    static func insertSaved(_ name: String, in context: ObjectContext) throws -> Student {
        let student = Student()
        context.insert(student)
        student.name = name
        try context.save()
        return student
    }
}
