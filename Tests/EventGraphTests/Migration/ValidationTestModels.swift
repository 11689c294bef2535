import EventGraph
import Foundation

/// Version 1 of a small shop model without validation rules: what its items hold, version 2 may refuse.
enum ShopV1 {
    final class Item: ManagedObject {
        override class var entityName: String { "Item" }
        @Attribute var title: String = "ok"
        @Attribute var price: Int64 = 50
        @Attribute var code: String = "abc"
        @Relationship(inverse: "items") var owner: Owner?
        @Relationship(inverse: "item") var parts: Set<Part>
    }

    final class Owner: ManagedObject {
        override class var entityName: String { "Owner" }
        @Attribute var name: String = ""
        @Relationship(inverse: "owner") var items: Set<Item>
    }

    final class Part: ManagedObject {
        override class var entityName: String { "Part" }
        @Attribute var label: String = ""
        @Relationship(inverse: "parts") var item: Item?
    }

    static let model = try! ObjectModel(name: "Shop", version: "1", types: [Item.self, Owner.self, Part.self])
}

/// Version 2: an attribute added with a default (so the store migrates), and a rule of every kind on `Item`.
enum ShopV2 {
    final class Item: ManagedObject {
        override class var entityName: String { "Item" }
        @Attribute(.pattern("[a-z ]+")) var title: String = "ok"
        @Attribute(.range(0...100)) var price: Int64 = 50
        @Attribute(.length(2...4)) var code: String = "abc"
        @Attribute var sku: String = "none"
        @Relationship(inverse: "items", isOptional: false) var owner: Owner?
        @Relationship(inverse: "item", minimumCount: 1, maximumCount: 3) var parts: Set<Part>
    }

    final class Owner: ManagedObject {
        override class var entityName: String { "Owner" }
        @Attribute var name: String = ""
        @Relationship(inverse: "owner") var items: Set<Item>
    }

    final class Part: ManagedObject {
        override class var entityName: String { "Part" }
        @Attribute var label: String = ""
        @Relationship(inverse: "parts") var item: Item?
    }

    static let model = try! ObjectModel(name: "Shop", version: "2", types: [Item.self, Owner.self, Part.self])
}

/// What one version 1 item holds: valid under version 2 unless a test changes it.
struct ShopItemSpec {
    var title = "ok"
    var price: Int64 = 50
    var code = "abc"
    var hasOwner = true
    var partCount = 1

    /// An item that breaks exactly `rule` of version 2 (and no other rule).
    init(breaking rule: ValidationRuleKind? = nil) {
        switch rule {
        case .required?: hasOwner = false
        case .minimumValue?: price = -5
        case .maximumValue?: price = 500
        case .minimumLength?: code = "a"
        case .maximumLength?: code = "abcdef"
        case .pattern?: title = "Not OK"
        case .minimumCount?: partCount = 0
        case .maximumCount?: partCount = 4
        case nil: break
        }
    }
}

/// Writes a version 1 shop, one save per item (an owner first); returns the items' keys, in order.
@discardableResult
func writeShopV1(at path: String, items: [ShopItemSpec]) throws -> [UInt64] {
    let container = try ModelContainer(path: path, model: ShopV1.model)
    let context = container.newBackgroundContext(name: "shop")
    let owner = ShopV1.Owner()
    context.insert(owner)
    owner.name = "owner"
    try context.save()
    var written: [ShopV1.Item] = []
    for spec in items {
        let item = ShopV1.Item()
        context.insert(item)
        item.title = spec.title
        item.price = spec.price
        item.code = spec.code
        if spec.hasOwner { item.owner = owner }
        for index in 0..<spec.partCount {
            let part = ShopV1.Part()
            context.insert(part)
            part.label = "part \(index)"
            part.item = item
        }
        try context.save()
        written.append(item)
    }
    let keys = written.map(\.objectID.key)
    try container.close()
    return keys
}

/// Version 2 with rules on attributes only (its relationships have none that can fail): a dry run checks them on
/// the stream of records, without building the state.
enum ShopV2Values {
    final class Item: ManagedObject {
        override class var entityName: String { "Item" }
        @Attribute(.pattern("[a-z ]+")) var title: String = "ok"
        @Attribute(.range(0...100)) var price: Int64 = 50
        @Attribute(.length(2...4)) var code: String = "abc"
        @Attribute var sku: String = "none"
        @Relationship(inverse: "items") var owner: Owner?
        @Relationship(inverse: "item") var parts: Set<Part>
    }

    final class Owner: ManagedObject {
        override class var entityName: String { "Owner" }
        @Attribute var name: String = ""
        @Relationship(inverse: "owner") var items: Set<Item>
    }

    final class Part: ManagedObject {
        override class var entityName: String { "Part" }
        @Attribute var label: String = ""
        @Relationship(inverse: "parts") var item: Item?
    }

    static let model = try! ObjectModel(name: "Shop", version: "2", types: [Item.self, Owner.self, Part.self])
}

/// Changes a version 1 shop after it was written: `fix` gets valid values back, `breaking` gets the title
/// "Not OK", `deleted` is deleted (one save each).
func changeShopV1(at path: String, fix: UInt64, breaking: UInt64, deleted: UInt64) throws {
    let container = try ModelContainer(path: path, model: ShopV1.model)
    let context = container.newBackgroundContext(name: "later")
    let items = try context.fetch(FetchDescriptor<ShopV1.Item>())
    func item(_ key: UInt64) -> ShopV1.Item { items.first { $0.objectID.key == key }! }
    item(fix).title = "ok"
    item(fix).price = 50
    item(fix).code = "abc"
    try context.save()
    item(breaking).title = "Not OK"
    try context.save()
    context.delete(item(deleted))
    try context.save()
    try container.close()
}
