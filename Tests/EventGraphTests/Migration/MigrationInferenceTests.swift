import EventGraph
import LogFormat
import Testing

/// One entity `Item` (and, where a rule needs them, `Box` and `Base`), old schema against new model.
private func item(
    _ properties: [PropertySchema], superentity: String? = nil, unique: [[String]] = [], indexes: [[String]] = []
)
    -> EntitySchema
{
    EntitySchema(
        name: "Item", superentityName: superentity, properties: properties, uniquenessConstraints: unique,
        indexes: indexes)
}

private func attribute(
    _ name: String, _ type: AttributeType, optional: Bool = true, default value: AttributeValue? = nil
)
    -> PropertySchema
{
    .attribute(AttributeSchema(name: name, type: type, isOptional: optional, defaultValue: value))
}

private let box = EntitySchema(
    name: "Box",
    properties: [
        .relationship(
            RelationshipSchema(name: "items", destinationEntityName: "Item", inverseName: "box", isToMany: true))
    ])
private func boxLink(toMany: Bool) -> PropertySchema {
    .relationship(RelationshipSchema(name: "box", destinationEntityName: "Box", inverseName: "items", isToMany: toMany))
}
private func schema(_ entities: [EntitySchema]) -> SchemaPayload {
    SchemaPayload(modelName: "M", versionIdentifier: "1", modelHash: 0, entities: entities)
}

private func infer(_ old: [EntitySchema], _ new: [EntitySchema]) throws -> MigrationMapping {
    let model = try ObjectModel(
        schema: SchemaPayload(modelName: "M", versionIdentifier: "2", modelHash: 0, entities: new))
    return try MigrationMapping.inferred(from: schema(old), to: model)
}

@Suite("Inferred migration: each rule")
struct MigrationInferenceTests {
    struct Case: CustomTestStringConvertible, Sendable {
        var name: String
        var old: [EntitySchema]
        var new: [EntitySchema]
        var kind: MigrationChange.Kind
        var testDescription: String { name }
    }

    static let inferable: [Case] = [
        Case(
            name: "attribute added", old: [item([attribute("a", .string)])],
            new: [item([attribute("a", .string), attribute("b", .int64, optional: false, default: .int64(7))])],
            kind: .propertyAdded),
        Case(
            name: "attribute removed", old: [item([attribute("a", .string), attribute("b", .string)])],
            new: [item([attribute("a", .string)])], kind: .propertyRemoved),
        Case(
            name: "entity added", old: [item([])], new: [item([]), EntitySchema(name: "Other", properties: [])],
            kind: .entityAdded),
        Case(
            name: "entity removed", old: [item([]), EntitySchema(name: "Other", properties: [])], new: [item([])],
            kind: .entityRemoved),
        Case(
            name: "Int16 → Int64", old: [item([attribute("n", .int16)])], new: [item([attribute("n", .int64)])],
            kind: .numberWidened),
        Case(
            name: "Float → Double", old: [item([attribute("n", .float)])], new: [item([attribute("n", .double)])],
            kind: .numberWidened),
        Case(
            name: "optional → required with a default", old: [item([attribute("s", .string)])],
            new: [item([attribute("s", .string, optional: false, default: .string("x"))])], kind: .madeRequired),
        Case(
            name: "to-one → to-many", old: [item([boxLink(toMany: false)]), box],
            new: [item([boxLink(toMany: true)]), box],
            kind: .toOneBecameToMany),
        Case(
            name: "index added", old: [item([attribute("a", .string)])],
            new: [item([attribute("a", .string)], indexes: [["a"]])],
            kind: .indexesChanged),
        Case(
            name: "uniqueness constraint added", old: [item([attribute("a", .string)])],
            new: [item([attribute("a", .string)], unique: [["a"]])], kind: .uniquenessConstraintAdded),
        Case(
            name: "moved into a parent entity",
            old: [item([attribute("a", .string), attribute("b", .string)])],
            new: [
                EntitySchema(name: "Base", properties: [attribute("a", .string)]),
                item([attribute("a", .string), attribute("b", .string)], superentity: "Base"),
            ],
            kind: .entityParentChanged),
        Case(
            name: "moved out of a parent entity",
            old: [
                EntitySchema(name: "Base", properties: [attribute("a", .string)]),
                item([attribute("a", .string), attribute("b", .string)], superentity: "Base"),
            ],
            new: [
                EntitySchema(name: "Base", properties: [attribute("a", .string)]),
                item([attribute("a", .string), attribute("b", .string)]),
            ],
            kind: .entityParentChanged),
        Case(
            name: "Int16 → Int32", old: [item([attribute("n", .int16)])], new: [item([attribute("n", .int32)])],
            kind: .numberWidened),
        Case(
            name: "Int32 → Int64", old: [item([attribute("n", .int32)])], new: [item([attribute("n", .int64)])],
            kind: .numberWidened),
        Case(
            name: "relationship added", old: [item([]), EntitySchema(name: "Box", properties: [])],
            new: [item([boxLink(toMany: false)]), box], kind: .propertyAdded),
        Case(
            name: "relationship removed", old: [item([boxLink(toMany: false)]), box],
            new: [item([]), EntitySchema(name: "Box", properties: [])], kind: .propertyRemoved),
        Case(
            name: "index dropped", old: [item([attribute("a", .string)], indexes: [["a"]])],
            new: [item([attribute("a", .string)])], kind: .indexesChanged),
    ]

