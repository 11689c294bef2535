package import LogFormat

/// An error raised by EventGraph: validation, uniqueness, delete rules, conflicts, model mismatch, I/O.
///
/// ``code`` says what kind of failure it is (new codes can be added without breaking callers); ``message`` is a
/// sentence naming the entity, attribute and object involved; ``failures`` lists every failing object and
/// property when a save was refused for several reasons at once.
public struct EventGraphError: Error, Sendable, CustomStringConvertible {
    /// The kind of failure.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Base: String, Hashable, Sendable {
            case validation, uniqueness, deleteDenied, conflict, invalidModel, modelMismatch, log, readOnly,
                objectNotFound, invalidArgument, closed, historyCompacted, storeMismatch,
                storeNotMounted
        }
        private let base: Base
        private init(_ base: Base) { self.base = base }

        /// Values do not satisfy the model's rules (required, range, length, pattern, counts, custom hook).
        public static let validation = Code(.validation)
        /// A uniqueness constraint would be violated.
        public static let uniqueness = Code(.uniqueness)
        /// A delete was refused by a `deny` delete rule.
        public static let deleteDenied = Code(.deleteDenied)
        /// Objects changed in the store since this context read them.
        public static let conflict = Code(.conflict)
        /// The model's declarations are inconsistent (for example a missing inverse).
        public static let invalidModel = Code(.invalidModel)
        /// The store was written with a different model.
        public static let modelMismatch = Code(.modelMismatch)
        /// The log could not be read or written (the message says why, with the file and byte offset).
        public static let log = Code(.log)
        /// The store or view is read-only.
        public static let readOnly = Code(.readOnly)
        /// No object has the given ID.
        public static let objectNotFound = Code(.objectNotFound)
        /// A caller passed a value outside the documented range.
        public static let invalidArgument = Code(.invalidArgument)
        /// The container was closed.
        public static let closed = Code(.closed)
        /// The change feed was asked for transactions a compaction has dropped from the log.
        public static let historyCompacted = Code(.historyCompacted)
        /// The stores given to a container do not belong together: a store file was replaced by another store's,
        /// or one store was given twice.
        public static let storeMismatch = Code(.storeMismatch)
        /// A store the operation needs is not mounted in the container: a fetch into it would be incomplete, a
        /// relationship read asks for objects there, or a save would change an object there (see
        /// ``ModelContainer/unmountedStores``).
        public static let storeNotMounted = Code(.storeNotMounted)

        public var description: String { base.rawValue }
    }

    /// One failing object and property.
    public struct Failure: Hashable, Sendable, CustomStringConvertible {
        /// The entity of the object.
        public var entityName: String
        /// The object, when it has an ID.
        public var objectID: ObjectID?
        /// The property, when the failure concerns one.
        public var propertyName: String?
        /// A sentence describing the failure.
        public var message: String

        public init(entityName: String, objectID: ObjectID?, propertyName: String?, message: String) {
            self.entityName = entityName
            self.objectID = objectID
            self.propertyName = propertyName
            self.message = message
        }

        public var description: String {
            var text = entityName
            if let objectID { text += " \(objectID.uriString)" }
            if let propertyName { text += ".\(propertyName)" }
            return text + ": " + message
        }
    }

    /// The kind of failure.
    public var code: Code
    /// A sentence naming what went wrong.
    public var message: String
    /// Every failing object and property (empty when the error concerns none).
    public var failures: [Failure]
    /// The log error behind a ``Code/log`` error (for the library's own tools; its message is in ``message``).
    package var underlying: LogFormatError?

    /// Whether the error is a read of the log that failed (an I/O error: `pread` failed), which may succeed when
    /// tried again, unlike damage (bytes that fail their checks will not heal).
    package var isFailedRead: Bool { underlying?.code == .io }

    /// Creates an error.
    public init(_ code: Code, _ message: String, failures: [Failure] = []) {
        self.init(code, message, failures: failures, underlying: nil)
    }

    /// Creates an error with the log error behind it.
    package init(_ code: Code, _ message: String, failures: [Failure] = [], underlying: LogFormatError?) {
        self.code = code
        self.message = message
        self.failures = failures
        self.underlying = underlying
    }

    /// Wraps a log error.
    /// Runs `body`, passing EventGraph errors through and turning log errors (and any other error) into
    /// EventGraph errors that name `path`.
    static func converting<R>(path: String, _ body: () throws -> R) throws(EventGraphError) -> R {
        do {
            return try body()
        } catch let error as EventGraphError {
            throw error
        } catch let error as LogFormatError {
            throw EventGraphError(error)
        } catch {
            throw EventGraphError(.log, "\(path): \(error)")
        }
    }

    init(_ error: LogFormatError) {
        self.init(.log, error.description, underlying: error)
    }

    public var description: String {
        guard !failures.isEmpty else { return message }
        return message + "\n" + failures.map { "  - \($0)" }.joined(separator: "\n")
    }
}
