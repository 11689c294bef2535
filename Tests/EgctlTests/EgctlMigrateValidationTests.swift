import EventGraph
import Foundation
import Testing

/// Version 1 of a crate model: crates may have no owner and any number of bottles.
private enum CratesV1 {
    final class Crate: ManagedObject {
        override class var entityName: String { "Crate" }
        @Attribute var label: String = ""
        @Relationship(inverse: "crates") var owner: Cellar?
        @Relationship(inverse: "crate") var bottles: Set<Bottle>
    }

    final class Cellar: ManagedObject {
        override class var entityName: String { "Cellar" }
        @Relationship(inverse: "owner") var crates: Set<Crate>
    }

    final class Bottle: ManagedObject {
        override class var entityName: String { "Bottle" }
        @Relationship(inverse: "bottles") var crate: Crate?
    }

    static let model = try! ObjectModel(name: "Crates", version: "1", types: [Crate.self, Cellar.self, Bottle.self])
}

/// Version 2: an attribute added (the shape changes), the owner required, at most two bottles a crate — rules a
/// store records, so `egctl migrate --model` reads them from an empty version 2 store.
private enum CratesV2 {
    final class Crate: ManagedObject {
        override class var entityName: String { "Crate" }
        @Attribute var label: String = ""
        @Attribute var year: Int64 = 2000
        @Relationship(inverse: "crates", isOptional: false) var owner: Cellar?
        @Relationship(inverse: "crate", maximumCount: 2) var bottles: Set<Bottle>
    }

    final class Cellar: ManagedObject {
        override class var entityName: String { "Cellar" }
        @Relationship(inverse: "owner") var crates: Set<Crate>
    }

    final class Bottle: ManagedObject {
        override class var entityName: String { "Bottle" }
        @Relationship(inverse: "bottles") var crate: Crate?
    }

    static let model = try! ObjectModel(name: "Crates", version: "2", types: [Crate.self, Cellar.self, Bottle.self])
}

@Suite("egctl migrate --dry-run lists the objects that break the new model's rules")
struct EgctlMigrateValidationTests {
    /// A version 1 store of four crates — one without an owner, two with three bottles — and an empty version 2
    /// store; returns their paths and the crates' keys.
    private static func writeStores(_ scratch: Scratch, breaking: Bool = true) throws
        -> (store: String, target: String, keys: [UInt64])
    {
        let store = scratch.file("crates.eglog")
        let target = scratch.file("empty-v2.eglog")
        let container = try ModelContainer(path: store, model: CratesV1.model)
        let context = container.newBackgroundContext()
        let cellar = CratesV1.Cellar()
        context.insert(cellar)
        var crates: [CratesV1.Crate] = []
        for index in 0..<4 {
            let crate = CratesV1.Crate()
            context.insert(crate)
            crate.label = "crate \(index)"
            if !(breaking && index == 1) { crate.owner = cellar }
            for _ in 0..<(breaking && index >= 2 ? 3 : 1) {
                let bottle = CratesV1.Bottle()
                context.insert(bottle)
                bottle.crate = crate
            }
            crates.append(crate)
            try context.save()
        }
        let keys = crates.map(\.objectID.key)
        try container.close()
        try ModelContainer(path: target, model: CratesV2.model).close()
        return (store, target, keys)
    }

    @Test func theTextListsEachRuleWithItsCountAndFirstObjects() throws {
        let scratch = Scratch()
        let (store, target, keys) = try Self.writeStores(scratch)
        let result = try Egctl.run("migrate", store, "--model", target, "--dry-run")
        #expect(result.status == 0, "\(result.stderr)")
        #expect(
            result.stdout.contains(
                "  invalid: Crate.bottles breaks the maximumCount rule in 2 objects: "
                    + "Crate #\(keys[2]) has 3 objects, more than the maximum 2; "
                    + "Crate #\(keys[3]) has 3 objects, more than the maximum 2\n"), "\(result.stdout)")
        #expect(
            result.stdout.contains(
                "  invalid: Crate.owner breaks the required rule in 1 object: Crate #\(keys[1]) is required\n"),
            "\(result.stdout)")
    }

    @Test func theJSONListsEntityPropertyRuleCountAndExamples() throws {
        let scratch = Scratch()
        let (store, target, keys) = try Self.writeStores(scratch)
        let json = try Egctl.run("migrate", store, "--model", target, "--dry-run", "--json").json()
        let failures = try #require(json["validationFailures"] as? [[String: Any]])
        #expect(
            failures.map { "\($0["entity"]!).\($0["property"]!) \($0["rule"]!) \($0["objectCount"]!)" }
                == ["Crate.bottles maximumCount 2", "Crate.owner required 1"])
        let examples = try #require(failures.last?["examples"] as? [[String: String]])
        #expect(examples.count == 1)
        #expect(examples.first?["message"] == "is required")
        #expect(examples.first?["object"]?.hasSuffix("/Crate/\(keys[1])") == true)
    }

    @Test func aStoreThatKeepsTheRulesHasAnEmptyList() throws {
        let scratch = Scratch()
        let (store, target, _) = try Self.writeStores(scratch, breaking: false)
        let result = try Egctl.run("migrate", store, "--model", target, "--dry-run", "--json")
        #expect(result.status == 0, "\(result.stderr)")
        #expect((try result.json()["validationFailures"] as? [Any])?.isEmpty == true)
        let text = try Egctl.run("migrate", store, "--model", target, "--dry-run")
        #expect(!text.stdout.contains("invalid"))
    }
}
