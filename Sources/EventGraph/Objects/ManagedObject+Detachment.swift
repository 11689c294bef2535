import Foundation

/// How an object left its context, kept by the object so that its ``ManagedObject/objectID`` still works and so that
/// later use of it fails with a sentence instead of reading empty values.
///
/// An object does not keep its context alive — as in Core Data, the context owns its objects and an object points
/// back without owning it (an unowned reference that the context clears when the object leaves it, see
/// ``ManagedObject/contextStorage``). The other choice (objects owning their context) makes every object with unsaved changes a reference
/// cycle with its context, so a context dropped without a save or a rollback would leak with its whole graph.
/// Instead, a context that is released detaches its objects: their IDs keep working, values the object already
/// holds (the row it fired from, its unsaved values) still read, and whatever needs the context — relationship
/// targets, an external value not read yet, a fault's first read — or changes the object stops the process naming
/// the object, the property and the context, rather than returning an empty value or accepting a change that no
/// save can ever persist.
final class Detachment: Sendable {
    enum Reason: Sendable {
        /// The context was released while the object was still referenced.
        case released
        /// ``ObjectContext/reset()`` forgot the object.
        case reset
        /// A save deleted the object.
        case deleted
    }

    /// The table of stores beneath the context (``ObjectStore/storeUUIDs``), which the object's
    /// ``ManagedObject/identity`` indexes.
    let storeUUIDs: [UUID]
    let contextName: String
    let reason: Reason
    /// The model of the context the object left: it keeps the object's entity alive (objects refer to their entity
    /// without owning it, see ``ManagedObject/entityStorage``), so an object that outlives its context and container
    /// still reads its entity, its ID and its description.
    let model: ObjectModel

    init(storeUUIDs: [UUID], contextName: String, reason: Reason, model: ObjectModel) {
        self.storeUUIDs = storeUUIDs
        self.contextName = contextName
        self.reason = reason
        self.model = model
    }
}

extension ManagedObject {
    /// Takes the object out of its context: it no longer refers to it (its reference is unowned and must not
    /// outlive the context, see ``contextStorage``) and keeps how it left.
    final func detach(_ detachment: Detachment) {
        contextStorage = nil
        self.detachment = detachment
    }

    /// Stops the process when the object's context was released: the caller needs the context to read the
    /// property at `index` (all properties when `nil`) and would otherwise return an empty value, or it changes a
    /// property that no save can persist any more.
    @inline(never)
    final func stopIfContextReleased(_ index: Int?, changing: Bool = false) {
        guard let detachment, detachment.reason == .released else { return }
        let property =
            index.map { "\(entity.name).\(entity.properties[$0].name)" } ?? "the properties of \(entity.name)"
        preconditionFailure(
            "cannot \(changing ? "change" : "read") \(property) of \(objectID.uriString): its context "
                + "'\(detachment.contextName)' was released (objects do not keep their context alive; keep a "
                + "reference to the context while its objects are in use, or look the object up by its ID in a "
                + "context that is alive)")
    }
}
