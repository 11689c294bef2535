/// A position in sectioned results: the section, then the row inside it.
public struct ResultsIndexPath: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// The section's index.
    public var section: Int
    /// The row's index inside its section.
    public var row: Int

    /// Creates an index path.
    public init(section: Int, row: Int) {
        self.section = section
        self.row = row
    }

    public static func < (a: ResultsIndexPath, b: ResultsIndexPath) -> Bool {
        (a.section, a.row) < (b.section, b.row)
    }

    public var description: String { "[\(section), \(row)]" }
}

/// How one batch of changes moved a ``FetchedResultsController``'s rows, in the shape a table view applies.
///
/// Old positions (``deletedRows``, ``deletedSections``, each ``Move/from``) are in the results before the batch;
/// new positions (``insertedRows``, ``insertedSections``, ``updatedRows``, each ``Move/to``) are in the results
/// after it. ``applied(to:)`` states the order exactly: remove the deleted and moved-from rows, then the deleted
/// sections (empty by then), then insert the new sections, then the inserted and moved-to rows. An object whose
/// sort or section value changed is always a move (also when its index path happens to stay the same), so every
/// row that is neither inserted, deleted nor moved keeps its place among the others.
public struct FetchedResultsDifference: Hashable, Sendable {
    /// A row and the object it shows.
    public struct Row: Hashable, Sendable {
        /// The object.
        public var objectID: ObjectID
        /// Where it is (before the batch for a deleted row, after it otherwise).
        public var indexPath: ResultsIndexPath
    }

    /// A row that changed place.
    public struct Move: Hashable, Sendable {
        /// The object.
        public var objectID: ObjectID
        /// Where it was before the batch.
        public var from: ResultsIndexPath
        /// Where it is after the batch.
        public var to: ResultsIndexPath
    }

    /// A section that appeared or disappeared.
    public struct Section: Hashable, Sendable {
        /// The section's name (its section value as text).
        public var name: String
        /// Its index (before the batch for a deleted section, after it for an inserted one).
        public var index: Int
    }

    /// Sections that became empty, by their index before the batch, ascending.
    public var deletedSections: [Section] = []
    /// Sections that got their first row, by their index after the batch, ascending.
    public var insertedSections: [Section] = []
    /// Rows that left the results, by their index path before the batch, ascending.
    public var deletedRows: [Row] = []
    /// Rows that joined the results, by their index path after the batch, ascending.
    public var insertedRows: [Row] = []
    /// Rows whose sort or section value changed, ordered by their new index path.
    public var movedRows: [Move] = []
    /// Rows whose object changed without changing place, by their index path after the batch, ascending.
    public var updatedRows: [Row] = []

    /// Whether the batch changed nothing the results show.
    public var isEmpty: Bool {
        deletedSections.isEmpty && insertedSections.isEmpty && deletedRows.isEmpty && insertedRows.isEmpty
            && movedRows.isEmpty && updatedRows.isEmpty
    }

    /// The results after the batch, from the results before it (each section its object IDs, in order).
    ///
    /// This is the definition of the difference's positions; a view that keeps its own copy of the rows applies
    /// a difference the same way.
    public func applied(to sections: [[ObjectID]]) -> [[ObjectID]] {
        var sections = sections
        let removed = (deletedRows.map(\.indexPath) + movedRows.map(\.from)).sorted(by: >)
        for path in removed { sections[path.section].remove(at: path.row) }
        for section in deletedSections.reversed() { sections.remove(at: section.index) }
        for section in insertedSections { sections.insert([], at: section.index) }
        let added = (insertedRows.map { ($0.indexPath, $0.objectID) } + movedRows.map { ($0.to, $0.objectID) })
            .sorted { $0.0 < $1.0 }
        for (path, objectID) in added { sections[path.section].insert(objectID, at: path.row) }
        return sections
    }
}
