/// Who holds a `flock`, as the kernel reports it in `/proc/locks` (Linux).
///
/// A line there reads `1: FLOCK  ADVISORY  WRITE 7639 fe:00:16222215 0 EOF`: the pid of the process that took the
/// lock, then the file's device (major and minor, in hex) and inode. Lines of processes waiting for a lock have
/// `->` after the number and are skipped.
enum LockHolders {
    /// `/proc/locks` has one line per lock in the system; beyond this size it is not read.
    static let maxByteCount = 8 << 20

    /// The pid holding an exclusive `flock` on the file, when the kernel says (nil elsewhere than Linux, or when
    /// the holder is in another pid namespace, which the kernel reports as 0).
    static func processID(holding file: FileIdentity) -> Int32? {
        #if os(Linux)
            guard let bytes = SystemCalls.readSmallFile("/proc/locks", byteLimit: maxByteCount) else { return nil }
            return processID(holding: file, in: String(decoding: bytes, as: UTF8.self))
        #else
            return nil
        #endif
    }

    /// Parses `/proc/locks` text (separate for tests).
    static func processID(holding file: FileIdentity, in text: String) -> Int32? {
        let major = ((file.device >> 8) & 0xfff) | ((file.device >> 32) & ~0xfff)
        let minor = (file.device & 0xff) | ((file.device >> 12) & ~0xff)
        for line in text.split(separator: "\n") {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard fields.count >= 6, fields[1] == "FLOCK", fields[3] == "WRITE" else { continue }
            let location = fields[5].split(separator: ":")
            guard location.count == 3, UInt64(location[0], radix: 16) == major,
                UInt64(location[1], radix: 16) == minor, UInt64(location[2]) == file.inode,
                let pid = Int32(fields[4]), pid > 0
            else { continue }
            return pid
        }
        return nil
    }
}
