/// One store of a container with several stores: where its log is, and the configuration of the model whose
/// entities it holds (see ``ObjectModel/configurationName(of:)``).
///
/// ```swift
/// let container = try ModelContainer(model: model, stores: [
///     StoreDescription(path: "private.eglog"),
///     StoreDescription(path: "public.eglog", configuration: "Public", mounting: .ifPresent),
/// ])
/// ```
public struct StoreDescription: Sendable, Hashable, CustomStringConvertible {
    /// Whether a container opens the store (see ``ModelContainer/unmountedStores``).
    public enum Mounting: Sendable, Hashable {
        /// The store is opened, and created when its file does not exist.
        case always
        /// The store is opened when its file exists, and left unmounted when it does not (a volume not attached).
        case ifPresent
        /// The store is not opened: references into it stay unresolved until a container mounts it.
        case never
    }

    /// Where the store's log is (symbolic links are followed).
    public var path: String
    /// The configuration whose entities the store holds.
    public var configuration: String
    /// Whether a container opens the store.
    public var mounting: Mounting

    /// Describes the store at `path` holding the entities of `configuration`.
    public init(
        path: String, configuration: String = ObjectModel.defaultConfigurationName, mounting: Mounting = .always
    ) {
        self.path = path
        self.configuration = configuration
        self.mounting = mounting
    }

    public var description: String { "the \(configuration) store \(path)" }
}