    @Test(arguments: inferable)
    func changeIsInferred(_ rule: Case) throws {
        let mapping = try infer(rule.old, rule.new)
        #expect(mapping.changes.contains { $0.kind == rule.kind }, "\(mapping.changes)")
    }

    struct Refusal: CustomTestStringConvertible, Sendable {
        var name: String
        var old: [EntitySchema]
        var new: [EntitySchema]
        var message: String
        var testDescription: String { name }
    }

    static let refusals: [Refusal] = [
        Refusal(
            name: "String → Int64", old: [item([attribute("n", .string)])], new: [item([attribute("n", .int64)])],
            message: "Item.n changes type from String to Int64"),
        Refusal(
            name: "Int64 → Int16", old: [item([attribute("n", .int64)])], new: [item([attribute("n", .int16)])],
            message: "Item.n changes type from Int64 to Int16"),
        Refusal(
            name: "required without a default", old: [item([attribute("s", .string)])],
            new: [item([attribute("s", .string, optional: false)])],
            message: "Item.s becomes required but has no default"),
        Refusal(
            name: "required attribute added without a default", old: [item([])],
            new: [item([attribute("s", .string, optional: false)])], message: "Item.s is added as a required attribute"),
        Refusal(
            name: "to-many → to-one", old: [item([boxLink(toMany: true)]), box],
            new: [item([boxLink(toMany: false)]), box],
            message: "Item.box becomes to-one"),
        Refusal(
            name: "attribute → relationship",
            old: [item([attribute("box", .string)]), EntitySchema(name: "Box", properties: [])],
            new: [
                item([
                    .relationship(
                        RelationshipSchema(name: "box", destinationEntityName: "Box", inverseName: nil, isToMany: false)
                    )
                ]),
                EntitySchema(name: "Box", properties: []),
            ],
            message: "Item.box changes from a String attribute to a to-one relationship"),
    ]

    @Test(arguments: refusals)
    func changeIsRefused(_ rule: Refusal) throws {
        let error = try #require(throws: EventGraphError.self) { try infer(rule.old, rule.new) }
        #expect(error.code == .modelMismatch)
        #expect(error.message.contains(rule.message), "\(error.message)")
        #expect(error.message.contains("a migration plan must provide") || error.message.contains("give it a default"))
    }

    @Test func renamesFollowDeclaredOriginalNames() throws {
        let mapping = try MigrationMapping.inferred(from: LibraryV1.model.schema, to: LibraryV2.model)
        let renames = mapping.changes.filter { $0.kind == .entityRenamed || $0.kind == .propertyRenamed }
        #expect(
            Set(renames.map(\.description)) == [
                "Book.name: renamed from title", "Bookcase: renamed from Shelf", "Bookcase.tag: renamed from label",
            ])
        #expect(!mapping.changes.contains { $0.kind == .propertyRemoved || $0.kind == .entityRemoved })
    }

    @Test func theSameShapeIsTheIdentity() throws {
        #expect(try MigrationMapping.inferred(from: LibraryV1.model.schema, to: LibraryV1.model).isIdentity)
    }
}
