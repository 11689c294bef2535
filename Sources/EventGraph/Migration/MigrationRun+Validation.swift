import LogFormat

/// A dry run's check of the new model's validation rules when the first pass built no state.
extension MigrationRun {
    /// Completes `validation` for a state the first pass did not build: in windows of it (a rule on a relationship
    /// needs the objects whole), or — when the records were followed — by building only the objects it reports.
    func validate(
        unbuilt state: MigrationState, with validation: inout MigrationValidation, inWindows: Bool,
        spans: MigrationTransactionSpans?, reader: LogReader
    ) throws {
        if inWindows {
            let maxObjectCount = options.windowObjectCount ?? Self.liveStateWindowObjectCount
            for window in state.windows(maxObjectCount: maxObjectCount, model: model) where window.objectCount > 0 {
                validation.check(try build(window, spans: spans, reader: reader))
            }
        } else if validation.tracksRecords, case let objects = validation.sampleObjects, !objects.isEmpty {
            // The records named the objects that break a rule; one more pass builds the few reported.
            let sample = MigrationWindow(sampling: objects, entityCount: model.entities.count)
            validation.addExamples(from: try build(sample, spans: spans, reader: reader))
        }
    }
}
