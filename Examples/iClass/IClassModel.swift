public import EventGraph

// Seed 003 (iClass): people in a private store, courses in a public one, and relationships across the two.
// Core Data forbids relationships across stores, so the seed keeps them by hand (transient properties, URI
// attributes, a fetched property, change-notification cleanup, a save after every change); here they are ordinary
// relationships, recorded in each store's log as the other side's permanent ID, with inverses and delete rules
// kept by the engine. The seed's IDGenerator entity is the container's named counter `studentID`.

/// Someone at the school: a student or a teacher (abstract; private store).
public class Person: ManagedObject {
    @Attribute(.indexed) public var name: String = ""
}

/// A student, numbered by the `studentID` counter (private store).
public final class Student: Person {
    @Attribute(.unique) public var studentNumber: Int64 = 0
    /// Student <<->> Course, across the stores.
    @Relationship(inverse: "students") public var courses: Set<Course>
}

/// A teacher (private store).
public final class Teacher: Person {
    /// Teacher <->> Course, across the stores: deleting a teacher leaves the courses without one.
    @Relationship(inverse: "teacher", deleteRule: .nullify) public var courses: Set<Course>
}

/// A course (public store).
public final class Course: ManagedObject {
    @Attribute(.unique) public var title: String = ""
    @Relationship public var students: Set<Student>
    @Relationship public var teacher: Teacher?
}
