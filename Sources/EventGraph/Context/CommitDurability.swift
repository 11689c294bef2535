package import LogFormat

/// When a save is acknowledged, relative to the data reaching the disk.
public enum CommitDurability: Hashable, Sendable, CaseIterable, CustomStringConvertible {
    /// After `fdatasync` covers the save (the default); concurrent saves share one sync.
    case full
    /// After the save reaches the operating system; the store syncs soon after. A process crash loses nothing;
    /// a power loss may lose the last moments, and the store stays consistent.
    case normal
    /// Never sync (tests and scratch data): a power loss may lose anything since the last clean close.
    case none

    /// The mode's name (`full`, `normal`, `none`).
    public var description: String { durability.description }
}

extension CommitDurability {
    /// The log writer's mode for this durability.
    package var durability: Durability {
        switch self {
        case .full: .full
        case .normal: .normal
        case .none: .none
        }
    }
}
