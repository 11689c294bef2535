public import EventGraph
public import Foundation

#if canImport(FoundationXML)
    // On Linux, XMLParser lives in FoundationXML (over libxml2), so that Foundation itself does not need libxml2.
    import FoundationXML
#endif

/// An XML feed that could not be read: where, and why.
public struct ContactsFeedError: Error, CustomStringConvertible {
    /// The feed's name (its file or URL, as the data source calls it).
    public var source: String
    /// The line and column the parser stopped at (1-based).
    public var line: Int
    public var column: Int
    /// What the parser reported.
    public var reason: String

    public var description: String { "\(source): line \(line), column \(column): \(reason)" }
}

/// Seed 002's `ContactsParser`: binds each `<contact>` element of a feed to a ``Contact`` in a worker context,
/// found by email or created.
///
/// Like the seed's `LAbstractCDParser`, it collects an element's text and binds it when the element ends; a
/// contact is looked up by email when its element closes, since the email may come after the other fields.
public enum ContactsParser {
    /// Parses `data` into `context` (a worker) and returns the contacts it bound, in feed order.
    ///
    /// - Throws: ``ContactsFeedError`` naming the line and column when the XML is malformed, or when the lookup of a
    ///   contact by email cannot read the store (its reason is then the store's error); the context then holds a
    ///   partial import, which the caller discards.
    @discardableResult
    public static func parse(_ data: Data, source: String, into context: ObjectContext) throws(ContactsFeedError)
        -> [Contact]
    {
        let parser = XMLParser(data: data)
        let binder = ContactBinder(context: context)
        parser.delegate = binder
        let finished = parser.parse()
        // The first error, where the delegate saw it: on Linux, `parse()` can return true after a premature end of
        // the document, and the parser's position afterwards is past the error.
        if let error = binder.firstError {
            throw ContactsFeedError(source: source, line: error.line, column: error.column, reason: error.reason)
        }
        guard finished else {
            throw ContactsFeedError(
                source: source, line: parser.lineNumber, column: parser.columnNumber,
                reason: parser.parserError.map(Self.reason) ?? "the XML parser stopped")
        }
        return binder.contacts
    }
}

extension ContactsParser {
    /// An XMLParser error as text: its code (on Linux the error has no description of its own).
    fileprivate static func reason(_ error: any Error) -> String {
        let error = error as NSError
        return "malformed XML (\(error.domain) code \(error.code))"
    }
}

/// The parser's delegate: one contact's fields collected between `<contact>` and `</contact>`.
private final class ContactBinder: NSObject, XMLParserDelegate {
    private struct Fields {
        var firstName = ""
        var lastName = ""
        var email = ""
        var company = ""
    }

    private let context: ObjectContext
    private var fields: Fields?
    private var text = ""
    private(set) var contacts: [Contact] = []
    private(set) var firstError: (line: Int, column: Int, reason: String)?

    init(context: ObjectContext) {
        self.context = context
    }

    func parser(
        _ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?, qualifiedName: String?,
        attributes: [String: String] = [:]
    ) {
        if elementName == "contact" { fields = Fields() }
        text = ""
    }

    func parser(_ parser: XMLParser, foundCharacters string: String) {
        text += string
    }

    func parser(_ parser: XMLParser, didEndElement elementName: String, namespaceURI: String?, qualifiedName: String?) {
        let value = text.trimmingCharacters(in: .whitespacesAndNewlines)
        text = ""
        switch elementName {
        case "contact":
            if let fields {
                do {
                    contacts.append(try bind(fields))
                } catch {
                    // The store could not answer the lookup: stop where the contact ends, as for malformed XML.
                    firstError = firstError ?? (parser.lineNumber, parser.columnNumber, error.message)
                    parser.abortParsing()
                }
            }
            fields = nil
        case "firstName": fields?.firstName = value
        case "lastName": fields?.lastName = value
        case "email": fields?.email = value
        case "company": fields?.company = value
        default: break
        }
    }

    func parser(_ parser: XMLParser, parseErrorOccurred parseError: any Error) {
        guard firstError == nil else { return }
        firstError = (parser.lineNumber, parser.columnNumber, ContactsParser.reason(parseError))
        parser.abortParsing()
    }

    /// The contact with the fields' email (found or created), brought up to date.
    private func bind(_ fields: Fields) throws(EventGraphError) -> Contact {
        let contact =
            try fields.email.isEmpty
            ? insertedContact() : context.fetchOrInsert(Contact.self, unique: \.email, equals: fields.email)
        contact.firstName = fields.firstName
        contact.lastName = fields.lastName
        contact.lastNameInitial = fields.lastName.first.map { String($0).uppercased() } ?? ""
        contact.company = fields.company
        return contact
    }

    private func insertedContact() -> Contact {
        let contact = Contact()
        context.insert(contact)
        return contact
    }
}
