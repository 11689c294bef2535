/// Carries an error thrown by a caller's closure through LogFormat's typed-throwing internals, so that the public
/// API rethrows the caller's own error unchanged.
final class CallerError {
    var error: (any Error)?

    /// Runs the caller's `body`; if it throws, remembers the error and throws a placeholder LogFormatError.
    func run(_ body: () throws -> Void) throws(LogFormatError) {
        do {
            try body()
        } catch let error {
            self.error = error
            throw LogFormatError(.closed, "stopped by the caller's error: \(error)")
        }
    }

    /// Rethrows the caller's error if there was one, otherwise `error`.
    func rethrow(_ error: any Error) throws -> Never {
        throw self.error ?? error
    }
}
