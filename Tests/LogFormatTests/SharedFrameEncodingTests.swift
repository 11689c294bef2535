import Foundation
import Testing

@testable import LogFormat

/// A large transaction's payload frames are compressed and checksummed ahead, by the thread that made the payload and
/// the one that queues it (h106): the bodies must be those the writer makes itself, in the frames' order, whichever
/// thread encoded which frame, and the log must read back the same.
@Suite("A payload's frames encoded ahead by the threads that help")
struct SharedFrameEncodingTests {
    let directory = TemporaryDirectory()
    var path: String { directory.file("store.eglog") }

    /// Text (compressible: LZ4 keeps the compressed bodies) followed by noise (a raw last fragment).
    private static func payload() -> [UInt8] { TestBytes.text(9_000) + TestBytes.noise(1_500, salt: 9) }

    private static func fields(_ body: EncodedBody) -> [String] {
        [
            "\(body.type)", "\(body.codec)", "\(body.transactionID)", "\(body.partIndex)", "\(body.rawByteCount)",
            "\(body.bodyChecksum)", "\(body.withBodyBytes { Array($0) })",
        ]
    }

    @Test("the bodies are the writer's own, in order, with one thread or two", arguments: [false, true])
    func sameBodies(withHelper: Bool) throws {
        let payload = Self.payload()
        let encoding = SharedFrameEncoding(transactionID: 5, seed: 0x5EED, fragmentByteCount: 1_000)
        // A second thread supplies the payload and helps, as a save's encoding thread does; the calling thread takes
        // what is left either way.
        let helper =
            withHelper
            ? Thread {
                encoding.supply(payload); encoding.help()
            } : nil
        if let helper { helper.start() } else { encoding.supply(payload) }
        let encoded = try encoding.encodedFrames()
        let frames = OutgoingFrame.transactionFrames(id: 5, payload: payload, fragmentByteCount: 1_000)
        #expect(frames.count == 11)
        #expect(encoded.transactionID == 5 && encoded.payloadByteCount == payload.count)
        #expect(
            encoded.bodies.map(Self.fields)
                == (try frames.map { Self.fields(try $0.encodeBody(seed: 0x5EED, dictionary: nil)) }))
        #expect(encoded.bodies.contains { $0.codec == .lz4 } && encoded.bodies.contains { $0.codec == .raw })
        // Whichever thread wrote them, every body lies in one block of the encoding's own (mapped for it: no
        // thread's malloc arena keeps its pages once the log has queued them), none in an array.
        let blocks = Set(encoded.bodies.compactMap { $0.inBlock.map { ObjectIdentifier($0.block) } })
        #expect(blocks.count == 1 && encoded.bodies.allSatisfy { $0.inBlock != nil && $0.body.isEmpty })
    }

    @Test("a payload whose making failed throws its error to the thread that waits for the frames")
    func failureIsThrown() {
        let encoding = SharedFrameEncoding(transactionID: 5, seed: 1, fragmentByteCount: 1_000)
        let failure = LogFormatError(.invalidArgument, "the changeset names an unknown store")
        Thread { encoding.fail(failure) }.start()
        let error = #expect(throws: LogFormatError.self) { try encoding.encodedFrames() }
        #expect(error?.code == .invalidArgument && error?.message == failure.message)
    }

    @Test("an abandoned encoding encodes no frame, whether abandoned before or after the payload comes")
    func abandonedEncodingStops() {
        for abandonsFirst in [true, false] {
            let encoding = SharedFrameEncoding(transactionID: 5, seed: 1, fragmentByteCount: 1_000)
            if abandonsFirst { encoding.abandon() }
            encoding.supply(Self.payload())
            if !abandonsFirst { encoding.abandon() }
            encoding.help()
            #expect(encoding.encodedFrameCount == 0)
        }
    }

    @Test("a transaction queued with frames encoded ahead reads back, beside blobs and plain transactions")
    func queuedFramesReadBack() throws {
        var options = LogWriter.Options()
        options.fragmentByteCount = 1_000
        let writer = try LogWriter(path: path, options: options)
        let payload = Self.payload()
        try writer.appendTransaction(id: 1, payload: TestLog.payload(for: 1))
        for (id, blobs) in [(2, [[UInt8]]()), (3, [[7, 7, 7], TestBytes.text(2_000)])] as [(UInt64, [[UInt8]])] {
            let encoding = SharedFrameEncoding(
                transactionID: id, seed: writer.frameSeed, fragmentByteCount: writer.fragmentByteCount)
            encoding.supply(payload)
            let queued = try writer.enqueueTransaction(
                id: id, payload: payload, blobs: blobs, encodedPayload: try encoding.encodedFrames())
            try writer.waitUntilDurable(queued)
            #expect(queued.blobs.count == blobs.count)
        }
        try writer.close()
        let replay = try Replay.read(path)
        #expect(
            replay.transactions == [
                ReplayedTransaction(id: 1, payload: TestLog.payload(for: 1)),
                ReplayedTransaction(id: 2, payload: payload), ReplayedTransaction(id: 3, payload: payload),
            ])
        #expect(replay.report.tail == .clean)
    }

    @Test("frames encoded with another file's seed are encoded again with the log's own")
    func staleSeedIsReplaced() throws {
        let writer = try LogWriter(path: path)
        let payload = Self.payload()
        // As if the log had been rewritten (a new seed) between the encoding and the queuing.
        let encoding = SharedFrameEncoding(
            transactionID: 1, seed: writer.frameSeed &+ 1, fragmentByteCount: writer.fragmentByteCount)
        encoding.supply(payload)
        try writer.waitUntilDurable(
            try writer.enqueueTransaction(
                id: 1, payload: payload, blobs: [], encodedPayload: try encoding.encodedFrames()))
        try writer.close()
        let replay = try Replay.read(path)
        #expect(replay.transactions == [ReplayedTransaction(id: 1, payload: payload)])
        #expect(replay.report.tail == .clean)
    }
}
