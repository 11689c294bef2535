@testable import EventGraph
import LogFormat

/// Gives tests a memory backend they can inject failures into.
final class MemoryBackendProbe {
    let backend = MemoryBackend()

    func container(model: ObjectModel) throws -> ModelContainer {
        ModelContainer(store: try Store.open(backend: backend, model: model), path: nil)
    }

    func failNextAppend() {
        backend.failNextAppend(with: LogFormatError(.io, "injected write failure"))
    }
}
