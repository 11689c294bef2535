import EventGraph
import Foundation

// Seed 003's shape (iClass) for containers of several stores: members and handouts in the default (private) store,
// tutors in a store of their own (a sub-entity away from its super-entity), lectures and their sessions in a public
// store. Pupils <<->> lectures, tutor <->> lectures (deny from the tutor's side, nullify from the lecture's) and
// lecture <->> handouts (cascade) cross the stores.

class Member: ManagedObject {
    @Attribute(.indexed) var name: String = ""
}

final class Pupil: Member {
    @Attribute var number: Int64 = 0
    @Relationship(inverse: "pupils") var lectures: Set<Lecture>
}

final class Tutor: Member {
    @Attribute var office: String = ""
    @Relationship(inverse: "tutor", deleteRule: .deny) var lectures: Set<Lecture>
}

final class Lecture: ManagedObject {
    @Attribute(.unique) var code: String = ""
    @Relationship var pupils: Set<Pupil>
    @Relationship var tutor: Tutor?
    @Relationship(inverse: "lecture", deleteRule: .cascade) var sessions: [Session]
    @Relationship(inverse: "lecture", deleteRule: .cascade) var handouts: Set<Handout>
    /// Pupils (private store) and tutors (staff store) alike, whose keys repeat across the two stores.
    @Relationship var guests: Set<Member>
}

/// A lecture's handout, kept in the private store: the lecture's cascade crosses the stores.
final class Handout: ManagedObject {
    @Attribute var title: String = ""
    @Relationship var lecture: Lecture?
}

final class Session: ManagedObject {
    @Attribute var room: String = ""
    @Relationship var lecture: Lecture?
}

enum SeveralStoresModels {
    /// Members (pupils) in the default configuration, tutors in "Staff", lectures and sessions in "Public".
    static let campus = try! ObjectModel(
        name: "Campus", version: "1", types: [Pupil.self, Tutor.self, Lecture.self, Session.self, Handout.self],
        abstractTypes: [Member.self], configurations: ["Public": [Lecture.self, Session.self], "Staff": [Tutor.self]])

    /// The three stores of ``campus`` in a directory.
    static func stores(in directory: TemporaryDirectory) -> [StoreDescription] {
        [
            StoreDescription(path: directory.file("private.eglog")),
            StoreDescription(path: directory.file("staff.eglog"), configuration: "Staff"),
            StoreDescription(path: directory.file("public.eglog"), configuration: "Public"),
        ]
    }

    /// A container of the three stores of ``campus`` in a directory.
    static func container(in directory: TemporaryDirectory) throws -> ModelContainer {
        try ModelContainer(model: campus, stores: stores(in: directory))
    }
}
