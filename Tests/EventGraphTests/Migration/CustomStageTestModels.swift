import EventGraph
import Foundation

/// Version 1 of a people model whose later versions need code: `age` is a String.
enum PeopleV1 {
    final class Person: ManagedObject {
        override class var entityName: String { "Person" }
        @Attribute var name: String = ""
        @Attribute var age: String = ""
        @Attribute var street: String = ""
        @Attribute var city: String = ""
    }

    static let model = try! ObjectModel(name: "People", version: "1", types: [Person.self])
}

/// Version 2: `age` is an Int64 (String → Int cannot be inferred: a custom stage computes it).
enum PeopleV2 {
    final class Person: ManagedObject {
        override class var entityName: String { "Person" }
        @Attribute var name: String = ""
        @Attribute var age: Int64 = 0
        @Attribute var street: String = ""
        @Attribute var city: String = ""
    }

    static let model = try! ObjectModel(name: "People", version: "2", types: [Person.self])
}

/// Version 3, inferred from version 2: `name` renamed `fullName`, `nickname` added with a default.
enum PeopleV3 {
    final class Person: ManagedObject {
        override class var entityName: String { "Person" }
        @Attribute(.originalName("name")) var fullName: String = ""
        @Attribute var age: Int64 = 0
        @Attribute var nickname: String = "none"
        @Attribute var street: String = ""
        @Attribute var city: String = ""
    }

    static let model = try! ObjectModel(name: "People", version: "3", types: [Person.self])
}

/// Version 4: the address split out of `Person` into an `Address` entity (a custom stage creates them).
enum PeopleV4 {
    final class Person: ManagedObject {
        override class var entityName: String { "Person" }
        @Attribute var fullName: String = ""
        @Attribute var age: Int64 = 0
        @Attribute var nickname: String = "none"
        @Relationship(inverse: "person") var address: Address?
    }

    final class Address: ManagedObject {
        override class var entityName: String { "Address" }
        @Attribute var street: String = ""
        @Attribute var city: String = ""
        @Relationship(inverse: "address") var person: Person?
    }

    static let model = try! ObjectModel(name: "People", version: "4", types: [Person.self, Address.self])
}

/// The stages of the people plan.
enum PeopleStages {
    struct UnreadableAge: Error, CustomStringConvertible {
        var text: String
        var description: String { "age \(text) is not a number" }
    }

    /// Version 1 → 2: the age parsed from its text; text that is no number throws.
    static let parseAge = MigrationStage.custom(
        to: PeopleV2.model,
        [
            EntityMigration(entity: "Person", computing: ["age"]) { old, new in
                guard case .string(let text)? = old.value(forKey: "age"), let age = Int64(text) else {
                    throw UnreadableAge(text: "\(old.value(forKey: "age") ?? .null)")
                }
                new.setValue(.int64(age), forKey: "age")
            }
        ])

    /// Version 3 → 4: street and city move into an Address related to the person.
    static let splitAddress = MigrationStage.custom(
        to: PeopleV4.model,
        [
            EntityMigration(entity: "Person", computing: ["address"]) { old, new in
                new.setRelatedObject(
                    ["street": old.value(forKey: "street") ?? .null, "city": old.value(forKey: "city") ?? .null],
                    forKey: "address")
            }
        ])

    static let plan = MigrationPlan(
        from: PeopleV1.model, stages: [parseAge, .inferred(to: PeopleV3.model), splitAddress])
}

/// Writes a version 1 people store: `count` people saved one per transaction, then person 0 moves (new street and
/// age), person 1 is deleted. Returns the last transaction ID.
@discardableResult
func writePeopleV1(at path: String, count: Int = 5, ageOfLast: String? = nil) throws -> UInt64 {
    let container = try ModelContainer(path: path, model: PeopleV1.model)
    let context = container.newBackgroundContext(name: "writer")
    var people: [PeopleV1.Person] = []
    for index in 0..<count {
        let person = PeopleV1.Person()
        context.insert(person)
        person.name = "person \(index)"
        person.age = index == count - 1 ? ageOfLast ?? "\(20 + index)" : "\(20 + index)"
        person.street = "\(index) Main Street"
        person.city = index.isMultiple(of: 2) ? "Lyon" : "Oslo"
        people.append(person)
        try context.save()
    }
    people[0].street = "1 New Road"
    people[0].age = "99"
    try context.save()
    context.delete(people[1])
    try context.save()
    let last = container.lastTransactionID
    try container.close()
    return last
}
