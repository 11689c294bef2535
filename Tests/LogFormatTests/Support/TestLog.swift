import Testing

@testable import LogFormat

/// Builds small logs for the damage, truncation and fault tests.
enum TestLog {
    /// The payload of transaction `id` in logs built here: incompressible, so every frame has a predictable size.
    static func payload(for id: UInt64, byteCount: Int = 100) -> [UInt8] { TestBytes.noise(byteCount, salt: id) }

    /// Writes transactions 1...`count` with ``payload(for:byteCount:)`` and returns where each landed.
    ///
    /// With `.full` durability every frame's watermark proves the frames before it synced; `close` adds a seal.
    @discardableResult
    static func make(
        at path: String, transactionCount count: Int, payloadByteCount: Int = 100, durability: Durability = .full,
        close: Bool = true, preallocationByteCount: Int = 0
    ) throws -> [AppendedTransaction] {
        var options = LogWriter.Options(durability: durability)
        options.preallocationByteCount = preallocationByteCount
        let writer = try LogWriter(path: path, options: options)
        var appended: [AppendedTransaction] = []
        for id in 1...UInt64(count) {
            appended.append(
                try writer.appendTransaction(id: id, payload: payload(for: id, byteCount: payloadByteCount)))
        }
        if close { try writer.close() }
        return appended
    }

    /// The transactions ``make(at:transactionCount:payloadByteCount:durability:close:)`` wrote, `ids` of them.
    static func expected(_ ids: ClosedRange<UInt64>, payloadByteCount: Int = 100) -> [ReplayedTransaction] {
        ids.map { ReplayedTransaction(id: $0, payload: payload(for: $0, byteCount: payloadByteCount)) }
    }

    /// Opens a writer on a log with damage and checks that it refuses, naming the offset, without changing a byte.
    @discardableResult
    static func expectWriterRefuses(
        _ path: String, damageAt byteOffset: UInt64, sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> DamageReport? {
        let before = try LogFileSurgery.bytes(of: path)
        let error = #expect(throws: LogFormatError.self, sourceLocation: sourceLocation) {
            _ = try LogWriter(path: path)
        }
        #expect(error?.code == .damaged, sourceLocation: sourceLocation)
        #expect(error?.byteOffset == byteOffset, sourceLocation: sourceLocation)
        #expect(error?.damage?.byteOffset == byteOffset, sourceLocation: sourceLocation)
        #expect(error?.message.contains("byte offset \(byteOffset)") == true, sourceLocation: sourceLocation)
        #expect(
            try LogFileSurgery.bytes(of: path) == before, "synced data must never be truncated",
            sourceLocation: sourceLocation)
        return error?.damage
    }

    /// Opens a writer on a log with a torn tail and checks that it cut the tail off at `byteOffset` and said so.
    static func expectWriterTruncates(
        _ path: String, tornAt byteOffset: UInt64, sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let sizeBefore = try LogFileSurgery.size(of: path)
        let writer = try LogWriter(path: path)
        let tail = writer.recoveryReport.truncatedTail
        #expect(tail?.byteOffset == byteOffset, sourceLocation: sourceLocation)
        #expect(tail?.byteCount == sizeBefore - byteOffset, sourceLocation: sourceLocation)
        #expect(try LogFileSurgery.size(of: path) == byteOffset, sourceLocation: sourceLocation)
        #expect(writer.byteCount == byteOffset, sourceLocation: sourceLocation)
    }
}
