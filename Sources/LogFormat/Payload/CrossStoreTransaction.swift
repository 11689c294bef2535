/// What a changeset carries when one save spans several stores: the save's identity and every store it wrote, so
/// that an opener of the stores can tell whether each of them holds the save (`Docs/FileFormat.md`, §3.6).
///
/// Every participant's changeset of the save carries the same record. The save is committed once every participant
/// holds its changeset; a store that holds it while another participant lacks it must not show it.
public struct CrossStoreTransaction: Hashable, Sendable {
    /// One store a cross-store save wrote, with the transaction ID the save has in that store's log.
    public struct Participant: Hashable, Sendable {
        /// The store's UUID (its log header's `storeUUID`).
        public var storeUUID: LogUUID
        /// The save's transaction ID in that store's log (at least 1).
        public var transactionID: UInt64

        /// Creates a participant.
        public init(storeUUID: LogUUID, transactionID: UInt64) {
            self.storeUUID = storeUUID
            self.transactionID = transactionID
        }
    }

    /// A random identity shared by every participant's changeset of the save.
    public var id: LogUUID
    /// Every store the save wrote, the one holding the changeset included, in ascending order of store UUID (the
    /// order in which a writer locks and appends to them); at least two.
    public var participants: [Participant]

    /// Creates a record. Precondition: at least two participants, in strictly ascending order of store UUID.
    public init(id: LogUUID, participants: [Participant]) {
        precondition(participants.count >= 2, "a save across stores has at least two participants")
        precondition(
            zip(participants, participants.dropFirst()).allSatisfy { $0.storeUUID < $1.storeUUID },
            "the participants of a save across stores are in ascending order of store UUID, each once")
        self.id = id
        self.participants = participants
    }
}
