import ArgumentParser
import EventGraph
import LogFormat

/// Exit statuses shared by every command (documented in `egctl --help`).
enum ExitStatus {
    /// Everything committed is intact / the command did what was asked.
    static let success = ExitCode(0)
    /// Damage was found, or the command failed on a valid store.
    static let damage = ExitCode(1)
    /// Usage error, or the file is not a store (missing, a directory, not a log, a newer format).
    static let usage = ExitCode(2)
}

/// Turns any error into one line on standard error and the right exit status — never a stack trace.
enum Failure {
    static func exit(_ error: any Error) -> ExitCode {
        if let error = error as? LogFormatError {
            Terminal.warn("egctl: \(error.description)")
            if error.code == .io, let code = error.systemErrno, [2, 13, 20, 21].contains(code) {
                return ExitStatus.usage  // ENOENT, EACCES, ENOTDIR, EISDIR: the argument does not name a store
            }
            // Only an argument that names no store of this format is a usage error; anything else (damage, a
            // limit exceeded while compacting, a lock, an I/O failure) is a failure on a valid store.
            switch error.code {
            case .notALog, .unsupportedVersion, .unsupportedFeature, .invalidArgument: return ExitStatus.usage
            default: return ExitStatus.damage
            }
        }
        // Commands that open a store through the library (compact) meet LogFormat's errors wrapped.
        if let error = error as? EventGraphError, let underlying = error.underlying {
            return exit(underlying)
        }
        if let exit = error as? ExitCode { return exit }
        if let validation = error as? ValidationError {
            Terminal.warn("egctl: \(validation.message)")
            return ExitStatus.usage
        }
        Terminal.warn("egctl: \(error)")
        return ExitStatus.damage
    }

    /// Runs a command body, converting every error.
    static func guarding(_ body: () throws -> Void) throws {
        do { try body() } catch { throw exit(error) }
    }
}
