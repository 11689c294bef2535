extension ModelContainer {
    /// The next value of a named, persistent counter: 1 the first time, then each time one more, never the same
    /// value twice — also across crashes, and when contexts on several threads ask at once.
    ///
    /// Each value is recorded in the store's log and synced before it is returned, whatever the store's
    /// ``CommitDurability``; a value that the app then does not use is not handed out again (the counter has a
    /// gap). Counters survive compaction and reopening.
    ///
    /// ```swift
    /// student.number = try container.nextValue(of: "studentID", inConfiguration: "Private")
    /// ```
    ///
    /// - Parameters:
    ///   - name: the counter's name, 1 to 256 bytes of UTF-8; each name counts on its own.
    ///   - configuration: the configuration whose store keeps the counter, in a container of several stores; `nil`
    ///     for the first store given (or the only one).
    /// - Throws: ``EventGraphError`` with code `invalidArgument` for a bad name or configuration, `storeNotMounted`
    ///   when the configuration's store is not mounted, `readOnly`, `closed` or `log` when the value cannot be
    ///   recorded (no value is handed out then).
    public func nextValue(of name: String, inConfiguration configuration: String? = nil) throws(EventGraphError)
        -> Int64
    {
        if let coordinator = objectStore as? StoreCoordinator {
            return try coordinator.nextValue(of: name, configuration: configuration)
        }
        if let configuration, configuration != ObjectModel.defaultConfigurationName,
            !model.configurationNames.contains(configuration)
        {
            throw EventGraphError(
                .invalidArgument, "the model '\(model.name)' has no configuration '\(configuration)'")
        }
        return try store.nextValue(of: name)
    }
}
