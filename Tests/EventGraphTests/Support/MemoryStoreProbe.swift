import Foundation
import LogFormat

@testable import EventGraph

/// An in-memory store whose log file tests can reach: reopen it, read it with LogFormat, make its writes fail.
final class MemoryStoreProbe {
    let volume = MemoryVolume()
    let faults = FaultInjector()

    /// The store's path: a file in the volume, which every LogFormat reader and writer accepts.
    var path: String { volume.file("store.eglog") }

    /// Opens (or creates) the store, with the probe's fault injector in its writer.
    func container(model: ObjectModel) throws -> ModelContainer {
        var configuration = ModelContainer.Configuration(recoveryHandler: nil)
        configuration.faultInjector = faults
        return try ModelContainer(path: path, model: model, configuration: configuration)
    }

    /// Makes the log's next write fail (an I/O error, as from a full disk).
    func failNextAppend() {
        faults.arm(.write, fault: .fail(errno: EIO))
    }
}
