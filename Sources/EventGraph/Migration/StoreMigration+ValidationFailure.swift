/// The objects of a migrated state that break one rule of the new model.
extension StoreMigration {
    /// The existing objects that break one validation rule of the new model (one property of one entity), as a
    /// dry run finds them in the migrated state: how many, and the first few by key with the message a save would
    /// give.
    ///
    /// A migration does not refuse such objects: it keeps them as they are, and the next save that inserts or
    /// changes one of them fails with the usual ``EventGraphError/Code/validation`` error until its value is
    /// fixed (see `Docs/Migration.md`).
    public struct ValidationFailure: Hashable, Sendable, CustomStringConvertible {
        /// The entity whose rule the objects break (the objects may be of a sub-entity).
        public var entityName: String
        /// The property of the rule.
        public var propertyName: String
        /// The rule.
        public var rule: ValidationRuleKind
        /// How many objects break it.
        public var objectCount: Int
        /// The objects with the smallest keys that break it (at most ``exampleLimit``), with the message a save
        /// would give for each (it shows the value: "is 300, above the maximum 200.0").
        public var examples: [Example]

        /// One object that breaks a rule.
        public struct Example: Hashable, Sendable {
            /// The object (its key is the one it had before the migration).
            public var objectID: ObjectID
            /// The sentence a save's validation error would give.
            public var message: String
        }

        /// The most objects a ``ValidationFailure`` lists as examples.
        public static let exampleLimit = 5

        public var description: String {
            let shown = examples.map { "\($0.objectID.entityName) #\($0.objectID.key) \($0.message)" }
            let more = objectCount > examples.count ? ", …" : ""
            return "\(entityName).\(propertyName) breaks the \(rule) rule in \(objectCount) "
                + "object\(objectCount == 1 ? "" : "s"): \(shown.joined(separator: "; "))\(more)"
        }
    }
}
