public import EventGraph

// Seed 002 (LCDDataSource): contacts downloaded as XML by data sources, parsed by workers. The seed's `Contact`
// entity, with `email` as the key a feed identifies a contact by (find-or-create), and `lastNameInitial` as the
// section of the main context's results.

/// A contact from a data source's XML feed.
public final class Contact: ManagedObject {
    @Attribute public var firstName: String = ""
    @Attribute(.indexed) public var lastName: String = ""
    /// The first letter of ``lastName``, kept by the parser: the section the contacts list shows it in.
    @Attribute public var lastNameInitial: String = ""
    @Attribute(.unique) public var email: String = ""
    @Attribute public var company: String = ""
}

/// The contacts model.
public enum ContactsModel {
    /// Version 1 of the contacts model.
    public static let model: ObjectModel = {
        do {
            return try ObjectModel(name: "Contacts", version: "1", types: [Contact.self])
        } catch {
            fatalError("the contacts model is invalid: \(error)")
        }
    }()
}
