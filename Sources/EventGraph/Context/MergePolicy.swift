/// What a save does when objects it changes were changed in the store since the context read them.
public enum MergePolicy: Sendable, Hashable {
    /// The save fails with a ``EventGraphError/Code/conflict`` error naming every conflicting object (default).
    case error
    /// Properties changed both in the store and in the context keep the store's value; the context's other
    /// changes are saved.
    case storeWins
    /// The context's changes overwrite the store's values, property by property.
    case objectWins
}
