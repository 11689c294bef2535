import LogFormat

extension ModelContainer {
    /// What opening a store does when its recorded model differs from the app's.
    public enum MigrationPolicy: Hashable, Sendable {
        /// Migrate by inferred mapping, keeping history (the default); the old log is kept as a backup.
        case inferred
        /// Refuse with ``EventGraphError/Code/modelMismatch``; migrate explicitly with ``StoreMigration``.
        case never
    }

    /// Opens a store with `open`; when the recorded model differs and the policy allows, migrates it by inferred
    /// mapping first and opens the result.
    static func openMigratingIfNeeded(
        path: String, model: ObjectModel?, configuration: Configuration,
        open: () throws(EventGraphError) -> Store
    ) throws(EventGraphError) -> Store {
        do throws(EventGraphError) {
            return try open()
        } catch {
            guard error.code == .modelMismatch, let model, configuration.migration == .inferred else { throw error }
            var options = StoreMigration.Options()
            options.faultInjector = configuration.faultInjector
            try StoreMigration.migrate(path: path, to: model, options: options)
            return try open()
        }
    }
}
