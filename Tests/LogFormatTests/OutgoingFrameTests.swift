import TestSupport
import Testing

@testable import LogFormat

/// A transaction's frames read its payload in place, and each frame is appended to the writer's queue without a
/// zeroed region first: the frames must still be the bytes a reader accepts.
@Suite("Outgoing frames: fragments in place, frames appended")
struct OutgoingFrameTests {
    @Test("a large payload's fragments are slices of it, in order, that add up to it")
    func fragmentsReadThePayloadInPlace() {
        let payload = UnzeroedBufferTests.pattern(3_500)
        let frames = OutgoingFrame.transactionFrames(id: 7, payload: payload, fragmentByteCount: 1_000)
        #expect(frames.map(\.type) == [.transactionFirst, .transactionMiddle, .transactionMiddle, .transactionLast])
        #expect(frames.map(\.partIndex) == [0, 1, 2, 3])
        #expect(frames.flatMap(\.payload) == payload)
        // No fragment is a copy: each starts inside the payload's own buffer (before, each was a new array).
        payload.withUnsafeBytes { whole in
            for (position, frame) in frames.enumerated() {
                let start = frame.payload.withUnsafeBytes { $0.baseAddress }
                #expect(start == whole.baseAddress! + position * 1_000, "fragment \(position)")
            }
        }
        // A payload that fits one frame is the payload itself.
        let single = OutgoingFrame.transactionFrames(id: 7, payload: payload, fragmentByteCount: 4_000)
        #expect(single.map(\.type) == [.transaction])
        #expect(Array(single[0].payload) == payload)
    }

    @Test("a frame appended after other bytes decodes, body and zero padding included", arguments: [0, 1, 5, 300])
    func appendedFrameDecodes(bodyByteCount: Int) throws {
        let seed: UInt32 = 0x5EED
        let payload = UnzeroedBufferTests.pattern(bodyByteCount)
        // Raw (short) and compressed (long, patterned) bodies, and fragments of a larger array (a slice whose start
        // is not the array's).
        for frame in [
            OutgoingFrame(type: .transaction, transactionID: 3, payload: payload),
            OutgoingFrame(
                type: .transactionMiddle, transactionID: 3, partIndex: 1,
                slice: (payload + payload).dropFirst(bodyByteCount)),
        ] {
            // The body in an array of its own, or in a block with its transaction's other frames.
            let ownBody = try frame.encodeBody(seed: seed, dictionary: nil)
            let blockBody = try frame.encodeBody(seed: seed, into: FrameBodyBlock(rooms: [frame]), index: 0)
            #expect(
                blockBody.codec == ownBody.codec && blockBody.bodyChecksum == ownBody.bodyChecksum
                    && blockBody.withBodyBytes { Array($0) } == ownBody.body && blockBody.inBlock != nil)
            for body in [ownBody, blockBody] {
                var buffer: [UInt8] = [0xAA, 0xBB, 0xCC]
                body.append(to: &buffer, sequence: 42, durableWatermark: 4096, seed: seed)
                #expect(buffer.count == 3 + Int(body.frameByteCount))
                #expect(Array(buffer.prefix(3)) == [0xAA, 0xBB, 0xCC])
                try buffer.withUnsafeBytes { bytes in
                    let frameBytes = UnsafeRawBufferPointer(rebasing: bytes[3...])
                    let header = try FrameHeader.decode(
                        UnsafeRawBufferPointer(rebasing: frameBytes[0..<FrameHeader.byteCount]), seed: seed
                    ).get()
                    #expect(header.sequence == 42)
                    #expect(header.durableWatermark == 4096)
                    #expect(header.transactionID == 3)
                    #expect(header.partIndex == frame.partIndex)
                    let padded = UnsafeRawBufferPointer(rebasing: frameBytes[FrameHeader.byteCount...])
                    let decoded = try FrameBody.payload(of: padded, header: header, seed: seed, dictionary: nil).get()
                    #expect(decoded == Array(frame.payload))
                }
            }
        }
    }
}
