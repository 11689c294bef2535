/// One open file descriptor shared by reference: the writer's state and its leader writing outside the lock, or a
/// scan and the transactions it delivers (which re-read their fragments from the same file, not from a path that
/// a rewrite may have replaced since).
final class SharedLogFile: Sendable {
    let file: LogFile

    init(_ file: consuming LogFile) { self.file = file }

    var path: String { file.path }
}
