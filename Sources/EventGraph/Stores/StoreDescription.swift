/// One store of a container with several stores: where its log is, and the configuration of the model whose
/// entities it holds (see ``ObjectModel/configurationName(of:)``).
///
/// ```swift
/// let container = try ModelContainer(model: model, stores: [
///     StoreDescription(path: "private.eglog"),
///     StoreDescription(path: "public.eglog", configuration: "Public"),
/// ])
/// ```
public struct StoreDescription: Sendable, Hashable, CustomStringConvertible {
    /// Where the store's log is (symbolic links are followed).
    public var path: String
    /// The configuration whose entities the store holds.
    public var configuration: String

    /// Describes the store at `path` holding the entities of `configuration`.
    public init(path: String, configuration: String = ObjectModel.defaultConfigurationName) {
        self.path = path
        self.configuration = configuration
    }

    public var description: String { "the \(configuration) store \(path)" }
}
