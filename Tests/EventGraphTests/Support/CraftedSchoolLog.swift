import LogFormat

@testable import EventGraph

/// A school store whose log is written transaction by transaction with LogFormat's writer, so tests can give it
/// what the library never writes itself: gaps in the IDs, operations that do not fit, references into other stores.
struct CraftedSchoolLog {
    let path: String
    let model = TestModels.school
    var course: UInt32 { UInt32(model.entities.first { $0.name == "Course" }!.index) }
    var note: UInt32 { UInt32(model.entities.first { $0.name == "Note" }!.index) }
    func property(_ name: String, of entity: UInt32) -> UInt32 {
        UInt32(model.entities[Int(entity)].properties.firstIndex { $0.name == name }!)
    }

    /// Creates the store (the library records the schema) and appends the changesets.
    init(path: String, _ changesets: (CraftedSchoolLog) -> [Changeset]) throws {
        self.path = path
        try ModelContainer(path: path, model: model).close()
        let writer = try LogWriter(path: path)
        for changeset in changesets(self) {
            try writer.appendTransaction(id: changeset.transactionID, payload: try changeset.encoded())
        }
        try writer.close()
    }

    /// A changeset inserting a course with a code (keys follow the transaction IDs).
    func insertCourse(transactionID: UInt64, code: String) -> Changeset {
        Changeset(
            transactionID: transactionID, commitTimeMicroseconds: Int64(transactionID), author: "crafted",
            nextKey: transactionID + 1,
            operations: [
                .insert(
                    ObjectReference(entityIndex: course, key: transactionID),
                    [PropertyChange(propertyIndex: property("code", of: course), value: .attribute(.string(code)))])
            ])
    }

    /// The graph the tools replay the log to.
    func toolGraph() throws -> LogGraph {
        var graph = LogGraph(source: path)
        try LogReader(path: path).scan { try graph.apply($0) }
        return graph
    }
}
